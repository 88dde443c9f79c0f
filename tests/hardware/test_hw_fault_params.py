"""Fault parameters (``KIND[:SIDE][:NAME=VALUE,...]``), faults injected at any moment and repaired
again (issue #16 section 2)."""

from __future__ import annotations

import pytest

import hardware
from controller import cycle as CY
from controller.runtime import TableRuntime
from firmware_bridge import catalogue as C
from hardware import FaultSpecError, ProfileError, load_profile, parse_fault
from hardware.profile import PROFILE_DIR
from hardware.sim.faults import INJECTABLE, kinds_json
from hardware.sim.model import TableModel

W = 2  # side index of West
DICE = (3, 4, 2, 5)


def test_parameters_parse_with_their_defaults_and_print_back() -> None:
    spec = parse_fault("lift-short:W:reach=0.92")
    assert spec.param("reach") == 0.92 and str(spec) == "lift-short:W:reach=0.92"
    assert parse_fault("lift-short:W").param("reach") == 0.85  # the old profile value
    assert parse_fault("lift-late:E").param("factor") == 1.35
    assert parse_fault("lift-slow:N:wear=0.1").param("wear") == 0.1
    assert parse_fault("lift-late:e:FACTOR=1.2").param("factor") == 1.2
    assert parse_fault("tile-jam:after=2.5").param("after") == 2.5 and parse_fault("tile-jam").param("after") == 1.0
    assert parse_fault("mcu-reset:at=3").onset_s == 3.0
    assert parse_fault(str(parse_fault("lift-slow:S:wear=0.05"))) == parse_fault("lift-slow:S:wear=0.05")


@pytest.mark.parametrize("text, message", [
    ("lift-short:W:reach=1.2", "lift-short: reach must be 0.05..0.99, got 1.2"),
    ("lift-short:W:reach=0", "reach must be 0.05..0.99"),
    ("lift-late:E:factor=0.5", "factor must be 1.01..10, got 0.5"),
    ("tile-jam:after=-1", "after must be 0..600 s, got -1"),
    ("lift-slow:N:speed=2", "fault lift-slow has no parameter 'speed'; its parameters: wear"),
    ("disc-stall:rate=1", "fault disc-stall has no parameter 'rate'; its parameters: none"),
    ("lift-short:W:reach=far", "reach must be a number, got 'far'"),
    ("lift-short:W:reach=inf", "reach must be a finite number"),
    ("lift-short:W:reach", "is not NAME=VALUE"),
    ("lift-short:W:reach=0.9,reach=0.8", "reach given twice"),
    ("lift-short:reach=0.9", "needs a side"),
])
def test_a_bad_parameter_names_what_is_allowed(text: str, message: str) -> None:
    with pytest.raises(FaultSpecError, match=message.replace(".", r"\.").replace("(", r"\(").replace(")", r"\)")):
        parse_fault(text)


def test_every_kind_lists_its_parameters() -> None:
    kinds = {k["kind"]: k for k in kinds_json()}
    assert set(kinds) == set(INJECTABLE)
    reach = kinds["lift-short"]["params"][0]
    assert reach == {"name": "reach", "default": 0.85, "min": 0.05, "max": 0.99, "unit": "",
                     "meaning": reach["meaning"]} and reach["meaning"]
    assert [p["name"] for p in kinds["lift-late"]["params"]] == ["factor"]
    assert [p["name"] for p in kinds["lift-slow"]["params"]] == ["wear"]
    assert kinds["disc-stall"]["params"] == [] and kinds["lift-short"]["sides"] == ["E", "S", "W", "N"]


def test_a_profile_no_longer_carries_fault_severities(tmp_path) -> None:
    text = (PROFILE_DIR / "default.toml").read_text()
    assert "short_lift_reach" not in text and not hasattr(load_profile("default").timing, "short_lift_reach")
    bad = tmp_path / "old.toml"
    bad.write_text(text.replace("[timing]\n", "[timing]\nshort_lift_reach = 0.9\n"))
    with pytest.raises(ProfileError, match=r"timing.short_lift_reach is no longer a profile key .*"
                                           r"--fault lift-short:SIDE:reach=0.9"):
        load_profile(str(bad))


