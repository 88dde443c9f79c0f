"""The engine of issue 19's speed work (section 3) against the engine before it, while both exist.

The scoring package as it was before the speed work (commit ``OLD_ENGINE``, the branch point of
``speed``) is taken from the repository's history into a temporary directory and imported as
``scoring_old``. That engine gave, on these same hands, the full results of the engine before the
fan specs (section 1, commit 5dbdff95): this test checked it then, so the chain holds.

Both engines score the same hands and their full results must be equal (shape, every fan with its
number, names, points, count and evidence tiles, the totals, the payments, or the same error):

* the generated hands of ``hand_generator`` (seed 2026: the 20,000 hands of the PyMahjongGB
  comparison under ``mcr``, the first 5,000 of them under ``mcr-1998``);
* the 132 rulebook examples (``../shared/data/mcr/rulebook_examples.jsonl``) under both profiles;
* the waits (``find_waits``: every wait scored on a discard and self-drawn) of 2,000 ready hands
  (the generated hands without their winning tile) and the shanten reports (``analyse_shanten``)
  of 2,000 hands in play (``partial_hands``).

Remove this test with the old engine's commit once the speed work is over.
"""

from __future__ import annotations

import importlib
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from hand_generator import generate_cached
from partial_hands import play_hands

ROOT = Path(__file__).resolve().parents[2]
OLD_ENGINE = "cfd36c4b836e3bc07347f765f4cad3846040c376"
N_HANDS = 20_000
N_ANALYSIS = 2_000
EXAMPLES = ROOT.parent / "shared" / "data" / "mcr" / "rulebook_examples.jsonl"
EXAMPLE_FLAGS = ("self_drawn", "seat_wind", "prevalent_wind", "flowers", "last_tile", "kong_replacement",
                 "robbing_kong", "fourth_tile")


@pytest.fixture(scope="module")
def old_scoring(tmp_path_factory):
    """The old engine's ``scoring`` package, imported as ``scoring_old``."""
    try:
        tar = subprocess.run(["git", "-C", str(ROOT), "archive", OLD_ENGINE, "scoring"], capture_output=True,
                             check=True)
    except (OSError, subprocess.CalledProcessError) as e:  # no git, or a shallow clone without that commit
        pytest.skip(f"the old engine (commit {OLD_ENGINE[:7]}) is not in this clone's history: "
                    f"{(getattr(e, 'stderr', b'') or b'').decode(errors='replace').strip() or e}")
    dest = tmp_path_factory.mktemp("old_engine")
    with tarfile.open(fileobj=io.BytesIO(tar.stdout)) as t:
        t.extractall(dest, filter="data")
    (dest / "scoring").rename(dest / "scoring_old")
    sys.path.insert(0, str(dest))
    try:
        yield importlib.import_module("scoring_old")
    finally:
        sys.path.remove(str(dest))
        for name in [m for m in sys.modules if m == "scoring_old" or m.startswith("scoring_old.")]:
            del sys.modules[name]


def _outcome(package, fn_name: str, *args, **kw) -> dict:
    """``package.<fn_name>(*args, **kw).to_dict()``, or the error it raised as a dict."""
    try:
        return getattr(package, fn_name)(*args, **kw).to_dict()
    except package.ScoringError as e:
        return {"error": e.to_dict()}


def _added_since(out: dict) -> dict:
    """``out`` without what the analysis reports that the old engine did not: a wait's
    ``fan_points`` (added 2 December 2026), checked here to be its total less the flowers."""
    for w in out.get("waits", ()):
        for win in (w["discard"], w["self_drawn"]):
            if win is not None:
                flowers = sum(f["points"] * f["count"] for f in win["fans"] if f["number"] == 81)
                assert win.pop("fan_points") == win["total"] - flowers, w
    return out


def _compare(old, cases, fn_name: str) -> None:
    """Each case ``(args, kwargs)`` through ``fn_name`` of both engines; every difference reported."""
    import scoring

    diffs = []
    for args, kw in cases:
        new_out = _added_since(_outcome(scoring, fn_name, *args, **kw))
        old_out = _outcome(old, fn_name, *args, **kw)
        if new_out != old_out:
            diffs.append(f"  {args} {kw}:\n    new {new_out}\n    old {old_out}")
    assert not diffs, f"{len(diffs)} of {len(cases)} cases differ ({fn_name}):\n" + "\n".join(diffs[:10])


@pytest.mark.parametrize("rules, n_hands", [("mcr", N_HANDS), ("mcr-1998", 5_000)])
def test_full_results_equal_the_old_engine(old_scoring, rules: str, n_hands: int) -> None:
    situations, _ = generate_cached(N_HANDS, 2026)
    _compare(old_scoring, [((s.to_notation(),), {**s.score_kwargs(), "rules": rules}) for s in situations[:n_hands]],
             "score_hand")


@pytest.mark.parametrize("rules", ["mcr", "mcr-1998"])
def test_rulebook_examples_equal_the_old_engine(old_scoring, rules: str) -> None:
    examples = [json.loads(line) for line in EXAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(examples) == 132
    _compare(old_scoring, [((ex["hand"],), {**{k: ex[k] for k in EXAMPLE_FLAGS if k in ex}, "rules": rules})
                           for ex in examples], "score_hand")


def test_waits_and_shanten_equal_the_old_engine(old_scoring) -> None:
    situations, _ = generate_cached(N_HANDS, 2026)
    ready = [s.to_notation()[:-len(s.winning_tile)] if s.winning_tile in "ESWNCFP" else s.to_notation()[:-2]
             for s in situations[:N_ANALYSIS]]
    _compare(old_scoring, [((h,), {"seat_wind": s.seat_wind, "prevalent_wind": s.prevalent_wind})
                           for h, s in zip(ready, situations)], "find_waits")
    _compare(old_scoring, [((h.notation(),), {}) for h in play_hands(N_ANALYSIS, 2026)], "analyse_shanten")
