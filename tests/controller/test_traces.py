"""Recorded traces (issue #16 section 4): a live run's diagnosis and the diagnosis of its trace are the
same, for every injectable fault; a clean trace gives none; traces that are not valid, or cut off."""

from __future__ import annotations

import io
import json

import pytest

import hardware
from controller import cycle as CY
from controller.faults import BY_KIND
from controller.replay import findings, replay
from controller.runtime import TableRuntime
from hardware.sim.faults import INJECTABLE
from hardware.trace import TraceError, TraceWriter, make_header, parse_trace

SIDES = "ESWN"
DICE = (3, 4, 2, 5)


def record(kind: str, faults=(), seed: int = 11, max_cycles: int = 6, gear: int = 136):
    """Run cycles on a simulated ``kind`` table until a diagnosis (as ``mjtable diagnose`` does),
    recording the trace. Returns (final table, cycles run, trace lines)."""
    # the simulated microcontroller runs in real time x speed: 6x, as the controller's other mcu tests
    # (at 50x, under load, a lift's limit edges arrive too late and the live run itself is wrong)
    b = hardware.open_backend(kind, seed=seed, faults=list(faults), speed=6 if kind == "mcu" else 1.0)
    buf = io.StringIO()
    try:
        s = CY.Settings.from_profile(b.profile, gear)
        w = TraceWriter.to_file(make_header(b.profile, gear, b.kind, seed=seed, faults=list(faults)), buf)
        rt = TableRuntime(b, s, dice=lambda: DICE, trace=w)
        for n in range(1, max_cycles + 1):
            t = rt.run_cycle()
            if findings(t):
                break
        w.note(b.now(), "end")
    finally:
        b.close()
    return t, n, buf.getvalue().splitlines(keepends=True)


def same_as_replay(spec: str | None, kind: str = "sim") -> list:
    live, cycles, lines = record(kind, [spec] if spec else [])
    r = replay(parse_trace(lines, "live.jsonl"))
    assert r.divergence is None, r.divergence.describe()
    assert r.ends is None and r.cycles == cycles
    assert r.commands_checked >= 5  # homing alone sends eight
    got = [d.to_dict() for d in r.diagnoses]
    assert got == [d.to_dict() for d in findings(live)], spec
    assert r.table.phase is live.phase
    return got


SIM_CASES = [f"{k.name}:{side}" if k.sides else k.name
             for k in INJECTABLE.values() if "sim" in k.backends for side in (SIDES if k.sides else [None])]
MCU_ONLY = [k.name for k in INJECTABLE.values() if "sim" not in k.backends]


def test_the_cases_cover_every_injectable_kind() -> None:
    assert {c.split(":")[0] for c in SIM_CASES} | set(MCU_ONLY) == set(INJECTABLE)


@pytest.mark.parametrize("spec", SIM_CASES)
def test_live_and_replayed_diagnosis_are_the_same(spec: str) -> None:
    got = same_as_replay(spec)
    kind, _, side = spec.partition(":")
    assert got and got[0]["code"] == BY_KIND[kind].code or BY_KIND[kind].code in [d["code"] for d in got]
    if side:
        assert BY_KIND[kind].code in [d["code"] for d in got if d["side"] == side]


@pytest.mark.parametrize("spec", MCU_ONLY)
def test_live_and_replayed_diagnosis_are_the_same_on_the_mcu_backend(spec: str) -> None:
    got = same_as_replay(spec, "mcu")
    assert BY_KIND[spec.split(":")[0]].code in [d["code"] for d in got]


def test_gpio_traces_replay_the_same() -> None:
    got = same_as_replay("feeder-wire-loose:W", "gpio")
    assert got[0]["code"] == "E31"


def test_a_clean_trace_gives_no_fault() -> None:
    live, cycles, lines = record("sim", [], max_cycles=3)
    assert cycles == 3 and not findings(live)
    r = replay(parse_trace(lines))
    assert r.diagnoses == () and r.table.phase is CY.Phase.WALLS_UP and r.table.cycles == 3
    assert r.divergence is None and r.ends is None


def test_a_changed_command_is_reported_where_it_diverges() -> None:
    _, _, lines = record("sim", ["lift-short:W"])
    n = next(i for i, line in enumerate(lines) if '"command":"RollDice"' in line or '"command":"FeedStacks"' in line)
    rec = json.loads(lines[n])
    rec["deadline_ms"] += 1
    lines[n] = json.dumps(rec) + "\n"
    r = replay(parse_trace(lines, "t.jsonl"))
    assert r.divergence is not None and r.divergence.line == n + 1
    assert "line" in r.divergence.describe() and r.diagnoses[0].code == "E21"


