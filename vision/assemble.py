"""Assembling recognised tiles into a hand, from their layout on the table.

How a winner lays a hand (第七条 8 and 第五条 term 28 of the rules text): the concealed tiles in a
row; each declared set (副露) set apart as a group, the claimed tile turned sideways, its place in
the group telling whom it came from (left, middle, right = the player on the left 上家, across
对家, on the right 下家); a concealed kong (暗杠) as a group of four with face-down tiles; flowers
anywhere apart; the winning tile laid apart from the rest (单放).

Geometry: rows are found from the tiles' vertical centres, groups from horizontal gaps wider
than ``GROUP_GAP`` tile widths. All sizes are in pixels of the picture.
"""

from __future__ import annotations

import dataclasses
from statistics import median
from typing import Sequence

import numpy as np

from scoring.errors import ScoringError
from scoring.hand import Hand, Meld, MeldKind, check_hand
from scoring.tiles import ALL_TILES, tile_name

from .models import covered_shares
from .tiles import BACK, HONORS, UNKNOWN, is_flower, is_hand_tile

_CODE = {tile_name(c): c for c in ALL_TILES}
#: Tiles whose confidence is below this are reported for the player to confirm, unless the caller
#: gives its own threshold (a table's ``confirm-below`` setting, whose default,
#: ``controller.settings.CONFIRM_BELOW``, is this value: tests/controller/test_confirm_below_setting.py
#: ties the two; vision may not import controller, DESIGN.md).
MIN_CONFIDENCE = 0.6
#: A gap wider than this many tile widths separates two groups (players leave about half a tile).
GROUP_GAP = 0.45


@dataclasses.dataclass(frozen=True)
class DetectedTile:
    """One tile found in a picture.

    Attributes:
        tile: name in scoring notation (``1m``..``9p``, ``E S W N C F P``, ``1f``..``8f``), ``back``
            or ``unknown``.
        box: (x1, y1, x2, y2) in pixels of the picture.
        confidence: the classifier's probability of ``tile`` (0-1).
        sideways: the tile lies turned a quarter (a claimed tile in a meld).
        score: the detector's centre score of the box (0-1), or None for a tile not found by the
            detector (e.g. one the player placed); with ``confidence`` the inputs of the
            calibration (``vision.confidence``).
    """

    tile: str
    box: tuple[float, float, float, float]
    confidence: float
    sideways: bool
    score: float | None = None

    @property
    def centre(self) -> tuple[float, float]:
        return ((self.box[0] + self.box[2]) / 2, (self.box[1] + self.box[3]) / 2)

    def to_dict(self) -> dict:
        """``{"tile", "box" [x1, y1, x2, y2] (integer pixels), "confidence", "sideways"}``."""
        return {"tile": self.tile, "box": [int(round(v)) for v in self.box],
                "confidence": round(self.confidence, 3), "sideways": self.sideways}


@dataclasses.dataclass(frozen=True)
class Gap:
    """Where a tile seems to be missing from the layout (the player is asked there).

    Attributes:
        box: (x1, y1, x2, y2) in pixels of the picture: the place of the missing tile, or for a
            meld of two the places on both sides of it (the tile can be missing at either end).
        kind: ``"meld-of-two"`` (two tiles set apart with one sideways: a declared set short of
            a tile), ``"row-gap"`` (a space of about one tile between two tiles of a row),
            ``"some-frames"`` (a tile found in a minority of a capture's frames, ``vision.voting``)
            or ``"unread"`` (an area where the detector responds weakly as to several tiles that
            no tile read covers: tiles there were not read, ``unread_areas``; the box is the area).
    """

    box: tuple[float, float, float, float]
    kind: str

    def to_dict(self) -> dict:
        """``{"box": [x1, y1, x2, y2] (integer pixels), "kind"}``."""
        return {"box": [int(round(v)) for v in self.box], "kind": self.kind}


