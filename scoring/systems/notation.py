"""The shared hand notation, extended for the other rule systems, and hand decomposition.

The notation is MCR's (see ``scoring.hand`` and the README): melds in brackets first, then the
concealed tiles, the winning tile last. Extensions, each allowed only by the systems that play it
(``TileSet``):

* red fives ``0m 0p 0s`` (riichi's aka dora; at most one per suit, counted among the four fives);
* flowers ``1f``-``8f`` written outside the brackets, before the melds or among the concealed tiles
  (Taiwan: they score); never last;
* longer hands: Taiwan 16-tile hands have 17 tiles with the winning tile (five sets and a pair);
* honours as flowers (Fuzhou, ``TileSet.honour_flowers``): written like flowers, outside the brackets;
* a wild tile (Fuzhou's gold 金): ``readings(hand, self_drawn, wild="5p")`` lets the concealed tiles of
  that kind stand for any tile (``Group.wilds`` says how many golds a set or the pair holds).

Tiles are strings: ``"1m"``..``"9m"``, ``"0m"`` (red five), ``"1p"``.., ``"1s"``.., the honours
``"E" "S" "W" "N"`` (winds) and ``"C" "F" "P"`` (red 中, green 发, white 白; ``1z``-``7z`` read as
E S W N P F C), flowers ``"1f"``..``"8f"``.

Source: the notation of MCR calculators (README "Hand notation"); flowers 1-4 春夏秋冬, 5-8 梅兰竹菊 in
the order of ../shared/seeds/000_ba052a8ec20fd579.txt.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

from .base import RulesError, TileSet

HONOURS = "ESWNCFP"
WINDS = "ESWN"
DRAGONS = "CFP"
_Z = {"1": "E", "2": "S", "3": "W", "4": "N", "5": "P", "6": "F", "7": "C"}
HONOUR_ZH = {"E": "东", "S": "南", "W": "西", "N": "北", "C": "中", "F": "发", "P": "白"}


def kind(tile: str) -> str:
    """The tile's kind: a red five is a five (``"0p" -> "5p"``); others unchanged."""
    return "5" + tile[1] if tile[0] == "0" else tile


def is_suited(tile: str) -> bool:
    return len(tile) == 2 and tile[1] in "mps"


def is_honour(tile: str) -> bool:
    return tile in HONOURS


def is_terminal(tile: str) -> bool:
    return is_suited(tile) and tile[0] in "19"


def suit(tile: str) -> str:
    """``"m" "p" "s"`` for a suited tile, ``"z"`` for an honour."""
    return tile[1] if is_suited(tile) else "z"


def rank(tile: str) -> int:
    """1-9 for a suited tile (a red five is 5); 0 for an honour."""
    return int(kind(tile)[0]) if is_suited(tile) else 0


def to_code(tile: str) -> int:
    """Kind as a small int: m 1-9, p 11-19, s 21-29, honours 31-37 (E S W N C F P); 0m is 5."""
    t = kind(tile)
    if is_suited(t):
        return "mps".index(t[1]) * 10 + int(t[0])
    return 31 + HONOURS.index(t)


def from_code(code: int) -> str:
    return HONOURS[code - 31] if code > 30 else f"{code % 10}{'mps'[code // 10]}"


ALL_CODES = tuple(list(range(1, 10)) + list(range(11, 20)) + list(range(21, 30)) + list(range(31, 38)))


def write_tiles(tiles) -> str:
    """Tiles in compact notation: ``["1m", "2m", "E"] -> "12mE"`` (runs of one suit share the letter)."""
    out: list[str] = []
    for t in tiles:
        if is_honour(t):
            out.append(t)
        elif out and len(out[-1]) >= 2 and out[-1][-1] == t[1] and out[-1][0] in "0123456789":
            out[-1] = out[-1][:-1] + t
        else:
            out.append(t)
    return "".join(out)


