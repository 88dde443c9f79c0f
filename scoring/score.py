"""Scoring a winning hand: the public entry point of the package.

``score_hand("[123m,1]55789m12789s3s", self_drawn=True)`` parses the hand, checks it, finds the
highest-scoring reading (``scoring.calculator``) and returns a ``ScoreResult``: every fan with its
number, names, points, count and the tiles or sets that produced it; the total; whether the hand
reaches the 8-point minimum (flowers not counted toward it); and the payments of 第十条.

Source: 中国麻将竞赛规则 (../shared/seeds/000_ba052a8ec20fd579.txt), 第九条 (fans), 第十条 (payments:
self-drawn: each of the three others pays 8 + total; on a discard the discarder pays 8 + total and
the two others 8 each).
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache, partial
from itertools import compress
from operator import itemgetter
from typing import Callable, Sequence

from . import calculator as C
from .calculator import Reading, RuleProfile, best_reading, rule_profile
from .decompose import CHOW, KONG, PAIR, PUNG, Pack
from .errors import ScoringError
from .fans import FANS, MELDED_AND_CONCEALED_KONG, Fan
from .hand import Hand, MeldKind, WinContext, check_hand, format_tiles, parse_hand, win_context
from .tiles import TABLE_SIZE, Flower, tile_name, tiles_to_string

#: The minimum to win (起和分), flowers not included (第十条 1 (一) 2; 第五条 term 2).
MINIMUM_POINTS = 8
#: 底分: what each losing player pays the winner on top of the fan total (第十条 1 (二) 1).
BASE_POINTS = 8


class _Record(tuple):
    """An immutable record that is a tuple underneath, for speed, one of whose fields may be worked
    out when first read. Equality, hashing, copying and ``repr`` go by the values of ``_FIELDS``
    (the arguments of the subclass's ``__new__``, in order)."""

    __slots__ = ()
    _FIELDS: tuple[str, ...] = ()

    def _key(self) -> tuple:
        return tuple(getattr(self, f) for f in self._FIELDS)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, type(self)) and self._key() == other._key()

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self._key())

    def __getnewargs__(self) -> tuple:  # copy and pickle
        return self._key()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{f}={getattr(self, f)!r}' for f in self._FIELDS)})"


class FanResult(_Record):
    """One fan counted in a result (an immutable record; a tuple underneath, for speed).

    Attributes:
        number: 1-81 in the rules table, ``None`` for 明暗杠.
        name_zh, name_en: the fan's names.
        points: points of one occurrence.
        count: how many times it is counted.
        tiles: the sets or tiles that produced it, in notation (``"[123m]"`` for a declared set,
            ``"123m"`` for a concealed one, ``"55p"`` for the pair, a single tile for the winning
            tile, flower names for flowers). Worked out from the chosen reading when first read
            (``source`` is then a function giving them), so that a caller that needs only the
            points (the waits of a hand, a legality check) does not pay for it.
    """

    __slots__ = ()
    _FIELDS = ("number", "name_zh", "name_en", "points", "count", "tiles")

    def __new__(cls, number: int | None, name_zh: str, name_en: str, points: int, count: int,
                source: "tuple[str, ...] | Callable[[], tuple[str, ...]]" = ()) -> "FanResult":
        return tuple.__new__(cls, (number, name_zh, name_en, points, count, [source]))

    number = property(itemgetter(0))
    name_zh = property(itemgetter(1))
    name_en = property(itemgetter(2))
    points = property(itemgetter(3))
    count = property(itemgetter(4))

    @property
    def source(self) -> "tuple[str, ...] | Callable[[], tuple[str, ...]]":
        src = self[5][0]
        return self.tiles if src is None else src

    @property
    def tiles(self) -> tuple[str, ...]:
        box = self[5]
        src = box[0]
        if src is None:  # a fan of a reading (``score``): [None, reading, hand, fan slot]
            src = box[0] = _evidence_texts(box[1], box[2], box[3])
            del box[1:]
        elif callable(src):
            src = box[0] = src()
        return src

    def to_dict(self) -> dict:
        return {"number": self.number, "name_zh": self.name_zh, "name_en": self.name_en,
                "points": self.points, "count": self.count, "tiles": list(self.tiles)}


@dataclasses.dataclass(frozen=True, slots=True)
class Payments:
    """Points paid to the winner (第十条 1 (三)).

    Attributes:
        self_drawn: the win was self-drawn (each of the three others pays the same).
        from_discarder: what the player who discarded the winning tile pays (8 + total), ``None``
            for a self-drawn win.
        from_each_other: what each other losing player pays (8 + total when self-drawn, 8 otherwise).
        winner_receives: the sum the winner receives.
    """

    self_drawn: bool
    from_discarder: int | None
    from_each_other: int
    winner_receives: int

    @classmethod
    def for_total(cls, total: int, self_drawn: bool) -> "Payments":
        """Payments for a legal win of ``total`` points (flowers included)."""
        if self_drawn:
            each = BASE_POINTS + total
            return cls(True, None, each, 3 * each)
        return cls(False, BASE_POINTS + total, BASE_POINTS, BASE_POINTS + total + 2 * BASE_POINTS)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


