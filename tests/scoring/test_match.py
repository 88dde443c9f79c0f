"""Hand points, session points, standard points and ranking (第十条, 第十一条)."""

from __future__ import annotations

import pytest

from scoring import ScoringError
from scoring.match import HandRecord, hand_points, ranking, session_points, standard_points


def test_self_drawn_each_pays_8_plus_total() -> None:
    assert hand_points(HandRecord("S", None, 10)) == {"E": -18, "S": 54, "W": -18, "N": -18}


def test_discard_discarder_pays_8_plus_total_others_8() -> None:
    assert hand_points(HandRecord("E", "N", 12)) == {"E": 36, "S": -8, "W": -8, "N": -20}


def test_draw_and_penalty() -> None:
    assert hand_points(HandRecord(None)) == {s: 0 for s in "ESWN"}
    assert hand_points(HandRecord(None, penalties={"W": 10}))["W"] == -10


def test_session_points_run_from_the_base() -> None:
    run = session_points([HandRecord("S", None, 10), HandRecord("E", "N", 12)])
    assert run[0] == {"E": 482, "S": 554, "W": 482, "N": 482}
    assert run[1] == {"E": 518, "S": 546, "W": 474, "N": 462}
    assert sum(run[1].values()) == 2000


def test_standard_points_four_players_and_ties() -> None:
    assert standard_points({"a": 600, "b": 550, "c": 480, "d": 370}) == {"a": 4, "b": 2, "c": 1, "d": 0}
    assert standard_points({"a": 600, "b": 600, "c": 480, "d": 320}) == {"a": 3, "b": 3, "c": 1, "d": 0}
    assert standard_points({"a": 500, "b": 500, "c": 500, "d": 500}) == {p: 1.75 for p in "abcd"}


def test_ranking_tie_breaks() -> None:
    sessions = [{"a": (4, 600), "b": (2, 520), "c": (1, 480), "d": (0, 400)},
                {"a": (0, 400), "b": (2, 520), "c": (4, 600), "d": (1, 480)}]
    r = ranking(sessions)
    # a and b and c all have 4 standard points... a: 4, b: 4, c: 5, d: 1
    assert [s.player for s in r] == ["c", "b", "a", "d"]   # b and a: equal standard, b more match points
    assert r[0].rank == 1 and r[-1].rank == 4


@pytest.mark.parametrize("args", [("X",), ("E", "E", 10), (None, "E", 0), ("E", None, 5), ("E", None, 10, {"Q": 1})])
def test_bad_records(args: tuple) -> None:
    with pytest.raises(ScoringError):
        HandRecord(*args)
