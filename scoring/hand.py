"""Hands, melds and the win context, and the hand notation shared by MCR calculators.

Notation (one string per hand)::

    [EEE,2][SSSS,1]WWWNN55pN      melds in brackets, then the concealed tiles, winning tile last
    [123m,1]55789m12789s3s        a claimed chow; winning tile 3s

* Tiles: digits then a suit letter ``m`` (characters 万), ``s`` (bamboo 条), ``p`` (dots 饼);
  honors ``E S W N`` (winds) and ``C F P`` (red 中, green 发, white 白); ``1z``..``7z`` are accepted
  as E S W N, white, green, red.
* A meld is three or four tiles in brackets with an optional offer digit (a comma before it is
  allowed): for a pung or kong 1, 2, 3 = claimed from the left, across, right player (上家, 对家,
  下家); for a chow 1-3 says which of its tiles was claimed (a chow is always claimed from the
  left). A bracketed chow or pung without digit is exposed, source not given. A kong without digit
  (``[EEEE]``) is a concealed kong 暗杠; ``[5555p,6]`` (digit 5-7 = 4 + source) is a promoted kong
  加杠 (a claimed pung completed with a self-drawn tile); it counts as a melded kong 明杠.
* The last tile of the string is the winning tile 和牌张; the rules require it to be laid apart
  (单放, 第五条 term 28).
* Flowers ``1f``..``8f`` are not hand tiles: give them in the win context.

Source: 中国麻将竞赛规则 (../shared/seeds/000_ba052a8ec20fd579.txt), 第五条 terms, 第七条 8 (laying out melds).
"""

from __future__ import annotations

import dataclasses
import enum
import re
from functools import lru_cache
from itertools import chain
from types import MappingProxyType
from typing import Any, ClassVar, Iterable, Mapping, Sequence

from .errors import ScoringError
from .tiles import (EAST, HONOR_LETTERS, SUIT_LETTERS, TABLE_SIZE, Z_TO_CODE, Flower, Wind,
                    tile_name, tiles_to_string)


class MeldKind(enum.Enum):
    """The kinds of set: chow 顺子/吃, pung 刻子/碰, kong 杠."""

    CHOW = "chow"
    PUNG = "pung"
    KONG = "kong"


@dataclasses.dataclass(frozen=True, slots=True)
class Meld:
    """A declared set (副露, or a concealed kong 暗杠).

    Attributes:
        kind: chow, pung or kong.
        tile: tile code of the set's lowest tile (the first of a chow, the repeated tile otherwise).
        concealed: True only for a concealed kong (暗杠).
        offer: for a pung/kong, the player it was claimed from (1 left 上家, 2 across 对家,
            3 right 下家); for a chow, which of its three tiles was claimed (1-3); ``None`` when
            not given or concealed.
        promoted: True for a kong made by adding a self-drawn tile to a claimed pung (加杠).
    """

    kind: MeldKind
    tile: int
    concealed: bool = False
    offer: int | None = None
    promoted: bool = False

    @property
    def tiles(self) -> tuple[int, ...]:
        """The tile codes of the set (3 for chow and pung, 4 for a kong)."""
        if self.kind is MeldKind.CHOW:
            return (self.tile, self.tile + 1, self.tile + 2)
        return (self.tile,) * (4 if self.kind is MeldKind.KONG else 3)

    @property
    def exposed(self) -> bool:
        return not self.concealed

    def notation(self) -> str:
        """The bracketed notation of the meld, e.g. ``'[123m,1]'``, ``'[EEEE]'``, ``'[5555p,6]'``."""
        return _meld_notation(self)


@lru_cache(maxsize=4096)  # there are a few thousand distinct melds
def _meld_notation(m: Meld) -> str:
    body = tiles_to_string(m.tiles)
    if m.concealed or m.offer is None:
        return f"[{body}]"
    return f"[{body},{m.offer + (4 if m.promoted else 0)}]"


