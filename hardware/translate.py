"""The one boundary between the table's vocabulary (:mod:`hardware.vocabulary`) and the serial
protocol's messages (:mod:`firmware_bridge.messages`, :mod:`firmware_bridge.host`,
:mod:`firmware_bridge.catalogue`).

Every backend that runs firmware_bridge's device engine in-process (``sim`` and ``gpio``, through
:class:`hardware.local.LocalExecutor`) and the ``mcu`` backend (over the link) translate here, and
nowhere else:

* :func:`to_wire`: a goal command -> the wire command dataclass that packs it;
* :func:`from_payload` (the in-process engine's reports) and :func:`from_wire` (the link's decoded
  messages and events): a device message -> the neutral event;
* :func:`sensor_code` / :func:`readings_from_mask` / :func:`running_from_mask`: the parts as the
  wire's ``(code, side code)`` pairs and STATUS bit masks;
* :func:`health`: the link's counters -> :class:`~hardware.vocabulary.LinkHealth`.

Enum members are matched by name (``vocabulary.Sensor.JAM`` <-> ``messages.Sensor.JAM``), so a
part added on one side and not the other fails at import, not on a running table.
"""

from __future__ import annotations

import dataclasses
import operator
from typing import Any

from firmware_bridge import catalogue as C
from firmware_bridge import host as H
from firmware_bridge import messages as M
from firmware_bridge.errors import PeerReset

from . import vocabulary as V


def _by_name(ours: Any, theirs: Any) -> tuple[dict, dict]:
    """(ours -> wire int, wire int -> ours) for two enums with the same member names."""
    missing = sorted(set(ours.__members__) ^ set(theirs.__members__))
    if missing:
        raise ImportError(f"vocabulary and wire enums {ours.__name__} differ in {missing}")
    out = {m: int(theirs[m.name]) for m in ours}
    return out, {v: k for k, v in out.items()}


SIDE_OUT, SIDE_IN = _by_name(V.Side, M.Side)
MOTOR_OUT, MOTOR_IN = _by_name(V.Motor, M.Motor)
SENSOR_OUT, SENSOR_IN = _by_name(V.Sensor, M.Sensor)
OUTCOME_IN = _by_name(V.Outcome, M.Outcome)[1]
FAULT_IN = _by_name(V.FaultCode, M.FaultCode)[1]
REPLY_IN = _by_name(V.ReplyCode, M.ReplyCode)[1]
STATE_IN = _by_name(V.DeviceState, M.DeviceState)[1]
STOP_IN = _by_name(V.StopReason, M.StopReason)[1]
LIGHT_OUT = _by_name(V.Light, M.Light)[0]


def _side_out(side: V.Side | None) -> M.Side | None:
    return None if side is None else M.Side(SIDE_OUT[side])


def sensor_code(sensor: V.Sensor, side: V.Side | None) -> tuple[int, int]:
    """The wire's ``(sensor code, side code)`` of a part (side code 0xFF for a single part):
    the keys of the simulated machine's readings and of the STATUS mask."""
    return SENSOR_OUT[sensor], C.SIDE_NONE if side is None else SIDE_OUT[side]


def motor_code(motor: V.Motor, side: V.Side | None) -> tuple[int, int]:
    """The wire's ``(motor code, side code)`` of an actuator."""
    return MOTOR_OUT[motor], C.SIDE_NONE if side is None else SIDE_OUT[side]


#: every (sensor, side) of the table
SENSOR_KEYS = tuple(V.all_sensor_keys())
#: (sensor, side) of the vocabulary -> its bit in the STATUS sensors mask
_SENSOR_BITS = {key: C.sensor_bit(*sensor_code(*key)) for key in V.all_sensor_keys()}
_MOTOR_BITS = {(m, s): C.motor_bit(*motor_code(m, s))
               for m in V.Motor for s in ((*V.Side,) if m in V.PER_SIDE_MOTORS else (None,))}