@dataclasses.dataclass(frozen=True, slots=True)
class Meld:
    """A declared set: an exposed chow/pung/kong or a concealed kong.

    Attributes:
        kind: ``"chow"``, ``"pung"`` or ``"kong"``.
        tiles: the tiles as written (a red five stays ``"0p"``).
        concealed: a concealed kong (暗杠), written without an offer digit.
        promoted: a kong made by adding to a claimed pung (加杠; digit 5-7).
        offer: 1-3 as in MCR notation (who it was claimed from / which chow tile), or None.
    """

    kind: str
    tiles: tuple[str, ...]
    concealed: bool = False
    promoted: bool = False
    offer: int | None = None

    def notation(self) -> str:
        digit = "" if self.offer is None else f",{self.offer + (4 if self.promoted else 0)}"
        return f"[{write_tiles(self.tiles)}{digit}]"


@dataclasses.dataclass(frozen=True, slots=True)
class ParsedHand:
    """A hand in a system's notation.

    Attributes:
        melds: declared sets in order.
        concealed: concealed tiles, the winning tile excluded.
        win_tile: the winning tile.
        flowers: flower tiles written in the hand (systems that score them).
    """

    melds: tuple[Meld, ...]
    concealed: tuple[str, ...]
    win_tile: str
    flowers: tuple[str, ...] = ()

    @property
    def size(self) -> int:
        """Tiles with each kong counted as 3, flowers left out, the winning tile included."""
        return 3 * len(self.melds) + len(self.concealed) + 1

    def all_tiles(self) -> list[str]:
        """Every hand tile as written (kongs give 4), flowers left out."""
        out = [t for m in self.melds for t in m.tiles]
        return out + list(self.concealed) + [self.win_tile]

    @property
    def exposed(self) -> bool:
        """A set was claimed (吃, 碰, 明杠); a concealed kong keeps the hand concealed."""
        return any(not m.concealed for m in self.melds)

    def notation(self) -> str:
        order = {s: i for i, s in enumerate("mpsz")}
        standing = sorted(self.concealed, key=lambda t: (order[suit(t)], to_code(t), t[0] != "0"))
        return "".join(self.flowers) + "".join(m.notation() for m in self.melds) + write_tiles(standing) \
            + self.win_tile


def read_tiles(text: str, pos: int, stop: str) -> tuple[list[tuple[str, int]], int]:
    """Tiles from ``pos`` up to a character in ``stop``: ``[(tile, position)]`` and the new position."""
    out: list[tuple[str, int]] = []
    n = len(text)
    while pos < n and text[pos] not in stop:
        ch = text[pos]
        if ch in HONOURS:
            out.append((ch, pos))
            pos += 1
            continue
        if ch.isdigit():
            start = pos
            while pos < n and text[pos].isdigit():
                pos += 1
            if pos >= n or text[pos] not in "mpszf":
                raise RulesError("syntax", f"digits at position {start} have no suit letter after them: write "
                                 "m, p or s (suits), z (honours 1-7) or f (flowers 1-8), e.g. 123m", start)
            letter = text[pos]
            for i in range(start, pos):
                d = text[i]
                if letter == "z":
                    if d not in _Z:
                        raise RulesError("syntax", f"{d}z at position {i}: honours are 1z-7z", i)
                    out.append((_Z[d], i))
                elif letter == "f":
                    if d in "09":
                        raise RulesError("syntax", f"{d}f at position {i}: flowers are 1f-8f", i)
                    out.append((d + "f", i))
                else:
                    out.append((d + letter, i))
            pos += 1
            continue
        raise RulesError("syntax", f"{ch!r} at position {pos} is not a tile: use digits with m/p/s/z/f, "
                         "E S W N C F P, and [..] for melds", pos)
    return out, pos


