"""Tiles and their notation.

A tile kind is a small integer *code* with gaps between the suits so that a chow can never run
across two suits (``code + 1`` of a 9 is not a tile of the same suit):

======================  =========  =====================================
kind                    codes      notation
======================  =========  =====================================
characters 万 1-9       1..9       ``1m``..``9m``
bamboo 条 1-9           11..19     ``1s``..``9s``
dots 饼 1-9             21..29     ``1p``..``9p``
winds 东南西北          31..34     ``E S W N`` (also ``1z``..``4z``)
dragons 中 发 白        35..37     ``C F P`` (red, green, white; ``7z 6z 5z``)
======================  =========  =====================================

The order of codes (characters, bamboo, dots, then E S W N C F P) is the canonical order used to
sort tiles and melds; it is also the order of the reference calculator, which makes tie-breaks
between equal readings of a hand reproducible.

Flowers are separate (they are never part of a hand): ``1f``..``8f`` in the order of the rules
text, 1-4 the seasons spring, summer, autumn, winter 春夏秋冬 and 5-8 the flowers plum, orchid,
bamboo, chrysanthemum 梅兰竹菊.

Source: 中国麻将竞赛规则 (../shared/seeds/000_ba052a8ec20fd579.txt), 第二条 and 第五条 (terms).
"""

from __future__ import annotations

import enum

MAN, SOU, PIN, HONOR = 0, 1, 2, 3
SUIT_LETTERS = "msp"
SUIT_NAMES_EN = ("characters", "bamboo", "dots")
SUIT_NAMES_ZH = ("万", "条", "饼")

EAST, SOUTH, WEST, NORTH, RED, GREEN, WHITE = 31, 32, 33, 34, 35, 36, 37
HONOR_LETTERS = "ESWNCFP"
HONOR_NAMES_ZH = ("东", "南", "西", "北", "中", "发", "白")
HONOR_NAMES_EN = ("East", "South", "West", "North", "Red dragon", "Green dragon", "White dragon")
# 1z..7z: E S W N, white, green, red (the order of the calculators' "z" notation).
Z_TO_CODE = {1: EAST, 2: SOUTH, 3: WEST, 4: NORTH, 5: WHITE, 6: GREEN, 7: RED}

#: All 34 tile codes in canonical order.
ALL_TILES: tuple[int, ...] = tuple(
    [s * 10 + r for s in range(3) for r in range(1, 10)] + list(range(EAST, WHITE + 1))
)
#: Size of a count table indexed by tile code.
TABLE_SIZE = 38

TERMINALS = frozenset({1, 9, 11, 19, 21, 29})
WINDS = frozenset(range(EAST, NORTH + 1))
DRAGONS = frozenset(range(RED, WHITE + 1))
HONORS = WINDS | DRAGONS
TERMINALS_AND_HONORS = TERMINALS | HONORS
#: 23468 bamboo and the green dragon (fan 3, 绿一色).
GREEN_TILES = frozenset({12, 13, 14, 16, 18, GREEN})
#: Tiles whose face has no up or down (fan 40, 推不倒): 1234589 dots, 245689 bamboo, white dragon.
REVERSIBLE_TILES = frozenset({21, 22, 23, 24, 25, 28, 29, 12, 14, 15, 16, 18, 19, WHITE})
THIRTEEN_ORPHANS_TILES: tuple[int, ...] = (1, 9, 11, 19, 21, 29, 31, 32, 33, 34, 35, 36, 37)
#: The six knitted straights (组合龙): 147/258/369 spread over the three suits, canonical order.
KNITTED_STRAIGHTS: tuple[tuple[int, ...], ...] = tuple(
    tuple(sorted(s * 10 + r for s, start in zip(range(3), starts) for r in (start, start + 3, start + 6)))
    for starts in ((1, 2, 3), (1, 3, 2), (2, 1, 3), (2, 3, 1), (3, 1, 2), (3, 2, 1))
)


def is_suited(code: int) -> bool:
    """True for a numbered tile (characters, bamboo, dots)."""
    return code < 30


