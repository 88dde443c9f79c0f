"""The table's vocabulary: the parts, the goal commands and the events every backend speaks.

The controller and the service talk to a table only in these words, whatever drives it: the
simulator, the Pi's own GPIO pins or the table's microcontroller. This package is a leaf (the
standard library only): :mod:`hardware` re-exports it as :mod:`hardware.vocabulary` (the name the
controller and the service use), and the codec of the serial link,
:mod:`firmware_bridge.codec`, packs and unpacks these very classes, so that the two packages share
one set of classes without importing each other in a circle. Nothing here knows the wire (ids,
payload layouts, masks, wire codes): the codec matches the parts with the message catalogue's
codes by name.

**Parts** (enums): :class:`Side` (E, S, W, N, the seats in playing order), :class:`Motor` (the
actuators: shuffle disc, the four feeders, the four wall lifts, dice cup, centre lift, buzzer),
:class:`Sensor` (limit switches, counters, pulse sensors, buttons), :class:`Light` (the indicator
lights, a flag set). A per-side part is addressed as ``(part, Side)``, a single part as
``(part, None)``.

**Goal commands** (frozen dataclasses, validated on construction: :class:`CommandError` names the
field, the value and what is allowed). Every motion carries its deadline in ms of machine time; the
backend stops the motor when it passes and reports ``MotionDone(outcome=DEADLINE)`` and a
``Fault(DEADLINE)``:

=====================  ===============================================================
:class:`StartShuffle`  turn the shuffle disc until :class:`StopShuffle` or the deadline
:class:`FeedStacks`    feed and stack N stacks (two tiles each) on a side, push head home
:class:`Lift`          a side's wall lift up or down; ``side=None`` = the centre lift
:class:`RollDice`      spin the dice cup for ``spin_ms``
:class:`SelfTestStep`  jog one motor for ``jog_ms``, counting its side's sensor changes
:class:`StopAll`       stop every motor now
:class:`SetGear`       select the tile-count gear (136, 144, 152, 108 tiles)
:class:`SetIndicators` lights on/off and the buzzer for ``buzzer_ms``
:class:`GetStatus`     ask for a :class:`Status` snapshot
:class:`ClearSafeStop` clear the latched safe stop
=====================  ===============================================================

**Events** (frozen dataclasses) returned by ``TableBackend.events()`` / ``advance`` /
``run_until``:

* :class:`Reply` ``(cmd_id, code, detail)``: every command but GetStatus gets one;
  :class:`Status` answers GetStatus (state, stop reason, gear, readings, running motors).
* :class:`SensorChanged` ``(sensor, side, value, t_ms)``: an input's reading changed.
* :class:`StacksCounted` ``(cmd_id, side, count, t_ms)``: one more stack fed.
* :class:`MotionDone` ``(cmd_id, command, side, outcome, elapsed_ms, detail)``: a motion ended
  (:class:`Outcome`); ``command`` is the goal command's class name ("FeedStacks", "Lift" ...),
  ``elapsed_ms`` the travel time of a lift, ``detail`` the stacks counted / sensor changes seen.
* :class:`Fault` ``(code, side, cmd_id, detail, t_ms)``: :class:`FaultCode`.
* Link events (the MCU backend; a local backend has no link): :class:`Connected` (the board
  answered), :class:`BackendReset` (the controlling board restarted: re-home),
  :class:`BackendLost` (the board stopped answering), :class:`CommandFailed` (a command will get
  no reply). :class:`LinkHealth` is what ``backend.health()`` returns.

``t_ms`` is machine time in ms since the backend opened.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import ClassVar



class HardwareError(Exception):
    """Base class of every error of the table's hardware: the vocabulary's own
    (:class:`CommandError`) and those of :mod:`hardware` (:mod:`hardware.errors` re-exports it,
    so ``except hardware.HardwareError`` catches them all)."""


class CommandError(HardwareError, ValueError):
    """A goal command was given a field outside what the table allows; the message names the
    field, the value given and what is allowed."""


# ------------------------------------------------------------------------ parts
class Side(IntEnum):
    """The table's sides (seats), in playing order: E (the dealer's seat at the first hand),
    S, W, N."""

    E = 0
    S = 1
    W = 2
    N = 3


class Motor(IntEnum):
    """The table's actuators. FEEDER and LIFT are per side; the others are single parts.
    A lift moves up or down; the buzzer is an output timed like a motion."""

    SHUFFLE = 0
    FEEDER = 1
    LIFT = 2
    DICE = 3
    CENTRE_LIFT = 4
    BUZZER = 5


class Sensor(IntEnum):
    """The table's inputs (1 = the named condition holds, after the wiring's active level)."""

    LIFT_TOP = 0          # per side: the wall lift at its top limit
    LIFT_BOTTOM = 1       # per side: the wall lift at its bottom limit
    STACK = 2             # per side: a 0->1 edge = one stack of two tiles completed
    TILE_PRESENT = 3      # per side: a tile in the feeder throat
    LID = 4               # the lid closed
    ESTOP = 5             # the emergency stop pressed
    FEEDER_MOTION = 6     # per side: pulses while the feeder's conveyor wheel turns
    DISC_PULSE = 7        # pulses while the shuffle disc turns
    DICE_PULSE = 8        # pulses while the dice cup spins
    PUSH_HOME = 9         # per side: the push (stacking) head at its home position
    CENTRE_TOP = 10       # the centre lift at its top limit (hole closed)
    CENTRE_BOTTOM = 11    # the centre lift at its bottom limit (the tiles drop)
    JAM = 12              # a tile jammed at the disc outlet / track
    LIFT_BUTTON_A = 13    # the lift button at the dealer's corner pressed
    LIFT_BUTTON_B = 14    # the lift button at the opposite corner pressed
    DICE_BUTTON = 15      # the dice button pressed


#: sensors that exist once per side, and the single ones
PER_SIDE_SENSORS = (Sensor.LIFT_TOP, Sensor.LIFT_BOTTOM, Sensor.STACK, Sensor.TILE_PRESENT,
                    Sensor.FEEDER_MOTION, Sensor.PUSH_HOME)
SIDELESS_SENSORS = tuple(s for s in Sensor if s not in PER_SIDE_SENSORS)
#: motors that exist once per side
PER_SIDE_MOTORS = (Motor.FEEDER, Motor.LIFT)


def all_sensor_keys() -> list[tuple[Sensor, Side | None]]:
    """Every ``(sensor, side)`` the table has: per-side sensors with each Side, the others
    with None."""
    return ([(s, side) for s in PER_SIDE_SENSORS for side in Side]
            + [(s, None) for s in SIDELESS_SENSORS])


class Light(IntFlag):
    """The indicator lights (a set: ``Light.READY | Light.dealer(Side.S)``)."""

    READY = 0x01      # green: walls up, the hand can start
    FAULT = 0x02      # red: a fault is latched
    DEALER_E = 0x04   # the dealer's seat light of each side
    DEALER_S = 0x08
    DEALER_W = 0x10
    DEALER_N = 0x20

    @classmethod
    def dealer(cls, side: Side) -> "Light":
        """The dealer's seat light of ``side``."""
        return (cls.DEALER_E, cls.DEALER_S, cls.DEALER_W, cls.DEALER_N)[int(side)]


