"""The technician's self-test (issue #5): exercise each actuator and sensor in turn and report
every part as passed or failed, with the evidence, in English and Chinese.

:func:`run_selftest` drives any :class:`hardware.TableBackend` (sim, gpio or mcu) with the
machine idle and its lifts down, and returns a :class:`SelfTestReport`. Parts, in test order:

1. emergency stop input at rest (not pressed), side-less;
2. lid switch at rest (closed), side-less;
3. lift limit sensors at rest, E S W N: bottom active, top inactive (both active: E11;
   both inverted: E15; neither: E14);
4. shuffle disc: StartShuffle, disc rotation pulses within four pulse half-periods (none: E51);
   the disc keeps turning for the feeders;
5. feeders, E S W N: a SelfTestStep jog as long as the profile's deadline for one stack; feeder
   motion pulses (none: E31, the motor wire), tiles at the push head (tile-present edges or a
   stack counted; none while the wheel turns and the disc turns: E32, jammed);
6. tile-present sensors, E S W N: the reading at rest (before any motion) and its edges while
   the feeder jog brought tiles (stuck active: E33);
7. lifts up then down, E S W N, each stroke with the profile's lift deadline: travel times
   against the nominal ``lift_up_s`` / ``lift_down_s``, top reached, bottom released and reached
   again. A lift that never reaches the top is lowered and its down travel compared with
   nominal: shorter means the bar stopped part-way (E21, 升牌杆不到位), full travel means the top
   sensor never signals (E12). Bottom still active at the top: E13;
8. dice motor: RollDice with the profile's spin and deadline, dice rotation pulses (none: E52).

Facts come from the machine profile (``hardware/profiles/*.toml``: timings in seconds of machine
time, deadlines) and from the technician's answers in ../shared/seeds/002_4c2a73aa42bc09ab.txt
(lift magnetic sensor and magnet polarity, 升牌杆不到位, conveyor motor wire loose or wheel
jammed), through the fault catalogue :mod:`controller.faults` (codes E11-E73).

Every motor is stopped when the self-test ends, also on an exception (``backend.stop_all()`` in
a ``finally``), and every lift that went up is lowered again - except a lift whose bottom limit
reads active at the top (E13): Lift down then ends at once by design (the device believes it is
already down), so the report says the lift was left up and must be lowered after the sensor is
fixed.

Faults of the link to the microcontroller (a reset, a dead line) are not parts of the table: the
self-test stops the motors and raises :class:`SelfTestAborted` instead of blaming a part.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from firmware_bridge.host import CommandFailed, LinkLost, McuReset
from firmware_bridge.messages import (ClearSafeStop, Command, Lift, Motor, MotionDone, Outcome,
                                      Reply, ReplyCode, RollDice, SelfTestStep, Sensor,
                                      SensorChanged, Side, StartShuffle, Status, StopReason,
                                      StopShuffle)

from .diagnosis import LATE
from .faults import BY_CODE, FaultType

#: a limit reached in less than this fraction of the nominal travel time did not really travel
#: (the limit already read active, or fired early)
MIN_TRAVEL_FRACTION = 0.5
#: after an up stroke that missed the top, a down travel shorter than this fraction of the
#: nominal ``lift_down_s`` means the bar stopped part-way (E21); otherwise it went all the way
#: and the top sensor failed (E12). Between the simulator's short reach (0.85) and the full
#: travel (1.0), with room for the mcu backend's timing jitter (about 0.12 s at 8x).
SHORT_DOWN_FRACTION = 0.9
#: pulse sensors: fewest changes that prove a motor turns (a stuck input gives none)
MIN_PULSE_CHANGES = 2
#: machine seconds allowed on top of a motion's deadline for its report to arrive
REPORT_MARGIN_S = 2.0


class SelfTestAborted(RuntimeError):
    """The self-test could not go on for a reason outside the table's parts (the
    microcontroller restarted, the serial link went down). Every motor was stopped."""


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
    """Every part's verdict, in test order. ``passed`` is True when every part passed."""

    parts: tuple[PartResult, ...]

    @property
    def passed(self) -> bool:
        return all(p.passed for p in self.parts)

    @property
    def failed(self) -> list[PartResult]:
        """The failing parts, in test order."""
        return [p for p in self.parts if not p.passed]

    def to_dict(self) -> dict:
        """JSON-ready: ``{"passed": bool, "parts": [PartResult.to_dict(), ...]}``."""
        return {"passed": self.passed, "parts": [p.to_dict() for p in self.parts]}

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
        else:
            lines.append(f"self-test passed: all {n} parts / 自检通过：全部 {n} 项合格")
        return "\n".join(lines)


