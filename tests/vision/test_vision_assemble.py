"""Assembly on laid-out scenes with known answers (ground-truth tiles, no model involved)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from scoring import parse_hand
from vision.assemble import DetectedTile, assemble, rows_and_groups
from vision.synth import compose_scene

from vision_scenes import as_detected, parse_row

# A plain face so that the scene can be drawn without any data set: geometry is what counts here.
FACES = {n: [np.full((80, 60, 3), 230, np.uint8)] for n in
         [f"{r}{s}" for s in "mps" for r in range(1, 10)] + list("ESWNCFP") + [f"{i}f" for i in range(1, 9)]}


def layout(*rows: str, rng=None, **kw):
    rng = rng if rng is not None else np.random.default_rng(0)
    img, placed = compose_scene([parse_row(r) for r in rows], FACES, rng, **kw)
    return img, as_detected(placed)


def test_concealed_row_and_winning_tile_apart():
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 8s 9s E E E N | N")
    a = assemble(tiles)
    assert a.problems == ()
    assert a.hand == "123m456p789sEEEN" + "N"
    assert a.win_tile == "N" and a.melds == () and a.uncertain == ()
    parse_hand(a.hand)


def test_melds_with_sideways_tiles_give_the_source():
    # chow claimed 4m (the 2nd tile by rank), pung claimed from across (sideways in the middle),
    # kong claimed from the right (sideways last); winning tile apart on the second row
    _, tiles = layout("3m 4m~ 5m | 7p 7p~ 7p | C C C C~",
                      "1s 1s 9s 9s | 9s")
    a = assemble(tiles)
    assert a.problems == ()
    assert set(a.melds) == {"[345m,2]", "[777p,2]", "[CCCC,3]"}
    h = parse_hand(a.hand)
    assert sorted(h.concealed) == sorted([11, 11, 19, 19])
    assert h.win_tile == 19


def test_pung_claimed_from_the_left_and_concealed_kong_with_backs():
    _, tiles = layout("2p 3p 4p 6s 6s 8m 8m | 8m", "E~ E E | B F F B")
    a = assemble(tiles)
    assert a.problems == (), a.problems
    assert set(a.melds) == {"[EEE,1]", "[FFFF]"}
    h = parse_hand(a.hand)
    assert h.win_tile == 8 and len(h.concealed) == 7


def test_flowers_are_set_aside():
    _, tiles = layout("1f 6f", "1m 1m 1m 2p 3p 4p 5s 6s 7s W W P P | P")
    a = assemble(tiles)
    assert a.flowers == ("1f", "6f")
    assert a.hand == "111m234p567sWWPP" + "P"


def test_no_winning_tile_apart_is_a_problem():
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 8s 9s E E E N N")
    a = assemble(tiles)
    assert a.hand is None
    assert any("单放" in p for p in a.problems)


def test_a_fifth_copy_is_a_problem():
    _, tiles = layout("1m 1m 1m 1m 2p 3p 4p 5s 6s 7s W W 1m | P")
    a = assemble(tiles)
    assert a.hand is None
    assert any("only 4 of each tile" in p for p in a.problems)


def test_a_short_hand_is_a_problem():
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 8s 9s E E | E")
    a = assemble(tiles)
    assert a.hand is None
    assert any("14 tiles" in p for p in a.problems)


def test_low_confidence_tiles_are_reported_not_hidden():
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 8s 9s E E E N | N")
    tiles[4] = dataclasses.replace(tiles[4], confidence=0.31)
    a = assemble(tiles)
    assert a.hand is not None  # the best reading is still given, for the player to confirm ...
    assert [t.tile for t in a.uncertain] == ["5p"]  # ... and the doubtful tile is named
    assert a.uncertain[0].confidence == pytest.approx(0.31)


def test_an_all_face_down_kong_cannot_be_read():
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 8s 9s N | N", "B B B B")
    a = assemble(tiles)
    assert a.hand is None and any("face down" in p for p in a.problems)


def test_unknown_tile_in_the_hand_is_a_problem():
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 8s 9s E E E N | N")
    tiles[0] = dataclasses.replace(tiles[0], tile="unknown", confidence=0.4)
    a = assemble(tiles)
    assert a.hand is None and any("14 tiles" in p for p in a.problems)
    assert [t.tile for t in a.uncertain] == ["unknown"]


def test_an_unknown_box_between_groups_does_not_join_them():
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 8s 9s N | N", "E~ E E")
    stray = DetectedTile("unknown", (tiles[-3].box[0] - 40, tiles[-3].box[1], tiles[-3].box[0] - 5, tiles[-3].box[3]),
                         0.45, False)
    a = assemble(tiles + [stray])
    assert a.problems == () and a.melds == ("[EEE,1]",)
    assert a.uncertain == (stray,)


def test_a_face_down_tile_in_the_concealed_hand_is_a_problem():
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 8s 9s E E E B | N")
    a = assemble(tiles)
    assert a.hand is None and any("face-down tile(s) lie outside a concealed kong" in p for p in a.problems)
    assert [t.tile for t in a.uncertain] == ["back"]


def test_a_back_read_in_the_gap_before_the_winning_tile_is_left_out():
    # the felt between the hand and the tile laid apart, read as a face-down tile, joins them
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 8s 9s E E E N | N")
    last, win = tiles[-2], tiles[-1]
    gap = DetectedTile("back", (last.box[2] + 1, last.box[1], win.box[0] - 1, last.box[3]), 0.95, False)
    a = assemble(tiles + [gap])
    assert a.hand == "123m456p789sEEEN" + "N" and a.problems == ()
    assert a.uncertain == (gap,) and any("face-down" in n for n in a.notes)


def test_rows_and_groups_follow_gaps_and_rows():
    _, tiles = layout("1m 2m 3m | 4m | 5m 6m", "7m 8m")
    rg = rows_and_groups(tiles)
    assert [[[t.tile for t in g] for g in row] for row in rg] == [[["1m", "2m", "3m"], ["4m"], ["5m", "6m"]],
                                                                [["7m", "8m"]]]


def test_layout_survives_random_order_and_jitter():
    img, tiles = layout("3m 4m~ 5m | 7p 7p~ 7p", "1s 2s 3s 9s 9s 5p 5p | 5p")
    r = np.random.default_rng(7)
    jittered = [dataclasses.replace(t, box=tuple(v + float(r.normal(0, 2)) for v in t.box)) for t in tiles]
    r.shuffle(jittered)
    a = assemble(jittered)
    assert a.problems == ()
    assert set(a.melds) == {"[345m,2]", "[777p,2]"}
    assert parse_hand(a.hand).win_tile == 25


def test_exposed_set_without_sideways_tile_only_when_the_count_needs_it():
    # a kong set apart with no sideways tile: the count (a kong counts as 3) says it is a meld
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 7s 9s 9s | W W W W | 9s")
    a = assemble(tiles)
    assert a.melds == ("[WWWW,1]",) and a.hand is not None
    assert any("no tile is sideways" in n for n in a.notes)
    parse_hand(a.hand)
    # a concealed hand laid in two parts is still one concealed hand
    _, tiles = layout("1m 2m 3m 4p 5p 6p | 7s 8s 9s E E E N | N")
    a = assemble(tiles)
    assert a.melds == () and a.hand == "123m456p789sEEEN" + "N"


def test_empty_input():
    a = assemble([])
    assert a.hand is None and a.problems


def test_a_picture_turned_a_quarter_is_not_guessed():
    # the demo's hand with the picture turned: each tile sideways, one above the other
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 8s 9s E E E N | N")
    turned = [dataclasses.replace(t, box=(t.box[1], 1000 - t.box[2], t.box[3], 1000 - t.box[0]),
                                  sideways=not t.sideways) for t in tiles]
    a = assemble(turned)
    assert a.hand is None and any("turned a quarter" in p for p in a.problems), a.problems


def test_many_tiles_apart_one_by_one_give_no_winning_tile():
    _, tiles = layout("1m | 2m | 3m | 4p 5p 6p 7s 8s 9s E E E N | N")
    a = assemble(tiles)
    assert a.hand is None and any("4 tiles lie apart, one by one" in p for p in a.problems), a.problems


def _overlaps(box, target) -> float:
    """Share of ``target`` that ``box`` covers."""
    ix = max(0.0, min(box[2], target[2]) - max(box[0], target[0]))
    iy = max(0.0, min(box[3], target[3]) - max(box[1], target[1]))
    return ix * iy / ((target[2] - target[0]) * (target[3] - target[1]))


def test_a_tile_missing_from_the_concealed_row_is_placed_by_a_gap():
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 8s 9s E E E N | N")
    missing = tiles.pop(4)  # 5p: the detector missed it, leaving a tile's space in the row
    a = assemble(tiles)
    assert a.hand is None
    row_gaps = [g for g in a.gaps if g.kind == "row-gap"]
    assert row_gaps, a.gaps
    assert max(_overlaps(g.box, missing.box) for g in row_gaps) > 0.5
    assert any("short" in n for n in a.notes)
    assert a.gaps[0].to_dict()["kind"] in ("row-gap", "meld-of-two")


def test_a_declared_set_of_two_is_a_gap_on_both_sides():
    _, tiles = layout("3m 4m~ 5m | 7p 7p~ 7p", "1s 1s 9s 9s 2s 2s | 9s")
    missing = tiles.pop(2)  # the 5m of the claimed chow
    a = assemble(tiles)
    assert a.hand is None
    twos = [g for g in a.gaps if g.kind == "meld-of-two"]
    assert len(twos) == 1
    assert _overlaps(twos[0].box, missing.box) > 0.9


def test_a_whole_hand_has_no_gap_and_no_hand_is_not_searched():
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 8s 9s E E E N | N")
    assert assemble(tiles).gaps == ()
    # five tiles are no hand short of one: no gap is guessed
    _, few = layout("1m 2m | 5p 6p | 9s")
    assert assemble(few).gaps == ()


# ---- hands of the other rule systems (issue #20): size, tile set and flowers from the system ----

def test_a_taiwan_hand_has_17_tiles_and_its_flowers_written_in_it():
    # seed 004 台湾16张: five sets and a pair, 16 + 1 tiles; flowers score and are written in the hand
    _, tiles = layout("1f 5f", "1m 2m 3m 4m 5m 6m 7m 8m 9m 2p 3p 4p 5s 5s 5s 8s | 8s")
    a = assemble(tiles, rules="taiwan")
    assert a.problems == () and a.flowers == ("1f", "5f")
    assert a.hand == "1f5f123456789m234p5558s" + "8s"
    from scoring import systems
    assert systems.score("taiwan", a.hand).legal
    # the same layout read as MCR is 3 tiles too many (14 in all)
    assert assemble(tiles).hand is None and any("14" in p for p in assemble(tiles).problems)


def test_a_taiwan_hand_with_claimed_sets_counts_its_melds():
    _, tiles = layout("2p 3p~ 4p | 6s 6s~ 6s", "1m 2m 3m 4m 5m 6m 7m 8m 9m 5s | 5s")
    a = assemble(tiles, rules="taiwan")
    assert a.problems == () and set(a.melds) == {"[234p,2]", "[666s,2]"}
    assert a.hand == "[234p,2][666s,2]123456789m5s" + "5s"


def test_a_14_tile_hand_is_short_for_taiwan_and_the_count_says_17():
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 8s 9s E E E N | N")
    a = assemble(tiles, rules="taiwan")
    assert a.hand is None and any("17" in p for p in a.problems), a.problems


def test_an_honour_in_a_changsha_photo_is_named():
    # seed 004 长沙麻将: 108 tiles, suits only
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 8s 9s E E E N | N")
    a = assemble(tiles, rules="changsha")
    assert a.hand is None and a.problems[0].startswith("E, N: not tile(s) of changsha hands (it plays 108")
    _, tiles = layout("1m 1m 1m 2p 3p 4p 5s 6s 7s 8s 8s 8s 2m | 2m")
    assert assemble(tiles, rules="changsha").hand == "1112m234p567888s" + "2m"


def test_a_flower_in_a_riichi_photo_is_named_and_red_fives_are_noted():
    _, tiles = layout("1f", "1m 2m 3m 4p 5p 6p 7s 8s 9s 2s 2s 2s 5m | 5m")
    a = assemble(tiles, rules="riichi")
    assert a.hand is None and a.problems[0].startswith("1f: not tile(s) of riichi hands")
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 8s 9s 2s 2s 2s 5m | 5m")
    a = assemble(tiles, rules="riichi")
    assert a.problems == () and a.hand == "1235m456p222789s" + "5m"
    assert any("red fives are read as plain fives" in n for n in a.notes)
    _, tiles = layout("1m 2m 3m 4p 4p 4p 7s 8s 9s 2s 2s 2s 1m | 1m")  # no five: nothing to say
    assert not any("red five" in n for n in assemble(tiles, rules="riichi").notes)


def test_fuzhou_takes_the_honours_as_flowers_and_reads_14_or_17_tiles():
    # docs/rules/fuzhou.md: the honours and the 8 flowers are flowers; 14 tiles (the seed) or 17 (16-tile game)
    _, tiles = layout("E C 2f", "1m 2m 3m 4p 5p 6p 7s 8s 9s 2s 2s 2s 5m | 5m")
    a = assemble(tiles, rules="fuzhou")
    assert a.problems == () and set(a.flowers) == {"E", "C", "2f"}
    assert a.hand == "2fCE1235m456p222789s" + "5m"
    _, tiles = layout("N", "1m 2m 3m 4m 5m 6m 7m 8m 9m 2p 3p 4p 5s 5s 5s 8s | 8s")
    a = assemble(tiles, rules="fuzhou")
    assert a.problems == () and a.hand == "N123456789m234p5558s" + "8s"


def test_the_classic_and_northern_rules_read_14_tiles_without_flowers():
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 8s 9s E E E N | N")
    for rules in ("classic", "northern", "mcr-1998"):
        assert assemble(tiles, rules=rules).hand == "123m456p789sEEEN" + "N"
    _, tiles = layout("3f", "1m 2m 3m 4p 5p 6p 7s 8s 9s E E E N | N")
    assert assemble(tiles, rules="classic").problems[0].startswith("3f: not tile(s) of classic hands")


def test_unknown_rules_are_refused_with_the_list():
    from scoring.systems import RulesError
    _, tiles = layout("1m 2m 3m 4p 5p 6p 7s 8s 9s E E E N | N")
    with pytest.raises(RulesError, match="allowed are mcr, mcr-1998, riichi"):
        assemble(tiles, rules="klingon")


# issue 21: the unread-area check (vision.assemble.unread_areas). A read row of tiles 45 x 60 px
# (long side 60); weak boxes (x1, y1, x2, y2, score) of the detector below its threshold.
def _row_of(n: int = 5) -> list[DetectedTile]:
    return [DetectedTile("1m", (100.0 + 50 * i, 400.0, 145.0 + 50 * i, 460.0), 0.99, False, 0.9) for i in range(n)]


def _weak(x: float, y: float, score: float = 0.15) -> tuple:
    return (x, y, x + 45.0, y + 60.0, score)


def test_a_cluster_of_weak_boxes_no_tile_covers_is_one_unread_area():
    from vision.assemble import UNREAD_MIN, unread_areas
    # a pile: eight weak boxes a tile apart, away from the read row
    assert UNREAD_MIN <= 8
    pile = [_weak(300 + 50 * (i % 4), 100 + 65 * (i // 4)) for i in range(8)]
    areas = unread_areas(pile, _row_of())
    assert len(areas) == 1 and areas[0].kind == "unread"
    assert areas[0].box == (300.0, 100.0, 495.0, 225.0)  # the cluster's extent
    assert areas[0].to_dict() == {"box": [300, 100, 495, 225], "kind": "unread"}
    # two piles far apart: two areas, the larger first
    other = [_weak(20 + 50 * i, 600) for i in range(UNREAD_MIN)]
    assert [a.box for a in unread_areas(pile + other, _row_of())] == \
        [(300.0, 100.0, 495.0, 225.0), (20.0, 600.0, 65.0 + 50 * (UNREAD_MIN - 1), 660.0)]


def test_scattered_weak_boxes_and_weak_boxes_on_read_tiles_give_no_area():
    from vision.assemble import UNREAD_MIN, unread_areas
    row = _row_of()
    # single weak boxes far apart (a reflection, a rack's corner): noise
    scattered = [_weak(20 + 300 * i, 50 + 200 * (i % 2)) for i in range(4)]
    assert unread_areas(scattered, row) == []
    # weak boxes on the read tiles (a second box on a tile, a tile's side under it): not unread
    under = [(t.box[0] + 5, t.box[1] + 10, t.box[2] + 5, t.box[3] + 10, 0.2) for t in row]
    assert unread_areas(under, row) == []
    # too few boxes together, boxes far larger than a tile (a rack, a leg), or scored under the floor
    assert unread_areas([_weak(300 + 50 * i, 100) for i in range(UNREAD_MIN - 1)], row) == []
    assert unread_areas([(300 + 50 * i, 100, 500 + 50 * i, 300, 0.2) for i in range(UNREAD_MIN + 2)], row) == []
    assert unread_areas([_weak(300 + 50 * i, 100, 0.01) for i in range(UNREAD_MIN + 2)], row) == []
    assert unread_areas([], row) == []


def test_unread_areas_without_any_tile_read_take_the_weak_boxes_size():
    from vision.assemble import UNREAD_MIN, unread_areas
    pile = [_weak(300 + 50 * i, 100) for i in range(UNREAD_MIN)]
    assert len(unread_areas(pile, [])) == 1

