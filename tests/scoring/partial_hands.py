"""Seeded random hands in play (13 or 14 tiles, a meld counting 3) for the shanten and waits checks.

Each hand is declared melds (0-4 chows, pungs, melded or concealed kongs) and standing tiles, drawn
from one wall of 136 tiles, so no tile appears more than four times. The standing tiles come from a
mixture of *kinds*, so that every shape and every distance from ready shows up often:

* ``random``: tiles drawn at random from the wall;
* ``near``: a complete regular hand (sets and a pair) with 0-3 tiles swapped for random ones (13
  tiles: one more removed), so many hands are ready or one tile away;
* ``flush``: tiles of one suit (and sometimes honors) only, where waits are many and shapes tangle;
* ``pairs``, ``orphans``, ``knitted``: the special shapes (seven pairs, thirteen orphans, honors
  and knitted tiles, a knitted straight with a set and a pair), each with a few tiles swapped.

Tiles are mjtable codes (``scoring.tiles``): 1-9 m, 11-19 s, 21-29 p, 31-37 E S W N C F P.
"""

from __future__ import annotations

import dataclasses
import functools
import random

from scoring.hand import Meld, MeldKind
from scoring.tiles import ALL_TILES, KNITTED_STRAIGHTS, THIRTEEN_ORPHANS_TILES

SUITED = tuple(t for t in ALL_TILES if t < 30)
HONORS = tuple(t for t in ALL_TILES if t > 30)
KINDS = ("random", "near", "near", "near", "flush", "pairs", "orphans", "knitted")


@dataclasses.dataclass(frozen=True)
class PlayHand:
    """One hand in play: ``melds`` and the ``standing`` tile codes (sorted); ``kind`` for reports."""

    melds: tuple[Meld, ...]
    standing: tuple[int, ...]
    kind: str

    def notation(self) -> str:
        from scoring.hand import format_tiles
        return "".join(m.notation() for m in self.melds) + format_tiles(self.standing)

    @property
    def size(self) -> int:
        return 3 * len(self.melds) + len(self.standing)


class _Wall:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.left = {t: 4 for t in ALL_TILES}

    def take(self, t: int, n: int = 1) -> bool:
        if self.left[t] < n:
            return False
        self.left[t] -= n
        return True

    def take_set(self, kind: str, t: int) -> bool:
        if kind == "chow":
            if t > 30 or t % 10 > 7 or any(self.left[x] < 1 for x in (t, t + 1, t + 2)):
                return False
            for x in (t, t + 1, t + 2):
                self.left[x] -= 1
            return True
        return self.take(t, 4 if kind == "kong" else 3)

    def random_tile(self, pool=ALL_TILES) -> int:
        choices = [t for t in pool if self.left[t]]
        t = self.rng.choice(choices)
        self.left[t] -= 1
        return t

    def give_back(self, t: int) -> None:
        self.left[t] += 1


def _melds(rng: random.Random, wall: _Wall, n: int) -> list[Meld]:
    out: list[Meld] = []
    while len(out) < n:
        kind = rng.choice(("chow", "chow", "pung", "pung", "kong"))
        t = rng.choice(ALL_TILES)
        if not wall.take_set(kind, t):
            continue
        if kind == "chow":
            out.append(Meld(MeldKind.CHOW, t, False, rng.randint(1, 3)))
        elif kind == "pung":
            out.append(Meld(MeldKind.PUNG, t, False, rng.randint(1, 3)))
        else:
            concealed = rng.random() < 0.4
            out.append(Meld(MeldKind.KONG, t, concealed, None if concealed else rng.randint(1, 3)))
    return out


def _regular(rng: random.Random, wall: _Wall, n_sets: int, pool=ALL_TILES) -> list[int] | None:
    tiles: list[int] = []
    for _ in range(n_sets):
        for _attempt in range(30):
            t = rng.choice(pool)
            kind = "chow" if rng.random() < 0.6 else "pung"
            if wall.take_set(kind, t):
                tiles += [t, t + 1, t + 2] if kind == "chow" else [t] * 3
                break
        else:
            return None
    for _attempt in range(30):
        t = rng.choice(pool)
        if wall.take(t, 2):
            return tiles + [t, t]
    return None


def _special(rng: random.Random, wall: _Wall, kind: str, n_melds: int) -> list[int] | None:
    if kind == "pairs" and n_melds == 0:
        tiles: list[int] = []
        for t in rng.sample(ALL_TILES, 7):
            if not wall.take(t, 2):
                return None
            tiles += [t, t]
        return tiles
    if kind == "orphans" and n_melds == 0:
        tiles = list(THIRTEEN_ORPHANS_TILES) + [rng.choice(THIRTEEN_ORPHANS_TILES)]
    elif kind == "knitted" and n_melds <= 1:
        seq = list(rng.choice(KNITTED_STRAIGHTS))
        if rng.random() < 0.5 and n_melds == 0:
            tiles = rng.sample(seq, rng.choice((7, 8, 9))) + list(HONORS)
            tiles = tiles[:14]
        else:
            for t in seq:
                if not wall.take(t):
                    return None
            rest = _regular(rng, wall, 1 - n_melds)
            return None if rest is None else seq + rest
    else:
        return None
    for t in tiles:
        if not wall.take(t):
            return None
    return tiles


def _one(rng: random.Random) -> PlayHand | None:
    wall = _Wall(rng)
    kind = rng.choice(KINDS)
    n_melds = rng.choices((0, 1, 2, 3, 4), (45, 20, 15, 12, 8))[0]
    if kind in ("pairs", "orphans"):
        n_melds = 0
    elif kind == "knitted":
        n_melds = min(n_melds, 1)
    melds = _melds(rng, wall, n_melds)
    need = 14 - 3 * n_melds
    if kind == "random":
        tiles = [wall.random_tile() for _ in range(need)]
    elif kind == "flush":
        suit = rng.randrange(3) * 10
        pool = tuple(t for t in SUITED if t // 10 * 10 == suit) + (HONORS if rng.random() < 0.3 else ())
        tiles = _regular(rng, wall, 4 - n_melds, pool) if rng.random() < 0.6 else None
        if tiles is None:
            tiles = [wall.random_tile(pool) for _ in range(need)]
    elif kind == "near":
        tiles = _regular(rng, wall, 4 - n_melds)
    else:
        tiles = _special(rng, wall, kind, n_melds)
    if tiles is None or len(tiles) != need:
        return None
    # swap a few tiles for random ones (never for the all-random kind)
    if kind != "random":
        for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
            i = rng.randrange(len(tiles))
            wall.give_back(tiles[i])
            tiles[i] = wall.random_tile()
    if rng.random() < 0.8:  # a 13-tile hand: one tile less (14-tile hands cost a check per discard)
        tiles.pop(rng.randrange(len(tiles)))
    return PlayHand(tuple(melds), tuple(sorted(tiles)), kind)


@functools.lru_cache(maxsize=4)
def play_hands(n: int, seed: int) -> tuple[PlayHand, ...]:
    """``n`` hands in play for ``seed`` (deterministic), about 80 % of 13 tiles and 20 % of 14."""
    rng = random.Random(seed)
    out: list[PlayHand] = []
    while len(out) < n:
        h = _one(rng)
        if h is not None:
            out.append(h)
    return tuple(out)
