"""Reading the training and evaluation data in ``../shared/data/tiles`` (see its README).

Used by the training script, the benchmark and the tests; nothing at run time depends on it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from .tiles import CAMERASH_LABELS, DETECTION_NAMES, copies_in_a_set

#: ``../shared/data`` relative to the project root.
DATA_ROOT = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
DETECTION = DATA_ROOT / "tiles" / "chinese-mahjong-detection"
CAMERASH = DATA_ROOT / "tiles" / "camerash"

#: Class index order of the detection set's labels (from its data.yaml).
DETECTION_CLASSES = ('bs1', 'sc1', 'sd1', 'sb1', 'hwe', 'bs2', 'sc2', 'sd2', 'sb2', 'hws', 'bs3', 'sc3', 'sd3',
                     'sb3', 'hww', 'bs4', 'sc4', 'sd4', 'sb4', 'hwn', 'bf1', 'sc5', 'sd5', 'sb5', 'hdw', 'bf2',
                     'sc6', 'sd6', 'sb6', 'hdg', 'bf3', 'sc7', 'sd7', 'sb7', 'hdr', 'bf4', 'sc8', 'sd8', 'sb8',
                     'sc9', 'sd9', 'sb9')


@dataclasses.dataclass(frozen=True)
class LabelledBox:
    """One labelled tile: ``tile`` in scoring notation, ``box`` (x1, y1, x2, y2) in pixels."""

    tile: str
    box: tuple[float, float, float, float]


@dataclasses.dataclass(frozen=True)
class LabelledImage:
    """An image file of the detection set with its labelled tiles and its photo session."""

    path: Path
    boxes: tuple[LabelledBox, ...]
    session: str


def session_of(name: str) -> str:
    """The photo session of a file name: the date of ``IMG_YYYYMMDD_*``, the first five digits of a
    numeric upload id (uploads of one batch share them), or the name's leading word."""
    m = re.match(r"IMG_(\d{8})", name)
    if m:
        return "IMG_" + m.group(1)
    m = re.match(r"(\d{5})\d*_", name)
    if m:
        return "id" + m.group(1)
    m = re.match(r"([a-z]+(?:_[a-z]+)*)_\d{3}_", name)
    if m:
        return m.group(1)
    return "misc"


def is_holdout_session(session: str, fraction: float = 0.15) -> bool:
    """A fixed, hash-based choice of sessions held out of ``train`` for model selection."""
    h = int(hashlib.sha1(session.encode()).hexdigest()[:8], 16)
    return (h % 1000) < fraction * 1000


def label_box(line: str, size: float = 640.0) -> LabelledBox | None:
    """One line of a YOLO label file as a box in pixels of a ``size`` x ``size`` image, or None for
    a blank line. A line is ``class cx cy w h`` (a box) or ``class x1 y1 x2 y2 ...`` (a polygon of
    three or more points, YOLOv8's segment format: its bounding box), coordinates 0-1. The data
    set's export mixes both: 561 of its tiles (in 36 files) are polygons. Raises ValueError for a
    line that is neither, or an unknown class."""
    parts = line.split()
    if not parts:
        return None
    try:
        c, vals = int(parts[0]), [float(v) for v in parts[1:]]
        if c < 0:
            raise IndexError(c)
        name = DETECTION_NAMES[DETECTION_CLASSES[c]]
    except (ValueError, IndexError, KeyError):
        raise ValueError(f"not a YOLO label line (class, then numbers): {line!r}") from None
    if len(vals) == 4:
        x, y, w, h = vals
        return LabelledBox(name, ((x - w / 2) * size, (y - h / 2) * size, (x + w / 2) * size, (y + h / 2) * size))
    if len(vals) >= 6 and len(vals) % 2 == 0:
        xs, ys = vals[0::2], vals[1::2]
        return LabelledBox(name, (min(xs) * size, min(ys) * size, max(xs) * size, max(ys) * size))
    raise ValueError(f"a YOLO label line has 4 numbers (a box) or an even number of 6 or more (a polygon), "
                     f"not {len(vals)}: {line!r}")


def load_split(split: str, root: Path = DETECTION, unlabelled: bool = False) -> list[LabelledImage]:
    """The labelled images of one split (``train``, ``valid`` or ``test``), sorted by file name.

    Boxes are in the pixels of the stored image (640x640); a tile labelled as a polygon gets its
    bounding box (``label_box``). An image with no box is left out unless ``unlabelled``: in this
    data set such an image shows tiles that nobody labelled (2 of ``train``'s 441,
    ``circle_family_003`` and ``honor_family_003``; ``valid`` and ``test`` have none), so it is
    neither a picture without tiles to train the detector on nor a photo that can be scored.
    """
    out = []
    img_dir = root / split / "images"
    for p in sorted(img_dir.glob("*.jpg")):
        lab = root / split / "labels" / (p.stem + ".txt")
        boxes = []
        if lab.exists():
            for line in lab.read_text().splitlines():
                box = label_box(line)
                if box is not None:
                    boxes.append(box)
        if boxes or unlabelled:
            out.append(LabelledImage(p, tuple(boxes), session_of(p.name)))
    return out


