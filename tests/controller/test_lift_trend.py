"""The lift trend (issue #16 section 3): a lift that rises 20 % slower than its profile's nominal
travel on every cycle, still inside its deadline and under the 'late' limit, gets a warning from the
trend (E23) before it becomes a fault; a clean table gets none."""

from __future__ import annotations

import dataclasses

import pytest

import hardware
from controller import cycle as CY
from controller import diagnosis as D
from controller.runtime import TableRuntime


def fast_profile():
    """A table with faster lifts than the default (1.5 s up, 1.2 s down instead of 2.0 / 1.6)."""
    p = hardware.load_profile("default")
    return dataclasses.replace(p, timing=dataclasses.replace(p.timing, lift_up_s=1.5, lift_down_s=1.2))


def six_cycles(faults=()) -> list[CY.Table]:
    b = hardware.open_backend("sim", profile=fast_profile(), seed=4, faults=list(faults))
    try:
        rt = TableRuntime(b, CY.Settings.from_profile(b.profile, 136), dice=lambda: (3, 4, 2, 5))
        out = []
        for _ in range(6):
            out.append(rt.run_cycle())
            assert not b.model.running()
        return out
    finally:
        b.close()


def test_a_lift_20_percent_slow_on_every_cycle_is_warned_not_faulted():
    tables = six_cycles(["lift-late:N:factor=1.2"])
    assert all(t.phase is CY.Phase.WALLS_UP and t.fault is None for t in tables)
    warned = [[(w.code, w.side) for w in t.warnings] for t in tables]
    # one slow rise is not a trend: the first cycles say nothing; from the third on, N is slowing
    assert warned[:D.SLOW_CYCLES - 1] == [[]] * (D.SLOW_CYCLES - 1)
    assert all(w == [("E23", "N")] for w in warned[D.SLOW_CYCLES - 1:])
    w = tables[-1].warnings[0]
    assert w.evidence["slower_pct"] == pytest.approx(20, abs=3) and "1.50 s" in w.observed_en
    assert "慢" in w.observed_zh


def test_a_clean_table_has_no_trend_warning():
    tables = six_cycles()
    assert all(t.phase is CY.Phase.WALLS_UP and t.fault is None and t.warnings == () for t in tables)


def test_the_trend_judge():
    assert D.slow_trend((1.8, 1.8, 1.8), 1.5) and not D.slow_trend((1.8, 1.8), 1.5)
    assert not D.slow_trend((1.8, 1.6, 1.8), 1.5)  # one normal rise among them: not a trend
    assert not D.slow_trend((1.55, 1.52, 1.51), 1.5)
