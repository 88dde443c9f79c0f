"""The host side's codec: the table's vocabulary (:mod:`table_vocabulary`) on the wire.

:func:`pack_command` packs a goal command (``StartShuffle``, ``FeedStacks`` ... the vocabulary's own
frozen dataclasses, validated when they were built) into its message, and :func:`decode_event`
unpacks a device message into the vocabulary's own event (``Reply``, ``Status``,
``SensorChanged``, ``StacksCounted``, ``MotionDone``, ``Fault``). Both are driven by the message
catalogue (:data:`firmware_bridge.catalogue.MESSAGES`: type, struct format, field order): a
command's or event's dataclass fields are the catalogue's fields in order (a command's after
``cmd_id``), and a catalogue field's name says how its value is coded (:data:`ENCODE`,
:data:`DECODE`). The vocabulary's parts and codes are matched with the catalogue's constants by
name (``Sensor.JAM`` <-> ``SENSOR_JAM``, ``Motor.CENTRE_LIFT`` <-> ``MOTOR_CENTRE``), derived here at
import: a part added to one and not the other, or a class whose fields do not line up with its
message, fails at import, not on a running table.

Also here, because they are the wire's own: the STATUS masks and the ``(code, side code)`` pairs
that address the parts of a machine behind the device engine (:func:`sensor_code`,
:func:`readings_from_mask`, :func:`readings_to_mask`, :func:`running_from_mask`), and the control
messages of the handshake and the heartbeat (:class:`DeviceInfo`, :class:`DeviceHeartbeat`).

Host side only (dataclasses, enums): the firmware (MicroPython) is built from the device-side
modules, which speak plain ints and ``struct`` formats.
"""

from __future__ import annotations

import dataclasses
import struct
from dataclasses import dataclass
from typing import Any, Callable

from table_vocabulary import (COMMANDS, ClearSafeStop, Command, CommandError, DeviceState, Fault,
                              FaultCode, FeedStacks, GetStatus, Lift, Light, MotionDone, Motor,
                              Outcome, Reply, ReplyCode, RollDice, SelfTestStep, Sensor,
                              SensorChanged, SetGear, SetIndicators, Side, StacksCounted,
                              StartShuffle, Status, StopAll, StopReason, StopShuffle,
                              all_sensor_keys, PER_SIDE_MOTORS)

from . import catalogue as C


# ------------------------------------------------------------------ the codes
def _by_name(enum: Any, prefix: str, rename: dict[str, str] | None = None,
             skip: tuple[str, ...] = ()) -> tuple[dict, dict]:
    """``(member -> wire code, wire code -> member)`` of a vocabulary enum and the catalogue's
    ``PREFIX_NAME = int`` constants (``rename``: catalogue name -> member name). Raises ImportError
    when the two name sets differ."""
    rename = rename or {}
    wire = {rename.get(k[len(prefix):], k[len(prefix):]): v for k, v in vars(C).items()
            if k.startswith(prefix) and type(v) is int and k[len(prefix):] not in skip}
    differ = sorted(set(enum.__members__) ^ set(wire))
    if differ:
        raise ImportError(f"the vocabulary's {enum.__name__} and the catalogue's {prefix}* differ "
                          f"in {differ}")
    out = {m: wire[m.name] for m in enum}
    return out, {v: k for k, v in out.items()}


SIDE_OUT, SIDE_IN = _by_name(Side, "SIDE_", skip=("NONE",))
MOTOR_OUT, MOTOR_IN = _by_name(Motor, "MOTOR_", rename={"CENTRE": "CENTRE_LIFT"})
SENSOR_OUT, SENSOR_IN = _by_name(Sensor, "SENSOR_")
STATE_IN = _by_name(DeviceState, "STATE_")[1]
STOP_IN = _by_name(StopReason, "STOP_")[1]
REPLY_IN = _by_name(ReplyCode, "REPLY_")[1]
OUTCOME_IN = _by_name(Outcome, "OUTCOME_")[1]
FAULT_IN = _by_name(FaultCode, "FAULT_")[1]
#: each light -> its bit in SET_INDICATORS' lights mask (the dealer lights of E, S, W, N are
#: consecutive bits from LIGHT_DEALER_E)
LIGHT_OUT = {Light.READY: C.LIGHT_READY, Light.FAULT: C.LIGHT_FAULT,
             **{Light.dealer(s): C.LIGHT_DEALER_E << SIDE_OUT[s] for s in Side}}
if set(LIGHT_OUT) != set(Light):
    raise ImportError(f"lights without a wire bit: {set(Light) - set(LIGHT_OUT)}")


def _side_out(side: Side | None) -> int:
    return C.SIDE_NONE if side is None else SIDE_OUT[side]


