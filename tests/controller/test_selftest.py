"""The technician's self-test (controller.selftest) against the simulated table: a sound
machine passes on every backend; each injectable fault a self-test can reveal fails exactly
the part(s) it concerns, with the catalogue code; no motor is left running."""

from __future__ import annotations

import json

import pytest

import hardware
from controller.faults import BY_CODE, BY_KIND
from controller.selftest import (PartResult, SelfTestAborted, SelfTestReport, run_selftest)
from firmware_bridge import catalogue as C
from firmware_bridge.host import McuReset
from firmware_bridge.messages import (ClearSafeStop, FeedStacks, Lift, MotionDone, Outcome,
                                      Side, StartShuffle, StopShuffle)
from hardware.sim.faults import INJECTABLE

MCU_SPEED = 8.0  # as tests/hardware: 16x saturates the 115200-baud link

LIMITS, LIFT, FEEDER, TILE = ("lift limit sensors at rest", "lift up/down", "feeder",
                              "tile-present sensor")
ORDER = (["emergency stop", "lid switch"] + [LIMITS] * 4 + ["shuffle disc"] + [FEEDER] * 4
         + [TILE] * 4 + [LIFT] * 4 + ["dice motor"])
SIDES = [None, None] + ["E", "S", "W", "N"] * 1 + [None] + ["E", "S", "W", "N"] * 3 + [None]


def selftest(kind: str = "sim", faults=(), seed: int = 7):
    """Run the self-test on a fresh backend; returns (report, model, backend time in s)."""
    b = hardware.open_backend(kind, seed=seed, faults=faults, speed=MCU_SPEED)
    try:
        seen: list[PartResult] = []
        report = run_selftest(b, progress=seen.append)
        assert list(report.parts) == seen  # progress reports every part, in order
        assert b.model.running() == {}, "self-test left a motor running"
        return report, b.model, b.now()
    finally:
        b.close()


def layout(report: SelfTestReport) -> list[tuple[str, str | None]]:
    return [(p.part_en, p.side) for p in report.parts]


# --------------------------------------------------------------------- a sound machine
@pytest.mark.parametrize("kind", ["sim", "gpio"])
def test_sound_machine_passes_every_part(kind):
    report, model, t = selftest(kind)
    assert layout(report) == list(zip(ORDER, SIDES))
    assert report.passed, report.render()
    assert all(p.code is None and p.evidence_en and p.evidence_zh for p in report.parts)
    assert model.lift_pos == [0.0] * 4  # every lift left down
    lifts = {p.side: p.evidence_en for p in report.parts if p.part_en == LIFT}
    assert all("up 2.00 s" in e and "down 1.60 s" in e for e in lifts.values())  # nominal
    assert t < 40  # machine seconds


def test_sound_machine_passes_on_the_mcu_backend():
    report, model, _ = selftest("mcu")
    assert report.passed, report.render()
    assert len(report.parts) == len(ORDER) and model.lift_pos == [0.0] * 4


def test_machine_can_build_walls_after_the_self_test():
    """The self-test pushes a few stacks, then raises and lowers every lift: the simulated
    table ends a cycle and the next build is full."""
    b = hardware.open_backend("sim", seed=3)
    try:
        assert run_selftest(b).passed
        b.submit(StartShuffle(b.profile.shuffle_deadline_ms()))
        ids = {b.submit(FeedStacks(s, 17, b.profile.feed_deadline_ms(17))): s for s in Side}
        done: dict = {}
        b.run_until(lambda e: isinstance(e, MotionDone) and e.cmd_id in ids
                    and done.setdefault(e.cmd_id, e) is not None and len(done) == 4, 60)
        b.submit(StopShuffle())
        b.advance(0.1)
        assert {d.outcome for d in done.values()} == {Outcome.COMPLETED}
        assert b.model.walls == [17, 17, 17, 17]
    finally:
        b.close()


