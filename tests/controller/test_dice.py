"""The wall break by the rules' two-throw method and the one-throw method."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.dice import DiceError, roll, seat_from_count, wall_break

WALLS_136 = {"E": 17, "S": 17, "W": 17, "N": 17}
WALLS_108 = {"E": 14, "S": 13, "W": 14, "N": 13}


@pytest.mark.parametrize("total, seat", [(5, "E"), (9, "E"), (2, "S"), (6, "S"), (10, "S"),
                                         (3, "W"), (7, "W"), (11, "W"), (4, "N"), (8, "N"), (12, "N")])
def test_dealers_throw_picks_the_second_thrower(total: int, seat: str) -> None:
    # 000_ba052a8ec20fd579.txt: 庄为东，占数为5、9点；庄下家为南，占2、6、10点；庄对门为西，占3、7、11点；庄上家为北，占4、8、12点
    assert seat_from_count("E", total) == seat


def test_two_throw_counts_from_the_right_of_the_second_throwers_wall() -> None:
    b = wall_break("two-throw", [3, 4, 2, 3], WALLS_136)   # dealer 7 -> across (W); 7 + 5 = 12
    assert b.throws[1].side == "W" and b.counting_side == "W"
    assert (b.count, b.wall, b.stack) == (12, "W", 12)
    assert b.first_stacks == (("W", 13), ("W", 14))
    assert b.order == ("E", "S", "W", "N")


def test_count_past_the_wall_end_continues_into_the_left_neighbours_wall() -> None:
    b = wall_break("two-throw", [6, 6, 6, 6], WALLS_136)   # 12 -> N; 24 stacks: 17 in N, 7 in W (N's 上家)
    assert (b.counting_side, b.wall, b.stack) == ("N", "W", 7)
    b = wall_break("two-throw", [6, 3, 6, 2], WALLS_136)   # 9 -> dealer; 17: the last stack of E's wall
    assert (b.wall, b.stack) == ("E", 17)
    assert b.first_stacks == (("N", 1), ("N", 2))           # dealing goes on into N's wall


def test_one_throw_big_die_points_small_die_counts() -> None:
    b = wall_break("one-throw", [2, 5], WALLS_136)          # 大点指位，小点数牌: 5 -> dealer, count 2
    assert (b.counting_side, b.wall, b.stack) == ("E", "E", 2)
    b = wall_break("one-throw", [6, 1], WALLS_108, dealer="W")  # 6 -> W's right = N; count 1
    assert (b.counting_side, b.stack) == ("N", 1)


def test_uneven_walls_of_108_tiles() -> None:
    b = wall_break("two-throw", [1, 1, 6, 6], WALLS_108)   # 2 -> S (13 stacks); 14 -> 1 into E's wall
    assert (b.counting_side, b.wall, b.stack) == ("S", "E", 1)


@pytest.mark.parametrize("method, dice, words", [
    ("two-throw", [1, 2, 3], "needs 4"),
    ("one-throw", [1, 7], "1 to 6"),
    ("two-throw", [0, 1, 2, 3], "1 to 6"),
    ("three-throw", [1, 2], "unknown"),
])
def test_bad_dice_input(method: str, dice: list, words: str) -> None:
    with pytest.raises(DiceError, match=words):
        wall_break(method, dice, WALLS_136)


@given(st.lists(st.integers(1, 6), min_size=4, max_size=4), st.sampled_from("ESWN"))
def test_break_always_lands_on_a_real_stack(dice: list[int], dealer: str) -> None:
    for walls in (WALLS_136, WALLS_108):
        b = wall_break("two-throw", dice, walls, dealer)
        assert 1 <= b.stack <= walls[b.wall]
        for side, stack in b.first_stacks:
            assert 1 <= stack <= walls[side]


def test_electronic_dice_are_dice() -> None:
    seen = {v for _ in range(200) for v in roll(2)}
    assert seen == {1, 2, 3, 4, 5, 6}
