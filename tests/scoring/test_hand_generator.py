"""Tests of the test oracle itself: the hand generator and the PyMahjongGB mapping.

Legality is checked here independently of the generator's own construction (a separate
decomposition of the concealed part, a separate notation parser), and coverage is measured by
the reference: over 20,000 hands of seed 2026 every fan 1..81 and 明暗杠 must be awarded.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import re
from pathlib import Path

import MahjongGB
import pytest

from hand_generator import (
    HONOR_NAMES,
    REF_CODE_OF_NAME,
    TILE_INDEX,
    TILE_NAMES,
    WINDS,
    GeneratorStats,
    Situation,
    generate,
    generate_cached,
)
from oracle import (
    FAN_POINTS,
    NAME_TO_NUMBER,
    OUTSIDE_TABLE_NAME,
    REFERENCE_NAMES_IN_TABLE_ORDER,
    reference_fans,
    reference_result,
)

COVERAGE_HANDS = 20_000
SEED = 2026
#: Fans the reference cannot award to a legal hand in its model. Measured: none — all 81 fans and
#: 明暗杠 occur (the rarest, 无番和, about 95 times in 20,000 hands of seed 2026).
IMPOSSIBLE_FANS: frozenset[int] = frozenset()


# ------------------------------------------------------------------ independent legality helpers

def _counts(tiles: list[str]) -> list[int]:
    c = [0] * 34
    for t in tiles:
        c[TILE_INDEX[t]] += 1
    return c


def _regular(c: list[int], sets: int, pair: bool) -> bool:
    """True if counts ``c`` split into exactly ``sets`` chows/pungs plus one pair (if ``pair``)."""
    i = next((k for k in range(34) if c[k]), -1)
    if i < 0:
        return sets == 0 and not pair
    if pair and c[i] >= 2:
        c[i] -= 2
        ok = _regular(c, sets, False)
        c[i] += 2
        if ok:
            return True
    if sets and c[i] >= 3:
        c[i] -= 3
        ok = _regular(c, sets - 1, pair)
        c[i] += 3
        if ok:
            return True
    if sets and i < 27 and i % 9 <= 6 and c[i + 1] and c[i + 2]:
        for k in (i, i + 1, i + 2):
            c[k] -= 1
        ok = _regular(c, sets - 1, pair)
        for k in (i, i + 1, i + 2):
            c[k] += 1
        if ok:
            return True
    return False


_KNITTED = [
    [perm[j] * 9 + r - 1 for j in range(3) for r in (1 + j, 4 + j, 7 + j)]
    for perm in itertools.permutations(range(3))
]
_ORPHANS = [0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33]


def _is_complete(concealed_part: list[str], n_melds: int) -> bool:
    """Whether the concealed part (standing tiles + winning tile) completes the hand."""
    c = _counts(concealed_part)
    sets = 4 - n_melds
    if _regular(c, sets, True):
        return True
    for k in _KNITTED:  # knitted straight + 1 set + pair (0 or 1 meld)
        if sets >= 3 and all(c[t] >= 1 for t in k):
            rest = c[:]
            for t in k:
                rest[t] -= 1
            if _regular(rest, sets - 3, True):
                return True
    if n_melds:
        return False
    if all(x in (0, 2, 4) for x in c):  # seven pairs, 4 of a kind = 2 pairs
        return True
    if all(c[t] >= 1 for t in _ORPHANS) and sum(c[t] for t in _ORPHANS) == 14:
        return True
    for k in _KNITTED:  # honors and knitted tiles: 14 distinct tiles of knitted + honors
        allowed = set(k) | set(range(27, 34))
        if all(x <= 1 for x in c) and all(c[t] == 0 for t in range(34) if t not in allowed):
            return True
    return False


_MELD_RE = re.compile(r"\[([^\]]*)\]")
_TILE_RE = re.compile(r"([1-9]+)([msp])|([ESWNCFP])")


def _parse_tiles(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    for m in _TILE_RE.finditer(text):
        assert m.start() == pos, f"junk in {text!r} at {pos}"
        pos = m.end()
        if m.group(3):
            out.append(m.group(3))
        else:
            out += [d + m.group(2) for d in m.group(1)]
    assert pos == len(text), f"junk at end of {text!r}"
    return out


def _parse_notation(s: str) -> tuple[list[tuple[list[str], int | None]], list[str], str]:
    """Independent parser: ``([(meld_tiles, offer_or_None)], concealed, winning_tile)``."""
    melds = []
    pos = 0
    for m in _MELD_RE.finditer(s):
        if m.start() != pos:
            break
        body, _, offer = m.group(1).partition(",")
        melds.append((_parse_tiles(body), int(offer) if offer else None))
        pos = m.end()
    rest = _parse_tiles(s[pos:])
    return melds, rest[:-1], rest[-1]


# ------------------------------------------------------------------------------------ fixtures

@pytest.fixture(scope="module")
def hands() -> tuple[Situation, ...]:
    return generate_cached(COVERAGE_HANDS, SEED)[0]


# ---------------------------------------------------------------------------------------- tests

def test_deterministic_for_a_seed() -> None:
    a = generate(800, seed=11)
    b = generate(800, seed=11)
    c = generate(800, seed=12)
    assert a == b
    assert [h.to_notation() for h in a] == [h.to_notation() for h in b]
    assert a != c


def test_generation_stats_are_clean() -> None:
    stats = GeneratorStats()
    generate(5000, seed=SEED, stats=stats)
    assert stats.generated == 5000
    assert stats.reference_rejections == 0
    assert stats.construction_retries < 0.05 * stats.generated
    assert sum(stats.per_family.values()) == 5000


def test_every_hand_is_legal(hands: tuple[Situation, ...]) -> None:
    for h in hands:
        n_melds = len(h.melds)
        assert 0 <= n_melds <= 4, h
        assert len(h.concealed) == 13 - 3 * n_melds, h
        # 14 tiles with each kong counted as 3
        assert sum(3 for _ in h.melds) + len(h.concealed) + 1 == 14
        assert max(h.tile_counts().values()) <= 4, h
        for kind, tiles, offer in h.melds:
            idx = [TILE_INDEX[t] for t in tiles]
            if kind == "chow":
                assert idx[0] < 27 and idx[0] % 9 <= 6 and idx == [idx[0], idx[0] + 1, idx[0] + 2], h
                assert offer in (1, 2, 3), h
            elif kind == "pung":
                assert len(set(idx)) == 1 and len(idx) == 3 and offer in (1, 2, 3), h
            else:
                assert kind == "kong" and len(set(idx)) == 1 and len(idx) == 4, h
                assert offer in (0, 1, 2, 3), h
        # the winning tile completes the concealed part (it never sits inside a declared meld)
        assert _is_complete(list(h.concealed) + [h.winning_tile], n_melds), h.to_notation()
        assert h.seat_wind in WINDS and h.prevalent_wind in WINDS
        assert 0 <= h.flowers <= 8


def test_flags_are_consistent(hands: tuple[Situation, ...]) -> None:
    for h in hands:
        in_concealed = h.winning_tile in h.concealed
        in_melds = any(h.winning_tile in m.tiles for m in h.melds)
        if h.fourth_tile:
            assert not in_concealed, h
        if h.robbing_kong:
            assert not h.self_drawn and not h.last_tile and not in_concealed and not in_melds, h
        if h.kong_replacement:
            assert h.self_drawn and any(m.kind == "kong" for m in h.melds), h


def test_all_consistent_flag_combinations_occur(hands: tuple[Situation, ...]) -> None:
    seen = collections.Counter(
        (h.self_drawn, h.last_tile, h.kong_replacement, h.robbing_kong, h.fourth_tile) for h in hands
    )
    expected = set()
    for last, kong, fourth in itertools.product((False, True), repeat=3):
        expected.add((True, last, kong, False, fourth))
        if not (last and kong):  # robbing the kong on the last tile is contradictory
            expected.add((False, last, False, kong, fourth))
    missing = expected - set(seen)
    assert not missing, f"flag combinations never generated: {sorted(missing)}"
    assert set(seen) <= expected
    assert {h.flowers for h in hands} == set(range(9))
    assert {(h.seat_wind, h.prevalent_wind) for h in hands} == set(itertools.product(WINDS, WINDS))


def test_meld_shapes_cover_everything(hands: tuple[Situation, ...]) -> None:
    n_melds = collections.Counter(len(h.melds) for h in hands)
    assert set(n_melds) == {0, 1, 2, 3, 4}
    kinds = collections.Counter(
        (m.kind, m.offer == 0) for h in hands for m in h.melds
    )
    for key in (("chow", False), ("pung", False), ("kong", False), ("kong", True)):
        assert kinds[key] > 200, kinds
    assert sum(1 for h in hands if sum(m.kind == "kong" for m in h.melds) == 4) > 50


def test_notation_round_trips(hands: tuple[Situation, ...]) -> None:
    for h in hands[:5000]:
        s = h.to_notation()
        melds, concealed, win = _parse_notation(s)
        assert win == h.winning_tile, s
        assert concealed == list(h.concealed), s
        assert len(melds) == len(h.melds), s
        for (tiles, offer), m in zip(melds, h.melds):
            assert tiles == list(m.tiles), s
            assert offer == (None if (m.kind == "kong" and m.offer == 0) else m.offer), s


def test_notation_examples() -> None:
    from hand_generator import Meld

    sit = Situation(
        melds=(Meld("pung", ("E", "E", "E"), 2), Meld("kong", ("S",) * 4, 1)),
        concealed=("5p", "5p", "W", "W", "W", "N"),
        winning_tile="N",
        self_drawn=False, seat_wind="E", prevalent_wind="E", flowers=0,
        last_tile=False, kong_replacement=False, robbing_kong=False, fourth_tile=False,
    )
    assert sit.to_notation() == "[EEE,2][SSSS,1]55pWWWNN"
    kw = sit.to_pymahjonggb_kwargs()
    assert kw["pack"] == (("PENG", "F1", 2), ("GANG", "F2", 1))
    assert kw["hand"] == ("B5", "B5", "F3", "F3", "F3", "F4")
    assert kw["winTile"] == "F4"
    chow = Situation(
        melds=(Meld("chow", ("1m", "2m", "3m"), 1), Meld("kong", ("C",) * 4, 0)),
        concealed=("5m", "5m", "7m", "8m", "9m", "1s", "2s"),
        winning_tile="3s",
        self_drawn=True, seat_wind="N", prevalent_wind="S", flowers=3,
        last_tile=False, kong_replacement=True, robbing_kong=False, fourth_tile=False,
    )
    assert chow.to_notation() == "[123m,1][CCCC]55789m12s3s"
    kw = chow.to_pymahjonggb_kwargs()
    assert kw["pack"] == (("CHI", "W2", 1), ("GANG", "J1", 0))
    assert (kw["seatWind"], kw["prevalentWind"], kw["isAboutKong"], kw["flowerCount"]) == (3, 1, True, 3)


def test_tile_code_tables() -> None:
    assert len(TILE_NAMES) == 34 and len(set(TILE_NAMES)) == 34
    assert REF_CODE_OF_NAME["1m"] == "W1" and REF_CODE_OF_NAME["9s"] == "T9"
    assert REF_CODE_OF_NAME["5p"] == "B5"
    assert [REF_CODE_OF_NAME[h] for h in HONOR_NAMES] == ["F1", "F2", "F3", "F4", "J1", "J2", "J3"]


def test_fan_name_map_is_complete() -> None:
    """Every fan name compiled into PyMahjongGB is mapped, and only those."""
    assert len(REFERENCE_NAMES_IN_TABLE_ORDER) == 81
    assert set(NAME_TO_NUMBER.values()) == set(range(1, 82)) | {None}
    assert NAME_TO_NUMBER[OUTSIDE_TABLE_NAME] is None
    blob = Path(MahjongGB.__file__).read_bytes()
    for name in NAME_TO_NUMBER:
        assert name.encode("utf-8") in blob, f"{name} is not a PyMahjongGB fan name"
    assert sorted(FAN_POINTS, key=lambda n: (n is None, n or 0)) == list(range(1, 82)) + [None]


def test_oracle_known_hands() -> None:
    from hand_generator import Meld

    big_four_winds = Situation(
        melds=(Meld("pung", ("E",) * 3, 2), Meld("kong", ("S",) * 4, 1)),
        concealed=("5p", "5p", "W", "W", "W", "N", "N"),
        winning_tile="N",
        self_drawn=False, seat_wind="E", prevalent_wind="E", flowers=2,
        last_tile=False, kong_replacement=False, robbing_kong=False, fourth_tile=False,
    )
    fans, total = reference_result(big_four_winds)
    # 大四喜 88 (excludes winds pungs, all pungs, ...), 混一色 6, 明杠 1, 花牌 x2
    assert fans == {1: 1, 49: 1, 74: 1, 81: 2}
    assert total == 88 + 6 + 1 + 2
    chicken = Situation(
        melds=(Meld("chow", ("2m", "3m", "4m"), 1), Meld("pung", ("6s",) * 3, 3)),
        concealed=("7m", "8m", "4p", "5p", "6p", "E", "E"),
        winning_tile="6m",
        self_drawn=False, seat_wind="S", prevalent_wind="S", flowers=0,
        last_tile=False, kong_replacement=False, robbing_kong=False, fourth_tile=False,
    )
    assert reference_result(chicken) == ({43: 1}, 8)
    not_a_win = dataclasses.replace(chicken, concealed=("7m", "8m", "4p", "5p", "7p", "E", "E"))
    with pytest.raises(TypeError):
        reference_fans(not_a_win)


def test_every_fan_is_covered(hands: tuple[Situation, ...]) -> None:
    """Over 20,000 hands every fan the reference can award appears (measured by the reference)."""
    seen: collections.Counter[int | None] = collections.Counter()
    for h in hands:
        for number in reference_fans(h):
            seen[number] += 1
    missing = [n for n in range(1, 82) if n not in seen and n not in IMPOSSIBLE_FANS]
    assert not missing, f"fans never generated: {missing}"
    assert seen[None] > 0, "明暗杠 never generated"
    # rare fans should not be starved either
    starved = {n: seen[n] for n in range(1, 82) if n not in IMPOSSIBLE_FANS and seen[n] < 30}
    assert not starved, f"fans seen fewer than 30 times: {starved}"