@dataclasses.dataclass(frozen=True, slots=True)
class Hand:
    """A winning hand as laid out on the table.

    Attributes:
        melds: declared sets (exposed chows, pungs, kongs and concealed kongs), 0-4 of them.
        concealed: the concealed (standing) tiles without the winning tile, as tile codes;
            ``13 - 3 * len(melds)`` of them.
        win_tile: the winning tile's code.
    """

    melds: tuple[Meld, ...]
    concealed: tuple[int, ...]
    win_tile: int

    def notation(self) -> str:
        """The hand in MCR notation (melds, concealed tiles in canonical order, winning tile last)."""
        return "".join([m.notation() for m in self.melds]) \
            + tiles_to_string(sorted(self.concealed, key=_DISPLAY_KEY.__getitem__)) + tile_name(self.win_tile)

    def all_tiles(self) -> list[int]:
        """Every tile of the hand (kongs give 4), as codes; 14 to 18 of them."""
        out: list[int] = []
        for m in self.melds:
            out.extend(m.tiles)
        out.extend(self.concealed)
        out.append(self.win_tile)
        return out

    def counts(self) -> list[int]:
        """Count table indexed by tile code (length ``TABLE_SIZE``) over all tiles of the hand."""
        table = [0] * TABLE_SIZE
        for t in self.all_tiles():
            table[t] += 1
        return table


@dataclasses.dataclass(frozen=True, slots=True)
class WinContext:
    """How the hand was won (the situation flags of 第九条 fans 44-47, 56, 58, 60-62, 80, 81).

    Attributes:
        self_drawn: won on a self-drawn tile 自摸 (else on a discard 点和).
        seat_wind: the winner's seat wind 门风.
        prevalent_wind: the round's prevalent wind 圈风.
        flowers: number of flower tiles the winner has laid out (0-8); each is 1 point (fan 81).
        flower_tiles: the flowers themselves when known (their count is ``flowers``).
        last_tile: won on the last tile of the wall: 妙手回春 (fan 44) when self-drawn, 海底捞月
            (fan 45) on the last discard.
        kong_replacement: won on the replacement tile after a kong 杠上开花 (fan 46); self-drawn.
        robbing_kong: won on a tile another player added to a pung to promote it 抢杠和 (fan 47).
        fourth_tile: the winning tile is the last one of its kind, the other three being visible
            和绝张 (fan 58).
    """

    self_drawn: bool = False
    seat_wind: Wind = Wind.EAST
    prevalent_wind: Wind = Wind.EAST
    flowers: int = 0
    flower_tiles: tuple[Flower, ...] = ()
    last_tile: bool = False
    kong_replacement: bool = False
    robbing_kong: bool = False
    fourth_tile: bool = False

    #: The win options by name, with their defaults: the keys ``from_options`` reads. The command
    #: line's flags are these names with dashes (``--self-drawn``), ``score --batch`` lines and the
    #: HTTP API's score bodies carry them as they are.
    OPTIONS: ClassVar[Mapping[str, Any]] = MappingProxyType({
        "self_drawn": False, "seat_wind": "E", "prevalent_wind": "E", "flowers": 0, "last_tile": False,
        "kong_replacement": False, "robbing_kong": False, "fourth_tile": False})

    @classmethod
    def from_options(cls, options: Mapping[str, Any], *, other_keys: Sequence[str] = ()) -> "WinContext":
        """The context of a win given as named options, e.g. ``{"self_drawn": True, "seat_wind": "S",
        "flowers": ["1f", "5f"]}``: the one reading of the command line's score flags, the keys of a
        ``score --batch`` line and the body of ``POST /api/score``. A missing option takes its default
        (``OPTIONS``); values as ``make`` takes them.

        Args:
            options: option name -> value; the names of ``OPTIONS`` and of ``other_keys``.
            other_keys: keys the caller reads itself (e.g. ``"hand"``, ``"rules"``): skipped here,
                and named among the allowed keys when an unknown one is refused.
        Raises:
            ScoringError: ``bad-value`` for options that are not a mapping, a key that is not an
                option (the message names it and lists the allowed ones), or a value ``make``
                refuses (a wind outside E/S/W/N, flowers outside 0-8, a flag that is not a boolean).
        """
        if not isinstance(options, Mapping):
            raise ScoringError("bad-value", f"the win options must be a mapping of names to values, got "
                               f"{type(options).__name__}")
        unknown = [k for k in options if k not in cls.OPTIONS and k not in other_keys]
        if unknown:
            allowed = [k for k in other_keys if k not in cls.OPTIONS] + list(cls.OPTIONS)
            raise ScoringError("bad-value", f"unknown option(s) {', '.join(map(repr, unknown))}; allowed: "
                               f"{', '.join(allowed)}")
        return cls.make(**{k: v for k, v in options.items() if k in cls.OPTIONS})

    @classmethod
    def make(cls, *, self_drawn: bool = False, seat_wind: "Wind | str" = "E",
             prevalent_wind: "Wind | str" = "E", flowers: "int | Sequence[str | int | Flower]" = 0,
             last_tile: bool = False, kong_replacement: bool = False, robbing_kong: bool = False,
             fourth_tile: bool = False) -> "WinContext":
        """Build a context from loose values (strings for winds; a count or a list of flowers).

        ``flowers`` is either a count 0-8 or a list of flowers (``'1f'``..``'8f'``, 1-8 or
        ``Flower``), each at most once.

        Raises:
            ScoringError: ``bad-value`` for a wind outside E/S/W/N, a flower count outside 0-8,
                an unknown or repeated flower, or a flag that is not a boolean.
        """
        return win_context(self_drawn, seat_wind, prevalent_wind, flowers, last_tile, kong_replacement,
                           robbing_kong, fourth_tile)