LIGHTS_ALL = Light.READY | Light.FAULT | Light.DEALER_E | Light.DEALER_S | Light.DEALER_W | Light.DEALER_N

#: the tile-count gears a table can be set to (tiles)
GEARS = (136, 144, 152, 108)


# ----------------------------------------------------------------- the machine
class DeviceState(IntEnum):
    """What the controlling board (or the local executor) is doing."""

    IDLE = 0
    BUSY = 1
    SAFE_STOP = 2


class StopReason(IntEnum):
    """Why the safe stop latched."""

    NONE = 0
    HOST_TIMEOUT = 1
    ESTOP = 2
    POWER_ON = 3

    @property
    def text(self) -> str:
        return {0: "none", 1: "host timeout", 2: "emergency stop", 3: "power on"}[self.value]


class ReplyCode(IntEnum):
    """A command's answer: OK (executed) or why it was refused."""

    OK = 0
    SAFE_STOP = 1       # the safe stop is latched (detail: the StopReason): clear it first
    BUSY = 2            # that motor already has a motion running
    BAD_ARGUMENT = 3    # a field out of range (detail: the field's number)
    UNKNOWN = 4         # the board does not know this command


class Outcome(IntEnum):
    """How a motion ended."""

    COMPLETED = 0       # the goal was reached
    STOPPED = 1         # stopped by a stop command
    DEADLINE = 2        # the deadline passed before the goal: motor stopped, Fault sent
    SAFE_STOP = 3       # cut by a safe stop (host timeout, emergency stop)


