"""Shanten and useful tiles (``scoring.shanten``, ``scoring.analysis``) checked against PyMahjongGB,
and waits (``scoring.analysis.waits_of``) against brute force through the scorer.

20,000 seeded hands in play (``partial_hands``: 13 and 14 tiles, 0-4 melds, every shape):

* 13 tiles (80 %): for each of the five shapes, the shanten and the set of useful tiles must equal the
  reference's ``RegularShanten``, ``SevenPairsShanten``, ``ThirteenOrphansShanten``,
  ``HonorsAndKnittedTilesShanten``, ``KnittedStraightShanten`` on the standing tiles (a shape the
  reference refuses for that many standing tiles must be ``None``); the overall shanten must equal
  ``MahjongShanten``.
* 14 tiles (20 %): each discard's shanten and useful tiles as above (the reference on the 13 tiles
  left); each shape's shanten is the best over the discards, -1 when a discard is ready and
  useful (the reference's ``enum_discard_tile``); overall -1 exactly when the scorer accepts
  the 14 tiles as a winning hand.
* Waits: of the first 5,000 13-tile hands, every ready one and every 16th that is not, against
  all 34 tiles
  tried through ``scoring.score`` on a discard and self-drawn: the same tiles, the same totals,
  和绝张 where the other three copies are visible, unseen counts.

Every disagreement fails the test, listing the first hands that differ.
"""

from __future__ import annotations

from MahjongGB import (HonorsAndKnittedTilesShanten, KnittedStraightShanten, MahjongShanten, RegularShanten,
                       SevenPairsShanten, ThirteenOrphansShanten)

from partial_hands import play_hands
from scoring import ScoringError, WinContext
from scoring.analysis import PartialHand, shanten_of, waits_of
from scoring.hand import Hand, MeldKind
from scoring.score import score
from scoring.shanten import SHAPES, Shape, count_table, shape_shanten
from scoring.tiles import ALL_TILES

N_HANDS = 20_000
SEED = 19
MAX_REPORTED = 15
#: 13-tile hands whose waits are checked by brute force (34 tiles through the scorer each)
N_WAITS = 5_000

