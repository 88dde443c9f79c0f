"""Decomposition of concealed tiles into sets and a pair, and the waits of a hand.

A regular winning hand (第八条 基本牌型) is four sets (chow 顺子, pung 刻子, kong 杠) and a pair
(将). The concealed part is decomposed suit by suit: the decompositions of one suit's count
vector (nine counts, 0-4 each) are computed once and cached, so scoring a hand is a product of a
few cached lists instead of a search.

Packs are plain tuples ``(kind, tile, melded)`` inside the calculator, for speed:

* ``kind``: ``CHOW`` (1), ``PUNG`` (2), ``KONG`` (3), ``PAIR`` (4)
* ``tile``: the *middle* tile code of a chow, the repeated tile otherwise
* ``melded``: True for a claimed (exposed) set; a concealed kong and every set made from the
  concealed tiles are False.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import product

from .tiles import TABLE_SIZE

CHOW, PUNG, KONG, PAIR = 1, 2, 3, 4

Pack = tuple[int, int, bool]


@lru_cache(maxsize=None)
def suit_decompositions(counts: tuple[int, ...]) -> tuple[tuple[tuple[Pack, ...], int], ...]:
    """All ways to split one suit's tiles into sets and at most one pair.

    Args:
        counts: nine counts (ranks 1-9) of one suit.

    Returns:
        A tuple of ``(sets, pair_rank)``; ``sets`` is a sorted tuple of ``(CHOW, mid_rank, False)``
        or ``(PUNG, rank, False)``, ``pair_rank`` is 1-9 or 0 for no pair. Each distinct multiset of
        sets appears once. Empty when the suit cannot be split.
    """
    found: set[tuple[tuple[Pack, ...], int]] = set()

    def walk(c: list[int], sets: list[Pack], pair: int) -> None:
        i = 0
        while i < 9 and c[i] == 0:
            i += 1
        if i == 9:
            found.add((tuple(sorted(sets)), pair))
            return
        r = i + 1
        if pair == 0 and c[i] >= 2:
            c[i] -= 2
            walk(c, sets, r)
            c[i] += 2
        if c[i] >= 3:
            c[i] -= 3
            sets.append((PUNG, r, False))
            walk(c, sets, pair)
            sets.pop()
            c[i] += 3
        if i <= 6 and c[i + 1] and c[i + 2]:
            c[i] -= 1
            c[i + 1] -= 1
            c[i + 2] -= 1
            sets.append((CHOW, r + 1, False))
            walk(c, sets, pair)
            sets.pop()
            c[i] += 1
            c[i + 1] += 1
            c[i + 2] += 1

    walk(list(counts), [], 0)
    return tuple(sorted(found))


@lru_cache(maxsize=None)
def suit_completions(counts: tuple[int, ...]) -> tuple[bool, bool]:
    """Whether one suit's tiles split into sets only, and into sets plus one pair.

    Counts may exceed 4 (a hypothetical fifth tile is a shape question for waits).
    Returns ``(sets_only, sets_and_pair)``.
    """
    no_pair = with_pair = False

    def walk(c: list[int], pair: bool) -> None:
        nonlocal no_pair, with_pair
        if no_pair and with_pair:
            return
        i = 0
        while i < 9 and c[i] == 0:
            i += 1
        if i == 9:
            if pair:
                with_pair = True
            else:
                no_pair = True
            return
        if not pair and c[i] >= 2:
            c[i] -= 2
            walk(c, True)
            c[i] += 2
        if c[i] >= 3:
            c[i] -= 3
            walk(c, pair)
            c[i] += 3
        if i <= 6 and c[i + 1] and c[i + 2]:
            c[i] -= 1
            c[i + 1] -= 1
            c[i + 2] -= 1
            walk(c, pair)
            c[i] += 1
            c[i + 1] += 1
            c[i + 2] += 1

    walk(list(counts), False)
    return no_pair, with_pair


#: One reading of the concealed tiles, or of one suit's or the honors' share of them: ``(sets,
#: pair, chows, pungs)``: the sets as packs, the pair's tile (0 for none), and the tiles of its
#: chows (middle tiles) and of its pungs, each in the order of ``sets``.
Division = tuple[tuple[Pack, ...], int, tuple[int, ...], tuple[int, ...]]


def _division(sets: tuple[Pack, ...], pair: int) -> Division:
    return (sets, pair, tuple(t for k, t, _ in sets if k == CHOW), tuple(t for k, t, _ in sets if k != CHOW))


class _HonorOptions(dict):
    """The honors (seven counts, E S W N C F P, as bytes) as pungs and at most one pair (a
    Division), or None when they do not split so; worked out when first asked for (a dict
    lookup: at most 5**7 keys)."""

    def __missing__(self, counts: bytes) -> Division | None:
        sets: list[Pack] = []
        pairs = 0
        pair_tile = 0
        found: Division | None = None
        for i, c in enumerate(counts):
            if c == 0:
                continue
            if c == 3:
                sets.append((PUNG, 31 + i, False))
            elif c == 2:
                pairs += 1
                pair_tile = 31 + i
            else:
                pairs = 2  # no reading
                break
        if pairs <= 1:
            found = _division(tuple(sets), pair_tile)
        self[counts] = found
        return found


_HONOR_OPTIONS = _HonorOptions()


class _SuitOptions(dict):
    """One suit's readings (``suit_decompositions`` with ranks turned into tile codes of the suit
    starting at ``base + 1``, as Divisions; empty when the suit does not split) by its nine counts
    as bytes, worked out when first asked for (at most 5**9 keys, in play a few thousand)."""

    __slots__ = ("base",)

    def __init__(self, base: int) -> None:
        super().__init__()
        self.base = base

    def __missing__(self, counts: bytes) -> tuple[Division, ...]:
        base = self.base
        found = self[counts] = tuple(
            _division(tuple((k, base + r, m) for k, r, m in sets), (base + p) if p else 0)
            for sets, p in suit_decompositions(tuple(counts)))
        return found


#: Each suit's readings by its nine counts (characters, bamboo, dots).
_SUIT_OPTIONS = (_SuitOptions(0), _SuitOptions(10), _SuitOptions(20))
#: Each suit's nine counts in a count table (a slice) and its readings.
_SUIT_SHARES = tuple(zip((slice(1, 10), slice(11, 20), slice(21, 30)), _SUIT_OPTIONS))
#: A suit's nine counts when the hand has none of it.
_NO_TILES = bytes(9)


def regular_divisions(table: list[int] | bytes, n_sets: int) -> list[Division]:
    """All readings of the concealed tiles as ``n_sets`` sets and one pair.

    Args:
        table: count table by tile code (concealed tiles, winning tile included), a list or bytes.
        n_sets: number of sets expected from them (4 minus the declared melds).

    Returns:
        A list of Divisions ``(sets, pair_tile, chows, pungs)`` with ``sets`` sorted by
        (kind-independent) canonical order, ``chows`` and ``pungs`` the tiles of its chows (middle
        tiles) and pungs in the order of ``sets``; the list is in the canonical order of readings:
        by the sets' tiles, lowest first, a pung of a tile before a chow starting on it (this order
        breaks ties between equal totals).
    """
    # the table as bytes: its slices are cheap keys (hashed, compared by memcmp)
    counts_of = table if table.__class__ is bytes else bytes(table)
    honors = _HONOR_OPTIONS[counts_of[31:38]]
    if honors is None:
        return []
    # each suit's readings, and how many combinations of them
    per_suit = []
    firsts = []  # each suit's first reading: the only combination when each suit has one
    combinations = 1
    for share, known in _SUIT_SHARES:
        counts = counts_of[share]
        if counts != _NO_TILES:
            options = known[counts]
            if not options:
                return []
            per_suit.append(options)
            firsts.append(options[0])
            combinations *= len(options)
    honor_sets, honor_pair, _, honor_pungs = honors
    out = []
    # each combination of the suits' readings (in the common case one: each suit's only reading)
    # put together as tuples
    for combo in product(*per_suit) if combinations > 1 else (firsts,):
        pair = honor_pair
        pairs = 1 if honor_pair else 0
        sets = chows = pungs = ()
        for s, p, c, g in combo:
            if p:
                pairs += 1
                pair = p
            sets += s
            chows += c
            pungs += g
        if pairs == 1:
            if honor_sets:
                sets += honor_sets
                pungs += honor_pungs
            if len(sets) == n_sets:
                out.append((sets, pair, chows, pungs))
    if len(out) > 1:
        out.sort(key=_reading_key)
    return out


def _reading_key(reading: tuple[tuple[Pack, ...], int]) -> tuple:
    # Canonical order: sets as (first tile, second tile, third tile), sorted, compared in turn.
    return tuple(sorted((t, t, t) if k == PUNG else (t - 1, t, t + 1) for k, t, _ in reading[0]))


def is_complete_regular(table: list[int]) -> bool:
    """Whether the tiles (any count, counts above 4 allowed) form sets plus exactly one pair."""
    pairs = 0
    for t in range(31, 38):
        c = table[t]
        if c == 0 or c == 3:
            continue
        if c == 2 or c == 5:
            pairs += 1
        else:
            return False
    if pairs > 1:
        return False
    need = 1 - pairs
    suit_pairs_possible = []
    for base in (0, 10, 20):
        counts = tuple(table[base + 1:base + 10])
        if not any(counts):
            continue
        no_pair, with_pair = suit_completions(counts)
        if not no_pair and not with_pair:
            return False
        suit_pairs_possible.append((no_pair, with_pair))
    # choose exactly `need` suits to hold the pair
    if need == 0:
        return all(np for np, _ in suit_pairs_possible)
    for i, (_, wp) in enumerate(suit_pairs_possible):
        if wp and all(np for j, (np, _) in enumerate(suit_pairs_possible) if j != i):
            return True
    return False


@lru_cache(maxsize=None)
def suit_waits(counts: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Ranks (1-9) that complete one suit's tiles: ``(as sets only, as sets plus one pair)``.

    Counts may reach 5 with the added tile (a wait is a question of shape).
    """
    no_pair: list[int] = []
    with_pair: list[int] = []
    for i in range(9):
        if (i > 0 and counts[i - 1]) or (i < 8 and counts[i + 1]) or counts[i] or \
                (i > 1 and counts[i - 2]) or (i < 7 and counts[i + 2]):
            c = list(counts)
            c[i] += 1
            np, wp = suit_completions(tuple(c))
            if np:
                no_pair.append(i + 1)
            if wp:
                with_pair.append(i + 1)
    return tuple(no_pair), tuple(with_pair)


