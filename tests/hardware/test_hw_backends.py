"""One behavioural suite, run against the sim, gpio (MockFactory pins) and mcu (pty)
backends: full builds, lifts, dice, and every injected fault showing the same symptom."""

from __future__ import annotations


import pytest

from firmware_bridge import catalogue as C
from firmware_bridge.motion import STALL_MS
from hardware.vocabulary import (ClearSafeStop, Fault, FaultCode, FeedStacks,
                                 GetStatus, Lift, Light, MotionDone, Outcome, ReplyCode,
                                 RollDice, Sensor, SensorChanged, SetIndicators, Side,
                                 StacksCounted, StartShuffle, Status, StopAll, StopReason)
from hardware.interface import TableBackend
from hardware.sim.faults import parse_fault

from hw_driver import Table

TOL_MS = 120  # mcu backend at 8x real time: a few ms of thread jitter = tens of ms of machine time


def lifts(t: Table, up: bool, sides=tuple(Side)) -> dict:
    ids = {t.call(Lift(s, up, t.p.lift_deadline_ms()))[0]: s for s in sides}
    return {ids[i]: d for i, d in t.wait_done(ids, 10).items()}


def changes(t: Table, sensor: Sensor, side=None) -> int:
    return len(t.of(SensorChanged, sensor=sensor, side=side))


# ------------------------------------------------------------------- normal cycle
@pytest.mark.parametrize("gear", [136, 144, 152, 108])
def test_full_cycle_for_each_gear(open_table, gear):
    t = open_table(seed=gear)
    assert isinstance(t.b, TableBackend)
    t.start(gear)
    t0 = t.b.now()
    done = t.build(gear)
    stacks = t.p.stacks(gear)
    for side, n in zip(Side, stacks):
        d = done[side]
        assert (d.outcome, d.detail, d.command) == (Outcome.COMPLETED, n, "FeedStacks")
        assert [s.count for s in t.of(StacksCounted, side=side)] == list(range(1, n + 1))
        # 2 tiles x (on, off) per stack. On a CPU loaded by other work the host may read the
        # simulated microcontroller's line late: the device then drops sensor events and reports
        # how many (EVENTS_DROPPED); the stacks counted above must hold all the same
        dropped = sum(f.detail for f in t.of(Fault, code=FaultCode.EVENTS_DROPPED))
        assert 4 * n - dropped <= changes(t, Sensor.TILE_PRESENT, side) <= 4 * n
    assert t.b.model.walls == list(stacks)
    assert changes(t, Sensor.DISC_PULSE) > 10
    up = lifts(t, True)
    for d in up.values():
        assert d.outcome == Outcome.COMPLETED
        assert abs(d.elapsed_ms - 2000) <= TOL_MS  # lift travel time, for maintenance trends
    snap = t.b.sensors()
    assert all(snap(Sensor.LIFT_TOP, s) == 1 and snap(Sensor.LIFT_BOTTOM, s) == 0 for s in Side)
    spin, deadline = t.p.dice_ms()
    i, _ = t.call(RollDice(spin, deadline))
    dice = t.wait_done([i], 5)[i]
    assert dice.outcome == Outcome.COMPLETED and abs(dice.elapsed_ms - spin) <= TOL_MS
    assert changes(t, Sensor.DICE_PULSE) >= 10
    down = lifts(t, False)
    assert all(d.outcome == Outcome.COMPLETED for d in down.values())
    assert t.b.model.cycles == 0  # the played set is still on the table top
    # the players push it into the centre: the centre lift drops it into the disc
    d = t.centre(False)
    assert d.outcome == Outcome.COMPLETED and d.side is None
    assert abs(d.elapsed_ms - 1000 * t.p.timing.centre_down_s) <= TOL_MS
    assert t.b.model.cycles == 1 and t.b.model.quadrant == [2 * n for n in stacks]
    assert t.centre(True).outcome == Outcome.COMPLETED
    snap = t.b.sensors()
    assert snap(Sensor.CENTRE_TOP) == 1 and snap(Sensor.CENTRE_BOTTOM) == 0
    # each push head turned once per stack at least, and parked at home
    for side, n in zip(Side, stacks):
        assert changes(t, Sensor.PUSH_HOME, side) >= 2 * n
        assert snap(Sensor.PUSH_HOME, side) == 1
    assert not t.of(Fault)
    assert t.b.model.running() == {}
    assert t.b.now() - t0 < 45  # about 30 s of machine time


