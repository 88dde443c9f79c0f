"""Hand points, session points, standard points and ranking (第十条, 第十一条); the course of a
session: rounds, dealer, seat winds, seat changes (第五条 terms 3-9)."""

from __future__ import annotations

import pytest

from scoring import ScoringError
from scoring.match import (HANDS_PER_SESSION, SEAT_CHANGES, HandRecord, deal, hand_points, player_points, ranking,
                           session_points, standard_points)


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


# ---- the course of a session: 第五条 terms 3-9 ----


def test_the_dealer_moves_every_hand_and_the_prevalent_wind_every_round() -> None:
    deals = [deal(n) for n in range(1, HANDS_PER_SESSION + 1)]
    assert [d.prevalent_wind for d in deals] == [w for w in "ESWN" for _ in range(4)]  # term 5
    assert [d.dealer for d in deals] == list("ESWN") * 4  # term 8: 庄家不连庄, play counter-clockwise
    for d in deals:  # term 6: the dealer is East, 下家 South, 对家 West, 上家 North
        order = "ESWN"
        i = order.index(d.dealer)
        assert [d.seat_winds[order[(i + k) % 4]] for k in range(4)] == list("ESWN")


def test_every_player_sits_once_at_every_side_and_is_dealer_four_times() -> None:
    for player in range(4):
        sides = [deal(4 * r + 1).side_of(player) for r in range(4)]
        assert sorted(sides) == list("ENSW")
        dealt = [d.number for d in map(deal, range(1, 17)) if d.players[d.dealer] == player]
        assert len(dealt) == 4 and len({(n - 1) // 4 for n in dealt}) == 4  # once in every round
    assert deal(5).players == {"E": 1, "S": 0, "W": 3, "N": 2}  # before South: E<->S, W<->N
    assert all(deal(n, "none").players == {"E": 0, "S": 1, "W": 2, "N": 3} for n in range(1, 17))
    assert set(SEAT_CHANGES) == {"mcr", "none"}


@pytest.mark.parametrize("bad", [0, 17, "1", True])
def test_a_hand_number_outside_the_session_is_refused(bad) -> None:
    with pytest.raises(ScoringError, match="1-16"):
        deal(bad)
    with pytest.raises(ScoringError, match="practice"):
        deal(1, "swiss")


def test_player_points_follow_the_players_across_seat_changes() -> None:
    rows = player_points([(deal(1), HandRecord("E", None, 8)), (deal(5), HandRecord("E", "S", 10))])
    assert rows[0][0] == {0: 48, 1: -16, 2: -16, 3: -16}
    # hand 5: player 1 sits at E and wins on player 0's discard (at S)
    assert rows[1][0] == {1: 34, 0: -18, 3: -8, 2: -8}
    assert rows[1][1] == {0: 530, 1: 518, 2: 476, 3: 476}
