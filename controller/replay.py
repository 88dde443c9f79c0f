"""Replay a recorded trace through the live run's own code: diagnose a table from its log.

``replay(trace)`` builds the settings from the trace's header (its profile's nominal values, the
tile count, the dice method, the dealer), then drives a real :class:`controller.runtime.TableRuntime`
over a :class:`ReplayBackend` that serves the trace: every recorded event goes through
``TableRuntime.take`` (translation and ``cycle.step``, hence the same diagnosis engine as the live
run), every tick through ``tick``, every start of a cycle through ``start_cycle`` with its recorded
dice and readings, every operator event through ``feed``. The commands the replay derives are
checked against the recorded ones; the first difference is reported (``Divergence``).

A trace without tick records (written by hand or by another program) is looked at every
``runtime.TICK_S`` of machine time, as the runtime does. A trace that stops mid-cycle (no ``end``
record, or a phase still moving at its end) is diagnosed as far as it goes and says where it ends.

A self-test trace (header ``"run": "selftest"``, docs/trace.md section 8) is replayed by
:func:`replay_selftest` instead: the self-test's own :func:`controller.selftest.run_selftest` over a
:class:`SelfTestReplayBackend` that serves the recorded events, readings and command ids back.

Format: docs/trace.md. Source of the judging: ``controller.diagnosis`` via ``controller.cycle`` (and
the self-test's part verdicts).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from hardware.errors import BackendError, HardwareTimeout
from hardware.interface import SensorSnapshot
from hardware.profile import ALL_PARTS
from hardware.trace import Record, Trace, TraceError, profile_from_json, readings_from_json, to_json

from . import cycle as CY
from . import tracing as TR
from .faults import Diagnosis
from .runtime import TICK_S, TableRuntime


class ReplayBackend:
    """A ``hardware.TableBackend`` that plays a trace back: ``now()`` is the time of the record being
    replayed, ``sensors()`` the readings last recorded, ``submit`` keeps the command and answers with
    the recorded command's id at the same position (so the recorded replies match). Nothing moves."""

    model = None
    fitted = ALL_PARTS

    def __init__(self, trace: Trace, profile) -> None:
        self.kind = trace.header.backend
        self.profile = profile
        self.t = 0.0
        self.readings: dict = {}
        self.recorded = [r for r in trace.records if r.kind == "command"]
        self.derived: list[tuple[float, Any]] = []

    def now(self) -> float:
        return self.t

    def submit(self, command) -> int:
        k = len(self.derived)
        self.derived.append((self.t, command))
        rec = self.recorded[k] if k < len(self.recorded) else None
        return rec.data["id"] if rec is not None and rec.data.get("id") is not None else 0x10000 + k

    def events(self) -> list:
        return []

    def advance(self, dt: float) -> list:
        return []

    def run_until(self, predicate, timeout: float) -> list:  # pragma: no cover - not used by a replay
        return []

    def sensors(self) -> SensorSnapshot:
        return SensorSnapshot(self.t, dict(self.readings))

    def stop_all(self) -> None:
        pass

    def health(self) -> None:
        return None

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class Divergence:
    """Where the commands the replay derived differ from the recorded ones: ``line`` of the recorded
    command (None: the trace has none there), ``recorded`` and ``derived`` (JSON forms, None when
    missing), ``t`` (s)."""

    line: int | None
    t: float
    recorded: dict | None
    derived: dict | None

    def describe(self) -> str:
        def name(d: dict | None) -> str:
            return "nothing" if d is None else " ".join(f"{k}={v}" for k, v in d.items() if k not in ("t", "id"))
        where = f"line {self.line}" if self.line is not None else "after the last recorded command"
        return f"commands diverge at {where} (t={self.t:.2f} s): recorded {name(self.recorded)}, replay sent {name(self.derived)}"

    def to_dict(self) -> dict:
        return {"line": self.line, "t": round(self.t, 3), "recorded": self.recorded, "derived": self.derived}


