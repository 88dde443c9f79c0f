"""The calibrated confidence (vision.confidence): the fit, the reliability table, the threshold,
the entry in metrics.json."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from vision.confidence import (THRESHOLDS, ConfidenceModel, choose_threshold, expected_calibration_error, fit,
                               fit_logistic, reliability, silent_and_flags)
from vision.errors import VisionError
from vision.models import MODEL_DIR


def _synthetic(n: int, rng: np.random.Generator, w=(1.5, 0.8, -0.5)):
    """Tiles whose rightness follows a known logistic model of (p, s)."""
    p = rng.uniform(0.2, 0.999, n)
    s = rng.uniform(0.3, 0.95, n)
    z = w[0] * np.log(p / (1 - p)) + w[1] * np.log(s / (1 - s)) + w[2]
    right = rng.random(n) < 1 / (1 + np.exp(-z))
    return p, s, right


def test_the_fit_finds_the_model_that_made_the_data():
    p, s, right = _synthetic(20000, np.random.default_rng(0))
    w = fit_logistic(p, s, right)
    assert w == pytest.approx((1.5, 0.8, -0.5), abs=0.12)


def test_a_calibrated_confidence_matches_the_share_right_and_an_overconfident_one_does_not():
    rng = np.random.default_rng(1)
    p, s, right = _synthetic(20000, rng, w=(0.6, 0.8, -0.5))  # the classifier's p overconfident
    m = ConfidenceModel(*fit_logistic(p, s, right), 0.5)
    cal = np.array([m(a, b) for a, b in zip(p, s)])
    assert expected_calibration_error(cal, right) < 0.02
    assert expected_calibration_error(p, right) > 0.05
    rows = reliability(cal, right)
    assert sum(r["tiles"] for r in rows) == len(p)
    for r in rows:
        if r["tiles"] > 500:
            assert abs(r["confidence"] - r["accuracy"]) < 0.04


def test_fit_refuses_tiles_all_right():
    with pytest.raises(ValueError, match="both right and wrong"):
        fit_logistic(np.array([0.9, 0.8]), np.array([0.5, 0.6]), np.array([1, 1]))
    with pytest.raises(ValueError, match="one length"):
        fit_logistic(np.array([0.9]), np.array([0.5, 0.6]), np.array([1, 1]))


def _photo(tiles, labels, gap_near=()):
    return {"session": "s", "labels": labels, "gap_near": list(gap_near),
            "tiles": [{"conf": c, "right": r, "label": g, "near": [g] if g is not None else []} for c, r, g in tiles]}


def test_silent_errors_and_flags_per_photo():
    photos = [
        _photo([(0.99, True, 0), (0.9, False, 1)], 2),       # a sure wrong tile: silent unless flagged at 0.9
        _photo([(0.99, True, 0), (0.4, False, None)], 2),    # an unsure extra box, and label 1 missed
        _photo([(0.99, True, 0)], 2, gap_near=[1]),          # label 1 missed, but a layout gap asks there
    ]
    assert silent_and_flags(photos, 0.5) == (pytest.approx(2 / 3), pytest.approx(1 / 3))
    assert silent_and_flags(photos, 0.925) == (pytest.approx(1 / 3), pytest.approx(2 / 3))
    # the threshold with the fewest silent photos within one flag per photo
    assert choose_threshold(photos) == min(t for t in THRESHOLDS if t > 0.9)
    assert choose_threshold(photos, max_flags=0.4) == THRESHOLDS[0]


def test_fit_chooses_a_threshold_and_reports_figures():
    rng = np.random.default_rng(2)
    photos = []
    for k in range(40):
        p, s, right = _synthetic(12, rng)
        photos.append({"session": f"s{k % 5}", "labels": 12, "gap_near": [],
                       "tiles": [{"p": a, "s": b, "right": bool(r), "label": i if r else None, "near": [i]}
                                 for i, (a, b, r) in enumerate(zip(p, s, right))]})
    model, figures = fit(photos)
    assert model.flag_below in THRESHOLDS
    assert figures["sessions"] == 5 and figures["tiles"] == 480
    assert figures["flags_per_photo_cv"] <= 1.0 or model.flag_below == THRESHOLDS[0]


def test_the_committed_models_carry_a_valid_calibration_or_none(tmp_path):
    m = ConfidenceModel.load(MODEL_DIR)
    if m is not None:
        assert 0.0 < m.flag_below < 1.0
        assert 0.0 <= m(0.9, 0.6) <= 1.0
    # a damaged entry is refused with a message that names it
    for f in MODEL_DIR.iterdir():
        shutil.copy(f, tmp_path / f.name)
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    metrics["confidence"] = {"w_classifier": "x", "w_detector": 0, "bias": 0, "flag_below": 0.5}
    (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    with pytest.raises(VisionError, match="confidence"):
        ConfidenceModel.load(tmp_path)
    metrics["confidence"] = {"w_classifier": 1, "w_detector": 0, "bias": 0, "flag_below": 1.5}
    (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    with pytest.raises(VisionError, match="flag_below"):
        ConfidenceModel.load(tmp_path)
