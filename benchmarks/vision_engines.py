"""The two engines that can run the vision models, side by side in one run on one core:
onnxruntime (the ``fast`` extra) and OpenCV's DNN module (``vision.models.BACKENDS``).

Prints, per engine, the median time of one detector network at 320 x 320 and at the calibrated
size, of one classifier network on a batch of 68 crops, and of a whole photo (``find_tiles``:
every member of both ensembles, as the pipeline runs them) over the first ``--photos`` photos of
``test``; then the ratio, and the largest difference between the two engines' outputs.

Usage: ``python benchmarks/vision_engines.py [--photos 20] [--repeat 20]`` (needs onnxruntime).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("OMP_NUM_THREADS", "1")
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from vision.data import load_split  # noqa: E402
from vision.models import BACKENDS, MODEL_DIR, OnnxNet, _calibration, members  # noqa: E402
from vision.pipeline import Recognizer  # noqa: E402

ENGINES = ("onnxruntime", "opencv")


def median_ms(fn, repeat: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--photos", type=int, default=20, help="photos of test for the whole-photo time (default 20)")
    ap.add_argument("--repeat", type=int, default=20, help="runs of each single network (default 20)")
    args = ap.parse_args(argv)
    if BACKENDS != ENGINES:
        print(f"this machine has only {', '.join(BACKENDS)}: install the fast extra (pip install -e '.[fast]')",
              file=sys.stderr)
        return 2
    cv2.setNumThreads(1)
    size = _calibration(MODEL_DIR)["size"]
    rng = np.random.default_rng(0)
    inputs = {f"detector at {s} x {s}": (members(MODEL_DIR, "detector")[0], rng.uniform(0, 255, (1, 3, s, s)))
              for s in dict.fromkeys((320, size))}
    inputs["classifier, 68 crops"] = (members(MODEL_DIR, "classifier")[0], rng.uniform(0, 255, (68, 3, 64, 48)))
    images = [cv2.imread(str(it.path)) for it in load_split("test")[:args.photos]]
    rows = []
    for what, (name, x) in inputs.items():
        x = x.astype(np.float32)
        nets = {e: OnnxNet(MODEL_DIR / name, e) for e in ENGINES}
        ms = {e: median_ms(lambda n=nets[e]: n.run(x), args.repeat) for e in ENGINES}
        diff = float(np.abs(nets[ENGINES[0]].run(x) - nets[ENGINES[1]].run(x)).max())
        rows.append((what, ms, f"{diff:.1e}"))
    found = {}
    ms = {}
    for e in ENGINES:
        rec = Recognizer(backend=e)
        for img in images[:2]:
            rec.find_tiles(img)
        times = []
        found[e] = []
        for img in images:
            t0 = time.perf_counter()
            found[e].append([(t.tile, t.sideways) for t in rec.find_tiles(img)])
            times.append(time.perf_counter() - t0)
        ms[e] = 1000 * statistics.median(times)
    same = sum(a == b for a, b in zip(found[ENGINES[0]], found[ENGINES[1]]))
    rows.append((f"a whole photo ({len(images)} of test)", ms, f"{same} of {len(images)} read alike"))
    print(f"{'':32} {'onnxruntime':>12} {'opencv':>10} {'ratio':>7}  outputs")
    for what, t, note in rows:
        print(f"{what:32} {t['onnxruntime']:>9.1f} ms {t['opencv']:>7.1f} ms {t['opencv'] / t['onnxruntime']:>6.2f}x  {note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
