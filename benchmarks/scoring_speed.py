"""Speed of mjtable's MCR scoring, waits and shanten against PyMahjongGB on the same hands.

Usage: ``python benchmarks/scoring_speed.py [--hands N] [--seed S] [--runs R] [--warm W] [--analysis N]``

Waits and shanten (issue 19): ``--analysis`` 13-tile hands (default 2000) are analysed one call
at a time in one pass, each call timed, and the median and 90th percentile latencies printed:
``waits`` (``scoring.analysis.find_waits``, parsing and scoring each wait on a discard and
self-drawn) on ready hands (the generated winning hands without their winning tile), ``shanten``
(``scoring.analysis.analyse_shanten``: every shape, overall, useful tiles) on the hands in play of
``tests/scoring/partial_hands.py``; next to them, on the same hands, PyMahjongGB's
``MahjongShanten`` (overall shanten, no useful tiles) and its five shape functions together
(``RegularShanten`` … ``KnittedStraightShanten``, with useful tiles), as mjtable's shanten gives.

The hands come from ``tests/scoring/hand_generator.py`` (seeded, self-checked against the
reference). Inputs are generated and converted (notation strings + keyword dicts for mjtable,
keyword dicts for PyMahjongGB) before timing, so the timed loops contain only the scoring calls.
The process is pinned to one core where ``os.sched_setaffinity`` exists. Each engine is timed
``--runs`` times (default 3) in CPU time of the process (``time.process_time``: on a shared,
loaded machine wall time also counts the other processes' turns), the two engines alternating run
by run, and the best run counts. Rates are hands per second of CPU time; ``ratio`` is mjtable's
rate divided by PyMahjongGB's; ``ratio_first_run`` the same for the first run, when mjtable's
caches of tile patterns (each suit's decompositions, the fans of each combination of sets) have
not seen these hands: they have seen only ``--warm`` other hands (default 20,000, another seed), as
on a table that has scored that many, so this is the figure for hands never scored before; the
best run (``ratio``) scores the same hands again, when every pattern they hold is cached.
The last line printed is a JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "scoring"))

from MahjongGB import (HonorsAndKnittedTilesShanten, KnittedStraightShanten, MahjongFanCalculator,  # noqa: E402
                       MahjongShanten, RegularShanten, SevenPairsShanten, ThirteenOrphansShanten)

from hand_generator import REF_CODE_OF_NAME, GeneratorStats, generate  # noqa: E402
from partial_hands import play_hands  # noqa: E402
from scoring import score_hand  # noqa: E402
from scoring.analysis import analyse_shanten, find_waits  # noqa: E402
from scoring.hand import MeldKind  # noqa: E402
from scoring.tiles import tile_name  # noqa: E402

_PACK = {MeldKind.CHOW: "CHI", MeldKind.PUNG: "PENG", MeldKind.KONG: "GANG"}
_SHAPE_FUNCTIONS = (RegularShanten, SevenPairsShanten, ThirteenOrphansShanten, HonorsAndKnittedTilesShanten,
                    KnittedStraightShanten)


def _latencies(fn, inputs) -> tuple[float, float]:
    """Call ``fn(x)`` for each input once, timing each call; (median, 90th percentile) in ms."""
    times = []
    for x in inputs:
        t0 = time.perf_counter_ns()
        fn(x)
        times.append(time.perf_counter_ns() - t0)
    times.sort()
    return times[len(times) // 2] / 1e6, times[len(times) * 9 // 10] / 1e6


def _all_shapes_ref(kw) -> None:
    for f in _SHAPE_FUNCTIONS:
        try:
            f(kw["hand"])
        except TypeError:  # a shape the melds rule out
            pass


def analysis_figures(n: int, seed: int) -> dict[str, float]:
    """Median and p90 latencies (ms) of waits and shanten, and of PyMahjongGB's shanten functions."""
    ready = [h for h in generate(n, seed, self_check=False)]
    waits_inputs = [h.to_notation()[:-len(h.winning_tile)] if h.winning_tile in "ESWNCFP" else
                    h.to_notation()[:-2] for h in ready]
    hands = [h for h in play_hands(4 * n, seed) if h.size == 13][:n]
    shanten_inputs = [h.notation() for h in hands]
    ref_inputs = []
    for h in hands:
        packs = tuple((_PACK[m.kind], REF_CODE_OF_NAME[tile_name(m.tile + 1 if m.kind is MeldKind.CHOW else m.tile)],
                       m.offer or 0) for m in h.melds)
        ref_inputs.append({"pack": packs, "hand": tuple(REF_CODE_OF_NAME[tile_name(t)] for t in h.standing)})
    out: dict[str, float] = {}
    out["waits_median_ms"], out["waits_p90_ms"] = _latencies(find_waits, waits_inputs)
    out["shanten_median_ms"], out["shanten_p90_ms"] = _latencies(analyse_shanten, shanten_inputs)
    out["ref_mahjong_shanten_median_ms"], _ = _latencies(lambda kw: MahjongShanten(**kw), ref_inputs)
    out["ref_five_shapes_median_ms"], _ = _latencies(_all_shapes_ref, ref_inputs)
    return out


