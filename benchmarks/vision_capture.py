"""How much voting over several frames (``vision.voting.capture_hand``) lowers the silent errors
of the camera pipeline, and what a captured hand costs, on synthetic table scenes.

The scenes: won hands laid out as a player lays them (``benchmarks/vision_gaps.random_hand``: 0-2
declared sets with their sideways tile, the concealed row in groups, the winning tile apart),
drawn from real tile crops of the ``test`` photos (``vision.data.tile_faces``: photos no model was
trained on) by ``vision.synth.compose_scene``; each hand then seen in ``--frames`` camera frames,
each with its own shake, glare, shadow, exposure and noise (``vision.synth.frame_of``).

Per system, over the hands (the rules of ``benchmarks/vision_eval.py``, ``judge``):

* ``single``: every frame read on its own (``Recognizer.recognize``, as ``POST /api/score/photo``
  does), each a photo;
* ``vote-N-whole``: the N frames of a hand read as one (``capture_hand``), each frame read by the
  whole ensembles (4 detectors, 2 classifiers);
* ``vote-N-spread``: the same, frame k read by detector k mod 4 and classifier k mod 2 only
  (``vision.voting.SPREAD``, as ``POST /api/score/capture`` runs).

Columns: photos (frames or captures), tiles read right, exact (every tile right, no extra box),
silent (a wrong, missed or extra tile the player is not asked about), flags and gaps per photo,
and of the gaps the unread areas (``vision.assemble.unread_areas``; ``--no-unread``: without them).
Then the latency per captured hand of N frames, each way, one core (the process pinned to one
CPU, OpenCV and onnxruntime with one thread): the median wall and CPU time of ``capture_hand``,
next to the CPU time spent inside the engine (``OnnxNet.run``: onnxruntime's, or OpenCV DNN's,
forward passes) in the same captures: the rest is decoding boxes, crops, the vote and the
assembly. On a machine shared with other work the wall time is the larger; the CPU time is
what the capture itself costs.

Usage: ``python benchmarks/vision_capture.py [--hands 40] [--frames 5] [--seed 0]``. The last
line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("OMP_NUM_THREADS", "1")
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

import cv2  # noqa: E402
import numpy as np  # noqa: E402

import vision.models as M  # noqa: E402
import vision.pipeline as P  # noqa: E402
from vision.data import LabelledBox, LabelledImage, tile_faces  # noqa: E402
from vision.errors import VisionError  # noqa: E402
from vision.pipeline import Recognizer  # noqa: E402
from vision.synth import compose_scene, frame_of  # noqa: E402
from vision.voting import FRAMES, capture_hand  # noqa: E402
from vision_eval import judge, reading_of  # noqa: E402
from vision_gaps import random_hand  # noqa: E402

cv2.setNumThreads(1)


def labelled(placed, name: str) -> LabelledImage:
    """The scene's tiles as the labels ``judge`` compares a reading with."""
    return LabelledImage(Path(name), tuple(LabelledBox(t.tile, tuple(float(v) for v in t.box)) for t in placed),
                         "synthetic")


def unread(recognition) -> int:
    """The unread areas of a reading (gaps of kind ``unread``, ``vision.assemble.unread_areas``)."""
    return sum(g.kind == "unread" for g in recognition.assembly.gaps)


