"""The technician's self-test (issue #5): exercise each actuator and sensor in turn and report
every part as passed or failed, with the evidence, in English and Chinese.

:func:`run_selftest` drives any :class:`hardware.TableBackend` (sim, gpio or mcu) with the
machine idle, its side lifts down and the centre lift up, and returns a :class:`SelfTestReport`.
What it commands is the script of :mod:`controller.selftest_script` (``script(profile)``: one table
of steps, each a goal command with its expected transitions and its deadline from the profile),
run step by step by its ``StepRunner``; this module reads the parts at rest, gives each part's
observations to its verdict below (which decides through the judges of :mod:`controller.diagnosis`)
and stops the disc when a tile jams its outlet. Parts, in test order:

1. emergency stop input at rest (not pressed), side-less;
2. lid switch at rest (closed), side-less, where fitted (the GPIO build wires it into the
   emergency-stop chain);
3. lift limit sensors at rest, E S W N: bottom active, top inactive (both active: E11;
   both inverted: E15; neither: E14);
4. shuffle disc: StartShuffle, disc rotation pulses within four pulse half-periods (none: E51;
   none because a tile is jammed at the outlet, the jam sensor reading 1: E53); the disc keeps
   turning for the feeders;
5. feeders, E S W N: a SelfTestStep jog as long as the profile's deadline for one stack; feeder
   motion pulses (none: E31, the motor wire; none while the push head went out and stayed out:
   E34, the jammed head stalls the drive it shares with the conveyor), tiles at the push head
   (tile-present edges or a stack counted; none while the wheel turns and the disc turns: E32,
   jammed; not judged when the jam sensor signalled, the tile path being blocked);
6. push heads, E S W N, judged from the same jog: the feeder motor turns the head's cam
   (one turn ``push_cycle_s``), so PUSH_HOME must change during the jog. No wheel pulses and
   PUSH_HOME went to 0 and stayed 0: E34 (a loose feeder wire leaves the head home, PUSH_HOME
   stays 1: the feeder's E31, the head not judged). Wheel pulses but PUSH_HOME never changed:
   E35 (home sensor). The device ends a feeder jog only with its head home (it runs on after
   the jog time until PUSH_HOME reads 1), so no lift rises into a head left out; a head that
   does not come home by the jog's deadline: E34;
7. tile-present sensors, E S W N: the reading at rest (before any motion) and its edges while
   the feeder jog brought tiles (stuck active: E33);
8. jam sensor / disc outlet, side-less: JAM at rest (active: E53) and while the disc turned
   for the feeders (a tile jammed: E53; the shuffle is then stopped at once). Only on a build
   where the jam sensor is fitted (``"jam" in backend.fitted``); a build without it (the
   default GPIO build) has no such part and the report leaves it out rather than list a part
   that was not tested;
9. lifts up then down, E S W N, each stroke with the profile's lift deadline: travel times
   against the nominal ``lift_up_s`` / ``lift_down_s``, top reached, bottom released and reached
   again. A lift that never reaches the top is lowered and its down travel compared with
   nominal: shorter means the bar stopped part-way (E21, 升牌杆不到位), full travel means the top
   sensor never signals (E12). Bottom still active at the top: E13;
10. centre lift, side-less (after the side lifts: the played set drops when it goes down):
    ``Lift(None, down)`` then ``Lift(None, up)``, each with ``centre_deadline_s``; travel
    times against the nominal ``centre_down_s`` / ``centre_up_s``, CENTRE_TOP released,
    CENTRE_BOTTOM reached, then the top reached again (the hole closed). Never left the top,
    no limit within the deadline, or a limit that signals too early or stays active: E24 (the
    catalogue's only centre-lift code; its causes include the limit sensors). It is raised
    again whenever it left the top, so it is left up (hole closed) if it can move;
11. dice motor: RollDice with the profile's spin and deadline, dice rotation pulses (none: E52).

Facts come from the machine profile (``hardware/profiles/*.toml``: timings in seconds of machine
time, deadlines) and from the technician's answers in ../shared/seeds/002_4c2a73aa42bc09ab.txt
(lift magnetic sensor and magnet polarity, 升牌杆不到位, conveyor motor wire loose or wheel
jammed), through the fault catalogue :mod:`controller.faults` (codes E11-E73; the push head
E34 / E35, the centre lift E24 and the jam sensor E53 describe the parts of commit f4bde52:
``hardware/sim/parts.py`` and ``hardware/sim/faults.py`` model them).

Every motor is stopped when the self-test ends, also on an exception (``backend.stop_all()`` in
a ``finally``), and every lift that went up is lowered again - except a lift whose bottom limit
reads active at the top (E13): Lift down then ends at once by design (the device believes it is
already down), so the report says the lift was left up and must be lowered after the sensor is
fixed. The centre lift, lowered for its test, is raised again (left up, the hole closed) unless
it cannot move or the self-test was aborted between its two strokes (then ``stop_all`` leaves it
where it is: after a link fault or the operator's stop nothing more is moved).

Faults of the link to the microcontroller (a reset, a dead line) are not parts of the table: the
self-test stops the motors and raises :class:`SelfTestAborted` instead of blaming a part.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from hardware.vocabulary import Outcome, ReplyCode, Sensor, SensorChanged, Side, StopReason

from .diagnosis import (feeder_code, late, missed_top_code, no_travel_code, push_head_code, rest_limits_code,
                        travelled, turned)
from .faults import BY_CODE, FaultType
from .selftest_script import Expect, Observed, SelfTestAborted, StepOutcome, StepRunner, Transition, script

__all__ = ["run_selftest", "SelfTestReport", "PartResult", "SelfTestAborted", "script"]

# Every part's code is decided by the judges of controller.diagnosis, with the cycle's thresholds
# against the profile's nominal timings (travelled, turned, rest_limits_code, no_travel_code,
# missed_top_code, late, feeder_code, push_head_code): a fault gives the same code in the self-test
# as in the cycle (tests/controller/test_one_code.py).

# ------------------------------------------------------------------------------ results
@dataclass(frozen=True)
class PartResult:
    """The verdict on one part.

    Attributes:
        part_en, part_zh: the part, e.g. "lift up/down" / "升牌升降".
        side: "E", "S", "W", "N" or None for a side-less part.
        passed: True if the part behaved as the profile says.
        evidence_en, evidence_zh: what was measured (readings, pulse counts, times in s).
        code: the catalogue code (:data:`controller.faults.BY_CODE`) of a failing part, or None.
    Raises ValueError for a code not in the catalogue, or a failing part without a code.
    """

    part_en: str
    part_zh: str
    side: str | None
    passed: bool
    evidence_en: str
    evidence_zh: str
    code: str | None = None

    def __post_init__(self) -> None:
        if self.code is not None and self.code not in BY_CODE:
            raise ValueError(f"code {self.code!r} is not in the fault catalogue")
        if not self.passed and self.code is None:
            raise ValueError(f"failing part {self.part_en!r} needs a catalogue code")

    @property
    def fault(self) -> FaultType | None:
        """The catalogue entry of :attr:`code`, or None."""
        return None if self.code is None else BY_CODE[self.code]

    def to_dict(self) -> dict:
        """``{"part", "part_zh", "side", "passed", "evidence", "evidence_zh", "code"}``."""
        return {"part": self.part_en, "part_zh": self.part_zh, "side": self.side,
                "passed": self.passed, "evidence": self.evidence_en,
                "evidence_zh": self.evidence_zh, "code": self.code}


@dataclass(frozen=True)
class SelfTestReport:
    """Every part's verdict, in test order. ``passed`` is True when the self-test ran to its end
    and every part passed. ``steps``: the steps of the script that ran, in order, with what came of
    each. ``complete``: False for a report of the parts judged before the self-test stopped short
    (a replayed trace that is cut off or was aborted, ``controller.replay.replay_selftest``): a
    part never reached is not a pass."""

    parts: tuple[PartResult, ...]
    steps: tuple["StepOutcome", ...] = ()
    complete: bool = True

    @property
    def passed(self) -> bool:
        return self.complete and all(p.passed for p in self.parts)

    @property
    def failed(self) -> list[PartResult]:
        """The failing parts, in test order."""
        return [p for p in self.parts if not p.passed]

    def to_dict(self) -> dict:
        """JSON-ready: ``{"passed": bool, "complete": bool, "parts": [PartResult.to_dict(), ...],
        "steps": [StepOutcome.to_dict(), ...]}``."""
        return {"passed": self.passed, "complete": self.complete, "parts": [p.to_dict() for p in self.parts],
                "steps": [s.to_dict() for s in self.steps]}

    def render(self) -> str:
        """For the terminal: per part a line ``PASS|FAIL  part  side  evidence`` (with the
        catalogue code and name of a failing part) and the Chinese line after it; a summary
        line last."""
        width = max((len(p.part_en) for p in self.parts), default=0)
        lines = []
        for p in self.parts:
            verdict = "PASS" if p.passed else "FAIL"
            side = p.side or "-"
            tag = f"  [{p.code} {p.fault.name}]" if p.fault is not None else ""
            lines.append(f"{verdict}  {p.part_en:<{width}}  {side}  {p.evidence_en}{tag}")
            side_zh = f"（{p.side}边）" if p.side else ""
            verdict_zh = "通过" if p.passed else "不合格"
            tag_zh = f" [{p.code} {p.fault.part_zh}]" if p.fault is not None else ""
            lines.append(f"      {verdict_zh} {p.part_zh}{side_zh}：{p.evidence_zh}{tag_zh}")
        n, bad = len(self.parts), len(self.failed)
        if bad:
            lines.append(f"self-test FAILED: {bad} of {n} parts failed / 自检未通过：{n} 项中 "
                         f"{bad} 项不合格")
        elif not self.complete:
            lines.append(f"self-test stopped short: the {n} parts judged passed, the rest were not reached / "
                         f"自检未完成：已判定的 {n} 项合格，其余未检")
        else:
            lines.append(f"self-test passed: all {n} parts / 自检通过：全部 {n} 项合格")
        return "\n".join(lines)


# ------------------------------------------------------------------------------- texts
def _s(seconds: float) -> str:
    return f"{seconds:.2f} s"


def _refusal(part: tuple[str, str], side: str | None, step: Observed) -> PartResult:
    """A motion the device refused or that ended without running: the table is in safe-stop
    (E73) or the motor is busy / failed (E71)."""
    if step.refused:
        r = step.reply
        assert r is not None
        if r.code == ReplyCode.SAFE_STOP:
            reason = StopReason(r.detail).text if r.detail in tuple(StopReason) else str(r.detail)
            return PartResult(*part, side, False,
                              f"not run: the table is in safe-stop ({reason})",
                              f"未执行：机器处于安全停机状态（{reason}）", "E73")
        return PartResult(*part, side, False, f"not run: command refused ({r.code.name})",
                          f"未执行：命令被拒绝（{r.code.name}）", "E71")
    d = step.done
    assert d is not None
    if d.outcome == Outcome.SAFE_STOP:
        return PartResult(*part, side, False,
                          "stopped by the safety stop (emergency stop pressed?)",
                          "被安全停机中断（急停被按下？）", "E73")
    return PartResult(*part, side, False,
                      f"motion ended {d.outcome.name} after {_s(d.elapsed_ms / 1000)}",
                      f"动作以 {d.outcome.name} 结束，用时 {_s(d.elapsed_ms / 1000)}", "E71")


PART_ESTOP = ("emergency stop", "急停按钮")
PART_LID = ("lid switch", "盖板开关")
PART_LIMITS = ("lift limit sensors at rest", "升牌上下限位传感器（静止）")
PART_DISC = ("shuffle disc", "洗牌大盘")
PART_FEEDER = ("feeder", "输送带")
PART_TILE = ("tile-present sensor", "推牌头有牌传感器")
PART_LIFT = ("lift up/down", "升牌升降")
PART_DICE = ("dice motor", "骰子电机")
PART_PUSH = ("push head", "推牌头")
PART_JAM = ("jam sensor / disc outlet", "卡牌检测/大盘出牌口")
PART_CENTRE = ("centre lift", "中间升降台")


def _limits_at_rest(side: Side, top: int, bottom: int) -> PartResult:
    """Lift down at rest: bottom limit 1, top limit 0 (profile active levels applied)."""
    s = side.name
    read_en = f"top {top}, bottom {bottom} with the lift down"
    read_zh = f"升牌在下位：上限位 {top}，下限位 {bottom}"
    code = rest_limits_code(top, bottom)
    if code is None:
        return PartResult(*PART_LIMITS, s, True, f"{read_en} (expected top 0, bottom 1)",
                          f"{read_zh}（应为上 0、下 1）")
    en, zh = {"E11": ("top limit active although the lift is down", "升牌在下位时上限位有信号"),
              "E15": ("both limits inverted (top active, bottom inactive)", "上下限位信号反相（上有、下无）"),
              "E14": ("neither limit active: the bottom limit does not signal", "上下限位均无信号：下限位无信号")}[code]
    return PartResult(*PART_LIMITS, s, False, f"{read_en}: {en}", f"{read_zh}：{zh}", code)


def _lift_verdict(side: Side, timing: Any, rest_code: str | None, up: Observed,
                  at_top: tuple[int, int], down: Observed | None,
                  at_bottom: tuple[int, int] | None) -> PartResult:
    """Judge one lift's up and down strokes. ``at_top`` / ``at_bottom`` are the (top, bottom)
    readings after each stroke. Times in seconds against the profile's nominal travel."""
    s = side.name
    nom_up, nom_down, dl = timing.lift_up_s, timing.lift_down_s, timing.lift_deadline_s
    if up.refused or up.done is None:
        return _refusal(PART_LIFT, s, up)
    u = up.done
    up_s = u.elapsed_ms / 1000
    released = up.changes(Sensor.LIFT_BOTTOM, side, 0) > 0 or at_top[1] == 0
    up_en = f"up {_s(up_s)} (nominal {_s(nom_up)}, deadline {_s(dl)})"
    up_zh = f"上升 {_s(up_s)}（标准 {_s(nom_up)}，时限 {_s(dl)}）"

    def down_text() -> tuple[str, str, float | None]:
        if down is None or down.done is None:
            return "not lowered", "未下降", None
        d_s = down.done.elapsed_ms / 1000
        if down.done.outcome == Outcome.DEADLINE:
            return (f"down: no bottom signal within the {_s(dl)} deadline (motor stopped)",
                    f"下降：{_s(dl)} 时限内下限位无信号（电机已停）", d_s)
        return (f"down {_s(d_s)} (nominal {_s(nom_down)})",
                f"下降 {_s(d_s)}（标准 {_s(nom_down)}）", d_s)

    if u.outcome == Outcome.COMPLETED:
        if not travelled(u.elapsed_ms, nom_up):
            code = rest_code or no_travel_code(True, at_top[1] == 1)
            return PartResult(*PART_LIFT, s, False,
                              f"not exercised: Lift up ended at once ({_s(up_s)}) because the top "
                              f"limit already reads active; the lift was not moved",
                              f"无法测试：上限位已显示到位，升牌指令立即结束（{_s(up_s)}），"
                              f"升牌未动作", code)
        if at_top[1] == 1:
            d_en, d_zh, d_s = down_text()
            left_up = d_s is not None and not travelled(down.done.elapsed_ms, nom_down)
            tail_en = (": Lift down ends at once, the lift is left UP - lower it after fixing "
                       "the sensor" if left_up else f"; {d_en}")
            tail_zh = ("：下降指令立即结束，升牌停在上位，修好传感器后再降下" if left_up
                       else f"；{d_zh}")
            return PartResult(*PART_LIFT, s, False,
                              f"{up_en}, top reached but the bottom limit still reads active "
                              f"at the top{tail_en}",
                              f"{up_zh}，已到顶但下限位在上位仍显示到位{tail_zh}", "E13")
        d_en, d_zh, d_s = down_text()
        assert down is not None and at_bottom is not None
        if down.refused or down.done is None:
            return _refusal(PART_LIFT, s, down)
        dd = down.done
        if dd.outcome == Outcome.DEADLINE:
            return PartResult(*PART_LIFT, s, False, f"{up_en}, top reached; {d_en}",
                              f"{up_zh}，已到顶；{d_zh}", rest_code or "E14")
        if dd.outcome != Outcome.COMPLETED:
            return _refusal(PART_LIFT, s, down)
        if at_bottom[0] == 1:
            return PartResult(*PART_LIFT, s, False,
                              f"{up_en}; {d_en}, but the top limit still reads active at the "
                              f"bottom", f"{up_zh}；{d_zh}，但降到底后上限位仍有信号",
                              rest_code or rest_limits_code(*at_bottom))
        if not travelled(dd.elapsed_ms, nom_down):
            return PartResult(*PART_LIFT, s, False,
                              f"{up_en}; down ended after only {_s(d_s)}: the bottom limit "
                              f"signalled before the lift got down",
                              f"{up_zh}；仅 {_s(d_s)} 下降即结束：下限位提前有信号",
                              no_travel_code(False, at_bottom[0] == 1))
        if late(u.elapsed_ms, nom_up):  # the same limit as the cycle's warning (controller.diagnosis.LATE)
            return PartResult(*PART_LIFT, s, False,
                              f"{up_en}: {100 * (up_s / nom_up - 1):.0f} % slower than nominal, the wall "
                              f"rises late; {d_en}",
                              f"{up_zh}：比标准慢 {100 * (up_s / nom_up - 1):.0f} %，牌墙升起偏慢；{d_zh}", "E22")
        slow_en = slow_zh = ""
        if up_s > nom_up * 1.1:
            slow_en = f" (up {100 * (up_s / nom_up - 1):.0f} % over nominal, within the deadline)"
            slow_zh = f"（上升比标准慢 {100 * (up_s / nom_up - 1):.0f} %，仍在时限内）"
        return PartResult(*PART_LIFT, s, True,
                          f"{up_en}, bottom released, top reached; {d_en}, bottom reached"
                          f"{slow_en}",
                          f"{up_zh}，下限位释放、上限位到位；{d_zh}，下限位到位{slow_zh}")
    if u.outcome == Outcome.DEADLINE:
        d_en, d_zh, d_s = down_text()
        down_done = down is not None and down.done is not None and not down.refused
        code = missed_top_code(released, down_done and down.done.outcome == Outcome.COMPLETED,
                               down.done.elapsed_ms if down_done else 0, nom_down)
        if code == "E71":
            return PartResult(*PART_LIFT, s, False,
                              f"up: the bottom limit never released within the {_s(dl)} "
                              f"deadline - the lift did not move (motor or its wiring); {d_en}",
                              f"上升：{_s(dl)} 时限内下限位未释放，升牌未动作（电机或其接线）；"
                              f"{d_zh}", "E71")
        if down is None or down.done is None or down.refused:
            return _refusal(PART_LIFT, s, down) if down is not None else PartResult(
                *PART_LIFT, s, False, "up: top not reached; not lowered", "上升未到顶；未下降",
                "E71")
        if code == "E14" or d_s is None:
            return PartResult(*PART_LIFT, s, False,
                              f"up: bottom released but no top signal within {_s(dl)}; {d_en}",
                              f"上升：下限位已释放，但 {_s(dl)} 内上限位无信号；{d_zh}",
                              rest_code or "E14")
        frac = d_s / nom_down
        if code == "E21":
            return PartResult(*PART_LIFT, s, False,
                              f"up: bottom released but no top signal within {_s(dl)}; lowered "
                              f"in {_s(d_s)}, only {100 * frac:.0f} % of the nominal "
                              f"{_s(nom_down)}: the bar stopped part-way (did not reach the top)",
                              f"上升：下限位已释放，{_s(dl)} 内上限位无信号；下降仅用 {_s(d_s)}，"
                              f"为标准 {_s(nom_down)} 的 {100 * frac:.0f} %：升牌杆不到位",
                              "E21")
        return PartResult(*PART_LIFT, s, False,
                          f"up: bottom released but no top signal within {_s(dl)}; lowered in "
                          f"{_s(d_s)} ({100 * frac:.0f} % of the nominal {_s(nom_down)}): the "
                          f"lift travelled all the way, the top sensor never signalled",
                          f"上升：下限位已释放，{_s(dl)} 内上限位无信号；下降用时 {_s(d_s)}"
                          f"（标准 {_s(nom_down)} 的 {100 * frac:.0f} %）：升牌已到顶，"
                          f"上限位传感器无信号", "E12")
    return _refusal(PART_LIFT, s, up)