#: A space between two neighbouring tiles of a row of this many tile widths (from their centres
#: and the usual tile size) looks like the place of a missing tile, when the hand is short of
#: tiles: players leave about half a tile between sets (``GROUP_GAP``), a missing tile leaves one.
MISSING_GAP = (0.7, 1.7)
#: Tiles of the hand (a kong counting 3) from which a short count is read as a tile missing, not
#: as a picture of something other than a hand.
NEAR_A_HAND = 10


def layout_gaps(rows: list[list[list[DetectedTile]]]) -> list[Gap]:
    """The places where a tile seems to be missing in ``rows`` (``rows_and_groups``): each group
    of two with one tile sideways (a declared set short of a tile), and each space of
    ``MISSING_GAP`` tile widths between neighbouring groups of a row. Shapes as in ``Gap``."""
    tiles = [t for row in rows for g in row for t in g]
    if not tiles:
        return []
    long_side = median(max(t.box[2] - t.box[0], t.box[3] - t.box[1]) for t in tiles)
    short_side = median(min(t.box[2] - t.box[0], t.box[3] - t.box[1]) for t in tiles)
    out: list[Gap] = []
    for row in rows:
        for g in row:
            if len(g) == 2 and sum(t.sideways for t in g) == 1:
                x1 = min(t.box[0] for t in g) - short_side
                x2 = max(t.box[2] for t in g) + short_side
                y1, y2 = min(t.box[1] for t in g), max(t.box[3] for t in g)
                out.append(Gap((x1, y1, x2, y2), "meld-of-two"))
        for a, b in zip(row, row[1:]):
            prev, t = a[-1], b[0]
            half = ((long_side if prev.sideways else short_side) + (long_side if t.sideways else short_side)) / 2
            space = (t.centre[0] - prev.centre[0] - half) / short_side
            if MISSING_GAP[0] <= space <= MISSING_GAP[1]:
                cx, cy = (prev.centre[0] + t.centre[0]) / 2, (prev.centre[1] + t.centre[1]) / 2
                out.append(Gap((cx - short_side / 2, cy - long_side / 2, cx + short_side / 2, cy + long_side / 2),
                               "row-gap"))
    return out


#: The unread-area check (``unread_areas``, issue 21): weak boxes of the detector (its score from
#: ``UNREAD_FLOOR`` up to its threshold) that no read tile covers by more than ``UNREAD_OVERLAP``
#: (of the smaller box, ``models.covered_shares``), each box's long side within ``UNREAD_SIZE``
#: times the usual tile's, joined when their centres lie within ``UNREAD_LINK`` times the usual
#: tile's long side of each other; a cluster of at least ``UNREAD_MIN`` such boxes is an area where
#: tiles were not read. Chosen on the training split's held-out photos and on synthetic table
#: scenes of its crops (``benchmarks/vision_unread.py --grid --scenes 40``; vision/README.md).
UNREAD_FLOOR = 0.05
UNREAD_OVERLAP = 0.3
UNREAD_LINK = 2.0
UNREAD_MIN = 6
UNREAD_SIZE = (0.7, 1.3)