# ----------------------------------------------------------------------------- driving
@dataclass
class _Step:
    """One command and what it produced: its Reply (None for a motion started without one
    seen), its MotionDone (None if refused), and every event seen meanwhile."""

    reply: Reply | None
    done: MotionDone | None
    events: list

    def changes(self, sensor: Sensor, side: Side | None = None, value: int | None = None) -> int:
        """SensorChanged events of ``sensor`` on ``side`` (with ``value``) in this step."""
        return sum(1 for e in self.events if isinstance(e, SensorChanged) and e.sensor == sensor
                   and e.side == side and (value is None or e.value == value))

    @property
    def refused(self) -> bool:
        return self.reply is not None and self.reply.code != ReplyCode.OK


class _Driver:
    """Synchronous commands over the event-driven backend; link faults abort."""

    def __init__(self, backend: Any, cancel: Callable[[], bool] | None = None) -> None:
        self.b = backend
        self.cancel = cancel or (lambda: False)

    def _link_fault(self, ev: Any) -> bool:
        return isinstance(ev, (McuReset, LinkLost)) or self.cancel()

    def _check(self, events: list) -> None:
        if self.cancel():
            self.b.stop_all()
            raise SelfTestAborted("stopped by the operator: every motor was stopped")
        for ev in events:
            if isinstance(ev, McuReset):
                raise SelfTestAborted(f"the microcontroller restarted (boot {ev.previous_boot} -> "
                                      f"{ev.boot}) during the self-test; run it again")
            if isinstance(ev, LinkLost):
                raise SelfTestAborted(f"the serial link to the microcontroller was lost during "
                                      f"the self-test ({ev.reason})")
            if isinstance(ev, CommandFailed):
                raise SelfTestAborted(f"command {ev.cmd_id} got no reply: {ev.error}")

    def call(self, cmd: Command, timeout: float = 5.0) -> _Step:
        """A command answered by a Reply (or Status)."""
        i = self.b.submit(cmd)
        evs = self.b.run_until(lambda e: self._link_fault(e) or (
            getattr(e, "cmd_id", None) == i
            and isinstance(e, (Reply, Status, CommandFailed))), timeout)
        self._check(evs)
        last = evs[-1]
        return _Step(last if isinstance(last, Reply) else None, None, evs)

    def motion(self, cmd: Command, deadline_s: float) -> _Step:
        """A motion command: wait for its MotionDone (or its refusal); ``deadline_s`` is the
        motion's own deadline in machine seconds."""
        i = self.b.submit(cmd)
        reply: list[Reply] = []

        def pred(e: Any) -> bool:
            if self._link_fault(e) or (isinstance(e, CommandFailed) and e.cmd_id == i):
                return True
            if isinstance(e, Reply) and e.cmd_id == i:
                reply.append(e)
                return e.code != ReplyCode.OK
            return isinstance(e, MotionDone) and e.cmd_id == i

        evs = self.b.run_until(pred, deadline_s + REPORT_MARGIN_S)
        self._check(evs)
        last = evs[-1]
        return _Step(reply[0] if reply else None, last if isinstance(last, MotionDone) else None,
                     evs)

    def advance(self, dt: float) -> list:
        evs = self.b.advance(dt)
        self._check(evs)
        return evs


# ------------------------------------------------------------------------------- texts
def _s(seconds: float) -> str:
    return f"{seconds:.2f} s"


