"""The committed models (the detectors and classifiers of ``metrics.json``) and how they are run on
the CPU: onnxruntime, or OpenCV's DNN module where onnxruntime is not installed (``BACKENDS``);
no PyTorch.

* ``detector.onnx`` (and the other members of the detector ensemble that ``metrics.json`` lists
  under ``detector.members``, e.g. ``detector_loose.onnx``): 1x3xSxS BGR 0-255 float ->
  1x5x(S/4)x(S/4) (heat logit, log(w/4), log(h/4), dx, dy per cell of 4x4 input pixels).
  Class-agnostic: every tile face and back. Trained at S = 320; run at the size that training
  calibrated on its held-out photos (``metrics.json``). The members' outputs are averaged (the
  centre heat as a probability, the sizes and offsets as they are) before decoding.
* ``classifier.onnx`` (and the other members of the classifier ensemble listed under
  ``classifier.members``, e.g. ``classifier_turned.onnx``): Nx3x64x48 BGR 0-255 float (portrait
  crops) -> Nx44 logits over ``vision.tiles.LABELS``; the members' probabilities are averaged.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import cv2
import numpy as np

from .errors import VisionError

MODEL_DIR = Path(__file__).resolve().parent / "models"
DET_SIZE = 320
DET_STRIDE = 4
CLS_H, CLS_W = 64, 48
#: Box overlap at which the weaker of two detections is dropped.
NMS_IOU = 0.45
#: The detector also reads the picture squeezed each of these many times along each axis in turn
#: (empty: not), for tiles stretched far beyond a tile's shape (photos squeezed into a square by an
#: upload). A box of such a pass counts as stretched when it is that stretched as the plain pass
#: sees it (wider than ``SQUEEZED_WIDE`` times its height, or narrower than ``SQUEEZED_TALL``); a
#: pass's stretched boxes are used only when they show that the picture itself is squeezed (below).
#: Rows and columns of tiles squeezed into a square (``benchmarks/vision_eval.py --band R
#: --squeeze``), per tile on the held-out photos / test, 4x (R = 4) and 7x (R = 7): one squeeze of
#: 4: 84.8 / 95.7% and 82.9 / 95.4%; of 6: 70.4 / 94.1% and 81.6 / 97.8%; of 3 and 6: 82.6 / 95.9%
#: and 82.9 / 97.6% (of 4 and 8: 82.1 / 95.6% and 77.0 / 98.5%; of 3 and 6 keeping only the surest
#: pass: 81.5 / 95.9% and 80.9 / 97.8%). A squeezed pass narrower than ``PAD_BELOW`` is padded
#: (``_pass``): unpadded, a pass 6 times narrower found none of the tiles. A lone stretched box where
#: the plain pass found nothing is not taken: it was mostly the bodies of a row of standing tiles
#: read as one long tile (test precision 95.9% and strict exact photos 47.9%, against 97.2%, 62.5%).
#: (Those figures are the November 2026 detectors'. The detectors retrained in December 2026, with
#: ``SQUEEZED_SURE``: 3 and 6: 84.0 / 96.3% and 78.3 / 98.3%; held-out only, 4x / 7x: 4 and 8 78.3
#: / 80.9%, 3 and 8 82.1 / 75.7%, 3, 6 and 8 81.0 / 77.0%.)
SQUEEZE = (3, 6)
#: The squeezed passes are skipped when the plain pass finds at least ``PLAIN_ENOUGH`` boxes with a
#: mean score of at least ``PLAIN_SURE``: a squeezed picture gives the plain pass almost nothing (0
#: or 1 box, mean score under 0.43 in 9 of 10 such pictures), an ordinary photo 9 or more boxes
#: with a mean score of 0.5 or more (9 of 10 photos of every split). A picture read in its own
#: shape (``OWN_SHAPE``: a camera frame, a strip) gets no squeezed pass: an upload squeezes a
#: photo into a square. With them, 16:9 bands of the held-out photos read 88.7% per tile against
#: 89.7%; only bands cut from `valid`'s squeezed uploads lost (29 bands, 152 tiles).
PLAIN_ENOUGH, PLAIN_SURE = 6, 0.5
#: The plain pass's boxes that a squeezed pass must outnumber and outscore (below) are those of at
#: least this score: at the calibrated threshold (0.25) the plain pass finds many weak, misshapen
#: boxes on a squeezed picture (443 boxes, 103 of them tiles, on the held-out rows squeezed 4x),
#: which kept the squeezed passes out (held-out 4x / 7x rows: 66.3 / 76.3% per tile; counting only
#: the boxes of 0.45 or more: 84.5 / 77.6%; 0.35: 83.4 / 77.6%; 0.5: 81.2 / 77.6%).
SQUEEZED_SURE = 0.45
#: A squeezed pass narrower (or lower) than this many pixels is padded ``SQUEEZED_MARGIN`` pixels
#: each way with grey ``PAD_GREY`` (0-255; black read 83.5% of valid's squeezed tiles, this grey 85.8%).
PAD_BELOW, SQUEEZED_MARGIN, PAD_GREY = 96, 32, 114
#: A picture at least this many times longer than wide (16:9 camera frames, strips along a row) is
#: read in its own shape (long side S), not stretched to a square, and without squeezed passes.
#: ``benchmarks/vision_eval.py --band 1.78`` (16:9 bands cut across the photos' tiles): held-out
#: 89.7% per tile against 82.2% stretched, test 94.6% against 92.1% (valid: see ``PLAIN_ENOUGH``;
#: 88.8% against 86.2% last round). 4:3 bands gained on the held-out photos and lost on test and
#: valid (89.4 / 94.7 / 88.2% against 87.3 / 95.0 / 89.2%), so 4:3 frames stay stretched, as the
#: training photos were.
OWN_SHAPE = 1.7
#: The picture is squeezed when a squeezed pass finds at least two stretched boxes, more than the
#: plain pass finds boxes, and surer ones on average: those boxes win, and the plain boxes of which
#: they cover more than ``SQUEEZED_OVERLAP`` go.
SQUEEZED_WIDE, SQUEEZED_TALL, SQUEEZED_OVERLAP = 2.5, 0.4, 0.2


def _metrics(model_dir: Path) -> dict:
    """``model_dir/metrics.json`` (``{}`` when there is none). Raises VisionError ``model`` when it
    is there but cannot be read as a JSON object: a damaged file would otherwise run the pipeline
    silently with one detector, one classifier and the default threshold and size."""
    path = model_dir / "metrics.json"
    if not path.exists():
        return {}
    try:
        out = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise VisionError("model", f"{path} cannot be read ({e}): restore it from git or run `make train`") from None
    if not isinstance(out, dict):
        raise VisionError("model", f"{path} is not a JSON object: restore it from git or run `make train`")
    return out


def _calibration(model_dir: Path) -> dict:
    """The detector's run-time settings that training chose on its held-out photos
    (``metrics.json``: detector.calibration): ``threshold`` on a centre's heat (0-1, default 0.3)
    and ``size``, the side of the square picture fed to the network (default ``DET_SIZE``: the
    network is fully convolutional, so it may run on a larger picture than it was trained on)."""
    try:
        cal = _metrics(model_dir)["detector"]["calibration"]
        cal = cal if isinstance(cal, dict) else {}
    except (KeyError, TypeError):
        cal = {}
    out = {"threshold": 0.3, "size": DET_SIZE}
    try:
        out["threshold"] = float(cal.get("threshold", 0.3))
        size = int(cal.get("size", DET_SIZE))
        out["size"] = size if size % 32 == 0 and 160 <= size <= 1280 else DET_SIZE
    except (TypeError, ValueError):
        pass
    return out


def members(model_dir: Path, part: str) -> list[str]:
    """File names of the ensemble of ``part`` (``"detector"`` or ``"classifier"``) in
    ``model_dir``: ``metrics.json`` ``part``.members (a list, or a mapping whose keys are the
    names), or ``[part + ".onnx"]`` when it names none. Only plain ``*.onnx`` names are taken (no
    folders), each once."""
    try:
        listed = _metrics(model_dir)[part]["members"]
    except (KeyError, TypeError):
        listed = None
    if not isinstance(listed, (list, dict)):
        listed = []
    names = [m for m in listed if isinstance(m, str) and m.endswith(".onnx") and Path(m).name == m]
    return list(dict.fromkeys(names)) or [f"{part}.onnx"]


def to_portrait(crop: np.ndarray) -> np.ndarray:
    """Turn a landscape crop (a sideways tile) upright by a quarter turn; HxWx3 in, HxWx3 out."""
    h, w = crop.shape[:2]
    return np.rot90(crop) if w > 1.15 * h else crop


def _nms(boxes: np.ndarray, scores: np.ndarray, iou: float) -> list[int]:
    order = np.argsort(-scores)
    keep: list[int] = []
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    while len(order):
        i = order[0]
        keep.append(int(i))
        xx1 = np.maximum(boxes[i, 0], boxes[order[1:], 0]); yy1 = np.maximum(boxes[i, 1], boxes[order[1:], 1])
        xx2 = np.minimum(boxes[i, 2], boxes[order[1:], 2]); yy2 = np.minimum(boxes[i, 3], boxes[order[1:], 3])
        inter = np.clip(xx2 - xx1, 0, None) * np.clip(yy2 - yy1, 0, None)
        ov = inter / (areas[i] + areas[order[1:]] - inter + 1e-9)
        order = order[1:][ov <= iou]
    return keep


def decode_heatmap(out: np.ndarray, sx: float, sy: float, threshold: float = 0.3,
                   max_tiles: int = 120) -> list[tuple[float, float, float, float, float]]:
    """Boxes from the detector's 5x(S/4)x(S/4) output.

    Args:
        out: the raw output (5, 80, 80).
        sx, sy: scale from detector input pixels to image pixels.
        threshold: minimum centre score (0-1).

    Returns:
        ``(x1, y1, x2, y2, score)`` in image pixels, best first, overlapping duplicates removed.
    """
    heat = 1.0 / (1.0 + np.exp(-out[0]))
    peaks = (heat == cv2.dilate(heat, np.ones((3, 3), np.uint8))) & (heat > threshold)
    ys, xs = np.nonzero(peaks)
    if len(ys) == 0:
        return []
    sc = heat[ys, xs]
    order = np.argsort(-sc)[:max_tiles]
    ys, xs, sc = ys[order], xs[order], sc[order]
    w = np.exp(out[1, ys, xs]) * DET_STRIDE
    h = np.exp(out[2, ys, xs]) * DET_STRIDE
    cx = (xs + out[3, ys, xs]) * DET_STRIDE
    cy = (ys + out[4, ys, xs]) * DET_STRIDE
    boxes = np.stack([(cx - w / 2) * sx, (cy - h / 2) * sy, (cx + w / 2) * sx, (cy + h / 2) * sy], 1)
    keep = _nms(boxes, sc, NMS_IOU)
    return [(*map(float, boxes[i]), float(sc[i])) for i in keep]


def ensemble_output(outs: list[np.ndarray]) -> np.ndarray:
    """One detector output (5 x h x w) from several of the same shape: the mean centre
    probability (returned as its logit, as ``decode_heatmap`` expects) and the mean sizes and
    offsets."""
    out = np.mean(outs, axis=0)
    heat = np.mean([0.5 * (1.0 + np.tanh(0.5 * o[0])) for o in outs], axis=0)  # the sigmoid, without overflow
    heat = np.clip(heat, 1e-6, 1 - 1e-6)
    out[0] = np.log(heat / (1 - heat))
    return out


try:
    import onnxruntime as _ort
except ImportError:  # not installed (no wheel for 32-bit Raspberry Pi OS): OpenCV's DNN runs the models
    _ort = None

#: The engines that can run the models, fastest first: onnxruntime where it is installed (the
#: ``fast`` extra; ``benchmarks/vision_engines.py``, one core here: the detector 2.1-2.3x as fast
#: as OpenCV's DNN, 17.6 against 37.3 ms at 416x416, a batch of 68 classifier crops 1.75x, a whole
#: test photo 1.9-2.2x, 116-125 against 241-251 ms; outputs equal within 6e-6), else OpenCV's DNN
#: module (onnxruntime publishes no wheel for 32-bit ARM).
BACKENDS = ("onnxruntime", "opencv") if _ort is not None else ("opencv",)


class OnnxNet:
    """One ONNX network on the CPU, run by ``backend`` (one of ``BACKENDS``; default the first).
    onnxruntime is given as many threads as the process may use CPUs (``os.sched_getaffinity``:
    one in the benchmark, which pins itself to one CPU; four on a Raspberry Pi 4).

    Raises VisionError ``model`` for a file that the engine cannot load; ``run`` raises
    VisionError ``model`` for an input the network does not take."""

    def __init__(self, path: Path, backend: str | None = None) -> None:
        self.path = path
        self.backend = BACKENDS[0] if backend is None else backend
        if self.backend not in BACKENDS:
            raise VisionError("model", f"no engine {backend!r} to run the models: this machine has {', '.join(BACKENDS)}")
        try:
            if self.backend == "onnxruntime":
                opts = _ort.SessionOptions()
                opts.intra_op_num_threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
                opts.inter_op_num_threads = 1
                opts.enable_cpu_mem_arena = False
                self._session = _ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
                self._input = self._session.get_inputs()[0].name
            else:
                self._net = cv2.dnn.readNetFromONNX(str(path))
        except Exception as e:  # noqa: BLE001 (cv2.error, or one of onnxruntime's: they derive from Exception only)
            raise VisionError("model", f"cannot load {path} ({str(e).strip().splitlines()[-1]}): "
                              "restore it from git or run `make train`") from None

    def run(self, x: np.ndarray) -> np.ndarray:
        """The network's output for ``x`` (float32, NCHW)."""
        try:
            if self.backend == "onnxruntime":
                return self._session.run(None, {self._input: np.ascontiguousarray(x, np.float32)})[0]
            self._net.setInput(x)
            return self._net.forward()
        except Exception as e:  # noqa: BLE001 (as in __init__)
            raise VisionError("model", f"{self.path} cannot read an input of shape {tuple(x.shape)}: "
                              f"{str(e).strip().splitlines()[-1]}") from None