class ScoreResult(_Record):
    """The scored hand (an immutable record; a tuple underneath, for speed).

    Attributes:
        hand: the hand in canonical notation (written from the parsed hand when first read, so
            that a caller that needs only the points does not pay for it).
        rules: the rule profile used (``"mcr"`` or ``"mcr-1998"``).
        shape: the winning shape read (``"regular"``, ``"seven pairs"``, ``"knitted straight"``…).
        fans: the fans counted, highest points first (their records are made from the chosen
            reading when first read, so that a caller that needs only the points, the waits of a
            hand or a legality check, does not pay for them).
        total: all points, flowers included.
        fan_points: points without flowers (what the 8-point minimum is checked on).
        legal: the hand reaches the minimum of 8 points without flowers.
        payments: the payments of 第十条, or ``None`` when the hand is not a legal win.
    """

    __slots__ = ()
    _FIELDS = ("hand", "rules", "shape", "fans", "total", "fan_points", "legal", "payments")

    def __new__(cls, hand: "str | Hand", rules: str, shape: str, fans: tuple[FanResult, ...], total: int,
                fan_points: int, legal: bool, payments: Payments | None) -> "ScoreResult":
        return tuple.__new__(cls, ([hand], rules, shape, [fans], total, fan_points, legal, payments))

    @property
    def hand(self) -> str:
        box = self[0]
        h = box[0]
        if h.__class__ is not str:
            h = box[0] = h.notation()
        return h

    rules = property(itemgetter(1))
    shape = property(itemgetter(2))

    @property
    def fans(self) -> tuple[FanResult, ...]:
        box = self[3]
        if len(box) > 1:  # made by ``score``: [None, reading, hand, ctx]
            box[0] = _fan_results(box[1], box[2], box[3])
            del box[1:]
        return box[0]

    total = property(itemgetter(4))
    fan_points = property(itemgetter(5))
    legal = property(itemgetter(6))
    payments = property(itemgetter(7))

    def fan_counts(self) -> dict[int | None, int]:
        """``{fan number (None for 明暗杠): count}``."""
        return {f.number: f.count for f in self.fans}

    def to_dict(self) -> dict:
        """The result as JSON-ready data (``fans`` as a list, ``payments`` an object or null)."""
        return {"hand": self.hand, "rules": self.rules, "shape": self.shape, "legal": self.legal,
                "total": self.total, "fan_points": self.fan_points,
                "fans": [f.to_dict() for f in self.fans],
                "payments": self.payments.to_dict() if self.payments else None}


# ---------------------------------------------------------------------------------------------

def _check_flags(ctx: WinContext, hand: Hand, in_melds: int, standing: bytes) -> bool:
    """Validate the win flags against each other and the tiles (``in_melds``: the copies of the
    winning tile in the declared melds; ``standing``: the concealed tiles' count table, winning
    tile included); return whether 和绝张 applies.

    Raises:
        ScoringError: ``contradictory-flags``.
    """
    win = hand.win_tile
    name = tile_name(win) if (ctx.robbing_kong or ctx.fourth_tile) else ""
    if ctx.robbing_kong and ctx.self_drawn:
        raise ScoringError("contradictory-flags", "robbing the kong (抢杠和) is a win on another player's tile; "
                           "it cannot be self-drawn")
    if ctx.robbing_kong and ctx.last_tile:
        raise ScoringError("contradictory-flags", "robbing the kong (抢杠和) cannot be a win on the last tile: "
                           "海底捞月 is a win on the last discard, and a kong is never declared on the last tile "
                           "(it needs a replacement tile)")
    if ctx.kong_replacement and not ctx.self_drawn:
        raise ScoringError("contradictory-flags", "a win on a kong replacement tile (杠上开花) is self-drawn: "
                           "set self-drawn too")
    if ctx.kong_replacement and not any(m.kind is MeldKind.KONG for m in hand.melds):
        raise ScoringError("contradictory-flags", "kong replacement (杠上开花) needs a kong among the melds")
    if ctx.robbing_kong and (standing[win] > 1 or in_melds):
        raise ScoringError("contradictory-flags", f"robbing the kong (抢杠和) on {name}: the other three {name} are "
                           f"in the robbed kong, so the winner cannot hold another {name}")
    if ctx.fourth_tile and standing[win] > 1:
        raise ScoringError("contradictory-flags", f"winning on the last {name} (和绝张) while holding another {name} "
                           "concealed")
    # 和绝张 is implied when the other three copies are in the winner's own exposed pung.
    return ctx.fourth_tile or in_melds == 3


