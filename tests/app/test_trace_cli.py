"""``mjtable cycle --record`` and ``mjtable diagnose --trace [--json]`` (issue #16 section 4)."""

from __future__ import annotations

import json

import pytest

from cli_support import run


def test_diagnose_of_a_recorded_run_prints_the_live_diagnosis(capsys, tmp_path) -> None:
    trace = tmp_path / "run.jsonl"
    code, out, _ = run(["diagnose", "--sim", "--seed", "4", "--fault", "lift-short:E", "--fault", "lift-short:W",
                        "--json", "--record", str(trace)], capsys)
    live = json.loads(out)
    assert code == 0 and live["diagnosis"]["code"] == "E21"
    code, out, _ = run(["diagnose", "--trace", str(trace), "--json"], capsys)
    got = json.loads(out)
    assert code == 0 and got["trace"] == str(trace)
    assert {k: got[k] for k in ("cycles", "diagnosis", "diagnoses")} == \
        {k: live[k] for k in ("cycles", "diagnosis", "diagnoses")}
    assert got["replay"]["divergence"] is None and got["replay"]["ends"] is None
    assert got["replay"]["commands_checked"] > 5
    code, out, _ = run(["diagnose", "--trace", str(trace)], capsys)
    assert code == 0 and "FAULT E21" in out and "故障 E21" in out and "recorded commands" in out


def test_cycle_record_writes_a_trace_with_its_header(capsys, tmp_path) -> None:
    trace = tmp_path / "clean.jsonl"
    code, out, _ = run(["cycle", "--sim", "--seed", "5", "--record", str(trace), "--json"], capsys)
    assert code == 0 and json.loads(out)["ok"]
    lines = trace.read_text().splitlines()
    head = json.loads(lines[0])
    assert head["mjtable_trace"] == 1 and head["tile_count"] == 136 and head["backend"] == "sim"
    assert head["software"].startswith("mjtable ") and head["profile"]["timing"]["lift_up_s"] > 0
    assert json.loads(lines[-1])["op"] == "end"
    code, out, _ = run(["diagnose", "--trace", str(trace)], capsys)
    assert code == 1 and "No fault in the trace." in out and "1 cycle(s)" in out


def test_a_cut_off_trace_says_where_it_ends(capsys, tmp_path) -> None:
    trace = tmp_path / "run.jsonl"
    run(["cycle", "--sim", "--seed", "5", "--record", str(trace), "--json"], capsys)
    lines = trace.read_text().splitlines(keepends=True)
    k = next(i for i, line in enumerate(lines) if '"command":"RollDice"' in line) - 40  # lifting
    trace.write_text("".join(lines[:k]) + lines[k][:20])
    code, out, _ = run(["diagnose", "--trace", str(trace), "--json"], capsys)
    ends = json.loads(out)["replay"]["ends"]
    assert code == 1 and ends["cut_line"] == k + 1 and ends["phase"] == "lifting"
    code, out, _ = run(["diagnose", "--trace", str(trace)], capsys)
    assert f"line {k}" in out and "mid-cycle in phase lifting" in out


@pytest.mark.parametrize("argv_extra, text, words", [
    ([], '{"mjtable_trace": 1, "profile": {}, "tile_count": 136, "backend": "b", "software": "s"}\n'
         '{"event": "SensorChanged", "sensor": "LIFT_TOP", "side": "E", "value": 1}\n',
     'bad.jsonl:2: expected "t" (machine time, seconds) in a sensor event'),
    ([], "", "bad.jsonl:1: expected the header"),
    (["--fault", "lift-short:E"], "", "leave out --fault"),
])
def test_a_bad_trace_is_one_line(capsys, tmp_path, argv_extra, text, words) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text(text)
    code, out, err = run(["diagnose", "--trace", str(p), *argv_extra], capsys)
    assert code == 1 and not out and words in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_missing_trace_file_is_one_line(capsys, tmp_path) -> None:
    code, _, err = run(["diagnose", "--trace", str(tmp_path / "nope.jsonl")], capsys)
    assert code == 1 and "nope.jsonl:0: cannot read the trace" in err and err.count("\n") == 1
    code, _, err = run(["cycle", "--sim", "--record", str(tmp_path / "no" / "dir.jsonl")], capsys)
    assert code == 1 and "--record" in err and err.count("\n") == 1


def test_selftest_record_and_diagnose_trace_give_the_live_verdicts(capsys, tmp_path) -> None:
    trace = tmp_path / "selftest.jsonl"
    code, out, _ = run(["selftest", "--sim", "--seed", "3", "--fault", "feeder-wire-loose:S", "--json",
                        "--record", str(trace)], capsys)
    live = json.loads(out)
    assert code == 1 and [p["code"] for p in live["parts"] if not p["passed"]] == ["E31"]
    head = json.loads(trace.read_text().splitlines()[0])
    assert head["run"] == "selftest" and "jam" in head["fitted"]
    assert json.loads(trace.read_text().splitlines()[-1])["op"] == "end"
    code, out, _ = run(["diagnose", "--trace", str(trace), "--json"], capsys)
    got = json.loads(out)
    assert code == 0 and got["run"] == "selftest" and got["trace"] == str(trace)
    assert {k: got[k] for k in ("passed", "complete", "parts", "steps")} == live
    assert got["diagnosis"]["code"] == "E31" and got["diagnosis"]["side"] == "S" and len(got["diagnoses"]) == 1
    assert got["replay"]["divergence"] is None and got["replay"]["ends"] is None and got["replay"]["aborted"] is None
    code, out, _ = run(["diagnose", "--trace", str(trace)], capsys)
    assert code == 0 and "a self-test, sim backend" in out and "[E31 feeder-no-motion]" in out
    assert "recorded commands" in out


def test_a_clean_selftest_trace_has_no_diagnosis(capsys, tmp_path) -> None:
    trace = tmp_path / "clean.jsonl"
    code, _, _ = run(["selftest", "--sim", "--seed", "3", "--record", str(trace)], capsys)
    assert code == 0
    code, out, _ = run(["diagnose", "--trace", str(trace)], capsys)
    assert code == 1 and "self-test passed" in out
