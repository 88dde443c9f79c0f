"""Waits (听牌) and shanten (向听) of a hand that is not complete: which tiles win it and for how
much, and how far it is from ready.

* ``find_waits(text)``: a 13-tile hand (a kong counting as 3). Every tile that completes it, with
  the score on a discard and self-drawn (``scoring.score``), whether each reaches the 8-point
  minimum (起和分: a wait under 8 points is a tile the player may not win on), how many copies are
  still unseen, and 和绝张 (fan 58) applied by itself when the other three copies are visible.
* ``analyse_shanten(text)``: a 13- or 14-tile hand. The shanten of each shape and overall
  (``scoring.shanten``); for 13 tiles the useful tiles (有效牌), for 14 tiles each discard with
  the useful tiles after it, best first.

"Visible" tiles are the hand's own tiles (its melds included, a kong giving 4) and the tiles
given as seen (discards, other players' melds). "Unseen" counts are ``4 - visible`` per tile.

Source: 中国麻将竞赛规则 (../shared/seeds/000_ba052a8ec20fd579.txt), 第八条 (winning shapes),
第九条 fan 58 (和绝张), 第十条 1 (起和分 8 points); the shanten definitions of the reference
calculator (see ``scoring.shanten``).
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

from .calculator import RuleProfile, rule_profile
from .errors import ScoringError
from .hand import Hand, Meld, WinContext, format_tiles, parse_hand, parse_tiles
from .score import FanResult, score
from .shanten import SHAPES, Shape, analyse_table, count_table, shanten_by_shape
from .tiles import ALL_TILES, Flower, tile_name


@dataclasses.dataclass(frozen=True, slots=True)
class PartialHand:
    """A hand that is not (necessarily) complete: declared melds and the standing tiles.

    Attributes:
        melds: declared sets (chows, pungs, kongs), 0-4.
        standing: the concealed tiles as codes, in canonical order.
    """

    melds: tuple[Meld, ...]
    standing: tuple[int, ...]

    @property
    def size(self) -> int:
        """Tiles in the hand with each meld counting 3 (13 or 14 for a hand in play)."""
        return 3 * len(self.melds) + len(self.standing)

    def notation(self) -> str:
        """Melds, then the standing tiles in display order: ``'[123m,1]4455p789s'``."""
        return "".join(m.notation() for m in self.melds) + format_tiles(self.standing)

    def visible(self, seen: Sequence[int] = ()) -> list[int]:
        """Count table of the tiles this player can see: the whole hand (kongs 4) and ``seen``."""
        return count_table([t for m in self.melds for t in m.tiles] + list(self.standing) + list(seen))


def parse_partial(text: str, sizes: tuple[int, ...], expect: str | None = None) -> PartialHand:
    """Parse a hand of one of ``sizes`` tiles (melds counting 3) in the MCR notation; ``expect``:
    what the ``tile-count`` error asks for (default: "give" the sizes).

    Raises:
        ScoringError: ``syntax``, ``bad-meld`` (see ``parse_hand``); ``tile-count`` for more than
            4 melds or another size; ``fifth-tile`` for more than four copies of a tile.
    """
    h = parse_hand(text)
    standing = tuple(sorted(h.concealed + (h.win_tile,)))
    hand = PartialHand(h.melds, standing)
    if len(h.melds) > 4:
        raise ScoringError("tile-count", f"{len(h.melds)} melds: a hand has at most 4 sets")
    if hand.size not in sizes:
        raise ScoringError("tile-count", f"the hand has {hand.size} tiles (a meld counting 3): "
                           f"{expect or 'give ' + ' or '.join(map(str, sizes))}")
    _check_copies(hand.visible(), "the hand")
    return hand


def parse_seen(text: str | Sequence[str] | None, hand: PartialHand) -> list[int]:
    """The seen tiles (``"1m55pEE"`` or a list of tile strings) as codes, checked with the hand.

    Raises:
        ScoringError: ``syntax`` for anything but tiles; ``fifth-tile`` when the hand and the seen
            tiles hold more than four copies of a tile.
    """
    if text is None:
        return []
    if isinstance(text, (list, tuple)):
        seen = [t for part in text for t in parse_tiles(part, "seen tiles")]
    else:
        seen = parse_tiles(text, "seen tiles")
    _check_copies(hand.visible(seen), "the hand and the seen tiles")
    return seen


def _check_copies(table: list[int], where: str) -> None:
    for t in ALL_TILES:
        if table[t] > 4:
            raise ScoringError("fifth-tile", f"{tile_name(t)} appears {table[t]} times in {where}: there are only 4 "
                               "of each tile")


# --- shanten ------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class Discard:
    """One discard of a 14-tile hand and what it leaves.

    Attributes:
        tile: the discarded tile's code.
        shanten: shanten of the 13 tiles left (0 = ready).
        useful: the tiles that then lower it (有效牌), canonical order; when ready, the waits.
        unseen: how many copies of the useful tiles are still unseen.
    """

    tile: int
    shanten: int
    useful: tuple[int, ...]
    unseen: int

    def to_dict(self) -> dict:
        return {"tile": tile_name(self.tile), "shanten": self.shanten, "useful": [tile_name(t) for t in self.useful],
                "unseen": self.unseen}


@dataclasses.dataclass(frozen=True, slots=True)
class ShantenReport:
    """The shanten analysis of a 13- or 14-tile hand.

    Attributes:
        hand: the hand in notation.
        shanten: the lowest over the shapes; -1 when a 14-tile hand is complete, 0 ready.
        by_shape: ``{Shape: shanten}`` with ``None`` for a shape the melds rule out. For 14 tiles,
            the best over the discards (-1 when the tiles complete that shape).
        useful: for 13 tiles, the tiles that lower the shanten (the shapes at the lowest merged);
            ``None`` for 14 tiles.
        unseen: unseen copies of ``useful`` (``None`` for 14 tiles).
        discards: for 14 tiles, each distinct discard, best first (lowest shanten, then most
            unseen useful tiles, then canonical order); empty for 13 tiles.
    """

    hand: str
    shanten: int
    by_shape: dict[Shape, int | None]
    useful: tuple[int, ...] | None
    unseen: int | None
    discards: tuple[Discard, ...]

    def to_dict(self) -> dict:
        """``{"hand", "shanten", "by_shape": {"regular", "seven_pairs", "thirteen_orphans",
        "honors_and_knitted", "knitted_straight"}, "discards": [...], "useful", "unseen"}``."""
        return {"hand": self.hand, "shanten": self.shanten,
                "by_shape": {s.value: self.by_shape[s] for s in SHAPES},
                "discards": [d.to_dict() for d in self.discards],
                "useful": None if self.useful is None else [tile_name(t) for t in self.useful],
                "unseen": self.unseen}


def _unseen(tiles, visible: list[int]) -> int:
    return sum(4 - visible[t] for t in tiles)


def shanten_of(hand: PartialHand, seen: Sequence[int] = ()) -> ShantenReport:
    """The shanten analysis of a parsed 13- or 14-tile hand (see ``ShantenReport``).

    Raises:
        ScoringError: ``tile-count`` for another size.
    """
    n_melds = len(hand.melds)
    visible = hand.visible(seen)
    table = count_table(hand.standing)
    if hand.size == 13:
        by_shape, best, useful = analyse_table(table, n_melds)
        return ShantenReport(hand.notation(), best, by_shape, tuple(useful), _unseen(useful, visible), ())
    if hand.size != 14:
        raise ScoringError("tile-count", f"the hand has {hand.size} tiles (a meld counting 3): give 13 or 14")
    # a shape is at -1 when the 14 tiles complete it, else at its best after a discard
    by_shape = {s: (None if v is None else -1 if v == -1 else 99) for s, v in shanten_by_shape(table, n_melds).items()}
    discards: list[Discard] = []
    for t in sorted(set(hand.standing)):
        table[t] -= 1
        after, best, useful = analyse_table(table, n_melds)
        table[t] += 1
        for s, v in after.items():
            if v is not None and v < by_shape[s]:  # type: ignore[operator]
                by_shape[s] = v
        discards.append(Discard(t, best, tuple(useful), _unseen(useful, visible)))
    discards.sort(key=lambda d: (d.shanten, -d.unseen, d.tile))
    overall = min(v for v in by_shape.values() if v is not None)
    return ShantenReport(hand.notation(), overall, by_shape, None, None, tuple(discards))


def analyse_shanten(hand: str, seen: str | Sequence[str] | None = None) -> ShantenReport:
    """Parse a 13- or 14-tile hand (and the seen tiles) and give its shanten analysis.

    Example: ``analyse_shanten("123m456m789m23p5s6s").shanten == 1``.

    Raises:
        ScoringError: ``syntax``, ``bad-meld``, ``tile-count``, ``fifth-tile``.
    """
    parsed = parse_partial(hand, (13, 14))
    return shanten_of(parsed, parse_seen(seen, parsed))


# --- waits --------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, slots=True)
class WaitScore:
    """The score of winning on one tile in one way (on a discard or self-drawn).

    Attributes:
        total: points, flowers included.
        legal: the fans reach the 8-point minimum (flowers not counted): a player may win.
        fans: the fans counted, as ``score`` gives them.
        fan_points: the points without flowers, the ones the minimum is counted on (第八条).
    """

    total: int
    legal: bool
    fans: tuple[FanResult, ...]
    fan_points: int

    def to_dict(self) -> dict:
        """``{"total", "legal", "fans", "fan_points"}``."""
        return {"total": self.total, "legal": self.legal, "fans": [f.to_dict() for f in self.fans],
                "fan_points": self.fan_points}


@dataclasses.dataclass(frozen=True, slots=True)
class Wait:
    """One tile that completes the hand.

    Attributes:
        tile: its code.
        unseen: copies not visible to the player (0: the wait is dead, 绝张 already gone).
        discard: the score on a discard, or ``None`` where no such win exists (robbing a kong of
            a tile the winner holds).
        self_drawn: the score when self-drawn.
    """

    tile: int
    unseen: int
    discard: WaitScore | None
    self_drawn: WaitScore

    def to_dict(self) -> dict:
        return {"tile": tile_name(self.tile), "unseen": self.unseen,
                "discard": None if self.discard is None else self.discard.to_dict(),
                "self_drawn": self.self_drawn.to_dict()}


@dataclasses.dataclass(frozen=True, slots=True)
class WaitsReport:
    """The waits of a 13-tile hand.

    Attributes:
        hand: the hand in notation.
        shanten: its shanten (0 = ready; the waits are then non-empty unless every winning tile
            is one the hand already holds four of).
        waits: the winning tiles in canonical order.
    """

    hand: str
    shanten: int
    waits: tuple[Wait, ...]

    def to_dict(self) -> dict:
        """``{"hand", "shanten", "waits": [{"tile", "unseen", "discard": {"total", "legal", "fans"},
        "self_drawn": {...}}]}``."""
        return {"hand": self.hand, "shanten": self.shanten, "waits": [w.to_dict() for w in self.waits]}


def _wait_score(hand: Hand, ctx: WinContext, rules: RuleProfile) -> WaitScore | None:
    try:
        r = score(hand, ctx, rules)
    except ScoringError as e:
        if e.code == "not-winning":
            raise AssertionError(f"{hand.notation()}: a wait of the shanten analysis does not win") from None
        if e.code == "contradictory-flags" and ctx.robbing_kong:
            return None  # no kong of this tile can be robbed
        raise
    return WaitScore(r.total, r.legal, r.fans, r.fan_points)


#: What a hand given to ``waits`` of another size is told.
_WAITS_SIZE = "waits are for a 13-tile hand; 'mjtable shanten' lists the discards of a 14-tile hand"


def waits_of(hand: PartialHand, seen: Sequence[int] = (), *, seat_wind: str = "E", prevalent_wind: str = "E",
             flowers: int | Sequence[str | int | Flower] = 0, last_tile: bool = False,
             kong_replacement: bool = False, robbing_kong: bool = False,
             rules: str | RuleProfile = "mcr") -> WaitsReport:
    """The waits of a parsed 13-tile hand (see ``WaitsReport``).

    The win options are those of ``score_hand``; ``kong_replacement`` (杠上开花) applies to the
    self-drawn wins only, ``robbing_kong`` (抢杠和) to the wins on a discard only. 和绝张 (fan 58)
    is set for a tile of which the hand holds no concealed copy and three are visible.

    Raises:
        ScoringError: ``tile-count`` for another size, ``already-winning`` when 14 tiles that
            already win are given, ``bad-value`` for an option, ``contradictory-flags``
            (e.g. a kong replacement without a kong).
    """
    if hand.size != 13:
        if hand.size == 14 and shanten_of(hand).shanten == -1:
            raise ScoringError("already-winning", f"{hand.notation()} already wins: score it with 'mjtable score', "
                               "or give 13 tiles to see what they wait on")
        raise ScoringError("tile-count", f"the hand has {hand.size} tiles (a meld counting 3): {_WAITS_SIZE}")
    profile = rule_profile(rules)
    # validates every option once; each win then takes the flags that apply to it
    base = WinContext.make(seat_wind=seat_wind, prevalent_wind=prevalent_wind, flowers=flowers, last_tile=last_tile,
                           kong_replacement=kong_replacement, robbing_kong=robbing_kong)
    own = hand.visible()
    visible = hand.visible(seen)
    table = count_table(hand.standing)
    _, shanten, tiles = analyse_table(table, len(hand.melds))
    waits: list[Wait] = []
    if shanten == 0:
        for t in tiles:
            if own[t] == 4:
                continue  # the hand holds all four: no fifth copy to win on
            h = Hand(hand.melds, hand.standing, t)
            fourth = table[t] == 0 and visible[t] >= 3
            discard = _wait_score(h, dataclasses.replace(base, kong_replacement=False, fourth_tile=fourth), profile)
            drawn = _wait_score(h, dataclasses.replace(base, self_drawn=True, robbing_kong=False, fourth_tile=fourth),
                                profile)
            assert drawn is not None
            waits.append(Wait(t, 4 - visible[t], discard, drawn))
    return WaitsReport(hand.notation(), shanten, tuple(waits))


def find_waits(hand: str, seen: str | Sequence[str] | None = None, **options) -> WaitsReport:
    """Parse a 13-tile hand (and the seen tiles) and give its waits, each scored.

    Example: ``[w.tile for w in find_waits("123m456m789m234p5s").waits] == [15]`` (5s).

    Args:
        hand: the hand in the MCR notation (melds first), 13 tiles with a kong counting 3.
        seen: tiles visible elsewhere (``"1m55pEE"`` or a list of tile strings).
        options: ``seat_wind``, ``prevalent_wind``, ``flowers``, ``last_tile``,
            ``kong_replacement``, ``robbing_kong``, ``rules`` (see ``waits_of``).

    Raises:
        ScoringError: see ``parse_partial``, ``parse_seen`` and ``waits_of``.
    """
    # 14 tiles are parsed too, so that a hand that already wins is told so (``waits_of``)
    parsed = parse_partial(hand, (13, 14), expect=_WAITS_SIZE)
    return waits_of(parsed, parse_seen(seen, parsed), **options)