def _push_values(step: Observed, side: Side) -> list[int]:
    """The PUSH_HOME readings ``side``'s push head reported during ``step``, in order."""
    return [e.value for e in step.events if isinstance(e, SensorChanged)
            and e.sensor == Sensor.PUSH_HOME and e.side == side]


def _head_stuck_out(step: Observed, side: Side, after: int) -> bool:
    """The push head went out (PUSH_HOME 1 -> 0) and stayed out to the end of ``step``."""
    vals = _push_values(step, side)
    return bool(vals) and vals[-1] == 0 and after == 0


def _jog_ran(step: Observed) -> bool:
    """A feeder jog ran its time: COMPLETED (its push head then came home: the device parks it) or
    DEADLINE (the head did not come home; judged at the push head)."""
    return (not step.refused and step.done is not None
            and step.done.outcome in (Outcome.COMPLETED, Outcome.DEADLINE))


#: why a feeder's tile flow was not judged (English, Chinese)
_FLOW_NOT_JUDGED = {
    "jam": ("a tile is jammed at the disc outlet (see the jam sensor)", "大盘出牌口卡牌（见卡牌检测）"),
    "disc": ("the disc does not turn (see the shuffle disc)", "大盘不转（见洗牌大盘）"),
    "empty": ("no tile reached any of the four feeders: the machine is empty (the set on the table?); run the "
              "self-test with the tiles in the machine to check the tile flow",
              "四边都没有牌送到：机器内无牌（牌在桌面上？）；把牌放入机器后再自检可检查送牌"),
}