# --- the machine model -------------------------------------------------------------------------

def model(*faults: str) -> TableModel:
    return TableModel(load_profile("default"), seed=3, faults=faults)


def lift(m: TableModel, up: bool, run_s: float = 3.0) -> None:
    m.set_motor(C.MOTOR_LIFT, W, True, 1 if up else 0)
    m.run_to(m.now + run_s)
    m.set_motor(C.MOTOR_LIFT, W, False)


def top(m: TableModel) -> int:
    return m.reading[(C.SENSOR_LIFT_TOP, W)]


def bottom(m: TableModel) -> int:
    return m.reading[(C.SENSOR_LIFT_BOTTOM, W)]


@pytest.mark.parametrize("reach", [0.5, 0.85, 0.92])
def test_the_reach_parameter_sets_where_the_bar_stops(reach: float) -> None:
    m = model(f"lift-short:W:reach={reach}")
    lift(m, True)
    assert m.lift_pos[W] == pytest.approx(reach) and top(m) == 0 and bottom(m) == 0


def test_the_factor_parameter_sets_the_late_travel() -> None:
    m = model("lift-late:W:factor=1.2")
    lift(m, True)
    assert m.lift_times == [(W, True, pytest.approx(1.2 * m.t.lift_up_s))]


def test_lift_short_injected_with_the_lift_up_comes_down_then_stops_short() -> None:
    m = model()
    lift(m, True)
    assert top(m) == 1 and bottom(m) == 0 and m.lift_pos[W] == 1.0
    m.inject("lift-short:W:reach=0.8")
    assert top(m) == 1 and m.lift_pos[W] == 1.0  # it is up: the fault does not move it
    lift(m, False)
    assert top(m) == 0 and bottom(m) == 1  # down normally: the top limit let go
    assert m.lift_times[-1] == (W, False, pytest.approx(m.t.lift_down_s))
    lift(m, True)
    assert top(m) == 0 and m.lift_pos[W] == pytest.approx(0.8)  # the next rise stops short


def test_a_fault_injected_mid_stroke_acts_from_then_on() -> None:
    m = model()
    m.set_motor(C.MOTOR_LIFT, W, True, 1)
    m.run_to(0.5)  # a quarter of the way up
    m.inject("lift-short:W:reach=0.6")
    m.run_to(3.0)
    m.set_motor(C.MOTOR_LIFT, W, False)
    assert m.lift_pos[W] == pytest.approx(0.6) and top(m) == 0
    m = model()
    m.set_motor(C.MOTOR_LIFT, W, True, 1)
    m.run_to(1.5)  # past 0.6 already: that stroke reaches the top
    m.inject("lift-short:W:reach=0.6")
    m.run_to(3.0)
    m.set_motor(C.MOTOR_LIFT, W, False)
    assert top(m) == 1


def test_a_repaired_fault_stops_acting() -> None:
    m = model("lift-short:W")
    lift(m, True)
    assert top(m) == 0
    assert [str(f) for f in m.repair("lift-short:W:reach=0.3")] == ["lift-short:W"]  # parameters aside
    assert m.faults == [] and m.repair("lift-short:W") == []
    lift(m, True)  # the bar goes on from where it stopped, to the top
    assert top(m) == 1 and m.lift_pos[W] == 1.0
    m = model("lift-top-stuck-on:W")
    assert top(m) == 1
    m.repair("lift-top-stuck-on:W")
    assert top(m) == 0  # a sensor reads true again at once