def unread_areas(weak: Sequence[Sequence[float]], tiles: Sequence[DetectedTile], floor: float = UNREAD_FLOOR,
                 overlap: float = UNREAD_OVERLAP, link: float = UNREAD_LINK, least: int = UNREAD_MIN,
                 size: tuple[float, float] = UNREAD_SIZE) -> list[Gap]:
    """Areas of the picture where tiles seem to lie that were not read: one ``Gap(box, "unread")``
    per cluster of at least ``least`` weak boxes.

    Args:
        weak: the detector's boxes below its threshold, ``(x1, y1, x2, y2, score)`` in pixels
            (``TileDetector.detect_with_weak``); those scored under ``floor`` are left out.
        tiles: the tiles read; a weak box that one of them covers by more than ``overlap`` (of the
            smaller box) is on a tile read (its second box, or its neighbour's edge) and left out.
        link: two weak boxes belong to one cluster when their centres are at most this many times
            the usual tile's long side apart (single linkage); the usual tile is the median of
            ``tiles``, or of the weak boxes when no tile was read.
        size: the band of a weak box's long side, in the usual tile's long sides: a box far larger
            or smaller is no tile's (the detector's weak boxes on a rack, a table's leg, a hand).
        least: the fewest weak boxes of an area (a few weak boxes together are noise: a rack's
            edge, a reflection, the felt between a row's groups and at its ends).

    Returns:
        The areas, largest cluster first; each box the bounding box of its cluster's boxes.

    Issue 21: a pile of face-up tiles at angles (test photo 387332366) gave no box above the
    threshold but 96 from a score of 0.05; the player is asked there instead of nothing."""
    w = np.array([b[:5] for b in weak if b[4] >= floor], np.float64).reshape(-1, 5)
    if tiles and len(w):  # not on a tile read
        w = w[covered_shares(w, [x.box for x in tiles]).max(axis=1) <= overlap]
    if len(w) < least:
        return []
    long_w = np.maximum(w[:, 2] - w[:, 0], w[:, 3] - w[:, 1])
    usual = median([max(x.box[2] - x.box[0], x.box[3] - x.box[1]) for x in tiles]) if tiles else \
        float(np.median(long_w))
    w = w[(long_w >= size[0] * usual) & (long_w <= size[1] * usual)]
    if len(w) < least:
        return []
    c = np.stack([(w[:, 0] + w[:, 2]) / 2, (w[:, 1] + w[:, 3]) / 2], 1)
    near = np.hypot(c[:, None, 0] - c[None, :, 0], c[:, None, 1] - c[None, :, 1]) <= link * usual
    cluster = np.full(len(w), -1)
    for start in range(len(w)):  # the connected parts of ``near`` (single linkage)
        if cluster[start] >= 0:
            continue
        cluster[start], todo = start, [start]
        while todo:
            nxt = np.flatnonzero(near[todo].any(axis=0) & (cluster < 0))
            cluster[nxt] = start
            todo = list(nxt)
    parts = sorted((np.flatnonzero(cluster == k) for k in np.unique(cluster)), key=len, reverse=True)
    return [Gap((float(w[i, 0].min()), float(w[i, 1].min()), float(w[i, 2].max()), float(w[i, 3].max())), "unread")
            for i in parts if len(i) >= least]


@dataclasses.dataclass(frozen=True)
class Assembly:
    """A hand read from the layout.

    Attributes:
        hand: the hand in scoring notation (melds, concealed tiles, winning tile last), or ``None``
            when the tiles do not add up (``problems`` says why).
        melds: each meld's notation, e.g. ``"[123m,1]"``, ``"[EEEE]"``.
        concealed: the concealed tiles without the winning tile, left to right.
        win_tile: the tile laid apart, or ``None``.
        flowers: the flowers ``1f``..``8f`` found.
        uncertain: the tiles below the confidence threshold (or unreadable), for the player to confirm.
        problems: why the tiles do not make a hand (empty when ``hand`` is set).
        notes: assumptions made (e.g. a kong with no sideways tile: source unknown).
        gaps: where a tile seems to be missing (``Gap``), when the hand is short of tiles: the
            player is asked there (a missed tile is then not silent).
    """

    hand: str | None
    melds: tuple[str, ...]
    concealed: tuple[str, ...]
    win_tile: str | None
    flowers: tuple[str, ...]
    uncertain: tuple[DetectedTile, ...]
    problems: tuple[str, ...]
    notes: tuple[str, ...] = ()
    gaps: tuple[Gap, ...] = ()