def _feeder(side: Side, step: Observed, jog_s: float, disc_ok: bool, jam_blocked: bool,
            push_after: int, machine_fed: bool = True) -> PartResult:
    """Judge one feeder jog with the cycle's judge (:func:`controller.diagnosis.feeder_code`):
    wheel-motion pulses (none: E31; none because the push head stuck out and stalled the shared
    drive: E34), then tiles at the push head (none while tiles could come: E32). The tile flow is
    not judged when the disc did not turn, a tile is jammed at its outlet, or no tile reached any
    of the four feeders (``machine_fed`` False: the machine is empty, a normal state for a
    self-test, e.g. with the set on the table after a cycle)."""
    s = side.name
    if not _jog_ran(step):
        return _refusal(PART_FEEDER, s, step)
    motion = step.changes(Sensor.FEEDER_MOTION, side)
    tiles = step.changes(Sensor.TILE_PRESENT, side)
    stacks = step.changes(Sensor.STACK, side, 1)
    seen_en = (f"jog {_s(jog_s)}: {motion} wheel-motion pulse changes, {tiles} "
               f"tile-present changes, {stacks} stacks pushed")
    seen_zh = (f"点动 {_s(jog_s)}：输送轮转动信号变化 {motion} 次，有牌信号变化 {tiles} "
               f"次，推出 {stacks} 墩")
    code = feeder_code(turned(motion), _head_stuck_out(step, side, push_after), bool(tiles or stacks),
                       disc_ok and not jam_blocked and machine_fed)
    if code == "E34":
        return PartResult(*PART_FEEDER, s, False,
                          f"{seen_en}: the wheel did not turn - the push head went out and "
                          f"stuck, stalling the drive it shares with the conveyor (see the "
                          f"push head)",
                          f"{seen_zh}：输送轮不转——推牌头推出后卡住，连带输送电机停转（见推牌头）",
                          code)
    if code == "E31":
        return PartResult(*PART_FEEDER, s, False,
                          f"{seen_en}: the motor was switched on but the wheel did not turn",
                          f"{seen_zh}：电机已通电但输送轮不转", code)
    if code == "E32":
        return PartResult(*PART_FEEDER, s, False,
                          f"{seen_en}: the wheel turns but no tile came through while the disc "
                          f"turned", f"{seen_zh}：输送轮在转但大盘转动时没有牌送出", code)
    if tiles or stacks:
        return PartResult(*PART_FEEDER, s, True,
                          f"{seen_en}: the wheel turns and tiles come through",
                          f"{seen_zh}：输送轮转动，有牌送出")
    why_en, why_zh = _FLOW_NOT_JUDGED["jam" if jam_blocked else "disc" if not disc_ok else "empty"]
    return PartResult(*PART_FEEDER, s, True,
                      f"{seen_en}: the wheel turns; tile flow not judged, {why_en}",
                      f"{seen_zh}：输送轮转动；未判定送牌，{why_zh}")