def test_injecting_again_replaces_the_parameters() -> None:
    m = model("lift-short:W:reach=0.5")
    m.inject("lift-short:W:reach=0.9")
    assert [str(f) for f in m.faults] == ["lift-short:W:reach=0.9"]
    lift(m, True)
    assert m.lift_pos[W] == pytest.approx(0.9)


def test_lift_slow_wears_from_its_injection() -> None:
    m = model()
    for _ in range(3):  # three healthy strokes
        lift(m, True)
        lift(m, False)
    m.inject("lift-slow:W:wear=0.1")
    for _ in range(3):
        lift(m, True)
        lift(m, False)
    ups = [t for side, up, t in m.lift_times if up]
    T = m.t.lift_up_s
    assert ups == [pytest.approx(x) for x in (T, T, T, T, 1.1 * T, 1.2 * T)]


# --- the controller: the diagnosis of a fault injected at any moment, and repair --------------

def open_rt(faults=()):
    b = hardware.open_backend("sim", seed=21, faults=list(faults))
    return b, TableRuntime(b, CY.Settings.from_profile(b.profile, 136), dice=lambda: DICE)


def test_lift_short_injected_with_the_walls_up_is_diagnosed_short_on_the_next_cycle() -> None:
    """Found by a new user: inject lift-short:W with the walls up, start a cycle: E11 "top limit
    active while down" was the wrong diagnosis. The bar comes down, then stops short: E21."""
    b, rt = open_rt()
    try:
        assert rt.run_cycle().phase is CY.Phase.WALLS_UP
        b.model.inject("lift-short:W")
        t = rt.run_cycle()
        assert t.phase is CY.Phase.FAULT and (t.fault.code, t.fault.side) == ("E21", "W"), t.fault
        assert not b.model.running()
    finally:
        b.close()


def test_a_repaired_fault_lets_the_next_cycle_run_clean() -> None:
    b, rt = open_rt(["feeder-wire-loose:E"])
    try:
        t = rt.run_cycle()
        assert t.phase is CY.Phase.FAULT and t.fault.code == "E31"
        assert [str(f) for f in b.model.repair("feeder-wire-loose:E")] == ["feeder-wire-loose:E"]
        rt.clear_fault()
        t = rt.run_cycle()
        assert t.phase is CY.Phase.WALLS_UP and t.fault is None, t.fault
        assert b.model.walls == [17, 17, 17, 17]
    finally:
        b.close()


def test_a_profile_whose_pulses_are_too_slow_for_the_stall_window_is_refused(tmp_path) -> None:
    """The device stops a motor whose motion sensor is quiet for its stall window (1.2 s for a
    feeder): a profile whose feeder pulses come slower would have its turning feeders stopped."""
    text = (PROFILE_DIR / "default.toml").read_text()
    slow = tmp_path / "slow.toml"
    slow.write_text(text.replace("feeder_pulse_s = 0.25", "feeder_pulse_s = 0.4"))
    with pytest.raises(ProfileError, match=r"timing.feeder_pulse_s must be at most 0.3 s .*stall window.*got 0.4"):
        load_profile(str(slow))


def test_each_part_owns_its_faults() -> None:
    m = model("lift-short:W:reach=0.7", "feeder-jammed:E", "disc-stall", "push-home-stuck-off:N")
    assert m.lifts[W].faults == [parse_fault("lift-short:W:reach=0.7")] and m.lifts[0].faults == []
    assert [f.kind for f in m.feeders[0].faults] == ["feeder-jammed"]
    assert [f.kind for f in m.disc.faults] == ["disc-stall"] and m.heads[3].has("push-home-stuck-off")
    assert [str(f) for f in m.faults] == ["lift-short:W:reach=0.7", "feeder-jammed:E", "disc-stall",
                                         "push-home-stuck-off:N"]
    m.repair("feeder-jammed:E")
    assert m.feeders[0].faults == [] and len(m.faults) == 3
    assert m.fault("lift-short", W).param("reach") == 0.7 and m.fault("lift-short", 0) is None