def win_context(self_drawn: bool, seat_wind: "Wind | str", prevalent_wind: "Wind | str",
                flowers: "int | Sequence[str | int | Flower]", last_tile: bool, kong_replacement: bool,
                robbing_kong: bool, fourth_tile: bool) -> WinContext:
    """``WinContext.make`` with its arguments in order (positional: the scorer's hot path, which
    calls it once a hand, skips matching eight keywords). Same values, same errors.

    Raises:
        ScoringError: ``bad-value`` as ``WinContext.make``.
    """
    # Contexts given by plain values (booleans, a flower count, wind letters) are memoised:
    # there are a few thousand of them. The types are checked first, so that 1 for True or
    # True for a count never finds the entry of the other.
    key = None
    if self_drawn.__class__ is last_tile.__class__ is kong_replacement.__class__ is robbing_kong.__class__ \
            is fourth_tile.__class__ is bool and flowers.__class__ is int and seat_wind.__class__ is str \
            and prevalent_wind.__class__ is str:
        key = (self_drawn, seat_wind, prevalent_wind, flowers, last_tile, kong_replacement, robbing_kong,
               fourth_tile)
        hit = _CONTEXTS.get(key)
        if hit is not None:
            return hit
    for name, v in (("self_drawn", self_drawn), ("last_tile", last_tile),
                    ("kong_replacement", kong_replacement), ("robbing_kong", robbing_kong),
                    ("fourth_tile", fourth_tile)):
        if not isinstance(v, bool):
            raise ScoringError("bad-value", f"{name} must be true or false, got {v!r}")
    flower_tiles: tuple[Flower, ...] = ()
    if isinstance(flowers, bool):
        raise ScoringError("bad-value", f"flowers must be a count 0-8 or a list of flowers, got {flowers!r}")
    if isinstance(flowers, int):
        if not 0 <= flowers <= 8:
            raise ScoringError("bad-value", f"flowers must be between 0 and 8 (there are 8 flower tiles), got {flowers}")
        count = flowers
    elif isinstance(flowers, (list, tuple)):
        flower_tiles = tuple(parse_flower(f) for f in flowers)
        if len(set(flower_tiles)) != len(flower_tiles):
            raise ScoringError("bad-value", "each flower tile exists once; a flower is listed twice")
        count = len(flower_tiles)
    else:
        raise ScoringError("bad-value", f"flowers must be a count 0-8 or a list of flowers, got {flowers!r}")
    ctx = WinContext(self_drawn=self_drawn, seat_wind=Wind.parse(seat_wind, "seat_wind"),
                     prevalent_wind=Wind.parse(prevalent_wind, "prevalent_wind"), flowers=count,
                     flower_tiles=flower_tiles, last_tile=last_tile, kong_replacement=kong_replacement,
                     robbing_kong=robbing_kong, fourth_tile=fourth_tile)
    if key is not None and len(_CONTEXTS) < 20_000:  # bounded: wind strings are untrusted input
        _CONTEXTS[key] = ctx
    return ctx


