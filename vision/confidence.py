"""Calibrated tile confidence: the probability that a tile the pipeline reports is right.

The classifier's probability of its label says how sure it is of the name, not whether the box
is a tile at all (an extra box at a rack end or between two tiles can read surely as ``8p``), and
an ensemble's averaged probabilities are not calibrated either. The reported confidence is
therefore a logistic regression (Platt scaling with two inputs)

    confidence = sigmoid(w1 * logit(p) + w2 * logit(s) + b)

of the classifier's probability ``p`` of the label read and the detector's centre score ``s`` of
the box, fitted on the training split's held-out sessions (``vision.data.is_holdout_session``:
photos no network was trained on; never ``valid`` or ``test``), where a reported tile is right
when it is matched to a labelled tile of the same name (``data.match_predictions`` with
``centres``: IoU > 0.5, or each box holding the other's centre).
A tile reported at 0.9 is then right about 9 times in 10 on such photos; the benchmark prints the
reliability table (``reliability``) on ``valid`` and ``test``.

The flag threshold (tiles below it are listed for the player to confirm) is chosen on the same
photos, on confidences of a leave-one-session-out fit (each session's tiles scored by the fit on
the other sessions): the smallest share of photos with an unflagged error, with at most
``MAX_FLAGS`` flagged tiles per photo.

Both live in ``models/metrics.json`` under ``confidence``, written by ``python -m vision.fit_confidence``
(``make train`` runs it after the detectors' calibration). Without that entry the classifier's
probability is reported as it is, and the flag threshold is ``assemble.MIN_CONFIDENCE``.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Sequence

import numpy as np

from .errors import VisionError

#: The flag threshold's bound on the player's burden: mean flagged tiles per photo (issue 21).
MAX_FLAGS = 1.0
#: Thresholds the fit may choose among.
THRESHOLDS = tuple(round(0.30 + 0.025 * i, 3) for i in range(27))  # 0.30 .. 0.95
#: Bin edges of the reliability table (confidence 0-1).
BINS = (0.0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 1.0)
#: L2 penalty of the logistic fit (keeps the weights finite on a set that a feature separates).
RIDGE = 1e-3
_EPS = 1e-6


def _logit(p: np.ndarray | float) -> np.ndarray:
    p = np.clip(np.asarray(p, np.float64), _EPS, 1 - _EPS)
    return np.log(p / (1 - p))


@dataclasses.dataclass(frozen=True)
class ConfidenceModel:
    """``confidence = sigmoid(w_classifier * logit(p) + w_detector * logit(s) + bias)``, and the flag
    threshold ``flag_below`` (0-1) on it."""

    w_classifier: float
    w_detector: float
    bias: float
    flag_below: float

    def __call__(self, p: float, s: float) -> float:
        """The calibrated confidence (0-1) of a tile whose label the classifier gives probability
        ``p`` (0-1) and whose box the detector scores ``s`` (0-1)."""
        z = self.w_classifier * float(_logit(p)) + self.w_detector * float(_logit(s)) + self.bias
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    @classmethod
    def load(cls, model_dir: Path) -> "ConfidenceModel | None":
        """The model in ``model_dir/metrics.json`` (``confidence``), or None when there is none.
        Raises VisionError ``model`` for an entry that is there but not four finite numbers with
        ``flag_below`` in 0-1."""
        from .models import _metrics
        entry = _metrics(model_dir).get("confidence")
        if entry is None:
            return None
        try:
            out = cls(*(float(entry[k]) for k in ("w_classifier", "w_detector", "bias", "flag_below")))
        except (KeyError, TypeError, ValueError):
            out = None
        if out is None or not all(map(math.isfinite, dataclasses.astuple(out))) or not 0 <= out.flag_below <= 1:
            raise VisionError("model", f"{model_dir / 'metrics.json'}: its `confidence` entry needs finite numbers "
                              "w_classifier, w_detector, bias and flag_below (0-1); run `python -m vision.confidence` "
                              "or restore the file from git")
        return out


def fit_logistic(p: np.ndarray, s: np.ndarray, right: np.ndarray) -> tuple[float, float, float]:
    """``(w_classifier, w_detector, bias)`` minimising the log loss of ``right`` (0/1) given the
    classifier probabilities ``p`` and detector scores ``s`` (arrays of one length, 0-1), with an
    L2 penalty ``RIDGE`` on the weights (scipy's L-BFGS). Raises ValueError for empty or unequal
    arrays, or labels all of one kind."""
    from scipy.optimize import minimize

    p, s, y = (np.asarray(a, np.float64) for a in (p, s, right))
    if not (len(p) == len(s) == len(y)) or len(p) == 0:
        raise ValueError(f"fit_logistic needs arrays of one length, at least 1, not {len(p)}, {len(s)}, {len(y)}")
    if y.min() == y.max():
        raise ValueError("fit_logistic needs both right and wrong tiles to fit a calibration")
    X = np.stack([_logit(p), _logit(s), np.ones_like(p)], 1)

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = X @ w
        q = 1.0 / (1.0 + np.exp(-z))
        ll = np.sum(np.logaddexp(0, z) - y * z) + RIDGE * np.sum(w[:2] ** 2)
        grad = X.T @ (q - y) + RIDGE * np.r_[2 * w[:2], 0.0]
        return float(ll), grad

    w = minimize(loss, np.array([1.0, 0.0, 0.0]), jac=True, method="L-BFGS-B").x
    return float(w[0]), float(w[1]), float(w[2])


def reliability(conf: Sequence[float], right: Sequence[bool], edges: Sequence[float] = BINS) -> list[dict]:
    """The reliability table: per confidence bin ``[lo, hi)`` (the last one closed), the tiles in
    it, their mean confidence and the share right; bins with no tile are left out."""
    c, r = np.asarray(conf, np.float64), np.asarray(right, bool)
    rows = []
    for k, (lo, hi) in enumerate(zip(edges, edges[1:])):
        inb = (c >= lo) & ((c < hi) if k < len(edges) - 2 else (c <= hi))
        if inb.any():
            rows.append({"bin": [lo, hi], "tiles": int(inb.sum()), "confidence": float(c[inb].mean()),
                         "accuracy": float(r[inb].mean())})
    return rows


def expected_calibration_error(conf: Sequence[float], right: Sequence[bool], edges: Sequence[float] = BINS) -> float:
    """The tile-weighted mean gap between confidence and accuracy over the bins of ``reliability``."""
    rows = reliability(conf, right, edges)
    n = sum(r["tiles"] for r in rows)
    return sum(r["tiles"] * abs(r["confidence"] - r["accuracy"]) for r in rows) / n if n else 0.0


def silent_and_flags(photos: Sequence[dict], threshold: float, key: str = "conf") -> tuple[float, float]:
    """``(share of photos with an unflagged error, flagged tiles per photo)`` when the tiles below
    ``threshold`` are flagged. ``photos``: per photo ``{"tiles": [{key: confidence, "right": bool,
    "matched": bool, "label": int | None}], "labels": n}``; a wrong or extra tile is covered when it
    is flagged, a missed label when a flagged tile or a layout gap covers it (``"near"`` of a tile,
    ``"gap_near"`` of the photo: label indices)."""
    silent = flags = 0
    for ph in photos:
        flagged = [t for t in ph["tiles"] if t[key] < threshold or t.get("flag")]
        flags += len(flagged)
        covered = {g for t in flagged for g in t.get("near", ())} | set(ph.get("gap_near", ()))
        bad = any(not t["right"] and not (t[key] < threshold or t.get("flag")) for t in ph["tiles"])
        matched = {t["label"] for t in ph["tiles"] if t["label"] is not None}
        missed = set(range(ph["labels"])) - matched - covered
        silent += bool(bad or missed)
    return silent / max(1, len(photos)), flags / max(1, len(photos))


def choose_threshold(photos: Sequence[dict], key: str = "conf", max_flags: float = MAX_FLAGS) -> float:
    """The threshold of ``THRESHOLDS`` with the fewest silent photos (``silent_and_flags``) among
    those flagging at most ``max_flags`` tiles per photo (the fewest flags on a tie); the lowest
    threshold when none keeps to the bound."""
    scored = [(silent_and_flags(photos, t, key), t) for t in THRESHOLDS]
    ok = [(s, f, t) for (s, f), t in scored if f <= max_flags]
    if not ok:
        return THRESHOLDS[0]
    return min(ok, key=lambda x: (round(x[0], 9), x[1]))[2]


def collect(recognizer, items) -> list[dict]:
    """Run ``recognizer`` (``pipeline.Recognizer`` with no confidence model) on each labelled photo
    of ``items`` (``data.LabelledImage``): per photo its session, label count and, per tile found,
    the classifier probability ``p``, the detector score ``s``, whether it is ``right``, the label
    it was matched with (or None), the labels it overlaps (``near``) and whether it is flagged
    regardless of confidence (``flag``: unreadable, a lone back, a box below the detector's
    threshold kept by ``pipeline.RESCUE_LABELS``)."""
    import cv2

    from .data import match_predictions
    from .tiles import UNKNOWN
    out = []
    for it in items:
        rec = recognizer.recognize(cv2.imread(str(it.path)))
        tiles = list(rec.tiles)
        match = match_predictions([t.box for t in tiles], it, centres=True)
        lone = {id(t) for t in rec.assembly.uncertain if t.tile == "back"}
        rows = []
        for i, t in enumerate(tiles):
            g = match.get(i)
            near = [j for j, lab in enumerate(it.boxes) if _share(lab.box, t.box) >= NEAR]
            rows.append({"tile": t.tile, "box": list(t.box), "p": t.confidence, "s": t.score if t.score is not None else 1.0,
                         "right": g is not None and it.boxes[g].tile == t.tile, "label": g, "near": near,
                         "flag": t.tile == UNKNOWN or id(t) in lone or (t.score is not None and
                                                                      t.score < recognizer.detector.threshold)})
        gap_near = [j for j, lab in enumerate(it.boxes) if any(_share(lab.box, g.box) >= NEAR for g in rec.assembly.gaps)]
        out.append({"session": it.session, "labels": len(it.boxes), "tiles": rows, "gap_near": gap_near})
    return out


#: A flagged box or a layout gap covers a missed label when it covers at least this share of the
#: label's box (the benchmark's rule for "the player is asked there").
NEAR = 1 / 3


def _share(label: Sequence[float], box: Sequence[float]) -> float:
    """The share of ``label``'s box (x1, y1, x2, y2) that ``box`` covers."""
    ix = max(0.0, min(label[2], box[2]) - max(label[0], box[0]))
    iy = max(0.0, min(label[3], box[3]) - max(label[1], box[1]))
    area = (label[2] - label[0]) * (label[3] - label[1])
    return ix * iy / area if area > 0 else 0.0


def fit(photos: list[dict]) -> tuple[ConfidenceModel, dict]:
    """The calibration and the flag threshold from ``collect``'s records (see the module
    docstring); returns the model and the figures of the fit (reliability before and after, the
    leave-one-session-out log loss, the silent share and flags at the threshold)."""
    def arrays(ph):
        ts = [t for p in ph for t in p["tiles"]]
        return (np.array([t["p"] for t in ts]), np.array([t["s"] for t in ts]), np.array([t["right"] for t in ts], float))

    p, s, y = arrays(photos)
    w = fit_logistic(p, s, y)
    # leave one session out: each session's tiles calibrated by the fit on the others
    sessions = sorted({ph["session"] for ph in photos})
    cv_photos = []
    for sess in sessions:
        rest = [ph for ph in photos if ph["session"] != sess]
        pr, sr, yr = arrays(rest)
        m = ConfidenceModel(*fit_logistic(pr, sr, yr), 0.0) if 0 < yr.sum() < len(yr) else ConfidenceModel(*w, 0.0)
        for ph in photos:
            if ph["session"] == sess:
                cv_photos.append({**ph, "tiles": [{**t, "cv": m(t["p"], t["s"])} for t in ph["tiles"]]})
    thr = choose_threshold(cv_photos, "cv")
    model = ConfidenceModel(*w, thr)
    cv = np.array([t["cv"] for ph in cv_photos for t in ph["tiles"]])
    yc = np.array([t["right"] for ph in cv_photos for t in ph["tiles"]])
    logloss = lambda q, yy: float(-np.mean(yy * np.log(np.clip(q, _EPS, 1)) + (1 - yy) * np.log(np.clip(1 - q, _EPS, 1))))  # noqa: E731
    silent, flags = silent_and_flags(cv_photos, thr, "cv")
    figures = {"photos": len(photos), "tiles": int(len(p)), "sessions": len(sessions),
               "ece_classifier": expected_calibration_error(p, y), "ece_calibrated_cv": expected_calibration_error(cv, yc),
               "logloss_classifier_cv": logloss(p, yc), "logloss_calibrated_cv": logloss(cv, yc),
               "silent_cv": silent, "flags_per_photo_cv": flags,
               "reliability_cv": reliability(cv, yc)}
    return model, figures