@lru_cache(maxsize=4096)
def _pack_text(p: Pack) -> str:
    kind, t, melded = p
    if kind == CHOW:
        body = tiles_to_string((t - 1, t, t + 1))
    else:
        body = tiles_to_string((t,) * {PUNG: 3, KONG: 4, PAIR: 2}[kind])
    return f"[{body}]" if melded or (kind == KONG) else body


def _spec(n: int) -> Fan:
    return MELDED_AND_CONCEALED_KONG if n == C.MIXED_KONGS else FANS[n]


#: (number, name_zh, name_en, points) of each fan slot: the head of its FanResult.
_HEADS = [(_spec(n).number, _spec(n).name_zh, _spec(n).name_en, _spec(n).points) if n else None
          for n in range(C.N_SLOTS)]
_new_record = tuple.__new__
_CHOW_MELD, _PUNG_MELD = MeldKind.CHOW, MeldKind.PUNG
_SLOTS = range(C.N_SLOTS)
#: ``1 << 8 * code`` for each tile code: one tile in a count table held as an integer, a byte a code.
_TILE_BYTE = [1 << 8 * t for t in range(TABLE_SIZE)]
_tile_byte = _TILE_BYTE.__getitem__
#: The byte values of the counts 0-4 (``bytes.translate`` deletes them: what is left is a count above 4).
_UP_TO_FOUR = bytes(range(5))

def _evidence_texts(reading: Reading, hand: Hand, n: int) -> tuple[str, ...]:
    """The evidence of fan ``n`` that its detector recorded (``Reading.evidence``), as notation:
    the sets it used (by index into the reading's packs, each once, in reading order) followed by
    its texts (the winning tile, a knitted straight, four alike); the whole hand for ``None``."""
    used = reading.evidence[n]
    packs = reading.packs
    if used is C.WHOLE_HAND:
        if packs:
            return tuple(map(_pack_text, packs))
        return (format_tiles(hand.concealed + (hand.win_tile,)),)
    indices = sorted({i for i in used if type(i) is int})
    return tuple(_pack_text(packs[i]) for i in indices) + tuple(x for x in used if type(x) is str)


def _flower_texts(ctx: WinContext) -> tuple[str, ...]:
    """Evidence of Flower Tiles (81): the flowers named, else their number."""
    return tuple(f.notation for f in ctx.flower_tiles) or (f"{ctx.flowers} flowers",)