def _side_in(code: int) -> Side | int | None:
    return None if code == C.SIDE_NONE else SIDE_IN.get(code, code)


def _lights_out(lights: int) -> int:
    mask = 0
    for light, bit in LIGHT_OUT.items():
        if int(lights) & int(light):
            mask |= bit
    return mask


def sensor_code(sensor: Sensor, side: Side | None) -> tuple[int, int]:
    """The wire's ``(sensor code, side code)`` of a part (side code 0xFF for a single part): the
    keys of the device engine's readings and of a simulated machine's."""
    return SENSOR_OUT[sensor], _side_out(side)


#: every ``(Sensor, Side | None)`` of the table -> its wire ``(sensor code, side code)``
SENSOR_CODES = {key: sensor_code(*key) for key in all_sensor_keys()}
#: every ``(Sensor, Side | None)`` -> its bit in the STATUS sensors mask
_SENSOR_BITS = {key: C.sensor_bit(*code) for key, code in SENSOR_CODES.items()}
#: every ``(Motor, Side | None)`` -> its bit in the STATUS motors mask
_MOTOR_BITS = {(m, s): C.motor_bit(MOTOR_OUT[m], _side_out(s))
               for m in Motor for s in ((*Side,) if m in PER_SIDE_MOTORS else (None,))}


def readings_from_mask(mask: int) -> dict[tuple[Sensor, Side | None], int]:
    """Every sensor's reading (0/1) from a STATUS sensors mask (u64)."""
    return {key: mask >> bit & 1 for key, bit in _SENSOR_BITS.items()}


def readings_to_mask(read: Callable[[int, int], int]) -> int:
    """The STATUS sensors mask of ``read(sensor code, side code) -> 0/1`` (wire codes)."""
    mask = 0
    for key, bit in _SENSOR_BITS.items():
        if read(*SENSOR_CODES[key]):
            mask |= 1 << bit
    return mask


def running_from_mask(mask: int) -> frozenset:
    """The ``(Motor, Side | None)`` running, from a STATUS motors mask."""
    return frozenset(key for key, bit in _MOTOR_BITS.items() if mask >> bit & 1)


# --------------------------------------------------------- the message table
#: each goal command -> its message type (catalogue T_*)
COMMAND_TYPES: dict[type, int] = {
    StartShuffle: C.T_SHUFFLE_START, StopShuffle: C.T_SHUFFLE_STOP, FeedStacks: C.T_FEED_STACK,
    Lift: C.T_LIFT, RollDice: C.T_ROLL_DICE, StopAll: C.T_STOP_ALL, SetGear: C.T_SET_GEAR,
    GetStatus: C.T_GET_STATUS, SelfTestStep: C.T_SELF_TEST, ClearSafeStop: C.T_CLEAR_SAFE_STOP,
    SetIndicators: C.T_SET_INDICATORS}
#: each device message type (catalogue T_*) -> the event it is
EVENT_CLASSES: dict[int, type] = {
    C.T_REPLY: Reply, C.T_STATUS: Status, C.T_SENSOR: SensorChanged, C.T_STACKS: StacksCounted,
    C.T_MOTION_DONE: MotionDone, C.T_FAULT: Fault}
#: a command's message type -> the goal command's class name (MotionDone.command)
COMMAND_NAMES = {t: cls.__name__ for cls, t in COMMAND_TYPES.items()}


def _identity(v: Any) -> Any:
    return v


#: how a command's field is put on the wire, by its catalogue name (the value -> the wire's int); a
#: field not named here is an integer already
ENCODE: dict[str, Callable[[Any], int]] = {
    "side": _side_out, "motor": MOTOR_OUT.__getitem__, "direction": int, "lights_mask": _lights_out}
#: how an event's field is read from the wire, by its catalogue name (the wire's int -> the value);
#: a field not named here stays an integer. A code the vocabulary does not know (a newer firmware)
#: is passed on as its int.
DECODE: dict[str, Callable[[int], Any]] = {
    "side": _side_in,
    "sensor": lambda v: SENSOR_IN.get(v, v),
    "state": lambda v: STATE_IN.get(v, v),
    "stop_reason": lambda v: STOP_IN.get(v, v),
    "result": lambda v: REPLY_IN.get(v, v),
    "outcome": lambda v: OUTCOME_IN.get(v, v),
    "code": lambda v: FAULT_IN.get(v, v),
    "command_type": lambda v: COMMAND_NAMES.get(v, f"type 0x{v:02x}"),
    "motors_mask": running_from_mask,
    "sensors_mask": readings_from_mask,
}


