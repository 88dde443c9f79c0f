"""The table's vocabulary (hardware.vocabulary, written in table_vocabulary) and the link's codec
of it (firmware_bridge.codec): every goal command packs in its catalogue layout, every device message
comes back as the vocabulary's own event, the MCU backend turns the link's events into the neutral
ones, every backend speaks only the vocabulary, and the controller and the service import nothing
of firmware_bridge."""

from __future__ import annotations

import ast
import dataclasses
import pathlib
import struct

import pytest

import hardware
import table_vocabulary
from firmware_bridge import catalogue as C
from firmware_bridge import codec as K
from firmware_bridge import host as H
from firmware_bridge.errors import LinkTimeout, PeerReset
from hardware import vocabulary as V
from hardware.mcu import link_event

ROOT = pathlib.Path(__file__).resolve().parents[2]

GOALS = [V.StartShuffle(30000), V.StopShuffle(), V.FeedStacks(V.Side.W, 17, 29000),
         V.Lift(V.Side.N, False, 4000), V.Lift(None, True, 3000), V.RollDice(800, 2000), V.StopAll(),
         V.SetGear(108), V.GetStatus(), V.SelfTestStep(3, V.Motor.LIFT, V.Side.S, 500, 4000),
         V.SelfTestStep(4, V.Motor.CENTRE_LIFT, None, 500, 4000), V.ClearSafeStop(),
         V.SetIndicators(V.Light.READY | V.Light.dealer(V.Side.W), 250)]
#: the same commands as the catalogue's messages, written out by hand from docs/protocol.md
WIRE = [(C.T_SHUFFLE_START, (41, 30000)), (C.T_SHUFFLE_STOP, (41,)),
        (C.T_FEED_STACK, (41, C.SIDE_W, 17, 29000)), (C.T_LIFT, (41, C.SIDE_N, 0, 4000)),
        (C.T_LIFT, (41, C.SIDE_NONE, 1, 3000)), (C.T_ROLL_DICE, (41, 800, 2000)), (C.T_STOP_ALL, (41,)),
        (C.T_SET_GEAR, (41, 108)), (C.T_GET_STATUS, (41,)),
        (C.T_SELF_TEST, (41, 3, C.MOTOR_LIFT, C.SIDE_S, 500, 4000)),
        (C.T_SELF_TEST, (41, 4, C.MOTOR_CENTRE, C.SIDE_NONE, 500, 4000)), (C.T_CLEAR_SAFE_STOP, (41,)),
        (C.T_SET_INDICATORS, (41, C.LIGHT_READY | C.LIGHT_DEALER_E << C.SIDE_W, 250))]


def test_the_vocabulary_is_one_set_of_classes():
    """hardware.vocabulary is table_vocabulary (the leaf both packages import), and its error is
    hardware's."""
    assert V.FeedStacks is table_vocabulary.FeedStacks and V.Side is hardware.Side
    assert V.CommandError is hardware.CommandError and issubclass(V.CommandError, hardware.HardwareError)


def test_every_goal_command_packs_as_its_catalogue_message():
    assert {type(c) for c in GOALS} == set(V.COMMANDS)
    for goal, (mtype, fields) in zip(GOALS, WIRE):
        assert K.pack_command(41, goal) == (mtype, struct.pack(C.FORMATS[mtype], *fields)), goal


def test_bad_commands_are_refused_with_the_field_and_what_is_allowed():
    with pytest.raises(hardware.CommandError, match=r"stacks must be an integer 0..40, got 41"):
        V.FeedStacks(V.Side.E, 41, 1000)
    with pytest.raises(hardware.CommandError, match="side must be one of Side.E"):
        V.FeedStacks(C.SIDE_E, 1, 1000)   # a wire code is not a side
    with pytest.raises(hardware.CommandError, match="tiles must be one of 136, 144, 152, 108"):
        V.SetGear(100)
    with pytest.raises(hardware.CommandError, match="deadline_ms"):
        V.RollDice(500, 100)
    with pytest.raises(hardware.CommandError, match="side must be None"):
        V.SelfTestStep(0, V.Motor.DICE, V.Side.E, 10, 100)
    with pytest.raises(hardware.CommandError, match="not a table command"):
        K.pack_command(1, (C.T_STOP_ALL, b"\x01\x00"))
    b = hardware.open_backend("sim")
    try:
        with pytest.raises(hardware.CommandError, match="not a table command"):
            b.submit("StopAll")
    finally:
        b.close()


def _payload(mtype: int, *fields) -> bytes:
    return struct.pack(C.FORMATS[mtype], *fields)