def suit_of(code: int) -> int:
    """Suit index 0 (m), 1 (s), 2 (p) or 3 (honors)."""
    return code // 10


def rank_of(code: int) -> int:
    """Rank 1-9 of a numbered tile (for honors: 1-7 in E S W N C F P order)."""
    return code % 10 if code < 30 else code - 30


def tile_name(code: int) -> str:
    """The notation of one tile: ``'5p'``, ``'E'``, ``'C'``. Raises KeyError-free ValueError on a bad code."""
    if code < 30 and 1 <= code % 10 <= 9:
        return f"{code % 10}{SUIT_LETTERS[code // 10]}"
    if EAST <= code <= WHITE:
        return HONOR_LETTERS[code - EAST]
    raise ValueError(f"not a tile code: {code!r}")


def tile_name_zh(code: int) -> str:
    """Chinese name of a tile: ``'五饼'``, ``'东'``, ``'中'``."""
    if code < 30:
        return "一二三四五六七八九"[code % 10 - 1] + SUIT_NAMES_ZH[code // 10]
    return HONOR_NAMES_ZH[code - EAST]


def tiles_to_string(codes) -> str:
    """Compact notation of a sequence of tile codes, grouping runs of one suit: ``[1,2,3,25] -> '123m5p'``.

    The order of the input is kept; consecutive numbered tiles of the same suit share one letter.
    """
    out: list[str] = []
    prev = 3  # suit of the previous tile; 3 = honor (or none): no letter pending
    for c in codes:
        s = c // 10
        if s != prev and prev < 3:
            out.append(SUIT_LETTERS[prev])
        out.append(_CHAR[c])
        prev = s
    if prev < 3:
        out.append(SUIT_LETTERS[prev])
    return "".join(out)


_CHAR = [str(c % 10) if c < 30 else (HONOR_LETTERS[c - EAST] if c >= EAST else "?") for c in range(TABLE_SIZE)]


class Wind(enum.Enum):
    """Seat and prevalent winds (门风, 圈风). Value: the notation letter.

    Attributes:
        tile: the wind's tile code (31-34), set once per member (the scorer reads it for every
            wind pung: a plain attribute, where a property through ``Enum.value`` costs ~1 us).
    """

    EAST = "E"
    SOUTH = "S"
    WEST = "W"
    NORTH = "N"

    def __init__(self, letter: str) -> None:
        self.tile: int = EAST + "ESWN".index(letter)

    @classmethod
    def parse(cls, value: "Wind | str | int", name: str = "wind") -> "Wind":
        """Accept a Wind, ``'E'``/``'east'``/``'东'`` or 0-3 (E, S, W, N); raise ScoringError
        ``bad-value`` otherwise, naming ``name`` (the option or key that held the value)."""
        if isinstance(value, Wind):
            return value
        hit = _WIND_BY_LETTER.get(value) if isinstance(value, str) else None
        if hit is not None:
            return hit
        from .errors import ScoringError

        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 3:
            return list(cls)[value]
        if isinstance(value, str):
            v = value.strip()
            aliases = {"E": "E", "EAST": "E", "东": "E", "S": "S", "SOUTH": "S", "南": "S",
                       "W": "W", "WEST": "W", "西": "W", "N": "N", "NORTH": "N", "北": "N"}
            if v.upper() in aliases:
                return cls(aliases[v.upper()])
        raise ScoringError("bad-value", f"{name} {value!r} is not a wind: use E, S, W or N")


_WIND_BY_LETTER = {w.value: w for w in Wind}


class Flower(enum.IntEnum):
    """The eight flower tiles (花牌), numbered as in the rules text: ``1f``..``8f``."""

    SPRING = 1
    SUMMER = 2
    AUTUMN = 3
    WINTER = 4
    PLUM = 5
    ORCHID = 6
    BAMBOO = 7
    CHRYSANTHEMUM = 8

    @property
    def notation(self) -> str:
        return f"{self.value}f"

    @property
    def name_zh(self) -> str:
        return "春夏秋冬梅兰竹菊"[self.value - 1]