def rows_and_groups(tiles: Sequence[DetectedTile]) -> list[list[list[DetectedTile]]]:
    """Rows (top to bottom) of groups (left to right) of tiles (left to right).

    A new row starts when a tile's centre is more than 0.6 tile heights below the row's; a new
    group when the gap to the previous tile, reckoned from their centres and the usual tile size
    (width upright, height sideways), is wider than ``GROUP_GAP`` tile widths.
    """
    if not tiles:
        return []
    long_side = median(max(t.box[2] - t.box[0], t.box[3] - t.box[1]) for t in tiles)
    short_side = median(min(t.box[2] - t.box[0], t.box[3] - t.box[1]) for t in tiles)
    rows: list[list[DetectedTile]] = []
    for t in sorted(tiles, key=lambda t: t.centre[1]):
        if rows and t.centre[1] - median(u.centre[1] for u in rows[-1]) <= 0.6 * long_side:
            rows[-1].append(t)
        else:
            rows.append([t])
    out = []
    for row in rows:
        row.sort(key=lambda t: t.box[0])
        row.sort(key=lambda t: t.centre[0])
        groups = [[row[0]]]
        for prev, t in zip(row, row[1:]):
            # the gap between the two, from their centres and a tile's usual size (the boxes'
            # own widths are less sure than their centres)
            half = ((long_side if prev.sideways else short_side) + (long_side if t.sideways else short_side)) / 2
            if t.centre[0] - prev.centre[0] - half > GROUP_GAP * short_side:
                groups.append([t])
            else:
                groups[-1].append(t)
        out.append(groups)
    return out


def _set_kind(names: list[str]) -> MeldKind | None:
    if not all(is_hand_tile(n) for n in names):
        return None
    if len(names) == 4:
        return MeldKind.KONG if len(set(names)) == 1 else None
    if len(names) != 3:
        return None
    if len(set(names)) == 1:
        return MeldKind.PUNG
    codes = sorted(_CODE[n] for n in names)
    if codes[0] < 30 and codes[1] == codes[0] + 1 and codes[2] == codes[0] + 2:
        return MeldKind.CHOW
    return None


def _meld_of(group: list[DetectedTile]) -> Meld | None:
    """The meld a group of 3-4 tiles shows, or None when it is not a declared set."""
    names = [t.tile for t in group]
    if len(group) == 4 and BACK in names:
        faces = {n for n in names if n != BACK}
        if len(faces) == 1 and is_hand_tile(next(iter(faces))):
            return Meld(MeldKind.KONG, _CODE[faces.pop()], concealed=True)
        return None
    kind = _set_kind(names)
    side = [i for i, t in enumerate(group) if t.sideways]
    if kind is None or len(side) != 1:
        return None
    i = side[0]
    if kind is MeldKind.CHOW:
        low = min(_CODE[n] for n in names)
        return Meld(kind, low, offer=_CODE[names[i]] - low + 1)
    offer = 1 if i == 0 else (3 if i == len(group) - 1 else 2)
    return Meld(kind, _CODE[names[0]], offer=offer)


#: More tiles than this lying apart one by one (each its own group) is no laid-out hand: the
#: winning tile is not guessed among them.
MAX_SINGLES = 2


def _rule_system(rules: str):
    """The rule system (``scoring.systems``) a hand is read for, or None for MCR (``mcr``,
    ``mcr-1998``: 14 tiles, flowers counted apart, ``scoring.hand.check_hand``). Imported here:
    the registry loads the riichi package (about 0.4 s), which MCR photos never need.
    Raises ``RulesError("unknown-rules")`` listing the systems."""
    from scoring import PROFILES, systems
    return None if rules in PROFILES else systems.get(rules)