def score(hand: Hand, ctx: WinContext, rules: str | RuleProfile = "mcr") -> ScoreResult:
    """Score a parsed hand in a win context.

    Args:
        hand: the hand (``parse_hand`` makes one from notation).
        ctx: how it was won.
        rules: ``"mcr"`` (default: current competition practice, as PyMahjongGB) or ``"mcr-1998"``
            (the 1998 text literally); see ``RuleProfile`` for every difference.

    Returns:
        The ScoreResult (also for a hand under 8 points: ``legal`` is then False and ``payments``
        None).

    Raises:
        ScoringError: ``tile-count``, ``fifth-tile``, ``not-winning``, ``contradictory-flags``,
            ``bad-value`` (unknown rules).
    """
    profile = C.PROFILES.get(rules) if rules.__class__ is str else None
    if profile is None:
        profile = rule_profile(rules)  # a RuleProfile, or an error
    melds, concealed, win = hand.melds, hand.concealed, hand.win_tile
    n_concealed = len(concealed)
    if n_concealed + 3 * len(melds) != 13:  # (so at most 4 melds)
        check_hand(hand)  # raises the tile-count error
    # The count tables as bytes, from an integer with a byte for each tile code (``_TILE_BYTE``):
    # the tiles' bytes summed at C level, written out little-endian (counts stay under 256).
    in_hand = sum(map(_tile_byte, concealed)) + _TILE_BYTE[win]
    standing = in_hand.to_bytes(TABLE_SIZE, "little")  # the concealed tiles
    fixed: tuple[Pack, ...] = ()
    split = C.NO_MELDS
    counts = standing  # all tiles: the concealed ones, and the melds' when there are melds
    if melds:
        # the melds as packs (a chow by its middle tile), and their chows', pungs' and kongs' tiles
        # and the indices of the melded and concealed kongs (``best_reading``'s ``split``)
        chows: tuple[int, ...] = ()
        pungs: tuple[int, ...] = ()
        mk_at: tuple[int, ...] = ()
        ck_at: tuple[int, ...] = ()
        i = 0
        for m in melds:
            kind, t = m.kind, m.tile
            if kind is _CHOW_MELD:
                fixed += ((CHOW, t + 1, True),)
                chows += (t + 1,)
                in_hand += _TILE_BYTE[t] * 0x010101  # t, t + 1, t + 2
            else:
                pungs += (t,)
                if kind is _PUNG_MELD:
                    fixed += ((PUNG, t, True),)
                    in_hand += _TILE_BYTE[t] * 3
                else:
                    if m.concealed:
                        fixed += ((KONG, t, False),)
                        ck_at += (i,)
                    else:
                        fixed += ((KONG, t, True),)
                        mk_at += (i,)
                    in_hand += _TILE_BYTE[t] * 4
            i += 1
        split = (chows, pungs, mk_at, ck_at)
        counts = in_hand.to_bytes(TABLE_SIZE, "little")
    if counts.translate(None, _UP_TO_FOUR):  # some count above 4
        check_hand(hand)  # raises the fifth-tile error
    if ctx.robbing_kong or ctx.kong_replacement or ctx.fourth_tile:
        fourth_tile = _check_flags(ctx, hand, counts[win] - standing[win], standing)
    else:  # no flag to check against the tiles
        fourth_tile = counts[win] - standing[win] == 3 if melds else False  # 和绝张: the other three in the winner's own pung
    reading = best_reading(fixed, standing, win, n_concealed, ctx, profile, fourth_tile, counts, split)
    if reading is None:
        raise ScoringError("not-winning", f"{hand.notation()} is not a winning hand: the tiles make neither four sets "
                           "and a pair nor a special shape (seven pairs, thirteen orphans, honors and knitted tiles, "
                           "knitted straight)")
    fan_points = reading.total
    total = fan_points + ctx.flowers * C.POINTS[C.FLOWER_TILES] if ctx.flowers else fan_points  # 1 point a flower
    legal = fan_points >= MINIMUM_POINTS
    return _new_record(ScoreResult, ([hand], profile.name, reading.shape, [None, reading, hand, ctx], total,
                                  fan_points, legal, _payments(total, ctx.self_drawn) if legal else None))


def _fan_results(reading: Reading, hand: Hand, ctx: WinContext) -> tuple[FanResult, ...]:
    """The FanResults of the chosen reading (and of the flowers), highest points first."""
    counts = reading.fans
    fans = [_new_record(FanResult, _HEADS[n] + (counts[n], [None, reading, hand, n]))
            for n in compress(_SLOTS, counts)]
    if ctx.flowers:
        fans.append(_new_record(FanResult, _HEADS[C.FLOWER_TILES] + (ctx.flowers, [partial(_flower_texts, ctx)])))
    if counts[C.MIXED_KONGS]:  # otherwise the table order already runs from high points to low
        fans.sort(key=lambda r: (-r.points, r.number if r.number is not None else 999))
    return tuple(fans)


@lru_cache(maxsize=1024)
def _payments(total: int, self_drawn: bool) -> Payments:
    """``Payments.for_total``, shared: a Payments is immutable and totals are few."""
    return Payments.for_total(total, self_drawn)


def score_hand(hand: str | Hand, *, self_drawn: bool = False, seat_wind: str = "E", prevalent_wind: str = "E",
               flowers: int | Sequence[str | int | Flower] = 0, last_tile: bool = False,
               kong_replacement: bool = False, robbing_kong: bool = False, fourth_tile: bool = False,
               rules: str = "mcr") -> ScoreResult:
    """Parse and score a hand given in MCR notation.

    Example: ``score_hand("[EEE,2][SSSS,1]WWWNN55pN", self_drawn=True).total``.

    Args:
        hand: the hand string (see ``scoring.hand``) or a Hand.
        self_drawn: 自摸 (else won on a discard).
        seat_wind, prevalent_wind: ``"E" "S" "W" "N"``.
        flowers: count 0-8 or list of flowers ``"1f"``-``"8f"``.
        last_tile: last tile of the wall (妙手回春 / 海底捞月).
        kong_replacement: 杠上开花 (self-drawn, with a kong).
        robbing_kong: 抢杠和 (on another player's promoted kong tile).
        fourth_tile: 和绝张.
        rules: ``"mcr"`` or ``"mcr-1998"``.

    Raises:
        ScoringError: with a code naming the problem (see ``ScoringError.CODES``).
    """
    h = parse_hand(hand) if hand.__class__ is str or not isinstance(hand, Hand) else hand
    ctx = win_context(self_drawn, seat_wind, prevalent_wind, flowers, last_tile, kong_replacement, robbing_kong,
                      fourth_tile)
    return score(h, ctx, rules)
