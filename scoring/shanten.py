"""Shanten (向听数) and useful tiles (有效牌) of a hand that is not yet complete.

The shanten number is how many tiles a hand still needs to change before it is ready (听牌,
shanten 0); -1 means the tiles already form a winning hand. It is counted for each of the five
winning shapes of 第八条 (中国麻将竞赛规则, ../shared/seeds/000_ba052a8ec20fd579.txt) separately:

==================  ==========================  ==============================================
shape               standing tiles it needs     counted as
==================  ==========================  ==============================================
regular             13, 10, 7, 4 or 1           8 - 2 x sets - partial sets - pair (at most 4
                                                sets and partial sets together)
seven pairs         13 (no melds)               6 - pairs (four alike are two pairs)
thirteen orphans    13 (no melds)               13 - kinds of terminal/honor (12 - with a pair)
honors and knitted  13 (no melds)               13 - kinds among one knitted straight's 9 tiles
                                                and the 7 honors
knitted straight    13 or 10 (at most 1 meld)   missing knitted-straight tiles + regular
                                                shanten of the rest
==================  ==========================  ==============================================

A shape that the melds rule out has no shanten (``None``). These are the definitions of the
reference calculator (ChineseOfficialMahjongHelper's ``shanten.cpp``, exposed by PyMahjongGB as
``RegularShanten``, ``SevenPairsShanten``, ``ThirteenOrphansShanten``,
``HonorsAndKnittedTilesShanten``, ``KnittedStraightShanten``), and so are the useful tiles: a tile
is useful when adding it lowers that shape's shanten. Like the reference, shanten is a question
of shape: a tile of which the hand already holds four copies can still be counted useful when the
hand is ready (``tests/scoring/test_shanten_against_pymahjonggb.py`` checks both on 20,000 hands).

The regular shape is counted suit by suit: the achievable (sets, partial sets, pair) of one suit's
nine counts are computed once and cached, so a hand is a combination of four cached lists.

Tiles are the integer codes of ``scoring.tiles`` (1-9 characters, 11-19 bamboo, 21-29 dots,
31-37 honors); count tables have ``TABLE_SIZE`` entries indexed by code.
"""

from __future__ import annotations

import enum
from functools import lru_cache

from .tiles import ALL_TILES, HONORS, KNITTED_STRAIGHTS, TABLE_SIZE, THIRTEEN_ORPHANS_TILES

#: A shanten higher than any real one, for shapes the hand cannot take.
_NONE = 99

Vector = tuple[int, int, int]  # (sets, partial sets, pair 0/1)


class Shape(enum.Enum):
    """The winning shapes whose shanten is counted separately (第八条 基本牌型 and 特殊牌型)."""

    REGULAR = "regular"
    SEVEN_PAIRS = "seven_pairs"
    THIRTEEN_ORPHANS = "thirteen_orphans"
    HONORS_AND_KNITTED = "honors_and_knitted"
    KNITTED_STRAIGHT = "knitted_straight"


SHAPES: tuple[Shape, ...] = tuple(Shape)


# --- regular shape ----------------------------------------------------------------------------

def _pareto(vectors) -> tuple[Vector, ...]:
    """Keep the vectors that no other vector is at least as good as in every entry."""
    vs = sorted(set(vectors), reverse=True)
    out: list[Vector] = []
    for v in vs:
        if not any(o[0] >= v[0] and o[1] >= v[1] and o[2] >= v[2] for o in out):
            out.append(v)
    return tuple(out)


