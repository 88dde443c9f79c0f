"""The motion table shared by the device engine and the GPIO backend."""

from firmware_bridge import catalogue as C
from firmware_bridge.machine import FakeMachine
from firmware_bridge.motion import MotionTable


def _table():
    done, stacks = [], []
    m = FakeMachine()
    t = MotionTable(m, lambda mo, now: stacks.append((mo.side, mo.progress, now)),
                    lambda mo, outcome, el: done.append((mo.cmd, outcome, el, mo.progress)))
    return m, t, done, stacks


def test_feed_counts_stack_edges_and_completes():
    m, t, done, stacks = _table()
    assert t.begin(1, C.T_FEED_STACK, C.MOTOR_FEEDER, C.SIDE_S, 1, 2, 1000, 0) == C.REPLY_OK
    assert t.begin(2, C.T_FEED_STACK, C.MOTOR_FEEDER, C.SIDE_S, 1, 2, 1000, 0) == C.REPLY_BUSY
    t.on_sensor(C.SENSOR_STACK, C.SIDE_E, 1, 10)       # another side: ignored
    t.on_sensor(C.SENSOR_STACK, C.SIDE_S, 1, 100)
    t.on_sensor(C.SENSOR_STACK, C.SIDE_S, 0, 150)
    t.on_sensor(C.SENSOR_STACK, C.SIDE_S, 1, 200)
    assert stacks == [(C.SIDE_S, 1, 100), (C.SIDE_S, 2, 200)]
    # the target is reached mid-stroke: the motor runs on until the push head is home
    assert done == [] and m.running == {(C.MOTOR_FEEDER, C.SIDE_S): 1}
    t.on_sensor(C.SENSOR_STACK, C.SIDE_S, 1, 210)       # a late pulse: not counted
    t.on_sensor(C.SENSOR_PUSH_HOME, C.SIDE_E, 1, 220)   # another side's head: ignored
    assert done == []
    t.on_sensor(C.SENSOR_PUSH_HOME, C.SIDE_S, 1, 260)
    assert stacks[-1] == (C.SIDE_S, 2, 200)
    assert done == [(1, C.OUTCOME_COMPLETED, 260, 2)] and not m.running


def test_feed_whose_push_head_never_comes_home_ends_at_its_deadline():
    m, t, done, stacks = _table()
    t.begin(1, C.T_FEED_STACK, C.MOTOR_FEEDER, C.SIDE_N, 1, 1, 1000, 0)
    t.on_sensor(C.SENSOR_PUSH_HOME, C.SIDE_N, 1, 50)    # home before the target: ignored
    t.on_sensor(C.SENSOR_STACK, C.SIDE_N, 1, 100)
    t.tick(999)
    assert done == []
    t.tick(1000)
    assert done == [(1, C.OUTCOME_DEADLINE, 1000, 1)] and not m.running


def test_centre_lift_completes_on_its_own_limits():
    m, t, done, _ = _table()
    assert t.begin(7, C.T_LIFT, C.MOTOR_CENTRE, C.SIDE_NONE, 0, 0, 3000, 0) == C.REPLY_OK
    assert t.motors_mask() == 1 << 10
    t.on_sensor(C.SENSOR_LIFT_BOTTOM, C.SIDE_E, 1, 100)  # a side lift's limit: ignored
    t.on_sensor(C.SENSOR_CENTRE_TOP, C.SIDE_NONE, 1, 200)  # the wrong limit for down
    assert done == []
    t.on_sensor(C.SENSOR_CENTRE_BOTTOM, C.SIDE_NONE, 1, 900)
    assert done == [(7, C.OUTCOME_COMPLETED, 900, 0)] and not m.running


def test_buzzer_is_timed_and_never_stays_on():
    m, t, done, _ = _table()
    t.begin(8, C.T_SET_INDICATORS, C.MOTOR_BUZZER, C.SIDE_NONE, 1, 300, 301, 0)
    assert m.running == {(C.MOTOR_BUZZER, C.SIDE_NONE): 1} and t.next_due() == 300
    t.tick(300)
    assert done == [(8, C.OUTCOME_COMPLETED, 300, 0)] and not m.running


