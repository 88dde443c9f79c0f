"""mjtable waits and mjtable shanten: text, --json in the shapes of issue 19, --seen, --batch, and
one-line errors (exit 1 for a bad hand, 2 for a misused command line)."""

from __future__ import annotations

import io
import json

import pytest

from app.cli import SHANTEN_KEYS, WAITS_KEYS, _shanten_line, _waits_line, run_batch
from test_mjtable_cli import run

READY = "123m456m789m234p5s"        # waits on 5s alone (single wait)
NINE_GATES = "1112345678999m"


def test_waits_json_shape_unseen_and_fourth_tile(capsys) -> None:
    code, out, err = run(["waits", "[EEE,1]23m456m789m55p", "--seen", "1m1m4m", "--json"], capsys)
    d = json.loads(out)
    assert code == 0 and not err and set(d) == {"hand", "shanten", "waits"} and d["shanten"] == 0
    assert [w["tile"] for w in d["waits"]] == ["1m", "4m", "7m"]
    w1 = d["waits"][0]
    assert set(w1) == {"tile", "unseen", "discard", "self_drawn"} and set(w1["discard"]) == {"total", "legal", "fans", "fan_points"}
    assert [w["unseen"] for w in d["waits"]] == [2, 2, 3]  # seen 1m1m4m; the hand holds 4m and 7m
    assert all(58 not in {f["number"] for f in w["discard"]["fans"]} for w in d["waits"])
    # three 1m seen and none in the hand: the fourth 1m is 和绝张 (fan 58) by itself
    code, out, _ = run(["waits", "[EEE,1]23m456p789p55s", "--seen", "1m1m1m", "--json"], capsys)
    w1 = json.loads(out)["waits"][0]
    assert w1["tile"] == "1m" and w1["unseen"] == 1 and 58 in {f["number"] for f in w1["discard"]["fans"]}


def test_waits_text_says_when_a_wait_may_not_win(capsys) -> None:
    code, out, _ = run(["waits", "[234s,1]345m345p67s88s"], capsys)
    assert code == 0 and "5s" in out and "8s" in out and "may not win on it (起和分)" in out
    code, out, _ = run(["waits", NINE_GATES, "--seat-wind", "S"], capsys)
    assert code == 0 and "9 wait(s)" in out and "九莲宝灯 Nine Gates 88" in out
    # flowers raise the total but not the points the minimum is counted on: the text says both
    code, out, _ = run(["waits", "[EEE,1]23m456m789m55p", "--flowers", "8"], capsys)
    line = next(x for x in out.splitlines() if x.strip().startswith("discard") and " 14 points" in x)
    assert "6 without flowers, under 8: may not win on it (起和分: flowers do not count)" in line, out
    code, out, _ = run(["waits", "[EEE,1]23m456m789m55p", "--flowers", "8", "--json"], capsys)
    w4 = json.loads(out)["waits"][1]
    assert (w4["tile"], w4["discard"]["total"], w4["discard"]["fan_points"], w4["discard"]["legal"]) == ("4m", 14, 6, False)
    # no wait reaches 8: said once, before the waits
    code, out, _ = run(["waits", "[EEE,1]456m789m55p23s"], capsys)
    assert code == 0 and out.splitlines()[1] == "  no wait reaches 8 points (起和分): the hand may not win on any of them"


def test_text_lists_tiles_in_the_order_the_hand_is_written(capsys) -> None:
    # m, p, s, honours, as the hand is printed (the JSON keeps the engine's order, documented)
    code, out, _ = run(["shanten", "123m456m789m23p5s6s"], capsys)
    assert code == 0 and "useful (有效牌): 1p 2p 3p 4p 4s 5s 6s 7s" in out, out
    code, out, _ = run(["waits", "123m456m789m55p55s"], capsys)
    assert "2 wait(s): 5p 5s" in out.splitlines()[0]
    assert [x.split()[0] for x in out.splitlines() if "unseen" in x] == ["5p", "5s"]


def test_shanten_json_13_and_14_tiles(capsys) -> None:
    code, out, _ = run(["shanten", "123m456m789m23p5s6s", "--json"], capsys)
    d = json.loads(out)
    assert code == 0 and d["shanten"] == 1 and d["discards"] == []
    assert d["by_shape"] == {"regular": 1, "seven_pairs": 6, "thirteen_orphans": 11, "honors_and_knitted": 8,
                             "knitted_straight": 5}
    assert d["useful"] == ["4s", "5s", "6s", "7s", "1p", "2p", "3p", "4p"] and d["unseen"] == 28
    code, out, _ = run(["shanten", "[123m,1]456m789m23p5s6s1p", "--seen", "6s6s", "--json"], capsys)
    d = json.loads(out)
    assert d["shanten"] == 0 and d["by_shape"]["seven_pairs"] is None
    first = d["discards"][0]
    assert set(first) == {"tile", "shanten", "useful", "unseen"}
    assert (first["tile"], first["useful"], first["unseen"]) == ("6s", ["5s"], 3)  # 5s: 3 unseen beats 6s: 1