def _cpu_seconds(fn) -> float:
    """CPU time of the process (seconds) spent in one call of ``fn``."""
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=20_000, help="number of hands (default 20000)")
    ap.add_argument("--seed", type=int, default=2026, help="generator seed (default 2026)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per engine, best counts (default 3)")
    ap.add_argument("--warm", type=int, default=20_000,
                    help="other hands (seed + 1) scored before the timed runs, to warm mjtable's pattern caches "
                         "as a table in use has them (default 20000; 0: cold caches)")
    ap.add_argument("--analysis", type=int, default=2000, help="13-tile hands for waits and shanten (default 2000; 0: skip)")
    args = ap.parse_args(argv)

    pinned = False
    if hasattr(os, "sched_setaffinity"):
        try:
            os.sched_setaffinity(0, {0})
            pinned = True
        except OSError:
            pass

    t0 = time.perf_counter()
    stats = GeneratorStats()
    hands = generate(args.hands, args.seed, stats)
    gen_seconds = time.perf_counter() - t0
    ours_inputs = [(h.to_notation(), h.score_kwargs()) for h in hands]
    ref_inputs = [h.to_pymahjonggb_kwargs() for h in hands]

    def run_ours() -> None:
        for notation, kw in ours_inputs:
            score_hand(notation, rules="mcr", **kw)

    def run_ref() -> None:
        for kw in ref_inputs:
            MahjongFanCalculator(**kw)

    if args.warm > 0:  # a table in use: its caches have seen other hands, not these
        for h in generate(args.warm, args.seed + 1, self_check=False):
            score_hand(h.to_notation(), rules="mcr", **h.score_kwargs())

    ours_times: list[float] = []
    ref_times: list[float] = []
    for _ in range(args.runs):  # alternating, so that both see the same load
        ours_times.append(_cpu_seconds(run_ours))
        ref_times.append(_cpu_seconds(run_ref))
    ours_rate, ref_rate = len(hands) / min(ours_times), len(hands) / min(ref_times)
    ratio = ours_rate / ref_rate
    first_ratio = ref_times[0] / ours_times[0]  # the first run: these hands not seen before (caches warmed by --warm)

    print(f"hands: {len(hands)} (seed {args.seed}), generated in {gen_seconds:.2f} s, "
          f"{stats.construction_retries} construction retries, {stats.reference_rejections} rejected")
    print(f"pinned to one core: {pinned}; best of {args.runs} runs in CPU time; Python {platform.python_version()}")
    print(f"mjtable     : {ours_rate:12,.0f} hands/s  (runs: {', '.join(f'{t:.3f}' for t in ours_times)} s CPU)")
    print(f"PyMahjongGB : {ref_rate:12,.0f} hands/s  (runs: {', '.join(f'{t:.3f}' for t in ref_times)} s CPU)")
    print(f"ratio mjtable/PyMahjongGB: {ratio:.4f}  (first run, hands not scored before, caches warmed by "
          f"{args.warm} other hands: {first_ratio:.4f})")
    analysis: dict[str, float] = {}
    if args.analysis:
        analysis = analysis_figures(args.analysis, args.seed)
        print(f"waits   (13 tiles, ready, each wait scored twice): median {analysis['waits_median_ms']:.3f} ms, "
              f"p90 {analysis['waits_p90_ms']:.3f} ms  (aim: median under 5 ms)")
        print(f"shanten (13 tiles, 5 shapes + useful tiles)      : median {analysis['shanten_median_ms']:.3f} ms, "
              f"p90 {analysis['shanten_p90_ms']:.3f} ms  (aim: median under 1 ms)")
        print(f"PyMahjongGB MahjongShanten (overall, no useful)   : median "
              f"{analysis['ref_mahjong_shanten_median_ms']:.3f} ms")
        print(f"PyMahjongGB 5 shape functions with useful tiles   : median "
              f"{analysis['ref_five_shapes_median_ms']:.3f} ms")
    figures: dict[str, object] = {
        "hands": len(hands),
        "seed": args.seed,
        "runs": args.runs,
        "warm": args.warm,
        "pinned_one_core": pinned,
        "generation_seconds": round(gen_seconds, 3),
        "mjtable_hands_per_s": round(ours_rate, 1),
        "pymahjonggb_hands_per_s": round(ref_rate, 1),
        "ratio": round(ratio, 5),
        "ratio_first_run": round(first_ratio, 5),
        **{k: round(v, 4) for k, v in analysis.items()},
    }
    print(json.dumps(figures))
    return figures


if __name__ == "__main__":
    main()
