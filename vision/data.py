"""Reading the training and evaluation data in ``../shared/data/tiles`` (see its README).

Used by the training script, the benchmark and the tests; nothing at run time depends on it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
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


#: The label audit of issue 21 (``load_audit``).
AUDIT = Path(__file__).resolve().parent / "label_audit.json"
#: An audited box's verdict: a real tile whose face can be named; a real tile cut by the photo's
#: edge, mostly hidden or seen from its side; a face-down tile (a wall); no tile at all.
VERDICTS = ("tile", "partial", "back", "none")


def load_audit(path: Path = AUDIT) -> dict[str, dict[str, list[dict]]]:
    """The label audit (``vision/label_audit.json``): split -> photo file name -> entries
    ``{"box": [x1, y1, x2, y2] (the photo's pixels), "verdict": one of VERDICTS, "tile": a tile
    in scoring notation for "tile", else null, "note": optional}``, and ``"label"`` (the data
    set's name) when the entry re-checks a label at that box (``audited``); the file's ``header`` (what
    was audited, by what rule, when) is left out. Raises ValueError naming the first malformed
    entry, OSError when the file cannot be read."""
    from .tiles import BACK, LABELS, UNKNOWN
    data = json.loads(Path(path).read_text())
    if not isinstance(data, dict) or "header" not in data:
        raise ValueError(f"{path}: a JSON object with a 'header' and one object per split")
    out: dict[str, dict[str, list[dict]]] = {}
    for split, photos in data.items():
        if split == "header":
            continue
        for name, entries in photos.items():
            for k, e in enumerate(entries):
                where = f"{path}: {split}/{name} entry {k}"
                if e.get("verdict") not in VERDICTS:
                    raise ValueError(f"{where}: verdict {e.get('verdict')!r}, allowed: {', '.join(VERDICTS)}")
                box = e.get("box")
                if not (isinstance(box, list) and len(box) == 4 and box[0] < box[2] and box[1] < box[3]):
                    raise ValueError(f"{where}: box {box!r}, allowed: [x1, y1, x2, y2] with x1 < x2, y1 < y2")
                if "label" in e and (e["label"] not in LABELS or e["label"] in (BACK, UNKNOWN)):
                    raise ValueError(f"{where}: label {e['label']!r}: the data set's name of the re-checked label")
                tile = e.get("tile")
                if (e["verdict"] == "tile") != (tile is not None) or (
                        tile is not None and (tile not in LABELS or tile in (BACK, UNKNOWN))):
                    raise ValueError(f"{where}: tile {tile!r}: a tile in scoring notation (1m..9m, 1p..9p, "
                                     f"1s..9s, E S W N C F P, 1f..8f) for verdict 'tile', null otherwise")
        out[split] = photos
    return out


def audited(it, entries: list[dict]):
    """A labelled photo with its audit applied: ``(LabelledImage, ignore)``. ``entries``: one
    photo's list of ``load_audit``.

    An entry on a box no label has (a box of the reader that matched no label): ``tile`` becomes a
    label of its audited name (so a box there is right or wrong by name, and no box there is a
    missed tile); ``partial`` and ``back`` boxes are returned in ``ignore`` (``benchmarks/vision_eval.judge``: a
    box on them is neither right nor extra); ``none`` changes nothing (a box there stays an extra).

    An entry with ``"label"`` re-checks a label of the data set (its name and exact box): ``tile``
    renames it to the audited name; ``partial`` and ``back`` remove it and ignore its box; ``none``
    removes it. Raises ValueError when the photo has no such label (the audit no longer fits the
    data set)."""
    boxes = list(it.boxes)
    tiles, ignore = [], []
    for e in entries:
        box = tuple(map(float, e["box"]))
        if "label" in e:
            at = [gi for gi, g in enumerate(boxes) if g is not None and g.tile == e["label"]
                  and max(abs(a - b) for a, b in zip(g.box, box)) < 0.5]
            if not at:
                raise ValueError(f"{it.path.name}: no label {e['label']} at {list(box)} to re-check")
            boxes[at[0]] = LabelledBox(e["tile"], boxes[at[0]].box) if e["verdict"] == "tile" else None
        elif e["verdict"] == "tile":
            tiles.append(LabelledBox(e["tile"], box))
        if e["verdict"] in ("partial", "back"):
            ignore.append(box)
    return dataclasses.replace(it, boxes=tuple(b for b in boxes if b is not None) + tuple(tiles)), tuple(ignore)


def tile_faces(split: str = "test", per_label: int = 3, min_height: int = 50) -> dict[str, list[np.ndarray]]:
    """Upright tile crops (HxWx3 BGR uint8) from the labelled photos of ``split`` of
    chinese-mahjong-detection, up to ``per_label`` per tile, in file order: boxes at least
    ``min_height`` px tall and 1.25 times taller than wide, wholly inside the 640 px photo. The
    tests and the capture benchmark lay synthetic scenes out of them (``split="test"``: photos no
    model was trained on). The labels are read with the label audit applied (``audited``): a crop
    of 九萬 that the data set labels 5m is a 9m face here, a tile the data set left unlabelled
    may be a face. Raises FileNotFoundError when the split's folder is missing."""
    if not (DETECTION / split).is_dir():
        raise FileNotFoundError(f"{DETECTION / split} is not there (../shared/data must sit beside the project)")
    audit = load_audit().get(split, {})
    faces: dict[str, list[np.ndarray]] = {}
    for item in load_split(split):
        item = audited(item, audit.get(item.path.name, []))[0]
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
