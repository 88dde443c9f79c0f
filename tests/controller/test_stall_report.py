"""A motor that runs without motion is stopped by the device within its stall window and diagnosed
by the controller at once (issue #16 section 3): a feeder whose wire is loose or whose push head is
stuck out, the disc and the dice; the other feeders are stopped with it, not left to finish their
build first. Times are machine time on the simulator (deterministic)."""

from __future__ import annotations

import pytest

import hardware
from controller import cycle as CY
from controller.runtime import TableRuntime


def run(fault: str) -> tuple[CY.Table, dict[str, float], float, object]:
    """One cycle with ``fault``: the final state, the machine time each phase was entered, the time the
    cycle ended."""
    b = hardware.open_backend("sim", seed=1, faults=[fault])
    entered: dict[str, float] = {}
    rt = TableRuntime(b, CY.Settings.from_profile(b.profile, 136), dice=lambda: (3, 4, 2, 5),
                      progress=lambda t: entered.setdefault(t.phase.value, b.now()))
    try:
        t = rt.run_cycle()
        assert not b.model.running(), "a motor was left running"
        return t, entered, b.now(), b.profile
    finally:
        b.close()


@pytest.mark.parametrize("fault, code", [("feeder-wire-loose:W", "E31"), ("push-head-jammed:S", "E34")])
def test_a_feeder_without_motion_is_diagnosed_within_about_a_second(fault, code):
    t, entered, end, profile = run(fault)
    assert t.fault.code == code and t.fault.side == fault[-1]
    assert end - entered["building"] <= 1.5  # not its 29 s feed deadline, nor the other feeders' build
    assert profile.feed_deadline_ms(17) / 1000 > 20
    assert t.fault.evidence["stacks"] == 0 and "1.2 s" in t.fault.observed_en


def test_a_jammed_wheel_is_diagnosed_at_its_no_tile_stall():
    t, entered, end, _ = run("feeder-jammed:E")
    assert (t.fault.code, t.fault.side) == ("E32", "E") and end - entered["building"] <= 4.5


def test_a_stalled_disc_is_diagnosed_before_the_shuffle_time_is_over():
    t, entered, end, profile = run("disc-stall")
    assert t.fault.code == "E51" and end - entered["shuffling"] <= 1.5 < profile.timing.shuffle_s


def test_a_stuck_dice_cup_is_warned_as_soon_as_the_device_stops_it():
    t, entered, end, profile = run("dice-stuck")
    assert t.fault is None and [w.code for w in t.warnings] == ["E52"]
    assert end - entered["dice"] <= 1.5