def _line_up(cls: type, mtype: int, skip: int) -> tuple[str, ...]:
    """The catalogue's fields of ``mtype`` after the first ``skip``, checked to be as many as the
    dataclass ``cls`` has (ImportError if not)."""
    wire = C.FIELDS[mtype][skip:]
    ours = [f.name for f in dataclasses.fields(cls)]
    if len(ours) != len(wire):
        raise ImportError(f"{cls.__name__} has the fields {ours}, its message {C.NAMES[mtype]} "
                          f"{list(wire)}")
    return wire


if set(COMMAND_TYPES) != set(COMMANDS) or set(COMMAND_TYPES.values()) != set(C.COMMAND_TYPES):
    raise ImportError("the goal commands and the catalogue's commands differ")
if set(EVENT_CLASSES) != set(C.EVENT_TYPES):
    raise ImportError("the device events and the catalogue's events differ")

#: goal command class -> (type, struct format, (attribute name, encoder) per field after cmd_id)
_PACK = {cls: (t, C.FORMATS[t], tuple(
    (f.name, ENCODE.get(w, _identity))
    for f, w in zip(dataclasses.fields(cls), _line_up(cls, t, 1))))
    for cls, t in COMMAND_TYPES.items()}
#: message type -> (event class, struct format, decoder per field or None)
_UNPACK = {t: (cls, C.FORMATS[t], struct.calcsize(C.FORMATS[t]), tuple(
    DECODE.get(w) for w in _line_up(cls, t, 0)))
    for t, cls in EVENT_CLASSES.items()}


def pack_command(cmd_id: int, command: Command) -> tuple[int, bytes]:
    """The message of goal ``command`` with id ``cmd_id`` (1..65535): ``(type, payload)``.

    Raises :class:`table_vocabulary.CommandError` (also ``hardware.CommandError``) for something
    that is not a goal command. The command's fields were validated when it was built.
    """
    p = _PACK.get(type(command))
    if p is None:
        raise CommandError(f"not a table command: {command!r} (allowed: "
                           f"{', '.join(c.__name__ for c in COMMANDS)})")
    mtype, fmt, fields = p
    return mtype, struct.pack(fmt, cmd_id, *[enc(getattr(command, name)) for name, enc in fields])


def unpack_device_message(mtype: int, payload: bytes) -> tuple | None:
    """The fields (ints, in the catalogue's order: ``catalogue.FIELDS[mtype]``) of a reliable
    device -> host message; None for an unknown type or a payload of the wrong length."""
    u = _UNPACK.get(mtype)
    if u is None or len(payload) != u[2]:
        return None
    return struct.unpack(u[1], payload)


def decode_event(mtype: int, payload: bytes) -> Any:
    """The vocabulary's event (Reply, Status, SensorChanged, StacksCounted, MotionDone, Fault) of
    a reliable device -> host message. Returns None for an unknown type or a payload of the wrong
    length (the caller counts it as a protocol error; never raised)."""
    u = _UNPACK.get(mtype)
    if u is None or len(payload) != u[2]:
        return None
    cls, fmt, _, decoders = u
    return cls(*[v if d is None else d(v) for d, v in zip(decoders, struct.unpack(fmt, payload))])


def stop_reason(code: int) -> StopReason | int:
    """The :class:`StopReason` of a wire code (the int itself when unknown)."""
    return STOP_IN.get(code, code)


# ------------------------------------------------------ control (wire-only)
@dataclass(frozen=True)
class DeviceInfo:
    """What the handshake (HELLO_ACK) tells about the microcontroller."""

    protocol_version: int
    firmware_version: tuple[int, int, int]
    profile_id: int
    gear_tiles: int
    boot_counter: int
    heartbeat_window_ms: int
    stop_reason: StopReason


@dataclass(frozen=True)
class DeviceHeartbeat:
    """The device's DEV_HEARTBEAT (not queued as an event; ``HostProtocol.last_heartbeat``)."""

    uptime_ms: int
    boot_counter: int
    state: DeviceState
    stop_reason: StopReason
    active_motions: int
    rx_errors: int
    session: int


def device_info(f: tuple) -> DeviceInfo:
    """The :class:`DeviceInfo` of a HELLO_ACK's fields (``catalogue.FIELDS[T_HELLO_ACK]``)."""
    return DeviceInfo(f[0], (f[2], f[3], f[4]), f[5], f[6], f[7], f[8], stop_reason(f[9]))


def device_heartbeat(f: tuple) -> DeviceHeartbeat:
    """The :class:`DeviceHeartbeat` of a DEV_HEARTBEAT's fields."""
    return DeviceHeartbeat(f[0], f[1], STATE_IN.get(f[2], f[2]), stop_reason(f[3]), f[4], f[5], f[6])