def _load(name: str, model_dir: Path, probe: tuple[int, ...] | None = None, out_shape: tuple[int, ...] | None = None,
          backend: str | None = None) -> OnnxNet:
    """The network of ``model_dir/name`` (``OnnxNet``, run by ``backend``); when ``probe`` is
    given, it is run once on zeros of that shape and must give ``out_shape`` (a model of the wrong
    kind is refused here, not mid-picture). Raises VisionError ``model``."""
    path = model_dir / name
    if not path.is_file():
        raise VisionError("model", f"model file {path} is missing: run `make train` or restore it from git")
    net = OnnxNet(path, backend)
    if probe is not None:
        try:
            out = net.run(np.zeros(probe, np.float32))
        except VisionError as e:
            raise VisionError("model", f"{path} is not a model of this kind: {e.message}; check metrics.json or "
                              "restore the file from git") from None
        if tuple(out.shape) != out_shape:
            raise VisionError("model", f"{path} is not a model of this kind: on an input of shape {probe} it gives "
                              f"{tuple(out.shape)}, expected {out_shape}; check metrics.json or restore the file from git")
        with np.errstate(all="ignore"):
            finite = bool(np.isfinite(out).all())
        if not finite:  # e.g. a weight damaged to NaN: every picture would read as no tiles
            raise VisionError("model", f"{path} gives values that are not numbers (NaN or infinite) on a plain "
                              "input: the file is damaged; restore it from git or run `make train`")
    return net