def test_device_messages_become_the_vocabularys_events():
    dec = K.decode_event
    ev = dec(C.T_SENSOR, _payload(C.T_SENSOR, C.SENSOR_PUSH_HOME, C.SIDE_S, 1, 1234))
    assert ev == V.SensorChanged(V.Sensor.PUSH_HOME, V.Side.S, 1, 1234)
    assert type(ev.sensor) is V.Sensor and type(ev.side) is V.Side
    ev = dec(C.T_MOTION_DONE, _payload(C.T_MOTION_DONE, 9, C.T_LIFT, C.SIDE_NONE, C.OUTCOME_DEADLINE, 2100, 3))
    assert ev == V.MotionDone(9, "Lift", None, V.Outcome.DEADLINE, 2100, 3) and type(ev.outcome) is V.Outcome
    ev = dec(C.T_FAULT, _payload(C.T_FAULT, C.FAULT_EVENTS_DROPPED, C.SIDE_NONE, 0, 5, 77))
    assert ev == V.Fault(V.FaultCode.EVENTS_DROPPED, None, 0, 5, 77)
    ev = dec(C.T_REPLY, _payload(C.T_REPLY, 4, C.REPLY_SAFE_STOP, C.STOP_POWER_ON))
    assert ev == V.Reply(4, V.ReplyCode.SAFE_STOP, 3) and K.stop_reason(ev.detail) is V.StopReason.POWER_ON
    ev = dec(C.T_STACKS, _payload(C.T_STACKS, 6, C.SIDE_E, 12, 99))
    assert ev == V.StacksCounted(6, V.Side.E, 12, 99)
    motors = 1 << C.motor_bit(C.MOTOR_FEEDER, C.SIDE_W) | 1 << C.motor_bit(C.MOTOR_CENTRE, C.SIDE_NONE)
    sensors = 1 << C.sensor_bit(C.SENSOR_LIFT_TOP, C.SIDE_N) | 1 << C.sensor_bit(C.SENSOR_DICE_BUTTON, C.SIDE_NONE)
    ev = dec(C.T_STATUS, _payload(C.T_STATUS, 2, C.STATE_BUSY, C.STOP_NONE, 144, motors, sensors, 5000, 2))
    assert (ev.state, ev.stop_reason, ev.gear_tiles) == (V.DeviceState.BUSY, V.StopReason.NONE, 144)
    assert ev.running == {(V.Motor.FEEDER, V.Side.W), (V.Motor.CENTRE_LIFT, None)}
    assert {k for k, v in ev.readings.items() if v} == {(V.Sensor.LIFT_TOP, V.Side.N), (V.Sensor.DICE_BUTTON, None)}
    assert set(ev.readings) == set(V.all_sensor_keys())
    # a code this vocabulary does not know (a newer firmware) is passed on, not a crash
    ev = dec(C.T_SENSOR, _payload(C.T_SENSOR, 40, C.SIDE_NONE, 1, 5))
    assert ev.sensor == 40 and ev.side is None
    assert dec(C.T_SENSOR, b"\x00") is None  # a payload of the wrong length
    assert dec(C.T_MOTION_DONE, _payload(C.T_MOTION_DONE, 9, 0x7E, 0, 0, 1, 0)).command == "type 0x7e"


def test_readings_mask_round_trip():
    on = {(V.Sensor.LIFT_BOTTOM, V.Side.E), (V.Sensor.JAM, None), (V.Sensor.PUSH_HOME, V.Side.N)}
    mask = K.readings_to_mask(lambda s, side: int(any(K.sensor_code(*k) == (s, side) for k in on)))
    assert {k for k, v in K.readings_from_mask(mask).items() if v} == on


def test_link_events_become_neutral_events():
    info = K.DeviceInfo(3, (1, 4, 2), 1, 136, 7, 500, V.StopReason.POWER_ON)
    assert link_event(H.Connected(info)) == V.Connected("1.4.2", 7, 136)
    assert link_event(H.McuReset(7, 8)) == V.BackendReset(7, 8)
    assert link_event(H.LinkLost("no frame for 0.4 s")) == V.BackendLost("no frame for 0.4 s")
    failed = link_event(H.CommandFailed(5, PeerReset("the device restarted"), None))
    assert failed == V.CommandFailed(5, "the device restarted", None, True)
    failed = link_event(H.CommandFailed(6, LinkTimeout("retransmissions exhausted"), False))
    assert failed == V.CommandFailed(6, "retransmissions exhausted", False, False)
    fault = V.Fault(V.FaultCode.ESTOP, None, 0, 0, 5)
    assert link_event(fault) is fault  # the device's events are the vocabulary's already


def _is_vocabulary(ev) -> bool:
    if not isinstance(ev, V.EVENT_TYPES):
        return False
    for f in dataclasses.fields(ev):
        v = getattr(ev, f.name)
        if f.name in ("side", "sensor", "outcome", "code", "state", "stop_reason") and not (
                v is None or isinstance(v, (V.Side, V.Sensor, V.Outcome, V.FaultCode, V.ReplyCode,
                                            V.DeviceState, V.StopReason))):
            return False   # a raw wire code
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


def test_the_vocabulary_is_a_leaf_and_firmware_bridge_does_not_import_hardware():
    """No package cycle hardware <-> firmware_bridge: the vocabulary both use imports nothing of the
    project, and firmware_bridge nothing of hardware (nor anything above it)."""
    project = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()}
    assert {"table_vocabulary", "hardware", "firmware_bridge"} <= project
    leaf = {m for p in (ROOT / "table_vocabulary").rglob("*.py") for m in _imports(p)}
    assert not {m for m in leaf if m.split(".")[0] in project}
    above = project - {"firmware_bridge", "table_vocabulary"}
    bad = {str(p.relative_to(ROOT)): sorted(m for m in _imports(p) if m.split(".")[0] in above)
           for p in (ROOT / "firmware_bridge").rglob("*.py")}
    assert not {k: v for k, v in bad.items() if v}
