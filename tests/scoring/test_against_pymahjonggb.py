"""mjtable's MCR scoring checked against the reference calculator PyMahjongGB.

20,000 seeded random legal winning situations (seed 2026, see ``hand_generator``) are scored by
``scoring.score_hand(..., rules="mcr")`` and by PyMahjongGB; the fan counts
(``{fan_number_or_None: count}``) and the totals (points, flowers included) must agree. On
mismatch the failure lists the first differing hands (notation, circumstances, both answers)
and a per-fan tally of disagreements, which is the quickest way to find the faulty rule.

PyMahjongGB is a declared dev dependency: if it is missing this module fails, it does not skip.
"""

from __future__ import annotations

import collections
import time

from hand_generator import Situation, generate_cached
from oracle import FAN_POINTS, REFERENCE_NAMES_IN_TABLE_ORDER, reference_result

N_HANDS = 20_000
SEED = 2026
MAX_REPORTED = 20


def _fan_label(number: int | None) -> str:
    if number is None:
        return "明暗杠"
    return f"#{number} {REFERENCE_NAMES_IN_TABLE_ORDER[number - 1]}"


def _fmt(counts: dict[int | None, int]) -> str:
    items = sorted(counts.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))
    return ", ".join(_fan_label(n) + (f" x{c}" if c != 1 else "") for n, c in items)


def _describe(sit: Situation, ours: str, theirs: str, note: str = "") -> str:
    return (
        f"  {sit.to_notation()}   [{sit.flags_text()}] family={sit.family}\n"
        f"      ours: {ours}\n"
        f"      ref : {theirs}" + (f"\n      note: {note}" if note else "")
    )


def _score_ours(score_hand, sit: Situation) -> tuple[dict[int | None, int], int, str]:
    """``(fan_counts without zero entries, total, problem)``; problem is '' when the result is
    self-consistent (every fan's points as in the rules table, total = sum of points x count)."""
    r = score_hand(sit.to_notation(), rules="mcr", **sit.score_kwargs())
    counts = {n: c for n, c in r.fan_counts().items() if c}
    problems = []
    for f in r.fans:
        if f.number not in FAN_POINTS:
            problems.append(f"unknown fan number {f.number!r}")
        elif f.points != FAN_POINTS[f.number]:
            problems.append(f"{_fan_label(f.number)} worth {f.points}, table says {FAN_POINTS[f.number]}")
    listed = sum(f.points * f.count for f in r.fans)
    if listed != r.total:
        problems.append(f"total {r.total} != sum of listed fans {listed}")
    return counts, r.total, "; ".join(problems)


def test_mcr_scores_match_pymahjonggb() -> None:
    # Imported here so that a missing or broken engine fails this test (not the whole session).
    from scoring import ScoringError, score_hand

    situations, stats = generate_cached(N_HANDS, SEED)
    assert len(situations) == N_HANDS and stats.reference_rejections == 0

    expected = [reference_result(s) for s in situations]

    reports: list[str] = []
    n_bad = 0
    n_errors = 0
    ours_only: collections.Counter[int | None] = collections.Counter()
    ref_only: collections.Counter[int | None] = collections.Counter()
    error_codes: collections.Counter[str] = collections.Counter()
    started = time.perf_counter()
    for sit, (ref_counts, ref_total) in zip(situations, expected):
        try:
            counts, total, problem = _score_ours(score_hand, sit)
        except ScoringError as exc:
            n_bad += 1
            n_errors += 1
            code = str(getattr(exc, "code", type(exc).__name__))
            error_codes[code] += 1
            if len(reports) < MAX_REPORTED:
                reports.append(_describe(sit, f"ScoringError[{code}]: {exc}", f"{_fmt(ref_counts)} = {ref_total}"))
            continue
        if counts == ref_counts and total == ref_total and not problem:
            continue
        n_bad += 1
        for n in set(counts) | set(ref_counts):
            diff = counts.get(n, 0) - ref_counts.get(n, 0)
            if diff > 0:
                ours_only[n] += 1
            elif diff < 0:
                ref_only[n] += 1
        if len(reports) < MAX_REPORTED:
            reports.append(
                _describe(sit, f"{_fmt(counts)} = {total}", f"{_fmt(ref_counts)} = {ref_total}", problem)
            )
    elapsed = time.perf_counter() - started

    if n_bad:
        tally = []
        for n in sorted(set(ours_only) | set(ref_only), key=lambda k: (k is None, k or 0)):
            tally.append(f"  {_fan_label(n)}: ours only/more in {ours_only[n]}, ref only/more in {ref_only[n]}")
        raise AssertionError(
            f"{n_bad} of {N_HANDS} hands differ from PyMahjongGB "
            f"({n_errors} raised ScoringError {dict(error_codes)}); scoring took {elapsed:.1f} s.\n"
            f"Per-fan disagreements (hands):\n" + "\n".join(tally) + "\n"
            f"First {len(reports)} differing hands:\n" + "\n".join(reports)
        )
