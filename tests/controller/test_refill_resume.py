"""Refill (补牌) pause and resume at the edges of a build: the last stack counted, the build settling."""

from __future__ import annotations

import hardware
from controller import cycle as CY
from controller.runtime import TableRuntime
from hardware.vocabulary import (FeedStacks, MotionDone, Outcome, Sensor, SensorChanged, Side,
                                 StacksCounted, StartShuffle)

DICE = (3, 4, 2, 5)


def settings() -> CY.Settings:
    return CY.Settings.from_profile(hardware.load_profile("default"), 136)


def building() -> CY.Table:
    """A table in BUILDING, the four feeders sent."""
    t, _ = CY.step(CY.initial(settings()), CY.StartCycle(DICE, {}), 0.0)
    for i in range(4):
        t, _ = CY.step(t, MotionDone(1, "Lift", Side(i), Outcome.COMPLETED, 1600, 0), 1.0)
    t, _ = CY.step(t, MotionDone(1, "Lift", None, Outcome.COMPLETED, 1000, 0), 1.1)
    t, _ = CY.step(t, SensorChanged(Sensor.DISC_PULSE, None, 1, 1500), 1.5)
    t, _ = CY.step(t, MotionDone(2, "Lift", None, Outcome.COMPLETED, 1200, 0), 2.3)
    t, cmds = CY.step(t, CY.Tick(), 6.0)
    assert t.phase is CY.Phase.BUILDING and len(cmds) == 4
    for i in range(4):
        t, _ = CY.step(t, SensorChanged(Sensor.TILE_PRESENT, Side(i), 1, 7000), 7.0)
        t, _ = CY.step(t, SensorChanged(Sensor.TILE_PRESENT, Side(i), 0, 7100), 7.1)
    return t


def all_counted(t: CY.Table, short_side: int | None = None) -> CY.Table:
    for i in range(4):
        for n in range(17 - (1 if i == short_side else 0)):
            t, _ = CY.step(t, StacksCounted(3, Side(i), n + 1, 0), 10.0)
    return t


def test_a_pause_after_the_last_stack_resumes_to_the_lift_without_stalling() -> None:
    # every stack counted, the push heads still on their way home: the pause stops them
    t, _ = CY.step(all_counted(building()), CY.RefillButtons(), 10.1)
    for i in range(4):
        t, _ = CY.step(t, MotionDone(3, "FeedStacks", Side(i), Outcome.STOPPED, 4000, 17), 10.1)
    t, cmds = CY.step(t, CY.RefillButtons(), 12.0)
    assert t.phase is CY.Phase.BUILDING
    assert not any(isinstance(c, (StartShuffle, FeedStacks)) for c in cmds)  # nothing left to feed
    t, cmds = CY.step(t, CY.Tick(), 12.05)
    assert t.phase is CY.Phase.LIFTING, (t.phase, t.fault)


def test_a_pause_while_the_build_settles_does_not_restart_the_shuffle() -> None:
    t = all_counted(building())
    for i in range(4):
        t, _ = CY.step(t, MotionDone(3, "FeedStacks", Side(i), Outcome.COMPLETED, 4000, 17), 10.2)
    assert t.settle_until is not None
    t, _ = CY.step(t, CY.RefillButtons(), 10.3)
    t, cmds = CY.step(t, CY.RefillButtons(), 12.0)
    assert not any(isinstance(c, StartShuffle) for c in cmds)
    t, _ = CY.step(t, CY.Tick(), 12.05)
    assert t.phase is CY.Phase.LIFTING


def test_feeders_resumed_from_a_settling_build_are_waited_for() -> None:
    # W's feeder ended at its deadline one stack short; the build was settling when refill was pressed
    t = all_counted(building(), short_side=2)
    for i in range(4):
        out = Outcome.DEADLINE if i == 2 else Outcome.COMPLETED
        t, _ = CY.step(t, MotionDone(3, "FeedStacks", Side(i), out, 4000, 16 if i == 2 else 17), 10.2)
    t, _ = CY.step(t, CY.RefillButtons(), 10.3)
    t, cmds = CY.step(t, CY.RefillButtons(), 12.0)
    assert FeedStacks(Side.W, 1, settings().feed_deadline_ms[2]) in cmds
    t, cmds = CY.step(t, CY.Tick(), 12.6)  # the old settle time has passed: W is still feeding
    assert t.phase is CY.Phase.BUILDING and cmds == []