@lru_cache(maxsize=None)
def _suit_vectors(counts: tuple[int, ...]) -> tuple[Vector, ...]:
    """The best (sets, partial sets, pair) readings of one suit's counts (ranks 1-9; 0-5 each).

    Sets are chows and pungs; partial sets (搭子) are two tiles of a chow (adjacent or with a gap)
    or two alike; at most one pair (将). Partial sets are capped at 4 (no more can count). A tile
    may stay unused. Returns the Pareto-best vectors.
    """
    i = 0
    while i < len(counts) and counts[i] == 0:
        i += 1
    if i == len(counts):
        return ((0, 0, 0),)
    c = list(counts)
    found: list[Vector] = []

    def take(delta: Vector, *ranks: int) -> None:
        for r in ranks:
            c[r] -= 1
        for p, q, s in _suit_vectors(tuple(c)):
            if s + delta[2] <= 1:
                found.append((p + delta[0], min(q + delta[1], 4), s + delta[2]))
        for r in ranks:
            c[r] += 1

    n = c[i]
    chows = len(counts) == 9
    if n >= 3:
        take((1, 0, 0), i, i, i)
    if n >= 2:
        take((0, 0, 1), i, i)
        take((0, 1, 0), i, i)
    if chows and i <= 6 and c[i + 1] and c[i + 2]:
        take((1, 0, 0), i, i + 1, i + 2)
    if chows and i <= 7 and c[i + 1]:
        take((0, 1, 0), i, i + 1)
    if chows and i <= 6 and c[i + 2]:
        take((0, 1, 0), i, i + 2)
    take((0, 0, 0), i)  # the tile stays unused
    return _pareto(found)


# Vector sets are interned: each distinct Pareto set gets a small integer id, so that combining
# two sets and scoring a set are dictionary look-ups on integer keys.
_SETS: list[tuple[Vector, ...]] = []
_SET_ID: dict[tuple[Vector, ...], int] = {}
_COMBINED: dict[tuple[int, int], int] = {}
_BEST: dict[tuple[int, int], int] = {}


def _intern(vectors: tuple[Vector, ...]) -> int:
    i = _SET_ID.get(vectors)
    if i is None:
        i = _SET_ID[vectors] = len(_SETS)
        _SETS.append(vectors)
    return i


@lru_cache(maxsize=None)
def _suit_id(counts: tuple[int, ...]) -> int:
    return _intern(_suit_vectors(counts))


def _combine(a: int, b: int) -> int:
    """The interned Pareto-best sums of a vector of set ``a`` and one of set ``b`` (at most one pair)."""
    key = (a, b) if a <= b else (b, a)
    c = _COMBINED.get(key)
    if c is None:
        c = _COMBINED[key] = _intern(_pareto((p + q, min(i + j, 4), s + t)
                                             for p, i, s in _SETS[a] for q, j, t in _SETS[b] if s + t <= 1))
    return c


_EMPTY = _intern(((0, 0, 0),))


@lru_cache(maxsize=None)
def _honor_id(counts: tuple[int, ...]) -> int:
    """The interned set of the seven honors' counts (each honor is a component of its own)."""
    out = _EMPTY
    for n in counts:
        if n:
            out = _combine(out, _suit_id((n,)))
    return out


def _best(set_id: int, fixed: int) -> int:
    """The regular shanten of the best vector of a set with ``fixed`` declared melds."""
    key = (set_id, fixed)
    best = _BEST.get(key)
    if best is None:
        best = _NONE
        for p, i, s in _SETS[set_id]:
            p += fixed
            if p > 4:
                p = 4  # no more than four sets count: the extra tiles stay unused
            v = 8 - 2 * p - min(i, 4 - p) - s
            if v < best:
                best = v
        _BEST[key] = best
    return best


_USEFUL: dict[tuple[tuple[int, ...], int, int], tuple[int, ...]] = {}


def _useful_in(counts: tuple[int, ...], other: int, fixed: int) -> tuple[int, ...]:
    """Indexes into ``counts`` (one suit's nine ranks, or the seven honors) of the tiles that lower
    the regular shanten, the rest of the hand being the interned set ``other``.

    As the reference: a tile the hand holds four of counts only when the hand is ready, and a
    new tile with no neighbour (nor an honor the hand lacks) cannot help and is not tried.
    """
    key = (counts, other, fixed)
    found = _USEFUL.get(key)
    if found is not None:
        return found
    suit = len(counts) == 9
    ident = _suit_id if suit else _honor_id
    result = _best(_combine(ident(counts), other), fixed)
    out = []
    c = list(counts)
    for r, n in enumerate(counts):
        if n == 4 and result > 0:
            continue
        if n == 0 and (not suit or not ((r < 8 and c[r + 1]) or (r < 7 and c[r + 2]) or (r > 0 and c[r - 1])
                                        or (r > 1 and c[r - 2]))):
            continue
        c[r] += 1
        if _best(_combine(ident(tuple(c)), other), fixed) < result:
            out.append(r)
        c[r] -= 1
    if len(_USEFUL) > 1_000_000:  # bounded: hands are untrusted input
        _USEFUL.clear()
    found = _USEFUL[key] = tuple(out)
    return found


