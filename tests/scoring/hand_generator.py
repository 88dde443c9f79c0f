"""Seeded generator of legal MCR winning situations, for checking ``scoring`` against PyMahjongGB.

A :class:`Situation` is one complete win: up to 4 melds (chows, pungs, melded or concealed kongs),
the concealed standing tiles, the winning tile, and the circumstances (self-drawn, winds, flower
count, last tile of the wall, kong replacement, robbing the kong, fourth tile). It renders itself
in mjtable's hand notation (:meth:`Situation.to_notation`) and as keyword arguments for
``MahjongGB.MahjongFanCalculator`` (:meth:`Situation.to_pymahjonggb_kwargs`).

:func:`generate` draws situations from a weighted mixture of *families* (see ``FAMILIES``): plain
random hands, biased hands (flushes, honors, terminals, all pungs, chow/pung patterns, kongs, all
green, reversible, ...) and the special forms (seven pairs, thirteen orphans, honors and knitted
tiles, knitted straight, nine gates). The weights favour rare fans so that every fan the
reference can award shows up in a few thousand hands.

Everything is deterministic for a seed: only ``random.Random(seed)`` is used, and families are
walked in a fixed order. Each generated hand is self-checked by calling the reference; a hand the
reference rejects is discarded and redrawn, and the redraws are counted in
:class:`GeneratorStats` (they should stay at zero; a non-zero count means a generator bug).

Tiles are identified internally by an index 0..33: 0-8 characters ``1m``-``9m``, 9-17 bamboo
``1s``-``9s``, 18-26 dots ``1p``-``9p``, 27-30 winds ``E S W N``, 31-33 dragons ``C F P``
(red, green, white). Public fields of :class:`Situation` use mjtable tile names (``"5m"``, ``"E"``).
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections.abc import Callable, Iterator
from typing import NamedTuple

# --------------------------------------------------------------------------------------------
# Tiles
# --------------------------------------------------------------------------------------------

SUITS = ("m", "s", "p")  # index order: characters, bamboo, dots
HONOR_NAMES = ("E", "S", "W", "N", "C", "F", "P")
WINDS = ("E", "S", "W", "N")

#: mjtable tile name for each tile index 0..33.
TILE_NAMES: tuple[str, ...] = tuple(f"{r}{s}" for s in SUITS for r in range(1, 10)) + HONOR_NAMES
#: PyMahjongGB tile code for each tile index 0..33.
REF_CODES: tuple[str, ...] = (
    tuple(f"W{r}" for r in range(1, 10))
    + tuple(f"T{r}" for r in range(1, 10))
    + tuple(f"B{r}" for r in range(1, 10))
    + ("F1", "F2", "F3", "F4", "J1", "J2", "J3")
)
TILE_INDEX: dict[str, int] = {name: i for i, name in enumerate(TILE_NAMES)}
REF_CODE_OF_NAME: dict[str, str] = dict(zip(TILE_NAMES, REF_CODES))

WIND_TILES = (27, 28, 29, 30)
DRAGON_TILES = (31, 32, 33)
HONOR_TILES = WIND_TILES + DRAGON_TILES
SUITED_TILES = tuple(range(27))
ALL_TILES = tuple(range(34))
TERMINAL_TILES = (0, 8, 9, 17, 18, 26)


def tile(suit: int, rank: int) -> int:
    """Tile index of ``rank`` (1..9) in suit index ``suit`` (0 m, 1 s, 2 p)."""
    return suit * 9 + rank - 1


def _suited(t: int) -> bool:
    return t < 27


def _rank(t: int) -> int:
    return t % 9 + 1


def _suit(t: int) -> int:
    return t // 9


def _tiles_of_ranks(ranks: tuple[int, ...], suits: tuple[int, ...] = (0, 1, 2)) -> tuple[int, ...]:
    return tuple(tile(s, r) for s in suits for r in ranks)


GREEN_TILES = (tile(1, 2), tile(1, 3), tile(1, 4), tile(1, 6), tile(1, 8), 32)
REVERSIBLE_TILES = tuple(tile(2, r) for r in (1, 2, 3, 4, 5, 8, 9)) + tuple(
    tile(1, r) for r in (2, 4, 5, 6, 8, 9)
) + (33,)

# --------------------------------------------------------------------------------------------
# Public data model
# --------------------------------------------------------------------------------------------


class Meld(NamedTuple):
    """One declared meld.

    kind: ``"chow"``, ``"pung"`` or ``"kong"``.
    tiles: mjtable tile names, 3 for a chow/pung (chow ascending), 4 for a kong.
    offer: 0 only for a concealed kong; otherwise 1..3 — for a pung/kong the seat it was claimed
        from (1 left, 2 across, 3 right), for a chow which of its three tiles was claimed.
    """

    kind: str
    tiles: tuple[str, ...]
    offer: int


@dataclasses.dataclass(frozen=True, slots=True)
class Situation:
    """One legal winning situation.

    Attributes:
        melds: declared melds, 0..4 of them.
        concealed: standing tiles WITHOUT the winning tile, ``13 - 3 * len(melds)`` of them,
            sorted in tile-index order (mjtable tile names).
        winning_tile: the tile won on (mjtable name); it belongs to the concealed part.
        self_drawn: won by self-draw (else on a discard).
        seat_wind / prevalent_wind: ``"E" "S" "W" "N"``.
        flowers: number of flower tiles, 0..8 (each is one fan point).
        last_tile: won on the last tile of the wall (妙手回春 self-drawn / 海底捞月 on a discard).
        kong_replacement: 杠上开花; only when self-drawn and a kong is among the melds.
        robbing_kong: 抢杠和; only on a discard, and the winning tile appears nowhere else.
        fourth_tile: 和绝张; only when the winning tile is not among ``concealed``.
        family: name of the generator family that produced it (for diagnostics only).
    """

    melds: tuple[Meld, ...]
    concealed: tuple[str, ...]
    winning_tile: str
    self_drawn: bool
    seat_wind: str
    prevalent_wind: str
    flowers: int
    last_tile: bool
    kong_replacement: bool
    robbing_kong: bool
    fourth_tile: bool
    family: str = ""

    def to_notation(self) -> str:
        """Render in mjtable notation: melds in brackets, concealed tiles, then the winning tile.

        Example: ``[EEE,2][SSSS,1]WWWNN55pN`` (winning tile ``N``); concealed kongs have no
        offer digit (``[EEEE]``). The winning tile is always written as its own final group.
        """
        parts = [_render_meld(m) for m in self.melds]
        parts.append(_render_tiles(self.concealed))
        parts.append(_render_tiles((self.winning_tile,)))
        return "".join(parts)

    def score_kwargs(self) -> dict[str, object]:
        """Keyword arguments for ``scoring.score_hand`` besides the hand string and ``rules``."""
        return {
            "self_drawn": self.self_drawn,
            "seat_wind": self.seat_wind,
            "prevalent_wind": self.prevalent_wind,
            "flowers": self.flowers,
            "last_tile": self.last_tile,
            "kong_replacement": self.kong_replacement,
            "robbing_kong": self.robbing_kong,
            "fourth_tile": self.fourth_tile,
        }

    def to_pymahjonggb_kwargs(self) -> dict[str, object]:
        """Keyword arguments for ``MahjongGB.MahjongFanCalculator`` (with ``verbose=True``)."""
        packs = []
        for m in self.melds:
            if m.kind == "chow":
                packs.append(("CHI", REF_CODE_OF_NAME[m.tiles[1]], m.offer))
            elif m.kind == "pung":
                packs.append(("PENG", REF_CODE_OF_NAME[m.tiles[0]], m.offer))
            else:
                packs.append(("GANG", REF_CODE_OF_NAME[m.tiles[0]], m.offer))
        return {
            "pack": tuple(packs),
            "hand": tuple(REF_CODE_OF_NAME[t] for t in self.concealed),
            "winTile": REF_CODE_OF_NAME[self.winning_tile],
            "flowerCount": self.flowers,
            "isSelfDrawn": self.self_drawn,
            "is4thTile": self.fourth_tile,
            "isAboutKong": self.kong_replacement or self.robbing_kong,
            "isWallLast": self.last_tile,
            "seatWind": WINDS.index(self.seat_wind),
            "prevalentWind": WINDS.index(self.prevalent_wind),
            "verbose": True,
        }

    def flags_text(self) -> str:
        """Short human-readable summary of the circumstances, for failure reports."""
        on = [
            name
            for name, value in (
                ("self_drawn", self.self_drawn),
                ("last_tile", self.last_tile),
                ("kong_replacement", self.kong_replacement),
                ("robbing_kong", self.robbing_kong),
                ("fourth_tile", self.fourth_tile),
            )
            if value
        ]
        return (
            f"seat={self.seat_wind} prevalent={self.prevalent_wind} flowers={self.flowers} "
            + (" ".join(on) if on else "discard")
        )

    def tile_counts(self) -> dict[str, int]:
        """Physical copies of each tile in the whole hand (kongs count 4), keyed by tile name."""
        counts: dict[str, int] = {}
        for t in [t for m in self.melds for t in m.tiles] + list(self.concealed) + [self.winning_tile]:
            counts[t] = counts.get(t, 0) + 1
        return counts


def _render_tiles(names: tuple[str, ...] | list[str]) -> str:
    """Concealed tiles as ``55789m12789s`` + honor letters; consecutive suited tiles grouped."""
    out: list[str] = []
    digits: list[str] = []
    suit = ""
    for n in names:
        if len(n) == 2:
            if n[1] != suit and digits:
                out.append("".join(digits) + suit)
                digits = []
            suit = n[1]
            digits.append(n[0])
        else:
            if digits:
                out.append("".join(digits) + suit)
                digits = []
                suit = ""
            out.append(n)
    if digits:
        out.append("".join(digits) + suit)
    return "".join(out)


def _render_meld(m: Meld) -> str:
    body = _render_tiles(m.tiles)
    if m.kind == "kong" and m.offer == 0:
        return f"[{body}]"
    return f"[{body},{m.offer}]"


# --------------------------------------------------------------------------------------------
# Internal shapes
# --------------------------------------------------------------------------------------------


class _Set(NamedTuple):
    kind: str  # "chow" (tile = lowest tile) | "pung" | "kong"
    tile: int

    def tiles(self) -> list[int]:
        if self.kind == "chow":
            return [self.tile, self.tile + 1, self.tile + 2]
        if self.kind == "pung":
            return [self.tile] * 3
        return [self.tile] * 4


@dataclasses.dataclass(slots=True)
class _Regular:
    """A regular (4 sets + pair) or knitted-straight shape before melds are chosen.

    sets: the sets; kongs are already ``kind="kong"``.
    pair: tile index of the pair.
    knitted: the 9 tiles of a knitted straight (then ``sets`` has exactly one set), else empty.
    kong_rate: probability that each pung becomes a kong when melds are chosen.
    meld_weights: weights for the number of non-kong sets to declare (index = count).
    quiet: mostly a plain discard win (few circumstance flags), for hands aiming at 无番和.
    """

    sets: list[_Set]
    pair: int
    knitted: tuple[int, ...] = ()
    kong_rate: float = 0.08
    meld_weights: tuple[int, ...] = (40, 18, 14, 12, 16)
    quiet: bool = False


@dataclasses.dataclass(slots=True)
class _Special:
    """A fully concealed special form: the 14 tiles; ``win_choices`` restricts the winning tile."""

    tiles: list[int]
    win_choices: tuple[int, ...] = ()


class _Fail(Exception):
    """A family could not complete a shape under the 4-copies rule; the caller redraws."""


def _chow_ok(t: int) -> bool:
    return _suited(t) and _rank(t) <= 7


class _Builder:
    """Accumulates sets under the 4-copies-per-tile rule."""

    __slots__ = ("rng", "counts", "sets")

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.counts = [0] * 34
        self.sets: list[_Set] = []

    def can(self, s: _Set) -> bool:
        if s.kind == "chow":
            if not _chow_ok(s.tile):
                return False
            return all(self.counts[t] < 4 for t in (s.tile, s.tile + 1, s.tile + 2))
        need = 3 if s.kind == "pung" else 4
        return self.counts[s.tile] + need <= 4

    def add(self, kind: str, t: int) -> None:
        s = _Set(kind, t)
        if not self.can(s):
            raise _Fail
        for x in s.tiles():
            self.counts[x] += 1
        self.sets.append(s)

    def fill(self, pool: tuple[int, ...], chow_weight: float = 0.6, n: int = 4) -> None:
        """Add random sets until there are ``n``; chows need all three tiles in ``pool``."""
        rng = self.rng
        pool_set = set(pool)
        chow_starts = [t for t in pool if _chow_ok(t) and t + 1 in pool_set and t + 2 in pool_set]
        for _ in range(60):
            if len(self.sets) >= n:
                return
            if chow_starts and rng.random() < chow_weight:
                s = _Set("chow", rng.choice(chow_starts))
            else:
                s = _Set("pung", rng.choice(pool))
            if self.can(s):
                self.add(s.kind, s.tile)
        raise _Fail

    def pair(self, pool: tuple[int, ...]) -> int:
        free = [t for t in pool if self.counts[t] <= 2]
        if not free:
            raise _Fail
        t = self.rng.choice(free)
        self.counts[t] += 2
        return t

    def done(self, pool: tuple[int, ...], **kw: object) -> _Regular:
        return _Regular(list(self.sets), self.pair(pool), **kw)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Families. Each takes the rng and returns a shape (or raises _Fail).
# --------------------------------------------------------------------------------------------


def _fam_random(rng: random.Random) -> _Regular:
    """Any tiles, chow-heavy: the everyday hand (平和, 断幺, waits, chicken hand, ...)."""
    b = _Builder(rng)
    b.fill(ALL_TILES, chow_weight=rng.choice((0.5, 0.75, 0.9)))
    return b.done(ALL_TILES)


def _fam_no_honor_simple(rng: random.Random) -> _Regular:
    """Suited tiles only, sometimes restricted to 2..8 (断幺) or to two suits (缺一门)."""
    b = _Builder(rng)
    r = rng.random()
    if r < 0.4:
        pool = _tiles_of_ranks(tuple(range(2, 9)))
    elif r < 0.8:
        suits = tuple(rng.sample((0, 1, 2), 2))
        pool = _tiles_of_ranks(tuple(range(1, 10)), suits)
    else:
        pool = SUITED_TILES
    b.fill(pool, chow_weight=0.8)
    return b.done(pool)


def _fam_chicken(rng: random.Random) -> _Regular:
    """Aimed at the chicken hand (无番和): an honor pair, simple sets in all three suits, 1-3
    melds, usually won on a discard without special circumstances."""
    b = _Builder(rng)
    suits = [0, 1, 2]
    rng.shuffle(suits)
    simples = tuple(range(2, 9))
    for su in suits + [rng.randrange(3)]:
        b.fill(_tiles_of_ranks(simples, (su,)), n=len(b.sets) + 1, chow_weight=0.6)
    return b.done(HONOR_TILES, kong_rate=0.0, meld_weights=(0, 35, 40, 25), quiet=True)


def _fam_flush(rng: random.Random) -> _Regular:
    """Full flush (one suit) or half flush (one suit + honors)."""
    s = rng.randrange(3)
    suit_tiles = _tiles_of_ranks(tuple(range(1, 10)), (s,))
    b = _Builder(rng)
    if rng.random() < 0.5:
        b.fill(suit_tiles, chow_weight=rng.choice((0.4, 0.7)))
        return b.done(suit_tiles)
    n_hon = rng.randint(1, 2)
    for _ in range(n_hon):
        b.fill(HONOR_TILES, n=len(b.sets) + 1, chow_weight=0.0)
    b.fill(suit_tiles, chow_weight=0.6)
    return b.done(suit_tiles + HONOR_TILES if rng.random() < 0.5 else HONOR_TILES)


def _fam_honors(rng: random.Random) -> _Regular:
    """Wind and dragon pungs: four/three winds, three dragons, all honors, 箭刻, 圈风/门风刻."""
    b = _Builder(rng)
    kind = rng.randrange(6)
    if kind == 0:  # big four winds
        for w in WIND_TILES:
            b.add("pung", w)
        return b.done(ALL_TILES)
    if kind == 1:  # little four winds / big three winds
        ws = list(WIND_TILES)
        rng.shuffle(ws)
        for w in ws[:3]:
            b.add("pung", w)
        b.fill(ALL_TILES if rng.random() < 0.5 else HONOR_TILES, chow_weight=0.5)
        return b.done((ws[3],) if rng.random() < 0.6 else ALL_TILES)
    if kind == 2:  # big / little three dragons, two dragon pungs
        ds = list(DRAGON_TILES)
        rng.shuffle(ds)
        k = rng.choice((2, 3))
        for d in ds[:k]:
            b.add("pung", d)
        b.fill(ALL_TILES, chow_weight=0.6)
        return b.done((ds[2],) if k == 2 and rng.random() < 0.6 else ALL_TILES)
    if kind == 3:  # all honors
        b.fill(HONOR_TILES, chow_weight=0.0)
        return b.done(HONOR_TILES)
    # one or two honor pungs in an otherwise random hand (箭刻, 圈风刻, 门风刻, 幺九刻)
    for _ in range(rng.randint(1, 2)):
        b.fill(HONOR_TILES, n=len(b.sets) + 1, chow_weight=0.0)
    b.fill(SUITED_TILES, chow_weight=0.7)
    return b.done(ALL_TILES)


def _fam_terminals(rng: random.Random) -> _Regular:
    """All terminals (清幺九), terminals and honors (混幺九), outside hand (全带幺)."""
    b = _Builder(rng)
    kind = rng.randrange(3)
    if kind == 0:
        b.fill(TERMINAL_TILES, chow_weight=0.0)
        return b.done(TERMINAL_TILES)
    if kind == 1:
        pool = TERMINAL_TILES + HONOR_TILES
        b.fill(pool, chow_weight=0.0)
        return b.done(pool)
    # outside hand: every set holds a terminal or honor
    outside_chows = tuple(tile(s, r) for s in range(3) for r in (1, 7))
    pool = TERMINAL_TILES + HONOR_TILES
    for _ in range(60):
        if len(b.sets) == 4:
            break
        if rng.random() < 0.65:
            s = _Set("chow", rng.choice(outside_chows))
        else:
            s = _Set("pung", rng.choice(pool))
        if b.can(s):
            b.add(s.kind, s.tile)
    if len(b.sets) < 4:
        raise _Fail
    return b.done(pool)


def _fam_all_pungs(rng: random.Random) -> _Regular:
    """All pungs (碰碰和), often concealed (三暗刻, 四暗刻, 双暗刻)."""
    b = _Builder(rng)
    pool = ALL_TILES if rng.random() < 0.7 else SUITED_TILES
    b.fill(pool, chow_weight=0.0)
    weights = (45, 20, 15, 10, 10)
    return b.done(ALL_TILES, kong_rate=0.12, meld_weights=weights)


def _fam_chow_patterns(rng: random.Random) -> _Regular:
    """Planted chow patterns: shifted, straight, triple/quadruple, double, short straight, ..."""
    b = _Builder(rng)
    s = rng.randrange(3)
    others = [x for x in range(3) if x != s]
    rng.shuffle(others)
    kind = rng.randrange(14)
    if kind == 0:  # pure shifted chows, 3 or 4, step 1 or 2
        n = rng.choice((3, 4))
        step = rng.choice((1, 2))
        start = rng.randint(1, 7 - step * (n - 1))
        for i in range(n):
            b.add("chow", tile(s, start + i * step))
    elif kind == 1:  # pure straight
        for r in (1, 4, 7):
            b.add("chow", tile(s, r))
    elif kind == 2:  # mixed straight
        suits = [s] + others
        for r, su in zip((1, 4, 7), suits):
            b.add("chow", tile(su, r))
    elif kind == 3:  # pure triple chow
        r = rng.randint(1, 7)
        for _ in range(3):
            b.add("chow", tile(s, r))
    elif kind == 4:  # quadruple chow
        r = rng.randint(1, 7)
        for _ in range(4):
            b.add("chow", tile(s, r))
    elif kind == 5:  # mixed triple chow
        r = rng.randint(1, 7)
        for su in range(3):
            b.add("chow", tile(su, r))
    elif kind == 6:  # mixed shifted chows
        r = rng.randint(1, 5)
        for i, su in enumerate([s] + others):
            b.add("chow", tile(su, r + i))
    elif kind == 7:  # pure double chow (+ maybe another pair of it: 一色双龙会 style)
        r = rng.randint(1, 7)
        b.add("chow", tile(s, r))
        b.add("chow", tile(s, r))
    elif kind == 8:  # mixed double chow
        r = rng.randint(1, 7)
        b.add("chow", tile(s, r))
        b.add("chow", tile(others[0], r))
    elif kind == 9:  # short straight
        r = rng.randint(1, 4)
        b.add("chow", tile(s, r))
        b.add("chow", tile(s, r + 3))
    elif kind == 10:  # two terminal chows
        b.add("chow", tile(s, 1))
        b.add("chow", tile(s, 7))
    elif kind == 11:  # pure terminal chows 一色双龙会
        for r in (1, 1, 7, 7):
            b.add("chow", tile(s, r))
        return b.done((tile(s, 5),) if rng.random() < 0.8 else ALL_TILES)
    elif kind == 12:  # three-suited terminal chows 三色双龙会
        for su in others:
            b.add("chow", tile(su, 1))
            b.add("chow", tile(su, 7))
        return b.done((tile(s, 5),) if rng.random() < 0.8 else ALL_TILES)
    else:  # tile hog: a pung plus a chow through the same tile
        r = rng.randint(1, 9)
        b.add("pung", tile(s, r))
        lo = rng.choice([x for x in (r - 2, r - 1, r) if 1 <= x <= 7])
        b.add("chow", tile(s, lo))
    pool = _tiles_of_ranks(tuple(range(1, 10)), (s,)) if rng.random() < 0.4 else ALL_TILES
    b.fill(pool, chow_weight=0.7)
    return b.done(pool if rng.random() < 0.5 else ALL_TILES)


def _fam_pung_patterns(rng: random.Random) -> _Regular:
    """Planted pung patterns: shifted pungs (pure/mixed, 3 or 4), triple pung, double pung."""
    b = _Builder(rng)
    suits = [0, 1, 2]
    rng.shuffle(suits)
    kind = rng.randrange(5)
    if kind == 0:  # pure shifted pungs, 3 or 4
        n = rng.choice((3, 4))
        r = rng.randint(1, 10 - n)
        for i in range(n):
            b.add("pung", tile(suits[0], r + i))
    elif kind == 1:  # mixed shifted pungs
        r = rng.randint(1, 7)
        for i in range(3):
            b.add("pung", tile(suits[i], r + i))
    elif kind == 2:  # triple pung
        r = rng.randint(1, 9)
        for su in suits:
            b.add("pung", tile(su, r))
    elif kind == 3:  # double pung
        r = rng.randint(1, 9)
        b.add("pung", tile(suits[0], r))
        b.add("pung", tile(suits[1], r))
    else:  # two or three concealed-prone pungs, random remainder
        for _ in range(rng.randint(2, 3)):
            b.fill(ALL_TILES, n=len(b.sets) + 1, chow_weight=0.0)
    b.fill(ALL_TILES, chow_weight=rng.choice((0.0, 0.6)))
    return b.done(ALL_TILES, kong_rate=0.12, meld_weights=(45, 20, 15, 10, 10))


def _fam_kongs(rng: random.Random) -> _Regular:
    """Two to four kongs (四杠, 三杠, 双暗杠, 双明杠, 明暗杠)."""
    b = _Builder(rng)
    n = rng.choice((2, 2, 3, 3, 4, 4))
    for _ in range(n):
        b.fill(ALL_TILES, n=len(b.sets) + 1, chow_weight=0.0)
    b.sets = [_Set("kong", x.tile) for x in b.sets]
    for x in b.sets:
        b.counts[x.tile] = 4
    b.fill(ALL_TILES, chow_weight=0.6)
    return b.done(ALL_TILES, kong_rate=0.0)


def _fam_restricted(rng: random.Random) -> _Regular:
    """Hands confined to a tile range: all green, reversible, all even pungs, upper/middle/lower
    tiles, upper/lower four, all simples, all fives."""
    b = _Builder(rng)
    kind = rng.randrange(9)
    if kind == 0:
        pool = GREEN_TILES
    elif kind == 1:
        pool = REVERSIBLE_TILES
    elif kind == 2:  # all even pungs
        pool = _tiles_of_ranks((2, 4, 6, 8))
        b.fill(pool, chow_weight=0.0)
        return b.done(pool, kong_rate=0.1)
    elif kind == 3:
        pool = _tiles_of_ranks((7, 8, 9))
    elif kind == 4:
        pool = _tiles_of_ranks((4, 5, 6))
    elif kind == 5:
        pool = _tiles_of_ranks((1, 2, 3))
    elif kind == 6:
        pool = _tiles_of_ranks((6, 7, 8, 9))
    elif kind == 7:
        pool = _tiles_of_ranks((1, 2, 3, 4))
    else:  # all fives: every set holds a 5
        for _ in range(60):
            if len(b.sets) == 4:
                break
            su = rng.randrange(3)
            s = _Set("chow", tile(su, rng.randint(3, 5))) if rng.random() < 0.75 else _Set("pung", tile(su, 5))
            if b.can(s):
                b.add(s.kind, s.tile)
        if len(b.sets) < 4:
            raise _Fail
        return b.done(_tiles_of_ranks((5,)))
    if rng.random() < 0.3:  # one suit only, for 清一色 combinations
        su = rng.randrange(3)
        narrowed = tuple(t for t in pool if not _suited(t) or _suit(t) == su)
        if len(narrowed) >= 3:
            pool = narrowed
    b.fill(pool, chow_weight=0.6)
    return b.done(pool)


def _fam_five_types(rng: random.Random) -> _Regular:
    """All types (五门齐): one set or pair in each suit, a wind and a dragon."""
    b = _Builder(rng)
    groups: list[tuple[int, ...]] = [
        _tiles_of_ranks(tuple(range(1, 10)), (0,)),
        _tiles_of_ranks(tuple(range(1, 10)), (1,)),
        _tiles_of_ranks(tuple(range(1, 10)), (2,)),
        WIND_TILES,
        DRAGON_TILES,
    ]
    rng.shuffle(groups)
    for g in groups[:4]:
        b.fill(g, n=len(b.sets) + 1, chow_weight=0.7)
    return b.done(groups[4])


def _fam_knitted_straight(rng: random.Random) -> _Regular:
    """Knitted straight (组合龙) + one set + a pair; the set may be declared (0 or 1 meld)."""
    knitted = _knitted_tiles(rng)
    b = _Builder(rng)
    for t in knitted:
        b.counts[t] += 1
    b.fill(ALL_TILES, n=1, chow_weight=0.6)
    return b.done(ALL_TILES, knitted=knitted, kong_rate=0.1, meld_weights=(55, 45))


def _fam_seven_pairs(rng: random.Random) -> _Special:
    """Seven pairs: random, one suit, honors/terminals, with 4-of-a-kind pairs; seven shifted pairs."""
    r = rng.random()
    if r < 0.25:  # seven shifted pairs
        s = rng.randrange(3)
        start = rng.randint(1, 3)
        tiles = [tile(s, start + i) for i in range(7) for _ in range(2)]
        return _Special(tiles)
    if r < 0.45:
        pool: tuple[int, ...] = _tiles_of_ranks(tuple(range(1, 10)), (rng.randrange(3),))
        if rng.random() < 0.5:
            pool += HONOR_TILES
    elif r < 0.6:
        pool = rng.choice((TERMINAL_TILES + HONOR_TILES, HONOR_TILES, TERMINAL_TILES, GREEN_TILES, REVERSIBLE_TILES))
    elif r < 0.7:
        pool = _tiles_of_ranks(tuple(range(2, 9)))
    else:
        pool = ALL_TILES
    counts = [0] * 34
    tiles: list[int] = []
    allow_quad = rng.random() < 0.35
    for _ in range(80):
        if len(tiles) == 14:
            break
        t = rng.choice(pool)
        if counts[t] == 0 or (allow_quad and counts[t] == 2):
            counts[t] += 2
            tiles += [t, t]
    if len(tiles) != 14:
        raise _Fail
    return _Special(tiles)


def _fam_thirteen_orphans(rng: random.Random) -> _Special:
    """Thirteen orphans: one of each terminal and honor plus a duplicate."""
    base = list(TERMINAL_TILES + HONOR_TILES)
    return _Special(base + [rng.choice(base)])


def _knitted_tiles(rng: random.Random) -> tuple[int, ...]:
    perm = [0, 1, 2]
    rng.shuffle(perm)
    return tuple(tile(perm[i], r) for i in range(3) for r in (1 + i, 4 + i, 7 + i))


def _fam_honors_knitted(rng: random.Random) -> _Special:
    """Lesser (全不靠) and greater (七星不靠) honors and knitted tiles: 14 distinct of 16."""
    knitted = list(_knitted_tiles(rng))
    if rng.random() < 0.4:  # greater: all seven honors + 7 of the 9 knitted tiles
        return _Special(rng.sample(knitted, 7) + list(HONOR_TILES))
    # lesser: 5 or 6 honors (so at most 9 suited tiles)
    n_hon = rng.choice((5, 6))
    return _Special(rng.sample(list(HONOR_TILES), n_hon) + rng.sample(knitted, 14 - n_hon))


def _fam_nine_gates(rng: random.Random) -> _Special:
    """Nine gates: 1112345678999 of one suit, winning on any tile of that suit."""
    s = rng.randrange(3)
    base = [tile(s, r) for r in (1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9)]
    extra = tile(s, rng.randint(1, 9))
    # usually the extra tile is the winning tile (九莲宝灯); sometimes not (plain full flush)
    choices = (extra,) if rng.random() < 0.85 else ()
    return _Special(base + [extra], win_choices=choices)


Family = Callable[[random.Random], "_Regular | _Special"]

#: (name, weight, builder). Weights are relative; see the module docstring for the rationale.
FAMILIES: tuple[tuple[str, float, Family], ...] = (
    ("random", 14.0, _fam_random),
    ("suited", 6.0, _fam_no_honor_simple),
    ("chicken", 3.0, _fam_chicken),
    ("flush", 8.0, _fam_flush),
    ("honors", 8.0, _fam_honors),
    ("terminals", 5.0, _fam_terminals),
    ("all_pungs", 6.0, _fam_all_pungs),
    ("chow_patterns", 12.0, _fam_chow_patterns),
    ("pung_patterns", 7.0, _fam_pung_patterns),
    ("kongs", 5.0, _fam_kongs),
    ("restricted", 9.0, _fam_restricted),
    ("five_types", 2.0, _fam_five_types),
    ("knitted_straight", 4.0, _fam_knitted_straight),
    ("seven_pairs", 6.0, _fam_seven_pairs),
    ("thirteen_orphans", 1.5, _fam_thirteen_orphans),
    ("honors_knitted", 2.5, _fam_honors_knitted),
    ("nine_gates", 1.5, _fam_nine_gates),
)

# --------------------------------------------------------------------------------------------
# From shape to situation
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass(slots=True)
class GeneratorStats:
    """Counters of one :func:`generate` run.

    generated: situations produced.
    construction_retries: shapes abandoned because a family hit the 4-copies rule (cheap, normal).
    reference_rejections: shapes the reference refused (TypeError); should be 0.
    per_family: situations produced per family name.
    """

    generated: int = 0
    construction_retries: int = 0
    reference_rejections: int = 0
    per_family: dict[str, int] = dataclasses.field(default_factory=dict)


def _meld_of(s: _Set, offer: int) -> Meld:
    return Meld(s.kind, tuple(TILE_NAMES[t] for t in s.tiles()), offer)


def _finish(rng: random.Random, shape: _Regular | _Special, family: str) -> Situation:
    """Choose melds, winning tile and consistent flags for a shape."""
    melds: list[Meld] = []
    fixed_counts = [0] * 34
    if isinstance(shape, _Special):
        part = list(shape.tiles)
        choices = shape.win_choices or tuple(part)
    else:
        shape_counts = [0] * 34
        for t in [t for s in shape.sets for t in s.tiles()] + list(shape.knitted) + [shape.pair] * 2:
            shape_counts[t] += 1
        # upgrade pungs to kongs where the fourth copy is still free
        sets = []
        for s in shape.sets:
            if s.kind == "pung" and shape_counts[s.tile] == 3 and rng.random() < shape.kong_rate:
                s = _Set("kong", s.tile)
                shape_counts[s.tile] = 4
            sets.append(s)
        kongs = [s for s in sets if s.kind == "kong"]
        others = [s for s in sets if s.kind != "kong"]
        max_extra = len(shape.meld_weights) - 1
        n_extra = rng.choices(range(len(shape.meld_weights)), weights=shape.meld_weights)[0]
        n_extra = min(n_extra, len(others), max_extra)
        rng.shuffle(others)
        declared = others[:n_extra]
        hidden = others[n_extra:]
        for s in kongs:
            melds.append(_meld_of(s, 0 if rng.random() < 0.5 else rng.randint(1, 3)))
        for s in declared:
            melds.append(_meld_of(s, rng.randint(1, 3)))
        rng.shuffle(melds)
        for s in kongs + declared:
            for t in s.tiles():
                fixed_counts[t] += 1
        part = list(shape.knitted) + [t for s in hidden for t in s.tiles()] + [shape.pair, shape.pair]
        choices = tuple(part)
    total = fixed_counts[:]
    for t in part:
        total[t] += 1
    if max(total) > 4:  # defensive: the reference does not check this itself
        raise _Fail
    win = rng.choice(choices)
    part.remove(win)
    part.sort()
    standing_win = part.count(win)

    # Flag rates: self-drawn 45 %; among the eligible hands kong replacement 40 %, robbing the
    # kong 30 %, fourth tile 30 %; last tile 12 % (never with robbing the kong); flowers 0 half the time, else 1..8.
    quiet = 0.25 if isinstance(shape, _Regular) and shape.quiet else 1.0
    self_drawn = rng.random() < 0.45 * quiet
    has_kong = any(m.kind == "kong" for m in melds)
    kong_replacement = self_drawn and has_kong and rng.random() < 0.4
    robbing_kong = (
        not self_drawn
        and standing_win == 0
        and fixed_counts[win] == 0
        and rng.random() < 0.3 * quiet
    )
    fourth_tile = standing_win == 0 and rng.random() < 0.3 * quiet
    # robbing the kong is never on the last tile (海底捞月 is a discard; a kong needs a replacement)
    last_tile = not robbing_kong and rng.random() < 0.12 * quiet
    flowers = 0 if rng.random() < 0.5 else rng.randint(1, 8)
    return Situation(
        melds=tuple(melds),
        concealed=tuple(TILE_NAMES[t] for t in part),
        winning_tile=TILE_NAMES[win],
        self_drawn=self_drawn,
        seat_wind=rng.choice(WINDS),
        prevalent_wind=rng.choice(WINDS),
        flowers=flowers,
        last_tile=last_tile,
        kong_replacement=kong_replacement,
        robbing_kong=robbing_kong,
        fourth_tile=fourth_tile,
        family=family,
    )


def _reference_accepts(sit: Situation) -> bool:
    from MahjongGB import MahjongFanCalculator  # declared dev dependency

    try:
        MahjongFanCalculator(**sit.to_pymahjonggb_kwargs())
    except TypeError:
        return False
    return True


def iter_situations(
    seed: int, stats: GeneratorStats | None = None, *, self_check: bool = True
) -> Iterator[Situation]:
    """Endless deterministic stream of situations for ``seed``.

    With ``self_check`` every situation is first scored by PyMahjongGB; rejected ones are redrawn
    and counted in ``stats.reference_rejections``.
    """
    rng = random.Random(seed)
    stats = stats if stats is not None else GeneratorStats()
    names = [f[0] for f in FAMILIES]
    weights = [f[1] for f in FAMILIES]
    builders = {f[0]: f[2] for f in FAMILIES}
    while True:
        name = rng.choices(names, weights=weights)[0]
        try:
            shape = builders[name](rng)
        except _Fail:
            stats.construction_retries += 1
            continue
        try:
            sit = _finish(rng, shape, name)
        except _Fail:
            stats.construction_retries += 1
            continue
        if self_check and not _reference_accepts(sit):
            stats.reference_rejections += 1
            continue
        stats.generated += 1
        stats.per_family[name] = stats.per_family.get(name, 0) + 1
        yield sit


@functools.lru_cache(maxsize=8)
def generate_cached(n: int, seed: int = 2026) -> tuple[tuple[Situation, ...], GeneratorStats]:
    """Memoised :func:`generate` (self-checked) with its stats, shared by tests in one session.

    Callers must not mutate the returned stats.
    """
    stats = GeneratorStats()
    return tuple(generate(n, seed, stats)), stats


def generate(
    n: int, seed: int = 2026, stats: GeneratorStats | None = None, *, self_check: bool = True
) -> list[Situation]:
    """The first ``n`` situations of :func:`iter_situations` for ``seed``."""
    it = iter_situations(seed, stats, self_check=self_check)
    return [next(it) for _ in range(n)]