def _refusal(part: tuple[str, str], side: str | None, step: _Step) -> PartResult:
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


def _limits_at_rest(side: Side, top: int, bottom: int) -> PartResult:
    """Lift down at rest: bottom limit 1, top limit 0 (profile active levels applied)."""
    s = side.name
    read_en = f"top {top}, bottom {bottom} with the lift down"
    read_zh = f"升牌在下位：上限位 {top}，下限位 {bottom}"
    if (top, bottom) == (0, 1):
        return PartResult(*PART_LIMITS, s, True, f"{read_en} (expected top 0, bottom 1)",
                          f"{read_zh}（应为上 0、下 1）")
    if (top, bottom) == (1, 1):
        code, en, zh = "E11", "top limit active although the lift is down", "升牌在下位时上限位有信号"
    elif (top, bottom) == (1, 0):
        code, en, zh = ("E15", "both limits inverted (top active, bottom inactive)",
                        "上下限位信号反相（上有、下无）")
    else:
        code, en, zh = "E14", "neither limit active: the bottom limit does not signal", "上下限位均无信号：下限位无信号"
    return PartResult(*PART_LIMITS, s, False, f"{read_en}: {en}", f"{read_zh}：{zh}", code)


def _lift_verdict(side: Side, timing: Any, rest_code: str | None, up: _Step,
                  at_top: tuple[int, int], down: _Step | None,
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
        if up_s < MIN_TRAVEL_FRACTION * nom_up:
            code = rest_code or "E11"
            return PartResult(*PART_LIFT, s, False,
                              f"not exercised: Lift up ended at once ({_s(up_s)}) because the top "
                              f"limit already reads active; the lift was not moved",
                              f"无法测试：上限位已显示到位，升牌指令立即结束（{_s(up_s)}），"
                              f"升牌未动作", code)
        if at_top[1] == 1:
            d_en, d_zh, d_s = down_text()
            left_up = d_s is not None and d_s < MIN_TRAVEL_FRACTION * nom_down
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
                              rest_code or "E11")
        if d_s is not None and d_s < MIN_TRAVEL_FRACTION * nom_down:
            return PartResult(*PART_LIFT, s, False,
                              f"{up_en}; down ended after only {_s(d_s)}: the bottom limit "
                              f"signalled before the lift got down",
                              f"{up_zh}；仅 {_s(d_s)} 下降即结束：下限位提前有信号", "E13")
        if up_s > LATE * nom_up:  # the same limit as the cycle's warning (controller.diagnosis.LATE)
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
        if not released:
            return PartResult(*PART_LIFT, s, False,
                              f"up: the bottom limit never released within the {_s(dl)} "
                              f"deadline - the lift did not move (motor or its wiring); {d_en}",
                              f"上升：{_s(dl)} 时限内下限位未释放，升牌未动作（电机或其接线）；"
                              f"{d_zh}", "E71")
        if down is None or down.done is None or down.refused:
            return _refusal(PART_LIFT, s, down) if down is not None else PartResult(
                *PART_LIFT, s, False, "up: top not reached; not lowered", "上升未到顶；未下降",
                "E71")
        if down.done.outcome != Outcome.COMPLETED or d_s is None:
            return PartResult(*PART_LIFT, s, False,
                              f"up: bottom released but no top signal within {_s(dl)}; {d_en}",
                              f"上升：下限位已释放，但 {_s(dl)} 内上限位无信号；{d_zh}",
                              rest_code or "E14")
        frac = d_s / nom_down
        if frac < SHORT_DOWN_FRACTION:
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