def test_power_on_is_safe_stop_until_cleared(open_table):
    t = open_table()
    _, r = t.call(FeedStacks(Side.E, 2, 5000))
    assert (r.code, r.detail) == (ReplyCode.SAFE_STOP, StopReason.POWER_ON)
    _, st = t.call(GetStatus())
    assert isinstance(st, Status) and st.stop_reason == StopReason.POWER_ON
    assert st.readings[(Sensor.LIFT_BOTTOM, Side.E)] == 1 and st.readings[(Sensor.LIFT_TOP, Side.E)] == 0
    assert st.running == frozenset()  # power-on: nothing runs
    assert t.call(ClearSafeStop())[1].code == ReplyCode.OK
    assert t.call(FeedStacks(Side.E, 2, 5000))[1].code == ReplyCode.OK
    assert t.call(FeedStacks(Side.E, 2, 5000))[1].code == ReplyCode.BUSY


def test_estop_stops_everything_and_latches(open_table):
    t = open_table()
    t.start()
    t.call(StartShuffle(60_000))
    t.call(Lift(Side.W, True, 3000))
    t.log += t.b.advance(0.5)
    assert t.b.model.running()
    if t.b.kind == "mcu":
        with t.b.device.runner.lock:  # the device thread owns the model
            t.b.model.press_estop(True)
    else:
        t.b.model.press_estop(True)
    t.log += t.b.run_until(lambda e: isinstance(e, Fault) and e.code == FaultCode.ESTOP, 3)
    assert t.b.model.running() == {}
    assert {d.outcome for d in t.of(MotionDone)} == {Outcome.SAFE_STOP}
    assert t.call(ClearSafeStop())[1].code == ReplyCode.SAFE_STOP


# ------------------------------------------------------------------------ faults
def test_lift_top_stuck_on(open_table):
    t = open_table(["lift-top-stuck-on:E"])
    t.start()
    snap = t.b.sensors()
    assert snap(Sensor.LIFT_TOP, Side.E) == 1 and snap(Sensor.LIFT_BOTTOM, Side.E) == 1
    assert snap(Sensor.LIFT_TOP, Side.S) == 0
    d = lifts(t, True, [Side.E])[Side.E]
    assert (d.outcome, d.elapsed_ms) == (Outcome.COMPLETED, 0)  # "done" without moving
    assert t.b.model.lift_pos[0] == 0.0


def test_lift_top_stuck_off(open_table):
    t = open_table(["lift-top-stuck-off:S"])
    t.start()
    d = lifts(t, True, [Side.S])[Side.S]
    assert d.outcome == Outcome.DEADLINE and abs(d.elapsed_ms - 3000) <= TOL_MS
    assert t.of(SensorChanged, sensor=Sensor.LIFT_BOTTOM, side=Side.S, value=0)  # it moved
    assert not t.of(SensorChanged, sensor=Sensor.LIFT_TOP, side=Side.S)
    f = t.b.run_until(lambda e: isinstance(e, Fault), 2)[-1] if not t.of(Fault) else t.of(Fault)[0]
    assert (f.code, f.side) == (FaultCode.DEADLINE, Side.S)


def test_lift_bottom_stuck_on(open_table):
    t = open_table(["lift-bottom-stuck-on:W"])
    t.start()
    assert lifts(t, True, [Side.W])[Side.W].outcome == Outcome.COMPLETED
    snap = t.b.sensors()
    assert snap(Sensor.LIFT_TOP, Side.W) == 1 and snap(Sensor.LIFT_BOTTOM, Side.W) == 1
    d = lifts(t, False, [Side.W])[Side.W]
    assert (d.outcome, d.elapsed_ms) == (Outcome.COMPLETED, 0)  # never left the top


def test_lift_bottom_stuck_off(open_table):
    t = open_table(["lift-bottom-stuck-off:N"])
    t.start()
    assert t.b.sensors()(Sensor.LIFT_BOTTOM, Side.N) == 0  # down at rest, reads 0
    assert lifts(t, True, [Side.N])[Side.N].outcome == Outcome.COMPLETED
    assert lifts(t, False, [Side.N])[Side.N].outcome == Outcome.DEADLINE


