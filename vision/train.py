"""Reproducible training of the two models of the vision pipeline (``make train``).

* the **detector**: a small centre-point network (CenterNet-style heatmap + box size + offset) at
  320x320 input, stride 4, class-agnostic (every tile face and back); four of them, trained on
  different samples and from two seeds (``DETECTOR_MEMBERS``, ``MEMBER_SEEDS``), whose outputs the
  run time averages;
* the **classifier**: a small CNN on 64x48 (HxW) portrait crops, 44 labels (``vision.tiles.LABELS``);
  two of them (``CLASSIFIER_MEMBERS``), probabilities averaged at run time.

Data (read from ``../shared/data/tiles``, never copied): the ``train`` split of
``chinese-mahjong-detection`` minus the photo sessions that ``vision.data.is_holdout_session``
holds out (used for model selection and the metrics below) and minus its 2 photos with no label
(tiles nobody labelled: not pictures without tiles; ``vision.data.load_split``, which also reads
the tiles labelled as polygons), the camerash single tiles, synthetic
face-down tiles and synthetic table scenes (``vision.synth``). ``valid`` and ``test`` are never
read here: they are the benchmark's evaluation sets.

Writes the members' files (``python -m vision.train --list-members``) and ``metrics.json`` into
``vision/models`` (``--out``). ``make train`` trains the members side by side (``--member FILE``,
one process each; ``metrics.json`` is merged under a lock), then runs ``--only calibrate``.
Needs the ``train`` extra (PyTorch CPU, onnx). Fixed seeds; one thread.

Usage: ``python -m vision.train [--det-epochs N] [--cls-epochs N] [--only det|cls|calibrate]
[--member FILE]`` (``--det-stretch``, ``--det-rotate``: augmentations tried, off by default;
``--det-loose``, ``--cls-rotate`` with ``--member``: that member's share of close-ups or turned
crops instead of its own; ``--cls-white``, ``--cls-edge``, ``--cls-hard``, ``--cls-lowres``: the
classifier's synthetic white dragons, edge boxes, mined hard negatives and squeezed crops, ``CLS_EXTRA``; ``--cls-init DIR``,
``--cls-lr``: fine-tune from exported classifiers; tried for issue 21, off by default, see
vision/README.md).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import math
import os
import random
import time
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from . import data as D
from .errors import VisionError
from .models import CLS_H, CLS_W, DET_SIZE, DET_STRIDE, TileDetector, _covered, _metrics, decode_heatmap, to_portrait
from .synth import compose_loose_scene, compose_scene, paint_white_dragon, render_back, render_background
from .tiles import LABEL_INDEX, LABELS, NUM_LABELS, SUITED, HONORS, FLOWERS

OUT = Path(__file__).resolve().parent / "models"


def conv_bn(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class Detector(nn.Module):
    """Input 1x3xSxS BGR 0-255 (trained at S = 320); output 1x5x(S/4)x(S/4): heat logit, log(w/4),
    log(h/4), dx, dy."""

    def __init__(self) -> None:
        super().__init__()
        self.s2 = nn.Sequential(conv_bn(3, 16, 2), conv_bn(16, 16))             # 160
        self.s4 = nn.Sequential(conv_bn(16, 32, 2), conv_bn(32, 32))            # 80
        self.s8 = nn.Sequential(conv_bn(32, 64, 2), conv_bn(64, 64))            # 40
        self.s16 = nn.Sequential(conv_bn(64, 96, 2), conv_bn(96, 96))           # 20
        self.s32 = nn.Sequential(conv_bn(96, 128, 2), conv_bn(128, 128))       # 10
        self.l16, self.l8, self.l4 = nn.Conv2d(96, 64, 1), nn.Conv2d(64, 64, 1), nn.Conv2d(32, 64, 1)
        self.t32 = nn.Conv2d(128, 64, 1)
        self.m16, self.m8, self.m4 = conv_bn(64, 64), conv_bn(64, 64), conv_bn(64, 48)
        self.head = nn.Sequential(conv_bn(48, 48), nn.Conv2d(48, 5, 1))
        self.head[1].bias.data[0] = -2.2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x / 255.0 - 0.5
        c4 = self.s4(self.s2(x))
        c8 = self.s8(c4)
        c16 = self.s16(c8)
        c32 = self.s32(c16)
        up = lambda t: F.interpolate(t, scale_factor=2.0, mode="nearest")  # noqa: E731
        p16 = self.m16(self.l16(c16) + up(self.t32(c32)))
        p8 = self.m8(self.l8(c8) + up(p16))
        p4 = self.m4(self.l4(c4) + up(p8))
        return self.head(p4)


class Classifier(nn.Module):
    """Input Nx3x64x48 BGR 0-255; output Nx44 logits."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(
            conv_bn(3, 24), conv_bn(24, 32, 2),          # 32x24
            conv_bn(32, 32), conv_bn(32, 64, 2),         # 16x12
            conv_bn(64, 64), conv_bn(64, 96, 2),         # 8x6
            conv_bn(96, 96), conv_bn(96, 128, 2),        # 4x3
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(128, NUM_LABELS))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x / 255.0 - 0.5)


# ----------------------------------------------------------------------------------------------
# data

def colour_jitter(img: np.ndarray, rng: np.random.Generator, strength: float = 1.0) -> np.ndarray:
    f = img.astype(np.float32)
    f = f * rng.uniform(1 - 0.35 * strength, 1 + 0.3 * strength) + rng.uniform(-25, 25) * strength
    f = f * (1 + rng.uniform(-0.08, 0.08, 3) * strength)  # white balance
    if rng.random() < 0.3:
        grey = f.mean(axis=2, keepdims=True)
        f = grey + (f - grey) * rng.uniform(0.4, 1.3)
    if rng.random() < 0.3:
        f += rng.normal(0, rng.uniform(2, 8), f.shape)
    out = np.clip(f, 0, 255).astype(np.uint8)
    if rng.random() < 0.25:
        out = cv2.GaussianBlur(out, (3, 3), 0)
    return out


