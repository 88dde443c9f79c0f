"""The unique-wait table (``scoring.decompose.unique_wait``) against the waits worked out in full.

``best_reading`` asks whether a hand may score a wait fan (边张, 嵌张, 单钓) from a table kept by
the winning tile's suit (or the honors) alone. Here, on random complete hands of every size
(2 to 14 concealed tiles), that answer must be what ``waiting_tiles`` (every suit's waits, the
seven-pairs wait with 13 tiles) and the readings say: the winning tile is the only wait, and some
reading has it in a concealed chow or the pair. The table is shared across the hands, so an entry
made from one hand answers for the others with the same suit.
"""

from __future__ import annotations

import random

from scoring import decompose as D
from scoring.tiles import TABLE_SIZE

_SUITED = [t for t in range(30) if t % 10]
_HONORS = list(range(31, 38))


def _random_complete(rng: random.Random) -> tuple[list[int], int]:
    """A count table of a complete regular hand (sets and a pair, each count at most 4) and its
    number of sets. The tiles crowd into few suits, so that the waits are many and tangled."""
    while True:
        n_sets = rng.choice((0, 1, 2, 3, 4, 4, 4))
        suits = rng.sample((0, 1, 2), rng.choice((1, 1, 2, 3)))
        honors = rng.random() < 0.4
        table = [0] * TABLE_SIZE
        kinds = [t for t in _SUITED if t // 10 in suits] + (_HONORS if honors else [])
        pair = rng.choice(kinds)
        table[pair] += 2
        for _ in range(n_sets):
            t = rng.choice(kinds)
            if t < 30 and t % 10 <= 7 and rng.random() < 0.65:
                for x in (t, t + 1, t + 2):
                    table[x] += 1
            else:
                table[t] += 3
        if max(table) <= 4:
            return table, n_sets


def _six_pairs_and_two(rng: random.Random) -> tuple[list[int], int]:
    """Fourteen concealed tiles that are four sets and a pair, and also six pairs (four alike
    counting as two) and two odd counts: without one odd tile the other is a seven-pairs wait."""
    while True:
        table = [0] * TABLE_SIZE
        suit = rng.choice((0, 1, 2))
        kinds = [t for t in _SUITED if t // 10 == suit]
        for t in rng.sample(kinds, 3):
            table[t] = 4 if rng.random() < 0.5 else 2
        while sum(table) < 12:
            table[rng.choice(kinds)] += 2
        for t in rng.sample(kinds, 2):
            table[t] += 1
        if max(table) <= 4 and D.regular_divisions(bytes(table), 4):
            return table, 4


def _may_score_a_wait_fan(table: list[int], win: int, with_seven_pairs: bool) -> bool:
    """The full answer: ``waiting_tiles`` is the winning tile alone, and a reading has it in a
    concealed chow or the pair."""
    without_win = list(table)
    without_win[win] -= 1
    readings = D.regular_divisions(bytes(table), (sum(table) - 2) // 3)
    in_chow_or_pair = any(pair == win or any(t - 1 <= win <= t + 1 for t in chows) for _, pair, chows, _ in readings)
    return D.waiting_tiles(without_win, with_seven_pairs) == [win] and in_chow_or_pair


def test_unique_wait_from_the_suit_table_is_the_full_waits_answer() -> None:
    rng = random.Random(197)
    D._UNIQUE_WAITS.clear()
    answers = {True: 0, False: 0}
    seven_pairs_waits = 0
    for i in range(12_000):
        table, n_sets = _six_pairs_and_two(rng) if i % 6 == 0 else _random_complete(rng)
        readings = D.regular_divisions(bytes(table), n_sets)
        assert readings, table
        for win in range(TABLE_SIZE):
            if not table[win]:
                continue
            want = _may_score_a_wait_fan(table, win, n_sets == 4)
            got = D.unique_wait(bytes(table), win, n_sets == 4, readings)
            assert got == want, (table, win, n_sets)
            answers[want] += 1
            seven_pairs_waits += want != _may_score_a_wait_fan(table, win, False)
            # the table's entries as worked out, before the readings' say (the waits alone)
            base, i = (30, win - 31) if win > 30 else (win - win % 10, win % 10 - 1)
            only = D._suit_unique_wait(bytes(table[base + 1:base + 10 if win < 30 else 38]), i)
            assert only == (D.waiting_tiles([c - (t == win) for t, c in enumerate(table)], False) == [win]), \
                (table, win)
    # both answers are common, the entries are shared, and the seven-pairs wait decided some hands
    assert answers[True] > 2_000 and answers[False] > 20_000, answers
    assert len(D._UNIQUE_WAITS) < 6_000
    assert seven_pairs_waits > 50, seven_pairs_waits