_CONTEXTS: dict[tuple, WinContext] = {}


def parse_flower(value: "str | int | Flower") -> Flower:
    """``'3f'``, ``3`` or ``Flower.AUTUMN`` -> ``Flower.AUTUMN``; ScoringError ``bad-value`` otherwise."""
    if isinstance(value, Flower):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 8:
        return Flower(value)
    if isinstance(value, str):
        v = value.strip().lower()
        if len(v) == 2 and v[1] == "f" and v[0] in "12345678":
            return Flower(int(v[0]))
    raise ScoringError("bad-value", f"{value!r} is not a flower: flowers are 1f-8f (春夏秋冬梅兰竹菊)")


# ---------------------------------------------------------------------------------------------
# Parsing


#: the end of the "unexpected character" message in a hand, where melds may be written; plain
#: tiles (``parse_tiles``) leave it out
_MELDS_HINT = ", and melds in [brackets]"


def _read_tiles(text: str, pos: int, stop: str) -> tuple[list[tuple[int, int]], int]:
    """Read tiles from ``text[pos:]`` until a character in ``stop`` or the end.

    Returns ([(tile code, position of the tile's digit or letter)], new position).
    """
    out: list[tuple[int, int]] = []
    digits: list[int] = []
    n = len(text)
    while pos < n and text[pos] not in stop:
        ch = text[pos]
        if ch.isspace():
            pos += 1
            continue
        if "0" <= ch <= "9":
            digits.append(pos)
            pos += 1
            continue
        if ch in "mspz" or ch == "f":
            if not digits:
                raise ScoringError("syntax", f"suit letter {ch!r} at position {pos} has no digits before it "
                                   "(write tiles as digits then m/s/p/z, e.g. 123m)", pos)
            for dpos in digits:
                d = ord(text[dpos]) - 48
                if ch == "f":
                    raise ScoringError("flower-in-hand", f"flower {d}f at position {dpos} is not a hand tile: "
                                       "give flowers as a count or list (--flowers), not in the hand", dpos)
                if ch == "z":
                    if not 1 <= d <= 7:
                        raise ScoringError("syntax", f"{d}z at position {dpos}: honors in z notation are 1z-7z", dpos)
                    out.append((Z_TO_CODE[d], dpos))
                else:
                    if d == 0:
                        raise ScoringError("syntax", f"0{ch} at position {dpos}: ranks are 1-9 "
                                           "(red fives are written as plain 5)", dpos)
                    out.append((SUIT_LETTERS.index(ch) * 10 + d, dpos))
            digits = []
            pos += 1
            continue
        if ch in HONOR_LETTERS:
            if digits:
                raise ScoringError("syntax", f"digits at position {digits[0]} are not followed by a suit "
                                   "letter m, s, p or z", digits[0])
            out.append((EAST + HONOR_LETTERS.index(ch), pos))
            pos += 1
            continue
        raise ScoringError("syntax", f"unexpected {ch!r} at position {pos}: allowed are digits with m/s/p/z, "
                           f"honors E S W N C F P{_MELDS_HINT}", pos)
    if digits:
        raise ScoringError("syntax", f"digits at position {digits[0]} are not followed by a suit letter m, s, p or z",
                           digits[0])
    return out, pos


_FAST_MELD = re.compile(r"\[(?:([1-9]{3,4})([msp])|([ESWNCFP]{3,4}))(?:,?([1-3]))?\]")


