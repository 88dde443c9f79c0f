"""The operator events added to the cycle state machine for the service: ManualLift, StopAllRequest,
and ``refusal`` (why an operator event would be ignored)."""

from __future__ import annotations

import hardware
from hardware.vocabulary import (ClearSafeStop, Lift, Light, MotionDone, Outcome, SetIndicators, Side,
                                 StopAll)
from controller import cycle as CY
from controller.runtime import TableRuntime

DICE = (3, 4, 2, 5)
ALARM = SetIndicators(Light.FAULT | Light.DEALER_E, CY.ALARM_MS)


def settings() -> CY.Settings:
    return CY.Settings.from_profile(hardware.load_profile("default"), 136)


def test_manual_lift_from_idle_moves_the_four_lifts_and_returns_to_idle() -> None:
    t, cmds = CY.step(CY.initial(settings()), CY.ManualLift(True), 0.0)
    assert t.phase is CY.Phase.MANUAL_LIFT and t.busy
    assert cmds == [ClearSafeStop()] + [Lift(Side(i), True, 3000) for i in range(4)]
    for i in range(3):
        t, _ = CY.step(t, MotionDone(1, "Lift", Side(i), Outcome.COMPLETED, 2000, 0), 1.0)
        assert t.phase is CY.Phase.MANUAL_LIFT
    t, cmds = CY.step(t, MotionDone(1, "Lift", Side(3), Outcome.COMPLETED, 2000, 0), 2.0)
    assert t.phase is CY.Phase.IDLE and cmds == [] and t.manual_from is None


def test_manual_lift_is_refused_while_the_machine_moves_or_a_fault_is_latched() -> None:
    t, _ = CY.step(CY.initial(settings()), CY.StartCycle(DICE, {}), 0.0)
    assert t.phase is CY.Phase.HOMING
    reason = CY.refusal(t, CY.ManualLift(False))
    assert reason and "homing" in reason
    t2, cmds = CY.step(t, CY.ManualLift(False), 0.1)
    assert t2 is t and cmds == []
    t3, _ = CY.step(t, CY.StopAllRequest(), 0.2)
    assert "fault is latched (E73)" in CY.refusal(t3, CY.ManualLift(True))
    assert "fault is latched" in CY.refusal(t3, CY.StartCycle(DICE, {}))


def test_manual_lift_that_misses_its_deadline_is_a_fault() -> None:
    t, _ = CY.step(CY.initial(settings()), CY.ManualLift(True), 0.0)
    for i in range(4):
        out = Outcome.DEADLINE if i == 2 else Outcome.COMPLETED
        t, cmds = CY.step(t, MotionDone(1, "Lift", Side(i), out, 3000, 0), 3.0)
    assert t.phase is CY.Phase.FAULT and t.fault.code == "E71" and cmds == [StopAll(), ALARM]
    assert "side W" in t.fault.observed_en


def test_stop_all_latches_only_when_something_moves() -> None:
    idle = CY.initial(settings())
    t, cmds = CY.step(idle, CY.StopAllRequest("web page"), 0.0)
    assert t is idle and cmds == [StopAll()]
    t, _ = CY.step(idle, CY.StartCycle(DICE, {}), 0.0)
    t, cmds = CY.step(t, CY.StopAllRequest("web page"), 0.5)
    assert t.phase is CY.Phase.SAFE_STOP and cmds == [StopAll(), ALARM]
    assert t.fault.code == "E73" and "web page" in t.fault.observed_en
    assert CY.refusal(t, CY.ClearFault()) is None
    t, cmds = CY.step(t, CY.ClearFault(), 1.0)
    assert t.phase is CY.Phase.HOMING and t.fault is None


def test_refusal_reasons() -> None:
    idle = CY.initial(settings())
    assert CY.refusal(idle, CY.StartCycle(DICE, {})) is None
    assert "no fault to clear" in CY.refusal(idle, CY.ClearFault())
    assert "pauses a build" in CY.refusal(idle, CY.RefillButtons())
    assert CY.refusal(idle, CY.ManualLift(True)) is None
    busy, _ = CY.step(idle, CY.StartCycle(DICE, {}), 0.0)
    assert "wait for the cycle to end" in CY.refusal(busy, CY.StartCycle(DICE, {}))


def test_manual_lift_on_the_simulated_machine() -> None:
    b = hardware.open_backend("sim", seed=3)
    try:
        rt = TableRuntime(b, settings(), dice=lambda: DICE)
        rt.feed(CY.ManualLift(True))
        while rt.table.phase in CY.MOVING_PHASES:
            rt.pump()
        assert rt.table.phase is CY.Phase.IDLE and rt.table.fault is None
        assert all(b.model.lift_pos[i] == 1.0 for i in range(4))
        rt.feed(CY.ManualLift(False))
        while rt.table.phase in CY.MOVING_PHASES:
            rt.pump()
        assert rt.table.phase is CY.Phase.IDLE and all(b.model.lift_pos[i] == 0.0 for i in range(4))
        t = rt.run_cycle()  # a cycle after manual moves runs as usual
        assert t.phase is CY.Phase.WALLS_UP and t.fault is None
        rt.feed(CY.ManualLift(False))  # from walls up: down, back to walls up
        while rt.table.phase in CY.MOVING_PHASES:
            rt.pump()
        assert rt.table.phase is CY.Phase.WALLS_UP and not b.model.running()
    finally:
        b.close()