def row(name: str, photos: list[dict]) -> dict:
    n = max(1, len(photos))
    labels = sum(p["labels"] for p in photos)
    r = {"photos": len(photos), "tile_accuracy": sum(p["ok"] for p in photos) / max(1, labels),
         "exact": sum(p["ok"] == p["labels"] and p["preds"] == p["labels"] for p in photos) / n,
         "silent": sum(p["silent"] for p in photos) / n, "flags": sum(p["flagged"] for p in photos) / n,
         "gaps": sum(p["gaps"] for p in photos) / n, "unread": sum(p["unread"] for p in photos) / n}
    print(f"{name:<13} {r['photos']:>6} {100 * r['tile_accuracy']:>8.1f}% {100 * r['exact']:>6.1f}% "
          f"{100 * r['silent']:>6.1f}% {r['flags']:>6.2f} {r['gaps']:>5.2f} {r['unread']:>6.2f}", flush=True)
    return r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hands", type=int, default=40, help="hands (captures) to lay out (default 40)")
    ap.add_argument("--frames", type=int, default=FRAMES[1], help=f"frames per capture, {FRAMES[0]}-{FRAMES[1]}")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", default="720x1280", help="frame size HxW in pixels (default 720x1280, a 16:9 camera)")
    ap.add_argument("--no-unread", action="store_true",
                    help="without the unread-area check (vision.pipeline.UNREAD; issue 21): the figures before it")
    ap.add_argument("--models", type=Path, default=None,
                    help="folder of the models to measure (default: the committed vision/models)")
    args = ap.parse_args(argv)
    if args.models is not None and not args.models.is_dir():
        ap.error(f"--models {args.models}: not a folder")
    if not FRAMES[0] <= args.frames <= FRAMES[1]:
        ap.error(f"--frames must be {FRAMES[0]} to {FRAMES[1]}, not {args.frames}")
    if args.hands < 1:
        ap.error(f"--hands must be at least 1, not {args.hands}")
    try:
        size = tuple(int(v) for v in args.size.lower().split("x"))
        if len(size) != 2 or min(size) < 200:
            raise ValueError
    except ValueError:
        ap.error(f"--size {args.size!r}: give HxW in pixels, each at least 200, e.g. 720x1280")
    try:
        faces = tile_faces("test", per_label=6)
    except FileNotFoundError as e:
        ap.error(str(e))
    try:
        rec = Recognizer() if args.models is None else Recognizer(args.models)
    except VisionError as e:
        ap.error(f"--models {args.models}: {e.message}")
    P.UNREAD = P.UNREAD and not args.no_unread
    engine = [0.0]
    run = M.OnnxNet.run

    def timed(self, x):  # the engine's own CPU time (one intra-op thread: the calling one), summed
        t = time.process_time()
        try:
            return run(self, x)
        finally:
            engine[0] += time.process_time() - t
    M.OnnxNet.run = timed
    rng = np.random.default_rng(args.seed)
    modes = {"whole": False, "spread": True}  # every frame by the whole ensembles; frame k by members k
    single: list[dict] = []
    voted: dict[str, list[dict]] = {m: [] for m in modes}
    wall: dict[str, list[float]] = {m: [] for m in modes}
    cpu: dict[str, list[float]] = {m: [] for m in modes}
    engine_s: dict[str, list[float]] = {m: [] for m in modes}
    warm, _ = compose_scene(random_hand(rng), faces, rng, size=size)
    for spread in modes.values():
        capture_hand(rec, [warm] * args.frames, spread=spread)  # the first run pays for lazy set-up
    for h in range(args.hands):
        scene, placed = compose_scene(random_hand(rng), faces, rng, size=size)
        shots = [frame_of(scene, placed, rng) for _ in range(args.frames)]
        for mode, spread in modes.items():
            engine[0] = 0.0
            t0, c0 = time.perf_counter(), time.process_time()
            cap = capture_hand(rec, [f for f, _ in shots], spread=spread)
            wall[mode].append(time.perf_counter() - t0)
            cpu[mode].append(time.process_time() - c0)
            engine_s[mode].append(engine[0])
            truth = labelled(shots[cap.reference][1], f"hand{h}")
            voted[mode].append({**judge(reading_of(cap.recognition), truth, wall[mode][-1]),
                                "unread": unread(cap.recognition)})
            if not spread:  # each frame read alone by the whole ensembles: the single photo
                for i, (tiles, weak, secs) in enumerate(zip(cap.readings, cap.weak, cap.frame_seconds)):
                    one = rec.recognition_of(list(tiles), time.perf_counter() - secs, weak_boxes=weak)
                    single.append({**judge(reading_of(one), labelled(shots[i][1], f"hand{h}-{i}"), secs),
                                   "unread": unread(one)})
    print(f"{args.hands} hands x {args.frames} frames, {size[1]}x{size[0]} px, real crops of the test photos, "
          "each frame with its own shake, glare, shadow, exposure, noise")
    print(f"{'system':<13} {'photos':>6} {'tile acc':>9} {'exact':>7} {'silent':>7} {'flags':>6} {'gaps':>5} {'unread':>6}")
    results = {"single": row("single", single)}
    for mode in modes:
        results[f"vote-{args.frames}-{mode}"] = row(f"vote-{args.frames}-{mode}", voted[mode])

    def ms(xs: list[float], q: float = 50) -> float:
        return round(1000 * float(np.percentile(xs, q)), 1)
    per_frame = 1000 * statistics.median([p["seconds"] for p in single])
    print(f"one frame read alone (whole ensembles): median {per_frame:.0f} ms wall (the frames of the 'whole' captures)")
    for mode in modes:
        print(f"latency per captured hand of {args.frames} frames ({mode}), one core: median {ms(wall[mode]):.0f} ms "
              f"wall (p90 {ms(wall[mode], 90):.0f}), {ms(cpu[mode]):.0f} ms CPU; the engine "
              f"({rec.detector.nets[0].backend}, OnnxNet.run) {ms(engine_s[mode]):.0f} ms CPU of it")
        results[f"latency-{mode}"] = {"wall_ms_median": ms(wall[mode]), "wall_ms_p90": ms(wall[mode], 90),
                                      "cpu_ms_median": ms(cpu[mode]), "engine_cpu_ms_median": ms(engine_s[mode])}
    results.update(hands=args.hands, frames=args.frames, size=list(size), frame_ms_median=round(per_frame, 1))
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