def test_lift_deadline_and_next_due():
    m, t, done, _ = _table()
    assert t.begin(3, C.T_LIFT, C.MOTOR_LIFT, C.SIDE_N, 1, 0, 300, 50) == C.REPLY_OK
    t.on_sensor(C.SENSOR_LIFT_BOTTOM, C.SIDE_N, 1, 60)   # wrong limit for "up"
    assert t.next_due() == 350
    t.tick(349)
    assert m.running
    t.tick(350)
    assert done == [(3, C.OUTCOME_DEADLINE, 300, 0)] and not m.running


def test_dice_runs_its_spin_and_stop_all_ends_everything():
    m, t, done, _ = _table()
    t.begin(4, C.T_ROLL_DICE, C.MOTOR_DICE, C.SIDE_NONE, 1, 200, 1000, 0)
    t.begin(5, C.T_SHUFFLE_START, C.MOTOR_SHUFFLE, C.SIDE_NONE, 1, 0, 10_000, 0)
    assert t.next_due() == 200 and t.motors_mask() == (1 << 9) | 1
    t.tick(200)
    assert done == [(4, C.OUTCOME_COMPLETED, 200, 0)]
    t.stop_all(C.OUTCOME_SAFE_STOP, 250)
    assert done[-1] == (5, C.OUTCOME_SAFE_STOP, 250, 0) and not m.running
    assert m.stop_all_count == 1
    assert t.begin(6, C.T_LIFT, C.MOTOR_LIFT, 0, 1, 0, 0, 0) == C.REPLY_BAD_ARGUMENT


def test_the_buzzer_does_not_make_the_machine_busy():
    from firmware_bridge.executor import CommandCore
    import struct
    out = []
    core = CommandCore(FakeMachine(), lambda t, p, e: out.append((t, p)) or True)
    core.execute(C.T_CLEAR_SAFE_STOP, struct.pack("<H", 1), 0)
    core.execute(C.T_SET_INDICATORS, struct.pack("<HBH", 2, C.LIGHT_READY, 500), 0)
    assert core.state() == C.STATE_IDLE and core.table.busy(C.MOTOR_BUZZER, C.SIDE_NONE)
    core.execute(C.T_SET_GEAR, struct.pack("<HH", 3, 144), 10)
    assert out[-1] == (C.T_REPLY, struct.pack("<HBB", 3, C.REPLY_OK, 0)) and core.gear == 144
    core.execute(C.T_SHUFFLE_START, struct.pack("<HI", 4, 1000), 20)
    assert core.state() == C.STATE_BUSY
    core.execute(C.T_SET_GEAR, struct.pack("<HH", 5, 136), 30)
    assert out[-1] == (C.T_REPLY, struct.pack("<HBB", 5, C.REPLY_BUSY, 0))


def _core():
    from firmware_bridge.executor import CommandCore
    import struct
    out = []
    m = FakeMachine()
    core = CommandCore(m, lambda t, p, e: out.append((t, p)) or True)
    core.execute(C.T_CLEAR_SAFE_STOP, struct.pack("<H", 1), 0)
    return m, core, out, struct


def _done(out, struct):
    return [struct.unpack("<HBBBII", p) for t, p in out if t == C.T_MOTION_DONE]