def _push_head(side: Side, timing: Any, at_rest: int, jog: Observed, after: int,
               jog_s: float) -> PartResult:
    """Judge a push head and its home sensor from the feeder jog of its side: the feeder motor
    turns the head's cam (one turn ``timing.push_cycle_s``, home for the first part of it), so
    PUSH_HOME goes 0 and 1 about twice a turn. ``at_rest`` / ``after``: PUSH_HOME before the
    self-test and after the jog. Codes: E34 (push-head-jammed), E35
    (push-home-sensor-no-signal)."""
    s = side.name
    if not _jog_ran(jog):
        return _refusal(PART_PUSH, s, jog)
    vals = _push_values(jog, side)
    n = len(vals)
    motion = jog.changes(Sensor.FEEDER_MOTION, side)
    stacks = jog.changes(Sensor.STACK, side, 1)
    exp = 2 * jog_s / timing.push_cycle_s
    seen_en = (f"home sensor {at_rest} at rest, {n} changes during the {_s(jog_s)} feeder jog "
               f"(expected about {exp:.0f}), {after} at its end")
    seen_zh = (f"原位信号静止时为 {at_rest}，输送带点动 {_s(jog_s)} 内变化 {n} 次（应约 "
               f"{exp:.0f} 次），结束时为 {after}")
    if not turned(motion):
        if _head_stuck_out(jog, side, after):
            return PartResult(*PART_PUSH, s, False,
                              f"{seen_en}: the head went out and stuck there, stalling the "
                              f"drive (no wheel-motion pulses)",
                              f"{seen_zh}：推牌头推出后卡住不回，输送电机被卡停（无输送轮转动信号）",
                              "E34")
        if turned(n):
            return PartResult(*PART_PUSH, s, True,
                              f"{seen_en}: the head goes out and comes home (the cam turns; "
                              f"see the feeder for its wheel)",
                              f"{seen_zh}：推牌头能推出并回位（凸轮在转；输送轮见输送带）")
        where_en, where_zh = ("stayed home", "停在原位") if after else ("is out", "未在原位")
        return PartResult(*PART_PUSH, s, True,
                          f"{seen_en}: not judged, the feeder motor did not turn (see the "
                          f"feeder); the head {where_en}",
                          f"{seen_zh}：未判定，输送电机未转（见输送带）；推牌头{where_zh}")
    cam_en = f"the cam turned ({motion} wheel-motion pulse changes, {stacks} stacks pushed)"
    cam_zh = f"凸轮在转（输送轮转动信号变化 {motion} 次，推出 {stacks} 墩）"
    went_and_came = 1 in vals and 0 in vals
    code = push_head_code(True, n, went_and_came and jog.done.outcome != Outcome.DEADLINE and after == 1)
    if code == "E35":
        if after == 0:
            why_en, why_zh = "it never signals home", "始终检测不到原位"
        else:
            why_en = ("it reads home throughout: the switch is stuck closed, or the head "
                      "does not move")
            why_zh = "一直显示在原位：开关粘连，或推牌头不动"
        return PartResult(*PART_PUSH, s, False,
                          f"{seen_en}: {cam_en} but the home sensor never changed - {why_en}",
                          f"{seen_zh}：{cam_zh}，但原位信号从未变化——{why_zh}", "E35")
    if code == "E34" and not went_and_came:
        how_en, how_zh = (("went out and never came home", "推出后未回位") if 1 not in vals
                          else ("came home but never went out again", "回位后不再推出"))
        return PartResult(*PART_PUSH, s, False,
                          f"{seen_en}: {cam_en} but the head {how_en}",
                          f"{seen_zh}：{cam_zh}，但推牌头{how_zh}", "E34")
    if code == "E34":
        return PartResult(*PART_PUSH, s, False,
                          f"{seen_en}: {cam_en}, but after the jog the head did not come home "
                          f"within the deadline",
                          f"{seen_zh}：{cam_zh}，但点动结束后推牌头在时限内未回到原位", "E34")
    return PartResult(*PART_PUSH, s, True,
                      f"{seen_en}: the head goes out and comes home",
                      f"{seen_zh}：推牌头能推出并回到原位")


