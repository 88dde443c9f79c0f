"""Typed host-side view of the message catalogue: enums, commands and events.

Commands are frozen dataclasses validated on construction (:class:`CommandError` names the
field, the value and what is allowed); ``pack(cmd_id)`` gives the wire payload. Events
decoded from the device are frozen dataclasses too. Wire layouts live in
:mod:`firmware_bridge.catalogue`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import ClassVar

from . import catalogue as C
from .errors import CommandError


def _codes(prefix: str, skip: tuple = (), rename: dict | None = None) -> dict[str, int]:
    """The catalogue's ``PREFIX_NAME = int`` constants as ``{NAME: value}``, in their order."""
    rename = rename or {}
    return {rename.get(k[len(prefix):], k[len(prefix):]): v for k, v in vars(C).items()
            if k.startswith(prefix) and type(v) is int and k[len(prefix):] not in skip}


class _Coded(IntEnum):
    """A wire code set of the catalogue; ``text`` is its plain-English name."""

    @property
    def text(self) -> str:
        return _TEXT.get((type(self).__name__, self.value), self.name.lower().replace("_", " "))


_TEXT = {("StopReason", C.STOP_ESTOP): "emergency stop", ("FaultCode", C.FAULT_DEADLINE): "deadline missed",
         ("FaultCode", C.FAULT_ESTOP): "emergency stop",
         ("FaultCode", C.FAULT_EVENTS_DROPPED): "sensor events dropped"}

# The enums are derived from the catalogue's constants (firmware_bridge/catalogue.py), the one
# place where the codes are written.
#: The table's sides on the wire, 0..3; 0xFF (no side) is decoded as ``None``.
Side = _Coded("Side", _codes("SIDE_", skip=("NONE",)))
Motor = _Coded("Motor", _codes("MOTOR_", rename={"CENTRE": "CENTRE_LIFT"}))
Sensor = _Coded("Sensor", _codes("SENSOR_"))
DeviceState = _Coded("DeviceState", _codes("STATE_"))
StopReason = _Coded("StopReason", _codes("STOP_"))
ReplyCode = _Coded("ReplyCode", _codes("REPLY_"))
Outcome = _Coded("Outcome", _codes("OUTCOME_"))
FaultCode = _Coded("FaultCode", _codes("FAULT_"))


class Light(IntFlag):
    """The lights of the SetIndicators lights mask (catalogue LIGHT_*; the dealer's seat lights
    of E, S, W, N are consecutive bits from LIGHT_DEALER_E)."""

    READY = C.LIGHT_READY
    FAULT = C.LIGHT_FAULT
    DEALER_E = C.LIGHT_DEALER_E
    DEALER_S = C.LIGHT_DEALER_E << 1
    DEALER_W = C.LIGHT_DEALER_E << 2
    DEALER_N = C.LIGHT_DEALER_E << 3

    @classmethod
    def dealer(cls, side: "Side") -> "Light":
        """The dealer's seat light of ``side``."""
        return cls(C.LIGHT_DEALER_E << int(side))


def _side(v: int) -> Side | None:
    return None if v == C.SIDE_NONE else Side(v)


def _enum(cls, v):
    try:
        return cls(v)
    except ValueError:
        return v


def _check_range(name: str, value: int, lo: int, hi: int, unit: str = "") -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise CommandError(f"{name} must be an integer {lo}..{hi}{unit}, got {value!r}")


def _check_side(side: object) -> None:
    if not isinstance(side, Side):
        raise CommandError(f"side must be one of Side.E, Side.S, Side.W, Side.N, got {side!r}")


_MAX_DEADLINE = 0xFFFFFFFF


# ------------------------------------------------------------------- commands
@dataclass(frozen=True)
class Command:
    """Base of the host -> device commands. ``pack(cmd_id)`` returns the payload."""

    TYPE: ClassVar[int] = -1
    MOTION: ClassVar[bool] = False

    def _fields(self) -> tuple:
        return ()

    def pack(self, cmd_id: int) -> bytes:
        return struct.pack(C.FORMATS[self.TYPE], cmd_id, *self._fields())


@dataclass(frozen=True)
class StartShuffle(Command):
    """Run the shuffle motor until StopShuffle or ``deadline_ms`` (ms, > 0)."""

    deadline_ms: int
    TYPE: ClassVar[int] = C.T_SHUFFLE_START
    MOTION: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_range("deadline_ms", self.deadline_ms, 1, _MAX_DEADLINE, " ms")

    def _fields(self) -> tuple:
        return (self.deadline_ms,)


@dataclass(frozen=True)
class StopShuffle(Command):
    TYPE: ClassVar[int] = C.T_SHUFFLE_STOP


