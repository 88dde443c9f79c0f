"""The table service under load: status requests per second and the event latency from the
controller to a page (server-sent events) with the simulated machine cycling; CPU use while idle
and resident memory with the camera pipeline loaded.

Runs ``mjtable serve --sim`` in a child process on this machine and prints each figure beside its
target for the smallest Pi (a Raspberry Pi 4 with 2 GB: under 2 % of one core idle, under 250 MB
resident). Usage: ``.venv/bin/python benchmarks/service_bench.py [--seconds 5] [--idle 10]``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (the photo worker, multiprocessing's resource tracker)."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def wait_until_serving(proc: subprocess.Popen, url: str, timeout: float) -> str | None:
    """Poll ``url``/api/status until it answers 200 (None), or say why not (the process ended: its
    standard error; or the time ran out)."""
    end = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(url + "/api/status", timeout=1).status_code == 200:
                return None
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            return proc.stderr.read()[-500:] if proc.stderr else f"exit code {proc.returncode}"
        if time.monotonic() > end:
            return f"no answer within {timeout:.0f} s"
        time.sleep(0.1)


def hand_photo(folder: Path) -> Path | None:
    """A photo of a hand built from the real tile crops in ../shared/data (None when absent)."""
    try:
        import cv2
        import numpy as np
        sys.path.insert(0, str(ROOT / "tests" / "vision"))
        from vision.synth import compose_scene
        from vision_scenes import parse_row, real_faces
        faces = real_faces()
    except Exception:  # noqa: BLE001 - the memory figure is then without a photo scored
        return None
    img, _ = compose_scene([parse_row("1m 2m 3m 4m 5m 6m 7m 8m 9m E E E N | N")], faces, np.random.default_rng(1),
                           size=(600, 800))
    p = folder / "hand.png"
    cv2.imwrite(str(p), img)
    return p


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="length of the load run (s)")
    ap.add_argument("--idle", type=float, default=10.0, help="length of the idle CPU measurement (s)")
    ap.add_argument("--speed", type=float, default=8.0, help="simulated machine speed while cycling")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mjtable-bench-"))
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "MJTABLE_STATE_DIR": str(tmp / "state")}
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "serve", "--sim", "--port", str(port),
                             "--speed", str(args.speed), "--token-file", str(tmp / "token"),
                             "--log", str(tmp / "events.sqlite")], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        why = wait_until_serving(proc, url, 30)
        if why is not None:
            print("service did not start:", why, file=sys.stderr)
            return 1
        auth = {"Authorization": "Bearer " + (tmp / "token").read_text().strip()}
        print(f"mjtable service benchmark ({os.cpu_count()} cores here; targets for a Raspberry Pi 4, 2 GB)")

        # --- the camera pipeline loaded: score one photo ---
        photo = hand_photo(tmp)
        if photo is not None:
            r = httpx.post(url + "/api/score/photo", headers=auth, timeout=60,
                           files={"photo": ("hand.png", photo.read_bytes(), "image/png")})
            print(f"photo scored: {r.status_code}, hand {r.json().get('recognition', {}).get('hand')}")
        else:
            time.sleep(5)  # the recognizer is preloaded in the background at start

        # --- idle CPU ---
        time.sleep(1.0)
        c0, t0 = cpu_s(proc.pid), time.monotonic()
        time.sleep(args.idle)
        idle = 100 * (cpu_s(proc.pid) - c0) / (time.monotonic() - t0)
        rss_service = rss_mb(proc.pid)
        rss = rss_service + sum(rss_mb(c) for c in children(proc.pid))  # photos are read in a worker process

        # --- load: cycling machine, a page listening, status requests ---
        lat: list[float] = []
        stop = threading.Event()

        def listen():
            with httpx.Client(timeout=None) as c, c.stream("GET", url + "/api/events") as r:
                for line in r.iter_lines():
                    if stop.is_set():
                        return
                    if line.startswith("data: "):
                        m = json.loads(line[6:])
                        if m.get("type") == "status" and "t_pub" in m:
                            lat.append((time.time() - m["t_pub"]) * 1000)

        def cycle():
            with httpx.Client(timeout=10) as c:
                while not stop.is_set():
                    st = c.get(url + "/api/status").json()["state"]
                    if st in ("idle", "walls-up"):
                        c.post(url + "/api/cycle", headers=auth)
                    time.sleep(0.1)

        threads = [threading.Thread(target=listen, daemon=True), threading.Thread(target=cycle, daemon=True)]
        for th in threads:
            th.start()
        time.sleep(0.5)
        lat.clear()
        n = 0
        c0, t0 = cpu_s(proc.pid), time.monotonic()
        with httpx.Client(timeout=10) as c:
            while time.monotonic() - t0 < args.seconds:
                c.get(url + "/api/status").raise_for_status()
                n += 1
        dt = time.monotonic() - t0
        busy = 100 * (cpu_s(proc.pid) - c0) / dt
        cycles = httpx.get(url + "/api/status").json()["cycles"]
        stop.set()
        lat_sorted = sorted(lat)
        print(f"status requests:   {n / dt:8.0f} /s  (one client, machine cycling: {cycles} cycles done; "
              f"service CPU {busy:.0f} % of one core)")
        if lat_sorted:
            p95 = lat_sorted[int(0.95 * (len(lat_sorted) - 1))]
            print(f"event latency:     {statistics.median(lat_sorted):8.1f} ms median, {p95:.1f} ms p95 "
                  f"({len(lat_sorted)} status events, controller -> page over SSE)")
        print(f"idle CPU:          {idle:8.2f} % of one core   (target < 2 %)")
        print(f"resident memory:   {rss:8.0f} MB   (target < 250 MB; the service process {rss_service:.0f} MB and "
              f"its photo worker; camera pipeline {'loaded, a photo scored' if photo else 'preloaded'})")
        return 0
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()


if __name__ == "__main__":
    sys.exit(main())
