"""Counting the fans of a winning hand (第九条), under a rule profile.

The calculator reads every possible shape of the hand (the regular four sets and a pair, seven
pairs, thirteen orphans, honors and knitted tiles, a knitted straight with one set and a pair, nine
gates) and counts the fans of each reading; the reading with the highest total wins (就高不就低).

The five counting principles of 第十条 3 are applied where the fans are found:

* 不重复 (no repetition): a fan that another fan implies is not counted; the ``_exclusions``
  step below applies each fan's 不计 set, which its spec (``scoring.fans``) gives, from the rules
  text plus the fans it necessarily contains.
* 不拆移 (no splitting): sets that make a fan together are not broken up to make another.
* 不得相同 (no identical reuse) and 套算一次 (combine once): among chows, a set may pair with an
  already-combined set only once; with four chows at most three pair fans count, with three chows
  at most two (``_limit_chow_pairs``).
* 就高不就低 (take the higher): the reading with the higher total is chosen.

Tie-break between readings with the same total (deterministic): readings are taken in canonical
order (sets by their tiles, lowest first, a pung of a tile before a chow starting on it); the first
reading with the highest total is chosen, except that a later reading of the same total that has
Pure Triple Chow (23) or Triple Pung (32), or any regular reading equal to a seven-pairs reading,
takes its place. This is the reference calculator's order, so both agree on every hand.

Each detector records, as it counts a fan, the evidence of it (``Reading.evidence``): the sets it
used (pack indices of the reading), or the winning tile, the four alike, the knitted straight, or
the whole hand. ``scoring.score`` only writes them in notation.

Fan numbers used below are the numbers of the rules table; ``MIXED_KONGS`` (82) is the index
used internally for 明暗杠, which has no number.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from functools import reduce
from itertools import combinations, compress
from operator import and_, itemgetter
from typing import Callable

from .decompose import CHOW, KONG, PAIR, PUNG, Pack, regular_divisions, waiting_tiles
from .decompose import unique_wait as unique_wait_of
from .fans import FANS, MELDED_AND_CONCEALED_KONG
from .tiles import (DRAGONS, GREEN_TILES, KNITTED_STRAIGHTS, REVERSIBLE_TILES, TERMINALS, THIRTEEN_ORPHANS_TILES,
                    WINDS, tile_name, tiles_to_string)

# --- fan numbers (第九条) -------------------------------------------------------------------
BIG_FOUR_WINDS, BIG_THREE_DRAGONS, ALL_GREEN, NINE_GATES, FOUR_KONGS = 1, 2, 3, 4, 5
SEVEN_SHIFTED_PAIRS, THIRTEEN_ORPHANS, ALL_TERMINALS, LITTLE_FOUR_WINDS = 6, 7, 8, 9
LITTLE_THREE_DRAGONS, ALL_HONORS, FOUR_CONCEALED_PUNGS, PURE_TERMINAL_CHOWS = 10, 11, 12, 13
QUADRUPLE_CHOW, FOUR_PURE_SHIFTED_PUNGS, FOUR_PURE_SHIFTED_CHOWS, THREE_KONGS = 14, 15, 16, 17
ALL_TERMINALS_AND_HONORS, SEVEN_PAIRS, GREATER_HONORS_KNITTED, ALL_EVEN_PUNGS = 18, 19, 20, 21
FULL_FLUSH, PURE_TRIPLE_CHOW, PURE_SHIFTED_PUNGS, UPPER_TILES, MIDDLE_TILES = 22, 23, 24, 25, 26
LOWER_TILES, PURE_STRAIGHT, THREE_SUITED_TERMINAL_CHOWS, PURE_SHIFTED_CHOWS = 27, 28, 29, 30
ALL_FIVE, TRIPLE_PUNG, THREE_CONCEALED_PUNGS, LESSER_HONORS_KNITTED = 31, 32, 33, 34
KNITTED_STRAIGHT, UPPER_FOUR, LOWER_FOUR, BIG_THREE_WINDS, MIXED_STRAIGHT = 35, 36, 37, 38, 39
REVERSIBLE, MIXED_TRIPLE_CHOW, MIXED_SHIFTED_PUNGS, CHICKEN_HAND = 40, 41, 42, 43
LAST_TILE_DRAW, LAST_TILE_CLAIM, OUT_WITH_REPLACEMENT_TILE, ROBBING_THE_KONG = 44, 45, 46, 47
ALL_PUNGS, HALF_FLUSH, MIXED_SHIFTED_CHOWS, ALL_TYPES, MELDED_HAND = 48, 49, 50, 51, 52
TWO_CONCEALED_KONGS, TWO_DRAGON_PUNGS, OUTSIDE_HAND, FULLY_CONCEALED_HAND = 53, 54, 55, 56
TWO_MELDED_KONGS, LAST_TILE, DRAGON_PUNG, PREVALENT_WIND, SEAT_WIND = 57, 58, 59, 60, 61
CONCEALED_HAND, ALL_CHOWS, TILE_HOG, DOUBLE_PUNG, TWO_CONCEALED_PUNGS = 62, 63, 64, 65, 66
CONCEALED_KONG, ALL_SIMPLES, PURE_DOUBLE_CHOW, MIXED_DOUBLE_CHOW = 67, 68, 69, 70
SHORT_STRAIGHT, TWO_TERMINAL_CHOWS, PUNG_OF_TERMINALS_OR_HONORS, MELDED_KONG = 71, 72, 73, 74
ONE_VOIDED_SUIT, NO_HONORS, EDGE_WAIT, CLOSED_WAIT, SINGLE_WAIT, SELF_DRAWN = 75, 76, 77, 78, 79, 80
FLOWER_TILES = 81
MIXED_KONGS = 82  # 明暗杠 (no number in the table)
N_SLOTS = 83

#: Points by fan number (index 82: 明暗杠), from the specs of ``scoring.fans``.
POINTS = [0] * N_SLOTS
for _n, _fan in FANS.items():
    POINTS[_n] = _fan.points
POINTS[MIXED_KONGS] = MELDED_AND_CONCEALED_KONG.points


@dataclasses.dataclass(frozen=True, slots=True)
class RuleProfile:
    """Rule options in which the 1998 rules text and current competition practice differ.

    Attributes:
        name: ``"mcr"`` (current practice, as the reference calculator PyMahjongGB) or
            ``"mcr-1998"`` (the 1998 text taken literally).
        mixed_kongs_fan: one melded and one concealed kong score 明暗杠 5 points (practice) instead
            of 明杠 1 + 暗杠 2 (the table of 1998 has no 明暗杠).
        knitted_straight_all_chows: a knitted straight 组合龙 with a chow and a pair of a numbered
            tile also scores All Chows 平和 (practice). The 1998 text defines 平和 as four chows
            (由4副顺子及序数牌作将组成) and a chow 顺子 as three consecutive tiles of one suit
            (第五条 12), which the knitted straight's nine tiles are not.
        seven_pairs_set_fans: seven pairs may also score All Green, All Honors, All Terminals, All
            Terminals and Honors and the rank-range fans (Upper/Middle/Lower Tiles, Upper/Lower
            Four) (practice). The 1998 text defines those fans by sets and pair (由…顺子、刻子、将牌
            组成的和牌), so literally seven pairs cannot have them.
        strict_no_repetition: 不重复原则 taken literally: One Voided Suit is not counted with fans
            that necessarily void a suit (Big/Little Three Dragons, Big Three Winds, Quadruple
            Chow, Four Pure Shifted Pungs/Chows), and All Terminals excludes 同刻 of every size
            (Triple Pung too: 清幺九 不计…同刻).
    """

    name: str
    mixed_kongs_fan: bool
    knitted_straight_all_chows: bool
    seven_pairs_set_fans: bool
    strict_no_repetition: bool


MCR = RuleProfile("mcr", mixed_kongs_fan=True, knitted_straight_all_chows=True, seven_pairs_set_fans=True,
                  strict_no_repetition=False)
MCR_1998 = RuleProfile("mcr-1998", mixed_kongs_fan=False, knitted_straight_all_chows=False,
                       seven_pairs_set_fans=False, strict_no_repetition=True)
PROFILES = {p.name: p for p in (MCR, MCR_1998)}


def rule_profile(rules: "str | RuleProfile") -> RuleProfile:
    """The profile named ``rules`` (``"mcr"`` or ``"mcr-1998"``), or ``rules`` itself when it is one.

    Raises:
        ScoringError: ``bad-value`` for another name or type.
    """
    if isinstance(rules, RuleProfile):
        return rules
    found = PROFILES.get(rules) if isinstance(rules, str) else None
    if found is None:
        from .errors import ScoringError
        raise ScoringError("bad-value", f"rules {rules!r} unknown: allowed are {', '.join(PROFILES)}")
    return found


class Reading:
    """The fans of one reading of the hand.

    ``fans`` is a list indexed by fan number (index 82 is 明暗杠) holding counts; ``packs`` the
    sets and pair of the reading (declared melds first) or ``()`` for a shape without sets;
    ``shape`` names the winning shape; ``evidence`` is indexed like ``fans``: for each counted
    fan, what its detector used, as a tuple of indices into ``packs`` (the sets) and texts (a
    tile, a knitted straight), or ``None`` for the whole hand. A regular reading records it when
    first read (its detectors run again on that reading, recording: until then ``_evidence``
    holds the arguments of ``_regular_reading``), so that the readings that are only compared,
    and the hands whose evidence nobody reads, do not pay for it. ``total``: the points of
    ``fans`` (a regular reading's, worked out by ``_regular_reading``; a special shape's set by
    ``_tally``).
    """

    __slots__ = ("fans", "packs", "shape", "_evidence", "total")

    def __init__(self, fans: list[int], packs: tuple[Pack, ...], shape: str, evidence: "list | tuple",
                 total: int = 0) -> None:
        self.fans = fans
        self.packs = packs
        self.shape = shape
        self._evidence = evidence
        self.total = total

    @property
    def evidence(self) -> list:
        ev = self._evidence
        if ev.__class__ is tuple:  # a regular reading's: the arguments to record it with
            ev = self._evidence = _regular_reading(*ev, True).evidence
        return ev


#: Evidence of a fan whose detector reads the whole hand (``Reading.evidence``).
WHOLE_HAND = None


def _first_trio(tiles: list[int], at: list[int], f: int, fan_of) -> tuple[int, ...]:
    """Evidence of a fan of three sets: the first three sets in reading order (indices ``at``,
    tiles ``tiles``) for which ``fan_of`` (of their sorted tiles) answers ``f``."""
    for a, b, c in combinations(range(len(tiles)), 3):
        if fan_of(*sorted((tiles[a], tiles[b], tiles[c]))) == f:
            return at[a], at[b], at[c]
    raise AssertionError(f"fan {f} counted without its three sets")


def _all_pairs(tiles: list[int], at: list[int], g: int, fan_of) -> tuple[int, ...]:
    """Evidence of a fan of two sets: every set that makes fan ``g`` with another (``fan_of``
    of the two tiles), in reading order. 套算一次 limits the count, not the sets shown."""
    used = set()
    for a, b in combinations(range(len(tiles)), 2):
        if fan_of(tiles[a], tiles[b]) == g:
            used.add(at[a])
            used.add(at[b])
    return tuple(sorted(used))


# --- combinations of chows ----------------------------------------------------------------------

def _two_chows(a: int, b: int) -> int:
    """Fan of two chows given by middle tiles (unordered), or 0."""
    if a // 10 != b // 10:
        return MIXED_DOUBLE_CHOW if a % 10 == b % 10 else 0
    if a + 3 == b or b + 3 == a:
        return SHORT_STRAIGHT
    ra, rb = a % 10, b % 10
    if (ra == 2 and rb == 8) or (ra == 8 and rb == 2):
        return TWO_TERMINAL_CHOWS
    if a == b:
        return PURE_DOUBLE_CHOW
    return 0


def _three_chows(a: int, b: int, c: int) -> int:
    """Fan of three chows given by sorted middle tiles, or 0."""
    sa, sb, sc = a // 10, b // 10, c // 10
    if sa != sb and sa != sc and sb != sc:
        ranks = sorted((a % 10, b % 10, c % 10))
        if ranks[0] + 1 == ranks[1] and ranks[1] + 1 == ranks[2]:
            return MIXED_SHIFTED_CHOWS
        if ranks[0] == ranks[2]:
            return MIXED_TRIPLE_CHOW
        if ranks == [2, 5, 8]:
            return MIXED_STRAIGHT
        return 0
    if a + 3 == b and b + 3 == c:
        return PURE_STRAIGHT
    if (a + 2 == b and b + 2 == c) or (a + 1 == b and b + 1 == c):
        return PURE_SHIFTED_CHOWS
    if a == b == c:
        return PURE_TRIPLE_CHOW
    return 0


class _Answers(dict):
    """A detector of a combination of sets, by its arguments (sorted tile codes: under 10,000
    keys), answered when first asked for: ``_THREE_CHOWS_OF[a, b, c] == _three_chows(a, b, c)``."""

    __slots__ = ("detector",)

    def __init__(self, detector: Callable[..., int]) -> None:
        super().__init__()
        self.detector = detector

    def __missing__(self, key: tuple[int, ...]) -> int:
        self[key] = f = self.detector(*key)
        return f


def _two_set_answers(detector: Callable[[int, int], int]) -> list[list[int]]:
    """A detector of two sets, by their tiles: ``table[a][b] == detector(a, b)``."""
    return [[detector(a, b) for b in range(38)] for a in range(38)]


#: The detectors of the combinations of chows and of pungs as tables: the counting functions
#: below read them (a lookup instead of a call); the detectors say what each fan is.
_TWO_CHOWS_OF = _two_set_answers(_two_chows)
_THREE_CHOWS_OF = _Answers(_three_chows)


def _four_chows(a: int, b: int, c: int, d: int) -> int:
    if (a + 2 == b and b + 2 == c and c + 2 == d) or (a + 1 == b and b + 1 == c and c + 1 == d):
        return FOUR_PURE_SHIFTED_CHOWS
    if a == b == c == d:
        return QUADRUPLE_CHOW
    return 0


_PAIR_FAN_ORDER = (PURE_DOUBLE_CHOW, MIXED_DOUBLE_CHOW, SHORT_STRAIGHT, TWO_TERMINAL_CHOWS)
_PAIR_COUNTS = itemgetter(*_PAIR_FAN_ORDER)


def _limit_chow_pairs(pair_fans: list[int], limit: int, ft: list[int]) -> None:
    """不得相同 / 套算一次: keep at most ``limit`` of the two-chow fans, dropping repeats first.

    Drops from the cheapest-to-lose end (Two Terminal Chows, then Short Straight, Mixed Double
    Chow, Pure Double Chow), first down to one of each kind, then further if still over the limit.
    """
    counts = [0, 0, 0, 0]
    n = 0
    for f in pair_fans:
        if f:
            counts[_PAIR_FAN_ORDER.index(f)] += 1
            n += 1
    keep = 1
    while n > limit and keep >= 0:
        idx = 3
        while n > limit and idx >= 0:
            while counts[idx] > keep and n > limit:
                counts[idx] -= 1
                n -= 1
            idx -= 1
        keep -= 1
    for f, c in zip(_PAIR_FAN_ORDER, counts):
        ft[f] = c


def _count_four_chows(chows: list[int], at: list[int], pair_at: int, ft: list[int], ev: list) -> None:
    """Fans of four chows (middle tiles ``chows`` in reading order, at pack indices ``at``): one
    fan of four, or of three plus one pair fan of the fourth (套算一次), or pair fans (不得相同)."""
    m = sorted(chows)
    f = _four_chows(*m)
    if f:
        ft[f] = 1
        ev[f] = (*at, pair_at)
        return
    # three of the four make a fan; the fourth may combine once with one of them (套算一次)
    for i, j, k, x in ((0, 1, 2, 3), (0, 1, 3, 2), (0, 2, 3, 1), (1, 2, 3, 0)):
        f = _THREE_CHOWS_OF[m[i], m[j], m[k]]
        if f:
            ft[f] = 1
            if ev is not _NO_EVIDENCE:  # counting only: no evidence to record
                ev[f] = _first_trio(chows, at, f, _three_chows)
            extra = [_TWO_CHOWS_OF[m[i]][m[x]], _TWO_CHOWS_OF[m[j]][m[x]], _TWO_CHOWS_OF[m[k]][m[x]]]
            for g in _PAIR_FAN_ORDER:
                if g in extra:
                    ft[g] = 1
                    if ev is not _NO_EVIDENCE:  # counting only: no evidence to record
                        ev[g] = _all_pairs(chows, at, g, _two_chows)
                    break
            return
    pairs = [_TWO_CHOWS_OF[m[0]][m[1]], _TWO_CHOWS_OF[m[0]][m[2]], _TWO_CHOWS_OF[m[0]][m[3]],
             _TWO_CHOWS_OF[m[1]][m[2]], _TWO_CHOWS_OF[m[1]][m[3]], _TWO_CHOWS_OF[m[2]][m[3]]]
    limit = 3
    # a chow related to no other reduces how many pairs can be formed
    for a, b, c in ((0, 1, 2), (0, 3, 4), (1, 3, 5), (2, 4, 5)):
        if not pairs[a] and not pairs[b] and not pairs[c]:
            limit -= 1
    if limit > 0:
        _limit_chow_pairs(pairs, limit, ft)
        _pair_evidence(pairs, _FOUR_PAIRS, chows, at, ft, ev)


#: The pairs of positions whose two-chow fans ``_count_three_chows``/``_count_four_chows`` list.
_THREE_PAIRS = ((0, 1), (0, 2), (1, 2))
_FOUR_PAIRS = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))


def _pair_evidence(pairs: list[int], positions, chows: list[int], at: list[int], ft: list[int], ev: list) -> None:
    """Evidence of the two-chow fans counted: every chow in a pair with that fan (``pairs``: the
    fans of the pairs of ``positions`` in the sorted chows). The sorted chows are the reading's
    chows in another order, so the pairs are the same pairs of sets."""
    if ev is _NO_EVIDENCE or not any(_PAIR_COUNTS(ft)):  # counting only, or no such fan
        return
    order = sorted(range(len(chows)), key=chows.__getitem__)  # sorted position -> reading position
    for g in _PAIR_FAN_ORDER:
        if ft[g]:
            ev[g] = tuple(sorted({at[order[k]] for f, pos in zip(pairs, positions) if f == g for k in pos}))


def _count_three_chows(chows: list[int], at: list[int], ft: list[int], ev: list) -> None:
    """Fans of three chows (middle tiles in reading order, at pack indices ``at``)."""
    m = sorted(chows)
    f = _THREE_CHOWS_OF[m[0], m[1], m[2]]
    if f:
        ft[f] = 1
        ev[f] = tuple(at)
        return
    pairs = [_TWO_CHOWS_OF[m[0]][m[1]], _TWO_CHOWS_OF[m[0]][m[2]], _TWO_CHOWS_OF[m[1]][m[2]]]
    _limit_chow_pairs(pairs, 2, ft)
    _pair_evidence(pairs, _THREE_PAIRS, chows, at, ft, ev)


# --- combinations of pungs ----------------------------------------------------------------------

def _two_pungs(a: int, b: int) -> int:
    if a < 30 and b < 30:
        return DOUBLE_PUNG if a % 10 == b % 10 else 0
    if a in DRAGONS and b in DRAGONS:
        return TWO_DRAGON_PUNGS
    return 0


def _three_pungs(a: int, b: int, c: int) -> int:
    """Fan of three pungs given by sorted tiles, or 0."""
    if a < 30 and b < 30 and c < 30:
        if a // 10 != b // 10 and a // 10 != c // 10 and b // 10 != c // 10:
            ranks = sorted((a % 10, b % 10, c % 10))
            if ranks[0] + 1 == ranks[1] and ranks[1] + 1 == ranks[2]:
                return MIXED_SHIFTED_PUNGS
            if ranks[0] == ranks[2]:
                return TRIPLE_PUNG
        elif a + 1 == b and b + 1 == c:
            return PURE_SHIFTED_PUNGS
        return 0
    if a in WINDS and b in WINDS and c in WINDS:
        return BIG_THREE_WINDS
    if a == 35 and b == 36 and c == 37:
        return BIG_THREE_DRAGONS
    return 0


_TWO_PUNGS_OF = _two_set_answers(_two_pungs)
_THREE_PUNGS_OF = _Answers(_three_pungs)


def _count_four_pungs(pungs: list[int], at: list[int], ft: list[int], ev: list) -> None:
    """Fans of four pungs or kongs (tiles in reading order, at pack indices ``at``): one fan of
    four, or of three plus one pair fan of the fourth (套算一次), or pair fans."""
    m = sorted(pungs)
    a, b, c, d = m
    if a < 30 and a + 1 == b and b + 1 == c and c + 1 == d:
        ft[FOUR_PURE_SHIFTED_PUNGS] = 1
        ev[FOUR_PURE_SHIFTED_PUNGS] = tuple(at)
        return
    if (a, b, c, d) == (31, 32, 33, 34):
        ft[BIG_FOUR_WINDS] = 1
        ev[BIG_FOUR_WINDS] = tuple(at)
        return
    for i, j, k, free in ((0, 1, 2, 3), (0, 1, 3, 2), (0, 2, 3, 1), (1, 2, 3, 0)):
        f = _THREE_PUNGS_OF[m[i], m[j], m[k]]
        if f:
            ft[f] = 1
            if ev is not _NO_EVIDENCE:  # counting only: no evidence to record
                ev[f] = _first_trio(pungs, at, f, _three_pungs)
            # the fourth pung may combine once (套算一次)
            for o in range(4):
                if o != free:
                    g = _TWO_PUNGS_OF[m[o]][m[free]]
                    if g:
                        ft[g] += 1
                        if ev is not _NO_EVIDENCE:  # counting only: no evidence to record
                            ev[g] = _all_pairs(pungs, at, g, _two_pungs)
                        break
            return
    for i in range(4):
        for j in range(i + 1, 4):
            g = _TWO_PUNGS_OF[m[i]][m[j]]
            if g:
                ft[g] += 1
                if ev[g] is None and ev is not _NO_EVIDENCE:  # recording, and not recorded yet
                    ev[g] = _all_pairs(pungs, at, g, _two_pungs)


def _count_three_pungs(pungs: list[int], at: list[int], ft: list[int], ev: list) -> None:
    """Fans of three pungs or kongs (tiles in reading order, at pack indices ``at``)."""
    m = sorted(pungs)
    f = _THREE_PUNGS_OF[m[0], m[1], m[2]]
    if f:
        ft[f] = 1
        ev[f] = tuple(at)
        return
    for i, j in ((0, 1), (0, 2), (1, 2)):
        g = _TWO_PUNGS_OF[m[i]][m[j]]
        if g:
            ft[g] += 1
            if ev[g] is None and ev is not _NO_EVIDENCE:  # recording, and not recorded yet
                ev[g] = _all_pairs(pungs, at, g, _two_pungs)


def _count_kongs_and_concealed_pungs(cp_at: list[int], mk_at: list[int], ck_at: list[int], ft: list[int], ev: list,
                                     rules: RuleProfile) -> None:
    """Kong fans and concealed-pung fans from the pack indices of the concealed pungs (cp_at),
    melded kongs (mk_at) and concealed kongs (ck_at), each in reading order. A concealed kong also
    counts as a concealed pung. Evidence: the kongs, or the concealed pungs and kongs."""
    mk, ck = len(mk_at), len(ck_at)
    kongs = mk + ck
    if kongs == 1:
        f = MELDED_KONG if mk else CONCEALED_KONG
        ft[f] = 1
        ev[f] = (*mk_at, *ck_at)
    elif kongs == 2:
        if ck == 0:
            ft[TWO_MELDED_KONGS] = 1
            ev[TWO_MELDED_KONGS] = tuple(mk_at)
        elif ck == 1:
            if rules.mixed_kongs_fan:
                ft[MIXED_KONGS] = 1
                ev[MIXED_KONGS] = (*mk_at, *ck_at)
            else:
                ft[MELDED_KONG] = 1
                ev[MELDED_KONG] = tuple(mk_at)
                ft[CONCEALED_KONG] = 1
                ev[CONCEALED_KONG] = tuple(ck_at)
        else:
            ft[TWO_CONCEALED_KONGS] = 1
            ev[TWO_CONCEALED_KONGS] = tuple(ck_at)
    elif kongs == 3:
        ft[THREE_KONGS] = 1
        ev[THREE_KONGS] = (*mk_at, *ck_at)
    elif kongs == 4:
        ft[FOUR_KONGS] = 1
        ev[FOUR_KONGS] = (*mk_at, *ck_at)
    concealed = len(cp_at) + ck
    # two concealed kongs already include two concealed pungs (双暗杠 不计双暗刻)
    if concealed == 2 and not (kongs == 2 and ck == 2):
        ft[TWO_CONCEALED_PUNGS] = 1
        ev[TWO_CONCEALED_PUNGS] = (*cp_at, *ck_at)
    elif concealed == 3:
        ft[THREE_CONCEALED_PUNGS] = 1
        ev[THREE_CONCEALED_PUNGS] = (*cp_at, *ck_at)
    elif concealed >= 4:
        ft[FOUR_CONCEALED_PUNGS] = 1
        ev[FOUR_CONCEALED_PUNGS] = (*cp_at, *ck_at)


# --- hand-wide properties ----------------------------------------------------------------------
# They read the hand's kinds of tile as four bit masks (characters, bamboo, dots, honors): bit r
# for rank r of a suit, bit 1-7 for E S W N C F P.

#: The bit of each tile code in its suit's mask.
TILE_BIT = [1 << (t % 10 if t < 30 else t - 30) for t in range(38)]


class _Bits:
    """Masks of tile kinds (as ``TILE_BIT``), in a namespace so that no module constant of this
    file other than a fan number has a fan's value."""

    TERMINALS = 1 << 1 | 1 << 9
    WIND_TILES = sum(TILE_BIT[t] for t in WINDS)
    DRAGON_TILES = sum(TILE_BIT[t] for t in DRAGONS)
    REVERSIBLE = tuple(sum(TILE_BIT[t] for t in REVERSIBLE_TILES if t // 10 == suit) for suit in range(4))
    GREEN = tuple(sum(TILE_BIT[t] for t in GREEN_TILES if t // 10 == suit) for suit in range(4))


#: ``1 << code`` for each tile code: the kinds of tile of a count table as one integer, whose bits
#: ``10 * suit + rank`` (``30 + honor``) are each suit's mask (``tile_masks``) shifted.
_CODE_BIT = [1 << t for t in range(38)]
#: ``bytes.translate`` table: a count made the binary digit ``b"1"`` when there is a tile, ``b"0"``
#: when there is none; the table so translated and reversed, read in base 2, is that integer.
_BINARY_DIGIT = b"0" + b"1" * 255


def tile_masks(table: "list[int] | bytes") -> tuple[int, int, int, int]:
    """The bit masks (characters, bamboo, dots, honors; bits as ``TILE_BIT``) of the kinds of tile
    in a count table indexed by tile code (length 38, counts 0-255; a list, bytes or bytearray).

    The kinds are one integer (bit ``code`` set when there is a tile, as ``_CODE_BIT``) read in
    base 2 from the table made binary digits (``_BINARY_DIGIT``; ``_Situation`` does the same
    inline): three C-level calls instead of a loop over the 38 counts.
    """
    kinds = int(bytes(table).translate(_BINARY_DIGIT)[::-1], 2)
    return kinds & 0x3FE, kinds >> 10 & 0x3FE, kinds >> 20 & 0x3FE, kinds >> 30


def _suits(masks: tuple[int, int, int, int], ft: list[int]) -> None:
    """No Honors, One Voided Suit, Half Flush, Full Flush, All Types (fans 76, 75, 49, 22, 51)."""
    m, s, p, honors = masks
    n_suits = (m != 0) + (s != 0) + (p != 0)
    if not honors:
        ft[NO_HONORS] = 1
    if n_suits == 2:
        ft[ONE_VOIDED_SUIT] = 1
    elif n_suits == 1:
        if honors:
            ft[HALF_FLUSH] = 1
        else:
            ft[FULL_FLUSH] = 1
            ft[NO_HONORS] = 0
    elif n_suits == 3 and honors & _Bits.WIND_TILES and honors & _Bits.DRAGON_TILES:
        ft[ALL_TYPES] = 1


def _rank_range(masks: tuple[int, int, int, int], ft: list[int]) -> None:
    """Upper/Middle/Lower Tiles and Upper/Lower Four (fans 25-27, 36, 37)."""
    m, s, p, honors = masks
    if honors:
        return
    ranks = m | s | p
    if not ranks & ~0b11110:  # 1-4
        ft[LOWER_FOUR if ranks & 1 << 4 else LOWER_TILES] = 1
    elif not ranks & 0b111110:  # 6-9
        ft[UPPER_FOUR if ranks & 1 << 6 else UPPER_TILES] = 1
    elif not ranks & ~0b1110000:  # 4-6
        ft[MIDDLE_TILES] = 1


def _tile_traits(masks: tuple[int, int, int, int], ft: list[int], set_fans: bool) -> None:
    """All Simples, Reversible Tiles, All Green, All Honors, All Terminals, All Terminals and
    Honors (fans 68, 40, 3, 11, 8, 18). ``set_fans`` False skips the last four (1998 seven pairs)."""
    m, s, p, honors = masks
    ranks = m | s | p
    if not honors and not ranks & _Bits.TERMINALS:
        ft[ALL_SIMPLES] = 1
    rev = _Bits.REVERSIBLE
    if not m & ~rev[0] and not s & ~rev[1] and not p & ~rev[2] and not honors & ~rev[3]:
        ft[REVERSIBLE] = 1
    if not set_fans:
        return
    green = _Bits.GREEN
    if not m & ~green[0] and not s & ~green[1] and not p & ~green[2] and not honors & ~green[3]:
        ft[ALL_GREEN] = 1
    if ft[ALL_SIMPLES]:
        return
    if not ranks:
        ft[ALL_HONORS] = 1
    elif not ranks & ~_Bits.TERMINALS:
        ft[ALL_TERMINALS if not honors else ALL_TERMINALS_AND_HONORS] = 1


#: What each pack is for the fans of every set and the pair (``_pack_traits``), as bits:
#: 1 a terminal or honor in it (Outside Hand), 2 a 5 in it (All Five), 4 even pung/kong/pair.
_PACK_TRAITS = {}
for _kind in (CHOW, PUNG, KONG, PAIR):
    for _t in range(1, 38):
        _r = _t % 10
        if _t < 30 and not _r or _kind == CHOW and (_t > 30 or _r in (1, 9)):
            continue
        if _t > 30:
            _bits = 1
        elif _kind == CHOW:
            _bits = 1 if _r in (2, 8) else 2 if 4 <= _r <= 6 else 0
        else:
            _bits = 1 if _r in (1, 9) else 2 if _r == 5 else 4 if _r % 2 == 0 else 0
        _PACK_TRAITS[(_kind, _t, False)] = _PACK_TRAITS[(_kind, _t, True)] = _bits


#: The traits (as ``_PACK_TRAITS``) of a chow by its middle tile, of a pung, kong or pair by its tile.
_CHOW_TRAITS = [_PACK_TRAITS.get((CHOW, t, False), 0) for t in range(38)]
_PUNG_TRAITS = [_PACK_TRAITS.get((PUNG, t, False), 0) for t in range(38)]


def _pack_traits(every: int, ft: list[int]) -> None:
    """Outside Hand, All Five, All Even Pungs (fans 55, 31, 21): a property of every set and the
    pair, from ``every``, the traits (``_PACK_TRAITS``) all five packs share."""
    if every:
        if every & 1:
            ft[OUTSIDE_HAND] = 1
        elif every & 2:
            ft[ALL_FIVE] = 1
        else:
            ft[ALL_EVEN_PUNGS] = 1


def _win_flags(ctx, fourth_tile: bool, ft: list[int]) -> None:
    """Fans of the way the hand was won: 58, 80, 44, 45, 46, 47."""
    if fourth_tile:
        ft[LAST_TILE] = 1
    if ctx.self_drawn:
        ft[SELF_DRAWN] = 1
        if ctx.last_tile:
            ft[LAST_TILE_DRAW] = 1
            ft[SELF_DRAWN] = 0
        if ctx.kong_replacement:
            ft[OUT_WITH_REPLACEMENT_TILE] = 1
            ft[SELF_DRAWN] = 0
    else:
        if ctx.last_tile:
            ft[LAST_TILE_CLAIM] = 1
        if ctx.robbing_kong:
            ft[ROBBING_THE_KONG] = 1
            ft[LAST_TILE] = 0


def _wait_fan(concealed_packs, win: int, ft: list[int]) -> None:
    """Edge, Closed or Single Wait (77-79) for a hand with one waiting tile: where the winning
    tile sits in the concealed sets; at most one of the three (edge before closed before single)."""
    if ft[MELDED_HAND] or ft[FOUR_KONGS]:
        return
    edge = closed = single = False
    for kind, t, _ in concealed_packs:
        if kind == CHOW:
            if t == win:
                closed = True
            elif t + 1 == win or t - 1 == win:
                edge = True
        elif kind == PAIR and t == win:
            single = True
    if edge:
        ft[EDGE_WAIT] = 1
    elif closed:
        ft[CLOSED_WAIT] = 1
    elif single:
        ft[SINGLE_WAIT] = 1


def _wind_pung(tile: int, at: int, ctx, ft: list[int], ev: list) -> None:
    """Prevalent Wind and Seat Wind (60, 61) for a wind pung (at pack index ``at``); the pung then
    no longer counts as Pung of Terminals or Honors, unless a bigger wind/honor fan has already
    absorbed it."""
    absorbed = ft[BIG_THREE_WINDS] or ft[ALL_TERMINALS_AND_HONORS] or ft[ALL_HONORS] or ft[LITTLE_FOUR_WINDS]
    prevalent = ctx.prevalent_wind.tile
    seat = ctx.seat_wind.tile
    if tile == prevalent:
        ft[PREVALENT_WIND] = 1
        ev[PREVALENT_WIND] = (at,)
        if not absorbed:
            ft[PUNG_OF_TERMINALS_OR_HONORS] -= 1
    if tile == seat:
        ft[SEAT_WIND] = 1
        ev[SEAT_WIND] = (at,)
        if seat != prevalent and not absorbed:
            ft[PUNG_OF_TERMINALS_OR_HONORS] -= 1


def _terminal_pungs(pungs: list[int], at: list[int], ctx) -> tuple[int, ...]:
    """Evidence of Pung of Terminals or Honors (73): the pungs of terminals and of the winds
    that score neither as prevalent nor as seat wind (the dragons count as 59)."""
    scoring_winds = (ctx.prevalent_wind.tile, ctx.seat_wind.tile)
    return tuple(i for i, t in zip(at, pungs) if t in TERMINALS or (t in WINDS and t not in scoring_winds))


#: The fans whose evidence is the winning tile: the way the hand was won (44-47, 58, 80,
#: ``_win_flags``) and the waits (77-79, ``_wait_fan``). Their detectors read only the winning
#: tile and how it came, so ``_Situation`` sets it once per hand in every reading's evidence.
_WIN_TILE_FANS = (LAST_TILE_DRAW, LAST_TILE_CLAIM, OUT_WITH_REPLACEMENT_TILE, ROBBING_THE_KONG, LAST_TILE,
                  EDGE_WAIT, CLOSED_WAIT, SINGLE_WAIT, SELF_DRAWN)


# 不计 (exclusions) from the specs (``Fan.excludes``), applied in the order of the table: the
# hand's main patterns (fans 1-38) first, then the adjustments of ``_exclusions``, then the rest.
_EXCLUSIONS: tuple[tuple[int, tuple[int, ...]], ...] = tuple(
    (n, f.excludes) for n, f in FANS.items() if f.excludes and n <= BIG_THREE_WINDS)
_EXCLUSIONS_LATE: tuple[tuple[int, tuple[int, ...]], ...] = tuple(
    (n, f.excludes) for n, f in FANS.items() if f.excludes and n > BIG_THREE_WINDS)
# 1998 text, 不重复 taken literally: more exclusions, and the fans that necessarily leave a suit void.
_EXCLUSIONS_1998: tuple[tuple[int, tuple[int, ...]], ...] = tuple(
    (n, f.excludes_1998) for n, f in FANS.items() if f.excludes_1998)
_STRICT_VOIDED = tuple(n for n, f in FANS.items() if f.voids_a_suit)
# The fans of a list that are counted are applied as they are met: the same as reading them all
# first, since no fan of a list excludes another fan of the same list that excludes something.
assert all(not {g for _, gone in lst for g in gone} & {f for f, _ in lst} for lst in (_EXCLUSIONS, _EXCLUSIONS_LATE))
#: What each fan slot excludes (``()`` for none): the main patterns' (slots up to 38) and the rest's.
_EXCLUDES_OF: list[tuple[int, ...]] = [()] * N_SLOTS
for _n, _gone in _EXCLUSIONS + _EXCLUSIONS_LATE:
    _EXCLUDES_OF[_n] = _gone
#: The fans that hold others inside them (``Fan.takes_off``, ``Fan.concealed``): ``(fan,
#: ((inside, n, the fans that exclude inside altogether), ...), concealed)``, applied by ``_inside``.
_INSIDE: tuple[tuple[int, tuple[tuple[int, int, tuple[int, ...]], ...], bool], ...] = tuple(
    (n, tuple((g, k, tuple(x for x, o in FANS.items() if g in o.excludes)) for g, k in f.takes_off), f.concealed)
    for n, f in FANS.items() if f.takes_off or f.concealed)
_INSIDE_OF = {n: (off, concealed) for n, off, concealed in _INSIDE}


def _inside(n: int, ft: list[int], counted: "list[int] | None") -> None:
    """Apply what fan ``n``'s spec says lies inside it (``Fan.takes_off``, ``Fan.concealed``) to
    the fan counts ``ft`` in place; a fan it turns on is added to ``counted`` when given."""
    off, concealed = _INSIDE_OF[n]
    for g, k, whole in off:
        if not any(ft[x] for x in whole):
            ft[g] -= k
            if counted is not None and g not in counted:
                counted.append(g)
    if concealed and ft[FULLY_CONCEALED_HAND]:
        ft[FULLY_CONCEALED_HAND] = 0
        if not ft[SELF_DRAWN]:
            ft[SELF_DRAWN] = 1
            if counted is not None and SELF_DRAWN not in counted:
                counted.append(SELF_DRAWN)
#: The slots that exclude something: the main patterns' (up to 38) and the rest's.
_EXCLUDING = frozenset(n for n, _ in _EXCLUSIONS)
_EXCLUDING_LATE = frozenset(n for n, _ in _EXCLUSIONS_LATE)
#: A reading none of whose counted slots is here has nothing for ``_exclusions`` to do under the
#: current rules: the fans that exclude, and those that hold others inside them (``_INSIDE``).
_EXCLUDING_ANY = _EXCLUDING | _EXCLUDING_LATE | {n for n, _, _ in _INSIDE}


def _exclusions(ft: list[int], rules: RuleProfile, counted: "list[int] | None" = None) -> list[int]:
    """Apply 不计: remove the fans that a counted fan implies (不重复原则).

    ``counted``: the slots of every counted fan, each once, in any order (some may be 0), when the
    caller knows them (else they are listed). Returns it, with any fan the rules add back: the
    slots that may be counted afterwards (some may now be 0), which ``_total`` sums over."""
    if counted is None:
        counted = [*compress(_SLOTS, ft)]
    for n in _EXCLUDING.intersection(counted):  # the counted slots that may exclude (a few, if any)
        if ft[n]:
            for g in _EXCLUDES_OF[n]:
                ft[g] = 0
    if rules.strict_no_repetition:
        for f, gone in _EXCLUSIONS_1998:
            if ft[f]:
                for g in gone:
                    ft[g] = 0
    for n, _, _ in _INSIDE:  # e.g. 四暗刻: 不求人 becomes a plain 自摸; 三风刻: its wind pungs
        if ft[n]:
            _inside(n, ft, counted)
    if rules.strict_no_repetition:
        for f in _STRICT_VOIDED:
            if ft[f]:
                ft[ONE_VOIDED_SUIT] = 0
    for n in _EXCLUDING_LATE.intersection(counted):
        if ft[n]:
            for g in _EXCLUDES_OF[n]:
                ft[g] = 0
    return counted


# --- the readings -------------------------------------------------------------------------------

_CODES = range(len(TILE_BIT))  # every index of a count table
#: The code bits (``_CODE_BIT``) of the tiles that are not reversible, and not green.
_NOT_REVERSIBLE = sum(_CODE_BIT[t] for t in _CODES if t not in REVERSIBLE_TILES)
_NOT_GREEN = sum(_CODE_BIT[t] for t in _CODES if t not in GREEN_TILES)
def _outcome_ids(outcomes: list[tuple[int, ...]]) -> list[int]:
    """Each outcome replaced by a small number, the same for equal outcomes."""
    ids: dict[tuple[int, ...], int] = {}
    return [ids.setdefault(o, len(ids)) for o in outcomes]


def _rank_outcome(ranks: int, honors: int) -> tuple[int, ...]:
    ft = [0] * N_SLOTS
    _tile_traits((ranks, 0, 0, honors), ft, True)
    _rank_range((ranks, 0, 0, honors), ft)
    ft[REVERSIBLE] = ft[ALL_GREEN] = 0  # from the whole hand's tiles: in the key by themselves
    return tuple(ft)


#: What ``_tile_traits`` and ``_rank_range`` make of the ranks present in any suit (a mask as
#: ``TILE_BIT``, bits 1-9) with (bit 10 set) or without honors, but Reversible Tiles and All
#: Green: a number for each outcome (a dozen or so).
_RANK_CLASS = _outcome_ids([_rank_outcome(r & 0x3FE, 0x80 if r >> 10 else 0) for r in range(1 << 11)])
#: What ``_suits`` makes of the number of suits (bits 0-1) and the honors (bits 2-8, as
#: ``TILE_BIT``): a number for each outcome.
_SUITS_CLASS = []
for _k in range(1 << 9):
    _ft = [0] * N_SLOTS
    _suits(((_k & 3) > 0, (_k & 3) > 1, (_k & 3) > 2, _k >> 1 & 0xFE), _ft)
    _SUITS_CLASS.append(tuple(_ft))
_SUITS_CLASS = _outcome_ids(_SUITS_CLASS)
class _Template(list):
    """The fans of a hand's tiles and of its win (a count list by fan slot), with ``slots``: its
    counted slots and Self-Drawn's (which a regular reading may set), each once."""

    __slots__ = ("slots",)


#: The fans of the tiles and of the win (``_Template``), by ``_Situation``'s key.
_TILE_AND_WIN_FANS: dict[int, _Template] = {}


def _tile_and_win_fans(key: int, masks: tuple[int, int, int, int], ctx, fourth_tile: bool) -> _Template:
    """The fans of a hand's tiles (``_suits``, ``_tile_traits``, ``_rank_range``) and of how it was
    won (``_win_flags``), kept under ``key`` (which says all they depend on)."""
    ft = [0] * N_SLOTS
    _suits(masks, ft)
    _tile_traits(masks, ft, True)
    _rank_range(masks, ft)
    _win_flags(ctx, fourth_tile, ft)
    ft = _Template(ft)
    ft.slots = (*(n for n in compress(_SLOTS, ft) if n != SELF_DRAWN), SELF_DRAWN)
    _TILE_AND_WIN_FANS[key] = ft  # at most 16 x 7 x 2 x 2 x 32 keys; in play a few hundred
    return ft


#: ``(notation,)`` of each tile code: the evidence of the fans of the winning tile.
_WIN_EVIDENCE = [(tile_name(t),) if t % 10 or t > 30 else () for t in range(len(TILE_BIT))]
#: The evidence every reading starts from, by winning tile: the winning tile for the fans of how
#: the hand was won and of the wait (``_WIN_TILE_FANS``), the whole hand for the others.
_EVIDENCE_OF_WIN = [[win_ev if n in _WIN_TILE_FANS else WHOLE_HAND for n in range(N_SLOTS)] for win_ev in _WIN_EVIDENCE]


#: ``best_reading``'s ``split`` of a hand without melds.
NO_MELDS: tuple[tuple[int, ...], ...] = ((), (), (), ())


#: 1 for a mask (as ``TILE_BIT``, bits 1-9) with some tile, 0 for none: a list lookup, where a
#: comparison would make a bool.
_ANY_TILE = [0] + [1] * 1023


class _Situation:
    """Everything about the hand that does not depend on the reading (built once per hand)."""

    __slots__ = ("ctx", "rules", "fixed", "standing", "merged", "masks", "win", "fourth_tile", "fans", "split",
                 "hogs")

    def __init__(self, fixed: tuple[Pack, ...], standing: bytes, win: int, ctx, rules: RuleProfile,
                 fourth_tile: bool, merged: bytes, split: tuple[tuple[int, ...], ...]) -> None:
        self.ctx = ctx
        self.rules = rules
        self.fixed = fixed
        self.standing = standing
        self.merged = merged
        kinds = int(merged.translate(_BINARY_DIGIT)[::-1], 2)  # as tile_masks
        m, b, p, honors = kinds & 0x3FE, kinds >> 10 & 0x3FE, kinds >> 20 & 0x3FE, kinds >> 30
        self.masks = masks = (m, b, p, honors)
        # Fans of the tiles themselves (suits, kinds of tile, ranks) and of the way the hand was
        # won are the same in every reading: a regular reading starts from a copy of ``fans``.
        # They depend on the ranks present in any suit and whether there are honors (_RANK_CLASS),
        # the number of suits and the honors (_SUITS_CLASS), whether all tiles are reversible, all
        # green, and on the five win flags: together the key of the fans' template (shared: a
        # reading copies it). (Bits set by conditions, not by bools shifted: ints only.)
        key = (_RANK_CLASS[m | b | p | (1024 if honors else 0)] << 8
               | _SUITS_CLASS[_ANY_TILE[m] + _ANY_TILE[b] + _ANY_TILE[p] | honors << 1]
               | (0 if kinds & _NOT_REVERSIBLE else 1 << 16) | (0 if kinds & _NOT_GREEN else 1 << 17))
        if ctx.self_drawn:
            key |= 1 << 18
        if ctx.last_tile:
            key |= 1 << 19
        if ctx.kong_replacement:
            key |= 1 << 20
        if ctx.robbing_kong:
            key |= 1 << 21
        if fourth_tile:
            key |= 1 << 22
        self.fans = _TILE_AND_WIN_FANS.get(key) or _tile_and_win_fans(key, masks, ctx, fourth_tile)
        # The declared melds' share of every reading (they come first in its packs): the chows'
        # middle tiles, the pungs' and kongs' tiles, the melded and the concealed kongs' indices.
        self.split = split
        self.win = win
        self.fourth_tile = fourth_tile
        self.hogs = ()
        t = merged.find(4)  # four alike somewhere: Tile Hog's tiles (in code order) are those not in a kong
        if t >= 0:
            kongs = [k for kind, k, _ in fixed if kind == KONG] if fixed else ()
            hogs = []
            while t >= 0:
                if t not in kongs:
                    hogs.append(t)
                t = merged.find(4, t + 1)
            self.hogs = hogs

    @property
    def unique(self) -> list[int]:
        """The kinds of tile of the hand (tile codes in canonical order)."""
        return list(compress(_CODES, self.merged))

    @property
    def evidence(self) -> list:
        """The evidence every reading starts from (written when read: the readings that are only
        compared do not need it): the winning tile for the fans of how it was won and of the
        wait; for Tile Hog (64), each tile of which all four are in the hand outside a kong. A
        reading copies it and adds the sets its detectors used."""
        ev = _EVIDENCE_OF_WIN[self.win]  # shared by the hands of one winning tile: copied before adding
        if self.hogs:
            ev = ev.copy()
            ev[TILE_HOG] = tuple(f"{tile_name(t)}x4" for t in self.hogs)
        return ev


def _regular_reading(s: _Situation, sets: tuple[Pack, ...], pair: int, chows: tuple[int, ...],
                     pungs: tuple[int, ...], unique_wait: bool, record: bool = False) -> Reading:
    """Fans of one reading as four sets and a pair (第八条 基本牌型), with their evidence.

    The reading is the declared melds (``s.fixed``) and a Division of the concealed tiles
    (``scoring.decompose.regular_divisions``): its sets, its pair's tile and its chows' and
    pungs' tiles. ``record`` False counts the fans only: what the detectors record goes to
    ``_NO_EVIDENCE`` (the sets' indices are then placeholders), the evidence that costs more than
    it records is skipped, and the reading's evidence is recorded when first read, by this
    function run again with ``record`` True.
    """
    packs = s.fixed + sets + (_PAIR_PACK[pair],)
    ft = s.fans.copy()  # the fans of the tiles and of the win (_suits, _tile_traits, _rank_range, _win_flags)
    ctx = s.ctx
    win = s.win
    # A pung completed by a discard is an exposed pung (unless the tile can sit in a concealed chow).
    exposed_by_discard = False
    if win in pungs and not ctx.self_drawn:
        exposed_by_discard = True
        for t in chows:
            if t - 1 <= win <= t + 1:
                exposed_by_discard = False
                break
    n_concealed_pungs = len(pungs) - exposed_by_discard
    evidence_args = (s, sets, pair, chows, pungs, unique_wait)
    fixed_chows, fixed_pungs, mk_at, ck_at = s.split
    if fixed_chows:
        chows = fixed_chows + chows
    if fixed_pungs:
        pungs = fixed_pungs + pungs
    pair_at = len(packs) - 1  # the pair is the last pack
    if record:
        ev = s.evidence.copy()
        chow_at = [i for i, p in enumerate(packs) if p[0] == CHOW]
        pung_at = [i for i, p in enumerate(packs) if p[0] == PUNG or p[0] == KONG]
        cp_at = [i for i, p in enumerate(packs) if p[0] == PUNG and not p[2]
                 and not (exposed_by_discard and p[1] == win)]
    else:
        ev = _NO_EVIDENCE
        chow_at = _PLACES[len(chows)]
        pung_at = _PLACES[len(pungs)]
        cp_at = _PLACES[n_concealed_pungs]
    # The slots of the fans counted, each once (some may be 0 after all): the template's (with
    # Self-Drawn's), then each one set below. (Recording, ``_exclusions`` lists them itself.)
    counted = [*s.fans.slots]
    n_pungs = len(pungs)
    if n_pungs:
        if mk_at or ck_at or len(cp_at) > 1:  # else no kong and at most one concealed pung: no fan
            _count_kongs_and_concealed_pungs(cp_at, mk_at, ck_at, ft, ev, s.rules)
            counted += compress(_KONG_SLOTS, _KONG_FANS(ft))
        if n_pungs == 4 and not ft[FOUR_KONGS] and not ft[FOUR_CONCEALED_PUNGS]:
            ft[ALL_PUNGS] = 1
            ev[ALL_PUNGS] = tuple(pung_at)
            counted.append(ALL_PUNGS)
    n_chows = len(chows)
    if record:
        _count_set_fans(chows, chow_at, pungs, pung_at, pair, pair_at, ft, ev)
        if ft[DRAGON_PUNG]:
            ev[DRAGON_PUNG] = tuple(i for i, t in zip(pung_at, pungs) if t in DRAGONS)
        every = reduce(and_, map(_PACK_TRAITS.__getitem__, packs))
    else:
        # the sets' fans from the tables of the pungs' and the chows' (the pair only for 13 and 29)
        found = _PUNG_FANS.get(pungs) or _pung_fans(pungs)
        for f, c in found[1]:
            ft[f] += c
        counted += found[2]
        every = found[0] & _PUNG_TRAITS[pair]
        if n_chows == 4 and pair < 30 and pair % 10 == 5:
            found = _CHOW_FANS.get((chows, pair)) or _chow_fans((chows, pair), chows, pair)
        else:
            found = _CHOW_FANS.get(chows) or _chow_fans(chows, chows, 0)
        for f, c in found[1]:
            ft[f] += c
        counted += found[2]
        every &= found[0]
    # concealed or melded hand
    melded_sets = len(s.fixed) - len(ck_at)  # every declared meld is melded but a concealed kong
    if melded_sets == 0:
        f = FULLY_CONCEALED_HAND if ctx.self_drawn else CONCEALED_HAND
        ft[f] = 1
        counted.append(f)
    elif melded_sets == 4:
        if ctx.self_drawn:
            ft[SELF_DRAWN] = 1
        else:
            ft[MELDED_HAND] = 1
            counted.append(MELDED_HAND)
            if record:
                ev[MELDED_HAND] = (*range(pair_at), _WIN_EVIDENCE[win][0])  # the four sets and the winning tile
    elif ctx.self_drawn:
        ft[SELF_DRAWN] = 1
    # the pair
    if n_chows == 4:
        if pair < 30:
            ft[ALL_CHOWS] = 1
            counted.append(ALL_CHOWS)
            if record:
                ev[ALL_CHOWS] = (*chow_at, pair_at)
    elif ft[TWO_DRAGON_PUNGS]:
        if pair in DRAGONS:
            ft[LITTLE_THREE_DRAGONS] = 1
            ft[TWO_DRAGON_PUNGS] = 0
            counted.append(LITTLE_THREE_DRAGONS)
            if record:
                ev[LITTLE_THREE_DRAGONS] = (*(i for i, t in zip(pung_at, pungs) if t in DRAGONS), pair_at)
    elif ft[BIG_THREE_WINDS]:
        if pair in WINDS:
            ft[LITTLE_FOUR_WINDS] = 1
            ft[BIG_THREE_WINDS] = 0
            counted.append(LITTLE_FOUR_WINDS)
            if record:
                ev[LITTLE_FOUR_WINDS] = (*(i for i, t in zip(pung_at, pungs) if t in WINDS), pair_at)
    if every:
        _pack_traits(every, ft)
        counted += _TRAIT_SLOTS
    if not ft[QUADRUPLE_CHOW] and s.hogs:
        ft[TILE_HOG] = len(s.hogs)
        counted.append(TILE_HOG)
    if unique_wait:
        _wait_fan(packs[len(s.fixed):], win, ft)
        counted += _WAIT_SLOTS
    if record or not _EXCLUDING_ANY.isdisjoint(counted) or s.rules.strict_no_repetition:
        counted = _exclusions(ft, s.rules, None if record else counted)  # (else none of them excludes)
    if s.masks[3] & _Bits.WIND_TILES and not ft[BIG_FOUR_WINDS]:  # some wind, maybe a wind pung
        for i, t in zip(pung_at, pungs):
            if t in WINDS:
                _wind_pung(t, i, ctx, ft, ev)
        # not counted before _wind_pung (which may also take a Pung of Terminals or Honors away)
        counted += _WIND_SLOTS if PUNG_OF_TERMINALS_OR_HONORS in counted else _WIND_SLOTS_AND_PUNG
    total = _total(ft, counted)
    if not total and not any(ft):
        ft[CHICKEN_HAND] = 1
        total = POINTS[CHICKEN_HAND]
    if not record:
        return Reading(ft, packs, "regular", evidence_args, total)
    if ft[PUNG_OF_TERMINALS_OR_HONORS]:
        ev[PUNG_OF_TERMINALS_OR_HONORS] = _terminal_pungs(pungs, pung_at, ctx)
    return Reading(ft, packs, "regular", ev, total)


#: The fan a pung or kong of each tile counts by itself: Dragon Pung (59), Pung of Terminals or
#: Honors (73, a wind's turned into the wind fans by ``_wind_pung``), or none (0).
_PUNG_FAN = [DRAGON_PUNG if t in DRAGONS else PUNG_OF_TERMINALS_OR_HONORS if t in TERMINALS or t in WINDS else 0
             for t in range(38)]
#: The slots that ``_count_kongs_and_concealed_pungs``, ``_pack_traits`` and ``_wait_fan`` may set
#: (``_regular_reading`` lists those of the kongs that are counted, the others all three).
_KONG_SLOTS = (MELDED_KONG, CONCEALED_KONG, TWO_MELDED_KONGS, MIXED_KONGS, TWO_CONCEALED_KONGS, THREE_KONGS,
               FOUR_KONGS, TWO_CONCEALED_PUNGS, THREE_CONCEALED_PUNGS, FOUR_CONCEALED_PUNGS)
_KONG_FANS = itemgetter(*_KONG_SLOTS)
_TRAIT_SLOTS = (OUTSIDE_HAND, ALL_FIVE, ALL_EVEN_PUNGS)
_WAIT_SLOTS = (EDGE_WAIT, CLOSED_WAIT, SINGLE_WAIT)
#: The slots ``_wind_pung`` writes: the two wind fans, and Pung of Terminals or Honors too.
_WIND_SLOTS = (PREVALENT_WIND, SEAT_WIND)
_WIND_SLOTS_AND_PUNG = (PREVALENT_WIND, SEAT_WIND, PUNG_OF_TERMINALS_OR_HONORS)
#: The pair of each tile as a pack.
_PAIR_PACK = [(PAIR, t, False) for t in range(len(TILE_BIT))]
#: Placeholder indices of n sets, for a reading counted without recording.
_PLACES = [tuple(range(n)) for n in range(6)]

#: Where a reading counted without recording (``_regular_reading``) lets its detectors write
#: their evidence: no fan count ever depends on what it holds.
_NO_EVIDENCE: list = [None] * N_SLOTS


def _count_set_fans(chows: tuple[int, ...], chow_at, pungs: tuple[int, ...], pung_at, pair: int, pair_at: int,
                    ft: list[int], ev: list) -> None:
    """The fans of a reading's sets (不拆移, 套算一次, 不得相同): its pungs' (``_count_pung_fans``)
    and its chows' (``_count_chow_combinations``). The chows' middle tiles and the pungs' tiles
    are given in reading order, at pack indices ``chow_at`` and ``pung_at``; the pair at
    ``pair_at``. The two parts are apart: with four sets, two chows and two pungs make at most a
    fan of each two; one chow or one pung alone makes none."""
    _count_pung_fans(pungs, pung_at, ft, ev)
    _count_chow_combinations(chows, chow_at, pair, pair_at, ft, ev)


def _count_pung_fans(pungs: tuple[int, ...], pung_at, ft: list[int], ev: list) -> None:
    """Each pung's or kong's own fan (``_PUNG_FAN``), and the fans of their combinations, by the
    family detectors."""
    for t in pungs:
        f = _PUNG_FAN[t]
        if f:
            ft[f] += 1
    n_pungs = len(pungs)
    if n_pungs == 4:
        _count_four_pungs(pungs, pung_at, ft, ev)
    elif n_pungs == 3:
        _count_three_pungs(pungs, pung_at, ft, ev)
    elif n_pungs == 2:
        _count_two_sets(_TWO_PUNGS_OF, pungs, pung_at, ft, ev)


def _count_chow_combinations(chows: tuple[int, ...], chow_at, pair: int, pair_at: int, ft: list[int],
                             ev: list) -> None:
    """The fans of the combinations of the chows (with the pair for 13 and 29), by the family
    detectors."""
    n_chows = len(chows)
    if n_chows == 4:
        if _three_suited_terminal_chows(chows, pair):
            ft[THREE_SUITED_TERMINAL_CHOWS] = 1
            ev[THREE_SUITED_TERMINAL_CHOWS] = (*chow_at, pair_at)
        elif _pure_terminal_chows(chows, pair):
            ft[PURE_TERMINAL_CHOWS] = 1
            ev[PURE_TERMINAL_CHOWS] = (*chow_at, pair_at)
        else:
            _count_four_chows(chows, chow_at, pair_at, ft, ev)
    elif n_chows == 3:
        _count_three_chows(chows, chow_at, ft, ev)
    elif n_chows == 2:
        _count_two_sets(_TWO_CHOWS_OF, chows, chow_at, ft, ev)


def _count_two_sets(answers: list[list[int]], tiles: tuple[int, ...], at, ft: list[int], ev: list) -> None:
    """The fan of two chows or two pungs (``answers``: ``_TWO_CHOWS_OF`` or ``_TWO_PUNGS_OF``), if
    any, with the two sets as its evidence."""
    f = answers[tiles[0]][tiles[1]]
    if f:
        ft[f] += 1
        ev[f] = tuple(at)


#: The fans of a reading's pungs (``_count_pung_fans``) by their tiles, and of its chows
#: (``_count_chow_combinations``) by their middle tiles, or by ``(chows, pair)`` for four chows
#: and a pair of fives (the pair counts only for 13 and 29); the tiles in reading order. Each as
#: ``(traits, ((fan slot, count), ...), slots)``, with the traits its sets all have (as
#: ``_PACK_TRAITS``). A reading counted without recording reads them instead of running the
#: detectors. Each is emptied when it reaches ``_SET_FANS_MAX`` keys (about 200 bytes each).
_PUNG_FANS: dict[tuple, tuple[int, tuple[tuple[int, int], ...], tuple[int, ...]]] = {}
_CHOW_FANS: dict[tuple, tuple[int, tuple[tuple[int, int], ...], tuple[int, ...]]] = {}
_SET_FANS_MAX = 1 << 15


def _pung_fans(pungs: tuple[int, ...]) -> tuple:
    """Work out and keep ``_PUNG_FANS[pungs]``: the entry of the same tiles sorted, if there is
    one (the fans do not depend on the order of the sets), else from the detectors."""
    ordered = tuple(sorted(pungs))
    found = _PUNG_FANS.get(ordered)
    if found is None:
        ft: dict[int, int] = defaultdict(int)  # the detectors write a few slots: no 83-slot list to scan
        _count_pung_fans(ordered, _PLACES[len(pungs)], ft, _NO_EVIDENCE)  # placeholder indices: nothing recorded
        traits = 7  # the three traits, then those every pung has
        for t in pungs:
            traits &= _PUNG_TRAITS[t]
        found = _keep(_PUNG_FANS, ordered, _entry(traits, ft))
    return _keep(_PUNG_FANS, pungs, found)


def _chow_fans(key: tuple, chows: tuple[int, ...], pair: int) -> tuple:
    """Work out and keep ``_CHOW_FANS[key]`` (``pair`` 0 when the key has none), as ``_pung_fans``
    (by the entry of the chows sorted, if there is one)."""
    ordered = tuple(sorted(chows))
    ordered_key = (ordered, pair) if pair else ordered
    found = _CHOW_FANS.get(ordered_key)
    if found is None:
        ft: dict[int, int] = defaultdict(int)
        _count_chow_combinations(ordered, _PLACES[len(chows)], pair, 4, ft, _NO_EVIDENCE)  # placeholder indices
        traits = 7
        for t in chows:
            traits &= _CHOW_TRAITS[t]
        found = _keep(_CHOW_FANS, ordered_key, _entry(traits, ft))
    return _keep(_CHOW_FANS, key, found)


def _entry(traits: int, ft: dict[int, int]) -> tuple:
    """An entry of ``_PUNG_FANS`` or ``_CHOW_FANS`` made from the fans the detectors wrote in ``ft``."""
    counts = tuple(item for item in ft.items() if item[1])
    return traits, counts, tuple(n for n, _ in counts)


def _keep(table: dict, key: tuple, found: tuple) -> tuple:
    """Keep ``table[key] = found`` (the table emptied first when full) and return it."""
    if len(table) >= _SET_FANS_MAX:
        table.clear()
    table[key] = found
    return found


def _pure_terminal_chows(chows: list[int], pair: int) -> bool:
    if pair > 30 or pair % 10 != 5:
        return False
    suit = pair // 10
    ranks = sorted(t % 10 for t in chows)
    return all(t // 10 == suit for t in chows) and ranks == [2, 2, 8, 8]


def _three_suited_terminal_chows(chows: list[int], pair: int) -> bool:
    if pair > 30 or pair % 10 != 5:
        return False
    suit = pair // 10
    others = [x for x in (0, 1, 2) if x != suit]
    if any(t // 10 == suit or t % 10 not in (2, 8) for t in chows):
        return False
    have = {t for t in chows}
    return all(o * 10 + 2 in have and o * 10 + 8 in have for o in others)


def _seven_pairs_reading(s: _Situation) -> Reading | None:
    """Seven Pairs (19) or Seven Shifted Pairs (6); None if the concealed tiles are not seven pairs."""
    st = s.standing
    if st.count(1) or st.count(3):  # an odd count (counts are at most 4)
        return None
    ft = [0] * N_SLOTS
    win = s.win
    if win < 30:
        base = win // 10 * 10
        run = [st[base + r] == 2 for r in range(1, 10)]
        shifted = False
        if all(run[2:7]):  # 3..7 always inside a run of seven pairs
            shifted = (run[1] and (run[0] or run[7])) or (not run[1] and run[7] and run[8])
        if shifted:
            ft[SEVEN_SHIFTED_PAIRS] = 1
            if st[base + 1] == 0 and st[base + 9] == 0:
                ft[ALL_SIMPLES] = 1
            _win_flags(s.ctx, s.fourth_tile, ft)
            return Reading(ft, (), "seven shifted pairs", _shape_evidence(s, ft))
    ft[SEVEN_PAIRS] = 1
    set_fans = s.rules.seven_pairs_set_fans
    _suits(s.masks, ft)
    _tile_traits(s.masks, ft, set_fans)
    if set_fans:
        _rank_range(s.masks, ft)
    ft[TILE_HOG] = st.count(4)
    _win_flags(s.ctx, s.fourth_tile, ft)
    _exclusions(ft, s.rules)
    return Reading(ft, (), "seven pairs", _shape_evidence(s, ft))


def _shape_evidence(s: _Situation, ft: list[int], knitted: str = "") -> list:
    """Evidence of a reading without sets (seven pairs, honors and knitted tiles, thirteen
    orphans, nine gates): the whole hand, but the winning tile for the fans of how it was won and
    of the wait, the four alike for Tile Hog, and the knitted straight for Knitted Straight."""
    ev = s.evidence
    if knitted:
        ev = ev.copy()
        ev[KNITTED_STRAIGHT] = (knitted,)
    return ev


def _honors_and_knitted_reading(s: _Situation) -> Reading | None:
    """Lesser (34) or Greater (20) Honors and Knitted Tiles, with Knitted Straight (35) when the
    nine knitted tiles are all there."""
    if len(s.merged) - s.merged.count(0) != 14:  # 14 kinds of tile (before listing them)
        return None
    u = s.unique
    numbered = [t for t in u if t < 30]
    if not 7 <= len(numbered) <= 9:
        return None
    if not any(set(numbered) <= set(ks) for ks in KNITTED_STRAIGHTS):
        return None
    ft = [0] * N_SLOTS
    knitted = ""
    if len(numbered) == 7:
        ft[GREATER_HONORS_KNITTED] = 1
    else:
        ft[LESSER_HONORS_KNITTED] = 1
        if len(numbered) == 9:
            ft[KNITTED_STRAIGHT] = 1
            knitted = tiles_to_string(numbered)
    _win_flags(s.ctx, s.fourth_tile, ft)
    return Reading(ft, (), "honors and knitted tiles", _shape_evidence(s, ft, knitted))


def _thirteen_orphans_reading(s: _Situation) -> Reading | None:
    if len(s.merged) - s.merged.count(0) != 13 or tuple(s.unique) != THIRTEEN_ORPHANS_TILES:
        return None
    ft = [0] * N_SLOTS
    ft[THIRTEEN_ORPHANS] = 1
    _win_flags(s.ctx, s.fourth_tile, ft)
    return Reading(ft, (), "thirteen orphans", _shape_evidence(s, ft))


def _nine_gates_reading(s: _Situation) -> Reading | None:
    """Nine Gates (4): 1112345678999 of one suit concealed plus any tile of that suit.

    The hand is also a regular hand, and the fans of its best regular reading are counted with
    Nine Gates, less what Nine Gates excludes (its spec: Full Flush, Concealed Hand), less what its
    spec says lies inside it (``_inside``: one Pung of Terminals, the 111 or 999 of the gates; and,
    the gates being concealed by definition, Fully Concealed Hand as a plain Self-Drawn). No wait fan: the gates wait on nine tiles. So a win
    on the 1 or 9 also scores Pure Straight and Tile Hog; on the 2 or 8 Two Concealed Pungs, Short
    Straight, Pung of Terminals; on the 5 Two Concealed Pungs, Pung of Terminals; on 3, 4, 6, 7
    Short Straight.
    """
    win = s.win
    if win > 30:
        return None
    st = s.standing
    base = win // 10 * 10
    if st[base + 1] < 3 or st[base + 9] < 3:
        return None
    r = win % 10
    need = [0, 3, 1, 1, 1, 1, 1, 1, 1, 3]
    need[r] += 1
    if any(st[base + i] != need[i] for i in range(1, 10)):
        return None
    best: list[int] = []
    best_total = -1
    for division in regular_divisions(st, 4):
        r = _regular_reading(s, *division, False)
        ft, total = r.fans, r.total
        if total > best_total:
            best, best_total = ft, total
    ft = list(best)
    ft[NINE_GATES] = 1
    for g in FANS[NINE_GATES].excludes:
        ft[g] = 0
    swap = ft[FULLY_CONCEALED_HAND]
    _inside(NINE_GATES, ft, None)  # its spec: the 111 or 999 of the gates, and concealed
    if swap:
        for f, gone in _EXCLUSIONS_LATE:  # Last Tile Draw, Out with Replacement Tile exclude it again
            if ft[f]:
                for g in gone:
                    ft[g] = 0
    # The gates have no sets to show: the fans of the regular reading show the whole hand.
    return Reading(ft, (), "nine gates", _shape_evidence(s, ft))


def _knitted_straight_reading(s: _Situation) -> Reading | None:
    """Knitted Straight (35) as a regular hand: the nine knitted tiles count as three sets, plus
    one more set (concealed or the one declared meld) and a pair."""
    st = s.standing
    m, b, p, _ = s.masks  # each suit needs three kinds of tile at least
    if m.bit_count() < 3 or b.bit_count() < 3 or p.bit_count() < 3 or max(st) < 2:
        return None
    seq = next((ks for ks in KNITTED_STRAIGHTS if all(st[t] for t in ks)), None)
    if seq is None:
        return None
    rest = list(st)
    for t in seq:
        rest[t] -= 1
    n_sets = 1 - len(s.fixed)
    readings = regular_divisions(rest, n_sets)
    if len(readings) != 1:
        return None
    sets, pair, _, _ = readings[0]
    fourth = s.fixed[0] if s.fixed else sets[0]
    kind, tile, melded = fourth
    # the packs shown: the fourth set (index 0) and the pair (index 1); the nine knitted tiles
    # are shown as the knitted straight
    FOURTH, PAIR_AT = 0, 1
    ft = [0] * N_SLOTS
    ev = s.evidence.copy()
    ctx = s.ctx
    ft[KNITTED_STRAIGHT] = 1
    ev[KNITTED_STRAIGHT] = (tiles_to_string(seq),)
    if kind == CHOW:
        if pair < 30 and s.rules.knitted_straight_all_chows:
            ft[ALL_CHOWS] = 1
            ev[ALL_CHOWS] = (FOURTH, PAIR_AT)
        if s.merged[pair] == 4:
            ft[TILE_HOG] = 1
    elif tile > 30:
        if tile in WINDS:
            ft[PUNG_OF_TERMINALS_OR_HONORS] = 1
            _wind_pung(tile, FOURTH, ctx, ft, ev)
            if pair in DRAGONS:
                ft[ALL_TYPES] = 1
        else:
            ft[DRAGON_PUNG] = 1
            ev[DRAGON_PUNG] = (FOURTH,)
            if pair in WINDS:
                ft[ALL_TYPES] = 1
    else:
        if tile in TERMINALS:
            ft[PUNG_OF_TERMINALS_OR_HONORS] = 1
        if pair < 30:
            ft[NO_HONORS] = 1
        if kind != KONG and s.merged[tile] == 4:
            ft[TILE_HOG] = 1
    if ft[PUNG_OF_TERMINALS_OR_HONORS]:
        ev[PUNG_OF_TERMINALS_OR_HONORS] = _terminal_pungs([tile], [FOURTH], ctx)
    _win_flags(ctx, s.fourth_tile, ft)
    if melded:
        if kind == KONG:
            ft[MELDED_KONG] = 1
            ev[MELDED_KONG] = (FOURTH,)
    else:
        if kind == KONG:
            ft[CONCEALED_KONG] = 1
            ev[CONCEALED_KONG] = (FOURTH,)
        if ctx.self_drawn:
            ft[FULLY_CONCEALED_HAND] = 1
            ft[SELF_DRAWN] = 0
        else:
            ft[CONCEALED_HAND] = 1
    # Wait fans: a winning tile that can be read either as completing the knitted straight or as
    # an edge/closed/single wait counts the wait (就高不就低).
    win = s.win
    if not s.fixed:
        # The wait fan needs the winning tile in the fourth set or the pair: not the case when
        # its only copy completes the knitted straight itself.
        if rest[win]:
            rest[win] -= 1
            unique = len(waiting_tiles(rest, False)) == 1
            rest[win] += 1
            if unique:
                _wait_fan((sets[0], (PAIR, pair, False)), win, ft)
    elif win not in seq or st[win] == 3:
        # With one declared set the concealed part is the knitted straight and a pair: a winning
        # tile outside the knitted straight, or a third copy of a knitted tile, waited on the pair.
        ft[SINGLE_WAIT] = 1
    _exclusions(ft, s.rules)
    packs = tuple(s.fixed) + tuple(sets) + ((PAIR, pair, False),)
    return Reading(ft, packs, "knitted straight", ev)


_SLOTS = range(N_SLOTS)


def _total(ft: list[int], counted: "list[int] | None" = None) -> int:
    """Points of the fan counts ``ft`` (flowers not included); ``counted``: the slots that may be
    counted (all others 0), if known."""
    total = 0
    for n in compress(_SLOTS, ft) if counted is None else counted:
        total += POINTS[n] * ft[n]
    return total


def _tally(r: Reading) -> int:
    """Set the reading's total (``Reading.total``) and return it."""
    r.total = total = _total(r.fans)
    return total


def best_reading(fixed: tuple[Pack, ...], standing: bytes, win: int, n_standing: int, ctx, rules: RuleProfile,
                 fourth_tile: bool, merged: bytes, split: tuple[tuple[int, ...], ...] = NO_MELDS) -> Reading | None:
    """The highest-scoring reading of a checked hand (flowers not included), or None if the tiles
    do not form a winning hand.

    Args:
        fixed: declared melds as packs.
        standing: count table (by tile code, as bytes) of the concealed tiles with the winning tile.
        win: the winning tile's code.
        n_standing: number of concealed tiles without the winning tile.
        ctx: the WinContext (flags already validated).
        rules: the rule profile.
        fourth_tile: whether 和绝张 applies (after the tiles' own evidence).
        merged: the count table of all tiles (the melds' and ``standing``; ``standing`` itself without
            melds), as bytes (each count at most 4): searched for a count at C speed.
        split: the melds' share of every reading: the tiles of their chows (middle tiles) and of
            their pungs and kongs, the indices in ``fixed`` of the melded and of the concealed
            kongs (``NO_MELDS`` without melds).
    """
    s = _Situation(fixed, standing, win, ctx, rules, fourth_tile, merged, split)
    special: Reading | None = None
    # Each special shape is looked for only where the suits allow it: honors and knitted tiles,
    # thirteen orphans and a knitted straight need all three suits; nine gates one suit and no
    # honor; seven pairs no odd count (counts are at most 4).
    m, b, p, honors = s.masks
    if not fixed:
        if 1 not in merged and 3 not in merged:  # ``merged`` is ``standing`` without melds
            special = _seven_pairs_reading(s)
        if special is None:
            if m and b and p:
                special = (_honors_and_knitted_reading(s) or _thirteen_orphans_reading(s)
                           or _knitted_straight_reading(s))
            elif not honors and ((m and not b and not p) or (b and not m and not p) or (p and not m and not b)):
                special = _nine_gates_reading(s)
    elif len(fixed) == 1 and m and b and p:
        special = _knitted_straight_reading(s)
    best = special
    best_total = 0
    if special is not None:
        best_total = _tally(special)
    if special is None or special.fans[SEVEN_PAIRS]:
        seven_pairs = special is not None
        readings = regular_divisions(standing, 4 - len(fixed))
        if readings:
            # A wait fan needs a hand waiting on the winning tile alone, and the tile in a
            # concealed chow or the pair (``_wait_fan`` finds where in each reading).
            unique_wait = unique_wait_of(standing, win, n_standing == 13, readings)
            for division in readings:
                r = _regular_reading(s, *division, unique_wait)
                total = r.total
                if total > best_total:
                    best, best_total = r, total
                elif total == best_total and (r.fans[PURE_TRIPLE_CHOW] or r.fans[TRIPLE_PUNG] or seven_pairs):
                    best = r
    return best
