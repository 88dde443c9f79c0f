"""The engine of issue 19's fan specs against the engine before them, while both exist.

The scoring package as it was before the fans were moved into one spec each (commit
``OLD_ENGINE``) is taken from the repository's history into a temporary directory and imported
as ``scoring_old``. Both score the same generated hands (``hand_generator``, seed 2026: the
20,000 hands of the PyMahjongGB comparison under ``mcr``, the first 5,000 of them under
``mcr-1998``); their full results (shape, every fan with its number, names, points, count and
evidence tiles, the totals, the payments) must be equal. Remove this test with the old engine's commit once the refactor is over.
"""

from __future__ import annotations

import importlib
import io
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from hand_generator import generate_cached

ROOT = Path(__file__).resolve().parents[2]
OLD_ENGINE = "5dbdff95a5d32984fefcc27cce102e91e3ea2f2b"
N_HANDS = 20_000


@pytest.fixture(scope="module")
def old_scoring(tmp_path_factory):
    """The old engine's ``scoring`` package, imported as ``scoring_old``."""
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", OLD_ENGINE, "scoring"], capture_output=True, check=True)
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


@pytest.mark.parametrize("rules, n_hands", [("mcr", N_HANDS), ("mcr-1998", 5_000)])
def test_full_results_equal_the_old_engine(old_scoring, rules: str, n_hands: int) -> None:
    from scoring import ScoringError, score_hand

    situations, _ = generate_cached(N_HANDS, 2026)
    diffs = []
    for sit in situations[:n_hands]:
        text, kw = sit.to_notation(), sit.score_kwargs()
        try:
            new = score_hand(text, rules=rules, **kw).to_dict()
        except ScoringError as e:
            new = {"error": e.to_dict()}
        try:
            old = old_scoring.score_hand(text, rules=rules, **kw).to_dict()
        except old_scoring.ScoringError as e:
            old = {"error": e.to_dict()}
        if new != old:
            diffs.append(f"  {text} {kw}:\n    new {new}\n    old {old}")
    assert not diffs, f"{len(diffs)} of {n_hands} hands differ ({rules}):\n" + "\n".join(diffs[:10])
