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
