"""``mjtable serve`` as a process on the table's network (issue #18 section 4): a port in use, TLS,
open files and connections under a low file limit, and the failed-accept log."""

from __future__ import annotations

import logging
import os
import resource
import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from service_support import ROOT, Server, free_port


def _serve(tmp: Path, *args: str, nofile: int | None = None) -> subprocess.Popen:
    env = {**os.environ, "MJTABLE_STATE_DIR": str(tmp / "state"), "PYTHONUNBUFFERED": "1"}

    def limit() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    return subprocess.Popen([sys.executable, "-m", "app", "serve", "--sim", "--no-preload",
                             "--token-file", str(tmp / "token"), "--log", str(tmp / "events.sqlite"), *args],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=limit)


def test_a_port_in_use_is_one_line_and_exit_1_before_anything_is_opened(tmp_path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        p = _serve(tmp_path, "--port", str(port))
        out, err = p.communicate(timeout=60)
    assert p.returncode == 1 and out == ""
    assert err.count("\n") == 1 and f"port {port} on 127.0.0.1 is already in use" in err and "--port" in err
    assert not (tmp_path / "events.sqlite").exists() and not (tmp_path / "token").exists()


def _self_signed(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                    "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    key.chmod(0o600)
    return cert, key


@pytest.mark.skipif(not Path("/usr/bin/openssl").exists(), reason="needs the openssl command")
def test_tls_from_the_configuration(tmp_path) -> None:
    cert, key = _self_signed(tmp_path)
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'[service]\ntls_cert = "{cert}"\ntls_key = "{key}"\n')
    port = free_port()
    p = _serve(tmp_path, "--config", str(cfg), "--port", str(port))
    try:
        end = time.monotonic() + 30
        while True:
            try:
                r = httpx.get(f"https://127.0.0.1:{port}/api/status", verify=ssl.create_default_context(cafile=str(cert)), timeout=2)
                break
            except httpx.HTTPError:
                assert p.poll() is None and time.monotonic() < end, p.stderr.read() if p.poll() is not None else ""
                time.sleep(0.2)
        assert r.status_code == 200 and r.json()["state"] == "idle"
        with pytest.raises(httpx.HTTPError):  # plain HTTP on the TLS port gets nowhere
            httpx.get(f"http://127.0.0.1:{port}/api/status", timeout=2).raise_for_status()
    finally:
        p.send_signal(signal.SIGTERM)
        out, _ = p.communicate(timeout=30)
    assert f"https://localhost:{port}/" in out


@pytest.mark.parametrize("toml,words", [
    ('tls_cert = "{cert}"', "[service] tls_cert needs tls_key"),
    ('tls_key = "{key}"', "[service] tls_key needs tls_cert"),
    ('tls_cert = "{cert}"\ntls_key = "{tmp}/missing.pem"', "[service] tls_key: cannot read"),
    ('tls_cert = "{key}"\ntls_key = "{key}"', "are not a PEM certificate and its private key"),
    ('allowed_hosts = "mjtable.local"', "service.allowed_hosts has the wrong type"),
    ('allowed_hosts = ["a b"]', "service.allowed_hosts must be a list of host names"),
    ("max_streams = 0", "service.max_streams must be 1-1000"),
])
@pytest.mark.skipif(not Path("/usr/bin/openssl").exists(), reason="needs the openssl command")
def test_bad_service_keys_are_one_line_naming_the_key(tmp_path, toml, words) -> None:
    cert, key = _self_signed(tmp_path)
    cfg = tmp_path / "table.toml"
    cfg.write_text("[service]\n" + toml.format(cert=cert, key=key, tmp=tmp_path) + "\n")
    p = _serve(tmp_path, "--config", str(cfg), "--port", str(free_port()))
    out, err = p.communicate(timeout=60)
    assert p.returncode == 1 and err.count("\n") == 1 and words in err, err
    assert not (tmp_path / "events.sqlite").exists()


def test_status_and_stop_answer_with_the_file_limit_full_of_idle_connections(tmp_path) -> None:
    """Under a file limit of 128, 300 connections that send nothing: the oldest idle ones are
    closed to make room, so the accept loop never runs out of files, status and stop answer, and
    the log has one line about it, no traceback."""
    port = free_port()
    p = _serve(tmp_path, "--port", str(port), nofile=128)
    held: list[socket.socket] = []
    try:
        Server.wait_ready(type("S", (), {"proc": p, "url": f"http://127.0.0.1:{port}"})())
        token = (tmp_path / "token").read_text().strip()
        for _ in range(300):
            s = socket.create_connection(("127.0.0.1", port))
            held.append(s)
        time.sleep(0.5)
        with httpx.Client(timeout=5) as c:
            t0 = time.monotonic()
            assert c.get(f"http://127.0.0.1:{port}/api/status").status_code == 200
            r = c.post(f"http://127.0.0.1:{port}/api/stop", headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == 200 and time.monotonic() - t0 < 2.0
        # most of the idle ones were closed by the service
        closed = 0
        for s in held:
            s.settimeout(0.01)
            try:
                closed += s.recv(1) == b""
            except (ConnectionResetError, BrokenPipeError):
                closed += 1
            except TimeoutError:
                pass
        assert closed >= 300 - 88
    finally:
        for s in held:
            s.close()
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=30)
    assert "Traceback" not in err and "out of system resource" not in err
    assert err.count("to make room") == 1, err


def test_a_failed_accept_is_one_line_per_interval_without_traceback() -> None:
    import asyncio

    from service.connections import AcceptErrorFilter, install_accept_filter
    f = install_accept_filter(60.0)
    assert install_accept_filter() is f  # once
    logger = logging.getLogger("asyncio")
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    h = Keep()
    logger.addHandler(h)
    try:
        loop = asyncio.new_event_loop()
        for _ in range(50):  # what asyncio's accept loop does on EMFILE, once a second
            loop.call_exception_handler({"message": AcceptErrorFilter.PREFIX,
                                         "exception": OSError(24, "Too many open files")})
        loop.close()
        f._last = -float("inf")  # the interval has passed
        logger.error(AcceptErrorFilter.PREFIX, exc_info=OSError(24, "Too many open files"))
        logger.error("something else")
    finally:
        logger.removeHandler(h)
        logger.removeFilter(f)
    assert len(records) == 3 and all(r.exc_info is None for r in records[:2])
    assert "Too many open files" in records[0].getMessage() and "49 more" in records[1].getMessage()
    assert records[2].getMessage() == "something else"


def test_the_open_file_limit_and_the_connection_cap() -> None:
    from service.connections import Connections, connection_cap, raise_nofile

    soft, hard = raise_nofile()
    assert soft == resource.getrlimit(resource.RLIMIT_NOFILE)[0] and (soft == hard or soft == 65536)
    assert connection_cap(4096) == (3936, 32) and connection_cap(1024) == (864, 32)
    assert connection_cap(128) == (88, 8) and connection_cap(40) == (32, 8)

    class Transport:
        def __init__(self) -> None:
            self.aborted = False

        def abort(self) -> None:
            self.aborted = True

    class Proto:
        def __init__(self, busy: bool, client=("10.0.0.1", 1)) -> None:
            self.transport = Transport()
            self.client = client
            self.cycle = type("C", (), {"response_complete": not busy})()

    conns = Connections(2)
    a, b, c = Proto(busy=True), Proto(busy=False), Proto(busy=False)
    for p_ in (a, b, c):
        conns.opened(p_)
    assert b.transport.aborted and not a.transport.aborted and not c.transport.aborted and len(conns) == 2
    d = Proto(busy=True)
    conns.opened(d)  # c is idle: it goes
    assert c.transport.aborted and len(conns) == 2
    e = Proto(busy=False)
    conns.opened(e)  # every other one is busy: the new one goes
    assert e.transport.aborted and conns.closed_for_room == 3
    f = Proto(busy=True, client=("10.0.0.7", 99))
    conns.closed(a)
    conns.opened(f)
    assert conns.abort(["10.0.0.7", 99]) and f.transport.aborted and not conns.abort(None)
