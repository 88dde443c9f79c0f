"""Dice and where to break the wall (掷骰与开牌).

Two methods:

* **two-throw** (the rules text, ../shared/seeds/000_ba052a8ec20fd579.txt, 第七条 比赛程序 5 (2)
  掷骰与开牌): the dealer throws two dice; counting counter-clockwise from the dealer as 1, the
  sum picks the second thrower (5, 9: the dealer; 2, 6, 10: the dealer's right, 下家; 3, 7, 11:
  across; 4, 8, 12: the dealer's left, 上家). The second thrower throws; the sum of both throws
  counts stacks (墩) from the right end of the second thrower's wall, right to left.
* **one-throw** (../shared/seeds/004_439ac0ac3d24f1c0.txt, 掷骰子规则: 大点指位，小点数牌): one
  throw of two dice; the bigger die points to the seat (counted the same way), the smaller die
  counts the stacks from the right end of that seat's wall.
* **sum-smaller** (Changsha, ../shared/seeds/004_439ac0ac3d24f1c0.txt, 长沙麻将: 点数之和定方位，小点数垛):
  one throw of two dice; the sum picks the seat (counted the same way), the smaller die counts
  the stacks from the right end of that seat's wall.
* **sum-count** (riichi; common practice, the seeds do not say: docs/rules/riichi.md): one throw
  of two dice; the sum picks the seat and also counts the stacks from the right end of its wall.

A rule system picks its method with the table setting ``rules`` (``controller.settings``): each
system names one in ``scoring.systems.RuleSystem.dice_method``.

Geometry. The sides of the table are named E, S, W, N in turn order: S sits at E's right (下家),
W across, N at E's left (上家). A player's wall lies in front of them; its right end meets the
wall of their right-hand player. Counting right to left along a wall, a count longer than the
wall goes on into the next wall on the left, which belongs to the player's 上家.

The break (开牌) is after the counted stack: the dealer takes the next two stacks to the left
(the counted stack stays at the tail end, from where replacement tiles for kongs and flowers are
drawn), then each player in turn order takes two stacks, three rounds, then the dealer jumps
(跳牌) and takes the top tiles of the first and third stacks ahead, the others one tile each: the
dealer ends with 14 tiles, the others with 13.

Rolling: electronic dice draw from ``secrets`` (a cryptographic source, not ``random``); motor
dice are read by the players and entered as values.
"""

from __future__ import annotations

import dataclasses
import enum
import secrets
from typing import Mapping, Sequence

from .names import SIDES, SIDES_ZH as SIDE_NAMES_ZH

RELATIVE_EN = ("the dealer", "the dealer's right (下家)", "across from the dealer (对家)",
               "the dealer's left (上家)")
RELATIVE_ZH = ("庄家", "庄家下家", "庄家对家", "庄家上家")


class DiceError(ValueError):
    """Bad dice input: a die outside 1-6, the wrong number of dice, an unknown method or side."""


class Method(enum.Enum):
    """How the wall break is found."""

    TWO_THROW = "two-throw"
    ONE_THROW = "one-throw"
    SUM_SMALLER = "sum-smaller"
    SUM_COUNT = "sum-count"

    @classmethod
    def parse(cls, value: "Method | str") -> "Method":
        if isinstance(value, Method):
            return value
        try:
            return cls(value)
        except ValueError:
            raise DiceError(f"dice method {value!r} unknown: use {', '.join(m.value for m in cls)}") from None


@dataclasses.dataclass(frozen=True, slots=True)
class Throw:
    """One throw of two dice by the player at ``side``."""

    side: str
    dice: tuple[int, int]

    @property
    def total(self) -> int:
        return self.dice[0] + self.dice[1]


@dataclasses.dataclass(frozen=True, slots=True)
class WallBreak:
    """Where the wall is broken and how dealing proceeds.

    Attributes:
        method: the method used.
        dealer: the dealer's side.
        throws: the throws, in order (one or two).
        counting_side: whose wall the count starts in (the second thrower, or the seat the big
            die points to).
        count: how many stacks are counted from the right end of that wall (2-24).
        wall: the side whose wall holds the break (``counting_side`` unless the count runs past
            the end of that wall).
        stack: the counted stack in ``wall``, 1 = the wall's right end. The dealer's first two
            stacks are the two after it, to the left.
        first_stacks: ``(side, stack)`` of the dealer's two first stacks.
        order: the turn order of dealing, dealer first.
    """

    method: Method
    dealer: str
    throws: tuple[Throw, ...]
    counting_side: str
    count: int
    wall: str
    stack: int
    first_stacks: tuple[tuple[str, int], tuple[str, int]]
    order: tuple[str, ...]

    def describe(self) -> str:
        """One line in English: whose wall, which stack, who starts."""
        throws = "; ".join(f"{t.side} threw {t.dice[0]}+{t.dice[1]}={t.total}" for t in self.throws)
        (s1, k1), (s2, k2) = self.first_stacks
        first = (f"stacks {k1} and {k2} of {s1}'s wall" if s1 == s2
                 else f"stack {k1} of {s1}'s wall and stack {k2} of {s2}'s wall")
        return (f"{throws}. Count {self.count} stacks from the right end of {self.counting_side}'s wall: the break is "
                f"after stack {self.stack} of {self.wall}'s wall; dealer {self.dealer} takes {first}, then dealing "
                f"goes {' -> '.join(self.order)}.")

    def describe_zh(self) -> str:
        """同上，中文。"""
        throws = "；".join(f"{SIDE_NAMES_ZH[t.side]}家掷 {t.dice[0]}+{t.dice[1]}={t.total} 点" for t in self.throws)
        (s1, k1), (s2, k2) = self.first_stacks
        first = (f"{SIDE_NAMES_ZH[s1]}家牌墙第 {k1}、{k2} 墩" if s1 == s2
                 else f"{SIDE_NAMES_ZH[s1]}家牌墙第 {k1} 墩和{SIDE_NAMES_ZH[s2]}家牌墙第 {k2} 墩")
        return (f"{throws}。从{SIDE_NAMES_ZH[self.counting_side]}家牌墙右端数 {self.count} 墩，在"
                f"{SIDE_NAMES_ZH[self.wall]}家牌墙第 {self.stack} 墩后开牌，由庄家（{SIDE_NAMES_ZH[self.dealer]}）起抓"
                f"{first}。")

    def to_dict(self) -> dict:
        return {"method": self.method.value, "dealer": self.dealer,
                "throws": [{"side": t.side, "dice": list(t.dice), "total": t.total} for t in self.throws],
                "counting_side": self.counting_side, "count": self.count, "wall": self.wall, "stack": self.stack,
                "first_stacks": [list(x) for x in self.first_stacks], "order": list(self.order),
                "text_en": self.describe(), "text_zh": self.describe_zh()}