class Pools:
    """Everything loaded once: train images and boxes, camerash faces, upright crops for scenes."""

    def __init__(self, rng: np.random.Generator) -> None:
        items = D.load_split("train")
        #: photos of tiles with no box, left out (``vision.data.load_split``)
        self.unlabelled = len(D.load_split("train", unlabelled=True)) - len(items)
        self.fit = [i for i in items if not D.is_holdout_session(i.session)]
        self.hold = [i for i in items if D.is_holdout_session(i.session)]
        self.images = {i.path: cv2.imread(str(i.path)) for i in items}
        self.camerash = D.load_camerash()
        self.faces: dict[str, list[np.ndarray]] = {}
        for img, lab in self.camerash:
            self.faces.setdefault(lab, []).append(img)
        for it in self.fit:  # upright-looking crops of the fit photos, for synthetic scenes
            im = self.images[it.path]
            for b in it.boxes:
                x1, y1, x2, y2 = (int(round(v)) for v in b.box)
                w, h = x2 - x1, y2 - y1
                if h > 1.2 * w and w >= 24 and x1 >= 0 and y1 >= 0 and x2 <= 640 and y2 <= 640:
                    self.faces.setdefault(b.tile, []).append(im[y1:y2, x1:x2])
        self.face_labels = sorted(self.faces)
        #: hard negatives for the classifier (``mine_hard_negatives``), filled when ``cls_hard`` is on
        self.hard: list[tuple] = []


def random_layout(rng: np.random.Generator) -> list:
    names = list(SUITED + HONORS) * 3 + list(FLOWERS)
    rows = []
    for _ in range(rng.integers(1, 4)):
        groups = []
        for _ in range(rng.integers(1, 5)):
            g = []
            n = int(rng.integers(1, 9))
            for k in range(n):
                lab = "back" if rng.random() < 0.08 else names[rng.integers(len(names))]
                g.append((lab, bool(rng.random() < 0.12)))
            groups.append(g)
        rows.append(groups)
    return rows


def synthetic_scene(pools: Pools, rng: np.random.Generator) -> tuple[np.ndarray, list[tuple[float, ...]]]:
    for _ in range(10):
        try:
            H = int(rng.integers(360, 720)); W = int(rng.integers(480, 960))
            img, placed = compose_scene(random_layout(rng), pools.faces, rng, size=(H, W))
            break
        except ValueError:
            continue
    else:
        raise RuntimeError("could not compose a scene")
    sx, sy = 640 / W, 640 / H
    img = cv2.resize(img, (640, 640), interpolation=cv2.INTER_AREA)
    return img, [(t.box[0] * sx, t.box[1] * sy, t.box[2] * sx, t.box[3] * sy) for t in placed]


def paste_backs(img: np.ndarray, boxes: list, rng: np.random.Generator) -> None:
    """Paste 1-3 synthetic face-down tiles where they overlap no labelled box (in place)."""
    sizes = [min(b[3] - b[1], b[2] - b[0]) for b in boxes] or [80]
    for _ in range(rng.integers(1, 4)):
        h = int(np.clip(np.median(sizes) * rng.uniform(1.1, 1.5), 24, 200)); w = int(h * rng.uniform(0.65, 0.85))
        if rng.random() < 0.3:
            h, w = w, h
        for _ in range(10):
            x, y = int(rng.integers(0, 640 - w)), int(rng.integers(0, 640 - h))
            nb = (x, y, x + w, y + h)
            if all(D.iou(nb, b) == 0 for b in boxes):
                img[y:y + h, x:x + w] = render_back(rng, h, w)
                boxes.append(nb)
                break


def det_sample(pools: Pools, rng: np.random.Generator, items: list) -> tuple[np.ndarray, np.ndarray]:
    """One 320x320 training image and its 80x80 target (6 channels: heat, logw, logh, dx, dy, mask)."""
    r = rng.random()
    if r < AUG["loose"]:
        img, placed = compose_loose_scene(pools.faces, pools.face_labels, rng)
        boxes = [t.box for t in placed]
    elif r < AUG["loose"] + 0.25:
        img, boxes = synthetic_scene(pools, rng)
    else:
        it = items[rng.integers(len(items))]
        img = pools.images[it.path].copy()
        boxes = [b.box for b in it.boxes]
        if rng.random() < 0.3:
            paste_backs(img, boxes, rng)
    # random crop/zoom; sometimes a strongly stretched one (photos squeezed into a square upload)
    s = rng.uniform(0.55, 1.0)
    if AUG["stretch"] and rng.random() < AUG["stretch"]:
        a = math.exp(rng.uniform(math.log(1.6), math.log(5.0)))
        long_side = int(640 * rng.uniform(0.6, 1.0))
        cw, ch = (max(32, int(long_side / a)), long_side) if rng.random() < 0.5 else (long_side, max(32, int(long_side / a)))
    else:
        cw = int(640 * s * rng.uniform(0.85, 1.15)); ch = int(640 * s * rng.uniform(0.85, 1.15))
    cw, ch = min(cw, 640), min(ch, 640)
    x0 = int(rng.integers(0, 640 - cw + 1)); y0 = int(rng.integers(0, 640 - ch + 1))
    crop = img[y0:y0 + ch, x0:x0 + cw]
    crop = cv2.resize(crop, (DET_SIZE, DET_SIZE), interpolation=cv2.INTER_AREA)
    sx, sy = DET_SIZE / cw, DET_SIZE / ch
    bb = []
    for b in boxes:
        x1, y1, x2, y2 = (b[0] - x0) * sx, (b[1] - y0) * sy, (b[2] - x0) * sx, (b[3] - y0) * sy
        area = (x2 - x1) * (y2 - y1)
        cx1, cy1, cx2, cy2 = max(0, x1), max(0, y1), min(DET_SIZE, x2), min(DET_SIZE, y2)
        if cx2 <= cx1 or cy2 <= cy1 or (cx2 - cx1) * (cy2 - cy1) < 0.6 * area:
            continue
        bb.append([cx1, cy1, cx2, cy2])
    bb = np.array(bb, np.float32).reshape(-1, 4)
    if AUG["rotate"] and rng.random() < AUG["rotate"]:
        crop, bb = rotate_sample(crop, bb, float(rng.uniform(-40, 40)), rng)
    k = int(rng.integers(4))
    for _ in range(k):  # rotate 90 degrees counter-clockwise
        crop = np.ascontiguousarray(np.rot90(crop))
        bb = np.stack([bb[:, 1], DET_SIZE - bb[:, 2], bb[:, 3], DET_SIZE - bb[:, 0]], 1) if len(bb) else bb
    if rng.random() < 0.5:
        crop = np.ascontiguousarray(crop[:, ::-1])
        if len(bb):
            bb = np.stack([DET_SIZE - bb[:, 2], bb[:, 1], DET_SIZE - bb[:, 0], bb[:, 3]], 1)
    crop = colour_jitter(crop, rng)
    return crop, det_target(bb)