def test_feed_of_zero_stacks_parks_the_push_head():
    m, core, out, struct = _core()
    core.sensor_changed(C.SENSOR_PUSH_HOME, C.SIDE_S, 1, 0)
    core.execute(C.T_FEED_STACK, struct.pack("<HBBI", 2, C.SIDE_S, 0, 2000), 5)
    assert _done(out, struct) == [(2, C.T_FEED_STACK, C.SIDE_S, C.OUTCOME_COMPLETED, 0, 0)]
    assert not m.running  # home already: done without moving
    core.sensor_changed(C.SENSOR_PUSH_HOME, C.SIDE_S, 0, 10)  # pushed out (a stop mid-stroke)
    core.execute(C.T_FEED_STACK, struct.pack("<HBBI", 3, C.SIDE_S, 0, 2000), 20)
    assert m.running == {(C.MOTOR_FEEDER, C.SIDE_S): 1}
    core.sensor_changed(C.SENSOR_STACK, C.SIDE_S, 1, 100)       # parking counts no stack
    core.sensor_changed(C.SENSOR_PUSH_HOME, C.SIDE_S, 1, 300)
    assert _done(out, struct)[-1] == (3, C.T_FEED_STACK, C.SIDE_S, C.OUTCOME_COMPLETED, 280, 0)
    assert not m.running and not [p for t, p in out if t == C.T_STACKS]


def test_a_feeder_self_test_jog_ends_with_its_push_head_home():
    m, core, out, struct = _core()
    core.sensor_changed(C.SENSOR_PUSH_HOME, C.SIDE_W, 0, 0)
    core.execute(C.T_SELF_TEST, struct.pack("<HBBBHI", 4, 1, C.MOTOR_FEEDER, C.SIDE_W, 500, 1500), 0)
    core.tick(500)
    assert m.running and not _done(out, struct)   # the jog is over, the head is still out
    core.sensor_changed(C.SENSOR_PUSH_HOME, C.SIDE_W, 1, 620)
    assert _done(out, struct) == [(4, C.T_SELF_TEST, C.SIDE_W, C.OUTCOME_COMPLETED, 620, 1)]
    # a head already home at the end of the jog: done at its time
    core.execute(C.T_SELF_TEST, struct.pack("<HBBBHI", 5, 1, C.MOTOR_FEEDER, C.SIDE_W, 500, 1500), 700)
    core.tick(1200)
    assert _done(out, struct)[-1][:4] == (5, C.T_SELF_TEST, C.SIDE_W, C.OUTCOME_COMPLETED)


def test_a_lift_reversed_within_the_dead_time_waits_before_its_relay_closes():
    from firmware_bridge.motion import REVERSAL_DEAD_MS
    m, t, done, _ = _table()
    t.begin(1, C.T_LIFT, C.MOTOR_LIFT, C.SIDE_W, 1, 0, 3000, 0)
    t.on_sensor(C.SENSOR_LIFT_TOP, C.SIDE_W, 1, 2000)          # up: top reached, motor off
    assert done == [(1, C.OUTCOME_COMPLETED, 2000, 0)] and not m.running
    # down at once: the motion exists (busy) but no relay closes for REVERSAL_DEAD_MS
    assert t.begin(2, C.T_LIFT, C.MOTOR_LIFT, C.SIDE_W, 0, 0, 3000, 2010) == C.REPLY_OK
    assert t.busy(C.MOTOR_LIFT, C.SIDE_W) and t.moving() and not m.running
    assert t.next_due() == 2000 + REVERSAL_DEAD_MS == 2050
    t.on_sensor(C.SENSOR_LIFT_BOTTOM, C.SIDE_W, 1, 2020)     # not running yet: ignored
    t.tick(2049)
    assert not m.running and len(done) == 1
    t.tick(2050)
    assert m.running == {(C.MOTOR_LIFT, C.SIDE_W): 0}
    assert t.next_due() == 2050 + 3000                        # the deadline counts from here
    t.on_sensor(C.SENSOR_LIFT_BOTTOM, C.SIDE_W, 1, 3650)
    assert done[-1] == (2, C.OUTCOME_COMPLETED, 1600, 0)     # elapsed = travel, not the wait
    starts = [c for c in m.calls if c[0] == "start"]
    stops = [c for c in m.calls if c[0] == "stop"]
    assert starts == [("start", C.MOTOR_LIFT, C.SIDE_W, 1), ("start", C.MOTOR_LIFT, C.SIDE_W, 0)]
    assert m.calls.index(starts[1]) > m.calls.index(stops[0])


