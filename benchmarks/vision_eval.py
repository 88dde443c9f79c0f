"""Accuracy and speed of mjtable's camera pipeline against the ``mahjong-detector`` package (PyPI,
a YOLOv8 model trained on Japanese tile art), on the real photos of
``../shared/data/tiles/chinese-mahjong-detection`` ``test`` and ``valid`` (never used in training).

Usage: ``python benchmarks/vision_eval.py [--splits test valid] [--no-peer] [--limit N] [--audited]
[--by-kind]``
(the peer needs the ``bench`` extra: ``pip install -e '.[bench]'``).

Figures, per system and split:

* per-tile accuracy: a labelled tile counts when a predicted box overlaps it with IoU > 0.5 and
  has its class (one prediction per label, best overlap first);
* detection recall (IoU > 0.5, any class) and precision (predictions that overlap a label);
* exact-hand rate: photos whose every labelled tile is right; "strict" also allows no extra box
  (some photos have unlabelled tiles, so strict is a lower bound);
* flower recall: labelled flowers and seasons (``1f``-``8f``) read right (the peer has no such class);
* median latency per image (picture already decoded) on one core: the process is pinned to one
  CPU, OpenCV and onnxruntime are given one thread;
* silent-error photos (issue 21): photos with a wrong, missed or extra tile that the player is
  not asked about, a tile matched to a label by the referee's rule (``vision.data.match_predictions``
  with ``centres``: IoU > 0.5, or the same place boxed otherwise): a wrong or extra tile not flagged (``Assembly.uncertain``), a missed label that
  no flagged box and no layout gap (``Assembly.gaps``) covers by a third of its box
  (``vision.confidence.NEAR``). The peer flags nothing: its every error is silent. Unlabelled
  tiles in a photo count as extra boxes here too, as in "strict";
* wrong / extra / missed: the unflagged errors by kind, counted over the photos: a box on a label
  read as another tile, a box on no label, a label no box reads and nothing asks about;
* -gaps: the silent share when layout gaps ask nothing (flagged tiles only);
* flags: tiles flagged per photo (the player's confirmation burden); gaps: gaps per photo (the
  layout check's and the unread areas, ``vision.assemble.unread_areas``; ``--no-unread``: without these);
* ECE: the expected calibration error of the reported confidence (tile-weighted mean gap between
  confidence and the share right over the bins of ``vision.confidence.BINS``; a tile is right when
  it matches a label of its name by the referee's rule); ``--reliability`` prints the table itself.

``mjtable`` is the pipeline as the product runs it: the classifier's probability as the confidence,
flagged below ``vision.assemble.MIN_CONFIDENCE`` (0.6). ``mjtable-calib`` is the same pipeline with
the calibrated confidence (``vision.confidence``, fitted on the training split's held-out sessions)
flagged below its fitted threshold: kept off in the product while it does worse on valid
(``--no-calibrated`` skips it).

``--audited`` (issue 21) adds ``SPLIT+audit`` (and ``SPLIT-+audit``): the same predictions, no
second run, judged against ``vision/label_audit.json``, an audit made by looking at the photos:
every box of this pipeline that matched no label (flagged or not) was judged ``tile`` (a real
tile, named from the picture: it becomes a label, so a box there is right or wrong by name and no
box there a missed tile), ``partial`` (cut by the edge, mostly hidden or seen from its side) or
``back`` (face-down: a box there is neither right nor extra), or ``none`` (no further tile: a box
there stays an extra); and every label an unflagged box read as another tile was re-checked (a
wrong label renamed, ``audited``). Its limits: a box found by another pipeline (a retrained
model) on a tile nobody labelled is still an extra, since only this pipeline's boxes were
audited; labels no box reads (missed) and labels read right were not re-checked (but for the second
labels of a tile labelled twice, removed); the session of
``valid`` labelled all 1p was not re-checked. The header of the file says what was audited, how
and when.

A split with photos whose labels cannot be right (more of a tile than one set holds:
``vision.data.impossible_labels``; ``valid`` has a session whose every tile is labelled ``1p``)
gets a second row, ``SPLIT-``, with the figures of the same run without those photos.

``--by-kind`` prints each row's figures again for three kinds of photo apart (``photo_kind``): the
ordinary photos, the uploads the data set's export squeezed into a square, and ``valid``'s close-up
session of a tile set and table that no training photo shows.

``--band 1.78`` cuts every photo to a 16:9 band across its tiles (as a wide camera frame sees a
row) and adds the row ``mjtable-square``: the same pipeline with the picture stretched to a square
instead of read in its own shape (``vision.models.OWN_SHAPE``). ``--band 10 --squeeze`` squeezes
each such band into a square, once as a row and once turned a quarter (a column): photos squeezed
as the data set's export squeezed some of ``valid``'s, made from any split (``holdout`` has none of
its own), for choosing ``vision.models.SQUEEZE`` without looking at ``valid``.

Then the peak resident memory (ru_maxrss) of ``mjtable recognize`` on one photo, in a child
process. The last line is a JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
if __name__ == "__main__":  # one core when run as the benchmark (not when a test imports ``judge``)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from vision.confidence import NEAR, _share, expected_calibration_error, reliability  # noqa: E402
from vision.data import (AUDIT, audited, impossible_labels, is_holdout_session, load_audit, load_split,  # noqa: E402
                         match_predictions)
from vision.errors import VisionError  # noqa: E402
from vision.pipeline import Recognizer  # noqa: E402

if __name__ == "__main__":
    cv2.setNumThreads(1)

PEER_NAMES = {"chun": "C", "haku": "P", "hatsu": "F", "tou": "E", "nan": "S", "sha": "W", "pe": "N"}


def mjtable_predict(own_shape: float | None = None, model_dir: Path | None = None, calibrated: bool = False,
                    rescue: bool = True, unread: bool = True, thresholds: tuple[float, ...] = ()):
    """mjtable's reading of a picture: ``{"tiles": [(name, box, confidence, flagged)], "gaps":
    [box]}`` (flagged: listed for the player to confirm, ``Assembly.uncertain``; gaps: where the
    layout check says a tile seems to be missing, ``Assembly.gaps``); ``own_shape`` overrides
    ``vision.models.OWN_SHAPE`` (the aspect from which a picture is read in its own shape) during
    the call; ``model_dir`` the folder of the models (default: the committed ones);
    ``calibrated=True`` reports the calibrated confidence flagged below its fitted threshold
    (else the classifier's probability, flagged below ``vision.assemble.MIN_CONFIDENCE``, as the
    product does);
    ``rescue=False`` keeps no weak box (``vision.pipeline.RESCUE_LABELS`` empty during the call);
    ``unread=False`` reports no unread area (``vision.pipeline.UNREAD`` off during the call);
    ``thresholds``: the reading also has ``"at"``, ``{threshold: reading}``: the same tiles and weak
    boxes assembled with each flag threshold in place of the product's (no second network run; the
    timing includes these assemblies)."""
    import vision.models as M
    import vision.pipeline as P
    rec = Recognizer(model_dir or M.MODEL_DIR, calibrated=calibrated)

    def run(img: np.ndarray) -> dict:
        saved, saved_rescue, saved_unread = M.OWN_SHAPE, P.RESCUE_LABELS, P.UNREAD
        M.OWN_SHAPE = saved if own_shape is None else own_shape
        P.RESCUE_LABELS = saved_rescue if rescue else ()
        P.UNREAD = saved_unread and unread
        at = {}
        try:
            t0 = time.perf_counter()
            tiles, weak = rec.read(img)
            r = rec.recognition_of(tiles, t0, weak_boxes=weak)
            base = rec.min_confidence
            try:
                for th in thresholds:
                    rec.min_confidence = th
                    at[th] = reading_of(rec.recognition_of(tiles, t0, weak_boxes=weak))
            finally:
                rec.min_confidence = base
        finally:
            M.OWN_SHAPE, P.RESCUE_LABELS, P.UNREAD = saved, saved_rescue, saved_unread
        return {**reading_of(r), "at": at} if thresholds else reading_of(r)
    return run


def reading_of(r) -> dict:
    """A ``vision.Recognition`` as ``judge`` takes it: ``{"tiles": [(name, box, confidence,
    flagged)], "gaps": [box]}`` (flagged: in ``Assembly.uncertain``)."""
    flagged = {id(t) for t in r.assembly.uncertain}
    return {"tiles": [(t.tile, t.box, t.confidence, id(t) in flagged) for t in r.tiles],
            "gaps": [g.box for g in getattr(r.assembly, "gaps", ())]}


def band(items, ratio: float, folder: Path, squeeze: bool = False) -> list:
    """Each photo cut to a band ``ratio`` times wider than tall (a 16:9 camera frame: 1.78), full
    width, centred on its tiles (the median height of their centres); the labels wholly inside
    the band are kept, moved into it. Photos with no label inside are left out. The bands are
    written to ``folder`` as PNG (lossless: the pixels are the photo's).

    ``squeeze``: each band is then squeezed into a square of the photo's width, as the data set's
    export squeezed some photos (a row of tiles), and also turned a quarter first (a column of
    tiles squeezed the other way): two pictures per photo, labels moved with them."""
    import dataclasses

    from vision.data import LabelledBox
    out = []
    for it in items:
        if not it.boxes:
            continue
        img = cv2.imread(str(it.path))
        H, W = img.shape[:2]
        h = min(H, int(round(W / ratio)))
        cy = float(np.median([(b.box[1] + b.box[3]) / 2 for b in it.boxes]))
        y0 = int(np.clip(cy - h / 2, 0, H - h))
        boxes = tuple(LabelledBox(b.tile, (b.box[0], b.box[1] - y0, b.box[2], b.box[3] - y0))
                      for b in it.boxes if b.box[1] >= y0 and b.box[3] <= y0 + h)
        if not boxes:
            continue
        cut = img[y0:y0 + h]
        if not squeeze:
            path = folder / f"{it.path.stem}.png"
            cv2.imwrite(str(path), cut)
            out.append(dataclasses.replace(it, path=path, boxes=boxes))
            continue
        fx, fy = W / cut.shape[1], W / cut.shape[0]
        row = tuple(LabelledBox(b.tile, (b.box[0] * fx, b.box[1] * fy, b.box[2] * fx, b.box[3] * fy)) for b in boxes)
        # the column: the band turned a quarter clockwise (a point x, y goes to h - 1 - y, x), squeezed
        col = tuple(LabelledBox(b.tile, ((h - b.box[3]) * fy, b.box[0] * fx, (h - b.box[1]) * fy, b.box[2] * fx))
                    for b in boxes)
        for tag, pic, labels in (("row", cut, row), ("column", cv2.rotate(cut, cv2.ROTATE_90_CLOCKWISE), col)):
            path = folder / f"{it.path.stem}-{tag}.png"
            cv2.imwrite(str(path), cv2.resize(pic, (W, W), interpolation=cv2.INTER_LINEAR))
            out.append(dataclasses.replace(it, path=path, boxes=labels))
    return out


def peer_predict():
    import onnxruntime as rt
    from PIL import Image
    import importlib

    mp = importlib.import_module("mahjong_detector.predict")  # the package re-exports a function of that name
    from mahjong_detector.preprocess import preprocess_image

    opts = rt.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    mp.threadlocal.session = rt.InferenceSession(str(mp.model_path), opts, providers=["CPUExecutionProvider"])

    def run(img: np.ndarray) -> list[tuple[str, tuple]]:
        pil = Image.fromarray(cv2.cvtColor(img, cv2.COLOR_BGR2RGB))
        pimg, pad = preprocess_image(pil)
        dets = mp.predict(pimg, pad)
        # the peer lists no tile for the player to confirm
        return {"tiles": [(PEER_NAMES.get(mp.CLASS_NAMES[d.class_id], mp.CLASS_NAMES[d.class_id]),
                           (d.x1, d.y1, d.x2, d.y2), None, False) for d in dets], "gaps": []}
    return run


#: The kinds of photo that ``--by-kind`` reports apart (``photo_kind``), as vision/README.md
#: describes them: uploads the data set's export squeezed into a square, the close-up session of a
#: tile set and table that no training photo shows, and the rest.
KINDS = ("ordinary", "squeezed", "close-up")


def photo_kind(it) -> str:
    """``squeezed`` when the photo's median labelled tile is more than 3 times as long one way as
    the other (a tile is 1.3-1.4 times; the export squeezed such uploads 4-15 times), ``close-up``
    for the session ``IMG_2742``-``IMG_2788`` (tiles standing at angles on a red table: a set no
    training photo shows), else ``ordinary``. Fixed rules that describe the data, chosen before
    any figure by kind was looked at; no reader sees them."""
    sides = sorted(max((b.box[2] - b.box[0]) / max(1e-9, b.box[3] - b.box[1]),
                       (b.box[3] - b.box[1]) / max(1e-9, b.box[2] - b.box[0])) for b in it.boxes)
    if sides and sides[len(sides) // 2] > 3:
        return "squeezed"
    m = re.match(r"IMG_(\d{4})_", it.path.name)
    return "close-up" if m and 2742 <= int(m.group(1)) <= 2788 else "ordinary"


def score_photos(predict, items, warmup: int = 2, audit: dict | None = None) -> list[dict]:
    """Run ``predict`` on every photo: per photo, ``judge``'s record with the seconds it took.

    ``audit`` (one split of ``load_audit``: photo file name -> entries): each record also gets
    ``"audited"``, the same reading judged against the audited labels (``audited``; no second
    run of ``predict``), with the photo's ``possible`` of its data-set labels. A reading with
    ``"at"`` (``mjtable_predict``'s ``thresholds``) gives each record (and its ``"audited"``) an
    ``"at"`` too: ``{threshold: judge's record}``."""
    for it in items[:warmup]:
        predict(cv2.imread(str(it.path)))
    out = []
    for it in items:
        img = cv2.imread(str(it.path))
        t0 = time.perf_counter()
        reading = predict(img)
        seconds = time.perf_counter() - t0
        rec = judge(reading, it, seconds)
        rec["kind"] = photo_kind(it)
        at = reading.get("at", {})
        rec["at"] = {th: judge(r, it, seconds) for th, r in at.items()}
        if audit is not None:
            labels, ignore = audited(it, audit.get(it.path.name, []))
            rec["audited"] = {**judge(reading, labels, seconds, ignore), "possible": rec["possible"], "kind": rec["kind"],
                              "at": {th: judge(r, labels, seconds, ignore) for th, r in at.items()}}
        out.append(rec)
    return out


def judge(reading: dict, it, seconds: float, ignore: tuple = ()) -> dict:
    """One photo's record: its label count, the labels read right, the labels detected, flowers
    labelled and read right, predictions, hits, ``seconds``, the tiles flagged for the player,
    whether an error went unflagged (``silent``), the unflagged errors by kind (``wrong``: a box
    on a label read as another tile; ``extra``: a box on no label; ``missed``: a label no box
    reads and nothing asks about) and, per prediction, its confidence and whether it is right
    (``conf``). ``reading``: ``{"tiles": [(name, box, confidence, flagged)], "gaps": [box]}``
    (``mjtable_predict``); ``it``: the labelled photo (``vision.data.LabelledImage``).

    ``ignore``: boxes (x1, y1, x2, y2) of real tiles that no reader can be held to (the audit's
    ``partial`` and ``back``): a prediction on no label that one of them takes by the referee's
    rule (one prediction each) is left out of every figure but ``flagged`` (the player is still
    asked about it) and the askers of a missed label."""
    from vision.data import LabelledBox, LabelledImage
    askers = [p[1] for p in reading["tiles"] if p[3]] + list(reading["gaps"])
    flagged = sum(p[3] for p in reading["tiles"])
    preds = reading["tiles"]
    if ignore:
        ref = match_predictions([p[1] for p in preds], it, centres=True)
        left = [pi for pi in range(len(preds)) if pi not in ref]
        taken = match_predictions([preds[pi][1] for pi in left], LabelledImage(
            it.path, tuple(LabelledBox("ignored", tuple(b)) for b in ignore), it.session), centres=True)
        dropped = {left[k] for k in taken}
        preds = [p for pi, p in enumerate(preds) if pi not in dropped]
    match = match_predictions([p[1] for p in preds], it)  # prediction -> label, IoU > 0.5
    ok_g = {gi for pi, gi in match.items() if preds[pi][0] == it.boxes[gi].tile}
    fl = [gi for gi, g in enumerate(it.boxes) if g.tile.endswith("f")]
    # an error is silent unless the player is asked about it: a wrong or extra tile that is
    # flagged, a missed one that a flagged tile or a layout gap covers (NEAR of its box); a
    # tile is matched by the referee's rule here (IoU > 0.5, or the same place boxed otherwise)
    ref = match_predictions([p[1] for p in preds], it, centres=True)
    wrong_unflagged = [pi for pi, p in enumerate(preds)
                       if not p[3] and (pi not in ref or it.boxes[ref[pi]].tile != p[0])]
    missed = set(range(len(it.boxes))) - set(ref.values())
    missed_unasked = [gi for gi in missed if not any(_share(it.boxes[gi].box, a) >= NEAR for a in askers)]
    return {"labels": len(it.boxes), "ok": len(ok_g), "detected": len(match), "preds": len(preds),
            "hits": len(match), "flowers": len(fl), "flowers_ok": sum(gi in ok_g for gi in fl),
            "seconds": seconds, "possible": not impossible_labels(it),
            "flagged": flagged, "gaps": len(reading["gaps"]),
            "silent": bool(wrong_unflagged or missed_unasked),
            "silent_no_gaps": bool(wrong_unflagged or [gi for gi in missed if not any(
                _share(it.boxes[gi].box, a) >= NEAR for a in askers[:flagged])]),
            "wrong": sum(pi in ref for pi in wrong_unflagged), "extra": sum(pi not in ref for pi in wrong_unflagged),
            "missed": len(missed_unasked),
            "conf": [(p[2], pi in ref and it.boxes[ref[pi]].tile == p[0]) for pi, p in enumerate(preds)
                     if p[2] is not None]}


def row_records(photos: list[dict], key: str, split: str) -> list[dict]:
    """The per-photo records of ``score_photos`` that a row ``key`` of ``split`` sums: without the
    photos whose labels cannot be right for ``SPLIT-`` rows, judged against the audited labels for
    ``+audit`` rows."""
    kept = [p for p in photos if p["possible"] or not key.startswith(f"{split}-")]
    return [p["audited"] if key.endswith("+audit") else p for p in kept]


def summarise(photos: list[dict]) -> dict:
    """The figures of the module docstring over per-photo records of ``score_photos``."""
    n_lab = sum(p["labels"] for p in photos)
    n_pred = sum(p["preds"] for p in photos)
    flowers = sum(p["flowers"] for p in photos)
    exact = [p for p in photos if p["labels"] and p["ok"] == p["labels"]]
    times = [p["seconds"] for p in photos]
    conf = [c for p in photos for c in p["conf"]]
    return {"photos": len(photos), "tiles": n_lab, "tile_accuracy": sum(p["ok"] for p in photos) / max(1, n_lab),
            "detection_recall": sum(p["detected"] for p in photos) / max(1, n_lab),
            "detection_precision": sum(p["hits"] for p in photos) / max(1, n_pred),
            "exact_hand_rate": len(exact) / max(1, len(photos)),
            "exact_hand_rate_strict": sum(p["preds"] == p["labels"] for p in exact) / max(1, len(photos)),
            "silent_error_rate": sum(p["silent"] for p in photos) / max(1, len(photos)),
            "silent_error_rate_no_gaps": sum(p["silent_no_gaps"] for p in photos) / max(1, len(photos)),
            "flagged_per_photo": sum(p["flagged"] for p in photos) / max(1, len(photos)),
            "gaps_per_photo": sum(p["gaps"] for p in photos) / max(1, len(photos)),
            "ece": expected_calibration_error([c for c, _ in conf], [r for _, r in conf]) if conf else None,
            "reliability": reliability([c for c, _ in conf], [r for _, r in conf]) if conf else [],
            "unflagged_wrong": sum(p["wrong"] for p in photos), "unflagged_extra": sum(p["extra"] for p in photos),
            "unflagged_missed": sum(p["missed"] for p in photos),
            "flowers": flowers,
            "flower_recall": sum(p["flowers_ok"] for p in photos) / flowers if flowers else None,
            "median_latency_ms": 1000 * statistics.median(times) if times else None}


def peak_rss_recognize(image: Path) -> float:
    """Peak resident memory in MB of ``mjtable recognize IMAGE`` run in a child process: the
    child's own high-water mark (VmHWM, which the exec of the child resets; ru_maxrss of a child
    would include the benchmark's memory copied at fork)."""
    code = ("import sys\n"
            "from app.cli import main\n"
            "rc = main(['recognize', sys.argv[1]])\n"
            "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')]\n"
            "print(hwm[0].split()[1] if hwm else -1, file=sys.stderr)\n")
    r = subprocess.run([sys.executable, "-c", code, str(image)], cwd=ROOT, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    try:
        return int(r.stderr.strip().splitlines()[-1]) / 1024
    except (ValueError, IndexError):
        return float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--splits", nargs="+", default=["test", "valid"], choices=["test", "valid", "holdout"],
                    help="holdout = the training split's held-out sessions (for model selection, not a result)")
    ap.add_argument("--no-peer", action="store_true", help="skip mahjong-detector")
    ap.add_argument("--no-calibrated", action="store_true",
                    help="skip mjtable-calib (the calibrated confidence, flagged below its fitted threshold)")
    ap.add_argument("--before", action="store_true",
                    help="add mjtable-before: uncalibrated, no weak white-dragon boxes kept (pipeline.RESCUE_LABELS); "
                         "its -gaps column is the silent share before issue 21")
    ap.add_argument("--only-before", action="store_true", help="with --before: that system alone (and the peer)")
    ap.add_argument("--reliability", action="store_true", help="print each system's reliability table per split")
    ap.add_argument("--limit", type=int, default=0, help="first N photos of each split (0 = all)")
    ap.add_argument("--band", type=float, default=0.0,
                    help="cut each photo to a band this many times wider than tall (16:9 frames: 1.78); "
                         "mjtable is then also run with every picture stretched to a square (mjtable-square)")
    ap.add_argument("--squeeze", action="store_true",
                    help="with --band: squeeze each band (and the band turned a quarter) into a square, "
                         "as an upload squeezes a photo of a row of tiles (--band 10 --squeeze)")
    ap.add_argument("--audited", action="store_true",
                    help="add SPLIT+audit rows: the same predictions judged with vision/label_audit.json applied "
                         "(audited tiles become labels; partial tiles and backs are ignored)")
    ap.add_argument("--no-unread", action="store_true",
                    help="the product without its unread-area check (vision.pipeline.UNREAD; issue 21): the figures before it")
    ap.add_argument("--thresholds", type=float, nargs="+", default=(), metavar="T",
                    help="also judge mjtable's readings with each of these flag thresholds (0-1) in place of "
                         "the product's 0.6: silent photos against flags per photo, from the same network runs")
    ap.add_argument("--by-kind", action="store_true",
                    help="also print each row's figures for its ordinary photos, the squeezed uploads and the close-up "
                         "session of an unseen tile set apart (photo_kind)")
    ap.add_argument("--models", default=None,
                    help="a folder of models to measure instead of the committed ones (vision.train --out); "
                         "the peak memory is still that of `mjtable recognize` with the committed ones")
    args = ap.parse_args(argv)
    if args.models == "":
        ap.error("--models: give a folder (vision.train --out), not an empty name")
    if args.models is not None:
        args.models = Path(args.models)
        if not args.models.is_dir():
            ap.error(f"--models {str(args.models)!r}: not a folder (give the folder of vision.train --out)")
        try:
            cal = json.loads((args.models / "metrics.json").read_text()).get("detector", {}).get("calibration")
        except (OSError, ValueError) as e:
            ap.error(f"--models {args.models}: no readable metrics.json in it ({e})")
        if not cal:
            ap.error(f"--models {args.models}: its metrics.json has no detector calibration "
                     f"(run: python -m vision.train --only calibrate --out {args.models})")
    if any(not 0.0 < t < 1.0 for t in args.thresholds):
        ap.error(f"--thresholds: each a flag threshold between 0 and 1, not {' '.join(map(str, args.thresholds))}")
    if args.only_before and not args.before:
        ap.error("--only-before needs --before")
    if args.band and not 1.0 < args.band <= 20:
        ap.error(f"--band must be above 1 and at most 20, not {args.band}")
    if args.squeeze and not args.band:
        ap.error("--squeeze needs --band RATIO (the band's width over its height, e.g. 10)")
    if args.audited and args.band:
        ap.error("--audited takes whole photos: the audit's boxes are in the photos' pixels, not a band's")
    audits: dict = {}
    if args.audited:
        try:
            audits = load_audit()
        except (OSError, ValueError) as e:
            ap.error(f"--audited: {e}")
    try:
        systems = {"mjtable": mjtable_predict(model_dir=args.models, unread=not args.no_unread,
                                              thresholds=tuple(args.thresholds))}
        if not args.no_calibrated:  # the calibration of issue 21 (off in the product)
            systems["mjtable-calib"] = mjtable_predict(model_dir=args.models, calibrated=True, unread=not args.no_unread)
        if args.before:  # the pipeline as before issue 21 (its silent share without gaps: "-gaps")
            systems["mjtable-before"] = mjtable_predict(model_dir=args.models, calibrated=False, rescue=False)
        if args.only_before:
            systems = {"mjtable-before": systems["mjtable-before"]}
    except VisionError as e:
        ap.error(f"--models {args.models}: {e}")
    if args.band and not args.squeeze:
        systems["mjtable-square"] = mjtable_predict(own_shape=float("inf"), model_dir=args.models)
    if not args.no_peer:
        try:
            systems["mahjong-detector"] = peer_predict()
        except ImportError as e:
            print(f"mahjong-detector not installed ({e}); install the bench extra: pip install -e '.[bench]'")
    results: dict = {}
    bands = tempfile.TemporaryDirectory(prefix="vision_eval_band_")  # the --band pictures, removed at the end
    print(f"{'split':<14} {'system':<17} {'photos':>6} {'tiles':>5} {'tile acc':>8} {'det rec':>7} {'det prec':>8} "
          f"{'exact':>6} {'strict':>6} {'flowers':>8} {'ms/img':>7} {'silent':>6} {'-gaps':>6} {'flags':>5} {'gaps':>5} {'ECE':>5} "
          f"{'wrong':>5} {'extra':>5} {'missed':>6}")
    for split in args.splits:
        items = ([i for i in load_split("train") if is_holdout_session(i.session)] if split == "holdout"
                 else load_split(split))
        if args.limit:
            items = items[:args.limit]
        if args.band:
            items = band(items, args.band, Path(bands.name), args.squeeze)
        audit = audits.get(split)
        if args.audited and audit is None:
            print(f"--audited: {AUDIT.name} has no audit of {split}: no {split}+audit row")
        for name, fn in systems.items():
            photos = score_photos(fn, items, audit=audit)
            rows = [(split, summarise(photos))]
            if any(p["possible"] for p in photos) and not all(p["possible"] for p in photos):
                # the same run, without the photos whose labels cannot be right
                rows.append((f"{split}-", summarise([p for p in photos if p["possible"]])))
            if audit is not None:  # the same predictions, judged against the audited labels
                rows.append((f"{split}+audit", summarise([p["audited"] for p in photos])))
                if any(key == f"{split}-" for key, _ in rows):
                    rows.append((f"{split}-+audit", summarise([p["audited"] for p in photos if p["possible"]])))
            for key, r in rows:
                results[f"{key}/{name}"] = r
                fr = "n/a" if r["flower_recall"] is None else f"{100 * r['flower_recall']:.1f}%"
                print(f"{key:<14} {name:<17} {r['photos']:>6} {r['tiles']:>5} {100 * r['tile_accuracy']:>7.1f}% "
                      f"{100 * r['detection_recall']:>6.1f}% {100 * r['detection_precision']:>7.1f}% "
                      f"{100 * r['exact_hand_rate']:>5.1f}% {100 * r['exact_hand_rate_strict']:>5.1f}% "
                      f"{fr:>8} {'n/a' if r['median_latency_ms'] is None else format(r['median_latency_ms'], '.1f'):>7} "
                      f"{100 * r['silent_error_rate']:>5.1f}% {100 * r['silent_error_rate_no_gaps']:>5.1f}% {r['flagged_per_photo']:>5.2f} {r['gaps_per_photo']:>5.2f} "
                      f"{'n/a' if r['ece'] is None else format(r['ece'], '.3f'):>5} "
                      f"{r['unflagged_wrong']:>5} {r['unflagged_extra']:>5} {r['unflagged_missed']:>6}", flush=True)
            for key, r in rows:
                if args.thresholds and name == "mjtable":
                    # the same readings at each flag threshold (the row's photos: audited or not, with or
                    # without the photos whose labels cannot be right, as the row's key says)
                    recs = row_records(photos, key, split)
                    for th in args.thresholds:
                        t = summarise([q["at"][th] for q in recs])
                        results[f"{key}/mjtable@{th}"] = t
                        print(f"  threshold {th:.2f} {key}: silent {100 * t['silent_error_rate']:.1f}%, "
                              f"flags {t['flagged_per_photo']:.2f} per photo, exact {100 * t['exact_hand_rate']:.1f}%, "
                              f"unflagged wrong / extra / missed {t['unflagged_wrong']} / {t['unflagged_extra']} / "
                              f"{t['unflagged_missed']}", flush=True)
            for key, r in rows:
                if args.by_kind:  # the row's photos by kind (photo_kind)
                    for kind in KINDS:
                        part = [q for q in row_records(photos, key, split) if q["kind"] == kind]
                        if not part:
                            continue
                        k = summarise(part)
                        results[f"{key}/{name}/{kind}"] = k
                        print(f"  {kind:<9} {key}/{name}: {k['photos']} photos, per tile {100 * k['tile_accuracy']:.1f}%, "
                              f"exact {100 * k['exact_hand_rate']:.1f}%, silent {100 * k['silent_error_rate']:.1f}%, "
                              f"flags {k['flagged_per_photo']:.2f} per photo, unflagged wrong / extra / missed "
                              f"{k['unflagged_wrong']} / {k['unflagged_extra']} / {k['unflagged_missed']}", flush=True)
            for key, r in rows:
                if args.reliability and r["reliability"]:
                    print(f"  reliability {key}/{name}: " + "; ".join(
                        f"[{b['bin'][0]:.2f},{b['bin'][1]:.2f}) n={b['tiles']} conf {b['confidence']:.3f} "
                        f"right {b['accuracy']:.3f}" for b in r["reliability"]), flush=True)
    bands.cleanup()
    probe = load_split("test")[0].path
    rss = peak_rss_recognize(probe)
    results["peak_rss_mb_mjtable_recognize"] = round(rss, 1)
    print(f"peak resident memory of `mjtable recognize` on one photo: {rss:.0f} MB")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
