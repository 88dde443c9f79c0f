"""One code everywhere (issue #16 section 3): every injectable fault, judged by the cycle and by the
self-test, gives the same catalogue code on the same side. Both decide through the judges of
controller.diagnosis with one set of thresholds against the profile's nominal timings."""

from __future__ import annotations

import pytest

import hardware
from controller import cycle as CY
from controller import diagnosis as D
from controller.faults import BY_KIND
from controller.runtime import TableRuntime
from controller.selftest import run_selftest
from hardware.sim.faults import INJECTABLE

#: kinds neither a self-test nor one cycle can show as a part fault, and why
NOT_IN_A_SELF_TEST = {
    "wrong-gear": "needs a full build (E41)",
    "missing-tile": "needs a full build (E42)",
    "lift-slow": "a trend over cycles (E23)",
    "mcu-reset": "the link, not a part", "link-noise": "the link, not a part",
    "link-broken": "the link, not a part",
}
SIDES = "ESWN"
#: every other kind, each on a side of its own (kinds with a side rotate over E, S, W, N), and the
#: bar that stops at 92 % of its travel (E21 in the cycle and E12 in the self-test before)
CASES = [k if not INJECTABLE[k].sides else f"{k}:{SIDES[n % 4]}"
         for n, k in enumerate(k for k in INJECTABLE if k not in NOT_IN_A_SELF_TEST)] + [
    "lift-short:W:reach=0.92", "lift-short:N:reach=0.6", "lift-late:S:factor=1.3"]


def cycle_verdict(spec: str) -> tuple[str, str | None]:
    """(code, side) of the cycle's fault, or of its warning when the cycle completed."""
    b = hardware.open_backend("sim", seed=3, faults=[spec])
    try:
        rt = TableRuntime(b, CY.Settings.from_profile(b.profile, 136), dice=lambda: (3, 4, 2, 5))
        t = rt.run_cycle()
        assert not b.model.running(), "the cycle left a motor running"
        found = t.diagnoses or t.warnings
        assert found, f"{spec}: the cycle saw nothing"
        return found[0].code, found[0].side
    finally:
        b.close()


def selftest_verdicts(spec: str) -> set[tuple[str, str | None]]:
    b = hardware.open_backend("sim", seed=5, faults=[spec])
    try:
        return {(p.code, p.side) for p in run_selftest(b).failed}
    finally:
        b.close()


def test_every_injectable_kind_is_compared_or_says_why_not():
    kinds = {c.split(":")[0] for c in CASES}
    assert kinds | set(NOT_IN_A_SELF_TEST) == set(INJECTABLE)


@pytest.mark.parametrize("spec", CASES)
def test_cycle_and_selftest_give_one_code(spec):
    code, side = cycle_verdict(spec)
    assert code == BY_KIND[spec.split(":")[0]].code
    assert selftest_verdicts(spec) == {(code, side)}


def test_the_thresholds_are_shares_of_the_profiles_nominal():
    # a way down of 92 % of nominal is a bar stopped short; 95 % and more is a full travel
    assert D.missed_top_code(True, True, int(0.92 * 1600), 1.6) == "E21"
    assert D.missed_top_code(True, True, 1600, 1.6) == "E12"
    assert D.missed_top_code(True, True, 1200, 1.2) == "E12"  # a faster table, its own nominal
    assert D.missed_top_code(False, True, 1600, 1.6) == "E71"
    assert D.missed_top_code(True, False, 3000, 1.6) == "E14"
    assert not D.travelled(999, 2.0) and D.travelled(1000, 2.0)
    assert [D.rest_limits_code(*r) for r in ((0, 1), (1, 1), (1, 0), (0, 0))] == [None, "E11", "E15", "E14"]
    assert D.feeder_code(False, True, False) == "E34" and D.feeder_code(False, False, False) == "E31"
    assert D.feeder_code(True, False, False) == "E32" and D.feeder_code(True, False, False, False) is None
    assert D.push_head_code(True, 0, True) == "E35" and D.push_head_code(True, 4, False) == "E34"
