"""The unread-area check (issue 21, ``vision.assemble.unread_areas``): what it asks and what it
catches, for a grid of its parameters, on real photos judged against the audited labels.

Usage: ``python benchmarks/vision_unread.py [--splits holdout] [--grid] [--scenes 40] [--latency]``

Each photo is read once (``Recognizer.read``, the weak boxes decoded from ``--floor`` 0.05, the
lowest floor of the grid) and its reading without unread areas kept; each rule is then applied
to the kept tiles and weak boxes, its areas added to the reading's gaps and the photo judged as
``benchmarks/vision_eval.py --audited`` judges it (``judge``: a missed label is asked about when a
flagged tile or a gap covers a third of it). Per rule and split:

* silent: photos with an error nobody is asked about (the ``+audit`` row's ``silent``);
* unread/photo: unread areas per photo (the player's burden, besides the layout gaps and flags);
* false: unread areas that cover no missed label by a third (``vision.confidence.NEAR``): asked
  for nothing (an area over unlabelled tiles counts here too; the audit labelled only tiles
  that this pipeline boxed);
* caught: missed labels that only an unread area asks about;
* area: the mean share of a picture that its unread areas cover (an area the size of the picture
  would ask about every missed tile: the links are kept to 2 tile sides so that an area is where
  tiles lie, not the table);
* scene/fr (``--scenes N``): unread areas per frame of N synthetic table scenes of a laid-out hand
  (training-split crops), where every area asks about nothing: the table camera's burden.

The committed parameters (``vision.assemble.UNREAD_*``) were chosen with ``--splits holdout
--grid --scenes 40`` (the training split's held-out sessions and scenes of its crops): at most one
area per held-out photo and 0.1 per scene frame, then the fewest silent held-out photos, then the
fewest areas; test and valid are measured with the committed rule only (no ``--grid``), never
used to choose.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

import importlib  # noqa: E402

import cv2  # noqa: E402

import vision.pipeline as P  # noqa: E402
from vision.confidence import NEAR, _share  # noqa: E402
from vision.data import audited, is_holdout_session, load_audit, load_split, match_predictions  # noqa: E402
from vision_eval import judge, reading_of  # noqa: E402

A = importlib.import_module("vision.assemble")  # the module (``vision.assemble`` is also the function)

FLOORS = (0.05, 0.1)  # from 0.15 no rule caught a held-out photo (a grid up to 0.2, 2 December)
LINKS = (1.0, 1.5, 2.0)
LEAST = (3, 4, 5, 6)
OVERLAPS = (0.1, 0.3)
SIZES = ((0.6, 1.5), (0.7, 1.3), (0.5, 2.0))
KEYS = ("floor", "overlap", "link", "least", "size")


def read_split(split: str, floor: float) -> list[tuple]:
    """Per photo of ``split``: (labels, ignore, reading without unread areas, tiles, weak boxes,
    picture area in pixels, ``judge``'s record of that reading)."""
    items = ([i for i in load_split("train") if is_holdout_session(i.session)] if split == "holdout"
             else load_split(split))
    audit = load_audit().get(split, {})
    rec = P.Recognizer()
    saved = P.UNREAD_FLOOR
    P.UNREAD_FLOOR = floor
    out = []
    try:
        for it in items:
            img = cv2.imread(str(it.path))
            tiles, weak = rec.read(img)
            r = rec.recognition_of(tiles, time.perf_counter())
            labels, ignore = audited(it, audit.get(it.path.name, []))
            out.append((labels, ignore, reading_of(r), tiles, weak, img.shape[0] * img.shape[1],
                        judge(reading_of(r), labels, 0.0, ignore)))
    finally:
        P.UNREAD_FLOOR = saved
    return out


def read_scenes(count: int, seed: int, floor: float) -> list[tuple]:
    """(tiles, weak boxes) of ``count`` synthetic table scenes, one camera frame each: won hands
    laid out as a player lays them (``vision_gaps.random_hand``) from tile crops of the training
    split (``vision.data.tile_faces("train")``: not test, which the capture benchmark uses), with
    the frame's shake, glare, shadow and noise (``vision.synth.frame_of``), 1280 x 720 px."""
    import numpy as np

    from vision.data import tile_faces
    from vision.synth import compose_scene, frame_of
    from vision_gaps import random_hand
    faces = tile_faces("train", per_label=6)
    rng = np.random.default_rng(seed)
    rec = P.Recognizer()
    saved = P.UNREAD_FLOOR
    P.UNREAD_FLOOR = floor
    out = []
    try:
        for _ in range(count):
            scene, placed = compose_scene(random_hand(rng), faces, rng, size=(720, 1280))
            out.append(rec.read(frame_of(scene, placed, rng)[0]))
    finally:
        P.UNREAD_FLOOR = saved
    return out


def evaluate(photos: list[tuple], rule: dict | None) -> dict:
    """The figures of the module docstring for one rule (``unread_areas``' keywords; None: no check)."""
    silent = silent_before = areas = false = caught = 0
    share = 0.0
    for labels, ignore, reading, tiles, weak, pixels, before in photos:
        gaps = [g.box for g in A.unread_areas(weak, tiles, **rule)] if rule else []
        after = judge({**reading, "gaps": reading["gaps"] + gaps}, labels, 0.0, ignore)
        silent += after["silent"]
        silent_before += before["silent"]
        caught += before["missed"] - after["missed"]
        areas += len(gaps)
        share += min(1.0, sum((g[2] - g[0]) * (g[3] - g[1]) for g in gaps) / pixels)
        if gaps:
            ref = match_predictions([p[1] for p in reading["tiles"]], labels, centres=True)
            missed = [labels.boxes[gi].box for gi in set(range(len(labels.boxes))) - set(ref.values())]
            false += sum(not any(_share(m, g) >= NEAR for m in missed) for g in gaps)
    n = max(1, len(photos))
    return {"silent": silent / n, "silent_before": silent_before / n, "unread_per_photo": areas / n,
            "false": false, "false_per_photo": false / n, "caught": caught, "share": share / n}


def latency(split: str) -> tuple[float, float]:
    """The median CPU milliseconds of ``Recognizer.recognize`` per photo of ``split``, with the
    unread-area check and without it (each photo read both ways in turn, after one warm-up read)."""
    items = ([i for i in load_split("train") if is_holdout_session(i.session)] if split == "holdout"
             else load_split(split))
    rec = P.Recognizer()
    times: dict[bool, list[float]] = {True: [], False: []}
    saved = P.UNREAD
    try:
        for it in items:
            img = cv2.imread(str(it.path))
            rec.recognize(img)
            for on in (True, False):
                P.UNREAD = on
                t = time.process_time()
                rec.recognize(img)
                times[on].append(1000 * (time.process_time() - t))
    finally:
        P.UNREAD = saved
    return statistics.median(times[True]), statistics.median(times[False])


def scene_areas(scenes: list[tuple], rule: dict) -> str:
    """Unread areas per scene frame under ``rule`` ("-" without scenes)."""
    if not scenes:
        return "-"
    return f"{sum(len(A.unread_areas(w, t, **rule)) for t, w in scenes) / len(scenes):.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--splits", nargs="+", default=["holdout"], choices=["holdout", "test", "valid"])
    ap.add_argument("--grid", action="store_true", help="every rule of the grid (choose on holdout only)")
    ap.add_argument("--floor", type=float, default=0.05, help="the lowest weak-box score decoded (0-1)")
    ap.add_argument("--latency", action="store_true",
                    help="also the CPU time of Recognizer.recognize per photo with the check and without it "
                         "(vision.pipeline.UNREAD), alternated photo by photo, one core")
    ap.add_argument("--scenes", type=int, default=0,
                    help="also the unread areas per frame of this many synthetic table scenes (training-split "
                         "crops; a laid-out hand: every area there asks about nothing)")
    ap.add_argument("--seed", type=int, default=0, help="the scenes' seed")
    args = ap.parse_args(argv)
    if not 0.0 < args.floor < 1.0:
        ap.error(f"--floor must be between 0 and 1, not {args.floor}")
    committed = dict(zip(KEYS, (A.UNREAD_FLOOR, A.UNREAD_OVERLAP, A.UNREAD_LINK, A.UNREAD_MIN, A.UNREAD_SIZE)))
    rules = [dict(zip(KEYS, v)) for v in itertools.product(FLOORS, OVERLAPS, LINKS, LEAST, SIZES)] \
        if args.grid else [committed]
    rules = [r for r in rules if r["floor"] >= args.floor]
    print(f"{'split':<8} {'photos':>6} {'floor':>5} {'over':>4} {'link':>4} {'least':>5} {'size':>9} {'silent':>7} {'before':>7} "
          f"{'unread/ph':>9} {'false':>5} {'caught':>6} {'area':>5} {'scene/fr':>8}")
    scenes = read_scenes(args.scenes, args.seed, args.floor) if args.scenes else []
    for split in args.splits:
        if args.latency:
            on, off = latency(split)
            print(f"{split}: recognize, median CPU ms per photo: {on:.1f} with the check, {off:.1f} without")
        photos = read_split(split, args.floor)
        for rule in rules:
            r = evaluate(photos, rule)
            mark = " *" if rule == committed else ""
            print(f"{split:<8} {len(photos):>6} {rule['floor']:>5.2f} {rule['overlap']:>4.1f} {rule['link']:>4.1f} {rule['least']:>5} "
                  f"{'%.1f-%.1f' % rule['size']:>9} {100 * r['silent']:>6.1f}% {100 * r['silent_before']:>6.1f}% {r['unread_per_photo']:>9.2f} "
                  f"{r['false']:>5} {r['caught']:>6} {100 * r['share']:>4.1f}% {scene_areas(scenes, rule):>8}{mark}",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