def readings_from_mask(mask: int) -> dict[tuple[V.Sensor, V.Side | None], int]:
    """Every sensor's reading (0/1) from a STATUS sensors mask (u64)."""
    return {key: mask >> bit & 1 for key, bit in _SENSOR_BITS.items()}


def readings_to_mask(read: Any) -> int:
    """The STATUS sensors mask of ``read(sensor code, side code) -> 0/1`` (wire codes)."""
    mask = 0
    for key, bit in _SENSOR_BITS.items():
        if read(*sensor_code(*key)):
            mask |= 1 << bit
    return mask


def running_from_mask(mask: int) -> frozenset:
    """The ``(Motor, Side | None)`` running, from a STATUS motors mask."""
    return frozenset(key for key, bit in _MOTOR_BITS.items() if mask >> bit & 1)


# ------------------------------------------------------------------- commands
def _lift(c: V.Lift) -> M.Command:
    return M.Lift(_side_out(c.side), c.up, c.deadline_ms)


_TO_WIRE = {
    V.StartShuffle: lambda c: M.StartShuffle(c.deadline_ms),
    V.StopShuffle: lambda c: M.StopShuffle(),
    V.FeedStacks: lambda c: M.FeedStacks(M.Side(SIDE_OUT[c.side]), c.stacks, c.deadline_ms),
    V.Lift: _lift,
    V.RollDice: lambda c: M.RollDice(c.spin_ms, c.deadline_ms),
    V.StopAll: lambda c: M.StopAll(),
    V.SetGear: lambda c: M.SetGear(c.tiles),
    V.GetStatus: lambda c: M.GetStatus(),
    V.SelfTestStep: lambda c: M.SelfTestStep(c.step, M.Motor(MOTOR_OUT[c.motor]), _side_out(c.side),
                                             c.jog_ms, c.deadline_ms),
    V.ClearSafeStop: lambda c: M.ClearSafeStop(),
    V.SetIndicators: lambda c: M.SetIndicators(_lights_out(c.lights), c.buzzer_ms),
}
assert set(_TO_WIRE) == set(V.COMMANDS), "every goal command has its wire form"


def _lights_out(lights: int) -> int:
    mask = 0
    for light, bit in LIGHT_OUT.items():
        if int(lights) & int(light):
            mask |= bit
    return mask


def to_wire(command: V.Command) -> M.Command:
    """The wire command of a goal command (same fields, wire enums). Raises
    :class:`hardware.errors.CommandError` for something that is not a goal command."""
    f = _TO_WIRE.get(type(command))
    if f is None:
        from .errors import CommandError
        raise CommandError(f"not a table command: {command!r} (allowed: "
                           f"{', '.join(c.__name__ for c in V.COMMANDS)})")
    return f(command)


# --------------------------------------------------------------------- events
def _side_in(side: Any) -> V.Side | None:
    return None if side is None or side == C.SIDE_NONE else SIDE_IN.get(side, side)


#: a MotionDone's command, as the wire's type code or the host's decoded name -> the goal's name
_COMMAND_NAME = {**{t: n for t, n in M.COMMAND_NAMES.items()}, **{n: n for n in M.COMMAND_NAMES.values()}}
assert set(M.COMMAND_NAMES.values()) == {c.__name__ for c in V.COMMANDS}, "goal and wire commands differ"


def _status(f: tuple) -> V.Status:
    return V.Status(f[0], STATE_IN.get(f[1], f[1]), STOP_IN.get(f[2], f[2]), f[3], running_from_mask(f[4]),
                    readings_from_mask(f[5]), f[6], f[7])