class _JamWatch:
    """The jam sensor at the disc outlet (fitted builds only): its reading at rest and the
    first JAM 0 -> 1 seen while the disc turned for the feeders (E53, tile-jam)."""

    def __init__(self, fitted: bool, at_rest: int) -> None:
        self.fitted, self.at_rest = fitted, at_rest
        #: when JAM first went 1: (en, zh) of the step it happened in, or None
        self.at: tuple[str, str] | None = None

    def see(self, events: list, during: tuple[str, str]) -> None:
        """Watch ``events`` of the step ``during`` (its name in English and Chinese)."""
        if not self.fitted or self.at is not None:
            return
        if any(isinstance(e, SensorChanged) and e.sensor == Sensor.JAM and e.value
               for e in events):
            self.at = during

    @property
    def blocked(self) -> bool:
        """The tile path is (or may be) blocked: JAM read 1 at rest or went 1 since."""
        return self.fitted and (self.at_rest == 1 or self.at is not None)

    def verdict(self, disc_ok: bool) -> PartResult:
        """``disc_ok``: the disc turned in its own check (part 4)."""
        if self.at_rest:
            also_en = also_zh = ""
            if disc_ok:
                also_en = ("; the disc turned all the same: if no tile is jammed, the sensor "
                           "is stuck active")
                also_zh = "；但大盘能转动：若出牌口无卡牌，则为传感器常亮"
            return PartResult(*PART_JAM, None, False,
                              f"reads 1 (jam) at rest, before the disc turned: a tile is "
                              f"jammed at the disc outlet{also_en}",
                              f"静止时（大盘转动前）读数为 1（卡牌）：大盘出牌口卡牌{also_zh}",
                              "E53")
        if self.at is not None:
            return PartResult(*PART_JAM, None, False,
                              f"inactive at rest; went to 1 while the disc turned ({self.at[0]}): "
                              f"a tile jammed at the disc outlet. The shuffle was stopped; the "
                              f"feeders' tile flow was not judged after it",
                              f"静止时无信号；大盘转动时（{self.at[1]}）变为 1：大盘出牌口卡牌。"
                              f"已停止洗牌，此后未判定各边送牌", "E53")
        if not disc_ok:
            return PartResult(*PART_JAM, None, True,
                              "inactive at rest (reads 0); the disc did not turn, so it was "
                              "not watched with tiles moving",
                              "静止时无信号（读数 0）；大盘未转动，未在送牌时检查")
        return PartResult(*PART_JAM, None, True,
                          "inactive at rest (reads 0) and while the disc turned for the feeder "
                          "jogs", "静止时及输送带点动、大盘转动期间均无信号（读数 0）")