# ------------------------------------------------------------------------------- the run
def run_selftest(backend: Any, *,
                 progress: Callable[[PartResult], None] | None = None,
                 cancel: Callable[[], bool] | None = None) -> SelfTestReport:
    """Exercise every actuator and sensor of the table in turn and judge each part.

    Args:
        backend: a :class:`hardware.TableBackend`, idle, lifts down (after power-on or a
            finished cycle). Its power-on safe-stop is cleared here (ClearSafeStop).
        progress: called with each :class:`PartResult` as soon as it is decided.
        cancel: asked at every event the test waits on; True stops every motor and aborts
            (the service's stop button), so a stop waits at most for the next event of the
            motion under way, never for the rest of the test.
    Returns: the :class:`SelfTestReport` (parts in the order of the module docstring).
    Raises:
        SelfTestAborted: the microcontroller restarted, its link went down, or ``cancel``.
        hardware.HardwareError: the backend failed (closed, no report in time).
    Machine time used: about 35 s on a sound table (disc 1 s, feeders 4 x 3.6 s, lifts
    4 x 3.6 s, dice 1.2 s), more when lifts run into their deadlines.
    Every motor is stopped at the end, also on an exception.
    """
    p = backend.profile
    t = p.timing
    drv = _Driver(backend, cancel)
    parts: list[PartResult] = []

    def add(r: PartResult) -> PartResult:
        parts.append(r)
        if progress is not None:
            progress(r)
        return r

    try:
        clear = drv.call(ClearSafeStop())
        rest = backend.sensors()  # at rest, before anything moves

        # 1-2. safety inputs at rest
        estop = rest(Sensor.ESTOP)
        if estop:
            add(PartResult(*PART_ESTOP, None, False,
                           "reads pressed at rest: nothing can move until it is released"
                           + ("" if clear.reply is None or clear.reply.code == ReplyCode.OK
                              else " (ClearSafeStop refused)"),
                           "静止时显示按下：松开前机器不能动作", "E73"))
        else:
            add(PartResult(*PART_ESTOP, None, True, "not pressed at rest (reads 0)",
                           "静止时未按下（读数 0）"))
        lid = rest(Sensor.LID)
        add(PartResult(*PART_LID, None, bool(lid),
                       "closed at rest (reads 1)" if lid
                       else "reads open at rest (0): close the lid, or check the lid switch",
                       "静止时闭合（读数 1）" if lid else "静止时显示盖板打开（读数 0）：盖好盖板或检查盖板开关",
                       None if lid else "E73"))

        # 3. lift limit sensors at rest
        rest_code: dict[Side, str | None] = {}
        for side in Side:
            r = add(_limits_at_rest(side, rest(Sensor.LIFT_TOP, side),
                                    rest(Sensor.LIFT_BOTTOM, side)))
            rest_code[side] = r.code

        # 4. shuffle disc: runs through the feeder jogs (tiles reach the push heads)
        jog_ms = p.feed_deadline_ms(1)  # a sound feeder pushes one stack within this
        window_s = 4 * t.disc_pulse_s
        shuffle_ms = int(1000 * (window_s + 4 * (jog_ms / 1000 + REPORT_MARGIN_S) + 5.0))
        shuffle_ms = min(shuffle_ms, p.shuffle_deadline_ms())
        sh = drv.call(StartShuffle(shuffle_ms))
        if sh.refused:
            disc_ok = False
            add(_refusal(PART_DISC, None, _Step(sh.reply, None, sh.events)))
        else:
            evs = sh.events + drv.advance(window_s)
            n = sum(1 for e in evs if isinstance(e, SensorChanged)
                    and e.sensor == Sensor.DISC_PULSE)
            disc_ok = n >= MIN_PULSE_CHANGES
            add(PartResult(*PART_DISC, None, disc_ok,
                           f"{n} rotation pulse changes in {_s(window_s)} "
                           f"(expected about {window_s / t.disc_pulse_s:.0f})",
                           f"{_s(window_s)} 内转动信号变化 {n} 次（应约 "
                           f"{window_s / t.disc_pulse_s:.0f} 次）",
                           None if disc_ok else "E51"))

        # 5. feeders, with the disc turning; 6. tile-present sensors (at rest + the jogs)
        jogs: dict[Side, _Step] = {}
        for k, side in enumerate(Side):
            step = drv.motion(SelfTestStep(10 + k, Motor.FEEDER, side, jog_ms, jog_ms + 1000),
                              (jog_ms + 1000) / 1000)
            jogs[side] = step
            if step.refused or step.done is None or step.done.outcome != Outcome.COMPLETED:
                add(_refusal(PART_FEEDER, side.name, step))
                continue
            motion = step.changes(Sensor.FEEDER_MOTION, side)
            tiles = step.changes(Sensor.TILE_PRESENT, side)
            stacks = step.changes(Sensor.STACK, side, 1)
            jog_s = jog_ms / 1000
            seen_en = (f"jog {_s(jog_s)}: {motion} wheel-motion pulse changes, {tiles} "
                       f"tile-present changes, {stacks} stacks pushed")
            seen_zh = (f"点动 {_s(jog_s)}：输送轮转动信号变化 {motion} 次，有牌信号变化 {tiles} "
                       f"次，推出 {stacks} 墩")
            if motion < MIN_PULSE_CHANGES:
                add(PartResult(*PART_FEEDER, side.name, False,
                               f"{seen_en}: the motor was switched on but the wheel did not turn",
                               f"{seen_zh}：电机已通电但输送轮不转", "E31"))
            elif tiles or stacks:
                add(PartResult(*PART_FEEDER, side.name, True, f"{seen_en}: the wheel turns and "
                               f"tiles come through", f"{seen_zh}：输送轮转动，有牌送出"))
            elif not disc_ok:
                add(PartResult(*PART_FEEDER, side.name, True,
                               f"{seen_en}: the wheel turns; tile flow not checked, the disc "
                               f"does not turn (see the shuffle disc)",
                               f"{seen_zh}：输送轮转动；大盘不转，未检查送牌（见洗牌大盘）"))
            else:
                add(PartResult(*PART_FEEDER, side.name, False,
                               f"{seen_en}: the wheel turns but no tile came through while the "
                               f"disc turned", f"{seen_zh}：输送轮在转但大盘转动时没有牌送出",
                               "E32"))
        drv.call(StopShuffle())
        for side in Side:
            add(_tile_sensor(side, rest(Sensor.TILE_PRESENT, side), jogs[side]))

        # 7. lifts, one side at a time: up, then down again
        dl_s = t.lift_deadline_s
        for side in Side:
            up = drv.motion(Lift(side, True, p.lift_deadline_ms()), dl_s)
            snap = backend.sensors()
            at_top = (snap(Sensor.LIFT_TOP, side), snap(Sensor.LIFT_BOTTOM, side))
            down = at_bottom = None
            moved = up.done is not None and not (up.done.elapsed_ms == 0
                                                 and up.done.outcome == Outcome.COMPLETED)
            if moved:  # the motor ran: bring the lift back down
                down = drv.motion(Lift(side, False, p.lift_deadline_ms()), dl_s)
                snap = backend.sensors()
                at_bottom = (snap(Sensor.LIFT_TOP, side), snap(Sensor.LIFT_BOTTOM, side))
            add(_lift_verdict(side, t, rest_code[side], up, at_top, down, at_bottom))

        # 8. dice
        spin_ms, dice_dl = p.dice_ms()
        dice = drv.motion(RollDice(spin_ms, dice_dl), dice_dl / 1000)
        if dice.refused or dice.done is None or dice.done.outcome != Outcome.COMPLETED:
            add(_refusal(PART_DICE, None, dice))
        else:
            n = dice.changes(Sensor.DICE_PULSE)
            ok = n >= MIN_PULSE_CHANGES
            exp = spin_ms / 1000 / t.dice_pulse_s
            add(PartResult(*PART_DICE, None, ok,
                           f"spin {_s(spin_ms / 1000)}: {n} rotation pulse changes (expected "
                           f"about {exp:.0f})" + ("" if ok else ": the dice did not spin"),
                           f"转动 {_s(spin_ms / 1000)}：转动信号变化 {n} 次（应约 {exp:.0f} 次）"
                           + ("" if ok else "：骰子不转"), None if ok else "E52"))
    finally:
        backend.stop_all()
    return SelfTestReport(tuple(parts))


def _tile_sensor(side: Side, at_rest: int, jog: _Step) -> PartResult:
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