def test_dead_time_only_on_reversal_and_for_the_centre_lift_too():
    m, t, done, _ = _table()
    t.begin(1, C.T_LIFT, C.MOTOR_LIFT, C.SIDE_E, 1, 0, 3000, 0)
    t.finish((C.MOTOR_LIFT, C.SIDE_E), C.OUTCOME_STOPPED, 100)
    t.begin(2, C.T_LIFT, C.MOTOR_LIFT, C.SIDE_E, 1, 0, 3000, 110)   # same direction: at once
    assert m.running == {(C.MOTOR_LIFT, C.SIDE_E): 1}
    t.begin(3, C.T_LIFT, C.MOTOR_LIFT, C.SIDE_S, 0, 0, 3000, 110)   # another lift: at once
    assert (C.MOTOR_LIFT, C.SIDE_S) in m.running
    t.stop_all(C.OUTCOME_STOPPED, 200)
    t.begin(4, C.T_LIFT, C.MOTOR_LIFT, C.SIDE_E, 0, 0, 3000, 300)   # 100 ms later: at once
    assert m.running == {(C.MOTOR_LIFT, C.SIDE_E): 0}
    t.begin(5, C.T_LIFT, C.MOTOR_CENTRE, C.SIDE_NONE, 0, 0, 3000, 300)
    t.on_sensor(C.SENSOR_CENTRE_BOTTOM, C.SIDE_NONE, 1, 1300)
    t.begin(6, C.T_LIFT, C.MOTOR_CENTRE, C.SIDE_NONE, 1, 0, 3000, 1300)
    assert (C.MOTOR_CENTRE, C.SIDE_NONE) not in m.running
    t.tick(1350)
    assert m.running[(C.MOTOR_CENTRE, C.SIDE_NONE)] == 1
    # stopped during its dead time: it never ran, elapsed 0, and the next start is free
    t.finish((C.MOTOR_CENTRE, C.SIDE_NONE), C.OUTCOME_STOPPED, 1360)
    t.begin(7, C.T_LIFT, C.MOTOR_CENTRE, C.SIDE_NONE, 0, 0, 3000, 1370)
    t.stop_all(C.OUTCOME_STOPPED, 1380)
    assert done[-1][:3] == (7, C.OUTCOME_STOPPED, 0)


def test_the_command_core_of_the_microcontroller_waits_the_dead_time_too():
    """The device engine (what the MCU runs, and the simulated MCU) executes commands through
    CommandCore, whose MotionTable holds the lift relays apart on a reversal."""
    from firmware_bridge.executor import CommandCore
    from firmware_bridge.codec import pack_command
    from table_vocabulary import ClearSafeStop, Lift, Side, StopAll
    m = FakeMachine()
    core = CommandCore(m, lambda *a: True, now_ms=0)
    for i, (cmd, now) in enumerate([(ClearSafeStop(), 0), (Lift(Side.N, True, 3000), 0),
                                    (StopAll(), 700), (Lift(Side.N, False, 3000), 720)]):
        core.execute(*pack_command(i + 1, cmd), now)
    assert not m.running
    core.tick(749)
    assert not m.running
    core.tick(750)
    assert m.running == {(C.MOTOR_LIFT, C.SIDE_N): 0}


# --- stall-to-stop: a motor that runs without motion is stopped long before its deadline ----------

def test_a_feeder_without_motion_pulses_is_stopped_after_its_stall_window():
    from firmware_bridge.motion import STALL_MS
    stall = STALL_MS[C.MOTOR_FEEDER]
    m, t, done, _ = _table()
    t.begin(1, C.T_FEED_STACK, C.MOTOR_FEEDER, C.SIDE_W, 1, 17, 28_500, 0)
    t.on_sensor(C.SENSOR_FEEDER_MOTION, C.SIDE_E, 1, 500)   # another side's pulse: no evidence
    t.on_sensor(C.SENSOR_LIFT_TOP, C.SIDE_W, 1, 600)        # not a motion sensor
    assert t.next_due() == stall
    t.tick(stall - 1)
    assert done == [] and m.running
    t.tick(stall)
    assert done == [(1, C.OUTCOME_DEADLINE, stall, 0)] and not m.running