def _parse_meld(text: str, start: int) -> tuple[Meld, int]:
    """Parse one bracketed meld starting at ``text[start] == '['``; return it and the position after ']'."""
    close = text.find("]", start)
    known = _MELDS.get(text[start:close]) if close > 0 else None
    if known is not None:
        return known, close + 1
    m = _FAST_MELD.match(text, start)
    if m:
        digits, suit, honors, offer_text = m.groups()
        if honors:
            tiles = sorted(EAST + HONOR_LETTERS.index(h) for h in honors)
        else:
            base = "msp".index(suit) * 10
            tiles = sorted(base + ord(d) - 48 for d in digits)
        first = tiles[0]
        same = tiles[-1] == first
        offer = int(offer_text) if offer_text else None
        meld = None
        if same and (offer is None or offer <= 3):
            kind = MeldKind.KONG if len(tiles) == 4 else MeldKind.PUNG
            meld = Meld(kind, first, offer is None and kind is MeldKind.KONG, offer)
        elif len(tiles) == 3 and first < 30 and tiles[1] == first + 1 and tiles[2] == first + 2 and \
                (offer is None or offer <= 3):
            meld = Meld(MeldKind.CHOW, first, False, offer)
        if meld is not None:
            if len(_MELDS) < 10_000:  # the valid plain melds are a few thousand texts
                _MELDS[m.group()[:-1]] = meld
            return meld, m.end()
        # anything else (promoted kongs, bad melds) takes the full path below for its checks
    close = text.find("]", start)
    if close < 0:
        raise ScoringError("syntax", f"meld opened at position {start} is never closed with ']'", start)
    inner_end = close
    offer: int | None = None
    # optional offer digit: ",d" or a trailing digit after a complete group, e.g. [999s3]
    body = text[start + 1:close]
    comma = body.rfind(",")
    if comma >= 0:
        digit = body[comma + 1:].strip()
        if len(digit) != 1 or digit not in "0123456789":
            raise ScoringError("syntax", f"after the comma at position {start + 1 + comma} an offer digit is expected "
                               "(1-3, or 5-7 for a promoted kong)", start + 1 + comma)
        offer = int(digit)
        inner_end = start + 1 + comma
    elif len(body) >= 2 and body[-1] in "0123456789" and (body[-2] in "mspz" or body[-2] in HONOR_LETTERS):
        offer = int(body[-1])
        inner_end = close - 1
    tiles_pos, _ = _read_tiles(text[:inner_end], start + 1, "[]")
    tiles = sorted(t for t, _ in tiles_pos)
    where = f"meld at position {start}"
    if len(tiles) == 4 and len(set(tiles)) == 1:
        kind = MeldKind.KONG
    elif len(tiles) == 3 and len(set(tiles)) == 1:
        kind = MeldKind.PUNG
    elif len(tiles) == 3 and tiles[0] < 30 and tiles[1] == tiles[0] + 1 and tiles[2] == tiles[0] + 2:
        kind = MeldKind.CHOW
    else:
        raise ScoringError("bad-meld", f"{where} {text[start:close + 1]!r} is not a chow (three consecutive tiles of "
                           "one suit), a pung (three alike) or a kong (four alike)", start)
    concealed = False
    promoted = False
    if offer is None:
        concealed = kind is MeldKind.KONG
    elif offer in (1, 2, 3):
        pass
    elif offer in (5, 6, 7) and kind is MeldKind.KONG:
        promoted = True
        offer -= 4
    else:
        allowed = "1-3, or 5-7 for a promoted kong" if kind is MeldKind.KONG else "1-3"
        raise ScoringError("syntax", f"{where}: offer digit {offer} is not allowed for a {kind.value} (allowed: {allowed})",
                           start)
    return Meld(kind, tiles[0], concealed, offer, promoted), close + 1


#: Melds already read by the regular-expression path, by their text without the closing bracket
#: (``"[123m,1"``).
_MELDS: dict[str, Meld] = {}
_known_meld = _MELDS.__getitem__

class _NotPlain(LookupError):
    """A chunk of a concealed segment that only the full parser reads (z notation, spaces, errors)."""


