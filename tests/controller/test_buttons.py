"""The table's buttons: the panel logic, and the runtime acting on presses on every backend."""

from __future__ import annotations

import pytest

import hardware
from controller import cycle as CY
from controller.buttons import ButtonPanel
from controller.runtime import TableRuntime
from firmware_bridge import catalogue as C
from hardware.vocabulary import Sensor, SensorChanged

A, B, DICE_B = Sensor.LIFT_BUTTON_A, Sensor.LIFT_BUTTON_B, Sensor.DICE_BUTTON


def ev(sensor, value):
    return SensorChanged(sensor, None, value, 0)


def test_one_lift_button_starts_a_cycle_on_release_and_both_mean_refill():
    p = ButtonPanel()
    assert p.event(ev(A, 1)) is None
    assert p.event(ev(A, 0)) == "cycle"
    # both together: refill at once, and no cycle when they are let go (in any order)
    assert p.event(ev(B, 1)) is None
    assert p.event(ev(A, 1)) == "refill"
    assert p.event(ev(A, 1)) is None        # a repeated reading is not a new press
    assert p.event(ev(B, 0)) is None
    assert p.event(ev(A, 0)) is None
    assert p.event(ev(B, 1)) is None and p.event(ev(B, 0)) == "cycle"
    assert p.event(ev(DICE_B, 1)) == "dice" and p.event(ev(DICE_B, 0)) is None
    assert p.event(ev(A, 0)) is None        # a release without a press seen
    assert p.event(ev(Sensor.LID, 1)) is None


def press(rt, sensor, hold_s=0.2):
    rt.backend.model.press(int(sensor), True)
    rt.pump(hold_s)
    rt.backend.model.press(int(sensor), False)


def pump_until(rt, phases, limit_s=120.0):
    t0 = rt.backend.now()
    while rt.table.phase not in phases:
        rt.pump()
        assert rt.backend.now() - t0 < limit_s, rt.table.phase


@pytest.mark.parametrize("kind", ["sim", "mcu"])
def test_the_buttons_run_the_table(kind):
    b = hardware.open_backend(kind, seed=4, speed=6)
    notices = []
    rt = TableRuntime(b, CY.Settings.from_profile(b.profile, 136), dice=lambda: (3, 4, 2, 5),
                      notice=notices.append)
    try:
        rt.pump()
        press(rt, DICE_B)  # idle: nothing to throw for
        rt.pump(0.5)
        assert rt.table.phase is CY.Phase.IDLE and notices and "dice button" in notices[-1]
        press(rt, A)       # one lift button: the next cycle
        pump_until(rt, {CY.Phase.BUILDING})
        while sum(rt.table.obs.stacks) < 12:
            rt.pump()
        b.model.press(C.SENSOR_LIFT_BUTTON_A, True)   # both lift buttons: refill pause (补牌)
        b.model.press(C.SENSOR_LIFT_BUTTON_B, True)
        pump_until(rt, {CY.Phase.REFILL_PAUSE}, limit_s=2.0)
        b.model.press(C.SENSOR_LIFT_BUTTON_A, False)
        b.model.press(C.SENSOR_LIFT_BUTTON_B, False)
        for _ in range(4):
            rt.pump()
        assert rt.table.phase is CY.Phase.REFILL_PAUSE and not b.model.running()
        b.model.press(C.SENSOR_LIFT_BUTTON_B, True)   # both again: go on building
        b.model.press(C.SENSOR_LIFT_BUTTON_A, True)
        pump_until(rt, {CY.Phase.BUILDING}, limit_s=2.0)
        b.model.press(C.SENSOR_LIFT_BUTTON_A, False)
        b.model.press(C.SENSOR_LIFT_BUTTON_B, False)
        pump_until(rt, {CY.Phase.WALLS_UP})
        assert rt.table.cycles == 1 and rt.table.obs.stacks == (17,) * 4
        first = rt.table.wall
        rt.dice = lambda: (6, 6, 1, 1)
        press(rt, DICE_B)  # walls up: throw again
        pump_until(rt, {CY.Phase.DICE})
        pump_until(rt, {CY.Phase.WALLS_UP})
        assert rt.table.cycles == 1 and rt.table.dice == (6, 6, 1, 1) and rt.table.wall != first
    finally:
        b.close()