def test_lift_sensor_reversed(open_table):
    t = open_table(["lift-sensor-reversed:E"])
    t.start()
    snap = t.b.sensors()
    assert (snap(Sensor.LIFT_TOP, Side.E), snap(Sensor.LIFT_BOTTOM, Side.E)) == (1, 0)
    assert (snap(Sensor.LIFT_TOP, Side.S), snap(Sensor.LIFT_BOTTOM, Side.S)) == (0, 1)
    d = lifts(t, True, [Side.E])[Side.E]
    assert (d.outcome, d.elapsed_ms) == (Outcome.COMPLETED, 0)
    assert lifts(t, False, [Side.E])[Side.E].outcome == Outcome.DEADLINE


def test_lift_short_never_reaches_the_top(open_table):
    t = open_table(["lift-short:S"])
    t.start()
    done = lifts(t, True)
    assert done[Side.S].outcome == Outcome.DEADLINE
    assert abs(done[Side.S].elapsed_ms - t.p.lift_deadline_ms()) <= TOL_MS
    assert all(done[s].outcome == Outcome.COMPLETED for s in (Side.E, Side.W, Side.N))
    t.log += t.b.advance(0.2)
    assert [(f.code, f.side) for f in t.of(Fault)] == [(FaultCode.DEADLINE, Side.S)]
    assert t.b.sensors()(Sensor.LIFT_TOP, Side.S) == 0


def test_lift_late_makes_uneven_walls(open_table):
    t = open_table(["lift-late:W"])
    t.start()
    done = lifts(t, True)
    assert all(d.outcome == Outcome.COMPLETED for d in done.values())
    assert abs(done[Side.W].elapsed_ms - 2700) <= TOL_MS
    assert abs(done[Side.E].elapsed_ms - 2000) <= TOL_MS


def test_lift_slow_creeps_up_cycle_after_cycle(open_table):
    t = open_table(["lift-slow:N"])
    t.start()
    times = []
    for _ in range(4):
        d = lifts(t, True, [Side.N])[Side.N]
        times.append((d.outcome, d.elapsed_ms))
        lifts(t, False, [Side.N])
    assert [o for o, _ in times] == [Outcome.COMPLETED] * 3 + [Outcome.DEADLINE]
    els = [e for _, e in times]
    assert els[0] < els[1] < els[2] < els[3]
    assert abs(els[0] - 2000) <= TOL_MS and abs(els[2] - 2800) <= TOL_MS


def _feed_two_sides(t: Table, faulty: Side, good: Side, n: int = 3) -> dict:
    t.start()
    t.call(StartShuffle(t.p.shuffle_deadline_ms()))
    ids = {t.call(FeedStacks(s, n, t.p.feed_deadline_ms(n)))[0]: s for s in (faulty, good)}
    got = t.wait_done(ids, 30)
    t.call(ClearSafeStop())
    return {ids[i]: d for i, d in got.items()}


def test_feeder_wire_loose(open_table):
    t = open_table(["feeder-wire-loose:E"])
    done = _feed_two_sides(t, Side.E, Side.S)
    assert (done[Side.E].outcome, done[Side.E].detail) == (Outcome.DEADLINE, 0)
    assert done[Side.S].outcome == Outcome.COMPLETED
    assert changes(t, Sensor.FEEDER_MOTION, Side.E) == 0  # no motion at all
    assert changes(t, Sensor.TILE_PRESENT, Side.E) == 0
    assert changes(t, Sensor.FEEDER_MOTION, Side.S) > 0


def test_feeder_jammed(open_table):
    t = open_table(["feeder-jammed:E"])
    done = _feed_two_sides(t, Side.E, Side.S)
    assert (done[Side.E].outcome, done[Side.E].detail) == (Outcome.DEADLINE, 0)
    assert changes(t, Sensor.FEEDER_MOTION, Side.E) > 5  # the motor turns ...
    assert changes(t, Sensor.TILE_PRESENT, Side.E) == 0  # ... but no tile moves
    assert not t.of(StacksCounted, side=Side.E)