def test_no_motor_runs_at_walls_up_after_a_pause_in_the_settle_time() -> None:
    b = hardware.open_backend("sim", seed=2)
    rt = TableRuntime(b, CY.Settings.from_profile(b.profile, 136), dice=lambda: DICE)
    try:
        rt.feed(CY.StartCycle(DICE, dict(b.sensors().values)))
        while rt.table.settle_until is None:
            rt.pump(0.01)
            assert rt.table.phase in CY.MOVING_PHASES
        rt.feed(CY.RefillButtons())
        rt.pump(0.5)
        rt.feed(CY.RefillButtons())
        while rt.table.phase in CY.MOVING_PHASES:
            rt.pump()
        assert rt.table.phase is CY.Phase.WALLS_UP, rt.table.fault
        assert b.model.running() == {}
    finally:
        b.close()


def test_a_jam_seen_during_the_pause_blocks_the_resume() -> None:
    t, cmds = CY.step(building(), CY.RefillButtons(), 10.0)
    assert t.phase is CY.Phase.REFILL_PAUSE
    t, _ = CY.step(t, SensorChanged(Sensor.JAM, None, 1, 11_000), 11.0)  # a tile wedged at the outlet
    t, cmds = CY.step(t, CY.RefillButtons(), 12.0)
    assert t.phase is CY.Phase.FAULT and t.fault.code == "E53"
    assert not any(isinstance(c, (StartShuffle, FeedStacks)) for c in cmds)


def test_a_feed_that_missed_its_deadline_is_still_judged_after_a_pause_in_the_settle_time() -> None:
    # N built all its stacks but its push head was never seen home (no home-sensor change): E35
    t = all_counted(building())
    for i in range(4):
        out = Outcome.DEADLINE if i == 3 else Outcome.COMPLETED
        t, _ = CY.step(t, MotionDone(3, "FeedStacks", Side(i), out, 4000, 17), 10.2)
    t, _ = CY.step(t, CY.RefillButtons(), 10.3)
    t, _ = CY.step(t, CY.RefillButtons(), 12.0)
    t, _ = CY.step(t, CY.Tick(), 12.05)
    assert t.phase is CY.Phase.FAULT and (t.fault.code, t.fault.side) == ("E35", "N")


def test_a_side_that_missed_its_deadline_before_the_pause_is_judged_after_the_others_resume() -> None:
    t = all_counted(building(), short_side=3)
    t, _ = CY.step(t, MotionDone(3, "FeedStacks", Side.W, Outcome.DEADLINE, 4000, 17), 10.2)  # W: head never home
    for i in (0, 1):
        t, _ = CY.step(t, MotionDone(3, "FeedStacks", Side(i), Outcome.COMPLETED, 4000, 17), 10.2)
    t, _ = CY.step(t, CY.RefillButtons(), 10.3)  # N still feeding its last stack
    t, _ = CY.step(t, MotionDone(3, "FeedStacks", Side.N, Outcome.STOPPED, 4000, 16), 10.3)
    t, cmds = CY.step(t, CY.RefillButtons(), 12.0)
    assert [c for c in cmds if isinstance(c, FeedStacks)] == [FeedStacks(Side.N, 1, settings().feed_deadline_ms[3])]
    t, _ = CY.step(t, StacksCounted(4, Side.N, 1, 0), 13.0)
    t, _ = CY.step(t, MotionDone(4, "FeedStacks", Side.N, Outcome.COMPLETED, 1000, 1), 13.1)
    t, _ = CY.step(t, CY.Tick(), 13.7)
    assert t.phase is CY.Phase.FAULT and (t.fault.code, t.fault.side) == ("E35", "W")