#: Honor letters' tile codes (``"E"`` -> 31).
_HONOR_CODES = {h: EAST + i for i, h in enumerate(HONOR_LETTERS)}
#: Suit letters' first tile code less 1 (``"p"`` -> 20: 1p is 21).
_SUIT_BASE = {letter: 10 * i for i, letter in enumerate(SUIT_LETTERS)}


class _ChunkCodes(dict):
    """Tile codes of each chunk of a concealed segment read so far, worked out when first asked
    for. A chunk is what ends at a suit letter, or the segment's tail after the last one: honor
    letters, then optionally digits 1-9 and one of m/s/p (``"E789m"`` -> (31, 7, 8, 9),
    ``"SS"`` -> (32, 32), ``""`` -> ()); anything else raises ``_NotPlain``."""

    def __missing__(self, chunk: str) -> tuple[int, ...]:
        rest = chunk.lstrip(HONOR_LETTERS)
        codes = [*map(_HONOR_CODES.__getitem__, chunk[:len(chunk) - len(rest)])]
        if rest:
            digits = rest[:-1]
            if not digits or rest[-1] not in _SUIT_BASE or digits.strip("123456789"):
                raise _NotPlain(chunk)
            base = _SUIT_BASE[rest[-1]] - 48
            codes += [base + d for d in digits.encode()]
        found = tuple(codes)
        if len(self) < 100_000:  # bounded: chunks are short, but input is untrusted
            self[chunk] = found
        return found


_chunk_codes = _ChunkCodes().__getitem__


def _fast_concealed(segment: str) -> tuple[int, ...] | None:
    """Tile codes of a plain concealed-tile segment (digits + m/s/p, honor letters), or None when
    the segment needs the full parser (z notation, spaces, commas, errors).

    The segment is cut after each suit letter by three C-level replaces and a split, and each
    chunk's codes come from a table of the chunks read before (``_ChunkCodes``): no regular
    expression and no per-character loop.
    """
    if "," in segment:  # the cut's own separator: only the full parser reads (and rejects) it
        return None
    try:
        return (*chain.from_iterable(map(_chunk_codes, segment.replace("m", "m,").replace("s", "s,")
                                         .replace("p", "p,").split(","))),)
    except _NotPlain:
        return None


_set_melds, _set_concealed, _set_win_tile = Hand.melds.__set__, Hand.concealed.__set__, Hand.win_tile.__set__


def _new_hand(melds: tuple[Meld, ...], concealed: tuple[int, ...], win_tile: int) -> Hand:
    """``Hand(melds, concealed, win_tile)`` by its slots (the frozen dataclass's ``__init__`` sets
    each field through ``object.__setattr__``, at three times the cost)."""
    hand = object.__new__(Hand)
    _set_melds(hand, melds)
    _set_concealed(hand, concealed)
    _set_win_tile(hand, win_tile)
    return hand


def parse_hand(text: str) -> Hand:
    """Parse a hand in MCR notation (see the module docstring).

    Args:
        text: e.g. ``"[EEE,2][SSSS,1]WWWNN55pN"``.

    Returns:
        The Hand; its tile count and copies are *not* checked here (``check_hand`` does).

    Raises:
        ScoringError: ``syntax`` (with the position), ``flower-in-hand``, ``bad-meld``.
    """
    if text.__class__ is not str and not isinstance(text, str):
        raise ScoringError("syntax", f"a hand must be a string, got {type(text).__name__}")
    # Fast path: melds then a plain concealed segment.
    last = text.rfind("]") + 1
    tail = text[last:] if last else text
    if "[" not in tail:
        codes = _fast_concealed(tail)
        if codes:
            if not last:
                return _new_hand((), codes[:-1], codes[-1])
            try:  # melds all read before: the texts between the closing brackets are known
                return _new_hand(tuple(map(_known_meld, text[:last - 1].split("]"))), codes[:-1], codes[-1])
            except KeyError:
                pass
            melds = []
            pos = 0
            while pos < last and text[pos] == "[":
                meld, pos = _parse_meld(text, pos)
                melds.append(meld)
            if pos == last:
                return Hand(tuple(melds), codes[:-1], codes[-1])
    melds = []
    tiles: list[tuple[int, int]] = []
    pos = 0
    n = len(text)
    while pos < n:
        ch = text[pos]
        if ch == "[":
            if tiles:
                raise ScoringError("syntax", f"meld at position {pos} comes after concealed tiles: write the melds "
                                   "first, then the concealed tiles, the winning tile last", pos)
            meld, pos = _parse_meld(text, pos)
            melds.append(meld)
        elif ch == "]":
            raise ScoringError("syntax", f"']' at position {pos} closes no meld", pos)
        else:
            got, pos = _read_tiles(text, pos, "[]")
            tiles.extend(got)
    if not tiles:
        if not text.strip():
            raise ScoringError("syntax", "the hand is empty: give the tiles, winning tile last, e.g. 123m456p789s123mEE")
        raise ScoringError("syntax", f"no concealed tiles after the melds (end of the hand at position {len(text)}): "
                           "the winning tile must come last, outside the brackets", len(text))
    codes = [t for t, _ in tiles]
    return Hand(tuple(melds), tuple(codes[:-1]), codes[-1])