def _meld(tiles: list[tuple[str, int]], digit: int | None, pos: int) -> Meld:
    kinds = [to_code(t) for t, _ in tiles]
    written = tuple(t for t, _ in tiles)
    if any(t.endswith("f") for t in written):
        raise RulesError("bad-meld", f"the meld at position {pos} holds a flower: flowers are never in a set", pos)
    low = min(kinds)
    if len(kinds) == 3 and sorted(kinds) == [low, low + 1, low + 2] and low < 30 and low % 10 <= 7:
        if digit is not None and digit not in (1, 2, 3):
            raise RulesError("bad-meld", f"chow at position {pos}: its digit says which tile was claimed, 1-3", pos)
        order = sorted(range(3), key=lambda i: kinds[i])
        return Meld("chow", tuple(written[i] for i in order), offer=digit)
    if len(set(kinds)) == 1 and len(kinds) == 3:
        if digit is not None and digit not in (1, 2, 3):
            raise RulesError("bad-meld", f"pung at position {pos}: its digit says who it came from, 1-3", pos)
        return Meld("pung", written, offer=digit)
    if len(set(kinds)) == 1 and len(kinds) == 4:
        if digit is None:
            return Meld("kong", written, concealed=True)
        if digit in (1, 2, 3):
            return Meld("kong", written, offer=digit)
        if digit in (5, 6, 7):
            return Meld("kong", written, promoted=True, offer=digit - 4)
        raise RulesError("bad-meld", f"kong at position {pos}: digit 1-3 (exposed) or 5-7 (promoted 加杠)", pos)
    raise RulesError("bad-meld", f"the meld at position {pos} ({write_tiles(written)}) is not a chow (three in a row "
                     "of one suit), a pung (three alike) or a kong (four alike)", pos)