class TileDetector:
    """Finds tile faces and backs in a picture (class-agnostic boxes)."""

    def __init__(self, model_dir: Path = MODEL_DIR, size: int | None = None, backend: str | None = None) -> None:
        #: the ensemble's networks (``members``, run by ``backend``: ``OnnxNet``), outputs averaged
        n = 64 // DET_STRIDE
        self.nets = [_load(name, model_dir, (1, 3, 64, 64), (1, 5, n, n), backend)
                     for name in members(model_dir, "detector")]
        cal = _calibration(model_dir)
        self.threshold = cal["threshold"]
        #: side of the square the picture is stretched to, or the long side of a picture read in its
        #: own shape (``OWN_SHAPE``); a multiple of 32, calibrated by training
        self.size = cal["size"] if size is None else int(size)

    def _pass(self, image: np.ndarray, w: int, h: int, threshold: float) -> list[tuple[float, float, float, float, float]]:
        """Boxes (image pixels) of one run of the networks on ``image`` resized to ``w`` x ``h``; a
        side shorter than ``PAD_BELOW`` (a squeezed pass) is set in the middle of a grey canvas
        ``SQUEEZED_MARGIN`` wider each way (the networks find no tile that fills a strip edge to
        edge), and a side that is not a multiple of 32 is padded to one; only boxes centred on the
        picture are kept, clipped to it."""
        H, W = image.shape[:2]
        blob = cv2.resize(image, (w, h), interpolation=cv2.INTER_AREA if w <= W and h <= H else cv2.INTER_LINEAR)
        # the networks take sides that are multiples of 32
        cw = (w + (2 * SQUEEZED_MARGIN if w < PAD_BELOW else 0) + 31) // 32 * 32
        ch = (h + (2 * SQUEEZED_MARGIN if h < PAD_BELOW else 0) + 31) // 32 * 32
        ox = oy = 0
        if (cw, ch) != (w, h):
            canvas = np.full((ch, cw, 3), PAD_GREY, np.uint8)
            ox, oy = (cw - w) // 2, (ch - h) // 2
            canvas[oy:oy + h, ox:ox + w] = blob
            blob = canvas
        x = blob.transpose(2, 0, 1)[None].astype(np.float32)
        outs = [net.run(x)[0] for net in self.nets]
        out = outs[0] if len(outs) == 1 else ensemble_output(outs)
        found = decode_heatmap(out, 1.0, 1.0, threshold)
        sx, sy = W / w, H / h
        return [(max(0.0, x1 - ox) * sx, max(0.0, y1 - oy) * sy, min(w, x2 - ox) * sx, min(h, y2 - oy) * sy, score)
                for x1, y1, x2, y2, score in found
                if ox <= (x1 + x2) / 2 < ox + w and oy <= (y1 + y2) / 2 < oy + h]

    def detect(self, image: np.ndarray, threshold: float | None = None,
               squeeze: tuple[int, ...] | int | None = None) -> list[tuple[float, float, float, float, float]]:
        """Boxes of the tiles in ``image`` (HxWx3 BGR uint8), as ``(x1, y1, x2, y2, score)`` in pixels;
        ``threshold`` on the centre score (0-1) defaults to the calibrated one; ``squeeze``
        (default ``SQUEEZE``; 0 or () for none) the factors of the passes over the squeezed
        picture, run when the plain pass finds too little (``PLAIN_ENOUGH``). A picture
        ``OWN_SHAPE`` times longer than wide or more is read in its own shape."""
        return self.detect_with_weak(image, threshold, squeeze)[0]

    def detect_with_weak(self, image: np.ndarray, threshold: float | None = None,
                         squeeze: tuple[int, ...] | int | None = None, floor: float | None = None
                         ) -> tuple[list[tuple[float, float, float, float, float]], list[tuple[float, float, float, float, float]]]:
        """``(boxes, weak)``: ``boxes`` as ``detect`` gives them, and the boxes of the plain pass whose
        score is at least ``floor`` but below the threshold (none when ``floor`` is None or the
        squeezed passes won): the same run of the networks, decoded once at the lower score (a box
        cannot suppress a surer one, so ``boxes`` are those of a run at the threshold)."""
        S = self.size
        thr = self.threshold if threshold is None else threshold
        H, W = image.shape[:2]
        # the plain pass: the picture stretched to S x S (as the training photos were), or, for a
        # picture at least OWN_SHAPE times longer than wide, kept in its own shape, long side S
        pw, ph = S, S
        if W >= OWN_SHAPE * H:
            ph = max(32, int(round(S * H / W / 32)) * 32)
        elif H >= OWN_SHAPE * W:
            pw = max(32, int(round(S * W / H / 32)) * 32)
        boxes = self._pass(image, pw, ph, thr if floor is None else min(thr, floor))
        weak = [b for b in boxes if b[4] < thr]
        boxes = [b for b in boxes if b[4] >= thr]
        ks = SQUEEZE if squeeze is None else (squeeze,) if isinstance(squeeze, int) else tuple(squeeze)
        ks = tuple(k for k in ks if k)
        # an upload squeezes a photo into a square: a picture read in its own shape is not one
        if not ks or (pw, ph) != (S, S) or \
                (len(boxes) >= PLAIN_ENOUGH and np.mean([b[4] for b in boxes]) >= PLAIN_SURE):
            return boxes, weak
        # a box's width/height as the plain pass sees it (its own width/height times this)
        view = (pw / W) / (ph / H)
        sure = [b for b in boxes if b[4] >= SQUEEZED_SURE]
        plain_mean = float(np.mean([b[4] for b in sure])) if sure else 0.0
        won: list = []  # the boxes of every squeezed pass that shows the picture is squeezed
        for k in ks:
            for w, h, wide in ((max(8, pw // k), ph, True), (pw, max(8, ph // k), False)):
                stretched = [b for b in self._pass(image, w, h, thr)
                             if ((b[2] - b[0]) / max(1e-6, b[3] - b[1]) * view > SQUEEZED_WIDE if wide
                                 else (b[2] - b[0]) / max(1e-6, b[3] - b[1]) * view < SQUEEZED_TALL)]
                if len(stretched) >= 2 and len(stretched) > len(sure) and \
                        np.mean([b[4] for b in stretched]) > plain_mean:
                    won += stretched
        if not won:
            return boxes, weak
        # the picture itself is squeezed: those boxes win over the plain ones they cover, and of
        # two boxes of one tile (two factors) the surer stays
        allb = [b for b in boxes if _covered(b, won) <= SQUEEZED_OVERLAP] + won
        arr = np.array(allb)
        return [allb[i] for i in _nms(arr[:, :4], arr[:, 4], NMS_IOU)], []


def _covered(b: tuple, others: list) -> float:
    """The largest share of ``b`` or of one of ``others`` (boxes x1, y1, x2, y2, ...) that their
    overlap covers (0 when ``others`` is empty)."""
    if not others:
        return 0.0
    return float(covered_shares([b], others).max())


def covered_shares(boxes, others) -> np.ndarray:
    """``len(boxes)`` x ``len(others)`` (boxes x1, y1, x2, y2, ...: sequences or an array with at
    least 4 columns): the share of the smaller of each pair that their overlap covers (0-1)."""
    a, o = (np.asarray(x, np.float64)[:, :4] if isinstance(x, np.ndarray) else
            np.asarray([b[:4] for b in x], np.float64).reshape(-1, 4) for x in (boxes, others))
    ix = np.clip(np.minimum(a[:, None, 2], o[None, :, 2]) - np.maximum(a[:, None, 0], o[None, :, 0]), 0, None)
    iy = np.clip(np.minimum(a[:, None, 3], o[None, :, 3]) - np.maximum(a[:, None, 1], o[None, :, 1]), 0, None)
    smaller = np.minimum(((a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]))[:, None],
                         ((o[:, 2] - o[:, 0]) * (o[:, 3] - o[:, 1]))[None, :])
    return ix * iy / np.maximum(1e-9, smaller)


class TileClassifier:
    """Names tile crops: probabilities over ``vision.tiles.LABELS``."""

    def __init__(self, model_dir: Path = MODEL_DIR, backend: str | None = None) -> None:
        #: the ensemble's networks (``members``, run by ``backend``: ``OnnxNet``), probabilities averaged
        self.nets = [_load(name, model_dir, (2, 3, CLS_H, CLS_W), (2, len(_labels())), backend)
                     for name in members(model_dir, "classifier")]

    @staticmethod
    def crop(image: np.ndarray, box: tuple[float, float, float, float], quarter_turn: bool | None = None) -> np.ndarray:
        """The 64x48x3 crop of ``box`` (pixels) from ``image`` (HxWx3 BGR uint8), turned upright:
        by a quarter turn when ``quarter_turn`` is True, not at all when False, and when None if
        the box is landscape (``to_portrait``)."""
        H, W = image.shape[:2]
        x1, y1 = int(max(0, round(box[0]))), int(max(0, round(box[1])))
        x2, y2 = int(min(W, round(box[2]))), int(min(H, round(box[3])))
        if x2 - x1 < 4 or y2 - y1 < 4:
            return np.zeros((CLS_H, CLS_W, 3), np.uint8)
        c = image[y1:y2, x1:x2]
        c = to_portrait(c) if quarter_turn is None else (np.rot90(c) if quarter_turn else c)
        return cv2.resize(np.ascontiguousarray(c), (CLS_W, CLS_H), interpolation=cv2.INTER_AREA)

    def classify(self, crops: list[np.ndarray]) -> np.ndarray:
        """Probabilities (N x 44) for N crops of 64x48x3 BGR uint8; each crop is also read turned
        half a turn (a tile may lie upside down), by every member of the ensemble, and all the
        readings averaged."""
        if not crops:
            return np.zeros((0, len(_labels())), np.float32)
        x = np.stack(crops).astype(np.float32)
        x = np.concatenate([x, x[:, ::-1, ::-1]]).transpose(0, 3, 1, 2)
        x = np.ascontiguousarray(x)
        n = len(crops)
        total = np.zeros((n, len(_labels())), np.float64)
        for net in self.nets:
            logits = net.run(x)
            p = np.exp(logits - logits.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            total += p[:n] + p[n:]
        return (total / (2 * len(self.nets))).astype(np.float32)


def _labels():
    from .tiles import LABELS
    return LABELS