def test_tile_sensor_dirty(open_table):
    t = open_table(["tile-sensor-dirty:W"])
    assert t.b.sensors()(Sensor.TILE_PRESENT, Side.W) == 1
    done = _feed_two_sides(t, Side.W, Side.N)
    assert done[Side.W].outcome == Outcome.COMPLETED  # stacks are still counted
    assert changes(t, Sensor.TILE_PRESENT, Side.W) == 0
    assert changes(t, Sensor.TILE_PRESENT, Side.N) >= 12  # + the tile left at the throat


def test_wrong_gear_short(open_table):
    t = open_table(["wrong-gear"])  # a 136 set in a machine set to 144
    t.start(144)
    done = t.build(144)
    assert {(d.outcome, d.detail) for d in done.values()} == {(Outcome.DEADLINE, 17)}
    assert t.b.model.walls == [17] * 4


def test_wrong_gear_over(open_table):
    t = open_table(["wrong-gear"])  # a 144 set in a machine set to 136
    t.start(136)
    done = t.build(136)
    assert {(d.outcome, d.detail) for d in done.values()} == {(Outcome.COMPLETED, 17)}
    t.log += t.b.advance(0.5)
    snap = t.b.sensors()
    assert all(snap(Sensor.TILE_PRESENT, s) == 1 for s in Side)  # tiles left at every port


def test_missing_tile(open_table):
    t = open_table(["missing-tile"])
    t.start(136)
    done = t.build(136)
    short = [s for s, d in done.items() if d.outcome == Outcome.DEADLINE]
    assert len(short) == 1 and done[short[0]].detail == 16
    assert changes(t, Sensor.TILE_PRESENT, short[0]) == 2 * 33  # an odd number of tiles
    assert t.b.model.half[int(short[0])]
    assert all(d.outcome == Outcome.COMPLETED for s, d in done.items() if s != short[0])


def test_disc_stall(open_table):
    t = open_table(["disc-stall"])
    done = _feed_two_sides(t, Side.E, Side.S, n=2)
    assert {d.outcome for d in done.values()} == {Outcome.DEADLINE}
    assert changes(t, Sensor.DISC_PULSE) == 0
    assert changes(t, Sensor.FEEDER_MOTION, Side.E) > 0
    assert changes(t, Sensor.TILE_PRESENT, Side.E) == 0


def test_dice_stuck(open_table):
    t = open_table(["dice-stuck"])
    t.start()
    i, _ = t.call(RollDice(1200, 2500))
    done = t.wait_done([i], 5)[i]
    assert changes(t, Sensor.DICE_PULSE) == 0
    # the device stops a motor that gives no motion pulse for its stall window (device ms: the simulated
    # microcontroller runs in real time, the machine `speed` times faster), here before the 1.2 s spin ends
    window_ms = STALL_MS[C.MOTOR_DICE] * getattr(t.b, "speed", 1.0)
    if window_ms < 1200:
        assert done.outcome == Outcome.DEADLINE and abs(done.elapsed_ms - window_ms) <= 2 * TOL_MS
    else:
        assert done.outcome == Outcome.COMPLETED


# ------------------------------------------------------- push heads, centre lift, jam
def test_push_head_jammed(open_table):
    t = open_table(["push-head-jammed:W"])
    done = _feed_two_sides(t, Side.W, Side.N)
    assert (done[Side.W].outcome, done[Side.W].detail) == (Outcome.DEADLINE, 0)
    assert done[Side.N].outcome == Outcome.COMPLETED
    # the head went out and stuck there, stalling the drive: no motion, no tiles
    assert [e.value for e in t.of(SensorChanged, sensor=Sensor.PUSH_HOME, side=Side.W)] == [0]
    assert changes(t, Sensor.FEEDER_MOTION, Side.W) == 0
    assert changes(t, Sensor.TILE_PRESENT, Side.W) == 0
    assert t.b.sensors()(Sensor.PUSH_HOME, Side.W) == 0


def test_feeder_wire_loose_leaves_the_push_head_home(open_table):
    t = open_table(["feeder-wire-loose:S"])
    _feed_two_sides(t, Side.S, Side.E)
    assert changes(t, Sensor.PUSH_HOME, Side.S) == 0
    assert t.b.sensors()(Sensor.PUSH_HOME, Side.S) == 1