def test_shanten_of_a_winning_hand_is_minus_one(capsys) -> None:
    code, out, _ = run(["shanten", READY + "5s"], capsys)
    assert code == 0 and "shanten -1, complete (和牌)" in out


@pytest.mark.parametrize("argv, words", [
    (["waits", READY + "5s"], "already-winning: "),
    (["waits", READY + "6s"], "tile-count: the hand has 14 tiles"),
    (["waits", "123m456m789m234p"], "tile-count: the hand has 12 tiles (a meld counting 3): waits are for a 13-tile hand"),
    (["shanten", "11111m456m789m234p"], "fifth-tile: 1m appears 5 times"),
    (["waits", READY, "--seen", "5s5s5s5s"], "fifth-tile: 5s appears 5 times"),
    (["waits", READY, "--seen", "[555s]"], "syntax: seen tiles: brackets"),
    (["waits", READY, "--seen", "zz"], "syntax: seen tiles: suit letter 'z' at position 0"),
    (["shanten", READY, "--seen", "5q"], "syntax: seen tiles: unexpected 'q' at position 1: allowed are digits with "
                                         "m/s/p/z, honors E S W N C F P\n"),  # no melds in seen tiles
    (["shanten", READY, "--seen", "1f"], "flower-in-hand: seen tiles: a flower at position 0 is not one of the seen "
                                         "tiles: leave flowers (1f-8f) out\n"),  # not "give them with --flowers"
    (["shanten", "123m456x"], "syntax: unexpected 'x' at position 7: allowed are digits with m/s/p/z, honors E S W N "
                              "C F P, and melds in [brackets]"),
    (["waits", "[123m][456m][789m][EEEE]C", "--kong-replacement", "--robbing-kong"], ""),
])
def test_bad_hands_are_one_line_exit_1(capsys, argv: list[str], words: str) -> None:
    code, out, err = run(argv, capsys)
    if not words:  # valid: kong replacement (self-drawn wins) with robbing the kong (wins on a discard);
        # the hand holds the other C, so no kong of C can be robbed
        assert code == 0 and "no such win (a kong of this tile cannot be robbed)" in out and "杠上开花" in out
        return
    assert code == 1 and not out and words in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("argv, words", [
    (["waits"], "give a HAND"),
    (["shanten", READY, "--batch", "-"], "either a HAND or --batch"),
    (["waits", "--batch", "-", "--seen", "5s"], "apply only to a single HAND"),
    (["waits", "--batch", "-", "--seat-wind", "S"], "apply only to a single HAND"),
    (["waits", READY, "--self-drawn"], "unrecognized arguments"),
])
def test_usage_errors_exit_2(capsys, argv: list[str], words: str) -> None:
    code, _, err = run(argv, capsys)
    assert code == 2 and words in err and err.count("\n") == 1


def test_batch_lines_in_order_with_errors() -> None:
    out = io.StringIO()
    failed = run_batch([json.dumps({"id": 1, "hand": READY, "seen": "5s"}).encode(), b"not json",
                        json.dumps({"id": 3, "hand": READY, "self_drawn": True}).encode(),
                        json.dumps({"id": 4, "hand": NINE_GATES, "rules": "mcr-1998", "seat_wind": "W"}).encode()],
                       out, WAITS_KEYS, _waits_line)
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    assert failed == 2 and [x["id"] for x in lines] == [1, None, 3, 4]
    assert lines[0]["ok"] and lines[0]["waits"][0]["unseen"] == 2
    assert lines[2]["error"]["code"] == "bad-value" and "self_drawn" in lines[2]["error"]["message"]
    assert lines[3]["ok"] and len(lines[3]["waits"]) == 9
    out = io.StringIO()
    failed = run_batch([json.dumps({"id": "s", "hand": READY + "6s", "seen": ["6s", "6s"]}),
                        json.dumps({"id": "t", "hand": READY, "rules": "mcr"})], out, SHANTEN_KEYS, _shanten_line)
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    assert failed == 1 and lines[0]["ok"] and lines[0]["discards"][0]["tile"] == "6s"
    assert lines[1]["error"]["code"] == "bad-value"