def test_a_turning_feeder_is_not_stopped_and_a_stall_counts_from_its_last_pulse():
    from firmware_bridge.motion import FLOW_STALL_MS, STALL_MS
    stall = STALL_MS[C.MOTOR_FEEDER]
    m, t, done, _ = _table()
    t.begin(1, C.T_FEED_STACK, C.MOTOR_FEEDER, C.SIDE_W, 1, 17, 28_500, 0)
    for ms in range(250, 3001, 250):  # pulses every 250 ms and a tile now and then: it turns
        t.on_sensor(C.SENSOR_FEEDER_MOTION, C.SIDE_W, (ms // 250) % 2, ms)
        if ms % 1000 == 0:
            t.on_sensor(C.SENSOR_TILE_PRESENT, C.SIDE_W, 1, ms)
        t.tick(ms)
    assert done == [] and t.next_due() == 3000 + stall
    t.tick(3000 + stall)  # the pulses stopped at 3 s (the motor lost power mid-build)
    assert done == [(1, C.OUTCOME_DEADLINE, 3000 + stall, 0)] and not m.running
    assert FLOW_STALL_MS > stall


def test_a_feed_that_turns_but_gets_no_tile_is_stopped_but_not_while_parking():
    from firmware_bridge.motion import FLOW_STALL_MS
    m, t, done, _ = _table()
    t.begin(1, C.T_FEED_STACK, C.MOTOR_FEEDER, C.SIDE_N, 1, 17, 28_500, 0)
    t.begin(2, C.T_FEED_STACK, C.MOTOR_FEEDER, C.SIDE_E, 1, 0, 28_500, 0)  # parking: no tile expected
    for ms in range(250, FLOW_STALL_MS + 1, 250):
        for side in (C.SIDE_N, C.SIDE_E):
            t.on_sensor(C.SENSOR_FEEDER_MOTION, side, (ms // 250) % 2, ms)
        t.tick(ms)
    assert done == [(1, C.OUTCOME_DEADLINE, FLOW_STALL_MS, 0)]
    assert m.running == {(C.MOTOR_FEEDER, C.SIDE_E): 1}
    t.on_sensor(C.SENSOR_PUSH_HOME, C.SIDE_E, 1, FLOW_STALL_MS + 10)
    assert done[-1] == (2, C.OUTCOME_COMPLETED, FLOW_STALL_MS + 10, 0) and not m.running


def test_the_disc_and_the_dice_stop_without_pulses_but_lifts_and_self_tests_have_no_stall_rule():
    from firmware_bridge.motion import STALL_MS
    m, t, done, _ = _table()
    t.begin(1, C.T_SHUFFLE_START, C.MOTOR_SHUFFLE, C.SIDE_NONE, 1, 0, 120_000, 0)
    t.begin(2, C.T_ROLL_DICE, C.MOTOR_DICE, C.SIDE_NONE, 1, 1200, 2500, 0)
    t.begin(3, C.T_LIFT, C.MOTOR_LIFT, C.SIDE_S, 1, 0, 3000, 0)
    t.begin(4, C.T_SELF_TEST, C.MOTOR_FEEDER, C.SIDE_E, 1, 2000, 3000, 0)
    for ms in range(0, 2001, 10):
        t.tick(ms)
    assert done == [(2, C.OUTCOME_DEADLINE, STALL_MS[C.MOTOR_DICE], 0),
                    (1, C.OUTCOME_DEADLINE, STALL_MS[C.MOTOR_SHUFFLE], 0)]
    assert set(m.running) == {(C.MOTOR_LIFT, C.SIDE_S), (C.MOTOR_FEEDER, C.SIDE_E)}
    t.stop_all(C.OUTCOME_STOPPED, 2001)
