"""Liveness: the systemd watchdog means "the process is alive and its loops turn".

Two pieces:

* :class:`Liveness` keeps one beat per loop (the control loop, the HTTP server's event loop) and a
  thread of its own that pings the watchdog (``WATCHDOG=1``) every half ``WatchdogSec`` while
  every loop has beaten within its allowance. A hung loop stops the pings, and systemd restarts
  the service ``WatchdogSec`` later. The link to the table's board plays no part: a lost link is a
  fault shown on the page (E62), not a restart (issue #23, section 3).
* :class:`SteppedBackend` is the backend as a long operation (the self-test, about 33 s on a real
  table) sees it: every wait is cut into slices of :data:`SLICE_S` machine seconds, and between
  two slices the control loop beats, the operator's stop (or SIGTERM) is looked at, and a
  simulated machine is paced to wall time. The self-test thus keeps the loop live while it runs,
  and a self-test that hangs inside the backend stops the pings like any hung loop.

Source: systemd's ``sd_notify(3)`` and ``systemd.service(5)`` (``WatchdogSec=``).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from hardware.errors import HardwareTimeout

from . import systemd

#: wall seconds a loop may go without a beat before the watchdog pings stop (the control loop
#: turns at least every 0.5 s when idle, every tick while the machine moves)
STALL_S = 5.0
#: machine seconds of one slice of a long operation's wait (SteppedBackend)
SLICE_S = 0.1


class Liveness:
    """Beats of the service's loops and the watchdog pinger thread.

    Args:
        interval: seconds between two pings (None: ``systemd.watchdog_interval()``, half of
            ``WATCHDOG_USEC``; no thread when there is no watchdog).
        stall_s: seconds a loop may go without a beat before the pings stop.
        clock: monotonic clock (s).
    """

    def __init__(self, interval: float | None = None, stall_s: float = STALL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = systemd.watchdog_interval() if interval is None else interval
        self.stall_s = stall_s
        self.clock = clock
        self._beats: dict[str, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.pings = 0

    def beat(self, loop: str) -> None:
        """``loop`` turned now (cheap: call it every turn)."""
        self._beats[loop] = self.clock()

    def forget(self, loop: str) -> None:
        """``loop`` ended on purpose (it no longer counts)."""
        self._beats.pop(loop, None)

    def stalled(self) -> list[str]:
        """The loops that have not beaten within ``stall_s`` (empty: all alive)."""
        now = self.clock()
        return sorted(k for k, t in list(self._beats.items()) if now - t > self.stall_s)

    def alive(self) -> bool:
        """Every loop beat within ``stall_s`` (and at least one beat was seen)."""
        return bool(self._beats) and not self.stalled()

    def start(self) -> None:
        """Start the pinger thread (nothing when there is no watchdog). Idempotent."""
        if not self.interval or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="mjtable-watchdog", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop pinging (the service is ending)."""
        self._stop.set()

    def _run(self) -> None:
        assert self.interval
        while not self._stop.wait(self.interval):
            if self.alive() and systemd.notify("WATCHDOG=1"):
                self.pings += 1


class SteppedBackend:
    """``backend`` as a long operation sees it: waits cut into slices of ``SLICE_S`` machine
    seconds; between two slices ``beat()`` is called, a simulated machine is paced (``pace``
    wall s per machine s) and ``cancel()`` is looked at: when it answers True the wait returns
    at once with the events seen so far (the caller, ``controller.selftest``, then stops every
    motor and aborts).

    Only ``advance`` and ``run_until`` change; every other attribute is the backend's. Events
    are passed to ``run_until``'s predicate in order, as the backend does: the wrapped predicate
    keeps them, so a slice that times out loses nothing.
    """

    def __init__(self, backend: Any, beat: Callable[[], None], cancel: Callable[[], bool],
                 pace: float = 0.0) -> None:
        self._b = backend
        self._beat = beat
        self._cancel = cancel
        self._pace = pace

    def __getattr__(self, name: str) -> Any:
        return getattr(self._b, name)

    def _slice_done(self, t_machine: float, t_wall: float) -> None:
        self._beat()
        if self._pace:
            time.sleep(max(0.0, (self._b.now() - t_machine) * self._pace - (time.monotonic() - t_wall)))

    def advance(self, dt: float) -> list:
        """``backend.advance(dt)`` in slices (fewer events when cancelled part-way)."""
        seen: list = []
        end = self._b.now() + dt
        while True:
            t_m, t_w = self._b.now(), time.monotonic()
            seen += self._b.advance(max(0.0, min(SLICE_S, end - t_m)))
            self._slice_done(t_m, t_w)
            if self._b.now() >= end or self._cancel():
                return seen

    def run_until(self, predicate: Callable[[Any], bool], timeout: float) -> list:
        """``backend.run_until`` in slices. Raises HardwareTimeout after ``timeout`` machine seconds."""
        seen: list = []

        def pred(ev: Any) -> bool:
            seen.append(ev)
            return predicate(ev)

        end = self._b.now() + timeout
        while True:
            t_m, t_w = self._b.now(), time.monotonic()
            try:
                self._b.run_until(pred, max(1e-3, min(SLICE_S, end - t_m)))
                self._beat()
                return seen
            except HardwareTimeout:
                pass
            self._slice_done(t_m, t_w)
            if self._cancel():
                return seen
            if self._b.now() >= end:
                raise HardwareTimeout(f"condition not met within {timeout} s of machine time "
                                      f"({len(seen)} events seen)")