def seat_from_count(dealer: str, n: int) -> str:
    """The seat that a count ``n`` points to, counting counter-clockwise from the dealer as 1.

    1, 5, 9: the dealer; 2, 6, 10: the dealer's right (下家); 3, 7, 11: across; 4, 8, 12: left.
    """
    _check_side(dealer)
    return SIDES[(SIDES.index(dealer) + n - 1) % 4]


def roll(n: int = 2) -> tuple[int, ...]:
    """Electronic dice: ``n`` values 1-6 from ``secrets`` (a cryptographic random source)."""
    return tuple(secrets.randbelow(6) + 1 for _ in range(n))


def wall_break(method: "Method | str", dice: Sequence[int], stacks: Mapping[str, int],
               dealer: str = "E") -> WallBreak:
    """Compute the wall break from dice values.

    Args:
        method: ``"two-throw"`` (four values: dealer's two dice, then the second thrower's two),
            or ``"one-throw"``, ``"sum-smaller"``, ``"sum-count"`` (two values each).
        dice: the values, each 1-6.
        stacks: stacks in each side's wall, e.g. ``{"E": 17, "S": 17, "W": 17, "N": 17}`` for
            136 tiles (108 tiles: 14, 13, 14, 13).
        dealer: the dealer's side (E, S, W or N).

    Raises:
        DiceError: a value outside 1-6, the wrong number of values, an unknown side or method,
            or a wall of fewer than 1 stack.
    """
    m = Method.parse(method)
    _check_side(dealer)
    for side in SIDES:
        if side not in stacks or not isinstance(stacks[side], int) or stacks[side] < 1:
            raise DiceError(f"stacks per side must give a positive number for each of E, S, W, N, got {dict(stacks)}")
    want = 4 if m is Method.TWO_THROW else 2
    if len(dice) != want:
        raise DiceError(f"the {m.value} method needs {want} dice values, got {len(dice)}")
    for v in dice:
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 6:
            raise DiceError(f"a die shows 1 to 6, got {v!r}")
    if m is Method.TWO_THROW:
        first = Throw(dealer, (dice[0], dice[1]))
        second = Throw(seat_from_count(dealer, first.total), (dice[2], dice[3]))
        throws: tuple[Throw, ...] = (first, second)
        counting_side = second.side
        count = first.total + second.total
    else:
        first = Throw(dealer, (dice[0], dice[1]))
        throws = (first,)
        big, small = max(dice), min(dice)
        pointer, count = {Method.ONE_THROW: (big, small), Method.SUM_SMALLER: (first.total, small),
                          Method.SUM_COUNT: (first.total, first.total)}[m]
        counting_side = seat_from_count(dealer, pointer)
    wall, stack = _locate(counting_side, count, stacks)
    first_stacks = (_advance(wall, stack, 1, stacks), _advance(wall, stack, 2, stacks))
    d = SIDES.index(dealer)
    order = tuple(SIDES[(d + i) % 4] for i in range(4))
    return WallBreak(m, dealer, throws, counting_side, count, wall, stack, first_stacks, order)


def _check_side(side: str) -> None:
    if side not in SIDES:
        raise DiceError(f"side {side!r} unknown: use E, S, W or N")


def _left_neighbour(side: str) -> str:
    """The wall that continues a wall past its left end: the wall of the owner's 上家."""
    return SIDES[(SIDES.index(side) - 1) % 4]


def _locate(side: str, count: int, stacks: Mapping[str, int]) -> tuple[str, int]:
    """The ``count``-th stack from the right end of ``side``'s wall, going on into the walls to the left."""
    while count > stacks[side]:
        count -= stacks[side]
        side = _left_neighbour(side)
    return side, count


def _advance(side: str, stack: int, k: int, stacks: Mapping[str, int]) -> tuple[str, int]:
    return _locate(side, stack + k, stacks)
