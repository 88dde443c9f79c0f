"""``mjtable rules`` and ``mjtable score --rules X``: each system's options, refused for another system."""

from __future__ import annotations

import io
import json

import pytest

from app.cli import run_batch
from test_mjtable_cli import run


def test_rules_list(capsys) -> None:
    code, out, _ = run(["rules", "--list"], capsys)
    assert code == 0 and "taiwan" in out and "hand 17 tiles" in out and "大点指位" in out
    code, out, _ = run(["rules", "--list", "--json"], capsys)
    data = {s["name"]: s for s in json.loads(out)["systems"]}
    assert data["riichi"]["tiles"] == 136 and data["taiwan"]["hand_sizes"] == [17]
    assert "dora" in [o["name"] for o in data["riichi"]["options"]]


def test_score_by_riichi_with_its_options(capsys) -> None:
    code, out, err = run(["score", "12345678s234m55p9s", "--rules", "riichi", "--riichi", "--self-drawn",
                          "--seat-wind", "S", "--dora", "1m"], capsys)
    assert code == 0 and not err
    assert "一気通貫" in out and "Total  6 han" in out and "haneman" in out and "S +12000" in out  # dora 2m: +1
    code, out, _ = run(["score", "12345678s234m55p9s", "--rules", "riichi", "--riichi", "--discarder", "N",
                        "--seat-wind", "S", "--no-open-tanyao", "--json"], capsys)
    assert json.loads(out)["payments"]["N"] == -7700  # 4 han 30 fu, non-dealer ron (EMA RCR 2016 4.3 example 2)


def test_taiwan_and_classic_print_their_items(capsys) -> None:
    code, out, _ = run(["score", "2f123m456m789m234p55s67s8s", "--rules", "taiwan", "--seat-wind", "S",
                        "--discarder", "N"], capsys)
    assert code == 0 and "正花" in out and "Total  2 tai" in out and "N -140" in out
    code, out, _ = run(["score", "123m456m789m234m5m5m", "--rules", "classic", "--self-drawn"], capsys)
    assert code == 0 and "清一色" in out and "value 160" in out


@pytest.mark.parametrize("argv, words", [
    (["score", "12345678s234m55p9s", "--rules", "riichi", "--flowers", "2"], "it belongs to mcr"),
    (["score", "123m456m789m234p5s5s", "--riichi"], "option 'riichi' is not one of mcr's"),
    (["score", "123m456m789m234p55s67s8s", "--rules", "taiwan", "--horse-hit"], "it belongs to classic"),
    (["score", "1f2345678s234m55p9s", "--rules", "riichi"], "tile-not-in-set"),
    (["score", "12345678s234m55p9s", "--rules", "taiwan"], "has 17"),
])
def test_errors_are_one_line(capsys, argv, words) -> None:
    code, out, err = run(argv, capsys)
    assert code == 1 and not out and words in err and err.count("\n") == 1


def test_mcr_output_is_unchanged_and_discarder_gives_seat_payments(capsys) -> None:
    code, out, _ = run(["score", "123m456m789m234p5s5s"], capsys)
    assert "Payments (第十条)" in out
    code, out, _ = run(["score", "123m456m789m234p5s5s", "--seat-wind", "S", "--discarder", "N"], capsys)
    assert "N -29" in out and "S +45" in out


def test_batch_lines_take_rules_and_their_options() -> None:
    lines = [json.dumps({"id": 1, "hand": "12345678s234m55p9s", "rules": "riichi", "riichi": True,
                         "self_drawn": True, "seat_wind": "S"}),
             json.dumps({"id": 2, "hand": "123m456m789m234p55s67s8s", "rules": "taiwan", "dora": "1m"}),
             json.dumps({"id": 3, "hand": "123m456m789m234p5s5s", "note": "mcr as before"})]
    out = io.StringIO()
    assert run_batch(lines, out) == 1
    a, b, c = (json.loads(x) for x in out.getvalue().splitlines())
    assert a["ok"] and a["total"] == 5 and a["unit"] == "han" and a["payments"]["S"] == 8000
    assert not b["ok"] and b["error"]["code"] == "unknown-option"
    assert c["ok"] and "fans" in c


def test_changsha_several_winners_on_one_discard(capsys) -> None:
    """通炮 (seed 004 打长沙麻将指南技巧 "通炮：即几个玩家可胡同一张牌"): each winner's hand scored as if
    alone, the discarder paying each; the same as the match records one hand per winner with one discarder."""
    from scoring import systems
    s_hand, w_hand = "123m456m789m234p5s5s", "111m333p555s777m9m9m"
    code, out, err = run(["score", "--rules", "changsha", "--win", f"S:{s_hand}", "--win", f"W={w_hand}",
                          "--discarder", "N", "--no-dealer-bonus", "--birds", "5m", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    alone = {seat: systems.score("changsha", hand, {"seat_wind": seat, "discarder": "N", "dealer_bonus": False,
                                                    "birds": "5m"})
             for seat, hand in (("S", s_hand), ("W", w_hand))}
    assert doc["discarder"] == "N" and doc["wins"] == {s: r.to_dict() for s, r in alone.items()}
    assert doc["payments"] == {k: alone["S"].payments[k] + alone["W"].payments[k] for k in "ESWN"}
    assert sum(doc["payments"].values()) == 0 and doc["payments"]["N"] < 0
    code, out, err = run(["score", "--rules", "changsha", "--win", f"S:{s_hand}", "--win", f"W:{w_hand}",
                          "--discarder", "N", "--no-dealer-bonus"], capsys)
    assert code == 0 and out.count("rules: changsha") == 2
    assert "通炮: 2 winners on N's discard; payments together (+ receives): E +0  S +1  W +6  N -7" in out


@pytest.mark.parametrize("argv, says", [
    (["--rules", "taiwan", "--win", "S:123m456m789m234p5s5s", "--discarder", "N"], "a Changsha rule"),
    (["--rules", "changsha", "--win", "S:123m456m789m234p5s5s"], "give the seat that discarded with --discarder"),
    (["--rules", "changsha", "--win", "N:123m456m789m234p5s5s", "--discarder", "N"], "none of them the discarder"),
    (["--rules", "changsha", "--win", "S:123m456m789m234p5s5s", "--win", "S:123m456m789m234p5s5s",
      "--discarder", "N"], "--win S is given twice"),
    (["--rules", "changsha", "--win", "S:123m456m789m234p5s5s", "--discarder", "N", "--self-drawn"],
     "leave out --self-drawn"),
    (["--rules", "changsha", "--win", "S:123m456m789m234p5s5s", "--win", "W:123m456m789mEEE5s5s", "--discarder", "N"],
     "tile-not-in-set: winner W: E at position 12 is an honour"),
])
def test_several_winners_bad_input_is_one_line(capsys, argv, says) -> None:
    code, out, err = run(["score", *argv], capsys)
    assert code == 1 and says in err and err.count("\n") == 1 and out == "", err


def test_several_winners_usage_errors(capsys) -> None:
    code, _, err = run(["score", "123m456m789m234p5s5s", "--rules", "changsha", "--win", "S:123m456m789m234p5s5s",
                        "--discarder", "N"], capsys)
    assert code == 2 and "not both" in err
    code, _, err = run(["score", "--rules", "changsha", "--win", "S123m", "--discarder", "N"], capsys)
    assert code == 2 and "give a winner as SEAT:HAND" in err