#: Detector augmentation (off by default, the committed detectors are trained without): the share
#: of samples stretched along one axis (1.6-5x) and turned by an arbitrary angle (up to 40
#: degrees; tiles scattered on the table). Tried at 0.2 / 0.25 and 0.2 / 0: worse on the held-out
#: photos (F1 0.83 against 0.86 at 55 epochs) and no better on the stretched photos of `valid`.
#: ``loose`` and ``cls_rotate`` are set per member of the ensembles (``DETECTOR_MEMBERS``,
#: ``CLASSIFIER_MEMBERS``): the share of synthetic close-ups in the detector's samples, and of
#: crops taken around a turned tile in the classifier's.
#: ``cls_jitter``: the spread (standard deviation, share of the box's side) by which each side of a
#: classifier crop's box is moved, imitating the detector's box error.
AUG = {"stretch": 0.0, "rotate": 0.0, "cls_rotate": 0.0, "loose": 0.0, "cls_jitter": 0.05,
       "cls_white": 0.0, "cls_edge": 0.0, "cls_hard": 0.0, "cls_lowres": 0.0}
#: The classifier's shares of synthetic crops against issue 21's silent errors (``cls_batch``):
#: ``cls_white`` real tiles painted as white dragons (``synth.paint_white_dragon``, label ``P``),
#: ``cls_edge`` boxes beside or between labelled tiles (``edge_box``, ``unknown``), ``cls_hard``
#: the committed detectors' own boxes that match no label on the fit photos (``mine_hard_negatives``,
#: ``unknown``); ``cls_lowres`` crops of any kind seen at a low resolution along one axis and
#: enlarged back (``low_resolution``: the tiles of an upload the export squeezed into a square, stored
#: 3-12 times narrower than they are, which the pipeline enlarges back to 64x48). Off by default (0).
CLS_EXTRA = ("cls_white", "cls_edge", "cls_hard", "cls_lowres")

#: The detector ensemble (file name -> share of the synthetic close-ups of turned, scattered or
#: packed tiles, ``vision.synth.compose_loose_scene``, in its samples). Each member is trained
#: alone, with the seed ``--seed`` plus its ``MEMBER_SEEDS`` offset; at run time their outputs are
#: averaged (``vision.models``). The member with the close-ups alone reads the held-out photos
#: worse (87.5% per tile against 88.3%) and `valid` better (84.1% against 83.0%); the two averaged
#: do not lose on the held-out photos. The same two trained from seed 1 join them (December 2026):
#: held-out F1 0.920 at 416 / 0.35 against 0.914 (seed 0 alone, 448 / 0.4) and 0.906 (seed 1
#: alone, 384 / 0.35); per tile, held-out 91.6% against 90.1% and 89.8% (vision/README.md).
DETECTOR_MEMBERS = {"detector.onnx": 0.0, "detector_loose.onnx": 0.15,
                    "detector_s1.onnx": 0.0, "detector_loose_s1.onnx": 0.15}
#: Added to ``--seed`` for a member (0 when not listed): members that differ only by their seed.
MEMBER_SEEDS = {"detector_s1.onnx": 1, "detector_loose_s1.onnx": 1}

#: The classifier ensemble (file name -> share of crops taken around a tile turned by a small or
#: any angle, ``turned_tile``). Alone, the member with turned crops reads 94.3% of the held-out
#: crops against 92.7%; the two averaged read the held-out photos best (89.2% per tile against
#: 88.3% with the first alone, with the detectors as they run).
CLASSIFIER_MEMBERS = {"classifier.onnx": 0.0, "classifier_turned.onnx": 0.3}


