"""A hall of many tables on one Mosquitto and one ``mjtable hall`` (issue #22, Scale).

For each size (default 10, 50, then 100 tables): a fresh Mosquitto on a free loopback port
(password file, ACL, persistence: ``tests/mqtt_broker.py``), ``mjtable hall`` in a child process,
and N tables in this process, each with its own SQLite event log with the outbox and the real
publisher (``service.mqtt.Publisher``: QoS 1, acknowledgements, retained status). The tables are
driven faster than real time: each appends events of the shapes its control loop writes (a cycle
with its lift travel times, a score, now and then a warning) at ``--rate`` events per second and
table (a real table writes one every minute or so), and reports a status with each.

Figures per size: events per second through the hall, the latency from an event's commit at its
table to its row in the hall's database (what the hall's API and page read: the page polls every
2 s on top of this), p50 and p99; the hall's CPU (share of one core over the run) and peak resident
memory; events lost (committed at a table, never in the hall's database) and duplicated (copies
the hall received and dropped by event id). The simulated machine itself does not run (100 control
loops would measure this 2-core machine, not the hall). The last line is the JSON object of the
largest size.

Usage: ``.venv/bin/python benchmarks/hall_bench.py [--tables 10,50,100] [--seconds 120] [--rate 1]``
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from service_bench import cpu_s  # noqa: E402  (a process's CPU seconds from /proc)

ACL = ("user table\ntopic write mjtable/#\ntopic write homeassistant/#\ntopic read mjtable/+/seating\n\n"
       "user hall\ntopic read mjtable/#\ntopic write mjtable/+/seating\n")


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def run(n: int, seconds: float, rate: float, tmp: Path) -> dict:
    import httpx

    from mqtt_broker import Broker, free_port
    from service.config import MqttConfig
    from service.eventlog import EventLog
    from service.mqtt import EVENT_KINDS, Publisher

    broker = Broker(tmp / "broker", {"table": "pw-table", "hall": "pw-hall"}, ACL)
    cred = tmp / "table.cred"
    cred.write_text("table:pw-table\n")
    cred.chmod(0o600)
    hall_cred = tmp / "hall.cred"
    hall_cred.write_text("hall:pw-hall\n")
    hall_cred.chmod(0o600)
    (tmp / "hall.toml").write_text(f'[mqtt]\nhost = "127.0.0.1"\nport = {broker.port}\n'
                                   f'credentials_file = "{hall_cred}"\n')
    port = free_port()
    hall = subprocess.Popen([sys.executable, "-m", "app", "hall", "--config", str(tmp / "hall.toml"),
                             "--port", str(port), "--token-file", str(tmp / "hall-token"),
                             "--database", str(tmp / "hall.sqlite")], cwd=ROOT,
                            env={**os.environ, "MJTABLE_STATE_DIR": str(tmp / "state")},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    tables: list[tuple[EventLog, Publisher]] = []
    try:
        url = f"http://127.0.0.1:{port}"
        end = time.monotonic() + 60
        while True:
            try:
                if httpx.get(url + "/", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > end or hall.poll() is not None:
                raise RuntimeError(f"the hall did not start: {hall.stderr.read() if hall.poll() is not None else ''}")
            time.sleep(0.2)
        token = (tmp / "hall-token").read_text().strip()
        auth = {"Authorization": f"Bearer {token}"}
        while not httpx.get(url + "/api/fleet", headers=auth, timeout=5).json()["broker"]["connected"]:
            time.sleep(0.2)
        for i in range(n):
            tid = f"t{i:03d}"
            log = EventLog(tmp / f"{tid}.sqlite", outbox=EVENT_KINDS)
            pub = Publisher(MqttConfig(enabled=True, host="127.0.0.1", port=broker.port, table_id=tid,
                                       credentials_file=cred, keepalive=30, discovery=False), log)
            pub.start()
            tables.append((log, pub))
        rnd = random.Random(n)
        appended = 0
        cpu0, t0 = cpu_s(hall.pid), time.monotonic()
        period = 1.0 / rate
        nxt = [t0 + rnd.uniform(0, period) for _ in range(n)]
        cycles = [0] * n
        while time.monotonic() - t0 < seconds:
            now = time.monotonic()
            i = min(range(n), key=nxt.__getitem__)
            if nxt[i] > now:
                time.sleep(min(nxt[i] - now, 0.05))
                continue
            nxt[i] += period
            log, pub = tables[i]
            k = rnd.random()
            if k < 0.6:
                cycles[i] += 1
                lift = {s: round(2.0 + 0.001 * cycles[i] + rnd.gauss(0, 0.02), 3) for s in "ESWN"}
                log.append_cycle({"cycle": cycles[i], "tile_count": 136, "stacks": dict.fromkeys("ESWN", 17),
                                  "lift_up_s": lift, "lift_nominal_s": 2.0, "lift_deadline_s": 3.0}, lift)
            elif k < 0.95:
                log.append("score", {"hand": "123m456m789m234p5s5s", "total": 12, "rules": "mcr", "legal": True})
            else:
                log.append("warning", {"code": "E22", "side": "W", "observed": "lift W late"})
            appended += 1
            pub.on_message({"type": "status", "state": "walls-up", "walls": [], "cycles": cycles[i], "warnings": []})
        gen_s = time.monotonic() - t0
        # the tail: every outbox acknowledged and every event in the hall's database (at most 120 s)
        db = sqlite3.connect(str(tmp / "hall.sqlite"), timeout=10)
        end = time.monotonic() + 120
        while time.monotonic() < end:
            if sum(log.pending() for log, _ in tables) == 0 and \
                    db.execute("SELECT COUNT(*) FROM events").fetchone()[0] >= appended:
                break
            time.sleep(0.5)
        wall = time.monotonic() - t0
        cpu = (cpu_s(hall.pid) - cpu0) / wall
        rss = peak_rss_mb(hall.pid)
        lat = [r[0] * 1000 for r in db.execute("SELECT received_t - t FROM events")]
        kept = db.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        db.close()
        dup = httpx.get(url + "/api/fleet", headers=auth, timeout=10).json()["broker"]["duplicates"]
        return {"tables": n, "seconds": round(gen_s, 1), "events": appended, "events_per_s": round(appended / gen_s, 1),
                "lost": appended - kept, "duplicated": dup, "latency_ms_p50": round(pct(lat, 0.5), 1),
                "latency_ms_p99": round(pct(lat, 0.99), 1), "hall_cpu_pct": round(100 * cpu, 1),
                "hall_rss_mb": round(rss, 1)}
    finally:
        for log, pub in tables:
            pub.stop(timeout=1)
            log.close()
        if hall.poll() is None:
            hall.send_signal(signal.SIGTERM)
            hall.wait(20)
        broker.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", default="10,50,100", help="sizes, comma-separated (default 10,50,100)")
    ap.add_argument("--seconds", type=float, default=120.0, help="seconds of events per size (default 120)")
    ap.add_argument("--rate", type=float, default=1.0, help="events per second per table (default 1)")
    a = ap.parse_args()
    sizes = [int(x) for x in a.tables.split(",")]
    results = []
    for n in sizes:
        with tempfile.TemporaryDirectory(prefix=f"hall-bench-{n}-") as tmp:
            r = run(n, a.seconds, a.rate, Path(tmp))
        results.append(r)
        print(f"{r['tables']:4d} tables  {r['events']:7d} events in {r['seconds']:.0f} s = {r['events_per_s']:7.1f}/s   "
              f"latency p50 {r['latency_ms_p50']:7.1f} ms  p99 {r['latency_ms_p99']:8.1f} ms   hall CPU "
              f"{r['hall_cpu_pct']:5.1f} %  RSS {r['hall_rss_mb']:6.1f} MB   lost {r['lost']}  duplicated "
              f"{r['duplicated']}", flush=True)
    if len(results) > 1:
        a0 = results[0]
        for r in results[1:]:
            f = r["tables"] / a0["tables"]
            print(f"{a0['tables']} -> {r['tables']} tables (x{f:g}): events/s x{r['events_per_s'] / a0['events_per_s']:.2f}, "
                  f"p99 x{r['latency_ms_p99'] / max(a0['latency_ms_p99'], 0.1):.2f}, "
                  f"hall CPU x{r['hall_cpu_pct'] / max(a0['hall_cpu_pct'], 0.1):.2f}, "
                  f"RSS x{r['hall_rss_mb'] / a0['hall_rss_mb']:.2f}")
    last = results[-1]
    print(json.dumps({k: last[k] for k in ("tables", "seconds", "events", "lost", "duplicated", "latency_ms_p50",
                                           "latency_ms_p99")} | {"hall_cpu_pct": last["hall_cpu_pct"],
                                                                 "hall_rss_mb": last["hall_rss_mb"]}))
    return 0 if all(r["lost"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