class FaultCode(IntEnum):
    """What the backend itself detected (the controller diagnoses it into a fault code)."""

    HOST_TIMEOUT = 1    # detail = ms of silence observed
    DEADLINE = 2        # detail = progress (stacks counted / sensor changes)
    ESTOP = 3           # detail = 0
    EVENTS_DROPPED = 4  # detail = number of sensor events dropped

    @property
    def text(self) -> str:
        return {1: "host timeout", 2: "deadline missed", 3: "emergency stop",
                4: "sensor events dropped"}[self.value]


# --------------------------------------------------------------------- checks
_MAX_DEADLINE = 0xFFFFFFFF


def _check_range(name: str, value: int, lo: int, hi: int, unit: str = "") -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise CommandError(f"{name} must be an integer {lo}..{hi}{unit}, got {value!r}")


def _check_side(side: object) -> None:
    if not isinstance(side, Side):
        raise CommandError(f"side must be one of Side.E, Side.S, Side.W, Side.N, got {side!r}")


# ------------------------------------------------------------------- commands
@dataclass(frozen=True)
class Command:
    """Base of the goal commands. ``MOTION``: the command starts a motion (it ends with a
    MotionDone)."""

    MOTION: ClassVar[bool] = False


@dataclass(frozen=True)
class StartShuffle(Command):
    """Turn the shuffle disc until StopShuffle or ``deadline_ms`` (ms of machine time, > 0)."""

    deadline_ms: int
    MOTION: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_range("deadline_ms", self.deadline_ms, 1, _MAX_DEADLINE, " ms")


@dataclass(frozen=True)
class StopShuffle(Command):
    """Stop the shuffle disc (its motion ends STOPPED)."""


@dataclass(frozen=True)
class FeedStacks(Command):
    """Feed and stack ``side`` until ``stacks`` stacks (0..40, of two tiles) are counted and the
    push head is back home; ``stacks=0`` only brings the push head home. ``deadline_ms``: ms."""

    side: Side
    stacks: int
    deadline_ms: int
    MOTION: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_side(self.side)
        _check_range("stacks", self.stacks, 0, 40)
        _check_range("deadline_ms", self.deadline_ms, 1, _MAX_DEADLINE, " ms")


@dataclass(frozen=True)
class Lift(Command):
    """Move ``side``'s wall lift up (to its top limit) or down (to its bottom limit);
    ``side=None`` moves the centre lift (down: the played tiles drop into the disc; up: the
    hole is closed again). ``deadline_ms``: ms."""

    side: Side | None
    up: bool
    deadline_ms: int
    MOTION: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.side is not None:
            _check_side(self.side)
        if not isinstance(self.up, bool):
            raise CommandError(f"up must be True or False, got {self.up!r}")
        _check_range("deadline_ms", self.deadline_ms, 1, _MAX_DEADLINE, " ms")


