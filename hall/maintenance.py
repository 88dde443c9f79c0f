"""The maintenance list: lifts whose travel time is drifting, ranked by how soon they will fail.

Each table reports with every cycle the lift-up travel time of each side (s), the nominal travel
and the deadline past which the table stops with a fault (``cycle`` events, ``docs/mqtt.md``). A
lift wears (a failing motor capacitor, a dry guide, a loose belt): its travel grows cycle after
cycle until it misses the deadline (E21/E22/E23 in the table's diagnosis).

For one lift: a least-squares line through its last ``WINDOW`` travel times against the cycle
number. It is *drifting* when the line rises by more than ``T_MIN`` standard errors of its slope
(the rise is not the scatter of the measurements), and its outlook is the number of cycles until
the line reaches the deadline: ``(deadline - fitted now) / slope``. A lift whose fitted travel is
already past the deadline has 0 cycles left. The list is sorted by cycles left, fewest first.
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Iterable

#: the last cycles of each lift that the line is fitted to
WINDOW = 30
#: fewest cycles for a line
MIN_CYCLES = 5
#: a slope this many standard errors above 0 is a drift, not noise (about a 1 % one-sided chance by noise
#: alone for 10 or more points, Student's t)
T_MIN = 3.0


def outlook(times: list[float], deadline_s: float | None) -> dict[str, Any] | None:
    """The trend of one lift from its travel times (s, oldest first, one per cycle).

    Returns:
        None with fewer than ``MIN_CYCLES`` times; else ``{"cycles", "now_s", "slope_s_per_cycle",
        "t_stat", "drifting", "cycles_left"}``: ``now_s`` the line's value at the last cycle,
        ``cycles_left`` None when not drifting or without a deadline.
    """
    ys = [float(y) for y in times[-WINDOW:]]
    n = len(ys)
    if n < MIN_CYCLES:
        return None
    xs = list(range(n))
    fit = statistics.linear_regression(xs, ys)
    slope, icpt = fit.slope, fit.intercept
    resid = [y - (icpt + slope * x) for x, y in zip(xs, ys)]
    sxx = sum((x - (n - 1) / 2) ** 2 for x in xs)
    s2 = sum(r * r for r in resid) / (n - 2)
    se = math.sqrt(s2 / sxx) if s2 > 0 else 0.0
    t = math.inf if (se == 0 and slope > 0) else (slope / se if se > 0 else 0.0)
    now = icpt + slope * (n - 1)
    drifting = slope > 0 and t > T_MIN
    left = None
    if drifting and deadline_s is not None:
        left = max(0.0, (deadline_s - now) / slope)
    return {"cycles": n, "now_s": round(now, 3), "slope_s_per_cycle": round(slope, 5),
            "t_stat": None if math.isinf(t) else round(t, 2), "drifting": drifting,
            "cycles_left": None if left is None else round(left, 1)}


def ranked(lifts: Iterable[tuple[str, str, list[float], float | None, float | None]]) -> list[dict[str, Any]]:
    """The maintenance list from ``(table, side, times, nominal_s, deadline_s)`` per lift: the
    drifting ones, fewest cycles left first (a drifting lift without a known deadline last)."""
    out = []
    for table, side, times, nominal, deadline in lifts:
        o = outlook(times, deadline)
        if o is None or not o["drifting"]:
            continue
        out.append({"table": table, "side": side, "nominal_s": nominal, "deadline_s": deadline, **o})
    out.sort(key=lambda r: (r["cycles_left"] is None, r["cycles_left"] or 0.0, r["table"], r["side"]))
    return out