def test_a_trace_cut_off_mid_cycle_is_diagnosed_as_far_as_it_goes() -> None:
    _, _, lines = record("sim", ["feeder-jammed:N"])
    # cut in the build: after the first stacks were counted, the last line broken mid-way
    k = next(i for i, line in enumerate(lines) if '"StacksCounted"' in line and '"count":2' in line)
    cut = lines[:k] + [lines[k][: len(lines[k]) // 2]]
    r = replay(parse_trace(cut, "cut.jsonl"))
    assert r.ends is not None and r.ends["phase"] == "building" and r.ends["cut_line"] == k + 1
    assert r.ends["line"] == k and "mid-cycle in phase building" in r.ends["text"]
    assert r.diagnoses == () and r.divergence is None
    # cut after the fault: the diagnosis is there, and the trace still says it has no end
    whole = replay(parse_trace(lines))
    end = next(i for i, line in enumerate(lines) if '"command":"StopAll"' in line)
    r = replay(parse_trace(lines[:end + 1]))
    assert [d.code for d in r.diagnoses] == [d.code for d in whole.diagnoses] == ["E32"] and r.ends is None


HEADER = '{"mjtable_trace": 1, "profile": {"name": "default"}, "tile_count": 136, "backend": "x", "software": "y"}\n'


@pytest.mark.parametrize("lines, line, words", [
    ([], 1, "the trace is empty"),
    (['{"a": 1}\n'], 1, '"mjtable_trace"'),
    (['{"mjtable_trace": 2}\n'], 1, "format version"),
    ([HEADER.replace('"tile_count": 136', '"tile_count": 140')], 1, "136, 144, 152, 108"),
    ([HEADER.replace('{"name": "default"}', '{"timing": {"lift_speed": 2}}')], 1, "lift_speed"),
    ([HEADER, '{"event": "SensorChanged", "sensor": "LIFT_TOP", "side": "E", "value": 1}\n'], 2,
     'expected "t" (machine time, seconds) in a sensor event'),
    ([HEADER, '{"t": 1, "event": "SensorChanged", "sensor": "LIFT_TOP", "side": "X", "value": 1}\n'], 2,
     '"side" to be one of E, S, W, N'),
    ([HEADER, '{"t": 1, "event": "SensorChanged", "sensor": "LIFT_TOPP", "side": "E", "value": 1}\n'], 2,
     "LIFT_TOP, LIFT_BOTTOM"),
    ([HEADER, '{"t": 1, "event": "MotionDone", "cmd_id": 1, "command": "Lift", "side": "E", "elapsed_ms": 5, '
              '"detail": 0}\n'], 2, 'expected "outcome"'),
    ([HEADER, '{"t": 1, "command": "Lift", "side": "E", "up": "yes", "deadline_ms": 5}\n'], 2, "true or false"),
    ([HEADER, '{"t": 2, "op": "tick"}\n', '{"t": 1, "op": "tick"}\n'], 3, "back in time"),
    ([HEADER, "not json\n", '{"t": 1, "op": "tick"}\n'], 2, "one JSON object per line"),
    ([HEADER, '{"t": 1}\n'], 2, '"event", "command" or "op"'),
])
def test_an_invalid_trace_is_one_line_naming_the_line(lines, line, words) -> None:
    with pytest.raises(TraceError) as e:
        parse_trace(lines, "trace.jsonl")
    msg = str(e.value)
    assert msg.startswith(f"trace.jsonl:{line}: ") and words in msg and "\n" not in msg


@pytest.mark.parametrize("record_line, words", [
    ('{"t": 0, "op": "start_cycle", "dice": [7, 1, 1, 1]}', '"dice"'),
    ('{"t": 0, "op": "fly"}', 'expected "op" to be one of'),
    ('{"t": 0, "op": "start_cycle", "dice": [1, 2, 3, 4], "readings": {"LIFT_TOP:Q": 1}}', "unknown side"),
])
def test_an_invalid_controller_record_is_named_by_the_replay(record_line, words) -> None:
    with pytest.raises(TraceError) as e:
        replay(parse_trace([HEADER, record_line + "\n"], "trace.jsonl"))
    assert str(e.value).startswith("trace.jsonl:2: ") and words in str(e.value)