# --------------------------------------------------------------------------- faults
#: kind -> (side, the parts that must fail on that side). A lift sensor that reads wrong at
#: rest also stops the lift stroke from being judged (Lift up ends at once, or Lift down runs
#: into its deadline), so both of that side's lift parts carry the sensor's code.
REVEALED = {
    "lift-top-stuck-on": ("E", {LIMITS, LIFT}),
    "lift-top-stuck-off": ("S", {LIFT}),
    "lift-bottom-stuck-on": ("W", {LIFT}),
    "lift-bottom-stuck-off": ("N", {LIMITS, LIFT}),
    "lift-sensor-reversed": ("S", {LIMITS, LIFT}),
    "lift-short": ("E", {LIFT}),
    "feeder-wire-loose": ("W", {FEEDER}),
    "feeder-jammed": ("N", {FEEDER}),
    "tile-sensor-dirty": ("E", {TILE}),
    "disc-stall": (None, {"shuffle disc"}),
    "dice-stuck": (None, {"dice motor"}),
    # a late lift (35 % over nominal) fails its stroke with E22, the limit the cycle warns at
    "lift-late": ("W", {LIFT}),
}
#: kinds a self-test cannot reveal, and why (they must not fail any part):
NOT_REVEALED = {
    # the tile set in the machine does not match the gear: shows only when a whole wall is
    # counted (E41); a self-test jogs a feeder for one stack's time
    "wrong-gear": "needs a full build",
    # one tile missing from the set: one side ends a full build half a stack short (E42)
    "missing-tile": "needs a full build",
    # a failing capacitor shows as travel times growing cycle after cycle (E23, a trend);
    # one stroke is within the deadline
    "lift-slow": "a trend over cycles",
    # link faults are not parts of the table: the link layer reports them (E61-E63); a
    # reset or a dead line during the self-test aborts it (SelfTestAborted, tested below)
    # and a noisy line only costs retransmissions. mcu backend only (real time).
    "mcu-reset": "mcu link", "link-noise": "mcu link", "link-broken": "mcu link",
}


def test_every_injectable_fault_is_classified():
    assert set(REVEALED) | set(NOT_REVEALED) == set(INJECTABLE)
    assert not set(REVEALED) & set(NOT_REVEALED)


def check_only(report: SelfTestReport, code: str, side: str | None, parts: set[str]) -> None:
    failed = {(p.part_en, p.side) for p in report.failed}
    assert failed == {(part, side) for part in parts}, report.render()
    assert {p.code for p in report.failed} == {code}
    assert not report.passed
    assert all(p.code is None for p in report.parts if p.passed)


@pytest.mark.parametrize("kind", sorted(REVEALED))
def test_fault_fails_the_right_part_with_its_code(kind):
    side, parts = REVEALED[kind]
    code = BY_KIND[kind].code
    report, model, _ = selftest(faults=[kind if side is None else f"{kind}:{side}"])
    check_only(report, code, side, parts)
    for p in report.failed:
        assert p.evidence_en and p.evidence_zh and p.fault is BY_CODE[code]
    i = "ESWN".index(side) if side else None
    if kind == "lift-bottom-stuck-on":
        # Lift down ends at once (the bottom reads active): the lift stays up, and says so
        assert model.lift_pos[i] == 1.0
        assert "left UP" in report.failed[0].evidence_en
        assert [x for j, x in enumerate(model.lift_pos) if j != i] == [0.0] * 3
    else:
        assert model.lift_pos == [0.0] * 4


def test_lift_short_on_a_second_side_tells_it_from_a_silent_top_sensor():
    short, _, _ = selftest(faults=["lift-short:W"], seed=11)
    check_only(short, "E21", "W", {LIFT})
    assert "85 %" in short.failed[0].evidence_en  # down travel vs nominal: bar stopped short
    silent, _, _ = selftest(faults=["lift-top-stuck-off:W"], seed=11)
    check_only(silent, "E12", "W", {LIFT})
    assert "100 %" in silent.failed[0].evidence_en  # full travel: the sensor is at fault


def test_two_faults_on_two_sides_are_both_reported():
    report, _, _ = selftest(faults=["feeder-wire-loose:E", "feeder-wire-loose:S"])
    assert {(p.part_en, p.side, p.code) for p in report.failed} == {
        (FEEDER, "E", "E31"), (FEEDER, "S", "E31")}


@pytest.mark.parametrize("kind", ["wrong-gear", "missing-tile", "lift-slow:N"])
def test_faults_a_self_test_cannot_reveal_fail_no_part(kind):
    report, _, _ = selftest(faults=[kind])
    assert report.passed, report.render()


def test_a_late_lift_fails_with_the_cycles_limit():
    report, _, _ = selftest(faults=["lift-late:E"])
    lift_e = next(p for p in report.parts if (p.part_en, p.side) == (LIFT, "E"))
    assert not lift_e.passed and lift_e.code == "E22"
    assert "up 2.70 s" in lift_e.evidence_en and "35 % slower than nominal" in lift_e.evidence_en