def parse(text: str, tile_set: TileSet, hand_sizes: tuple[int, ...], system: str) -> ParsedHand:
    """Parse ``text`` for a system and check its tiles and size.

    Args:
        text: the hand, e.g. ``"[123m,1]4406p789sEEE5s"`` or (Taiwan) ``"1f5f123m...``.
        tile_set: the tiles the system plays.
        hand_sizes: allowed sizes (kong = 3, flowers left out, winning tile included).
        system: the system's name, for messages.

    Raises:
        RulesError: ``syntax`` (with position), ``bad-meld``, ``tile-not-in-set`` (a flower, red five
            or honour the system does not play), ``tile-count``, ``fifth-tile``.
    """
    if not isinstance(text, str):
        raise RulesError("syntax", f"a hand must be a string, got {type(text).__name__}")
    text = text.strip()
    if not text:
        raise RulesError("syntax", "the hand is empty: give the tiles, winning tile last, e.g. 123m456p789s123mEE")

    def is_flower(t: str) -> bool:
        return t.endswith("f") or (tile_set.honour_flowers and is_honour(t))
    melds: list[Meld] = []
    loose: list[tuple[str, int]] = []
    pos, n = 0, len(text)
    while pos < n:
        ch = text[pos]
        if ch == "[":
            if any(not is_flower(t) for t, _ in loose):  # flowers may come first
                raise RulesError("syntax", f"meld at position {pos} comes after concealed tiles: write the melds "
                                 "first, then the concealed tiles, the winning tile last", pos)
            tiles, end = read_tiles(text, pos + 1, ",]")
            digit = None
            if end < n and text[end] == ",":
                end += 1
            if end < n and text[end].isdigit():
                digit = int(text[end])
                end += 1
            if end >= n or text[end] != "]":
                raise RulesError("syntax", f"the meld opened at position {pos} is not closed by ']'", pos)
            if not 3 <= len(tiles) <= 4:
                raise RulesError("bad-meld", f"the meld at position {pos} has {len(tiles)} tiles: a set has 3 "
                                 "(chow, pung) or 4 (kong)", pos)
            _check_in_set(tiles, tile_set, system)
            if tile_set.honour_flowers and any(is_honour(t) for t, _ in tiles):
                raise RulesError("bad-meld", f"the meld at position {pos} holds an honour: {system} counts the "
                                 "honours as flowers, never in a set", pos)
            melds.append(_meld(tiles, digit, pos))
            pos = end + 1
        elif ch == "]":
            raise RulesError("syntax", f"']' at position {pos} closes no meld", pos)
        else:
            got, pos = read_tiles(text, pos, "[]")
            loose.extend(got)
    _check_in_set(loose, tile_set, system)
    flowers = [t for t, _ in loose if is_flower(t)]
    hand_tiles = [t for t, _ in loose if not is_flower(t)]
    if not hand_tiles:
        raise RulesError("syntax", "no concealed tiles: the winning tile must come last, outside the brackets")
    if is_flower(loose[-1][0]):
        raise RulesError("syntax", f"the hand ends with the flower {loose[-1][0]}: the winning tile comes last "
                         "(a flower is never a winning tile)", loose[-1][1])
    if any(flowers.count(t) > 1 for t in flowers if t.endswith("f")):
        raise RulesError("fifth-tile", "a flower is written twice: each flower tile exists once")
    if any(flowers.count(t) > 4 for t in flowers):
        raise RulesError("fifth-tile", "an honour flower is written more than four times: there are only 4 of each")
    hand = ParsedHand(tuple(melds), tuple(hand_tiles[:-1]), hand_tiles[-1], tuple(sorted(flowers)))
    if hand.size not in hand_sizes:
        sizes = " or ".join(map(str, hand_sizes))
        raise RulesError("tile-count", f"{hand.size} tiles (melds {3 * len(melds)}, concealed {len(hand.concealed)}, "
                         f"winning tile 1; a kong counts as 3, flowers not counted): a winning {system} hand has "
                         f"{sizes}")
    counts: dict[str, int] = {}
    reds: dict[str, int] = {}
    for t in hand.all_tiles():
        counts[kind(t)] = counts.get(kind(t), 0) + 1
        if t[0] == "0":
            reds[t] = reds.get(t, 0) + 1
    for t, c in counts.items():
        if c > 4:
            raise RulesError("fifth-tile", f"{t} appears {c} times: there are only 4 of each tile")
    for t, c in reds.items():
        if c > 1:
            raise RulesError("fifth-tile", f"{t} (red five) appears {c} times: there is one red five per suit")
    return hand


def _check_in_set(tiles: list[tuple[str, int]], tile_set: TileSet, system: str) -> None:
    for t, p in tiles:
        what = tile_set.not_played(t)
        if what == "a flower":
            extra = " (give them with --flowers)" if tile_set.count == 144 else ""
            raise RulesError("tile-not-in-set", f"{t} at position {p} is a flower: {system} plays "
                             f"{tile_set.description}, no flowers in the hand{extra}", p)
        if what == "a red five":
            raise RulesError("tile-not-in-set", f"{t} at position {p} is a red five: {system} has no red fives "
                             f"(write 5{t[1]})", p)
        if what == "an honour":
            raise RulesError("tile-not-in-set", f"{t} at position {p} is an honour: {system} plays "
                             f"{tile_set.description}", p)


# ---- decomposition into sets and a pair ----

@dataclasses.dataclass(frozen=True, slots=True)
class Group:
    """One set or the pair of a reading.

    Attributes:
        kind: ``"chow"``, ``"pung"``, ``"kong"`` or ``"pair"``.
        first: kind code (``to_code``) of the lowest tile.
        concealed: formed in the hand (for a pung: drawn, not completed on a discard).
        declared: a meld written in brackets.
        has_win: the winning tile completed this group.
        wilds: wild tiles (Fuzhou's gold) standing in the group for the tiles it lacks.
    """

    kind: str
    first: int
    concealed: bool
    declared: bool = False
    has_win: bool = False
    wilds: int = 0

    @property
    def codes(self) -> tuple[int, ...]:
        f = self.first
        return {"chow": (f, f + 1, f + 2), "pung": (f,) * 3, "kong": (f,) * 4, "pair": (f, f)}[self.kind]

    @property
    def is_triplet(self) -> bool:
        return self.kind in ("pung", "kong")

    def notation(self) -> str:
        body = write_tiles([from_code(c) for c in self.codes])
        return f"[{body}]" if self.declared else body