@dataclass(frozen=True)
class FeedStacks(Command):
    """Feed and stack ``side`` until ``stacks`` stacks (of two tiles) are counted and the push
    head is back home; ``stacks=0`` only brings the push head home (done at once if it is)."""

    side: Side
    stacks: int
    deadline_ms: int
    TYPE: ClassVar[int] = C.T_FEED_STACK
    MOTION: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_side(self.side)
        _check_range("stacks", self.stacks, 0, 40)
        _check_range("deadline_ms", self.deadline_ms, 1, _MAX_DEADLINE, " ms")

    def _fields(self) -> tuple:
        return (int(self.side), self.stacks, self.deadline_ms)


@dataclass(frozen=True)
class Lift(Command):
    """Move ``side``'s lift up (to its top limit) or down (to its bottom limit);
    ``side=None`` moves the centre lift (down: the played tiles pushed into the centre
    drop into the disc; up: the hole is closed again)."""

    side: Side | None
    up: bool
    deadline_ms: int
    TYPE: ClassVar[int] = C.T_LIFT
    MOTION: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.side is not None:
            _check_side(self.side)
        if not isinstance(self.up, bool):
            raise CommandError(f"up must be True or False, got {self.up!r}")
        _check_range("deadline_ms", self.deadline_ms, 1, _MAX_DEADLINE, " ms")

    def _fields(self) -> tuple:
        side = C.SIDE_NONE if self.side is None else int(self.side)
        return (side, 1 if self.up else 0, self.deadline_ms)


@dataclass(frozen=True)
class RollDice(Command):
    """Spin the dice motor for ``spin_ms`` (ms); ``deadline_ms`` >= ``spin_ms``."""

    spin_ms: int
    deadline_ms: int
    TYPE: ClassVar[int] = C.T_ROLL_DICE
    MOTION: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_range("spin_ms", self.spin_ms, 1, 0xFFFF, " ms")
        _check_range("deadline_ms", self.deadline_ms, self.spin_ms, _MAX_DEADLINE, " ms")

    def _fields(self) -> tuple:
        return (self.spin_ms, self.deadline_ms)


@dataclass(frozen=True)
class StopAll(Command):
    """Stop every motor now (not latched; allowed in safe-stop)."""

    TYPE: ClassVar[int] = C.T_STOP_ALL


@dataclass(frozen=True)
class SetGear(Command):
    """Select the tile-count gear: 136, 144, 152 or 108 tiles."""

    tiles: int
    TYPE: ClassVar[int] = C.T_SET_GEAR

    def __post_init__(self) -> None:
        if self.tiles not in C.GEARS:
            raise CommandError(f"tiles must be one of {', '.join(map(str, C.GEARS))}, "
                               f"got {self.tiles!r}")

    def _fields(self) -> tuple:
        return (self.tiles,)


@dataclass(frozen=True)
class GetStatus(Command):
    """Ask for a :class:`Status` snapshot."""

    TYPE: ClassVar[int] = C.T_GET_STATUS


@dataclass(frozen=True)
class SelfTestStep(Command):
    """Jog one motor for ``jog_ms`` and count the sensor changes on its side (reported in
    MotionDone.detail). ``side`` is None for shuffle and dice, a Side otherwise."""

    step: int
    motor: Motor
    side: Side | None
    jog_ms: int
    deadline_ms: int
    TYPE: ClassVar[int] = C.T_SELF_TEST
    MOTION: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_range("step", self.step, 0, 255)
        if not isinstance(self.motor, Motor):
            raise CommandError(f"motor must be a Motor, got {self.motor!r}")
        if self.motor in (Motor.FEEDER, Motor.LIFT):
            _check_side(self.side)
        elif self.motor is Motor.BUZZER:
            raise CommandError("the buzzer is not a self-test motor: use SetIndicators")
        elif self.side is not None:
            raise CommandError(f"side must be None for the {self.motor.name} motor, "
                               f"got {self.side!r}")
        _check_range("jog_ms", self.jog_ms, 1, 0xFFFF, " ms")
        _check_range("deadline_ms", self.deadline_ms, self.jog_ms, _MAX_DEADLINE, " ms")

    def _fields(self) -> tuple:
        side = C.SIDE_NONE if self.side is None else int(self.side)
        return (self.step, int(self.motor), side, self.jog_ms, self.deadline_ms)


@dataclass(frozen=True)
class ClearSafeStop(Command):
    """Clear the latched safe-stop (refused while the emergency stop is pressed)."""

    TYPE: ClassVar[int] = C.T_CLEAR_SAFE_STOP


