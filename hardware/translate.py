"""The one boundary between the table's vocabulary (:mod:`hardware.vocabulary`) and the serial
protocol's messages (:mod:`firmware_bridge.messages`, :mod:`firmware_bridge.host`,
:mod:`firmware_bridge.catalogue`).

Every backend that runs firmware_bridge's device engine in-process (``sim`` and ``gpio``, through
:class:`hardware.local.LocalExecutor`) and the ``mcu`` backend (over the link) translate here, and
nowhere else:

* :func:`to_wire`: a goal command -> the wire command dataclass that packs it;
* :func:`from_wire`: a decoded device message or link event -> the neutral event;
* :func:`sensor_code` / :func:`readings_from_mask` / :func:`running_from_mask`: the parts as the
  wire's ``(code, side code)`` pairs and STATUS bit masks;
* :func:`health`: the link's counters -> :class:`~hardware.vocabulary.LinkHealth`.

Enum members are matched by name (``vocabulary.Sensor.JAM`` <-> ``messages.Sensor.JAM``), so a
part added on one side and not the other fails at import, not on a running table.
"""

from __future__ import annotations

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
_WIRE_SIDES = {M.Side(v): k for v, k in SIDE_IN.items()}


def _side_out(side: V.Side | None) -> M.Side | None:
    return None if side is None else M.Side(SIDE_OUT[side])


def _side_in(side: Any) -> V.Side | None:
    return None if side is None else SIDE_IN.get(side, side)


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
#: the wire's command names (in MotionDone) -> the goal command's name: the same words
_COMMAND_NAME = {name: name for name in M.COMMAND_NAMES.values()}
assert set(_COMMAND_NAME) == {c.__name__ for c in V.COMMANDS}, "goal and wire commands differ"


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
def _sensor_changed(e: M.SensorChanged) -> V.SensorChanged:
    return V.SensorChanged(SENSOR_IN.get(e.sensor, e.sensor), _side_in(e.side), e.value, e.t_ms)


def _motion_done(e: M.MotionDone) -> V.MotionDone:
    return V.MotionDone(e.cmd_id, _COMMAND_NAME.get(e.command, e.command), _side_in(e.side), OUTCOME_IN.get(e.outcome, e.outcome),
                        e.elapsed_ms, e.detail)


def _status(e: M.Status) -> V.Status:
    return V.Status(e.cmd_id, STATE_IN.get(e.state, e.state), STOP_IN.get(e.stop_reason, e.stop_reason),
                    e.gear_tiles, running_from_mask(e.motors_mask), readings_from_mask(e.sensors_mask),
                    e.uptime_ms, e.active_motions)


def _connected(e: H.Connected) -> V.Connected:
    i = e.info
    return V.Connected(".".join(map(str, i.firmware_version)), i.boot_counter, i.gear_tiles)


def _command_failed(e: H.CommandFailed) -> V.CommandFailed:
    return V.CommandFailed(e.cmd_id, str(e.error), e.executed,
                           isinstance(e.error, PeerReset))


_FROM_WIRE = {
    M.SensorChanged: _sensor_changed,
    M.StacksCounted: lambda e: V.StacksCounted(e.cmd_id, _side_in(e.side), e.count, e.t_ms),
    M.MotionDone: _motion_done,
    M.Reply: lambda e: V.Reply(e.cmd_id, REPLY_IN.get(e.code, e.code), e.detail),
    M.Fault: lambda e: V.Fault(FAULT_IN.get(e.code, e.code), _side_in(e.side), e.cmd_id, e.detail, e.t_ms),
    M.Status: _status,
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
    f = _FROM_WIRE.get(type(message))
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