def _centre_verdict(timing: Any, rest: tuple[int, int], down: Observed,
                    low: tuple[int, int], up: Observed | None,
                    high: tuple[int, int] | None) -> PartResult:
    """Judge the centre lift's down then up stroke. ``rest`` / ``low`` / ``high``: the
    (CENTRE_TOP, CENTRE_BOTTOM) readings before, after the down stroke and after the up
    stroke. Times in seconds against the profile's ``centre_down_s`` / ``centre_up_s`` and
    ``centre_deadline_s``; every failure is E24 (centre-lift-not-moving)."""
    nom_d, nom_u, dl = timing.centre_down_s, timing.centre_up_s, timing.centre_deadline_s
    rest_en = f"at rest top {rest[0]}, bottom {rest[1]}"
    rest_zh = f"静止时上限位 {rest[0]}、下限位 {rest[1]}"

    def fail(en: str, zh: str) -> PartResult:
        return PartResult(*PART_CENTRE, None, False, f"{rest_en}; {en}", f"{rest_zh}；{zh}",
                          "E24")

    if down.refused or down.done is None:
        return _refusal(PART_CENTRE, None, down)
    d = down.done
    if d.outcome not in (Outcome.COMPLETED, Outcome.DEADLINE):
        return _refusal(PART_CENTRE, None, down)
    d_s = d.elapsed_ms / 1000
    left = down.changes(Sensor.CENTRE_TOP, None, 0) > 0 or low[0] == 0
    down_en = f"down {_s(d_s)} (nominal {_s(nom_d)}, deadline {_s(dl)})"
    down_zh = f"下降 {_s(d_s)}（标准 {_s(nom_d)}，时限 {_s(dl)}）"

    u_s: float | None = None
    if up is None or up.refused or up.done is None:
        up_en, up_zh = "not raised again", "未再升起"
    elif up.done.outcome == Outcome.DEADLINE:
        up_en = f"up: no top signal within the {_s(dl)} deadline - the hole may stay open"
        up_zh = f"上升：{_s(dl)} 时限内上限位无信号——中间口可能未关上"
    elif up.done.outcome != Outcome.COMPLETED:
        up_en, up_zh = f"up ended {up.done.outcome.name}", f"上升以 {up.done.outcome.name} 结束"
    else:
        u_s = up.done.elapsed_ms / 1000
        up_en = f"up {_s(u_s)} (nominal {_s(nom_u)})"
        up_zh = f"上升 {_s(u_s)}（标准 {_s(nom_u)}）"

    if d.outcome == Outcome.DEADLINE:
        if not left:
            return fail(f"down: the top limit never released within the {_s(dl)} deadline - "
                        f"the centre lift did not move (tiles wedged under the plate, or its "
                        f"motor); it is still up",
                        f"下降：{_s(dl)} 时限内上限位未释放——中间升降台未动作（台板下卡牌或电机）；"
                        f"仍在上位")
        return fail(f"down: the top released but no bottom signal within the {_s(dl)} "
                    f"deadline (stuck part-way, or the bottom sensor); {up_en}",
                    f"下降：上限位已释放，但 {_s(dl)} 时限内下限位无信号（中途卡住或下限位传感器）；"
                    f"{up_zh}")
    if rest[0] == 1 and not travelled(d.elapsed_ms, nom_d):
        why_en = " (it already reads active at the top)" if rest[1] else ""
        why_zh = "（在上位时已显示到位）" if rest[1] else ""
        return fail(f"down ended after only {_s(d_s)}: the bottom limit signalled before the "
                    f"lift got down{why_en}; {up_en}",
                    f"仅 {_s(d_s)} 下降即结束：下限位提前有信号{why_zh}；{up_zh}")
    if low[0] == 1:
        return fail(f"{down_en}, but the top limit still reads active at the bottom; {up_en}",
                    f"{down_zh}，但降到底后上限位仍有信号；{up_zh}")
    assert up is not None and high is not None  # raised whenever the down stroke ran
    if up.refused or up.done is None:
        return _refusal(PART_CENTRE, None, up)
    if up.done.outcome == Outcome.DEADLINE:
        return fail(f"{down_en}, bottom reached; {up_en}", f"{down_zh}，下限位到位；{up_zh}")
    if up.done.outcome != Outcome.COMPLETED or u_s is None:
        return _refusal(PART_CENTRE, None, up)
    if not travelled(up.done.elapsed_ms, nom_u):
        return fail(f"{down_en}, bottom reached; up ended after only {_s(u_s)}: the top limit "
                    f"signalled before the lift got up",
                    f"{down_zh}，下限位到位；仅 {_s(u_s)} 上升即结束：上限位提前有信号")
    if high[1] == 1:
        return fail(f"{down_en}, bottom reached; {up_en}, but the bottom limit still reads "
                    f"active at the top", f"{down_zh}，下限位到位；{up_zh}，但升到顶后下限位仍有信号")
    slow_en = slow_zh = ""
    for name_en, name_zh, took, nom in (("down", "下降", d_s, nom_d), ("up", "上升", u_s, nom_u)):
        if took > nom * 1.1:
            slow_en += f" ({name_en} {100 * (took / nom - 1):.0f} % over nominal, within the deadline)"
            slow_zh += f"（{name_zh}比标准慢 {100 * (took / nom - 1):.0f} %，仍在时限内）"
    return PartResult(*PART_CENTRE, None, True,
                      f"{rest_en}; {down_en}, top released, bottom reached; {up_en}, top "
                      f"reached again: the hole is closed{slow_en}",
                      f"{rest_zh}；{down_zh}，上限位释放、下限位到位；{up_zh}，上限位再次到位："
                      f"中间口已关上{slow_zh}")


