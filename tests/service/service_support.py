"""Helpers of the service tests, imported by name (a module named conftest is ambiguous when
several test folders each have one)."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import Iterator

TOKEN = "test-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
ROOT = Path(__file__).resolve().parents[2]


def make_client(tmp_path: Path, faults=(), speed: float = 0.0, seed: int = 7, camera_image=None):
    """A TestClient over a sim machine run as fast as possible (speed 0)."""
    from fastapi.testclient import TestClient

    import hardware
    from controller import cycle as CY
    from service.app import create_app
    from service.control import Control
    from service.eventlog import EventLog
    from service.hub import Hub
    from service.scorer import Scorer

    backend = hardware.open_backend("sim", seed=seed, faults=list(faults))
    settings = CY.Settings.from_profile(backend.profile, 136)
    log = EventLog(tmp_path / "events.sqlite")
    control = Control(backend, settings, log, Hub(), speed=speed, dice=lambda n: (3, 4, 2, 5)[:n])
    app = create_app(control, log, TOKEN, Scorer(camera_image), max_upload_bytes=2 * 1024 * 1024)
    return TestClient(app), control, log


def status_until(client, pred, timeout: float = 5.0) -> dict:
    """/api/status once ``pred(status)`` holds, or the last one after ``timeout`` s (the status is
    the control loop's latest snapshot, so a change shows a moment later)."""
    end = time.monotonic() + timeout
    while True:
        st = client.get("/api/status").json()
        if pred(st) or time.monotonic() > end:
            return st
        time.sleep(0.05)


def wait_state(client, states, timeout: float = 20.0) -> dict:
    """Poll /api/status until its state is one of ``states``; returns the status."""
    end = time.monotonic() + timeout
    while True:
        st = client.get("/api/status").json()
        if st["state"] in states:
            return st
        if time.monotonic() > end:
            raise AssertionError(f"state {st['state']} after {timeout} s, waited for {states}")
        time.sleep(0.02)


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``mjtable serve --sim`` in a child process on a free port (``sim=False``: the machine of
    the ``--config`` in ``args``; ``env``: more environment variables)."""

    def __init__(self, tmp: Path, *args: str, speed: float = 8.0, sim: bool = True,
                 env: dict[str, str] | None = None, ready_timeout: float = 30.0) -> None:
        import os
        import subprocess
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token_file = tmp / "token"
        self.log = tmp / "events.sqlite"
        env = {**os.environ, "MJTABLE_STATE_DIR": str(tmp / "state"), "PYTHONUNBUFFERED": "1", **(env or {})}
        machine = ["--sim", "--seed", "5", "--speed", str(speed)] if sim else []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app", "serve", *machine, "--port", str(self.port),
             "--token-file", str(self.token_file), "--log", str(self.log), *args],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            self.wait_ready(ready_timeout)
        except BaseException:  # not left running behind the failed test
            self.proc.kill()
            self.proc.communicate(timeout=20)
            raise
        self.token = self.token_file.read_text().strip()

    def wait_ready(self, timeout: float = 30.0) -> None:
        import httpx
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise AssertionError(f"the service ended: {self.proc.stderr.read()}")
            try:
                if httpx.get(self.url + "/api/status", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise AssertionError("the service did not start")

    def stop(self, sig=None) -> tuple[int, str, str]:
        import signal
        if self.proc.poll() is None:
            self.proc.send_signal(sig or signal.SIGTERM)
        out, err = self.proc.communicate(timeout=20)
        return self.proc.returncode, out, err


@contextlib.contextmanager
def serving(tmp: Path, *args: str, speed: float = 8.0) -> Iterator[Server]:
    """A ``Server`` that must end cleanly (exit code 0) when the block ends."""
    s = Server(tmp, *args, speed=speed)
    yield s
    code, _, err = s.stop()
    assert code == 0, err


def wait_js(page, expression: str, timeout: float = 15.0) -> None:
    """Poll ``expression`` in the page until it is truthy (``page.evaluate`` goes through the
    DevTools protocol, which the page's Content-Security-Policy does not block; Playwright's own
    ``wait_for_function`` evaluates a string inside the page, which the CSP refuses)."""
    end = time.monotonic() + timeout
    while not page.evaluate(expression):
        if time.monotonic() > end:
            raise AssertionError(f"{expression} still false after {timeout} s")
        time.sleep(0.05)