def test_push_home_stuck_off(open_table):
    t = open_table(["push-home-stuck-off:E"])
    assert t.b.sensors()(Sensor.PUSH_HOME, Side.E) == 0
    done = _feed_two_sides(t, Side.E, Side.S)
    # every stack built and counted, but the head is never seen home
    assert (done[Side.E].outcome, done[Side.E].detail) == (Outcome.DEADLINE, 3)
    assert len(t.of(StacksCounted, side=Side.E)) == 3
    assert changes(t, Sensor.PUSH_HOME, Side.E) == 0
    assert done[Side.S].outcome == Outcome.COMPLETED


def test_centre_lift_stuck(open_table):
    t = open_table(["centre-lift-stuck"])
    t.start()
    d = t.centre(False)
    assert d.outcome == Outcome.DEADLINE and d.side is None
    assert abs(d.elapsed_ms - t.p.centre_deadline_ms()) <= TOL_MS
    snap = t.b.sensors()
    assert snap(Sensor.CENTRE_TOP) == 1 and snap(Sensor.CENTRE_BOTTOM) == 0
    t.log += t.b.advance(0.2)  # the Fault follows the MotionDone
    assert any(f.code == FaultCode.DEADLINE and f.side is None for f in t.of(Fault))


def test_centre_lift_already_up_completes_at_once(open_table):
    t = open_table()
    t.start()
    d = t.centre(True)
    assert (d.outcome, d.elapsed_ms) == (Outcome.COMPLETED, 0)


@pytest.mark.parametrize("kind", ["sim", "mcu"])
def test_tile_jam_stops_the_disc(open_table):
    t = open_table(["tile-jam"])
    t.start()
    t.call(StartShuffle(t.p.shuffle_deadline_ms()))
    t.log += t.b.advance(3.0)
    jam = t.of(SensorChanged, sensor=Sensor.JAM)
    assert [e.value for e in jam] == [1]
    pulses = t.of(SensorChanged, sensor=Sensor.DISC_PULSE)
    assert pulses and pulses[-1].t_ms <= jam[0].t_ms + 1  # the disc stopped at the jam
    assert abs(jam[0].t_ms - pulses[0].t_ms - 1000 * parse_fault("tile-jam").param("after")) <= 2 * TOL_MS + 250
    t.call(StopAll())


# ------------------------------------------------------------ buttons and indicators
def test_buttons_report_where_fitted(open_table, kind):
    t = open_table()
    t.start()
    t.b.model.press(C.SENSOR_LIFT_BUTTON_A, True)
    t.b.model.press(C.SENSOR_DICE_BUTTON, True)
    t.log += t.b.advance(0.3)
    t.b.model.press(C.SENSOR_DICE_BUTTON, False)
    t.log += t.b.advance(0.3)
    seen = [(e.sensor, e.value) for e in t.of(SensorChanged)
            if e.sensor in (Sensor.LIFT_BUTTON_A, Sensor.DICE_BUTTON)]
    if kind == "gpio":  # not fitted on the default GPIO build: never pressed
        assert seen == [] and "dice_button" not in t.b.fitted
        assert t.b.sensors()(Sensor.LIFT_BUTTON_A) == 0
    else:
        assert seen == [(Sensor.LIFT_BUTTON_A, 1), (Sensor.DICE_BUTTON, 1),
                        (Sensor.DICE_BUTTON, 0)]
        assert t.b.sensors()(Sensor.LIFT_BUTTON_A) == 1


def test_indicators_and_a_buzzer_that_stops_by_itself(open_table, kind):
    t = open_table()
    # accepted in the power-on safe-stop: an alarm must sound while nothing moves
    i, r = t.call(SetIndicators(Light.FAULT | Light.dealer(Side.S), 400))
    assert r.code == ReplyCode.OK
    fitted = kind != "gpio"
    assert t.b.model.lights == (C.LIGHT_FAULT | C.LIGHT_DEALER_E << 1 if fitted else 0)
    assert t.b.model.buzzing is fitted and t.b.model.running() == {}
    d = t.wait_done([i], 3)[i]
    assert d.command == "SetIndicators" and d.outcome == Outcome.COMPLETED
    assert abs(d.elapsed_ms - 400) <= TOL_MS
    assert not t.b.model.buzzing
    t.call(SetIndicators(Light.READY))
    assert t.b.model.lights == (C.LIGHT_READY if fitted else 0)
