"""The mjtable command line: score, score --batch, fans, demo; errors are one line, never a traceback."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import run_batch
from cli_support import run

HAND = "123m456m789m234p5s5s"


def test_score_prints_the_breakdown(capsys) -> None:
    code, out, err = run(["score", "[EEE,1][SSSS,1]55pWWWNNN", "--self-drawn"], capsys)
    assert code == 0 and not err
    assert "大四喜" in out and "Big Four Winds" in out and "Total  98 points" in out
    assert "each of the three others pays 8 + 98 = 106" in out


def test_score_json(capsys) -> None:
    code, out, _ = run(["score", HAND, "--seat-wind", "S", "--flowers", "2", "--json"], capsys)
    data = json.loads(out)
    assert code == 0 and data["legal"] and data["total"] == 23
    assert {f["number"] for f in data["fans"]} >= {28, 62, 63, 79, 81}
    assert data["payments"] == {"self_drawn": False, "from_discarder": 31, "from_each_other": 8,
                                "winner_receives": 47}


@pytest.mark.parametrize("argv, words", [
    (["score", "11111m234m567m888m"], "fifth-tile: 1m appears 5 times"),
    (["score", "123m456x"], "syntax: unexpected 'x' at position 7"),
    (["score", HAND, "--robbing-kong", "--self-drawn"], "contradictory-flags"),
    (["score", "--batch", "/nonexistent/hands.jsonl"], "cannot read batch file"),
])
def test_errors_are_one_line_exit_1(capsys, argv: list[str], words: str) -> None:
    code, out, err = run(argv, capsys)
    assert code == 1 and not out
    assert words in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("argv, words", [
    (["score", HAND, "--seat-wind", "X"], "'X' is not a wind"),
    (["score", HAND, "--flowers", "9"], "give 0-8"),
    (["score", HAND, "--rules", "nosuch"], "invalid choice"),
    (["score"], "give a HAND"),
    (["score", "--batch", "-", "--self-drawn"], "apply only to a single HAND"),
    (["score", HAND, "--batch", "x"], "either a HAND or --batch"),
])
def test_usage_errors_are_one_line_exit_2(capsys, argv: list[str], words: str) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2 and words in err and err.count("\n") == 1


def test_winds_accept_the_same_spellings_as_the_api(capsys) -> None:
    code, out, _ = run(["score", "[NNN,1]123m456m789m5s5s", "--seat-wind", "north", "--json"], capsys)
    assert code == 0 and 61 in {f["number"] for f in json.loads(out)["fans"]}


def test_batch_keeps_order_and_goes_on_after_bad_lines() -> None:
    lines = [
        json.dumps({"id": "a", "hand": HAND, "self_drawn": True}).encode(),
        b"\xff\xfe not utf-8",
        b"",
        b'{"id": NaN, "hand": "x"}',
        b'{"id": 1, "id": 2, "hand": "' + HAND.encode() + b'"}',
        b"[" * 50_000 + b"]" * 50_000,
        b'{"flowers": ' + b"9" * 5000 + b', "hand": "' + HAND.encode() + b'"}',
        json.dumps({"id": "typo", "hand": HAND, "self_drawm": True}).encode(),
        json.dumps({"id": "sup", "hand": "[999s\u00b3]123m456m789m5s5s"}).encode(),
        json.dumps({"id": "z", "hand": HAND, "rules": "mcr-1998"}).encode(),
    ]
    out = io.StringIO()
    failed = run_batch(lines, out)
    rows = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [r["id"] for r in rows] == ["a", None, None, None, None, None, "typo", "sup", "z"]
    assert [r["ok"] for r in rows] == [True] + [False] * 7 + [True]
    assert failed == 7
    assert "not UTF-8" in rows[1]["error"]["message"]
    assert "NaN" in rows[2]["error"]["message"]
    assert "twice" in rows[3]["error"]["message"]
    assert "self_drawm" in rows[6]["error"]["message"]


def test_batch_accepts_the_rulebook_file_and_a_bom(tmp_path: Path) -> None:
    data = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "mcr" / "rulebook_examples.jsonl"
    f = tmp_path / "in.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + data.read_bytes())
    r = subprocess.run([sys.executable, "-m", "app", "score", "--batch", str(f)],
                       capture_output=True, text=True)
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert r.returncode == 0 and len(rows) == 132 and all(x["ok"] for x in rows)
    assert rows[0]["id"] == "rulebook-000"


def test_fans_and_demo(capsys, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MJTABLE_STATE_DIR", str(tmp_path))
    code, out, _ = run(["fans", "--json"], capsys)
    table = json.loads(out)["fans"]
    assert code == 0 and len(table) == 82 and table[0]["name_zh"] == "大四喜"
    code, out, _ = run(["demo", "--speed", "0"], capsys)
    assert code == 0 and "walls-up" in out and "Dice:" in out and "Big Four Winds" in out
    assert "score-photo demo/table_hand.jpg" in out and "Mixed Straight" in out  # the photo recognised and scored