@dataclass(frozen=True)
class ReplayResult:
    """What a replay found.

    Attributes:
        table: the controller's state at the end of the trace.
        cycles: the cycles started in the trace.
        commands_checked: recorded commands compared with the replay's (0: the trace has none).
        divergence: the first difference between recorded and derived commands, or None.
        ends: where a trace cut off mid-cycle ends ``{"t", "phase", "line", "cut_line", "text"}``, or None.
    """

    table: CY.Table
    cycles: int
    commands_checked: int
    divergence: Divergence | None
    ends: dict | None

    @property
    def diagnoses(self) -> tuple[Diagnosis, ...]:
        return findings(self.table)


def findings(table: CY.Table) -> tuple[Diagnosis, ...]:
    """Every diagnosis of the controller's last cycle: its faults (``Table.diagnoses``, the latched
    fault first), then the warnings.
    ``mjtable diagnose`` reports the first as ``diagnosis`` and all as ``diagnoses``."""
    return tuple(table.diagnoses) + tuple(table.warnings)


def _apply_carry(rt: TableRuntime, profile, carry: Any, first: bool, line: int, source: str) -> None:
    if carry is None:
        return
    if not isinstance(carry, dict):
        raise TraceError(source, line, "expected \"carry\" to be an object (docs/trace.md)")
    t = rt.table
    try:
        if "tile_count" in carry:
            s = CY.Settings.from_profile(profile, carry["tile_count"], carry.get("dice_method", t.settings.dice_method),
                                         carry.get("dealer", t.settings.dealer))
            if s != t.settings:
                t, _ = CY.request_gear(t, s)
        if first:
            trend = tuple(tuple(float(x) for x in side) for side in carry.get("trend", t.trend))
            lifts = tuple(bool(x) for x in carry.get("lifts_up", t.lifts_up))
            if len(trend) != 4 or len(lifts) != 4:
                raise ValueError("expected \"trend\" and \"lifts_up\" per side E, S, W, N")
            t = dataclasses.replace(t, trend=trend, lifts_up=lifts, raise_first=bool(carry.get("raise_first", False)),
                                    cycles=int(carry.get("cycles", 0)))
    except Exception as e:  # ValueError, TypeError, ProfileError (a gear the profile lacks), a bad dice method
        raise TraceError(source, line, f"expected a valid \"carry\": {e}") from None
    rt.table = t


