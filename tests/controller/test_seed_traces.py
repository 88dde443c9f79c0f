"""Hand-written traces (tests/controller/traces/, written from the technician's answers in
../shared/seeds/002_4c2a73aa42bc09ab.txt, not by the simulator) are diagnosed right by the replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.replay import replay
from hardware.trace import parse_trace, read_trace

TRACES = sorted((Path(__file__).parent / "traces").glob("*.jsonl"))


def test_there_are_the_five_symptoms_of_the_issue_and_more() -> None:
    codes = {read_trace(p).header.extra["expect"]["code"] for p in TRACES}
    # lift bar short, sensor polarity, feeder not turning, wrong gear, missing tile (+ a jammed wheel)
    assert {"E21", "E15", "E31", "E41", "E42"} <= codes


@pytest.mark.parametrize("path", TRACES, ids=[p.stem for p in TRACES])
def test_a_hand_written_trace_is_diagnosed_right(path: Path) -> None:
    trace = read_trace(path)
    h = trace.header
    assert h.backend == "hand-written" and h.description.startswith("seed 002")
    assert "002_4c2a73aa42bc09ab.txt" in path.read_text(encoding="utf-8")  # the passage, quoted in a comment
    assert not any(r.kind == "command" for r in trace.records) and not any(
        r.kind == "op" and r.data["op"] == "tick" for r in trace.records)  # written by hand: no commands, no ticks
    r = replay(trace)
    want = h.extra["expect"]
    assert r.diagnoses, f"{path.name}: nothing diagnosed"
    d = r.diagnoses[0]
    assert (d.code, d.side) == (want["code"], want["side"]), d.observed_en
    assert len(r.diagnoses) == 1 and r.ends is None and r.divergence is None and r.cycles == 1


def test_the_judges_tell_a_short_bar_from_a_silent_top_sensor_in_a_hand_written_trace() -> None:
    """The same trace with the way down a full travel (1.6 s): the lift had reached the top and its
    sensor did not say so (E12), not a bar stopped part-way (E21)."""
    lines = (Path(__file__).parent / "traces" / "lift-bar-short-W.jsonl").read_text(encoding="utf-8").splitlines(True)
    lines = [line.replace('"elapsed_ms": 1350', '"elapsed_ms": 1600') for line in lines]
    d = replay(parse_trace(lines, "full-travel.jsonl")).diagnoses[0]
    assert (d.code, d.side) == ("E12", "W")


def test_a_hand_written_trace_cut_before_its_end_says_so() -> None:
    lines = (Path(__file__).parent / "traces" / "missing-tile-E.jsonl").read_text(encoding="utf-8").splitlines(True)
    cut = [line for line in lines if '"t": 33' not in line and '"op": "end"' not in line]
    r = replay(parse_trace(cut, "cut.jsonl"))
    assert r.diagnoses == () and r.ends["phase"] == "building" and "no end record" in r.ends["text"]


def test_the_example_of_docs_trace_md_is_diagnosed_as_it_says() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "trace.md").read_text(encoding="utf-8")
    block = doc.split("## 6. A hand-written example", 1)[1].split("```", 2)[1]
    d = replay(parse_trace(block.strip("\n").splitlines(True), "trace.md")).diagnoses[0]
    assert (d.code, d.side) == ("E15", "N")