_REF_NAME = {t: (("W", "T", "B")[t // 10] + str(t % 10)) if t < 30 else ("F1", "F2", "F3", "F4", "J1", "J2", "J3")[t - 31]
             for t in ALL_TILES}
_FROM_REF = {v: k for k, v in _REF_NAME.items()}
_REF_FN = {Shape.REGULAR: RegularShanten, Shape.SEVEN_PAIRS: SevenPairsShanten,
           Shape.THIRTEEN_ORPHANS: ThirteenOrphansShanten, Shape.HONORS_AND_KNITTED: HonorsAndKnittedTilesShanten,
           Shape.KNITTED_STRAIGHT: KnittedStraightShanten}
_PACK = {MeldKind.CHOW: "CHI", MeldKind.PUNG: "PENG", MeldKind.KONG: "GANG"}


def _ref_shape(shape: Shape, ref_tiles: tuple[str, ...]) -> tuple[int, list[int]] | None:
    try:
        st, useful = _REF_FN[shape](ref_tiles)
    except TypeError:  # the reference refuses this many standing tiles for the shape
        return None
    return st, sorted(_FROM_REF[u] for u in useful)


def _ref_overall(hand) -> int:
    packs = tuple((_PACK[m.kind], _REF_NAME[m.tile + 1 if m.kind is MeldKind.CHOW else m.tile], m.offer or 0)
                  for m in hand.melds)
    return MahjongShanten(packs, tuple(_REF_NAME[t] for t in hand.standing))


def _without(standing: tuple[int, ...], t: int) -> tuple[int, ...]:
    i = standing.index(t)
    return standing[:i] + standing[i + 1:]


def _check_shapes(standing: tuple[int, ...], n_melds: int, problems: list[str], where: str) -> dict:
    """Each shape against the reference; returns ``{Shape: reference (shanten, useful) or None}``."""
    table = count_table(standing)
    ref_tiles = tuple(_REF_NAME[t] for t in standing)
    refs = {}
    for shape in SHAPES:
        ours = shape_shanten(table, n_melds, shape)
        ref = refs[shape] = _ref_shape(shape, ref_tiles)
        if ours != ref:
            problems.append(f"{where} {shape.value}: ours {ours}, reference {ref}")
    return refs


def _wins(hand: PartialHand) -> bool:
    try:
        score(Hand(hand.melds, hand.standing[:-1], hand.standing[-1]), WinContext())
    except ScoringError as e:
        assert e.code == "not-winning", e
        return False
    return True


def test_shanten_and_useful_tiles_match_pymahjonggb() -> None:
    hands = play_hands(N_HANDS, SEED)
    assert len({h.size for h in hands}) == 2 and len(hands) == N_HANDS
    reports: list[str] = []
    n_bad = 0
    for h in hands:
        hand = PartialHand(h.melds, h.standing)
        n_melds = len(h.melds)
        ours = shanten_of(hand)
        problems: list[str] = []
        if h.size == 13:
            refs = _check_shapes(h.standing, n_melds, problems, "")
            if ours.shanten != _ref_overall(hand):
                problems.append(f"overall: ours {ours.shanten}, reference {_ref_overall(hand)}")
            best = min(v[0] for v in refs.values() if v is not None)
            merged = sorted({t for v in refs.values() if v is not None and v[0] == best for t in v[1]})
            if (ours.shanten, list(ours.useful or ())) != (best, merged):
                problems.append(f"useful: ours {ours.useful}, reference {merged}")
        else:
            by_shape: dict[Shape, int | None] = {s: None for s in SHAPES}
            for d in ours.discards:
                refs = _check_shapes(_without(h.standing, d.tile), n_melds, problems, f"discard {d.tile}")
                for s, v in refs.items():
                    if v is not None:
                        st = -1 if v[0] == 0 and d.tile in v[1] else v[0]
                        by_shape[s] = st if by_shape[s] is None else min(by_shape[s], st)  # type: ignore[type-var]
                best = min(v[0] for v in refs.values() if v is not None)
                merged = sorted({t for v in refs.values() if v is not None and v[0] == best for t in v[1]})
                if (d.shanten, list(d.useful)) != (best, merged):
                    problems.append(f"discard {d.tile}: ours {d.shanten} {d.useful}, reference {best} {merged}")
            if {d.tile for d in ours.discards} != set(h.standing):
                problems.append("not every discard listed")
            if ours.by_shape != by_shape:
                problems.append(f"by shape: ours {ours.by_shape}, reference {by_shape}")
            if (ours.shanten == -1) != _wins(hand):
                problems.append(f"overall {ours.shanten}, but the scorer says winning={_wins(hand)}")
        if problems:
            n_bad += 1
            if len(reports) < MAX_REPORTED:
                reports.append(f"  {h.notation()} ({h.kind}): " + "; ".join(problems[:4]))
    assert not n_bad, f"{n_bad} of {N_HANDS} hands differ from PyMahjongGB:\n" + "\n".join(reports)


def _brute_force(hand: PartialHand, seen_table: list[int]) -> dict[int, tuple[int | None, int]]:
    """``{winning tile: (total on a discard, total self-drawn)}`` by trying all 34 tiles."""
    out = {}
    standing = count_table(hand.standing)
    visible = hand.visible()
    for t in ALL_TILES:
        if visible[t] == 4:
            continue  # no fifth copy to win on
        fourth = standing[t] == 0 and visible[t] + seen_table[t] >= 3
        h = Hand(hand.melds, hand.standing, t)
        try:
            on_discard = score(h, WinContext(fourth_tile=fourth)).total
        except ScoringError as e:
            assert e.code == "not-winning", e
            continue
        out[t] = (on_discard, score(h, WinContext(self_drawn=True, fourth_tile=fourth)).total)
    return out


def test_waits_match_brute_force_through_the_scorer() -> None:
    hands = [h for h in play_hands(N_HANDS, SEED) if h.size == 13][:N_WAITS]
    reports: list[str] = []
    n_bad = n_checked = n_ready = 0
    for i, h in enumerate(hands):
        hand = PartialHand(h.melds, h.standing)
        # seen tiles: a few of what the wall has left, so that unseen counts and 和绝张 vary
        left = [t for t in ALL_TILES for _ in range(4 - hand.visible()[t])]
        seen = tuple(left[(i * 7 + k * 13) % len(left)] for k in range(i % 9))
        report = waits_of(hand, seen)
        if report.shanten > 0 and i % 16:
            assert not report.waits
            continue
        n_checked += 1
        n_ready += report.shanten == 0
        seen_table = count_table(seen)
        expected = _brute_force(hand, seen_table)
        got = {w.tile: (w.discard.total if w.discard else None, w.self_drawn.total) for w in report.waits}
        visible = hand.visible(seen)
        bad_unseen = [w.tile for w in report.waits if w.unseen != 4 - visible[w.tile]]
        bad_legal = [w.tile for w in report.waits if w.self_drawn.legal != (
            score(Hand(hand.melds, hand.standing, w.tile), WinContext(self_drawn=True)).fan_points >= 8)]
        if got != expected or bad_unseen or bad_legal:
            n_bad += 1
            if len(reports) < MAX_REPORTED:
                reports.append(f"  {h.notation()} seen {seen}: ours {got}, brute force {expected}, "
                               f"unseen wrong for {bad_unseen}, legal wrong for {bad_legal}")
    assert n_ready > 1500 and n_checked > n_ready
    assert not n_bad, f"{n_bad} of {n_checked} hands' waits differ from brute force:\n" + "\n".join(reports)


def test_waits_refuse_a_14_tile_hand_and_say_when_it_already_wins() -> None:
    fourteen = [PartialHand(h.melds, h.standing) for h in play_hands(N_HANDS, SEED)[:400] if h.size == 14]
    codes = set()
    for hand in fourteen:
        try:
            waits_of(hand)
        except ScoringError as e:
            assert e.code == ("already-winning" if shanten_of(hand).shanten == -1 else "tile-count"), e
            codes.add(e.code)
        else:
            raise AssertionError(f"{hand.notation()}: a 14-tile hand was accepted")
    assert codes == {"already-winning", "tile-count"}