#: a device message's fields (catalogue.FIELDS order; raw ints or the host's decoded values) ->
#: the neutral event. The one mapping of device messages: from_payload and from_wire use it.
_BUILD = {
    C.T_SENSOR: lambda f: V.SensorChanged(SENSOR_IN.get(f[0], f[0]), _side_in(f[1]), f[2], f[3]),
    C.T_STACKS: lambda f: V.StacksCounted(f[0], _side_in(f[1]), f[2], f[3]),
    C.T_MOTION_DONE: lambda f: V.MotionDone(f[0], _COMMAND_NAME.get(f[1], f"type 0x{f[1]:02x}"
                                                                    if isinstance(f[1], int) else f[1]),
                                            _side_in(f[2]), OUTCOME_IN.get(f[3], f[3]), f[4], f[5]),
    C.T_REPLY: lambda f: V.Reply(f[0], REPLY_IN.get(f[1], f[1]), f[2]),
    C.T_FAULT: lambda f: V.Fault(FAULT_IN.get(f[0], f[0]), _side_in(f[1]), f[2], f[3], f[4]),
    C.T_STATUS: _status,
}
assert set(_BUILD) == set(C.EVENT_TYPES), "every device message has its neutral event"


def _fields_of(cls: Any, mtype: int) -> tuple[int, Any]:
    names = [f.name for f in dataclasses.fields(cls)]
    assert len(names) == len(C.FIELDS[mtype]), (cls, C.FIELDS[mtype])
    return mtype, operator.attrgetter(*names)


#: the host's decoded device messages (firmware_bridge.messages), field for field the catalogue's
_DEVICE = dict((cls, _fields_of(cls, t)) for cls, t in (
    (M.SensorChanged, C.T_SENSOR), (M.StacksCounted, C.T_STACKS), (M.MotionDone, C.T_MOTION_DONE),
    (M.Reply, C.T_REPLY), (M.Fault, C.T_FAULT), (M.Status, C.T_STATUS)))


def from_payload(mtype: int, payload: bytes) -> Any:
    """The neutral event of a device message straight from its payload (the in-process device
    engine's reports); None for an unknown type or a payload of the wrong length."""
    f = M.unpack_device_message(mtype, payload)
    return None if f is None else _BUILD[mtype](f)


def _connected(e: H.Connected) -> V.Connected:
    i = e.info
    return V.Connected(".".join(map(str, i.firmware_version)), i.boot_counter, i.gear_tiles)


def _command_failed(e: H.CommandFailed) -> V.CommandFailed:
    return V.CommandFailed(e.cmd_id, str(e.error), e.executed, isinstance(e.error, PeerReset))


_LINK = {
    H.Connected: _connected,
    H.McuReset: lambda e: V.BackendReset(e.previous_boot, e.boot),
    H.LinkLost: lambda e: V.BackendLost(e.reason),
    H.CommandFailed: _command_failed,
}


def from_wire(message: Any) -> Any:
    """The neutral event of a decoded device message (Reply, Status, SensorChanged, StacksCounted,
    MotionDone, Fault) or link event (Connected, McuReset -> BackendReset, LinkLost ->
    BackendLost, CommandFailed). A wire code the vocabulary does not know (a newer firmware) is
    passed on as its int. Raises TypeError for anything else."""
    d = _DEVICE.get(type(message))
    if d is not None:
        return _BUILD[d[0]](d[1](message))
    f = _LINK.get(type(message))
    if f is None:
        raise TypeError(f"no table event for {message!r}")
    return f(message)


def health(stats: H.LinkStats, *, connected: bool, port: str, reconnects: int,
           info: M.DeviceInfo | None) -> V.LinkHealth:
    """The link's counters (:meth:`firmware_bridge.host.HostLink.stats`) as a
    :class:`~hardware.vocabulary.LinkHealth`."""
    return V.LinkHealth(connected, port, reconnects, stats.frames_received, stats.frames_rejected,
                        stats.crc_errors, stats.sent_new, stats.retransmitted, stats.duplicates_dropped,
                        stats.out_of_order_dropped, stats.protocol_errors, stats.srtt_ms, stats.rto_ms,
                        "" if info is None else ".".join(map(str, info.firmware_version)))