def _regular_from_table(table: list[int], fixed: int, useful: bool) -> tuple[int, list[int]]:
    parts = (tuple(table[1:10]), tuple(table[11:20]), tuple(table[21:30]), tuple(table[31:38]))
    m, s, p, h = _suit_id(parts[0]), _suit_id(parts[1]), _suit_id(parts[2]), _honor_id(parts[3])
    ms = _combine(m, s)
    ph = _combine(p, h)
    result = _best(_combine(ms, ph), fixed)
    if not useful:
        return result, []
    out: list[int] = []
    # each component with the other three
    for base, counts, other in ((1, parts[0], _combine(s, ph)), (11, parts[1], _combine(m, ph)),
                                (21, parts[2], _combine(ms, h)), (31, parts[3], _combine(ms, p))):
        out.extend(base + r for r in _useful_in(counts, other, fixed))
    return result, out


# --- special shapes ---------------------------------------------------------------------------

def _seven_pairs(table: list[int]) -> tuple[int, list[int]]:
    pairs = sum(c >> 1 for c in table)
    return 6 - pairs, [t for t in ALL_TILES if table[t] & 1]


def _thirteen_orphans(table: list[int]) -> tuple[int, list[int]]:
    kinds = sum(1 for t in THIRTEEN_ORPHANS_TILES if table[t])
    has_pair = any(table[t] > 1 for t in THIRTEEN_ORPHANS_TILES)
    if has_pair:
        return 12 - kinds, [t for t in THIRTEEN_ORPHANS_TILES if not table[t]]
    return 13 - kinds, list(THIRTEEN_ORPHANS_TILES)


_HONOR_TILES = tuple(sorted(HONORS))


def _honors_and_knitted(table: list[int]) -> tuple[int, list[int]]:
    best = _NONE
    useful: set[int] = set()
    for seq in KNITTED_STRAIGHTS:
        tiles = seq + _HONOR_TILES
        missing = [t for t in tiles if not table[t]]
        st = len(missing) - 3  # 13 - (16 - missing)
        if st < best:
            best, useful = st, set(missing)
        elif st == best:
            useful.update(missing)
    return best, sorted(useful)


@lru_cache(maxsize=None)
def _knitted_part(counts: tuple[int, ...], first: int) -> tuple[int, int]:
    """One suit's share of a knitted straight (ranks ``first``, +3, +6; ``first`` 0-2 as an index):
    ``(how many of the three the suit lacks, interned set of the suit's other tiles)``."""
    c = list(counts)
    missing = 0
    for r in (first, first + 3, first + 6):
        if c[r]:
            c[r] -= 1
        else:
            missing += 1
    return missing, _suit_id(tuple(c))


#: The six knitted straights as the first rank index (0-2) in characters, bamboo, dots.
_KNITTED_FIRSTS = tuple(tuple(seq[3 * k] % 10 - 1 for k in range(3)) for seq in KNITTED_STRAIGHTS)