# ------------------------------------------------------------------------------- the run
def run_selftest(backend: Any, *,
                 progress: Callable[[PartResult], None] | None = None,
                 cancel: Callable[[], bool] | None = None) -> SelfTestReport:
    """Exercise every actuator and sensor of the table in turn (the steps of :func:`script`) and
    judge each part.

    Args:
        backend: a :class:`hardware.TableBackend`, idle, side lifts down, centre lift up
            (after power-on or a finished cycle). Its power-on safe-stop is cleared here (ClearSafeStop).
            To record the self-test, pass a ``controller.tracing.RecordingBackend`` around it.
        progress: called with each :class:`PartResult` as soon as it is decided.
        cancel: asked at every event the test waits on; True stops every motor and aborts
            (the service's stop button), so a stop waits at most for the next event of the
            motion under way, never for the rest of the test.
    Returns: the :class:`SelfTestReport` (parts in the order of the module docstring; no jam
        sensor part on a build without it; the steps that ran with their outcome).
    Raises:
        SelfTestAborted: the microcontroller restarted, its link went down, or ``cancel``.
        hardware.HardwareError: the backend failed (closed, no report in time).
    Machine time used: about 33 s on a sound table (disc 1 s, feeders 4 x 3.6 s, lifts
    4 x 3.6 s, centre lift 1 + 1.2 s, dice 1.2 s), more when lifts run into their deadlines.
    Every motor is stopped at the end, also on an exception.
    """
    p = backend.profile
    t = p.timing
    steps = script(p)
    runner = StepRunner(backend, steps, cancel)
    run = runner.run
    parts: list[PartResult] = []

    def add(r: PartResult) -> PartResult:
        parts.append(r)
        if progress is not None:
            progress(r)
        return r

    try:
        clear = run("clear")
        assert clear is not None
        rest = backend.sensors()  # at rest, before anything moves

        # safety inputs, lift limits at rest
        if rest(Sensor.ESTOP):
            add(PartResult(*PART_ESTOP, None, False,
                           "reads pressed at rest: nothing can move until it is released"
                           + ("" if clear.reply is None or clear.reply.code == ReplyCode.OK
                              else " (ClearSafeStop refused)"),
                           "静止时显示按下：松开前机器不能动作", "E73"))
        else:
            add(PartResult(*PART_ESTOP, None, True, "not pressed at rest (reads 0)",
                           "静止时未按下（读数 0）"))
        if "lid" in backend.fitted:  # a build may wire the lid into the e-stop chain instead
            lid = rest(Sensor.LID)
            add(PartResult(*PART_LID, None, bool(lid),
                           "closed at rest (reads 1)" if lid
                           else "reads open at rest (0): close the lid, or check the lid switch",
                           "静止时闭合（读数 1）" if lid else "静止时显示盖板打开（读数 0）：盖好盖板或检查盖板开关",
                           None if lid else "E73"))
        rest_code = {s: add(_limits_at_rest(s, rest(Sensor.LIFT_TOP, s), rest(Sensor.LIFT_BOTTOM, s))).code
                     for s in Side}

        # the disc; the jam sensor (fitted builds only; a non-fitted input reads 0 and never changes)
        jam_fitted = "jam" in backend.fitted
        jam = _JamWatch(jam_fitted, rest(Sensor.JAM) if jam_fitted else 0)
        disc = run("disc")
        assert disc is not None
        shuffling = not disc.refused
        disc_ok = False
        if disc.refused:
            add(_refusal(PART_DISC, None, disc))
        else:
            jam.see(disc.events, ("in the disc check", "大盘检查中"))
            disc_ok = add(_disc_verdict(disc, t.disc_pulse_s, jam, runner.steps["disc"].watch_s)).passed
            if jam.blocked and (jam.at is not None or not disc_ok):
                run("disc stop")  # do not leave a jammed disc's motor energised
                shuffling = False

        # feeders with the disc turning; push heads and tile-present sensors from the same jogs
        jogs: dict[Side, Observed] = {}
        blocked: dict[Side, bool] = {}  # the tile path blocked (jam) by the end of each jog
        for side in Side:
            jog = run(f"feeder {side.name}")
            assert jog is not None and jog.after is not None
            jogs[side] = jog
            jam.see(jog.events, (f"during the {side.name} feeder jog", f"{side.name}边输送带点动中"))
            if shuffling and jam.at is not None:
                run("disc stop")  # the tile path is blocked: stop the disc at once
                shuffling = False
            blocked[side] = jam.blocked
        if shuffling:
            run("disc stop")
        jog_s = runner.steps["feeder E"].command.jog_ms / 1000
        after = {s: j.after(Sensor.PUSH_HOME, s) for s, j in jogs.items()}  # PUSH_HOME after each jog
        # no tile at any feeder: the machine is empty (not four jammed wheels)
        fed = any(Expect(Transition.TILES, side=s).seen(j) for s, j in jogs.items())
        for side in Side:
            add(_feeder(side, jogs[side], jog_s, disc_ok, blocked[side], after[side], fed))
        for side in Side:
            add(_push_head(side, t, rest(Sensor.PUSH_HOME, side), jogs[side], after[side], jog_s))
        for side in Side:
            add(_tile_sensor(side, rest(Sensor.TILE_PRESENT, side), jogs[side]))
        if jam_fitted:
            add(jam.verdict(disc_ok))

        # lifts, one side at a time: up, then down again
        for side in Side:
            up = run(f"lift {side.name} up")
            down = run(f"lift {side.name} down")
            assert up is not None and up.after is not None
            add(_lift_verdict(side, t, rest_code[side], up, _limits(up.after, side), down,
                              None if down is None else _limits(down.after, side)))

        # centre lift: down (the hole opens), then up again (the hole closed)
        c_down, c_up = run("centre down"), run("centre up")
        assert c_down is not None and c_down.after is not None
        add(_centre_verdict(t, _limits(rest, None), c_down, _limits(c_down.after, None), c_up,
                            None if c_up is None else _limits(c_up.after, None)))

        # dice
        dice = run("dice")
        assert dice is not None
        add(_dice_verdict(dice, t.dice_pulse_s, runner.steps["dice"].command.spin_ms))
    finally:
        backend.stop_all()
    return SelfTestReport(tuple(parts), tuple(runner.log))