def load_camerash(root: Path = CAMERASH) -> list[tuple[np.ndarray, str]]:
    """The single-tile images (HxWx3 BGR uint8, 320x240) with their label in scoring notation."""
    seen: set[str] = set()
    out = []
    for line in (root / "data.csv").read_text().splitlines()[1:]:
        parts = line.split(",")
        if len(parts) < 2 or parts[0] in seen:
            continue
        seen.add(parts[0])
        img = cv2.imread(str(root / "tiles-resized" / parts[0]))
        if img is not None:
            out.append((img, CAMERASH_LABELS[int(parts[1])]))
    return out


def impossible_labels(item: LabelledImage) -> dict[str, int]:
    """The tiles that ``item`` labels more often than one set holds them (``tiles.copies_in_a_set``:
    five or more of a tile, two or more of a flower), with their counts; empty when the labels can
    be right. Such a photo's labels are wrong (``valid`` has a session whose every tile is labelled
    ``1p``), or it shows two sets; ``benchmarks/vision_eval.py`` reports the figures with and
    without these photos."""
    counts = Counter(b.tile for b in item.boxes)
    return {t: n for t, n in sorted(counts.items()) if n > copies_in_a_set(t)}


def iou(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    """Intersection over union of two (x1, y1, x2, y2) boxes."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def match_predictions(pred_boxes: list[tuple[float, float, float, float]],
                      item: LabelledImage, centres: bool = False) -> dict[int, int]:
    """Which prediction reads which labelled tile of ``item``: ``{prediction index: label index}``,
    one prediction per label, the pairs of largest IoU first, only pairs of IoU > 0.5 (the
    benchmark's per-tile rule; ``pred_boxes`` are (x1, y1, x2, y2) in the photo's pixels).

    ``centres``: then also pair, nearest centres first, a prediction and a label left over whose
    boxes each hold the other's centre: the same tile at the same place, boxed differently (the
    ``train`` split's photos are augmented with rotations and shear, and a turned tile's label is
    the box around the turned box, far larger than a box of the tile face). The referee's rule
    (silent errors, the confidence calibration): such a tile is read, not missed plus extra."""
    pairs = sorted(((iou(p, g.box), pi, gi) for pi, p in enumerate(pred_boxes) for gi, g in enumerate(item.boxes)),
                   reverse=True)
    used_g: set[int] = set()
    out: dict[int, int] = {}
    for v, pi, gi in pairs:
        if v <= 0.5:
            break
        if pi in out or gi in used_g:
            continue
        out[pi] = gi
        used_g.add(gi)
    if centres:
        def inside(c, b):
            return b[0] <= c[0] <= b[2] and b[1] <= c[1] <= b[3]
        left = []
        for pi, p in enumerate(pred_boxes):
            if pi in out:
                continue
            cp = ((p[0] + p[2]) / 2, (p[1] + p[3]) / 2)
            for gi, g in enumerate(item.boxes):
                cg = ((g.box[0] + g.box[2]) / 2, (g.box[1] + g.box[3]) / 2)
                if gi not in used_g and inside(cp, g.box) and inside(cg, p):
                    left.append(((cp[0] - cg[0]) ** 2 + (cp[1] - cg[1]) ** 2, pi, gi))
        for _, pi, gi in sorted(left):
            if pi not in out and gi not in used_g:
                out[pi] = gi
                used_g.add(gi)
    return out


def tile_faces(split: str = "test", per_label: int = 3, min_height: int = 50) -> dict[str, list[np.ndarray]]:
    """Upright tile crops (HxWx3 BGR uint8) from the labelled photos of ``split`` of
    chinese-mahjong-detection, up to ``per_label`` per tile, in file order: boxes at least
    ``min_height`` px tall and 1.25 times taller than wide, wholly inside the 640 px photo. The
    tests and the capture benchmark lay synthetic scenes out of them (``split="test"``: photos no
    model was trained on). Raises FileNotFoundError when the split's folder is missing."""
    if not (DETECTION / split).is_dir():
        raise FileNotFoundError(f"{DETECTION / split} is not there (../shared/data must sit beside the project)")
    faces: dict[str, list[np.ndarray]] = {}
    for item in load_split(split):
        img = None
        for b in item.boxes:
            x1, y1, x2, y2 = (int(round(v)) for v in b.box)
            w, h = x2 - x1, y2 - y1
            if h < min_height or h < 1.25 * w or x1 < 0 or y1 < 0 or x2 > 640 or y2 > 640:
                continue
            if len(faces.get(b.tile, [])) >= per_label:
                continue
            if img is None:
                img = cv2.imread(str(item.path))
            faces.setdefault(b.tile, []).append(img[y1:y2, x1:x2].copy())
    return faces
