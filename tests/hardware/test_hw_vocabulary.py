"""The table's vocabulary (hardware.vocabulary) and its one boundary to the wire
(hardware.translate): every goal command packs as its wire command, every device message and link
event comes back as a neutral event, every backend speaks only the vocabulary, and the controller
and the service import nothing of firmware_bridge."""

from __future__ import annotations

import ast
import dataclasses
import pathlib
import struct

import pytest

import hardware
from firmware_bridge import catalogue as C
from firmware_bridge import host as H
from firmware_bridge import messages as M
from firmware_bridge.errors import LinkTimeout, PeerReset
from hardware import translate as X
from hardware import vocabulary as V

ROOT = pathlib.Path(__file__).resolve().parents[2]

GOALS = [V.StartShuffle(30000), V.StopShuffle(), V.FeedStacks(V.Side.W, 17, 29000),
         V.Lift(V.Side.N, False, 4000), V.Lift(None, True, 3000), V.RollDice(800, 2000), V.StopAll(),
         V.SetGear(108), V.GetStatus(), V.SelfTestStep(3, V.Motor.LIFT, V.Side.S, 500, 4000),
         V.SelfTestStep(4, V.Motor.CENTRE_LIFT, None, 500, 4000), V.ClearSafeStop(),
         V.SetIndicators(V.Light.READY | V.Light.dealer(V.Side.W), 250)]
#: the same commands written as the wire's
WIRE = [M.StartShuffle(30000), M.StopShuffle(), M.FeedStacks(M.Side.W, 17, 29000),
        M.Lift(M.Side.N, False, 4000), M.Lift(None, True, 3000), M.RollDice(800, 2000), M.StopAll(),
        M.SetGear(108), M.GetStatus(), M.SelfTestStep(3, M.Motor.LIFT, M.Side.S, 500, 4000),
        M.SelfTestStep(4, M.Motor.CENTRE_LIFT, None, 500, 4000), M.ClearSafeStop(),
        M.SetIndicators(M.Light.READY | M.Light.DEALER_W, 250)]


def test_every_goal_command_packs_as_its_wire_command():
    assert {type(c) for c in GOALS} == set(V.COMMANDS)
    for goal, wire in zip(GOALS, WIRE):
        out = X.to_wire(goal)
        assert type(out) is type(wire) and out.pack(41) == wire.pack(41), goal


def test_bad_commands_are_refused_with_the_field_and_what_is_allowed():
    with pytest.raises(hardware.CommandError, match=r"stacks must be an integer 0..40, got 41"):
        V.FeedStacks(V.Side.E, 41, 1000)
    with pytest.raises(hardware.CommandError, match="side must be one of Side.E"):
        V.FeedStacks(M.Side.E, 1, 1000)   # a wire side is not the table's
    with pytest.raises(hardware.CommandError, match="tiles must be one of 136, 144, 152, 108"):
        V.SetGear(100)
    with pytest.raises(hardware.CommandError, match="not a table command"):
        X.to_wire(M.StopAll())
    b = hardware.open_backend("sim")
    try:
        with pytest.raises(hardware.CommandError, match="not a table command"):
            b.submit(M.StopAll())
    finally:
        b.close()


def _payload(mtype: int, *fields) -> bytes:
    return struct.pack(C.FORMATS[mtype], *fields)


def test_device_messages_become_neutral_events():
    def dec(mtype, payload):
        """The link's decoded message; the in-process engine's path gives the same event."""
        msg = M.decode_device_message(mtype, payload)
        assert X.from_wire(msg) == X.from_payload(mtype, payload), msg
        return msg

    ev = X.from_wire(dec(C.T_SENSOR, _payload(C.T_SENSOR, C.SENSOR_PUSH_HOME, C.SIDE_S, 1, 1234)))
    assert ev == V.SensorChanged(V.Sensor.PUSH_HOME, V.Side.S, 1, 1234)
    assert type(ev.sensor) is V.Sensor and type(ev.side) is V.Side
    ev = X.from_wire(dec(C.T_MOTION_DONE, _payload(C.T_MOTION_DONE, 9, C.T_LIFT, C.SIDE_NONE,
                                                   C.OUTCOME_DEADLINE, 2100, 3)))
    assert ev == V.MotionDone(9, "Lift", None, V.Outcome.DEADLINE, 2100, 3) and type(ev.outcome) is V.Outcome
    ev = X.from_wire(dec(C.T_FAULT, _payload(C.T_FAULT, C.FAULT_EVENTS_DROPPED, C.SIDE_NONE, 0, 5, 77)))
    assert ev == V.Fault(V.FaultCode.EVENTS_DROPPED, None, 0, 5, 77)
    ev = X.from_wire(dec(C.T_REPLY, _payload(C.T_REPLY, 4, C.REPLY_SAFE_STOP, C.STOP_POWER_ON)))
    assert ev == V.Reply(4, V.ReplyCode.SAFE_STOP, 3) and V.StopReason(ev.detail) is V.StopReason.POWER_ON
    ev = X.from_wire(dec(C.T_STACKS, _payload(C.T_STACKS, 6, C.SIDE_E, 12, 99)))
    assert ev == V.StacksCounted(6, V.Side.E, 12, 99)
    motors = 1 << C.motor_bit(C.MOTOR_FEEDER, C.SIDE_W) | 1 << C.motor_bit(C.MOTOR_CENTRE, C.SIDE_NONE)
    sensors = 1 << C.sensor_bit(C.SENSOR_LIFT_TOP, C.SIDE_N) | 1 << C.sensor_bit(C.SENSOR_DICE_BUTTON, C.SIDE_NONE)
    ev = X.from_wire(dec(C.T_STATUS, _payload(C.T_STATUS, 2, C.STATE_BUSY, C.STOP_NONE, 144, motors, sensors,
                                              5000, 2)))
    assert (ev.state, ev.stop_reason, ev.gear_tiles) == (V.DeviceState.BUSY, V.StopReason.NONE, 144)
    assert ev.running == {(V.Motor.FEEDER, V.Side.W), (V.Motor.CENTRE_LIFT, None)}
    assert {k for k, v in ev.readings.items() if v} == {(V.Sensor.LIFT_TOP, V.Side.N), (V.Sensor.DICE_BUTTON, None)}
    assert set(ev.readings) == set(V.all_sensor_keys())
    # a code this vocabulary does not know (a newer firmware) is passed on, not a crash
    ev = X.from_wire(dec(C.T_SENSOR, _payload(C.T_SENSOR, 40, C.SIDE_NONE, 1, 5)))
    assert ev.sensor == 40 and ev.side is None
    assert X.from_payload(C.T_SENSOR, b"\x00") is None  # a payload of the wrong length
    ev = X.from_payload(C.T_MOTION_DONE, _payload(C.T_MOTION_DONE, 9, 0x7E, 0, 0, 1, 0))
    assert ev.command == "type 0x7e" == X.from_wire(M.decode_device_message(
        C.T_MOTION_DONE, _payload(C.T_MOTION_DONE, 9, 0x7E, 0, 0, 1, 0))).command