def _limits(snap: Any, side: Side | None) -> tuple[int, int]:
    """(top, bottom) limit readings of ``side``'s lift, or of the centre lift (``side`` None)."""
    if side is None:
        return snap(Sensor.CENTRE_TOP), snap(Sensor.CENTRE_BOTTOM)
    return snap(Sensor.LIFT_TOP, side), snap(Sensor.LIFT_BOTTOM, side)


def _disc_verdict(obs: Observed, pulse_s: float, jam: "_JamWatch", window_s: float) -> PartResult:
    """The disc from its rotation pulses in the watch window (none: E51; none because a tile is
    jammed at the outlet, ``jam.blocked``: E53)."""
    n = obs.changes(Sensor.DISC_PULSE)
    seen_en = f"{n} rotation pulse changes in {_s(window_s)} (expected about {window_s / pulse_s:.0f})"
    seen_zh = f"{_s(window_s)} 内转动信号变化 {n} 次（应约 {window_s / pulse_s:.0f} 次）"
    if turned(n):
        return PartResult(*PART_DISC, None, True, seen_en, seen_zh)
    if jam.blocked:  # the disc cannot turn: a tile is jammed at its outlet
        return PartResult(*PART_DISC, None, False,
                          f"{seen_en}: the disc is blocked by a tile jammed at its outlet "
                          f"(the jam sensor reads 1, see the jam sensor)",
                          f"{seen_zh}：出牌口卡牌，大盘被卡住（卡牌检测为 1，见卡牌检测）", "E53")
    return PartResult(*PART_DISC, None, False, seen_en, seen_zh, "E51")


def _dice_verdict(obs: Observed, pulse_s: float, spin_ms: int) -> PartResult:
    """The dice cup from its rotation pulses during one spin (none: E52). A DEADLINE outcome is
    judged too: the device stopped a cup that gave no pulse (stall-to-stop)."""
    if obs.refused or obs.done is None or obs.done.outcome not in (Outcome.COMPLETED, Outcome.DEADLINE):
        return _refusal(PART_DICE, None, obs)
    n = obs.changes(Sensor.DICE_PULSE)
    ok = turned(n)
    exp = spin_ms / 1000 / pulse_s
    return PartResult(*PART_DICE, None, ok,
                      f"spin {_s(spin_ms / 1000)}: {n} rotation pulse changes (expected about {exp:.0f})"
                      + ("" if ok else ": the dice did not spin"),
                      f"转动 {_s(spin_ms / 1000)}：转动信号变化 {n} 次（应约 {exp:.0f} 次）"
                      + ("" if ok else "：骰子不转"), None if ok else "E52")


def _tile_sensor(side: Side, at_rest: int, jog: Observed) -> PartResult:
    """The tile-present sensor at the push head: inactive at rest, or active at rest only
    because a tile waits at the throat (it then goes inactive when the feeder takes it)."""
    s = side.name
    tiles = jog.changes(Sensor.TILE_PRESENT, side)
    stacks = jog.changes(Sensor.STACK, side, 1)
    ran = jog.done is not None and not jog.refused
    if at_rest == 0:
        if tiles or not stacks:
            extra_en = (f", {tiles} changes while tiles passed" if tiles
                        else "; no tile passed during the feeder jog to confirm it")
            extra_zh = (f"，送牌时变化 {tiles} 次" if tiles else "；点动时无牌通过，未能进一步确认")
            return PartResult(*PART_TILE, s, True, f"inactive at rest (reads 0){extra_en}",
                              f"静止时无信号（读数 0）{extra_zh}")
        return PartResult(*PART_TILE, s, False,
                          f"inactive at rest, but it saw none of the tiles of the {stacks} "
                          f"stacks pushed during the jog", f"静止时无信号，但点动时推出 {stacks} "
                          f"墩却未检测到牌", "E33")
    if tiles:
        return PartResult(*PART_TILE, s, True,
                          f"active at rest (a tile waiting at the push head), {tiles} changes "
                          f"while tiles passed", f"静止时有信号（推牌头处有一张牌等待），送牌时变化 "
                          f"{tiles} 次")
    why_en = (f"; it stayed active while {stacks} stacks were pushed" if stacks
              else "" if not ran else "; no tile passed to tell a waiting tile from a stuck sensor")
    why_zh = (f"；推出 {stacks} 墩时仍一直有信号" if stacks
              else "" if not ran else "；无牌通过，无法区分等待的牌与传感器常亮")
    return PartResult(*PART_TILE, s, False,
                      f"active at rest with no tile at the push head (reads 1){why_en}",
                      f"推牌头无牌时仍有信号（读数 1）{why_zh}", "E33")