def _knitted_straight(table: list[int], fixed: int, useful: bool) -> tuple[int, list[int]]:
    # Each of the six knitted straights: its missing tiles plus the regular shanten of the rest
    # (with the knitted straight counted as three sets); the best ones' useful tiles are merged.
    suits = (tuple(table[1:10]), tuple(table[11:20]), tuple(table[21:30]))
    honors = _honor_id(tuple(table[31:38]))
    shanten = []
    m, s, p = suits
    for fm, fs, fp in _KNITTED_FIRSTS:
        a, ia = _knitted_part(m, fm)
        b, ib = _knitted_part(s, fs)
        c, ic = _knitted_part(p, fp)
        shanten.append(a + b + c + _best(_combine(_combine(ia, ib), _combine(ic, honors)), fixed + 3))
    best = min(shanten)
    tiles: set[int] = set()
    if useful:
        for seq, st in zip(KNITTED_STRAIGHTS, shanten):
            if st == best:
                rest = list(table)
                for t in seq:
                    if rest[t]:
                        rest[t] -= 1
                    else:
                        tiles.add(t)
                tiles.update(_regular_from_table(rest, fixed + 3, True)[1])
    return best, sorted(tiles)


# --- the public functions ---------------------------------------------------------------------

def shape_shanten(table: list[int], n_melds: int, shape: Shape, useful: bool = True) -> tuple[int, list[int]] | None:
    """The shanten of one shape for the standing tiles, and the tiles that lower it.

    Args:
        table: count table (length ``TABLE_SIZE``) of the standing (concealed) tiles,
            ``13 - 3 * n_melds`` of them; the declared melds are not in it.
        n_melds: declared melds (chows, pungs, kongs), 0-4.
        shape: which winning shape.
        useful: also list the useful tiles (有效牌); ``False`` returns an empty list (faster).

    Returns:
        ``(shanten, useful tile codes in canonical order)``, or ``None`` when the melds rule the
        shape out (every special shape needs 13 standing tiles, the knitted straight 13 or 10).
        Shanten 0 is ready (听牌); the useful tiles of a ready hand are its waits for that shape.

    Source: the shapes of 第八条; the counting of the reference calculator (see the module doc).
    """
    if shape is Shape.REGULAR:
        return _regular_from_table(table, n_melds, useful)
    if shape is Shape.KNITTED_STRAIGHT:
        if n_melds > 1:
            return None
        return _knitted_straight(table, n_melds, useful)
    if n_melds:
        return None
    if shape is Shape.SEVEN_PAIRS:
        return _seven_pairs(table)
    if shape is Shape.THIRTEEN_ORPHANS:
        return _thirteen_orphans(table)
    return _honors_and_knitted(table)


def shanten_by_shape(table: list[int], n_melds: int) -> dict[Shape, int | None]:
    """``{Shape: shanten}`` of the standing tiles (``None`` for a shape the melds rule out).

    With 14 - 3 x ``n_melds`` standing tiles a shape's shanten is -1 exactly when the tiles
    complete it.
    """
    out: dict[Shape, int | None] = {}
    for s in SHAPES:
        v = shape_shanten(table, n_melds, s, useful=False)
        out[s] = None if v is None else v[0]
    return out


def analyse_table(table: list[int], n_melds: int) -> tuple[dict[Shape, int | None], int, list[int]]:
    """The shanten of each shape, the lowest, and the useful tiles of every shape at the lowest
    (merged, canonical order, as the reference's analysis merges them).

    Args:
        table: count table of 13 - 3 x ``n_melds`` standing tiles.
        n_melds: declared melds.

    Returns:
        ``(by_shape, shanten, useful tile codes)``.
    """
    found: dict[Shape, tuple[int, list[int]] | None] = {}
    for s in SHAPES:  # the knitted straight's useful tiles are the costly ones: only when needed
        found[s] = shape_shanten(table, n_melds, s, useful=s is not Shape.KNITTED_STRAIGHT)
    by_shape = {s: None if v is None else v[0] for s, v in found.items()}
    best = min(v for v in by_shape.values() if v is not None)
    tiles: set[int] = set()
    for s, v in by_shape.items():
        if v == best:
            if s is Shape.KNITTED_STRAIGHT:
                found[s] = shape_shanten(table, n_melds, s)
            tiles.update(found[s][1])  # type: ignore[index]
    return by_shape, best, sorted(tiles)


def count_table(tiles) -> list[int]:
    """Count table (length ``TABLE_SIZE``) of an iterable of tile codes."""
    table = [0] * TABLE_SIZE
    for t in tiles:
        table[t] += 1
    return table