@lru_cache(maxsize=4096)
def _split(counts: tuple[int, ...], sets: int) -> tuple[tuple[tuple[str, int], ...], ...]:
    """All ways to cut a count table (index = code) into ``sets`` chows/pungs; each as (kind, first)."""
    if sets == 0:
        return ((),) if not any(counts) else ()
    i = next((k for k, c in enumerate(counts) if c), None)
    if i is None:
        return ()
    out: list[tuple[tuple[str, int], ...]] = []
    c = list(counts)
    if c[i] >= 3:
        c[i] -= 3
        out += [(("pung", i),) + rest for rest in _split(tuple(c), sets - 1)]
        c[i] += 3
    if i < 30 and i % 10 <= 7 and c[i + 1] and c[i + 2]:
        c[i] -= 1
        c[i + 1] -= 1
        c[i + 2] -= 1
        out += [(("chow", i),) + rest for rest in _split(tuple(c), sets - 1)]
    return tuple(out)


@lru_cache(maxsize=4096)
def _split_wild(counts: tuple[int, ...], sets: int, wild: int) -> frozenset[tuple[tuple[str, int, int], ...]]:
    """Like ``_split`` with ``wild`` tiles that stand for any tile: each set as (kind, first, wilds used).

    A set of three wild tiles has ``first`` -1 (the caller names it). Each way once, sets sorted.
    """
    if sets == 0:
        return frozenset({()}) if not any(counts) and wild == 0 else frozenset()
    i = next((k for k, c in enumerate(counts) if c), None)
    if i is None:
        return frozenset({(("pung", -1, 3),) * sets}) if wild == 3 * sets else frozenset()
    out: set[tuple[tuple[str, int, int], ...]] = set()
    c = list(counts)
    for k in range(min(3, c[i]), 0, -1):  # a pung of i: k of them and 3 - k wilds
        if 3 - k <= wild:
            c[i] -= k
            out |= {tuple(sorted((("pung", i, 3 - k),) + r)) for r in _split_wild(tuple(c), sets - 1, wild - 3 + k)}
            c[i] += k
    for start in (i - 2, i - 1, i):  # a chow holding i, the lowest tile left; wilds for what is missing
        if i > 30 or start // 10 != i // 10 or not 1 <= start % 10 <= 7:
            continue
        used = [t for t in (start, start + 1, start + 2) if t == i or (t > i and c[t])]
        if 3 - len(used) <= wild:
            for t in used:
                c[t] -= 1
            out |= {tuple(sorted((("chow", start, 3 - len(used)),) + r))
                    for r in _split_wild(tuple(c), sets - 1, wild - 3 + len(used))}
            for t in used:
                c[t] += 1
    return frozenset(out)


