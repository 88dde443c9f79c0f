"""The centre lift's strokes cut short by a safety stop are not centre-lift faults (E24)."""

from __future__ import annotations

import hardware
from controller import cycle as CY
from hardware.vocabulary import (Fault, FaultCode, MotionDone, Outcome, Sensor, SensorChanged, Side,
                                 StartShuffle)

DICE = (3, 4, 2, 5)


def settings() -> CY.Settings:
    return CY.Settings.from_profile(hardware.load_profile("default"), 136)


def test_an_emergency_stop_while_homing_is_not_blamed_on_the_centre_lift() -> None:
    # the microcontroller ends every motion SAFE_STOP, then reports the emergency stop
    t, _ = CY.step(CY.initial(settings()), CY.StartCycle(DICE, {}), 0.0)
    t, _ = CY.step(t, SensorChanged(Sensor.ESTOP, None, 1, 500), 0.5)
    for i in range(4):
        t, _ = CY.step(t, MotionDone(1, "Lift", Side(i), Outcome.SAFE_STOP, 500, 0), 0.5)
    t, _ = CY.step(t, MotionDone(1, "Lift", None, Outcome.SAFE_STOP, 500, 0), 0.5)
    assert t.fault is None or t.fault.code != "E24", t.fault  # the FAULT event may arrive in a later read
    t, _ = CY.step(t, Fault(FaultCode.ESTOP, None, 0, 0, 500), 0.5)
    assert t.phase is CY.Phase.SAFE_STOP and t.fault.code == "E73"


def test_a_safety_stop_while_the_centre_lift_closes_the_hole_is_not_e24() -> None:
    t, _ = CY.step(CY.initial(settings()), CY.StartCycle(DICE, {}), 0.0)
    for i in range(4):
        t, _ = CY.step(t, MotionDone(1, "Lift", Side(i), Outcome.COMPLETED, 1600, 0), 1.0)
    t, cmds = CY.step(t, MotionDone(1, "Lift", None, Outcome.COMPLETED, 1000, 0), 1.1)
    assert t.phase is CY.Phase.SHUFFLING and isinstance(cmds[0], StartShuffle)
    t, _ = CY.step(t, MotionDone(2, "Lift", None, Outcome.SAFE_STOP, 300, 0), 1.4)
    assert t.phase is CY.Phase.SHUFFLING and t.fault is None
    t, _ = CY.step(t, Fault(FaultCode.HOST_TIMEOUT, None, 0, 600, 1400), 1.4)
    assert t.phase is CY.Phase.SAFE_STOP and t.fault.code == "E72"


def test_a_centre_stroke_past_its_deadline_is_still_e24() -> None:
    t, _ = CY.step(CY.initial(settings()), CY.StartCycle(DICE, {}), 0.0)
    for i in range(4):
        t, _ = CY.step(t, MotionDone(1, "Lift", Side(i), Outcome.COMPLETED, 1600, 0), 1.0)
    t, _ = CY.step(t, MotionDone(1, "Lift", None, Outcome.DEADLINE, 2500, 0), 2.5)
    assert t.phase is CY.Phase.FAULT and t.fault.code == "E24"
