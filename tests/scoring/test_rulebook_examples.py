"""The 132 worked examples of the rules' official commentary (../shared/data/mcr/rulebook_examples.jsonl).

Each example gives the hand, the win conditions and one or more accepted fan lists
(``{fan number: count}``, ``"明暗杠"`` for the fan outside the table). Every one must pass.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoring import score_hand

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "mcr" / "rulebook_examples.jsonl"
FLAGS = ("self_drawn", "seat_wind", "prevalent_wind", "flowers", "last_tile", "kong_replacement",
         "robbing_kong", "fourth_tile", "rules")


def _examples() -> list[dict]:
    if not DATA.exists():
        raise FileNotFoundError(f"{DATA} is missing: the tests need ../shared beside the project")
    return [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]


EXAMPLES = _examples()


def test_all_examples_present() -> None:
    assert len(EXAMPLES) == 132


@pytest.mark.parametrize("ex", EXAMPLES, ids=[e["id"] for e in EXAMPLES])
def test_rulebook_example(ex: dict) -> None:
    result = score_hand(ex["hand"], **{k: ex[k] for k in FLAGS if k in ex})
    got = {("明暗杠" if n is None else str(n)): c for n, c in result.fan_counts().items()}
    accepted = [{k: v for k, v in e.items()} for e in ex["expected"]]
    assert got in accepted, f"{ex['id']} ({ex['fan_section']}) {ex['hand']}: got {got}, accepted {accepted}"
    assert result.total == sum(f.points * f.count for f in result.fans)