def rotate_sample(img: np.ndarray, bb: np.ndarray, angle: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``img`` (SxSx3) turned by ``angle`` degrees about its centre (the corners filled with a plain
    colour) and the boxes that enclose the turned boxes; boxes left mostly outside are dropped."""
    S = img.shape[0]
    m = cv2.getRotationMatrix2D((S / 2, S / 2), angle, 1.0)
    fill = tuple(int(v) for v in rng.integers(0, 256, 3))
    out = cv2.warpAffine(img, m, (S, S), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=fill)
    if not len(bb):
        return out, bb
    corners = np.stack([bb[:, [0, 1]], bb[:, [2, 1]], bb[:, [0, 3]], bb[:, [2, 3]]], 1)  # n x 4 x 2
    pts = corners @ m[:, :2].T + m[:, 2]
    nb = np.concatenate([pts.min(1), pts.max(1)], 1)
    area = (nb[:, 2] - nb[:, 0]) * (nb[:, 3] - nb[:, 1])
    cb = np.clip(nb, 0, S)
    inside = (cb[:, 2] - cb[:, 0]).clip(0) * (cb[:, 3] - cb[:, 1]).clip(0)
    return out, cb[inside >= 0.6 * area].astype(np.float32).reshape(-1, 4)


def det_target(bb: np.ndarray) -> np.ndarray:
    n = DET_SIZE // DET_STRIDE
    t = np.zeros((6, n, n), np.float32)
    ys, xs = np.mgrid[0:n, 0:n].astype(np.float32)
    for x1, y1, x2, y2 in bb:
        w, h = x2 - x1, y2 - y1
        cx, cy = (x1 + x2) / 2 / DET_STRIDE, (y1 + y2) / 2 / DET_STRIDE
        ix, iy = min(n - 1, int(cx)), min(n - 1, int(cy))
        sig = max(0.6, min(w, h) / DET_STRIDE / 6)
        g = np.exp(-((xs - ix) ** 2 + (ys - iy) ** 2) / (2 * sig * sig))
        t[0] = np.maximum(t[0], g)
        t[1, iy, ix] = math.log(max(w, 1) / DET_STRIDE)
        t[2, iy, ix] = math.log(max(h, 1) / DET_STRIDE)
        t[3, iy, ix] = cx - ix
        t[4, iy, ix] = cy - iy
        t[5, iy, ix] = 1
    return t


def det_loss(out: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
    heat = torch.sigmoid(out[:, 0]).clamp(1e-4, 1 - 1e-4)
    gt = tgt[:, 0]
    pos = tgt[:, 5]
    neg_w = (1 - gt) ** 4
    pos_loss = -(torch.log(heat) * (1 - heat) ** 2 * pos).sum()
    neg_loss = -(torch.log(1 - heat) * heat ** 2 * neg_w * (1 - pos)).sum()
    npos = pos.sum().clamp(min=1)
    focal = (pos_loss + neg_loss) / npos
    reg = (F.l1_loss(out[:, 1:5], tgt[:, 1:5], reduction="none") * pos[:, None]).sum() / npos
    return focal + reg


#: The centre threshold at which a detector's epochs are compared (``evaluate_detector``; the
#: run-time one is calibrated afterwards). It was the committed calibration's threshold when the
#: committed detectors were trained (December 2026), and is fixed here so that ``make train``
#: keeps the same epochs whatever ``metrics.json`` says.
EPOCH_THRESHOLD = 0.25


def evaluate_detector(model: nn.Module, pools: Pools, items: list) -> dict:
    """Recall and precision (IoU > 0.5) on labelled photos at 320 px and ``EPOCH_THRESHOLD``."""
    model.eval()
    tp = fp = n = 0
    with torch.no_grad():
        for it in items:
            img = cv2.resize(pools.images[it.path], (DET_SIZE, DET_SIZE), interpolation=cv2.INTER_AREA)
            out = model(torch.from_numpy(img.transpose(2, 0, 1)[None].astype(np.float32))).numpy()[0]
            dets = decode_heatmap(out, 640 / DET_SIZE, 640 / DET_SIZE, EPOCH_THRESHOLD)
            gts = [b.box for b in it.boxes]
            used = set()
            for d in dets:
                best, bi = 0.0, -1
                for j, g in enumerate(gts):
                    if j not in used:
                        v = D.iou(d[:4], g)
                        if v > best:
                            best, bi = v, j
                if best > 0.5:
                    used.add(bi); tp += 1
                else:
                    fp += 1
            n += len(gts)
    return {"recall": tp / max(n, 1), "precision": tp / max(tp + fp, 1), "boxes": n}


def train_detector(pools: Pools, epochs: int, seed: int, log) -> tuple[nn.Module, dict]:
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = Detector()
    steps_per_epoch = 30
    bs = 12
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    total = epochs * steps_per_epoch
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=total, pct_start=0.1)
    best, best_state, best_m = -1.0, None, {}
    t0 = time.time()
    for ep in range(epochs):
        model.train()
        tot = 0.0
        for _ in range(steps_per_epoch):
            xs, ts = zip(*(det_sample(pools, rng, pools.fit) for _ in range(bs)))
            x = torch.from_numpy(np.stack(xs).transpose(0, 3, 1, 2).astype(np.float32))
            t = torch.from_numpy(np.stack(ts))
            loss = det_loss(model(x), t)
            opt.zero_grad(); loss.backward(); opt.step(); sched.step()
            tot += loss.item()
        if ep % 3 == 2 or ep == epochs - 1:
            m = evaluate_detector(model, pools, pools.hold)
            score = 2 * m["recall"] * m["precision"] / max(1e-9, m["recall"] + m["precision"])
            if score > best:
                best, best_m = score, m
                best_state = {k: v.clone() for k, v in model.state_dict().items()}
            log(f"det epoch {ep + 1}/{epochs} loss {tot / steps_per_epoch:.3f} holdout {m} ({time.time() - t0:.0f}s)")
        else:
            log(f"det epoch {ep + 1}/{epochs} loss {tot / steps_per_epoch:.3f} ({time.time() - t0:.0f}s)")
    model.load_state_dict(best_state)
    model.eval()
    return model, best_m


def turned_tile(img: np.ndarray, box, angle: float) -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """The neighbourhood of ``box`` turned by ``angle`` degrees about the box's centre, and the box
    that encloses the turned tile in it (what the detector finds around a tile lying askew)."""
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    r = math.ceil(0.75 * math.hypot(w, h)) + 2
    ox, oy = int(cx) - r, int(cy) - r
    patch = cv2.copyMakeBorder(img[max(0, oy):oy + 2 * r, max(0, ox):ox + 2 * r], max(0, -oy), 0, max(0, -ox), 0,
                               cv2.BORDER_REPLICATE)
    patch = cv2.copyMakeBorder(patch, 0, 2 * r - patch.shape[0], 0, 2 * r - patch.shape[1], cv2.BORDER_REPLICATE)
    m = cv2.getRotationMatrix2D((cx - ox, cy - oy), angle, 1.0)
    patch = cv2.warpAffine(patch, m, (2 * r, 2 * r), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    c, s = abs(math.cos(math.radians(angle))), abs(math.sin(math.radians(angle)))
    ew, eh = w * c + h * s, w * s + h * c
    px, py = cx - ox, cy - oy
    return patch, (px - ew / 2, py - eh / 2, px + ew / 2, py + eh / 2)


def cls_crop(img: np.ndarray, box, rng: np.random.Generator | None) -> np.ndarray:
    if rng is not None and AUG["cls_rotate"] and rng.random() < AUG["cls_rotate"]:  # a tile lying askew
        angle = rng.uniform(-12, 12) if rng.random() < 0.5 else rng.uniform(-45, 45)
        img, box = turned_tile(img, box, float(angle))
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    if rng is not None:  # imitate the detector's box error
        j = AUG["cls_jitter"]
        x1 += rng.normal(0, j) * w; x2 += rng.normal(0, j) * w
        y1 += rng.normal(0, j) * h; y2 += rng.normal(0, j) * h
    H, W = img.shape[:2]
    x1, y1 = int(max(0, round(x1))), int(max(0, round(y1)))
    x2, y2 = int(min(W, round(x2))), int(min(H, round(y2)))
    if x2 - x1 < 4 or y2 - y1 < 4:
        return np.zeros((CLS_H, CLS_W, 3), np.uint8)
    c = to_portrait(img[y1:y2, x1:x2])
    if rng is not None and rng.random() < 0.5:
        c = c[::-1, ::-1]
    if rng is not None and AUG["cls_lowres"] and rng.random() < AUG["cls_lowres"]:
        c = low_resolution(c, rng)
    return cv2.resize(np.ascontiguousarray(c), (CLS_W, CLS_H), interpolation=cv2.INTER_AREA)


def low_resolution(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``crop`` (HxWx3) shrunk 3-12 times along one axis (its width or its height, one in two),
    to no fewer than 2 pixels, and enlarged back to its size: what is left of a tile in a picture
    that the data set's export squeezed into a square (vision/README.md, "Squeezed photos")."""
    h, w = crop.shape[:2]
    f = rng.uniform(3, 12)
    small = (max(2, round(w / f)), h) if rng.random() < 0.5 else (w, max(2, round(h / f)))
    shrunk = cv2.resize(np.ascontiguousarray(crop), small, interpolation=cv2.INTER_AREA)
    return cv2.resize(shrunk, (w, h), interpolation=cv2.INTER_LINEAR)


def cls_samples(pools: Pools, items: list) -> list[tuple]:
    """(image key or array, box, label index) for every labelled tile, camerash tile."""
    out = []
    for it in items:
        for b in it.boxes:
            out.append((it.path, b.box, LABEL_INDEX[b.tile]))
    return out


def background_box(it, rng: np.random.Generator):
    sizes = [min(b.box[2] - b.box[0], b.box[3] - b.box[1]) for b in it.boxes] or [60]
    for _ in range(20):
        h = float(np.clip(np.median(sizes) * rng.uniform(0.8, 1.6), 16, 400)); w = h * rng.uniform(0.5, 1.4)
        x, y = rng.uniform(0, 640 - w), rng.uniform(0, 640 - h)
        nb = (x, y, x + w, y + h)
        if all(D.iou(nb, b.box) < 0.05 for b in it.boxes):
            return nb
    return None


#: A box beside a tile counts as no tile when it overlaps every labelled box by IoU below this
#: and holds no labelled box's centre (``no_tile``).
EDGE_IOU = 0.3


def no_tile(box, labels: list) -> bool:
    """True when ``box`` (x1, y1, x2, y2) shows at most part of a labelled tile (``labels``: their
    boxes): IoU below ``EDGE_IOU`` with each and none's centre inside it. The centre rule keeps
    out boxes on a tile whose label the data set's export sheared loose (IoU 0.3-0.5 or less with
    the tile's box: the referee's rule, ``data.match_predictions`` with ``centres``, counts them as
    that tile)."""
    for b in labels:
        cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
        if D.iou(box, b) >= EDGE_IOU or (box[0] <= cx <= box[2] and box[1] <= cy <= box[3]):
            return False
    return True


def edge_box(it, rng: np.random.Generator):
    """A box where a detector goes wrong beside real tiles (issue 21: extra boxes at the ends of
    racks and between tiles): a labelled box moved by 45-85% of its side along a row (or 25% of
    the time across it), 0.4-1.1 times as wide, that is no labelled tile (``no_tile``): a tile's edge and what lies beyond it (a rack, the felt, half of the
    next tile). ``(x1, y1, x2, y2)`` in the photo's pixels, or None when 20 tries find none."""
    boxes = [b.box for b in it.boxes]
    if not boxes:
        return None
    for _ in range(20):
        x1, y1, x2, y2 = boxes[rng.integers(len(boxes))]
        w, h = x2 - x1, y2 - y1
        along_x = (w <= h) != (rng.random() < 0.25)  # upright tiles stand in a row along x
        f = rng.uniform(0.45, 0.85) * (1 if rng.random() < 0.5 else -1)
        s = rng.uniform(0.4, 1.1)
        cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
        if along_x:
            cx += f * w; nw, nh = w * s, h * rng.uniform(0.9, 1.1)
        else:
            cy += f * h; nw, nh = w * rng.uniform(0.9, 1.1), h * s
        nb = (cx - nw / 2, cy - nh / 2, cx + nw / 2, cy + nh / 2)
        if nb[0] >= 0 and nb[1] >= 0 and nb[2] <= 640 and nb[3] <= 640 and no_tile(nb, boxes):
            return nb
    return None


#: The detector's score from which its boxes are mined (``pipeline.RESCUE_FLOOR``: weak boxes are read too).
HARD_FLOOR = 0.2
#: A mined box is a hard negative when it is no labelled tile (``no_tile``) and a label covers
#: at least this share of it or of the label (a box between tiles or on a tile's edge; a box away
#: from every label may be a tile nobody labelled, and is not used).
HARD_COVERED = 0.25


def mine_hard_negatives(pools: "Pools", model_dir: Path) -> list[tuple]:
    """The boxes that the detectors in ``model_dir`` find on the fit photos (never the held-out
    sessions, ``valid`` or ``test``) from a score of ``HARD_FLOOR`` that are no labelled tile
    (``EDGE_IOU``, ``HARD_COVERED``): ``(photo path, (x1, y1, x2, y2))`` for the classifier's
    ``unknown``. Raises VisionError when ``model_dir`` holds no detector."""
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    if allowed and len(allowed) > 1:  # one core, so onnxruntime runs one thread beside the other members
        os.sched_setaffinity(0, {sorted(allowed)[os.getpid() % len(allowed)]})
    try:
        det = TileDetector(model_dir)
    finally:
        if allowed and len(allowed) > 1:
            os.sched_setaffinity(0, allowed)
    out = []
    for it in pools.fit:
        labels = [b.box for b in it.boxes]
        if not labels:
            continue
        boxes, weak = det.detect_with_weak(pools.images[it.path], floor=HARD_FLOOR)
        for b in boxes + weak:
            if no_tile(b[:4], labels) and _covered(b, labels) >= HARD_COVERED:
                out.append((it.path, tuple(float(v) for v in b[:4])))
    return out


def class_weights(samples: list, power: float = 0.6) -> np.ndarray:
    """Sampling probabilities that favour rare labels (flowers): each sample weighs count^-power."""
    counts = np.bincount([lab for _, _, lab in samples], minlength=NUM_LABELS).astype(np.float64)
    w = np.array([counts[lab] ** -power for _, _, lab in samples])
    return w / w.sum()


def cls_batch(pools: Pools, rng: np.random.Generator, samples: list, bs: int,
              weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    white_end = 0.25 + AUG["cls_white"]  # then the shares of CLS_EXTRA, in order
    edge_end = white_end + AUG["cls_edge"]
    for _ in range(bs):
        r = rng.random()
        if r < 0.06:  # face-down tile
            h = int(rng.integers(40, 140)); w = int(h * rng.uniform(0.65, 0.85))
            crop = cls_crop(render_back(rng, h, w), (0, 0, w, h), rng)
            lab = LABEL_INDEX["back"]
        elif r < 0.135:  # not a tile: a bare table surface
            h = int(rng.integers(30, 120)); w = int(h * rng.uniform(0.5, 1.4))
            crop = cls_crop(render_background(rng, h, w), (0, 0, w, h), rng)
            lab = LABEL_INDEX["unknown"]
        elif r < 0.16 or white_end <= r < edge_end:  # not a tile: background of a photo, or beside/between tiles
            it = pools.fit[rng.integers(len(pools.fit))]
            nb = background_box(it, rng) if r < 0.16 else edge_box(it, rng)
            if nb is None:
                continue
            crop = cls_crop(pools.images[it.path], nb, rng)
            lab = LABEL_INDEX["unknown"]
        elif r < 0.25:  # a clean single tile (camerash), small and blurred to look like a photo
            img, name = pools.camerash[rng.integers(len(pools.camerash))]
            k = int(rng.integers(2)) * 2 + 1
            img = cv2.resize(img, (int(rng.integers(30, 90)), int(rng.integers(40, 120))))
            if k > 1:
                img = cv2.GaussianBlur(img, (k, k), 0)
            if rng.random() < 0.2:
                img = np.ascontiguousarray(np.rot90(img))
            crop = cls_crop(img, (0, 0, img.shape[1], img.shape[0]), rng)
            lab = LABEL_INDEX[name]
        elif r < white_end:  # a real tile painted as a white dragon (白板)
            path, box, _ = samples[rng.integers(len(samples))]
            crop = cls_crop(paint_white_dragon(pools.images[path], box, rng), box, rng)
            lab = LABEL_INDEX["P"]
        elif r < edge_end + AUG["cls_hard"] and pools.hard:  # the detector's own mistakes
            path, box = pools.hard[rng.integers(len(pools.hard))]
            crop = cls_crop(pools.images[path], box, rng)
            lab = LABEL_INDEX["unknown"]
        else:
            i = rng.integers(len(samples)) if weights is None else rng.choice(len(samples), p=weights)
            path, box, lab = samples[i]
            crop = cls_crop(pools.images[path], box, rng)
        xs.append(colour_jitter(crop, rng, 0.8)); ys.append(lab)
    return np.stack(xs).transpose(0, 3, 1, 2).astype(np.float32), np.array(ys, np.int64)


def evaluate_classifier(model: nn.Module, pools: Pools, samples: list) -> float:
    model.eval()
    ok = 0
    with torch.no_grad():
        for i in range(0, len(samples), 256):
            chunk = samples[i:i + 256]
            x = np.stack([cls_crop(pools.images[p], b, None) for p, b, _ in chunk]).transpose(0, 3, 1, 2)
            pred = model(torch.from_numpy(x.astype(np.float32))).argmax(1).numpy()
            ok += int((pred == np.array([l for _, _, l in chunk])).sum())
    return ok / max(1, len(samples))


#: Fine-tuning (``--cls-init DIR``): ``path`` the member's ONNX file to start from (set per member),
#: ``lr`` the peak learning rate (``--cls-lr``; 3e-3 from scratch).
CLS_INIT: dict = {"path": None, "lr": 3e-3}


def load_fused_classifier(model: "Classifier", path: Path) -> None:
    """Load the weights of an exported classifier (``path``, an ONNX file of ``export``: every
    batch norm folded into its convolution, weights stored as float16 by ``half_weights``) into
    ``model``, in place: each convolution takes the folded weight and its batch norm becomes the
    folded bias (scale 1, running mean 0, variance 1 - eps), so ``model`` in eval mode computes
    what the file does. For fine-tuning with the batch norms frozen (``train_classifier``).
    Raises VisionError ``model`` when the file's layers are not this network's."""
    import onnx
    from onnx import numpy_helper

    m = onnx.load(str(path))
    arrays = {(i.name[:-5] if i.name.endswith("_fp16") else i.name): numpy_helper.to_array(i).astype(np.float32)
              for i in m.graph.initializer}
    convs = [n for n in m.graph.node if n.op_type == "Conv"]
    gemms = [n for n in m.graph.node if n.op_type == "Gemm"]
    layers = [mod for mod in model.body if isinstance(mod, nn.Sequential)]
    linear = model.body[-1]
    try:
        with torch.no_grad():
            if len(convs) != len(layers) or len(gemms) != 1:
                raise ValueError(f"{len(convs)} convolutions and {len(gemms)} dense layers, not {len(layers)} and 1")
            for node, layer in zip(convs, layers):
                conv, bn = layer[0], layer[1]
                conv.weight.copy_(torch.from_numpy(arrays[node.input[1]]))
                bn.weight.fill_(1.0); bn.bias.copy_(torch.from_numpy(arrays[node.input[2]]))
                bn.running_mean.zero_(); bn.running_var.fill_(1.0 - bn.eps)
            linear.weight.copy_(torch.from_numpy(arrays[gemms[0].input[1]]))
            linear.bias.copy_(torch.from_numpy(arrays[gemms[0].input[2]]))
    except (ValueError, KeyError, RuntimeError, IndexError) as e:
        raise VisionError("model", f"{path}: not a classifier of this network to fine-tune ({e})") from None


def train_classifier(pools: Pools, epochs: int, seed: int, log) -> tuple[nn.Module, dict]:
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed + 1)
    model = Classifier()
    if CLS_INIT["path"] is not None:
        load_fused_classifier(model, CLS_INIT["path"])
    fit, hold = cls_samples(pools, pools.fit), cls_samples(pools, pools.hold)
    bs, steps = 64, 120
    weights = class_weights(fit)
    lr = CLS_INIT["lr"]
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=epochs * steps, pct_start=0.1)
    best, best_state = -1.0, None
    t0 = time.time()
    for ep in range(epochs):
        model.train()
        if CLS_INIT["path"] is not None:  # fine-tuning: the folded batch norms keep their statistics
            for mod in model.modules():
                if isinstance(mod, nn.BatchNorm2d):
                    mod.eval()
        tot = 0.0
        for _ in range(steps):
            x, y = cls_batch(pools, rng, fit, bs, weights)
            loss = F.cross_entropy(model(torch.from_numpy(x)), torch.from_numpy(y), label_smoothing=0.05)
            opt.zero_grad(); loss.backward(); opt.step(); sched.step()
            tot += loss.item()
        acc = evaluate_classifier(model, pools, hold)
        if acc >= best:
            best = acc
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
        log(f"cls epoch {ep + 1}/{epochs} loss {tot / steps:.3f} holdout accuracy {acc:.4f} ({time.time() - t0:.0f}s)")
    model.load_state_dict(best_state)
    model.eval()
    return model, {"holdout_accuracy": best, "holdout_tiles": len(hold), "fit_tiles": len(fit)}


