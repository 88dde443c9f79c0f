"""The control loop: one thread owns the ``TableRuntime`` and the backend.

HTTP handlers never touch the machine: they ``submit`` a function that the loop runs between two
turns (``Control.call``) and wait for its result. The loop:

* while the machine moves: ``runtime.pump(TICK_S)`` continuously (paced to wall time on the
  simulator: ``speed`` machine seconds per wall second), and the queued requests between turns;
* while nothing moves: sleeps on the request queue (``IDLE_POLL_S``), then drains the backend's
  events once (an emergency stop, a link that went down) — no busy loop, so an idle service costs
  next to no CPU;
* after each turn: a status snapshot to the pages when anything shown changed, the event log
  (cycles with their lift travel times, faults, warnings), and a beat of the loop's liveness.

The runtime records its trace (docs/trace.md) into a ring buffer that keeps the last
``TRACE_CYCLES`` cycles (``controller.tracing.CycleRing``); every fault is logged with that trace
beside it (``EventLog.append_fault``; ``GET /api/faults/{event id}/trace``), so ``mjtable diagnose
--trace`` can replay what led to it.

The systemd watchdog is pinged by its own thread (``service.liveness``) while this loop beats:
a hung loop stops the pings, a lost machine link does not (it is a fault on the page, E62, and
the link reconnects by itself). The self-test runs on this thread through a ``SteppedBackend``,
which keeps the loop's liveness fresh and lets a stop (the page's, or SIGTERM) cancel it within a
slice of machine time.

Whatever ends the loop (stop, an exception), every motor is stopped and the backend closed.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import logging
import queue
import threading
import time
from typing import Any, Callable

from controller import cycle as CY
from controller.dice import Method, roll, wall_break
from controller.runtime import TICK_S, TableRuntime, centre_state, lift_states, push_heads
from controller.names import phase_zh
from controller.tracing import CycleRing
from hardware.trace import TraceWriter, make_header
from hardware.vocabulary import Sensor

from .errors import ServiceError, WrongState
from .eventlog import EventLog
from .hub import Hub
from .liveness import Liveness, SteppedBackend

log = logging.getLogger("mjtable.service")

SIDES = CY.SIDES
#: wall seconds the idle loop sleeps on the request queue before looking at the machine again
IDLE_POLL_S = 0.5
#: cycles kept in the trace ring (the one a fault is saved with)
TRACE_CYCLES = 3

TILE_SETS = {
    136: ("suits and honours, no flowers", "万饼条字，无花"),
    144: ("suits, honours and the eight flowers", "万饼条字 + 八张花"),
    152: ("suits, honours, flowers and eight extra tiles", "万饼条字 + 花 + 八张百搭"),
    108: ("the three suits only", "仅万饼条"),
}


class Control:
    """The control loop over ``backend``.

    Args:
        backend: an open ``hardware.TableBackend`` (closed by ``stop``).
        settings: the cycle settings to start with.
        log: the event log.
        hub: where status snapshots go.
        speed: simulator only: machine seconds per wall second (0: as fast as possible).
        dice: ``(n) -> values`` (default: electronic dice from ``secrets``).
        liveness: the watchdog's beats (default: one pinging when systemd set ``WATCHDOG_USEC``).
    """

    def __init__(self, backend, settings: CY.Settings, log: EventLog, hub: Hub, *, speed: float = 1.0,
                 dice: Callable[[int], tuple[int, ...]] | None = None, liveness: Liveness | None = None) -> None:
        self.backend = backend
        self.sim = getattr(backend, "kind", "") == "sim" and getattr(backend, "model", None) is not None
        self.log = log
        self.hub = hub
        self._roll = dice or roll
        pace = (1.0 / speed) if (speed > 0 and backend.kind != "mcu" and self.sim) else 0.0
        self.ring = CycleRing(TRACE_CYCLES)
        trace = TraceWriter(make_header(backend.profile, settings.gear, backend.kind,
                                        dice_method=settings.dice_method.value, dealer=settings.dealer), self.ring.add)
        self.rt = TableRuntime(backend, settings, dice=self._dice, pace=pace, on_button=self._button, trace=trace)
        self._q: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mjtable-control", daemon=True)
        self._pending: CY.Settings | None = None
        self._key: tuple | None = None
        self._seen = (CY.Phase.IDLE, 0, None, 0)
        self.selftest: dict | None = None
        self.selftest_running = False
        self._selftest_cancel = threading.Event()
        self.error: str | None = None
        self.seq = 0
        self.liveness = liveness or Liveness()
        self.turns = 0

    # -- life --
    def start(self) -> None:
        self.liveness.beat("control")
        self._thread.start()
        self.liveness.start()

    def stop(self, timeout: float = 10.0) -> None:
        """End the loop: every motor stopped, the backend closed; a running self-test is cancelled
        at its next slice. Idempotent."""
        self._stop.set()
        self._selftest_cancel.set()
        self.liveness.stop()
        self._q.put(None)
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def call(self, fn: Callable[[], Any]) -> concurrent.futures.Future:
        """Run ``fn()`` on the control thread between two turns; its result (or exception) in the future."""
        fut: concurrent.futures.Future = concurrent.futures.Future()
        if self._stop.is_set():
            fut.set_exception(ServiceError("the service is stopping", 503, "stopping"))
            return fut
        self._q.put((fn, fut))
        return fut

    # -- the loop --
    def _dice(self) -> tuple[int, ...]:
        s = self.rt.table.settings
        return tuple(self._roll(4 if s.dice_method is Method.TWO_THROW else 2))

    def _run(self) -> None:
        try:
            self.rt.pump(0.0)  # what the backend reported at start (a board absent: E62) is in the first status
            self._publish(force=True)
            while not self._stop.is_set():
                moving = self.rt.table.phase in CY.MOVING_PHASES
                try:
                    if moving:
                        self.rt.pump(TICK_S)
                        self._drain(block=False)
                    else:
                        self._drain(block=True)
                        if self._stop.is_set():
                            break
                        self.rt.pump(0.0)
                    self.error = None
                except Exception as e:  # noqa: BLE001 - the loop goes on; the motors are stopped
                    log.exception("control loop")
                    self.error = f"{type(e).__name__}: {e}"
                    self.rt._stop_all()
                    self._stop.wait(1.0)
                self.turns += 1
                self._after_turn()
        finally:
            self.rt._stop_all()
            try:
                self.backend.close()
            finally:
                fail = ServiceError("the service is stopping", 503, "stopping")
                while True:
                    try:
                        item = self._q.get_nowait()
                    except queue.Empty:
                        break
                    if item is not None and not item[1].done():
                        item[1].set_exception(fail)

    def _drain(self, block: bool) -> None:
        timeout = IDLE_POLL_S
        while True:
            try:
                item = self._q.get(block=block, timeout=timeout) if block else self._q.get_nowait()
            except queue.Empty:
                return
            block = False
            if item is None:
                return
            fn, fut = item
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                fut.set_result(fn())
            except BaseException as e:  # noqa: BLE001 - handed to the waiting request
                fut.set_exception(e)
            self._after_turn()

    def _after_turn(self) -> None:
        t = self.rt.table
        phase, cycles, fault, nwarn = self._seen
        if t.phase is not phase:
            if t.phase in (CY.Phase.FAULT, CY.Phase.SAFE_STOP) and t.fault is not None and t.fault is not fault:
                self.log.append_fault({**t.fault.to_dict(), "phase": phase.value, "state": t.phase.value,
                                       "diagnoses": [d.to_dict() for d in t.diagnoses]}, self.ring.text())
                self.hub.publish({"type": "event", "kind": "fault"})
        if t.cycles > cycles and t.phase is CY.Phase.WALLS_UP:
            lift = {s: (t.trend[i][-1] if t.trend[i] else None) for i, s in enumerate(SIDES)}
            # the lift's nominal travel and deadline go with its times: a hall ranks drifting lifts by them
            self.log.append_cycle({"cycle": t.cycles, "tile_count": t.settings.gear,
                                   "stacks": dict(zip(SIDES, t.obs.stacks)),
                                   "dice": t.wall.to_dict() if t.wall else None, "lift_up_s": lift,
                                   "lift_nominal_s": t.settings.lift_up_s,
                                   "lift_deadline_s": t.settings.lift_deadline_ms / 1000}, lift)
            self.hub.publish({"type": "event", "kind": "cycle"})
        if len(t.warnings) > nwarn:
            for w in t.warnings[nwarn:]:
                self.log.append("warning", w.to_dict())
        self._seen = (t.phase, t.cycles, t.fault, len(t.warnings))
        self._publish()
        self.liveness.beat("control")

    def link_status(self) -> dict[str, Any] | None:
        """The machine link as it is now (``McuBackend.link_status()``), None without one (sim, gpio)."""
        fn = getattr(self.backend, "link_status", None)
        return fn() if fn is not None else None

    def link_ok(self) -> bool:
        """The machine link is up now (always True for a backend without one)."""
        st = self.link_status()
        return st is None or bool(st["connected"])

    # -- the status --
    def snapshot(self) -> dict[str, Any]:
        """The table status (JSON-ready). Called on the control thread."""
        t = self.rt.table
        s = t.settings
        lifts = lift_states(t, t.sensors) if t.sensors else ["?"] * 4
        heads = push_heads(t.sensors)
        gear = t.pending_gear if t.pending_gear is not None else s.gear
        en, zh = TILE_SETS.get(s.gear, ("", ""))
        return {
            "state": t.phase.value, "state_zh": phase_zh(t.phase.value),
            "busy": t.busy or self.selftest_running, "selftest_running": self.selftest_running,
            "backend": self.backend.kind, "sim": self.sim, "machine_t": round(self.backend.now(), 2),
            "walls": [{"side": side, "stacks": t.obs.stacks[i], "expected": s.stacks[i], "lift": lifts[i],
                       "push_head": heads[i]} for i, side in enumerate(SIDES)],
            "centre_lift": centre_state(t.sensors),
            # None on a build without a jam sensor (backend.fitted)
            "jam": (t.sensors.get((Sensor.JAM, None)) == 1) if "jam" in self.backend.fitted else None,
            "tile_count": s.gear, "pending_tile_count": t.pending_gear, "next_tile_count": gear,
            "tiles_in_play": {"count": s.gear, "en": en, "zh": zh},
            "dice_method": s.dice_method.value, "dealer": s.dealer,
            "dice": t.wall.to_dict() if t.wall else None,
            "fault": t.fault.to_dict() if t.fault else None,
            # every fault of the cycle, the first (``fault``) first: several at once are all listed
            "diagnoses": [d.to_dict() for d in t.diagnoses],
            "warnings": [w.to_dict() for w in t.warnings],
            "cycles": t.cycles, "link_ok": self.link_ok(), "link": self.link_status(), "error": self.error,
            "log_damaged": self.log.damaged,
        }

    def _publish(self, force: bool = False) -> None:
        t = self.rt.table
        # the push heads cycle all through a build: they count only at rest (a head left out)
        heads = None if t.busy else tuple(push_heads(t.sensors))
        key = (t.phase, t.obs.stacks, tuple(lift_states(t, t.sensors)) if t.sensors else None,
               centre_state(t.sensors), heads, t.sensors.get((Sensor.JAM, None)), t.fault,
               len(t.warnings), t.cycles, t.pending_gear, t.settings, t.wall, self.selftest_running, self.error,
               self.link_ok())
        if not force and key == self._key:
            return
        self._key = key
        self.seq += 1
        snap = self.snapshot()
        self.hub.publish({"type": "status", "seq": self.seq, "t_pub": time.time(), **snap})

    # -- requests (run on the control thread through ``call``) --
    def _operator(self, event, action: str, source: str = "page") -> None:
        reason = CY.refusal(self.rt.table, event)
        if reason:
            raise WrongState(reason)
        self.rt.feed(event)
        self.log.append("operator", {"action": action} if source == "page" else {"action": action, "source": source})

    def start_cycle(self, source: str = "page") -> dict:
        reason = CY.refusal(self.rt.table, CY.StartCycle((), {}))
        if reason:
            raise WrongState(reason)
        if self._pending is not None:
            self.rt.table, _ = CY.request_gear(self.rt.table, self._pending)
            self._pending = None
        self.rt.start_cycle()
        self.log.append("operator", {"action": "cycle"} if source == "page" else {"action": "cycle", "source": source})
        return self.snapshot()

    def clear_fault(self) -> dict:
        """Clear the latched fault: re-home. On the simulator the technician's repair of a jam is
        simulated too (the jammed tile is taken out first); other injected faults stay."""
        fault = self.rt.table.fault
        if self.link_status() is not None:  # the link may have been down: re-home from the readings of now
            self.rt.resync()
        if not self.rt.table.dice:  # latched before any cycle (a board absent at start): the re-homed
            self.rt.table = dataclasses.replace(self.rt.table, dice=self._dice())  # cycle throws these
        if self.sim and CY.refusal(self.rt.table, CY.ClearFault()) is None:
            self.backend.model.clear_jam()
            self.rt.pump(0.0)  # the jam sensor's change reaches the state machine
        self._operator(CY.ClearFault(), "clear-fault")
        self.log.append("fault-cleared", {"code": fault.code if fault else None})
        self.hub.publish({"type": "event", "kind": "fault-cleared"})
        return self.snapshot()

    def lift(self, up: bool) -> dict:
        self._operator(CY.ManualLift(up), "lift-up" if up else "lift-down")
        return self.snapshot()

    def refill(self) -> dict:
        self._operator(CY.RefillButtons(), "refill")
        return self.snapshot()

    def _button(self, action: str) -> None:
        """A button on the table (on the control thread, from an input event): the same actions as
        the page's, with the same refusals, logged as ``operator`` with ``"source": "button"``."""
        try:
            if action == "cycle":
                self.start_cycle(source="button")
            elif action == "refill":
                self._operator(CY.RefillButtons(), "refill", source="button")
            else:
                self._operator(CY.DiceButton(self._dice()), "dice", source="button")
        except WrongState as e:
            self.log.append("operator", {"action": action, "source": "button", "refused": str(e)})

    def request_stop(self) -> None:
        """Called from any thread by the stop button: a running self-test aborts at its next event
        (it holds the control thread, so the queued stop_all would wait for it otherwise)."""
        self._selftest_cancel.set()

    def stop_all(self) -> dict:
        """Stop every motor now (latched as E73 when anything moved)."""
        self.rt._stop_all()
        self.rt.feed(CY.StopAllRequest("web page"))
        self.log.append("operator", {"action": "stop-all", "state": self.rt.table.phase.value})
        return self.snapshot()

    def apply_settings(self, new: CY.Settings) -> str | None:
        """Use ``new`` from the next cycle (now when nothing moves). Returns a note or None."""
        if self.rt.table.busy:
            self._pending = new
            self.rt.table, _ = CY.request_gear(self.rt.table, new)
            return f"the machine is {self.rt.table.phase.value}: the settings apply from the next cycle"
        self.rt.table, _ = CY.request_gear(self.rt.table, new)
        self._pending = None
        return None

    def roll_dice(self, values: tuple[int, ...] | None) -> dict:
        t = self.rt.table
        if t.busy:
            raise WrongState(f"the machine is {t.phase.value}: the cycle throws the dice itself; roll when it is idle "
                             "or the walls are up")
        s = t.settings
        n = 4 if s.dice_method is Method.TWO_THROW else 2
        if values is None:
            values = tuple(self._roll(n))
            source = "electronic"
        else:
            source = "given"
            if len(values) != n:
                raise ServiceError(f"the {s.dice_method.value} method takes {n} dice values, got {len(values)}",
                                   422, "bad-value")
        b = wall_break(s.dice_method, values, dict(zip(SIDES, s.stacks)), s.dealer)
        self.rt.table = dataclasses.replace(t, wall=b, dice=tuple(values))
        self.log.append("operator", {"action": "dice", "source": source, "dice": list(values)})
        return {"source": source, **b.to_dict()}

    def run_selftest(self) -> dict:
        """The self-test (``controller.selftest``) on this thread, recorded into a trace of its own
        (docs/trace.md section 8: not into the cycles' ring, whose traces replay cycles) that is kept
        beside its event-log entry like a fault's (``GET /api/faults/{event id}/trace``). Returns the
        report (``{"passed": False, "parts": [], "aborted": why}`` when it was aborted)."""
        from controller.selftest import SelfTestAborted, run_selftest
        from controller.tracing import RecordingBackend
        t = self.rt.table
        if t.busy:
            raise WrongState(f"the machine is {t.phase.value}: the self-test needs it at rest")
        self.selftest_running = True
        self._publish()
        lines: list[dict] = []
        trace = TraceWriter(make_header(self.backend.profile, t.settings.gear, self.backend.kind, run="selftest",
                                        fitted=sorted(self.backend.fitted)), lines.append)
        try:
            if not self._stop.is_set():
                self._selftest_cancel.clear()
            stepped = SteppedBackend(self.backend, lambda: self.liveness.beat("control"),
                                     self._selftest_cancel.is_set, pace=self.rt.pace)
            report = run_selftest(RecordingBackend(stepped, trace), cancel=self._selftest_cancel.is_set).to_dict()
            trace.note(self.backend.now(), "end")
        except SelfTestAborted as e:
            report = {"passed": False, "parts": [], "aborted": str(e)}
        finally:
            self.selftest_running = False
            self.rt._stop_all()
            # the self-test read the machine's events itself: take the readings afresh
            self.rt.resync()
        self.selftest = report
        self.log.append_with_trace("selftest", report, CycleRing.lines_text(lines))
        self.hub.publish({"type": "event", "kind": "selftest"})
        return report

    def inject(self, spec: str) -> str:
        """Inject a fault (``KIND[:SIDE][:NAME=VALUE,...]``) into the simulated machine now; it acts
        physically from this moment. Raises ServiceError (404 on a real machine, 422 for a bad spec)."""
        model = self._sim_model()
        from hardware import FaultSpecError, parse_fault
        try:
            spec_obj = parse_fault(spec, "sim")
        except FaultSpecError as e:
            raise ServiceError(str(e), 422, "bad-value") from None
        model.inject(spec_obj)
        self.log.append("operator", {"action": "inject", "fault": str(spec_obj)})
        return str(spec_obj)

    def repair(self, spec: str) -> dict:
        """Repair the injected faults of ``spec``'s kind and side (``KIND[:SIDE]``; its parameters
        aside), or every one (``all``): the part works again from now. Raises ServiceError (404 on a
        real machine, 422 for a bad spec, 409 when no such fault is injected)."""
        model = self._sim_model()
        from hardware import FaultSpecError
        if spec.strip().lower() == "all":
            gone = list(model.faults)
            for f in gone:
                model.repair(f)
        else:
            try:
                gone = model.repair(spec)
            except FaultSpecError as e:
                raise ServiceError(str(e), 422, "bad-value") from None
        if not gone:
            now = ", ".join(map(str, model.faults)) or "none"
            raise ServiceError(f"no fault {spec.strip()} is injected (injected now: {now})", 409, "not-injected")
        repaired = [str(f) for f in gone]
        self.log.append("operator", {"action": "repair", "faults": repaired})
        return {"repaired": repaired, "faults": [str(f) for f in model.faults]}

    def sim_faults(self) -> dict:
        """The faults injected now and every injectable kind with its parameters."""
        from hardware.sim.faults import kinds_json
        model = self._sim_model()
        return {"faults": [str(f) for f in model.faults], "kinds": kinds_json()}

    def _sim_model(self):
        if not self.sim:
            raise ServiceError("fault injection exists only on the simulated machine (mjtable serve --sim)", 404,
                               "not-simulated")
        return self.backend.model
