"""The service keeps the table safe and reachable (issue #23, section 3): the systemd watchdog means
"the loops turn" (a long self-test keeps pinging, a hung loop stops the pings), a stop or SIGTERM
cancels a self-test with every motor off, and a lost or absent board is a fault on the page (E62)
that reconnects by itself, never a restart.

The watchdog is read from a fake ``NOTIFY_SOCKET`` (a unix datagram socket this test binds) with
``WATCHDOG_USEC`` = 1 s (a ping every 0.5 s); the self-tests run 4-8 s of wall time, several times
the watchdog period, as the 33 s self-test of a real table is against ``WatchdogSec=10``."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

import hardware
from controller import cycle as CY
from service.control import Control
from service.eventlog import EventLog
from service.hub import Hub
from service.liveness import Liveness
from service_support import Server


class NotifySocket:
    """A fake systemd notify socket: records (monotonic time, message) of every datagram."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(0.1)
        self.path = path
        self.got: list[tuple[float, str]] = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.sock.recv(4096)
            except (TimeoutError, OSError):
                continue
            self.got.append((time.monotonic(), data.decode()))

    def pings(self, since: float = 0.0, until: float = float("inf")) -> list[float]:
        return [t for t, m in self.got if m == "WATCHDOG=1" and since <= t <= until]

    def close(self) -> None:
        self._stop.set()
        self._t.join(1)
        self.sock.close()


@pytest.fixture
def notify(tmp_path, monkeypatch):
    n = NotifySocket(tmp_path / "notify.sock")
    monkeypatch.setenv("NOTIFY_SOCKET", str(n.path))
    monkeypatch.setenv("WATCHDOG_USEC", "1000000")
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    yield n
    n.close()


def max_gap(times: list[float], start: float, end: float) -> float:
    pts = [start, *sorted(times), end]
    return max(b - a for a, b in zip(pts, pts[1:]))


def control_over(backend, tmp_path, speed: float = 0.0, stall_s: float = 1.0) -> tuple[Control, EventLog]:
    log = EventLog(tmp_path / "events.sqlite")
    settings = CY.Settings.from_profile(backend.profile, 136)
    return Control(backend, settings, log, Hub(), speed=speed, liveness=Liveness(stall_s=stall_s)), log


def test_a_selftest_longer_than_the_watchdog_keeps_pinging(notify, tmp_path) -> None:
    """The self-test on the microcontroller link (simulated board, machine 8x real time: about 4 s
    of wall time, 8 watchdog periods) never holds the pings back; before issue #23 the ping stopped
    for the whole self-test."""
    backend = hardware.open_backend("mcu", seed=3, speed=8.0)
    control, log = control_over(backend, tmp_path)
    control.start()
    try:
        t0 = time.monotonic()
        report = control.call(control.run_selftest).result(60)
        t1 = time.monotonic()
        assert t1 - t0 > 3.0, "the self-test should take several watchdog periods of wall time"
        assert report["passed"], report
        assert max_gap(notify.pings(t0, t1), t0, t1) < 1.2  # a ping every 0.5 s, with scheduling slack
    finally:
        control.stop()
        log.close()
    assert not backend.model.running()


def test_a_hung_control_loop_stops_the_pings(notify, tmp_path) -> None:
    control, log = control_over(hardware.open_backend("sim", seed=1), tmp_path, stall_s=1.0)
    control.start()
    release = threading.Event()
    try:
        time.sleep(1.2)
        assert len(notify.pings()) >= 1, "an idle, healthy service pings"
        t_hang = time.monotonic()
        fut = control.call(lambda: release.wait(10))  # the loop is stuck in this call
        time.sleep(3.0)
        # allowed: pings up to stall_s (1 s) + one interval (0.5 s) after the hang; none after that
        assert notify.pings(t_hang + 1.7) == []
        release.set()
        fut.result(5)
        t_back = time.monotonic()
        time.sleep(1.2)
        assert notify.pings(t_back), "the pings resume when the loop turns again"
    finally:
        release.set()
        control.stop()
        log.close()


def test_a_stop_during_the_selftest_cancels_it_with_every_motor_off(tmp_path) -> None:
    """What SIGTERM does (``request_stop`` then ``stop``) on the simulator paced to real time:
    the self-test aborts within a slice and no motor runs after."""
    backend = hardware.open_backend("sim", seed=2)
    control, log = control_over(backend, tmp_path, speed=1.0)
    control.start()
    try:
        fut = control.call(control.run_selftest)
        end = time.monotonic() + 10
        while not backend.model.running() and time.monotonic() < end:
            time.sleep(0.01)
        time.sleep(0.3)
        assert control.selftest_running and backend.model.running(), "a motor of the self-test runs"
        t_stop = time.monotonic()
        control.request_stop()
        while backend.model.running() and time.monotonic() < t_stop + 5:
            time.sleep(0.005)
        assert time.monotonic() - t_stop < 0.5, "the motors stop within a slice, not at the end of the test"
        report = fut.result(5)
        assert report["passed"] is False and "stopped by the operator" in report["aborted"]
        control.stop()
        assert not control.alive and not backend.model.running()
        assert log.events("selftest", 1)[0]["data"]["aborted"]
    finally:
        control.stop()
        log.close()


