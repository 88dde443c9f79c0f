"""Speed of mjtable's MCR scoring against PyMahjongGB on the same generated hands.

Usage: ``python benchmarks/scoring_speed.py [--hands N] [--seed S] [--runs R]``

The hands come from ``tests/scoring/hand_generator.py`` (seeded, self-checked against the
reference). Inputs are generated and converted (notation strings + keyword dicts for mjtable,
keyword dicts for PyMahjongGB) before timing, so the timed loops contain only the scoring calls.
The process is pinned to one core where ``os.sched_setaffinity`` exists. Each engine is timed
``--runs`` times (default 3) and the best run counts. Rates are hands per second; ``ratio`` is
mjtable's rate divided by PyMahjongGB's. The last line printed is a JSON object with the figures.
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

from MahjongGB import MahjongFanCalculator  # noqa: E402

from hand_generator import GeneratorStats, generate  # noqa: E402
from scoring import score_hand  # noqa: E402


def _best_rate(fn, n: int, runs: int) -> tuple[float, list[float]]:
    """Run ``fn`` ``runs`` times; return (best hands/s, all run times in seconds)."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return n / min(times), times


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=20_000, help="number of hands (default 20000)")
    ap.add_argument("--seed", type=int, default=2026, help="generator seed (default 2026)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per engine, best counts (default 3)")
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

    ours_rate, ours_times = _best_rate(run_ours, len(hands), args.runs)
    ref_rate, ref_times = _best_rate(run_ref, len(hands), args.runs)
    ratio = ours_rate / ref_rate

    print(f"hands: {len(hands)} (seed {args.seed}), generated in {gen_seconds:.2f} s, "
          f"{stats.construction_retries} construction retries, {stats.reference_rejections} rejected")
    print(f"pinned to one core: {pinned}; best of {args.runs} runs; Python {platform.python_version()}")
    print(f"mjtable     : {ours_rate:12,.0f} hands/s  (runs: {', '.join(f'{t:.3f}' for t in ours_times)} s)")
    print(f"PyMahjongGB : {ref_rate:12,.0f} hands/s  (runs: {', '.join(f'{t:.3f}' for t in ref_times)} s)")
    print(f"ratio mjtable/PyMahjongGB: {ratio:.4f}")
    figures: dict[str, object] = {
        "hands": len(hands),
        "seed": args.seed,
        "runs": args.runs,
        "pinned_one_core": pinned,
        "generation_seconds": round(gen_seconds, 3),
        "mjtable_hands_per_s": round(ours_rate, 1),
        "pymahjonggb_hands_per_s": round(ref_rate, 1),
        "ratio": round(ratio, 5),
    }
    print(json.dumps(figures))
    return figures


if __name__ == "__main__":
    main()