def assemble(tiles: Sequence[DetectedTile], min_confidence: float = MIN_CONFIDENCE, rules: str = "mcr") -> Assembly:
    """Read the hand from the tiles' layout.

    Args:
        tiles: the tiles found in one picture (see ``DetectedTile``); positions in pixels.
        min_confidence: tiles below it are listed in ``uncertain`` (the hand is still assembled
            with the best reading, so that the player can confirm or correct it).
        rules: the rule system the hand is read for (``mjtable rules --list``): its hand size
            (``RuleSystem.hand_sizes``: 14; 17 for Taiwan 16-tile; 14 or 17 for Fuzhou, the size
            nearer the tiles laid out), its tile set (a tile it does not play is a problem: an honour
            in Changsha, a flower in riichi) and its flowers: MCR counts them apart (``flowers``),
            Taiwan writes them in the hand (``1f``..``8f`` first), Fuzhou also takes the honours as
            flowers (docs/rules/fuzhou.md). Riichi's red fives are read as plain fives (the
            classifier has no red-five label): a note says so.

    Returns:
        The Assembly; ``hand`` is ``None`` and ``problems`` non-empty when the tiles do not add up:
        no winning tile laid apart, a wrong tile count (the system's size, a kong counting as 3), a
        fifth copy of a tile, a tile outside the system's set, a group that is no set, an
        all-face-down kong, more than ``MAX_SINGLES`` tiles apart one by one, most tiles sideways
        (a picture turned a quarter).

    Raises:
        RulesError: ``unknown-rules`` for a ``rules`` not registered.
    """
    system = _rule_system(rules)
    honour_flowers = system is not None and system.tile_set.honour_flowers

    def flower(name: str) -> bool:  # the system's flowers: Fuzhou's honours too
        return is_flower(name) or (honour_flowers and name in HONORS)

    uncertain = tuple(t for t in tiles if t.confidence < min_confidence or t.tile == UNKNOWN)
    flowers = tuple(t.tile for t in tiles if flower(t.tile))
    # an unreadable tile (``unknown``, or a doubtful ``back``) is listed in ``uncertain`` but takes
    # no place in the layout: either it was no tile (the hand adds up without it) or the count
    # tells the player that one is missing
    rest = [t for t in tiles if not flower(t.tile) and t.tile != UNKNOWN
            and not (t.tile == BACK and t.confidence < min_confidence)]
    problems: list[str] = []
    notes: list[str] = []
    hand_tiles = [t for t in tiles if is_hand_tile(t.tile)]
    outside = [] if system is None else [t.tile for t in tiles if t.tile not in (BACK, UNKNOWN)
                                         and system.tile_set.not_played(t.tile) is not None]
    if outside:
        problems.append(f"{', '.join(dict.fromkeys(outside))}: not tile(s) of {system.name} hands (it plays "
                        f"{system.tile_set.description})")
    if len(hand_tiles) >= 5 and sum(t.sideways for t in hand_tiles) > len(hand_tiles) / 2:
        # the rows run up and down the picture: which end is the left (the source of a claimed
        # tile, 第五条) cannot be told, so the hand is not guessed
        problems.append(f"{sum(t.sideways for t in hand_tiles)} of {len(hand_tiles)} tiles lie sideways: the picture "
                        "is turned a quarter; turn the camera or the picture so that the rows run left to right")
    # a face-down tile is read only in a group of four (a concealed kong 暗杠, the one place the
    # rules show backs); elsewhere it is a tile turned over by mistake, or no tile at all (the
    # felt of a gap between two tiles can look like a back): it is listed for the player and the
    # layout is read without it
    lone_backs = [t for row in rows_and_groups(rest) for g in row if len(g) != 4 for t in g if t.tile == BACK]
    if lone_backs:
        rest = [t for t in rest if all(t is not b for b in lone_backs)]
        uncertain += tuple(lone_backs)
        notes.append(f"{len(lone_backs)} face-down tile(s) outside a group of four (a concealed kong) not read: "
                     "if it is a tile of the hand, turn it face up")
    melds: list[Meld] = []
    singles: list[DetectedTile] = []
    others: list[list[DetectedTile]] = []
    for row in rows_and_groups(rest):
        for g in row:
            names = [t.tile for t in g]
            if len(g) == 4 and names.count(BACK) == 4:
                problems.append("a concealed kong lies all face down: turn one or two of its tiles face up "
                                "so that it can be read")
                continue
            m = _meld_of(g) if len(g) in (3, 4) else None
            if m is not None:
                melds.append(m)
            elif len(g) == 1:
                singles.append(g[0])
            else:
                others.append(g)
    # groups that are sets without a sideways tile count as exposed melds only when the count needs it
    others.sort(key=len)
    concealed_groups = list(others)
    total = sum(len(g) for g in concealed_groups)
    sizes = (14,) if system is None else system.hand_sizes
    # the hand size: the system's, or of its sizes (Fuzhou 14 or 17) the one nearer the tiles laid out
    size = min(sizes, key=lambda n: (abs(n - 3 * len(melds) - total - len(singles)), n))
    need = size - 1 - 3 * len(melds)
    for g in list(others[:-1]) if len(others) > 1 else []:
        if total <= need:
            break
        kind = _set_kind([t.tile for t in g])
        if kind is not None and not any(t.sideways for t in g):
            low = min(_CODE[t.tile] for t in g)
            if kind is MeldKind.KONG:
                notes.append(f"kong of {g[0].tile}: no tile is sideways, source taken as the player on the left")
                melds.append(Meld(kind, low, offer=1))
            else:
                melds.append(Meld(kind, low))
            concealed_groups.remove(g)
            need -= 3
            total -= len(g)
    win: DetectedTile | None = None
    if len(singles) == 1:
        win = singles[0]
    elif not singles:
        problems.append("no winning tile laid apart: the rules require the winning tile to lie apart from "
                        "the hand (单放, 第五条 term 28)")
    elif len(singles) > MAX_SINGLES:
        problems.append(f"{len(singles)} tiles lie apart, one by one: lay the hand in a row, its sets side by side, "
                        "and only the winning tile apart")
    else:
        # a single set apart next to the concealed row is the winning tile only if the count says so
        extra = total + len(singles) - 1 - need
        if extra == 0:
            win = max(singles, key=lambda t: (t.centre[1], t.centre[0]))
            concealed_groups.extend([s] for s in singles if s is not win)
            notes.append(f"{len(singles)} tiles lie apart; the lowest, rightmost one is taken as the winning tile")
        else:
            problems.append(f"{len(singles)} tiles lie apart ({', '.join(t.tile for t in singles)}): "
                            "lay only the winning tile apart")
    concealed = [t for g in sorted(concealed_groups, key=lambda g: (g[0].centre[1], g[0].box[0])) for t in g]
    bad = [t.tile for t in concealed + ([win] if win else []) if not is_hand_tile(t.tile)]
    if bad:
        problems.append(f"{len(bad)} tile(s) among the hand could not be read as hand tiles ({', '.join(bad)})")
    hand_text = None
    if not problems and win is not None:
        try:
            if system is None:
                hand = Hand(tuple(melds), tuple(_CODE[t.tile] for t in concealed), _CODE[win.tile])
                check_hand(hand)
                hand_text = hand.notation()
            else:  # flowers written in the hand where the system plays them (Taiwan, Fuzhou)
                from scoring.systems.notation import parse
                written = "".join(flowers) if system.tile_set.flowers else ""
                hand_text = parse(written + "".join(m.notation() for m in melds) + "".join(t.tile for t in concealed)
                                  + win.tile, system.tile_set, system.hand_sizes, system.name).notation()
        except ScoringError as e:
            problems.append(e.message)
    if system is not None and system.tile_set.red_fives and any(t.tile[0] == "5" for t in hand_tiles):
        notes.append("red fives are read as plain fives (the recogniser has no red-five label): score the hand "
                     "with 0m/0p/0s in it (mjtable score) if it holds one")
    # short of tiles (a kong counting 3): where does a tile seem to be missing?
    gaps: list[Gap] = []
    count = len(rest) - sum(1 for m in melds if m.kind is MeldKind.KONG)
    if NEAR_A_HAND <= count < size and hand_text is None:
        gaps = layout_gaps(rows_and_groups(rest))
        if gaps:
            notes.append(f"{size - count} tile(s) short: a tile seems to be missing at {len(gaps)} place(s) "
                         f"({', '.join(g.kind for g in gaps)}); check there")
    if lone_backs and hand_text is None:
        problems.append(f"{len(lone_backs)} face-down tile(s) lie outside a concealed kong: turn it face up "
                        "(a concealed kong is shown as a group of four with backs)")
    return Assembly(hand_text, tuple(m.notation() for m in melds), tuple(t.tile for t in concealed),
                    win.tile if win else None, flowers, uncertain, tuple(problems), tuple(notes), tuple(gaps))