@lru_cache(maxsize=None)
def honor_waits(counts: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Honor tiles that complete the honors ``counts`` (seven counts, E S W N C F P): ``(as pungs
    only, as pungs plus one pair)``, as tile codes. Counts may reach 5 with the added tile."""
    no_pair: list[int] = []
    with_pair: list[int] = []
    for i, c in enumerate(counts):
        if c == 0:
            continue  # a lone new honor completes nothing
        trial = list(counts)
        trial[i] += 1
        pairs = 0
        for v in trial:
            if v == 2 or v == 5:
                pairs += 1
            elif v != 0 and v != 3:
                break
        else:
            if pairs == 1:
                with_pair.append(31 + i)
            elif pairs == 0:
                no_pair.append(31 + i)
    return tuple(no_pair), tuple(with_pair)


def waiting_tiles(standing: list[int] | bytes, with_seven_pairs: bool) -> list[int]:
    """The tiles that would complete the standing tiles (the hand minus the winning tile).

    This is a question of shape: a tile counts even when all four copies are already visible,
    as in the reference calculator. Each suit, and the honors, is looked up in a cache: a tile of
    suit X completes the hand when X plus the tile splits into sets (with or without the pair)
    and every other suit splits into sets with the remaining pair count.

    Args:
        standing: count table of the concealed tiles *without* the winning tile, a list or bytes.
        with_seven_pairs: also count the seven-pairs wait (only for 13 concealed tiles).

    Returns:
        The waiting tile codes in canonical order.
    """
    # Each component (three suits, then the honors) as (sets only possible, sets + pair possible).
    # Each suit's and the honors' counts are slices of the table made bytes once: the caches'
    # keys (hashed and compared by memcmp; the caches of suit_completions, suit_waits and
    # honor_waits hold these bytes keys beside the tuples other callers give).
    counts = standing if standing.__class__ is bytes else bytes(standing)
    suit_counts = (counts[1:10], counts[11:20], counts[21:30])
    m, b, p = suit_counts
    comps = (suit_completions(m) if m != _NO_TILES else _EMPTY_SUIT,
             suit_completions(b) if b != _NO_TILES else _EMPTY_SUIT,
             suit_completions(p) if p != _NO_TILES else _EMPTY_SUIT)
    honor_counts = counts[31:38]
    honor_pairs = honor_counts.count(2)
    honors_ok = honor_pairs + honor_counts.count(3) + honor_counts.count(0) == 7
    comps += ((honors_ok and honor_pairs == 0, honors_ok and honor_pairs == 1),)
    waits: list[int] = []
    sets_only = (comps[0][0], comps[1][0], comps[2][0], comps[3][0])
    n_blocking = sets_only.count(False)
    if n_blocking > 2:
        return waits if not with_seven_pairs else _seven_pairs_wait(standing, waits)
    pair_ok = (comps[0][1], comps[1][1], comps[2][1], comps[3][1])
    n_pair_ok = pair_ok.count(True)
    for x in range(4):
        # the other components: all split into sets (others_none), or exactly one holds the pair
        blocking = n_blocking - (not sets_only[x])
        if blocking == 0:
            others_none = True
            others_one = n_pair_ok - pair_ok[x] > 0
        elif blocking == 1:
            others_none = False
            j = sets_only.index(False)
            if j == x:
                j = sets_only.index(False, x + 1)
            others_one = pair_ok[j]
        else:
            continue
        if not others_none and not others_one:
            continue
        # waits (tile codes) as sets only, as sets and the pair, either
        found = _suit_wait_codes(suit_counts[x], x * 10) if x < 3 else _honor_wait_codes(honor_counts)
        waits += found[2] if others_none and others_one else found[1] if others_none else found[0]
    return _seven_pairs_wait(standing, waits) if with_seven_pairs else waits


@lru_cache(maxsize=None)
def _suit_wait_codes(counts: tuple[int, ...], base: int) -> tuple[tuple[int, ...], ...]:
    """``suit_waits`` as tile codes of the suit starting at ``base``, and the two together sorted."""
    no_pair, with_pair = suit_waits(counts)
    return (tuple(base + r for r in no_pair), tuple(base + r for r in with_pair),
            tuple(base + r for r in sorted(set(no_pair + with_pair))))


@lru_cache(maxsize=None)
def _honor_wait_codes(counts: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """``honor_waits``, and the two together sorted."""
    no_pair, with_pair = honor_waits(counts)
    return no_pair, with_pair, tuple(sorted(no_pair + with_pair))


_EMPTY_SUIT = (True, False)


class _UniqueWaits(dict):
    """For one suit's nine counts, or the honors' seven (bytes, as slices of a count table), of a
    complete regular hand: a list by the index of a tile in them (rank less one, honor index
    less one) of whether that tile, as the winning tile, may score a wait fan (``unique_wait``),
    each worked out when first asked for (None until then). At most 5**9 + 5**7 keys; only the
    shares of complete hands are asked for, in play a few thousand."""

    def __missing__(self, counts: bytes) -> list[bool | None]:
        found = self[counts] = [None] * len(counts)
        return found


_UNIQUE_WAITS = _UniqueWaits()
#: Each tile code's share of a count table (its suit's nine counts, or the honors' seven) as a
#: slice, and the tile's index in it.
_SHARE_OF = [(slice(31, 38), t - 31) if t > 30 else (slice(t - t % 10 + 1, t - t % 10 + 10), t % 10 - 1)
             for t in range(TABLE_SIZE)]


def _suit_unique_wait(counts: bytes, i: int) -> bool:
    """Whether the tile at index ``i`` (rank less one, honor index less one) of one suit's or the
    honors' ``counts`` (a share of a complete regular hand, holding that tile) is the hand's only
    wait once taken out of it, whatever the other shares (``_UniqueWaits``).

    A wait depends on the other shares only through whether they split into sets and which one
    holds the pair, and in a complete hand that follows from their tile counts (a share of 3k
    tiles splits into sets, one of 3k+2 into sets and the pair; every share of a complete hand
    splits). So with the winning tile w taken out of its share X (the rest of X: X'):

    * X held the pair (3k+2 tiles): the others are sets only and X' (3k+1) splits in no way, so
      the waits are the tiles that make X' sets and a pair, all of X's kind.
    * X held sets only (3k): the pair is in another share P, so the waits are the tiles that make
      X' sets only, plus, when X' also splits into sets and a pair, the tiles that make P sets
      only (P's pair tile at least: never w).

    Each is read from ``suit_waits``/``suit_completions`` (``honor_waits`` for the honors) as
    ``waiting_tiles`` reads them; the seven-pairs wait is not included (``unique_wait`` adds it).
    """
    held = sum(counts) % 3
    if held == 1:  # a share of 3k+1 tiles is in no complete hand
        return False
    rest = bytearray(counts)
    rest[i] -= 1
    rest = bytes(rest)
    if len(counts) == 7:  # the honors: pungs and at most one pair
        tile = 31 + i
        sets_only, sets_and_pair = honor_waits(rest)
        pairs = rest.count(2)
        with_pair = pairs == 1 and pairs + rest.count(3) + rest.count(0) == 7
    else:
        tile = i + 1
        sets_only, sets_and_pair = suit_waits(rest)
        with_pair = suit_completions(rest)[1]
    if held == 2:
        return sets_and_pair == (tile,)
    return sets_only == (tile,) and not with_pair


def unique_wait(table: bytes, win: int, with_seven_pairs: bool, readings: list[Division]) -> bool:
    """Whether the hand may score a wait fan (边张, 嵌张, 单钓: ``calculator._wait_fan`` says which):
    the winning tile is the only tile that completes the hand without it (as
    ``waiting_tiles(table less win, with_seven_pairs) == [win]``) and some reading has it in a
    concealed chow or the pair.

    Args:
        table: count table as bytes of the concealed tiles, winning tile included.
        win: the winning tile's code.
        with_seven_pairs: the seven-pairs wait counts too (13 concealed tiles).
        readings: ``regular_divisions(table, ...)``, not empty (for a table that does not split
            into sets and a pair the answer means nothing).

    Both conditions depend only on the winning tile's share of the table (the suit or the
    honors: ``_suit_unique_wait`` says why for the first; the second reads the share's
    decompositions, which are the readings' parts of that suit), so the answer is kept by that
    share (``_UniqueWaits``): a lookup instead of the waits of every suit. A tile not yet in it
    is worked out by ``_wait_may_be_unique`` on the readings, and then, if that allows a wait
    fan, ``_suit_unique_wait``. The seven-pairs wait, which reads the whole table, is checked
    only when the regular waits are the winning tile alone.
    """
    share, i = _SHARE_OF[win]
    counts = table[share]
    answers = _UNIQUE_WAITS[counts]
    unique = answers[i]
    if unique is None:
        unique = answers[i] = _wait_may_be_unique(readings, win) and _suit_unique_wait(counts, i)
    if unique and with_seven_pairs:
        without_win = table[:win] + bytes((table[win] - 1,)) + table[win + 1:]
        return _seven_pairs_wait(without_win, [win]) == [win]
    return unique


def _wait_may_be_unique(readings: list[Division], win: int) -> bool:
    """Whether some reading has the winning tile in its pair or in one of its concealed chows,
    while no reading shows a second waiting tile: the winning tile at the end of a chow that the
    tile three ranks away also completes (两面), or in a concealed pung beside another pair (双碰:
    that pair's tile also completes the hand)."""
    found = False
    rank = win % 10
    for _, pair, chows, pungs in readings:
        if pair == win:
            found = True
        for t in chows:
            if t - 1 == win and rank <= 6 or t + 1 == win and rank >= 4:
                return False
            if t - 1 <= win <= t + 1:
                found = True
        if pair != win and win in pungs:
            return False
    return found


def _seven_pairs_wait(standing: list[int] | bytes, waits: list[int]) -> list[int]:
    """Add the seven-pairs wait of 13 concealed tiles (six pairs, four alike counting as two)."""
    pairs = len(standing) - standing.count(0) - standing.count(1) + standing.count(4)  # 4 alike: two pairs
    if pairs == 6:
        for t in range(TABLE_SIZE):
            if standing[t] in (1, 3):
                if t not in waits:
                    waits.append(t)
                    waits.sort()
                break
    return waits
