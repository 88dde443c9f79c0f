"""The event log survives a process killed mid-write (SIGKILL, as close to a power cut as a test
gets), and the service survives a restart: token kept (mode 0600), score sheet and trends kept.
Also the one-line start-up errors of ``mjtable serve``."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time

import httpx

from service_support import ROOT, Server
from service.eventlog import EventLog, integrity
from service.match_api import replay
from service.match_api import sheet as match_sheet

WRITER = """
import sys
from service.eventlog import EventLog
log = EventLog(sys.argv[1])
i = 0
while True:
    i += 1
    if i % 3:
        eid = log.append("score", {"match": 0, "deal": 1 + i % 16, "winner": "E", "discarder": "S", "total": 8 + i % 20,
                                   "hand": "x" * 200, "n": i})
    else:
        eid = log.append_cycle({"cycle": i}, {"E": 2.0, "S": 2.0, "W": 2.0, "N": 2.0 + i / 1e4})
    print(eid, flush=True)
"""


def test_kill_mid_write_loses_no_committed_row(tmp_path) -> None:
    path = tmp_path / "events.sqlite"
    for round_ in range(3):
        p = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        acked = []
        # kill once the writer has committed some rows (counted, not timed: a loaded machine starts
        # the writer slowly), at a different point each round
        t_end = time.monotonic() + 60
        while len(acked) < 20 + 15 * round_ and time.monotonic() < t_end:
            line = p.stdout.readline()
            if line:
                acked.append(int(line))
        os.kill(p.pid, signal.SIGKILL)  # mid-write: the writer never stops between two rows
        p.wait()
        assert len(acked) >= 20 + 15 * round_, f"the writer committed only {len(acked)} rows in 60 s"
        assert integrity(path) == "ok"
        log = EventLog(path)
        ids = {e["id"] for e in log.events(limit=100000)}
        assert set(acked) <= ids  # every row reported committed is there
        sheet = match_sheet(replay(log.events_of(("match", "score", "draw"))))
        assert sum(sheet["match_points"]) == 0  # the sheet still adds up
        for side in "ESWN":  # every cycle row has its four lift times (one transaction)
            assert len(log.trends(last=100000)["lift_up_s"][side]["times"]) == log.count("cycle")
        log.close()


def test_the_service_survives_sigkill_and_restarts_with_its_data(tmp_path) -> None:
    s = Server(tmp_path, "--no-preload", speed=20.0)
    first_out = None
    try:
        assert stat.S_IMODE(s.token_file.stat().st_mode) == 0o600
        auth = {"Authorization": f"Bearer {s.token}"}
        r = httpx.post(s.url + "/api/match/hand", headers=auth,
                       json={"hand": "123m456m789m234p5s5s", "winner": "W", "discarder": "N"})
        assert r.status_code == 200
        assert httpx.post(s.url + "/api/cycle", headers=auth).status_code == 200
        time.sleep(0.3)  # the machine is moving
        s.proc.send_signal(signal.SIGKILL)
        s.proc.wait(10)
        first_out = s.proc.stdout.read()
    finally:
        if s.proc.poll() is None:
            s.proc.kill()
    assert s.token in first_out and "Pair a phone" in first_out  # shown at the first start
    assert "bound to 127.0.0.1" in first_out and "--host 0.0.0.0" in first_out  # no QR code of an unreachable address
    assert integrity(s.log) == "ok"

    s2 = Server(tmp_path, "--no-preload", speed=20.0)
    assert s2.token == s.token
    sheet = httpx.get(s2.url + "/api/match").json()
    assert sheet["hands"][0]["winner"] == "W" and sheet["totals"][2] == 545  # player C sits at W in hand 1
    assert httpx.post(s2.url + "/api/cycle", headers={"Authorization": f"Bearer {s.token}"}).status_code == 200
    code, out, err = s2.stop(signal.SIGTERM)
    assert code == 0, err
    assert s.token not in out  # not shown again
    log = EventLog(s.log)
    kinds = [e["kind"] for e in log.events(limit=1000)]
    assert kinds[0] == "stop" and kinds.count("start") == 2
    log.close()


def run_cli(*args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)


def test_serve_start_up_errors_are_one_line(tmp_path) -> None:
    bad = tmp_path / "table.toml"
    bad.write_text("[service]\nprot = 80\n")
    r = run_cli("serve", "--sim", "--config", str(bad), "--token-file", str(tmp_path / "t"))
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "unknown key service.prot" in r.stderr
    tok = tmp_path / "open-token"
    tok.write_text("0123456789abcdef0123\n")
    tok.chmod(0o644)
    r = run_cli("serve", "--sim", "--token-file", str(tok), "--log", str(tmp_path / "e.sqlite"))
    assert r.returncode == 1 and "readable by others" in r.stderr and r.stderr.count("\n") == 1
    r = run_cli("serve", "--fault", "disc-stall", "--token-file", str(tmp_path / "t2"))
    assert r.returncode == 1 and "--fault needs --sim" in r.stderr
    r = run_cli("serve", "--sim", "--speed", "0", "--token-file", str(tmp_path / "t3"))
    assert r.returncode == 1 and "--speed must be" in r.stderr


def damage(path) -> None:
    """Garbage over the middle of a real log file, as a card that lost a page write leaves it."""
    size = path.stat().st_size
    with open(path, "r+b") as fh:
        fh.seek(size // 2 // 4096 * 4096)
        fh.write(os.urandom(3 * 4096))


def test_a_damaged_log_is_moved_aside_and_a_new_one_started(tmp_path) -> None:
    path = tmp_path / "events.sqlite"
    log = EventLog(path)
    for i in range(3000):
        log.append("score", {"winner": "E", "discarder": "S", "total": 8 + i % 20, "hand": "x" * 100})
    log.close()
    damage(path)
    size = path.stat().st_size
    log = EventLog(path)
    try:
        d = log.damaged
        assert d is not None and d["reason"]
        moved = tmp_path / os.path.basename(d["file"])
        assert moved.exists() and moved.name.startswith("events.sqlite.damaged-20")
        assert moved.stat().st_size == size, "the damaged log is kept as it was, not deleted"
        assert integrity(path) == "ok" and log.count("score") == 0
        w = log.events("warning", 1)[0]["data"]
        assert w["code"] == "event-log-damaged" and w["file"] == d["file"]
        log.append("score", {"winner": "E", "discarder": "S", "total": 8})
        assert log.count("score") == 1
    finally:
        log.close()
    log = EventLog(path)  # the new log is sound: nothing moved at the next start
    assert log.damaged is None and log.count("score") == 1
    log.close()


def test_a_log_that_is_not_a_database_is_moved_aside_too(tmp_path) -> None:
    path = tmp_path / "events.sqlite"
    path.write_bytes(b"\x00garbage" * 2000)
    log = EventLog(path)
    assert log.damaged and "not a database" in log.damaged["reason"]
    log.close()


def test_the_service_starts_over_a_damaged_log_and_says_so(tmp_path) -> None:
    path = tmp_path / "events.sqlite"
    log = EventLog(path)
    for i in range(3000):
        log.append("operator", {"action": "x" * 100})
    log.close()
    damage(path)
    srv = Server(tmp_path, "--no-preload")
    try:
        st = httpx.get(srv.url + "/api/status").json()
        assert st["log_damaged"] and ".damaged-" in st["log_damaged"]["file"]
    finally:
        code, out, err = srv.stop()
    assert code == 0 and "Traceback" not in err