@dataclass(frozen=True)
class RollDice(Command):
    """Spin the dice cup for ``spin_ms`` (1..65535 ms); ``deadline_ms`` >= ``spin_ms``."""

    spin_ms: int
    deadline_ms: int
    MOTION: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_range("spin_ms", self.spin_ms, 1, 0xFFFF, " ms")
        _check_range("deadline_ms", self.deadline_ms, self.spin_ms, _MAX_DEADLINE, " ms")


@dataclass(frozen=True)
class StopAll(Command):
    """Stop every motor now (not latched; accepted in safe stop)."""


@dataclass(frozen=True)
class SetGear(Command):
    """Select the tile-count gear: 136, 144, 152 or 108 tiles."""

    tiles: int

    def __post_init__(self) -> None:
        if self.tiles not in GEARS:
            raise CommandError(f"tiles must be one of {', '.join(map(str, GEARS))}, "
                               f"got {self.tiles!r}")


@dataclass(frozen=True)
class GetStatus(Command):
    """Ask for a :class:`Status` snapshot."""


@dataclass(frozen=True)
class SelfTestStep(Command):
    """Jog one motor for ``jog_ms`` (1..65535 ms) and count the sensor changes on its side
    (reported in MotionDone.detail). ``side`` is a Side for FEEDER and LIFT, None otherwise;
    ``step`` (0..255) numbers the step; ``deadline_ms`` >= ``jog_ms``."""

    step: int
    motor: Motor
    side: Side | None
    jog_ms: int
    deadline_ms: int
    MOTION: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_range("step", self.step, 0, 255)
        if not isinstance(self.motor, Motor):
            raise CommandError(f"motor must be a Motor, got {self.motor!r}")
        if self.motor in PER_SIDE_MOTORS:
            _check_side(self.side)
        elif self.motor is Motor.BUZZER:
            raise CommandError("the buzzer is not a self-test motor: use SetIndicators")
        elif self.side is not None:
            raise CommandError(f"side must be None for the {self.motor.name} motor, "
                               f"got {self.side!r}")
        _check_range("jog_ms", self.jog_ms, 1, 0xFFFF, " ms")
        _check_range("deadline_ms", self.deadline_ms, self.jog_ms, _MAX_DEADLINE, " ms")


@dataclass(frozen=True)
class ClearSafeStop(Command):
    """Clear the latched safe stop (refused while the emergency stop is pressed)."""


@dataclass(frozen=True)
class SetIndicators(Command):
    """Set the lights (``lights``: a :class:`Light` set; the others go off) and sound the
    buzzer for ``buzzer_ms`` (0..10000 ms, 0 = silent). Accepted in safe stop; a build without
    lights or buzzer accepts it and does nothing."""

    lights: int = 0
    buzzer_ms: int = 0

    def __post_init__(self) -> None:
        _check_range("lights", int(self.lights) if isinstance(self.lights, Light) else self.lights,
                     0, int(LIGHTS_ALL), " (a Light set)")
        _check_range("buzzer_ms", self.buzzer_ms, 0, 10000, " ms")


COMMANDS = (StartShuffle, StopShuffle, FeedStacks, Lift, RollDice, StopAll, SetGear, GetStatus,
            SelfTestStep, ClearSafeStop, SetIndicators)


# --------------------------------------------------------------------- events
@dataclass(frozen=True)
class Reply:
    """The answer to a command: executed (OK) or refused (code, detail)."""

    cmd_id: int
    code: ReplyCode
    detail: int


@dataclass(frozen=True)
class Status:
    """The answer to GetStatus: the state, why the safe stop latched, the gear (tiles), every
    sensor's reading (``readings[(Sensor, Side | None)]`` 0/1), the motors running
    (``running``: ``(Motor, Side | None)``), the uptime (ms) and the number of motions."""

    cmd_id: int
    state: DeviceState
    stop_reason: StopReason
    gear_tiles: int
    running: frozenset
    readings: dict
    uptime_ms: int
    active_motions: int


