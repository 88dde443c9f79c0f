"""In-process command execution, shared by the ``sim`` and ``gpio`` backends.

:class:`LocalExecutor` gives a machine driven from the Pi itself the microcontroller's
command rules: it runs the same :class:`firmware_bridge.executor.CommandCore` as the
device engine, and packs the goal commands and decodes its reports into the table's events with
the link's own codec (:mod:`firmware_bridge.codec`), so that the events are the ones the MCU
backend gives. :class:`LocalBackend` adds the event queue, the clock
and time stepping (virtual: the machine model's discrete events and the motion
deadlines, in order; real: a ticker thread).
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any, Callable

from firmware_bridge import catalogue as C
from firmware_bridge.codec import decode_event, pack_command, readings_to_mask
from firmware_bridge.executor import CommandCore

from .errors import BackendError, CommandError, HardwareTimeout
from .interface import Event
from .profile import Profile
from .vocabulary import Command, LinkHealth


class LocalExecutor:
    """Executes commands against a :class:`firmware_bridge.machine.Machine` with the
    microcontroller's own rules (:class:`firmware_bridge.executor.CommandCore`), and turns
    its reports into the table's events (:mod:`hardware.vocabulary`), as the MCU backend does.

    Args:
        machine: motor outputs (``start``, ``stop``, ``stop_all``, ``set_gear``,
            ``set_lights``).
        now_ms: clock in integer ms of machine time.
        emit: called with every event (Reply, Status, SensorChanged, StacksCounted,
            MotionDone, Fault).
        read: ``read(sensor code, side code) -> 0/1`` input reading at power-on (wire codes:
            the machine behind the engine is addressed in them).
        gear: gear at power-on (tiles).
    """

    def __init__(self, machine: Any, now_ms: Callable[[], int], emit: Callable[[Event], None],
                 read: Callable[[int, int], int], gear: int = 136) -> None:
        self.now_ms = now_ms
        self.emit = emit
        mask = readings_to_mask(read)
        self.core = CommandCore(machine, self._report, now_ms(), gear, mask)
        self.table = self.core.table

    @property
    def stop_reason(self) -> int:
        return self.core.stop_reason

    def _report(self, mtype: int, payload: bytes, essential: bool) -> bool:
        self.emit(decode_event(mtype, payload))
        return True

    def on_sensor(self, sensor: int, side: int, value: int) -> None:
        """An input reading changed."""
        self.core.sensor_changed(sensor, side, value, self.now_ms())

    def tick(self) -> None:
        self.core.tick(self.now_ms())

    def stop_all(self) -> None:
        self.core.now = self.now_ms()
        self.table.stop_all(C.OUTCOME_STOPPED, self.core.now)

    def execute(self, cmd_id: int, command: Command) -> None:
        """Execute the goal ``command`` (already validated by its dataclass); emits the Reply
        or Status first, then whatever the motion produces."""
        self.core.execute(*pack_command(cmd_id, command), self.now_ms())


class LocalBackend:
    """Base of the ``sim`` and ``gpio`` backends (see :class:`TableBackend`).

    With a machine ``model`` (virtual clock) time passes only in ``advance`` /
    ``run_until``; without one (real hardware) a ticker thread checks the deadlines
    every ``tick_s`` and ``advance`` sleeps.
    """

    kind = "local"

    def __init__(self, profile: Profile, model: Any | None = None, tick_s: float = 0.005):
        self.profile = profile
        self.model = model
        self.lock = threading.RLock()
        self._events: list[Event] = []
        self._next_id = 1
        self._closed = False
        self._t0 = time.monotonic()
        self._ticker: threading.Thread | None = None
        self._tick_s = tick_s
        self.executor: LocalExecutor | None = None

    # -------------------------------------------------------------- the clock
    def now(self) -> float:
        if self.model is not None:
            return self.model.now
        return time.monotonic() - self._t0

    def now_ms(self) -> int:
        return int(round(self.now() * 1000))

    def _emit(self, ev: Event) -> None:
        self._events.append(ev)

    def _start_ticker(self) -> None:
        def run() -> None:
            while not self._closed:
                with self.lock:
                    if self.executor is not None:
                        self.executor.tick()
                    self._on_tick()
                time.sleep(self._tick_s)
        self._ticker = threading.Thread(target=run, name="mjtable-motion-tick", daemon=True)
        self._ticker.start()

    # ------------------------------------------------------------- interface
    def submit(self, command: Command) -> int:
        if self._closed:
            raise BackendError(f"{self.kind} backend is closed")
        if not isinstance(command, Command):
            raise CommandError(f"not a table command: {command!r}")
        with self.lock:
            self._sync()
            cmd_id = self._next_id
            self._next_id = cmd_id % 0xFFFF + 1
            assert self.executor is not None
            self.executor.execute(cmd_id, command)
            self._sync()
        return cmd_id

    def events(self) -> list[Event]:
        with self.lock:
            out, self._events = self._events, []
        return out

    def _sync(self) -> None:
        """Hook: bring the simulated machine up to date with the outputs (gpio)."""

    def _on_tick(self) -> None:
        """Hook: called after every deadline tick (the ticker thread, or a virtual-time
        step), with the lock held (gpio: the heartbeat output)."""

    def _step_to(self, t_end: float) -> None:
        model, ex = self.model, self.executor
        assert ex is not None
        while True:
            self._sync()
            nd = ex.table.next_due()
            t_next = min(t_end, model.next_event_time(),
                         math.inf if nd is None else nd / 1000.0)
            model.run_to(max(t_next, model.now))
            ex.tick()
            self._on_tick()
            if t_next >= t_end:
                self._sync()
                return

    def advance(self, dt: float) -> list[Event]:
        if dt < 0:
            raise ValueError(f"dt must be >= 0 s, got {dt!r}")
        if self.model is None:
            time.sleep(dt)
        else:
            with self.lock:
                self._step_to(self.model.now + dt)
        return self.events()

    def run_until(self, predicate: Callable[[Event], bool], timeout: float,
                  step: float = 0.05) -> list[Event]:
        seen: list[Event] = []
        end = self.now() + timeout
        while True:
            batch = self.events()
            for i, ev in enumerate(batch):
                seen.append(ev)
                if predicate(ev):
                    with self.lock:
                        self._events[:0] = batch[i + 1:]  # later events stay queued
                    return seen
            if self.now() >= end:
                raise HardwareTimeout(f"condition not met within {timeout} s of machine time "
                                      f"({len(seen)} events seen)")
            self._advance_one(min(step, end - self.now()))

    def _advance_one(self, dt: float) -> None:
        if self.model is None:
            time.sleep(dt)
        else:
            with self.lock:
                # stop at the first event so that run_until returns at the right moment
                n = len(self._events)
                t_end = self.model.now + dt
                while not len(self._events) > n and self.model.now < t_end:
                    nd = self.executor.table.next_due()
                    nxt = min(t_end, self.model.next_event_time(),
                              math.inf if nd is None else nd / 1000.0)
                    self._step_to(max(nxt, self.model.now))

    def health(self) -> LinkHealth | None:
        """None: a local backend has no link to a board."""
        return None

    def stop_all(self) -> None:
        with self.lock:
            if self.executor is not None:
                self.executor.stop_all()
            self._sync()

    def close(self) -> None:
        if self._closed:
            return
        try:
            self.stop_all()
        finally:
            self._closed = True
            self._release()

    def _release(self) -> None:
        """Hook: release pins."""

    def __enter__(self) -> "LocalBackend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