def readings(hand: ParsedHand, self_drawn: bool, wild: str | None = None) -> list[tuple[Group, ...]]:
    """Every reading of the hand as sets and a pair, with the group the winning tile completed.

    Declared melds come first (as declared groups), then the pair and the concealed sets. A pung
    the winning tile completed on a discard is not concealed. Empty when the hand does not make
    ``melds + concealed sets`` and one pair.

    ``wild`` (a tile kind, Fuzhou's gold): the concealed tiles of that kind, and the winning tile when
    self-drawn, stand for any tile; each group says how many it holds (``Group.wilds``; a group of
    wilds only is named by the wild's kind). A discarded winning tile is always itself.
    """
    if wild is not None:
        return _wild_readings(hand, self_drawn, to_code(wild))
    table = [0] * 38
    for t in hand.concealed + (hand.win_tile,):
        table[to_code(t)] += 1
    need = (hand.size - 2) // 3 - len(hand.melds)
    fixed = tuple(Group(m.kind, to_code(m.tiles[0]), m.concealed, declared=True) for m in hand.melds)
    win = to_code(hand.win_tile)
    out: list[tuple[Group, ...]] = []
    for p in range(38):
        if table[p] < 2:
            continue
        table[p] -= 2
        for cut in _split(tuple(table), need):
            groups = [Group("pair", p, True)] + [Group(k, f, True) for k, f in cut]
            done: set[tuple] = set()
            for gi, g in enumerate(groups):
                if win not in g.codes or (g.kind, g.first) in done:
                    continue
                done.add((g.kind, g.first))
                marked = list(groups)
                concealed = self_drawn or g.kind != "pung"
                marked[gi] = dataclasses.replace(g, has_win=True, concealed=concealed)
                out.append(fixed + tuple(marked))
        table[p] += 2
    return out


def _wild_readings(hand: ParsedHand, self_drawn: bool, gold: int) -> list[tuple[Group, ...]]:
    table = [0] * 38
    wild = 0
    for t in hand.concealed + (hand.win_tile,):
        table[to_code(t)] += 1
    wild = table[gold] - (to_code(hand.win_tile) == gold and not self_drawn)
    table[gold] -= wild
    need = (hand.size - 2) // 3 - len(hand.melds)
    fixed = tuple(Group(m.kind, to_code(m.tiles[0]), m.concealed, declared=True) for m in hand.melds)
    win = to_code(hand.win_tile)
    win_is_wild = win == gold and self_drawn
    pairs = [(p, 0) for p in range(38) if table[p] >= 2] + [(p, 1) for p in range(38) if table[p] and wild]
    pairs += [(gold, 2)] if wild >= 2 else []
    out: list[tuple[Group, ...]] = []
    for p, pw in pairs:
        table[p] -= 2 - pw if pw < 2 else 0
        for cut in _split_wild(tuple(table), need, wild - pw):
            groups = [Group("pair", p, True, wilds=pw)] + [Group(k, gold if f < 0 else f, True, wilds=w)
                                                          for k, f, w in cut]
            # the winning tile: a wild one in the first group holding a wild, else a group holding its kind
            at = next((gi for gi, g in enumerate(groups) if (g.wilds if win_is_wild else win in g.codes)), None)
            if at is not None:
                g = groups[at]
                groups[at] = dataclasses.replace(g, has_win=True, concealed=self_drawn or g.kind != "pung")
            out.append(fixed + tuple(groups))
        table[p] += 2 - pw if pw < 2 else 0
    return out


def fours(hand: ParsedHand) -> list[str]:
    """The tile kinds the hand holds four of (kongs included), sorted."""
    tiles = [kind(t) for t in hand.all_tiles()]
    return sorted((t for t in set(tiles) if tiles.count(t) == 4), key=to_code)


def is_seven_pairs(hand: ParsedHand) -> bool:
    """No melds and every kind an even number of times (four alike = two pairs, as the systems that play
    豪华七对 count it)."""
    tiles = [kind(t) for t in hand.all_tiles()]
    return not hand.melds and len(tiles) == 14 and all(tiles.count(t) % 2 == 0 for t in tiles)


def waits(hand: ParsedHand) -> list[str]:
    """The tile kinds that would have completed the hand instead of the winning tile (the wait)."""
    out = []
    counts = {}
    for t in hand.all_tiles():
        counts[kind(t)] = counts.get(kind(t), 0) + 1
    for code in ALL_CODES:
        t = from_code(code)
        if counts.get(t, 0) - (kind(hand.win_tile) == t) >= 4:
            continue
        trial = dataclasses.replace(hand, win_tile=t)
        if readings(trial, True):
            out.append(t)
    return out
