"""A self-test recorded into a trace and replayed (issue #16 section 4, for the self-test): the replay
runs the self-test's own code (controller.selftest.run_selftest) over the recorded commands and events
and gives the live run's report, part for part and step for step."""

from __future__ import annotations

import io

import pytest

import hardware
from controller.replay import is_selftest, replay_selftest
from controller.selftest import SelfTestAborted, run_selftest, script
from controller.tracing import RecordingBackend
from hardware.errors import HardwareError
from hardware.sim.faults import INJECTABLE
from hardware.trace import TraceWriter, make_header, parse_trace
from hardware.vocabulary import Outcome

MCU_SPEED = 4.0  # half tests/controller/test_selftest.py's: the live mcu run keeps up on a loaded machine

#: every kind the simulated machine takes on the sim backend, on every side it takes
SIM_CASES = [None] + [k if not INJECTABLE[k].sides else f"{k}:{s}"
                      for k in INJECTABLE if "sim" in INJECTABLE[k].backends
                      for s in ("ESWN" if INJECTABLE[k].sides else "-")]


def record(kind: str = "sim", faults=(), seed: int = 5, cancel=None, end: bool = True):
    """Run the self-test recorded (``cancel(backend)``: the operator's stop); returns (live report or the SelfTestAborted, trace text)."""
    b = hardware.open_backend(kind, seed=seed, faults=list(faults), speed=MCU_SPEED)
    out = io.StringIO()
    try:
        w = TraceWriter.to_file(make_header(b.profile, 136, b.kind, run="selftest", fitted=sorted(b.fitted)), out)
        target = RecordingBackend(b, w)
        try:
            live = run_selftest(target, cancel=None if cancel is None else lambda: cancel(b))
        except (SelfTestAborted, HardwareError) as e:  # a link fault; a wait that timed out (a dead line)
            live = e
        if end:
            w.note(b.now(), "end")
        # (a dead line: the board stops its motors itself, within its heartbeat window)
        assert b.model.running() == {} or "link-broken" in faults
    finally:
        b.close()
    return live, out.getvalue()


def replayed(text: str):
    trace = parse_trace(text.splitlines(keepends=True), "selftest.jsonl")
    assert is_selftest(trace)
    return replay_selftest(trace)


@pytest.mark.parametrize("fault", SIM_CASES)
def test_every_fault_kind_on_every_side_replays_to_the_live_report(fault):
    live, text = record(faults=[fault] if fault else [])
    r = replayed(text)
    assert r.divergence is None and r.ends is None and r.aborted is None
    assert r.report.to_dict() == live.to_dict()  # every part, its evidence and code; every step
    assert r.commands_checked == text.count('"command":"') - text.count('"event":"MotionDone"')
    if fault is None:
        assert live.passed
    elif INJECTABLE[fault.split(":")[0]].sides and fault.split(":")[0] not in ("lift-slow",):
        assert not live.passed  # the matrix is not one of passing runs only


@pytest.mark.parametrize("fault", [None, "lift-short:E", "feeder-jammed:N", "centre-lift-stuck"])
def test_gpio_self_test_replays_with_its_fitted_parts(fault):
    live, text = record("gpio", faults=[fault] if fault else [])
    r = replayed(text)
    assert r.report.to_dict() == live.to_dict() and r.divergence is None
    assert "jam sensor / disc outlet" not in {p.part_en for p in r.report.parts}  # not fitted on gpio


@pytest.mark.parametrize("fault", ["lift-short:S", "mcu-reset", "link-broken"])
def test_mcu_self_test_replays(fault):
    """On the microcontroller's link: a part fault, and the link's own faults (the self-test aborts on
    a reset or a lost link, recorded and replayed alike; or a dead line found by a wait that times
    out instead, which of the two depends on the timing)."""
    live, text = record("mcu", faults=[fault], end=False)
    r = replayed(text)
    assert r.divergence is None
    if isinstance(live, SelfTestAborted):
        assert r.aborted == str(live) and fault in ("mcu-reset", "link-broken")  # link-broken: BackendLost
    elif isinstance(live, HardwareError):
        assert fault == "link-broken" and r.aborted.startswith(f"no report in time: {str(live).split(' (')[0]}")
    else:
        assert r.report.to_dict() == live.to_dict() and r.aborted is None
        assert fault == "lift-short:S" and [p.code for p in live.failed] == ["E21"]