#: Input sizes that calibration may choose for the run-time detector (the latency grows with the
#: square of the size: 320 -> 384 is about 1.45x).
CALIBRATION_SIZES = (320, 352, 384, 416, 448)
CALIBRATION_THRESHOLDS = (0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
#: F1 below the best at which calibration still takes a smaller input (faster): about one
#: held-out box (1/630 of the recall is 0.0016).
CALIBRATION_TIE = 0.002


def calibrate_threshold(pools: Pools, model_dir: Path) -> dict:
    """Choose the detector's input size and centre threshold on the held-out photos (best F1 at
    IoU > 0.5; the smallest size within ``CALIBRATION_TIE`` of the best, at its best threshold),
    with the exported ONNX models as the pipeline runs them (the whole ensemble)."""
    from .models import TileDetector

    grid: list[dict] = []
    for size in CALIBRATION_SIZES:
        det = TileDetector(model_dir, size=size)
        raw = []
        for it in pools.hold:
            raw.append((det.detect(pools.images[it.path], threshold=0.05), [b.box for b in it.boxes]))
        for thr in CALIBRATION_THRESHOLDS:
            tp = fp = n = 0
            for dets, gts in raw:
                used: set[int] = set()
                for d in (d for d in dets if d[4] >= thr):
                    cand = [(D.iou(d[:4], g), j) for j, g in enumerate(gts) if j not in used]
                    v, j = max(cand, default=(0.0, -1))
                    if v > 0.5:
                        used.add(j); tp += 1
                    else:
                        fp += 1
                n += len(gts)
            r, p = tp / max(1, n), tp / max(1, tp + fp)
            grid.append({"size": size, "threshold": thr, "recall": r, "precision": p, "f1": 2 * r * p / max(1e-9, r + p)})
    top = max(g["f1"] for g in grid)
    size = min(g["size"] for g in grid if g["f1"] >= top - CALIBRATION_TIE)
    return max((g for g in grid if g["size"] == size), key=lambda g: g["f1"])


def export(model: nn.Module, shape: tuple[int, ...], path: Path) -> None:
    """ONNX export: a batch of any size for the classifier (``shape[0] != 1``), a picture of any
    size (multiple of 32) for the detector."""
    axes = ({"image": {0: "n"}, "out": {0: "n"}} if shape[0] != 1 else
            {"image": {2: "h", 3: "w"}, "out": {2: "oh", 3: "ow"}})
    torch.onnx.export(model, torch.zeros(shape), str(path), input_names=["image"], output_names=["out"],
                      opset_version=13, dynamo=False, dynamic_axes=axes)
    half_weights(path)


def half_weights(path: Path) -> None:
    """Store the weights of the ONNX model at ``path`` (rewritten in place) as float16, each cast
    back to float32 by a ``Cast`` node, so the file is half the size and both engines still compute
    in float32 (onnxruntime folds the casts once, when it loads the model). Weights of fewer than 16
    values stay float32. On the committed detector: 2.46 to 1.23 MB, outputs within 0.004 of the
    float32 model's logits."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    m = onnx.load(str(path))
    inits, casts = [], []
    for init in m.graph.initializer:
        arr = numpy_helper.to_array(init)
        if init.data_type != TensorProto.FLOAT or arr.size < 16:
            inits.append(init)
            continue
        half = numpy_helper.from_array(arr.astype(np.float16), init.name + "_fp16")
        inits.append(half)
        casts.append(helper.make_node("Cast", [half.name], [init.name], to=TensorProto.FLOAT, name=init.name + "_cast"))
    nodes = casts + list(m.graph.node)
    del m.graph.initializer[:]
    m.graph.initializer.extend(inits)
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    onnx.checker.check_model(m)
    onnx.save(m, str(path))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--det-epochs", type=int, default=55)
    ap.add_argument("--cls-epochs", type=int, default=45)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=["det", "cls", "calibrate"], default=None)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--det-stretch", type=float, default=AUG["stretch"], help="share of stretched detector samples")
    ap.add_argument("--det-rotate", type=float, default=AUG["rotate"], help="share of turned detector samples")
    ap.add_argument("--member", choices=sorted({**DETECTOR_MEMBERS, **CLASSIFIER_MEMBERS}), default=None,
                    help="train only this member of an ensemble (a detector: calibrate once all are trained)")
    ap.add_argument("--det-loose", type=float, default=None,
                    help="share of synthetic close-ups of turned, scattered or packed tiles "
                         "(vision.synth.compose_loose_scene); by default each member's own (DETECTOR_MEMBERS)")
    ap.add_argument("--cls-rotate", type=float, default=None,
                    help="share of crops of turned tiles; by default each classifier's own (CLASSIFIER_MEMBERS)")
    ap.add_argument("--list-members", action="store_true",
                    help="print the file of every member of the two ensembles, one per line, and stop (make train)")
    ap.add_argument("--cls-jitter", type=float, default=AUG["cls_jitter"],
                    help="spread of the classifier crops' box sides, a share of the side (the detector's box error)")
    ap.add_argument("--cls-white", type=float, default=AUG["cls_white"],
                    help="share of classifier crops of real tiles painted as white dragons (P)")
    ap.add_argument("--cls-edge", type=float, default=AUG["cls_edge"],
                    help="share of classifier crops beside or between labelled tiles (unknown)")
    ap.add_argument("--cls-hard", type=float, default=AUG["cls_hard"],
                    help="share of classifier crops of the detectors' boxes that match no label on the fit photos (unknown)")
    ap.add_argument("--cls-lowres", type=float, default=AUG["cls_lowres"],
                    help="share of classifier crops seen at a low resolution along one axis (squeezed uploads)")
    ap.add_argument("--cls-init", type=Path, default=None,
                    help="fine-tune: start each classifier from its file in this folder (its batch norms frozen)")
    ap.add_argument("--cls-lr", type=float, default=CLS_INIT["lr"],
                    help="the classifier's peak learning rate (one cycle); lower it to fine-tune")
    ap.add_argument("--mine-from", type=Path, default=OUT,
                    help="the folder of the detectors whose boxes --cls-hard mines (default: the committed ones)")
    ap.add_argument("--hard-cache", type=Path, default=None,
                    help="a JSON file of the mined boxes: read when it exists, else written after mining "
                         "(members trained side by side mine once)")
    args = ap.parse_args(argv)
    if args.list_members:
        print("\n".join([*DETECTOR_MEMBERS, *CLASSIFIER_MEMBERS]))
        return 0
    part = "det" if args.member in DETECTOR_MEMBERS else "cls" if args.member in CLASSIFIER_MEMBERS else None
    if part is not None and args.only not in (None, part):
        ap.error(f"--member {args.member} is a {'detector' if part == 'det' else 'classifier'}: "
                 f"use it with --only {part} or without --only")
    # an override for every member would train the same network under each name
    if args.det_loose is not None and part != "det":
        ap.error("--det-loose sets one detector's share of close-ups: give it with --member and a detector's file")
    if args.cls_rotate is not None and part != "cls":
        ap.error("--cls-rotate sets one classifier's share of turned crops: give it with --member and a classifier's file")
    for flag, value in (("--det-stretch", args.det_stretch), ("--det-rotate", args.det_rotate),
                        ("--det-loose", args.det_loose), ("--cls-rotate", args.cls_rotate),
                        ("--cls-white", args.cls_white), ("--cls-edge", args.cls_edge), ("--cls-hard", args.cls_hard),
                        ("--cls-lowres", args.cls_lowres)):
        if value is not None and not 0.0 <= value <= 1.0:
            ap.error(f"{flag} is a share of the samples, from 0 to 1, not {value}")
    if not 0.0 <= args.cls_jitter <= 0.5:
        ap.error(f"--cls-jitter is a share of a box's side, from 0 to 0.5, not {args.cls_jitter}")
    torch.set_num_threads(1)
    AUG.update(stretch=args.det_stretch, rotate=args.det_rotate, cls_jitter=args.cls_jitter,
               cls_white=args.cls_white, cls_edge=args.cls_edge, cls_hard=args.cls_hard, cls_lowres=args.cls_lowres)
    if args.cls_init is not None and not args.cls_init.is_dir():
        ap.error(f"--cls-init {args.cls_init}: not a folder")
    if not 0.0 < args.cls_lr <= 0.1:
        ap.error(f"--cls-lr is a learning rate above 0 and at most 0.1, not {args.cls_lr}")
    CLS_INIT["lr"] = args.cls_lr
    if args.cls_white + args.cls_edge + args.cls_hard > 0.5:
        ap.error("--cls-white, --cls-edge and --cls-hard together take at most half of the classifier's crops")
    random.seed(args.seed); np.random.seed(args.seed); torch.manual_seed(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    tag = f"[{args.member}] " if args.member else ""  # members are trained side by side (make train)
    log = lambda s: print(tag + s, flush=True)  # noqa: E731
    t0 = time.time()
    pools = Pools(np.random.default_rng(args.seed))
    log(f"data: {len(pools.fit)} fit photos, {len(pools.hold)} held-out photos "
        f"({sorted({i.session for i in pools.hold})}), {len(pools.camerash)} camerash tiles ({time.time() - t0:.0f}s)")
    metrics_path = args.out / "metrics.json"
    data = {"fit_photos": len(pools.fit), "holdout_photos": len(pools.hold),
            "unlabelled_photos_left_out": pools.unlabelled,
            "holdout_sessions": sorted({i.session for i in pools.hold}), "seed": args.seed,
            "note": "train split minus held-out sessions; valid/test never read in training"}

    def save(part: str, members: dict | None = None, **entries) -> dict:
        """Merge into ``metrics.json`` under a lock (``make train`` trains members side by side into
        one folder): ``members`` (file -> figures) join those listed already, and the list keeps
        only the files of ``part``'s ensemble that are in the folder; ``entries`` (``calibration``,
        ``labels``) replace theirs. Returns ``part``'s entry as written."""
        table = DETECTOR_MEMBERS if part == "detector" else CLASSIFIER_MEMBERS
        folder = os.open(args.out, os.O_RDONLY)  # the lock is the folder's: the file itself is replaced
        try:
            fcntl.flock(folder, fcntl.LOCK_EX)
            try:
                latest = _metrics(args.out)  # the run time's reading: {} when there is none
            except VisionError as e:
                raise SystemExit(f"{e.message} (or delete it), and run this again: the models trained are "
                                 "saved beside it") from None
            entry = latest.get(part) if isinstance(latest.get(part), dict) else {}
            listed = entry.get("members") if isinstance(entry.get("members"), dict) else {}
            listed = {**listed, **(members or {})}
            entry = {**entry, **entries, "members": {k: listed.get(k, {}) for k in table if (args.out / k).exists()}}
            latest.update({"data": data, part: entry})
            tmp = metrics_path.with_name(f".{metrics_path.name}.{os.getpid()}")
            tmp.write_text(json.dumps(latest, indent=2) + "\n")
            os.replace(tmp, metrics_path)  # whole or not at all, even when interrupted
        finally:
            os.close(folder)
        return entry

    def train_members(table: dict[str, float], aug: str, override: float | None, train, epochs: int,
                      shape: tuple[int, ...]) -> dict:
        """Train the members of ``table`` (file -> share ``AUG[aug]``; only ``args.member`` if
        given), each from ``--seed`` plus its ``MEMBER_SEEDS`` offset; their figures by file."""
        done = {}
        for name, share in table.items():
            if args.member not in (None, name):
                continue
            AUG[aug] = share if override is None else override
            seed = args.seed + MEMBER_SEEDS.get(name, 0)
            if aug == "cls_rotate" and args.cls_init is not None:
                CLS_INIT["path"] = args.cls_init / name
                if not CLS_INIT["path"].is_file():
                    raise SystemExit(f"--cls-init {args.cls_init}: it has no {name} to start from")
            t = time.time()
            model, m = train(pools, epochs, seed, log)
            export(model, shape, args.out / name)
            extra = {k: AUG[k] for k in CLS_EXTRA if AUG[k]} if aug == "cls_rotate" else {}
            if aug == "cls_rotate" and CLS_INIT["path"] is not None:
                extra.update(fine_tuned_from=CLS_INIT["path"].name, lr=CLS_INIT["lr"])
            done[name] = {**m, aug: AUG[aug], **extra, "seed": seed, "epochs": epochs,
                          "seconds": round(time.time() - t)}
        return done

    if args.only in (None, "det") and args.member not in CLASSIFIER_MEMBERS:
        # written before the calibration, which runs the members that metrics.json lists
        det = save("detector", train_members(DETECTOR_MEMBERS, "loose", args.det_loose, train_detector,
                                             args.det_epochs, (1, 3, DET_SIZE, DET_SIZE)))
        log(f"detectors: {json.dumps(det['members'])}")
        if args.member is not None:
            log(f"trained {args.member} only: run `python -m vision.train --only calibrate` once every detector is trained")
    if args.only == "calibrate" or (args.only in (None, "det") and args.member is None):
        try:
            cal = calibrate_threshold(pools, args.out)
        except VisionError as e:  # no detector there, or a damaged one
            raise SystemExit(f"cannot calibrate the detectors in {args.out}: {e.message}") from None
        save("detector", calibration=cal)
        log(f"detector input size and threshold chosen on the held-out photos: {cal}")
    if args.only in (None, "cls") and args.member not in DETECTOR_MEMBERS:
        if AUG["cls_hard"] and args.hard_cache is not None and args.hard_cache.is_file():
            labels = {str(it.path): [b.box for b in it.boxes] for it in pools.fit}
            pools.hard = [(Path(p), tuple(b)) for p, b in json.loads(args.hard_cache.read_text())
                          if p in labels and no_tile(b, labels[p])]  # the rule of the run, not of the cache's
        elif AUG["cls_hard"]:
            try:
                pools.hard = mine_hard_negatives(pools, args.mine_from)
            except VisionError as e:
                raise SystemExit(f"cannot mine hard negatives with the detectors in {args.mine_from}: {e.message}") from None
            if args.hard_cache is not None:
                tmp = args.hard_cache.with_name(f".{args.hard_cache.name}.{os.getpid()}")
                tmp.write_text(json.dumps([[str(p), list(b)] for p, b in pools.hard]))
                os.replace(tmp, args.hard_cache)
            log(f"hard negatives: {len(pools.hard)} boxes of the detectors in {args.mine_from} on the fit photos")
        cls = save("classifier", train_members(CLASSIFIER_MEMBERS, "cls_rotate", args.cls_rotate, train_classifier,
                                               args.cls_epochs, (2, 3, CLS_H, CLS_W)), labels=list(LABELS))
        log(f"classifiers: {json.dumps(cls['members'])}")
    log(f"done in {time.time() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