# ------------------------------------------------------------ safety and aborting
def test_emergency_stop_pressed_nothing_moves():
    b = hardware.open_backend("sim", seed=2)
    try:
        b.model.press_estop(True)
        report = run_selftest(b)
        assert b.model.lift_times == [] and b.model.changes[(C.SENSOR_DISC_PULSE, C.SIDE_NONE)] == 0  # nothing moved
    finally:
        b.close()
    by = {(p.part_en, p.side): p for p in report.parts}
    assert by[("emergency stop", None)].code == "E73"
    motion = [p for p in report.parts if p.part_en in ("shuffle disc", FEEDER, LIFT, "dice motor")]
    assert motion and all(not p.passed and p.code == "E73" for p in motion)
    assert all(p.passed for p in report.parts if p.part_en in (LIMITS, "lid switch"))


class ResetDuringLift:
    """A sim backend whose microcontroller 'restarts' as soon as a lift is started."""

    def __init__(self, b) -> None:
        self.b, self.kind, self.profile, self.model = b, b.kind, b.profile, b.model
        self.reset_due = False
        self.running_at_reset: dict = {}

    def submit(self, cmd):
        self.reset_due = self.reset_due or isinstance(cmd, Lift)
        return self.b.submit(cmd)

    def run_until(self, pred, timeout):
        if self.reset_due:
            self.reset_due = False
            self.running_at_reset = self.model.running()
            ev = McuReset(1, 2)
            assert pred(ev)
            return [ev]
        return self.b.run_until(pred, timeout)

    def __getattr__(self, name):
        return getattr(self.b, name)


def test_link_fault_aborts_and_stops_every_motor():
    b = hardware.open_backend("sim", seed=4)
    try:
        proxy = ResetDuringLift(b)
        with pytest.raises(SelfTestAborted, match="restarted"):
            run_selftest(proxy)
        assert proxy.running_at_reset  # a lift motor was running when the test aborted
        assert b.model.running() == {}  # ... and the finally stopped it
    finally:
        b.close()


# -------------------------------------------------------------------------- report
def test_report_json_and_render():
    report, _, _ = selftest(faults=["disc-stall"], seed=5)
    d = json.loads(json.dumps(report.to_dict(), ensure_ascii=False))
    assert d["passed"] is False and len(d["parts"]) == len(ORDER)
    assert set(d["parts"][0]) == {"part", "part_zh", "side", "passed", "evidence",
                                  "evidence_zh", "code"}
    disc = next(p for p in d["parts"] if p["part"] == "shuffle disc")
    assert (disc["passed"], disc["code"], disc["part_zh"]) == (False, "E51", "洗牌大盘")
    lines = report.render().splitlines()
    assert len(lines) == 2 * len(ORDER) + 1
    assert [ln.split()[0] for ln in lines[0:-1:2]] == [
        "PASS" if p.passed else "FAIL" for p in report.parts]
    disc_line = lines[2 * ORDER.index("shuffle disc")]
    assert disc_line.startswith("FAIL  shuffle disc") and "[E51 disc-stall]" in disc_line
    assert "洗牌大盘" in lines[2 * ORDER.index("shuffle disc") + 1]
    assert "FAILED: 1 of 20" in lines[-1]


def test_part_result_checks_its_code():
    with pytest.raises(ValueError, match="catalogue"):
        PartResult("feeder", "输送带", "E", False, "x", "x", "E99")
    with pytest.raises(ValueError, match="needs a catalogue code"):
        PartResult("feeder", "输送带", "E", False, "x", "x", None)
    assert PartResult("feeder", "输送带", "E", True, "ok", "好").to_dict()["code"] is None


def test_clear_safe_stop_is_sent_first():
    """The power-on safe-stop is cleared by the self-test itself."""
    b = hardware.open_backend("sim", seed=1)
    try:
        sent = []
        real_submit = b.submit
        b.submit = lambda c: (sent.append(type(c).__name__), real_submit(c))[1]
        assert run_selftest(b).passed
        assert sent[0] == ClearSafeStop.__name__
        assert "SelfTestStep" in sent and sent.count("Lift") == 8 and sent[-1] == "RollDice"
    finally:
        b.close()


def test_cancel_stops_the_self_test_at_once():
    b = hardware.open_backend("sim", seed=3)
    seen = []
    try:
        with pytest.raises(SelfTestAborted, match="stopped by the operator"):
            run_selftest(b, progress=seen.append, cancel=lambda: len(seen) >= 3)
        assert not b.model.running() and 3 <= len(seen) < 8  # aborted at the first motion after the request
    finally:
        b.close()
