"""A 50 MP photo scored by the table service: the service process's peak memory, the size of the
answer and how long the status stalls meanwhile, for this tree and for a reference tree (by
default ``main``, taken with ``git archive``), measured in the same run.

Each tree runs ``mjtable serve --sim`` in a child process (``[service] max_upload_mb = 32``). A
small photo is scored first (the models load), the peak resident size is reset
(``/proc/PID/clear_refs``), then an 8192x6144 JPEG (the demo scene scaled up) is uploaded; the
figure is the process's ``VmHWM`` after the answer, and, where photos are read in a worker process,
the worker's. ``GET /api/status`` is polled all the while; its slowest answer is printed.

Usage: ``.venv/bin/python benchmarks/photo_memory.py [--ref main] [--size 8192x6144]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from service_bench import children, wait_until_serving  # noqa: E402  (benchmarks/ is the script's folder)

ROOT = Path(__file__).resolve().parents[1]


def status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def big_photo(size: tuple[int, int]) -> bytes:
    import cv2
    img = cv2.imread(str(ROOT / "demo" / "table_hand.jpg"))
    big = cv2.resize(img, size, interpolation=cv2.INTER_CUBIC)
    ok, data = cv2.imencode(".jpg", big, [cv2.IMWRITE_JPEG_QUALITY, 92])
    return data.tobytes()


def run(tree: Path, photo: bytes, small: bytes, tmp: Path) -> dict:
    port = 18000 + os.getpid() % 1000 + (1 if tree == ROOT else 0)
    cfg = tmp / "table.toml"
    cfg.write_text("[service]\nmax_upload_mb = 32\n")
    env = {**os.environ, "MJTABLE_STATE_DIR": str(tmp / "state"), "PYTHONPATH": str(tree)}
    proc = subprocess.Popen([sys.executable, "-m", "app", "serve", "--sim", "--speed", "10", "--config",
                             str(cfg), "--port", str(port), "--token-file", str(tmp / "token"), "--log",
                             str(tmp / "events.sqlite"), "--no-preload"], cwd=tree, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        why = wait_until_serving(proc, url, 60)
        if why is not None:
            raise SystemExit(f"{tree}: the service did not start: {why}")
        auth = {"Authorization": f"Bearer {(tmp / 'token').read_text().strip()}"}
        r = httpx.post(url + "/api/score/photo", headers=auth, files={"photo": ("small.jpg", small, "image/jpeg")},
                       timeout=120)
        r.raise_for_status()
        workers = children(proc.pid)
        for pid in [proc.pid, *workers]:
            Path(f"/proc/{pid}/clear_refs").write_text("5")  # the peak (VmHWM) starts again from now
        base = status_kb(proc.pid, "VmRSS")
        worst = [0.0]
        stop = threading.Event()

        def poll() -> None:
            with httpx.Client() as c:
                while not stop.is_set():
                    t = time.perf_counter()
                    c.get(url + "/api/status", timeout=30)
                    worst[0] = max(worst[0], time.perf_counter() - t)
                    time.sleep(0.02)

        th = threading.Thread(target=poll, daemon=True)
        th.start()
        t0 = time.perf_counter()
        r = httpx.post(url + "/api/score/photo", headers=auth, files={"photo": ("big.jpg", photo, "image/jpeg")},
                       timeout=300)
        seconds = time.perf_counter() - t0
        stop.set()
        th.join()
        d = r.json()
        annotated = d.get("annotated") or ""
        img_bytes = len(annotated) if annotated.startswith("data:") else len(httpx.get(url + annotated).content)
        workers = children(proc.pid)
        return {"status": r.status_code, "hand": (d.get("recognition") or {}).get("hand"),
                "peak_mb": status_kb(proc.pid, "VmHWM") / 1024, "base_mb": base / 1024,
                "worker_peak_mb": [status_kb(w, "VmHWM") / 1024 for w in workers],
                "json_bytes": len(r.content), "annotated_bytes": img_bytes,
                "inline": annotated.startswith("data:"), "seconds": seconds, "status_worst_s": worst[0]}
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", default="main", help="the reference tree's git ref (default main)")
    ap.add_argument("--size", default="8192x6144", help="the big photo's WIDTHxHEIGHT (default 8192x6144)")
    args = ap.parse_args()
    w, h = (int(v) for v in args.size.lower().split("x"))
    import cv2
    photo = big_photo((w, h))
    small = cv2.imencode(".jpg", cv2.imread(str(ROOT / "demo" / "table_hand.jpg")))[1].tobytes()
    print(f"photo: {w}x{h} JPEG, {len(photo) / 1e6:.1f} MB")
    rows = []
    with tempfile.TemporaryDirectory(prefix="mjtable-photo-bench-") as tmpd:
        tmp = Path(tmpd)
        ref_tree = tmp / "ref"
        ref_tree.mkdir()
        arch = subprocess.run(["git", "-C", str(ROOT), "archive", args.ref], capture_output=True)
        if arch.returncode != 0:
            print(f"reference {args.ref!r}: cannot take it from git ({arch.stderr.decode().strip()}); skipped")
        else:
            subprocess.run(["tar", "-x", "-C", str(ref_tree)], input=arch.stdout, check=True)
            (tmp / "r").mkdir()
            rows.append((f"reference ({args.ref})", run(ref_tree, photo, small, tmp / "r")))
        (tmp / "t").mkdir()
        rows.append(("this tree", run(ROOT, photo, small, tmp / "t")))
    for name, r in rows:
        worker = (f", child processes' peaks (photo worker, multiprocessing's resource tracker) "
                  f"{', '.join(f'{m:.0f}' for m in sorted(r['worker_peak_mb'], reverse=True))} MB"
                  if r["worker_peak_mb"] else "")
        print(f"{name}: HTTP {r['status']}, hand {r['hand']}; service process peak {r['peak_mb']:.0f} MB "
              f"(resident before the upload {r['base_mb']:.0f} MB){worker}; JSON {r['json_bytes'] / 1e3:.0f} kB, "
              f"annotated picture {r['annotated_bytes'] / 1e3:.0f} kB {'inline in the JSON' if r['inline'] else 'at its URL'}; "
              f"answered in {r['seconds']:.1f} s; slowest /api/status meanwhile {r['status_worst_s'] * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
