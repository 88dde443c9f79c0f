"""How well the layout check (``vision.assemble.layout_gaps``) says where a missed tile is.

Synthetic laid-out hands (``vision.synth.compose_scene``: a won hand as a player lays it, the
concealed row in groups, declared sets with their sideways tile, the winning tile apart), read
from their ground truth (no model: this measures the layout rule, not the detector), with one
tile taken away as a detector that missed it would. Per place of the missing tile (inside a
group of the concealed row, at a group's end, in a declared set): the share of hands where a gap
covers at least a third of the missing tile's box (``vision.confidence.NEAR``, the benchmark's
rule for "the player is asked there"), and the gaps reported per hand (the player's burden).
There is no peer for this check; the figure without it is 0 (no place named).

Usage: ``python benchmarks/vision_gaps.py [--hands N] [--seed S]``. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from vision.assemble import DetectedTile, assemble  # noqa: E402
from vision.confidence import NEAR, _share  # noqa: E402
from vision.synth import compose_scene  # noqa: E402
from vision.tiles import HONORS, SUITED  # noqa: E402

FACES = {n: [np.full((80, 60, 3), 230, np.uint8)] for n in SUITED + HONORS}


def random_hand(rng: np.random.Generator) -> list:
    """Rows of groups of ``(tile, sideways)``: 0-2 declared sets (a chow or pung with one tile
    sideways) on the first row, the concealed tiles in 2-4 groups, the winning tile apart."""
    def chow():
        s, r = "mps"[rng.integers(3)], int(rng.integers(1, 8))
        return [f"{r + k}{s}" for k in range(3)]

    def pung():
        t = (SUITED + HONORS)[rng.integers(34)]
        return [t] * 3
    n_melds = int(rng.integers(0, 3))
    melds = []
    for _ in range(n_melds):
        g = chow() if rng.random() < 0.5 else pung()
        side = int(rng.integers(3))
        melds.append([(t, k == side) for k, t in enumerate(g)])
    concealed = [t for _ in range(4 - n_melds) for t in (chow() if rng.random() < 0.6 else pung())]
    pair = (SUITED + HONORS)[rng.integers(34)]
    concealed += [pair]
    win = pair
    # the concealed row split into 2-4 groups as players leave spaces
    cuts = sorted(rng.choice(np.arange(1, len(concealed)), size=int(rng.integers(1, 4)), replace=False))
    groups, last = [], 0
    for c in list(cuts) + [len(concealed)]:
        groups.append([(t, False) for t in concealed[last:c]])
        last = c
    rows = ([melds] if melds else []) + [groups + [[(win, False)]]]
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hands", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.hands < 1:
        ap.error(f"--hands must be at least 1, not {args.hands}")
    rng = np.random.default_rng(args.seed)
    found: dict[str, list[bool]] = defaultdict(list)
    gaps: dict[str, list[int]] = defaultdict(list)
    for _ in range(args.hands):
        rows = random_hand(rng)
        try:
            _, placed = compose_scene(rows, FACES, rng, size=(480, 900))
        except ValueError:
            continue
        tiles = [DetectedTile(t.tile, tuple(float(v) for v in t.box), 0.99, t.sideways) for t in placed]
        # where each tile lies: in a declared set, at the end of a concealed group, inside one
        where = []
        for r, row in enumerate(rows):
            for g in row:
                for k in range(len(g)):
                    where.append("declared set" if (len(rows) == 2 and r == 0) else
                                 "winning tile" if g is row[-1] and r == len(rows) - 1 else
                                 "inside a group" if 0 < k < len(g) - 1 else "end of a group")
        i = int(rng.integers(len(tiles)))
        missing, rest = tiles[i], tiles[:i] + tiles[i + 1:]
        a = assemble(rest)
        found[where[i]].append(any(_share(missing.box, g.box) >= NEAR for g in a.gaps))
        gaps[where[i]].append(len(a.gaps))
    out = {}
    print(f"{'missing tile':<16} {'hands':>5} {'placed by a gap':>15} {'gaps per hand':>13}   (no check: 0%, 0 gaps)")
    for k in sorted(found):
        out[k] = {"hands": len(found[k]), "placed": float(np.mean(found[k])), "gaps_per_hand": float(np.mean(gaps[k]))}
        print(f"{k:<16} {len(found[k]):>5} {100 * out[k]['placed']:>14.1f}% {out[k]['gaps_per_hand']:>13.2f}")
    allf = [v for f in found.values() for v in f]
    allg = [v for g in gaps.values() for v in g]
    out["all"] = {"hands": len(allf), "placed": float(np.mean(allf)), "gaps_per_hand": float(np.mean(allg))}
    print(f"{'all':<16} {len(allf):>5} {100 * out['all']['placed']:>14.1f}% {out['all']['gaps_per_hand']:>13.2f}")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