def replay(trace: Trace) -> ReplayResult:
    """Replay ``trace`` through the runtime and the state machine (see the module's text).

    Returns: a :class:`ReplayResult`.
    Raises:
        TraceError: a header whose settings cannot be built, or an ``op`` record that is not valid
            (``SOURCE:LINE: expected ...``).
    """
    h, src = trace.header, trace.source
    try:
        profile = profile_from_json(h.profile)
        settings = CY.Settings.from_profile(profile, h.tile_count, h.dice_method, h.dealer)
    except Exception as e:  # ProfileError, ValueError: a gear the profile lacks, a bad dice method
        raise TraceError(src, trace.header_line, f"expected a header whose settings apply: {e}") from None
    be = ReplayBackend(trace, profile)
    rt = TableRuntime(be, settings, on_button=lambda action: None)  # a button's action is recorded as its own op
    implicit = not any(r.kind == "op" and r.data["op"] == "tick" for r in trace.records)
    cycles = 0
    last_t: float | None = None
    ended = False

    def look_until(t: float) -> None:
        nonlocal last_t
        if last_t is not None and t > last_t:
            g = last_t
            while g < t - 1e-9:
                be.t = g
                rt.tick()
                g += TICK_S
        last_t = t if last_t is None else max(last_t, t)

    for rec in trace.records:
        if implicit:
            look_until(rec.t)
        be.t = rec.t
        if rec.kind == "event":
            rt.take(rec.obj)
            continue
        if rec.kind == "command":
            continue
        op = rec.data["op"]
        try:
            if op == "tick":
                rt.tick()
            elif op == "start_cycle":
                dice = TR.dice_of(rec.data)
                be.readings = TR.readings_of(rec.data)
                _apply_carry(rt, profile, rec.data.get("carry"), cycles == 0, rec.line, src)
                rt.dice = lambda d=dice: d
                cycles += 1
                rt.start_cycle()
            elif op == "read_positions":
                be.readings = TR.readings_of(rec.data)
                rt.read_positions()
            elif op == "readings":
                be.readings = TR.readings_of(rec.data)
                rt.resync()
            elif op == "end":
                ended = True
                if implicit:
                    rt.tick()
            elif op == "stop_all":
                pass  # the motors were stopped directly; nothing for the state machine
            else:
                rt.feed(TR.event_of(rec.data))
        except ValueError as e:
            raise TraceError(src, rec.line, str(e)) from None
    if implicit and last_t is not None and not ended:
        be.t = last_t
        rt.tick()
    t = rt.table
    last = trace.records[-1] if trace.records else None
    ends = None
    mid = t.phase in CY.MOVING_PHASES or t.phase is CY.Phase.REFILL_PAUSE
    if mid or trace.cut_line is not None:
        at = last.t if last else 0.0
        why = (f"line {trace.cut_line} is cut off" if trace.cut_line is not None else
               "no end record" if not ended else "the recording ended")
        text = (f"the trace ends at t={at:.2f} s, line {last.line if last else trace.header_line}, "
                f"{'mid-cycle in phase ' + t.phase.value if mid else 'in phase ' + t.phase.value} ({why}): "
                f"diagnosed as far as it goes")
        ends = {"t": round(at, 3), "phase": t.phase.value, "line": last.line if last else trace.header_line,
                "cut_line": trace.cut_line, "text": text}
    divergence, checked = _compare(be, trace, cut=ends is not None)
    return ReplayResult(t, cycles, checked, divergence, ends)


def _compare(be: ReplayBackend, trace: Trace, cut: bool) -> tuple[Divergence | None, int]:
    """The first difference between the recorded commands and those the replay sent (a trace without
    command records is not compared; a cut-off trace may lack the last commands the replay sent)."""
    rec, der = be.recorded, be.derived
    if not rec:
        return None, 0
    for k in range(max(len(rec), len(der))):
        r = rec[k] if k < len(rec) else None
        d = der[k] if k < len(der) else None
        rj = None
        if r is not None:
            rj = to_json(r.obj)
        dj = to_json(d[1]) if d is not None else None
        if rj != dj:
            if r is None and cut:
                return None, len(rec)
            return Divergence(r.line if r else None, r.t if r else d[0], rj, dj), k
    return None, len(rec)


# ------------------------------------------------------------------------------ self-test traces
def is_selftest(trace: Trace) -> bool:
    """The trace records a self-test (its header's ``run`` is ``"selftest"``), not cycles."""
    return trace.header.extra.get("run") == "selftest"


class _Stop(Exception):
    """The self-test replay cannot go on: the trace ends (``divergence`` None) or the self-test sent
    a command other than the recorded one."""

    def __init__(self, divergence: Divergence | None = None) -> None:
        super().__init__()
        self.divergence = divergence