def test_a_stopped_selftest_keeps_a_trace_that_replays_as_stopped(tmp_path) -> None:
    """The self-test's trace is kept beside its entry also when the operator stopped it; its replay
    (mjtable diagnose --trace) aborts where the live run did, with the same reason."""
    from controller.replay import replay_selftest
    from hardware.trace import parse_trace
    control, log = control_over(hardware.open_backend("sim", seed=2), tmp_path, speed=1.0)
    control.start()
    try:
        fut = control.call(control.run_selftest)
        time.sleep(1.0)  # the self-test is under way (about 33 s of machine time, paced to real time)
        assert control.selftest_running
        control.request_stop()
        report = fut.result(5)
        assert "stopped by the operator" in report["aborted"]
        entry = log.events("selftest", 1)[0]
        r = replay_selftest(parse_trace(log.trace(entry["id"]).splitlines(keepends=True), "selftest"))
        assert r.aborted == report["aborted"] and r.divergence is None
    finally:
        control.stop()
        log.close()


def test_sigterm_during_a_selftest_ends_the_service_at_once(tmp_path) -> None:
    srv = Server(tmp_path, speed=2.0)  # the self-test takes about 17 s of wall time here
    try:
        auth = {"Authorization": f"Bearer {srv.token}"}
        result: dict = {}

        def post() -> None:
            try:
                result["r"] = httpx.post(srv.url + "/api/selftest", headers=auth, timeout=60)
            except httpx.HTTPError as e:
                result["e"] = e

        th = threading.Thread(target=post, daemon=True)
        th.start()
        end = time.monotonic() + 10
        while not httpx.get(srv.url + "/api/status").json()["selftest_running"]:
            assert time.monotonic() < end
            time.sleep(0.05)
        time.sleep(1.0)
        t = time.monotonic()
        code, out, err = srv.stop(signal.SIGTERM)
        assert time.monotonic() - t < 6, "SIGTERM did not wait for the rest of the self-test"
        assert code == 0 and "Traceback" not in err
    finally:
        srv.stop()
    log = EventLog(srv.log)
    try:
        rep = log.events("selftest", 1)[0]["data"]
        assert rep["aborted"] and "stopped by the operator" in rep["aborted"]
        assert log.events("stop", 1), "the loop ended cleanly: motors stopped, backend closed"
    finally:
        log.close()


def test_a_silent_board_is_a_fault_then_reconnects_and_the_pings_never_stop(notify, tmp_path) -> None:
    backend = hardware.open_backend("mcu", seed=4, speed=4.0)
    control, log = control_over(backend, tmp_path)
    control.start()
    try:
        t0 = time.monotonic()
        line = backend.device
        line.line_h2d.broken = line.line_d2h.broken = True  # the board goes silent
        st = wait_for(control, lambda s: s["fault"] and s["fault"]["code"] == "E62" and not s["link_ok"], 5)
        assert st["link"]["state"] == "handshake" and "no valid frame" in st["link"]["detail"]
        time.sleep(1.5)
        line.line_h2d.broken = line.line_d2h.broken = False  # and answers again
        st = wait_for(control, lambda s: s["link_ok"], 5)
        assert st["link"] == {"connected": True, "state": "connected", "detail": None, "port": "",
                              "reconnects": 1}
        # the fault stays latched until the technician clears it; the board's own safe stop during
        # the outage (E72, delivered when the link came back) is part of it, not a second fault
        assert st["fault"]["code"] == "E62", st["fault"]
        t1 = time.monotonic()
        assert max_gap(notify.pings(t0, t1), t0, t1) < 1.2, "a lost link is a fault, not a restart"
        # clearing re-homes over the link that came back and waits; the next cycle runs to walls up
        control.call(control.clear_fault).result(10)
        st = wait_for(control, lambda s: s["state"] == "idle", 20)
        assert st["fault"] is None and control.error is None
        control.call(control.start_cycle).result(10)
        st = wait_for(control, lambda s: s["state"] == "walls-up", 40)
        assert st["fault"] is None and control.error is None
    finally:
        control.stop()
        log.close()
    assert not backend.model.running()


def wait_for(control: Control, pred, timeout: float) -> dict:
    end = time.monotonic() + timeout
    while True:
        st = control.call(control.snapshot).result(5)
        if pred(st):
            return st
        assert time.monotonic() < end, f"status never matched: {st}"
        time.sleep(0.05)


def test_serve_starts_without_its_board_shows_e62_and_connects_when_it_appears(tmp_path) -> None:
    """``mjtable serve`` on the microcontroller backend with the port missing at start: the page
    comes up with E62 and the link lost; when the port appears (a simulated board on a pty, linked
    to the configured path) the service opens it by itself and the link is up."""
    from hardware.sim.mcu_device import SimulatedMcu
    from hardware.sim.model import TableModel

    port = tmp_path / "dev" / "ttyTABLE"
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'[machine]\nbackend = "mcu"\nport = "{port}"\n')
    srv = Server(tmp_path, "--config", str(cfg), sim=False)
    device = None
    try:
        st = httpx.get(srv.url + "/api/status").json()
        assert st["backend"] == "mcu" and not st["link_ok"] and st["link"]["state"] == "no-port"
        assert st["fault"]["code"] == "E62" and str(port) in st["link"]["detail"]
        device = SimulatedMcu(TableModel(hardware.load_profile("default"), seed=1))
        port.parent.mkdir()
        os.symlink(device.host_port.port.port, port)  # the pty's name: the board is plugged in
        end = time.monotonic() + 15  # back-off 1, 2, 4, 8 s: the next try is within 8 s
        while not (st := httpx.get(srv.url + "/api/status").json())["link_ok"]:
            assert time.monotonic() < end, st["link"]
            time.sleep(0.1)
        assert st["link"]["state"] == "connected" and st["link"]["reconnects"] == 1
        code, out, err = srv.stop()
        assert code == 0 and "Traceback" not in err
    finally:
        srv.stop()
        if device is not None:
            device.close()