@dataclass(frozen=True)
class SensorChanged:
    """An input's reading changed to ``value`` (0/1) at ``t_ms``."""

    sensor: Sensor
    side: Side | None
    value: int
    t_ms: int


@dataclass(frozen=True)
class StacksCounted:
    """One more stack fed on ``side`` by command ``cmd_id``; ``count`` so far."""

    cmd_id: int
    side: Side
    count: int
    t_ms: int


@dataclass(frozen=True)
class MotionDone:
    """A motion ended. ``command``: the goal command's class name ("FeedStacks", "Lift" ...);
    ``elapsed_ms``: its run time (a lift's travel time); ``detail``: stacks counted / sensor
    changes seen."""

    cmd_id: int
    command: str
    side: Side | None
    outcome: Outcome
    elapsed_ms: int
    detail: int


@dataclass(frozen=True)
class Fault:
    """The backend detected ``code`` (on ``side``, during ``cmd_id``, 0 if none)."""

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
class Connected:
    """The controlling board answered (the link is up, again): ``firmware`` its version
    ("1.2.0"), ``boot`` its boot counter, ``gear_tiles`` its gear."""

    firmware: str
    boot: int
    gear_tiles: int


@dataclass(frozen=True)
class BackendReset:
    """The controlling board restarted (its boot counter went from ``previous_boot`` to
    ``boot``): every motion was cut, the machine must be re-homed."""

    previous_boot: int
    boot: int


@dataclass(frozen=True)
class BackendLost:
    """The controlling board stopped answering (or its port is gone); ``reason`` says what was
    seen. The board stops every motor by itself when the host goes silent."""

    reason: str


@dataclass(frozen=True)
class CommandFailed:
    """Command ``cmd_id`` will get no reply. ``reason``: why, in words; ``executed``: False = it
    did not run, True = it ran (its reply was lost), None = unknown; ``reset``: it failed
    because the board restarted (a :class:`BackendReset` comes with it)."""

    cmd_id: int
    reason: str
    executed: bool | None = None
    reset: bool = False


#: every event type a backend returns
EVENT_TYPES = (Reply, Status, SensorChanged, StacksCounted, MotionDone, Fault, Connected,
               BackendReset, BackendLost, CommandFailed)


@dataclass(frozen=True)
class LinkHealth:
    """The counters of a backend's link to its board (``backend.health()``; cumulative since the
    link was opened). ``connected``: the link is up now; ``port``: the port's name;
    ``reconnects``: times it came back; ``firmware``: the board's version ("" before the first
    answer)."""

    connected: bool
    port: str
    reconnects: int
    frames_received: int
    frames_rejected: int          # corrupt, truncated, oversized
    crc_errors: int
    sent_new: int
    retransmitted: int
    duplicates_dropped: int
    out_of_order_dropped: int
    protocol_errors: int          # valid frames of an unknown type or bad payload
    srtt_ms: float | None         # smoothed round-trip time, None before the first sample
    rto_ms: float                 # retransmission timeout
    firmware: str = ""


__all__ = ["HardwareError", "CommandError", "Side", "Motor", "Sensor", "Light", "LIGHTS_ALL", "GEARS",
           "PER_SIDE_SENSORS", "SIDELESS_SENSORS", "PER_SIDE_MOTORS", "all_sensor_keys", "DeviceState", "StopReason",
           "ReplyCode", "Outcome", "FaultCode", "Command", *(c.__name__ for c in COMMANDS),
           "COMMANDS", "Reply", "Status", "SensorChanged", "StacksCounted", "MotionDone", "Fault",
           "Connected", "BackendReset", "BackendLost", "CommandFailed", "EVENT_TYPES", "LinkHealth"]