class SelfTestReplayBackend:
    """A ``hardware.TableBackend`` serving a recorded self-test (``controller.tracing.RecordingBackend``)
    back to :func:`controller.selftest.run_selftest`, record by record: ``submit`` takes the next
    recorded command (the same one, else the replay stops with a :class:`Divergence`) and answers
    with its id; ``run_until`` returns the recorded events that follow, up to the one its predicate
    accepts (none among them: ``HardwareTimeout``, as the live run raised); ``advance`` and
    ``events`` the recorded events up to the next command or op (a window that runs into the end of a
    trace without its end record was cut off: the replay stops there, unjudged); ``sensors`` the next ``readings``
    op; ``now`` the time of the last record served; ``cancelled`` True once a wait ran into two
    ``stop_all`` ops (the operator stopped the live self-test there). ``fitted`` is the header's
    (the parts the recorded build has; every part when it has none)."""

    model = None

    def __init__(self, trace: Trace, profile) -> None:
        self.kind, self.profile, self.source = trace.header.backend, profile, trace.source
        fitted = trace.header.extra.get("fitted")
        self.fitted = frozenset(fitted) if isinstance(fitted, list) else ALL_PARTS
        self.records = [r for r in trace.records if not (r.kind == "op" and r.data["op"] in ("tick", "end"))]
        # a trace with its end record and no cut line holds every wait in full; otherwise a wait that
        # runs into the trace's last record was cut off there and is not judged
        self.complete = trace.cut_line is None and any(
            r.kind == "op" and r.data["op"] == "end" for r in trace.records)
        self.i = 0
        self.t = 0.0
        self.commands = 0
        self.cancelled = False

    def _peek(self) -> Record | None:
        return self.records[self.i] if self.i < len(self.records) else None

    def _take(self) -> Record:
        r = self.records[self.i]
        self.i += 1
        self.t = r.t
        return r

    def now(self) -> float:
        return self.t

    def submit(self, command) -> int:
        r = self._peek()
        if r is None:
            raise _Stop()
        if r.kind != "command" or to_json(r.obj) != to_json(command):
            raise _Stop(Divergence(r.line, r.t, to_json(r.obj) if r.kind != "op" else r.data, to_json(command)))
        self._take()
        self.commands += 1
        if r.data.get("id") is None:
            raise BackendError(str(r.data.get("error", "the backend refused the command")))
        return r.data["id"]

    def _recorded_events(self, predicate=None) -> tuple[list, bool, Record | None]:
        """The event records from here on, up to the first one ``predicate`` accepts; whether one did;
        the record after them. Two ``stop_all`` ops reached there are the operator's stop of the live
        run (its wait ended early, the runner and then run_selftest stopped every motor): ``cancelled``
        answers True from then on, as ``cancel`` did live. (One ``stop_all`` op there: the live wait
        timed out, and ``run_until`` raises HardwareTimeout as it did.)"""
        seen: list = []
        while (r := self._peek()) is not None and r.kind == "event":
            seen.append(self._take().obj)
            if predicate is not None and predicate(seen[-1]):
                return seen, True, None
        # the operator's stop: the runner stopped every motor, then run_selftest's finally did again
        self.cancelled = self.cancelled or (self._is_stop(0) and self._is_stop(1))
        return seen, False, r

    def _is_stop(self, k: int) -> bool:
        r = self.records[self.i + k] if self.i + k < len(self.records) else None
        return r is not None and r.kind == "op" and r.data["op"] == "stop_all"

    def run_until(self, predicate, timeout: float) -> list:
        seen, matched, r = self._recorded_events(predicate)
        if matched or self.cancelled:
            return seen
        if r is None:
            raise _Stop()
        raise HardwareTimeout(f"condition not met within {timeout} s of machine time ({len(seen)} events seen; "
                              f"recorded up to line {r.line})")

    def advance(self, dt: float) -> list:
        seen, _, r = self._recorded_events()
        if r is None and not self.complete:  # the recording stops inside this window: it proves nothing
            raise _Stop()
        return seen

    def events(self) -> list:
        return self.advance(0.0)

    def sensors(self) -> SensorSnapshot:
        r = self._peek()
        if r is None:
            raise _Stop()
        if r.kind != "op" or r.data["op"] != "readings":
            raise TraceError(self.source, r.line, "expected a readings op here: the self-test read every sensor")
        self._take()
        try:
            values = readings_from_json(r.data.get("readings"))
        except ValueError as e:
            raise TraceError(self.source, r.line, str(e)) from None
        return _Snapshot(self.t, values, self.source, r.line)

    def stop_all(self) -> None:
        r = self._peek()
        if r is not None and r.kind == "op" and r.data["op"] == "stop_all":
            self._take()

    def health(self) -> None:
        return None

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class _Snapshot(SensorSnapshot):
    """Recorded readings: a sensor the record leaves out is a TraceError naming the line."""

    source: str = "trace"
    line: int = 0

    def __call__(self, sensor, side=None) -> int:
        try:
            return super().__call__(sensor, side)
        except KeyError:
            key = sensor.name if side is None else f"{sensor.name}:{side.name}"
            raise TraceError(self.source, self.line, f"expected reading \"{key}\" in the readings") from None