def test_readings_mask_round_trip():
    on = {(V.Sensor.LIFT_BOTTOM, V.Side.E), (V.Sensor.JAM, None), (V.Sensor.PUSH_HOME, V.Side.N)}
    mask = X.readings_to_mask(lambda s, side: int(any(X.sensor_code(*k) == (s, side) for k in on)))
    assert {k for k, v in X.readings_from_mask(mask).items() if v} == on


def test_link_events_become_neutral_events():
    info = M.DeviceInfo(3, (1, 4, 2), 1, 136, 7, 500, M.StopReason.POWER_ON)
    assert X.from_wire(H.Connected(info)) == V.Connected("1.4.2", 7, 136)
    assert X.from_wire(H.McuReset(7, 8)) == V.BackendReset(7, 8)
    assert X.from_wire(H.LinkLost("no frame for 0.4 s")) == V.BackendLost("no frame for 0.4 s")
    failed = X.from_wire(H.CommandFailed(5, PeerReset("the device restarted"), None))
    assert failed == V.CommandFailed(5, "the device restarted", None, True)
    failed = X.from_wire(H.CommandFailed(6, LinkTimeout("retransmissions exhausted"), False))
    assert failed == V.CommandFailed(6, "retransmissions exhausted", False, False)
    with pytest.raises(TypeError):
        X.from_wire(object())


def _is_vocabulary(ev) -> bool:
    if not isinstance(ev, V.EVENT_TYPES):
        return False
    for f in dataclasses.fields(ev):
        v = getattr(ev, f.name)
        if isinstance(v, (M.Side, M.Sensor, M.Outcome, M.FaultCode, M.ReplyCode)):
            return False
    return True


@pytest.mark.parametrize("kind", ["sim", "gpio", "mcu"])
def test_every_backend_speaks_only_the_vocabulary(kind):
    b = hardware.open_backend(kind, seed=1, speed=8.0)
    try:
        seen = []
        for c in (V.GetStatus(), V.ClearSafeStop(), V.Lift(V.Side.E, True, 5000), V.FeedStacks(V.Side.S, 1, 3000)):
            b.submit(c)
        seen += b.run_until(lambda e: isinstance(e, V.MotionDone) and e.command == "FeedStacks", 12)
        seen += b.advance(0.5)
        assert seen and all(_is_vocabulary(e) for e in seen), [e for e in seen if not _is_vocabulary(e)]
        assert any(isinstance(e, V.Status) for e in seen)
        assert {type(e) for e in seen} >= {V.Reply, V.Status, V.SensorChanged, V.MotionDone}
        snap = b.sensors()
        assert set(snap.values) == set(V.all_sensor_keys())
        health = b.health()
        if kind == "mcu":
            assert isinstance(health, V.LinkHealth) and health.connected and health.frames_received > 0
            assert health.port.startswith("/dev/pts/") and health.firmware.count(".") == 2
            assert not hasattr(b, "link")  # the link object stays inside the backend
        else:
            assert health is None
    finally:
        b.close()


def _imports(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


@pytest.mark.parametrize("package", ["controller", "service"])
def test_controller_and_service_import_nothing_of_firmware_bridge(package):
    bad = {str(p.relative_to(ROOT)): sorted(m for m in _imports(p) if m.split(".")[0] == "firmware_bridge")
           for p in (ROOT / package).rglob("*.py")}
    assert not {k: v for k, v in bad.items() if v}
    text = {p: p.read_text(encoding="utf-8") for p in (ROOT / package).rglob("*.py")}
    assert not [str(p) for p, t in text.items() if "firmware_bridge" in t]  # nor in a docstring