@dataclass(frozen=True)
class SetIndicators(Command):
    """Set the lights (``lights``: a :class:`Light` mask; the others go off) and sound the
    buzzer for ``buzzer_ms`` (0 = silent; the device stops it by itself). Accepted in
    safe-stop too: an alarm must sound while the motors are stopped. A build without
    lights or buzzer accepts it and does nothing."""

    lights: int = 0
    buzzer_ms: int = 0
    TYPE: ClassVar[int] = C.T_SET_INDICATORS

    def __post_init__(self) -> None:
        lights = int(self.lights) if isinstance(self.lights, Light) else self.lights
        _check_range("lights", lights, 0, C.LIGHTS_ALL, " (a Light mask)")
        _check_range("buzzer_ms", self.buzzer_ms, 0, 10000, " ms")

    def _fields(self) -> tuple:
        return (int(self.lights), self.buzzer_ms)


COMMAND_NAMES = {cls.TYPE: cls.__name__ for cls in (
    StartShuffle, StopShuffle, FeedStacks, Lift, RollDice, StopAll, SetGear, GetStatus,
    SelfTestStep, ClearSafeStop, SetIndicators)}


# --------------------------------------------------------------------- events
@dataclass(frozen=True)
class DeviceInfo:
    """What the handshake tells about the microcontroller."""

    protocol_version: int
    firmware_version: tuple[int, int, int]
    profile_id: int
    gear_tiles: int
    boot_counter: int
    heartbeat_window_ms: int
    stop_reason: StopReason


@dataclass(frozen=True)
class Reply:
    """The device's answer to a command: executed (OK) or refused (code, detail)."""

    cmd_id: int
    code: ReplyCode
    detail: int


@dataclass(frozen=True)
class Status:
    """Answer to GetStatus. Masks: see catalogue.motor_bit / sensor_bit."""

    cmd_id: int
    state: DeviceState
    stop_reason: StopReason
    gear_tiles: int
    motors_mask: int
    sensors_mask: int
    uptime_ms: int
    active_motions: int


@dataclass(frozen=True)
class SensorChanged:
    sensor: Sensor
    side: Side | None
    value: int
    t_ms: int          # MCU timestamp (ms since an arbitrary epoch, wraps at 2**32)


@dataclass(frozen=True)
class StacksCounted:
    cmd_id: int
    side: Side
    count: int
    t_ms: int


@dataclass(frozen=True)
class MotionDone:
    cmd_id: int
    command: str       # command class name, e.g. "FeedStacks"
    side: Side | None
    outcome: Outcome
    elapsed_ms: int
    detail: int        # stacks counted / sensor changes seen


@dataclass(frozen=True)
class Fault:
    code: FaultCode
    side: Side | None
    cmd_id: int
    detail: int
    t_ms: int

    def __str__(self) -> str:
        code = self.code.text if isinstance(self.code, FaultCode) else f"fault {self.code}"
        side = f" side {self.side.name}" if self.side is not None else ""
        return f"{code}{side} (command {self.cmd_id}, detail {self.detail}, t={self.t_ms} ms)"


@dataclass(frozen=True)
class DeviceHeartbeat:
    uptime_ms: int
    boot_counter: int
    state: DeviceState
    stop_reason: StopReason
    active_motions: int
    rx_errors: int
    session: int


def unpack_device_message(mtype: int, payload: bytes) -> tuple | None:
    """The fields (ints, in the catalogue's order: ``catalogue.FIELDS[mtype]``) of a reliable
    device -> host message; None for an unknown type or a payload of the wrong length."""
    fmt = C.FORMATS.get(mtype)
    if fmt is None or mtype not in C.EVENT_TYPES or len(payload) != struct.calcsize(fmt):
        return None
    return struct.unpack(fmt, payload)


def decode_device_message(mtype: int, payload: bytes):
    """Decode a reliable device -> host message into an event dataclass.

    Returns None for an unknown type or a payload of the wrong length (counted by the
    caller as a protocol error, never raised).
    """
    f = unpack_device_message(mtype, payload)
    if f is None:
        return None
    if mtype == C.T_REPLY:
        return Reply(f[0], _enum(ReplyCode, f[1]), f[2])
    if mtype == C.T_STATUS:
        return Status(f[0], _enum(DeviceState, f[1]), _enum(StopReason, f[2]), *f[3:])
    if mtype == C.T_SENSOR:
        return SensorChanged(_enum(Sensor, f[0]), _side(f[1]), f[2], f[3])
    if mtype == C.T_STACKS:
        return StacksCounted(f[0], _side(f[1]), f[2], f[3])
    if mtype == C.T_MOTION_DONE:
        return MotionDone(f[0], COMMAND_NAMES.get(f[1], f"type 0x{f[1]:02x}"), _side(f[2]),
                          _enum(Outcome, f[3]), f[4], f[5])
    return Fault(_enum(FaultCode, f[0]), _side(f[1]), f[2], f[3], f[4])