@dataclass(frozen=True)
class SelfTestReplay:
    """What the replay of a self-test trace found.

    Attributes:
        report: the self-test's report (``controller.selftest.SelfTestReport``): the parts judged
            as far as the trace goes.
        commands_checked: recorded commands the replay sent again (the same ones, in order).
        divergence: the first command the replay would send differently, or None.
        ends: where a trace that stops mid-self-test ends ``{"t", "line", "cut_line", "text"}``, or None.
        aborted: why the recorded self-test was aborted (a link fault, the operator's stop, a wait
            that timed out: ``no report in time: ...``), or None.
    """

    report: Any
    commands_checked: int
    divergence: Divergence | None
    ends: dict | None
    aborted: str | None


def replay_selftest(trace: Trace) -> SelfTestReplay:
    """Replay a self-test trace (``mjtable selftest --record``) through the self-test's own code,
    :func:`controller.selftest.run_selftest`, with the header's profile: the same steps, the same
    judges, hence the same verdicts as the live run.

    Raises:
        TraceError: a header whose profile cannot be built, a record that is not what the self-test
            read at that point (``SOURCE:LINE: expected ...``).
    """
    from .selftest import SelfTestAborted, SelfTestReport, run_selftest

    try:
        profile = profile_from_json(trace.header.profile)
    except ValueError as e:
        raise TraceError(trace.source, trace.header_line, f"expected a header whose profile applies: {e}") from None
    be = SelfTestReplayBackend(trace, profile)
    parts: list = []
    divergence = aborted = None
    stopped = False
    try:
        report = run_selftest(be, progress=parts.append, cancel=lambda: be.cancelled)
    except _Stop as e:
        divergence, stopped = e.divergence, e.divergence is None
        report = SelfTestReport(tuple(parts), complete=False)
    except SelfTestAborted as e:
        aborted, report = str(e), SelfTestReport(tuple(parts), complete=False)
    except HardwareTimeout as e:  # the live run raised it at the same wait (a dead line, a lost report)
        aborted, report = f"no report in time: {e}", SelfTestReport(tuple(parts), complete=False)
    ended = any(r.kind == "op" and r.data["op"] == "end" for r in trace.records)
    ends = None
    if stopped or trace.cut_line is not None or (not ended and aborted is None):
        last = trace.records[-1] if trace.records else None
        at, line = (last.t, last.line) if last else (0.0, trace.header_line)
        why = f"line {trace.cut_line} is cut off" if trace.cut_line is not None else "no end record"
        text = (f"the trace ends at t={at:.2f} s, line {line}, "
                f"{'mid-self-test after ' + str(len(parts)) + ' parts' if stopped else 'after the self-test'} "
                f"({why}): diagnosed as far as it goes")
        ends = {"t": round(at, 3), "line": line, "cut_line": trace.cut_line, "text": text}
    return SelfTestReplay(report, be.commands, divergence, ends, aborted)


__all__ = ["ReplayBackend", "ReplayResult", "Divergence", "replay", "findings", "is_selftest",
           "SelfTestReplayBackend", "SelfTestReplay", "replay_selftest"]