def test_steps_list_their_expected_transitions():
    live, _ = record(faults=["lift-short:W"])
    steps = {s["step"]: s for s in live.to_dict()["steps"]}
    assert list(steps)[:3] == ["clear", "disc", "feeder E"]
    w_up = steps["lift W up"]
    assert w_up["command"] == {"command": "Lift", "side": "W", "up": True, "deadline_ms": 3000}
    assert w_up["result"] == Outcome.DEADLINE.name and w_up["deadline_s"] == 3.0
    assert w_up["expect"] == [{"transition": "LIFT_BOTTOM:W -> 0", "seen": True},
                              {"transition": "LIFT_TOP:W -> 1", "seen": False},
                              {"transition": "motion done COMPLETED", "seen": False}]
    assert all(e["seen"] for e in steps["lift E up"]["expect"])
    # every step of the script ran on a machine whose lifts all move
    assert set(steps) == {s.name for s in script(hardware.load_profile())}


def test_a_cut_off_self_test_trace_is_judged_as_far_as_it_goes():
    live, text = record(faults=["disc-stall"])
    lines = text.splitlines(keepends=True)
    k = next(i for i, line in enumerate(lines) if '"command":"Lift"' in line)  # the lifts have not run
    r = replayed("".join(lines[:k]) + lines[k][:15])
    assert r.ends is not None and r.ends["cut_line"] == k + 1 and "mid-self-test" in r.ends["text"]
    done = r.report.to_dict()["parts"]
    assert done == live.to_dict()["parts"][:len(done)] and len(done) == 20  # through the jam sensor
    assert [p.code for p in r.report.failed] == ["E51"]


def test_another_command_than_the_recorded_one_is_a_divergence():
    _, text = record()
    assert text.count('"spin_ms":1200') == 1  # the RollDice command
    r = replayed(text.replace('"spin_ms":1200', '"spin_ms":999'))
    assert r.divergence is not None and r.divergence.recorded["spin_ms"] == 999
    assert r.divergence.derived["spin_ms"] == 1200 and "commands diverge" in r.divergence.describe()
    assert len(r.report.parts) == 25  # every part but the dice


def test_the_operators_stop_replays_as_the_same_abort():
    live, text = record(cancel=lambda b: b.now() > 10.0, end=False)
    assert isinstance(live, SelfTestAborted) and "stopped by the operator" in str(live)
    r = replayed(text)
    assert r.aborted == str(live) and r.ends is None and r.divergence is None
    assert 0 < len(r.report.parts) < 26 and not r.report.passed


def test_a_trace_cut_inside_a_timed_window_leaves_that_part_unjudged():
    """The disc is judged from what its 1 s spin recorded: a recording that stops inside that
    window holds none of its pulses, and must not read as a stalled disc (E51)."""
    live, text = record()
    lines = text.splitlines(keepends=True)
    k = next(i for i, line in enumerate(lines) if '"command":"StartShuffle"' in line)
    r = replayed("".join(lines[:k + 2]) + lines[k + 2][:15])  # the command, its reply, then cut
    assert r.ends is not None and "mid-self-test" in r.ends["text"]
    assert not r.report.failed and live.passed
    assert "shuffle disc" not in {p.part_en for p in r.report.parts}
    # a report of the parts before the cut is no pass: it says the rest were not reached
    assert not r.report.passed and r.report.to_dict()["complete"] is False
    n = len(r.report.parts)
    assert r.report.render().splitlines()[-1].startswith(f"self-test stopped short: the {n} parts judged passed")
    assert "self-test passed" not in r.report.render()