def parse_tiles(text: str, what: str = "tiles") -> list[int]:
    """Parse a plain list of tiles (no melds, no winning tile), e.g. ``"1m55pEE"`` -> codes.

    Args:
        text: tiles in the hand notation; an empty or blank string gives no tiles.
        what: how the tiles are named in an error message (e.g. ``"seen tiles"``).

    Raises:
        ScoringError: ``syntax`` (with the position) for anything but tiles, ``flower-in-hand``.
    """
    if not isinstance(text, str):
        raise ScoringError("syntax", f"{what} must be a string of tiles such as 1m55pEE, got {type(text).__name__}")
    codes = _fast_concealed(text)
    if codes is not None:
        return list(codes)
    if "[" in text or "]" in text:
        pos = min(i for i in (text.find("["), text.find("]")) if i >= 0)
        raise ScoringError("syntax", f"{what}: brackets at position {pos} are not allowed here; give plain tiles "
                           "such as 1m55pEE", pos)
    try:
        got, _ = _read_tiles(text, 0, "")
    except ScoringError as e:  # said of these tiles, not of a hand (e.g. "seen tiles: ...")
        message = e.message.replace(_MELDS_HINT, "") if e.code != "flower-in-hand" else \
            f"a flower at position {e.position} is not one of the {what}: leave flowers (1f-8f) out"
        raise ScoringError(e.code, f"{what}: {message}", e.position) from None
    return [t for t, _ in got]


def check_hand(hand: Hand) -> list[int]:
    """Check the tile count and the copies of each tile; return the hand's count table.

    Raises:
        ScoringError: ``tile-count`` when melds x 3 + concealed tiles + winning tile is not 14,
            or there are more than 4 melds; ``fifth-tile`` when a tile appears more than 4 times
            across melds, concealed tiles and the winning tile.
    """
    if len(hand.melds) > 4:
        raise ScoringError("tile-count", f"{len(hand.melds)} melds: a hand has at most 4 sets")
    expected = 13 - 3 * len(hand.melds)
    got = len(hand.concealed)
    if got != expected:
        raise ScoringError(
            "tile-count",
            f"{got + 1} concealed tiles (winning tile included) with {len(hand.melds)} meld(s): a winning hand "
            f"has {expected + 1} (14 tiles in all, a kong counting as 3)")
    table = hand.counts()
    for t, c in enumerate(table):
        if c > 4:
            raise ScoringError("fifth-tile", f"{tile_name(t)} appears {c} times: there are only 4 of each tile")
    return table


def display_key(code: int) -> int:
    """Sort key for showing tiles as players write them: characters, dots, bamboo, then honors."""
    return _DISPLAY_KEY[code]


_DISPLAY_KEY = [(0, 2, 1, 3)[c // 10] * 10 + c % 10 for c in range(TABLE_SIZE)]


def format_tiles(codes: Iterable[int]) -> str:
    """Notation of tiles in display order, e.g. ``format_tiles([25, 1, 2, 11]) == '12m5p1s'``."""
    return tiles_to_string(sorted(codes, key=display_key))
