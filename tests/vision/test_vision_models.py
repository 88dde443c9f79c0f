"""Decoding the detector's output, and the crops given to the classifier."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vision import VisionError
from vision.models import (BACKENDS, CLS_H, CLS_W, DET_STRIDE, TileClassifier, TileDetector, decode_heatmap,
                           ensemble_output, members, to_portrait)


def heat_output(centres: list[tuple[int, int, float, float, float]]) -> np.ndarray:
    """A 5x80x80 detector output with peaks at (cell x, cell y, score, width px, height px)."""
    out = np.full((5, 80, 80), -8.0, np.float32)
    out[3:] = 0.5
    for x, y, s, w, h in centres:
        out[0, y, x] = math.log(s / (1 - s))
        out[1, y, x] = math.log(w / DET_STRIDE)
        out[2, y, x] = math.log(h / DET_STRIDE)
    return out


def test_decode_finds_peaks_with_their_size_in_image_pixels():
    out = heat_output([(10, 20, 0.9, 30, 40), (50, 20, 0.6, 40, 30)])
    boxes = decode_heatmap(out, sx=2.0, sy=1.5, threshold=0.3)
    assert len(boxes) == 2
    x1, y1, x2, y2, s = boxes[0]
    assert s > 0.89
    assert abs((x1 + x2) / 2 - 2.0 * (10.5 * DET_STRIDE)) < 1e-3
    assert abs((y1 + y2) / 2 - 1.5 * (20.5 * DET_STRIDE)) < 1e-3
    assert abs((x2 - x1) - 2.0 * 30) < 1e-3 and abs((y2 - y1) - 1.5 * 40) < 1e-3


def test_decode_threshold_and_overlap():
    out = heat_output([(10, 20, 0.25, 30, 40)])
    assert decode_heatmap(out, 1, 1, threshold=0.3) == []
    # two peaks a cell apart with big boxes overlap: the weaker goes
    out = heat_output([(10, 20, 0.9, 60, 80), (12, 20, 0.8, 60, 80)])
    assert len(decode_heatmap(out, 1, 1, threshold=0.3)) == 1


def test_crops_are_turned_upright():
    img = np.zeros((100, 200, 3), np.uint8)
    img[:, :100] = 255  # left half white
    assert to_portrait(img).shape == (200, 100, 3)
    assert to_portrait(img[:, :80]).shape == (100, 80, 3)
    c = TileClassifier.crop(img, (0, 0, 200, 100))
    assert c.shape == (CLS_H, CLS_W, 3)
    # a quarter turn counter-clockwise puts the left half at the bottom
    assert c[-5:].mean() > 200 and c[:5].mean() < 50
    assert TileClassifier.crop(img, (0, 0, 200, 100), quarter_turn=False).shape == (CLS_H, CLS_W, 3)
    assert TileClassifier.crop(img, (300, 300, 400, 400)).sum() == 0  # outside the picture


def test_ensemble_averages_probabilities_and_sizes():
    a = heat_output([(10, 20, 0.9, 30, 40)])
    b = heat_output([(10, 20, 0.5, 50, 40), (60, 60, 0.7, 30, 30)])
    out = ensemble_output([a, b])
    boxes = decode_heatmap(out, 1, 1, threshold=0.3)
    assert len(boxes) == 2
    assert abs(boxes[0][4] - 0.7) < 1e-4  # (0.9 + 0.5) / 2
    assert abs(boxes[0][2] - boxes[0][0] - math.sqrt(30 * 50)) < 1e-2  # mean of the log sizes
    assert abs(boxes[1][4] - (0.7 + 1 / (1 + math.exp(8))) / 2) < 1e-4  # seen by one member only
    assert ensemble_output([a]).shape == a.shape


def test_ensemble_members_from_metrics(tmp_path):
    assert members(tmp_path, "detector") == ["detector.onnx"]  # no metrics.json
    (tmp_path / "metrics.json").write_text('{"detector": {"members": {"detector.onnx": {}, "b.onnx": {}}}}')
    assert members(tmp_path, "detector") == ["detector.onnx", "b.onnx"]
    assert members(tmp_path, "classifier") == ["classifier.onnx"]
    (tmp_path / "metrics.json").write_text('{"detector": {"members": ["../x.onnx", "c.txt", 3]}}')
    assert members(tmp_path, "detector") == ["detector.onnx"]
    for damaged in ("not json", '{"detector": {', "[1, 2]"):  # a damaged file is an error, not a silent default
        (tmp_path / "metrics.json").write_text(damaged)
        with pytest.raises(VisionError) as e:
            members(tmp_path, "detector")
        assert e.value.code == "model" and "metrics.json" in e.value.message and "restore it from git" in e.value.message
    for junk in ("5", "true", "null", '"detector.onnx"'):
        (tmp_path / "metrics.json").write_text('{"detector": {"members": %s}}' % junk)
        assert members(tmp_path, "detector") == ["detector.onnx"], junk
    (tmp_path / "metrics.json").write_text('{"detector": {"members": ["a.onnx", "b.onnx", "a.onnx"]}}')
    assert members(tmp_path, "detector") == ["a.onnx", "b.onnx"]


def test_a_member_of_the_wrong_kind_is_refused_at_load(tmp_path):
    import json
    import shutil

    from vision import VisionError
    from vision.models import MODEL_DIR
    for f in MODEL_DIR.iterdir():
        shutil.copy(f, tmp_path / f.name)
    m = json.loads((MODEL_DIR / "metrics.json").read_text())
    m["detector"]["members"] = ["detector.onnx", "classifier.onnx"]
    (tmp_path / "metrics.json").write_text(json.dumps(m))
    with pytest.raises(VisionError) as e:
        TileDetector(tmp_path)
    assert e.value.code == "model" and "classifier.onnx is not a model of this kind" in e.value.message
    m["detector"]["members"] = ["detector.onnx"]
    m["classifier"]["members"] = ["classifier.onnx", "detector_loose.onnx"]
    (tmp_path / "metrics.json").write_text(json.dumps(m))
    with pytest.raises(VisionError) as e:
        TileClassifier(tmp_path)
    assert "detector_loose.onnx is not a model of this kind" in e.value.message


@pytest.mark.skipif(len(BACKENDS) < 2, reason="one engine only on this machine (no onnxruntime wheel)")
def test_both_engines_read_a_photo_alike():
    # onnxruntime runs the models where it is installed, OpenCV's DNN elsewhere: the same boxes
    # and the same probabilities either way
    import cv2

    from vision.data import load_split
    img = cv2.imread(str(load_split("test")[0].path))
    found = [TileDetector(backend=b).detect(img) for b in BACKENDS]
    assert len(found[0]) >= 5
    assert len(found[0]) == len(found[1])
    assert np.allclose(np.array(found[0]), np.array(found[1]), atol=1e-3)
    crops = [TileClassifier.crop(img, b[:4]) for b in found[0]]
    probs = [TileClassifier(backend=b).classify(crops) for b in BACKENDS]
    assert np.allclose(probs[0], probs[1], atol=1e-4)


def test_an_unknown_engine_or_an_unreadable_model_is_a_clear_error(tmp_path):
    from vision import VisionError
    with pytest.raises(VisionError) as e:
        TileClassifier(backend="tensorflow")
    assert e.value.code == "model" and "no engine 'tensorflow'" in e.value.message
    assert all(b in e.value.message for b in BACKENDS)
    (tmp_path / "classifier.onnx").write_bytes(b"not a network")
    for b in BACKENDS:
        with pytest.raises(VisionError) as e:
            TileClassifier(tmp_path, backend=b)
        assert e.value.code == "model" and f"cannot load {tmp_path / 'classifier.onnx'}" in e.value.message


def test_a_damaged_model_giving_nan_is_refused_at_load(monkeypatch):
    # a weight damaged to NaN loads and has the right shape, but every picture would then read as
    # "no tiles": the probe run at load time refuses it instead
    from vision import VisionError
    from vision.models import OnnxNet
    monkeypatch.setattr(OnnxNet, "run", lambda self, x: np.full((x.shape[0], 44), np.nan, np.float32))
    with pytest.raises(VisionError) as e:
        TileClassifier()
    assert e.value.code == "model" and "classifier.onnx gives values that are not numbers" in e.value.message


def test_classifier_averages_its_members(tmp_path):
    import shutil

    from vision.models import MODEL_DIR
    crops = [np.full((CLS_H, CLS_W, 3), v, np.uint8) for v in (40, 200)]
    singles = []
    for name in members(MODEL_DIR, "classifier"):
        d = tmp_path / name.removesuffix(".onnx")
        d.mkdir()
        shutil.copy(MODEL_DIR / name, d / "classifier.onnx")
        singles.append(TileClassifier(d).classify(crops))
    assert len(singles) == 2
    both = TileClassifier(MODEL_DIR).classify(crops)
    assert np.allclose(both, np.mean(singles, axis=0), atol=1e-5)
    assert np.allclose(both.sum(1), 1, atol=1e-4)


def _detector_with_passes(passes):
    """A TileDetector whose network passes are stand-ins: ``passes[(w, h)]`` -> boxes; returns the
    detector and the list of the passes it ran."""
    d = TileDetector.__new__(TileDetector)
    d.size, d.threshold = 384, 0.35
    ran = []
    d._pass = lambda image, w, h, thr: ran.append((w, h)) or list(passes.get((w, h), []))
    return d, ran


def test_a_squeezed_picture_takes_the_squeezed_pass_boxes():
    from vision.models import SQUEEZE, SQUEEZED_SURE
    img = np.zeros((640, 640, 3), np.uint8)
    plain = [(100, 200, 160, 380, 0.38), (300, 200, 360, 380, 0.37)]  # two wrong, wide-ish boxes
    tall = [(20 + 40 * i, 220, 50 + 40 * i, 420, 0.6) for i in range(8)]  # 8 tiles 0.15 wide per tall
    low = 384 // SQUEEZE[-1]  # the pass squeezed top to bottom the most
    d, ran = _detector_with_passes({(384, 384): plain, (384, low): tall})
    got = sorted(b[0] for b in d.detect(img))
    assert got == sorted(b[0] for b in tall)  # the plain boxes they cover are dropped
    assert len(ran) == 1 + 2 * len(SQUEEZE)
    # stretched boxes that are not more than the plain pass's sure ones do not make a squeezed
    # picture, and a stretched box is not added where the plain pass found nothing (the bodies of a
    # row of standing tiles read as one long tile)
    sure = [(*b[:4], SQUEEZED_SURE + 0.05) for b in plain]
    d, _ = _detector_with_passes({(384, 384): sure, (384, low): tall[:1] + [(500, 100, 530, 300, 0.6)]})
    got = sorted(b[0] for b in d.detect(img))
    assert got == [100, 300], got
    # ... but weak plain boxes, however many (a squeezed picture at a low threshold), do not keep
    # the squeezed pass's boxes out
    weak = [(10 + 60 * i, 500, 40 + 60 * i, 560, SQUEEZED_SURE - 0.1) for i in range(10)] + sure
    d, _ = _detector_with_passes({(384, 384): weak, (384, low): tall})
    got = d.detect(img)
    assert all(b in got for b in tall) and not any(b in got for b in sure), got


def test_two_squeeze_factors_give_one_box_per_tile():
    # both factors find the tiles of a squeezed picture: of two boxes of one tile the surer stays
    img = np.zeros((640, 640, 3), np.uint8)
    a = [(20 + 40 * i, 220, 50 + 40 * i, 420, 0.6) for i in range(8)]
    b = [(22 + 40 * i, 215, 50 + 40 * i, 425, 0.7) for i in range(8)]
    d, _ = _detector_with_passes({(384, 384): [], (384, 128): a, (384, 64): b})
    got = d.detect(img, squeeze=(3, 6))
    assert sorted(round(x[4], 1) for x in got) == [0.7] * 8


def test_the_squeezed_passes_are_skipped_when_the_plain_pass_finds_enough():
    from vision.models import PLAIN_ENOUGH, PLAIN_SURE
    img = np.zeros((640, 640, 3), np.uint8)
    row = [(20 + 60 * i, 200, 70 + 60 * i, 270, PLAIN_SURE + 0.1) for i in range(PLAIN_ENOUGH)]
    d, ran = _detector_with_passes({(384, 384): row})
    assert len(d.detect(img)) == PLAIN_ENOUGH and ran == [(384, 384)]
    # one box fewer, or unsure boxes, and the squeezed passes run
    d, ran = _detector_with_passes({(384, 384): row[:-1]})
    d.detect(img)
    assert len(ran) > 1
    d, ran = _detector_with_passes({(384, 384): [(*r[:4], PLAIN_SURE - 0.2) for r in row]})
    d.detect(img)
    assert len(ran) > 1
    d, ran = _detector_with_passes({(384, 384): []})
    d.detect(img, squeeze=0)
    assert ran == [(384, 384)]


class _RecordingNet:
    """A stand-in network: records each input's shape, answers an empty heat map of the right size."""

    def __init__(self) -> None:
        self.shapes = []

    def run(self, x):
        self.shapes.append(x.shape)
        _, _, h, w = x.shape
        out = np.zeros((1, 5, h // 4, w // 4), np.float32)
        out[0, 0] = -10.0
        return out


@pytest.mark.parametrize("size", [320, 384, 448, 640])
@pytest.mark.parametrize("shape", [(640, 640), (480, 640), (640, 1000), (720, 1280), (110, 800), (1280, 200)])
def test_every_pass_gives_the_networks_sides_that_are_multiples_of_32(size, shape):
    # a squeezed pass is size // k wide (640 // 6 = 106); the networks downsample to 1/32, and
    # OpenCV only warns and clamps when a side is not a multiple of it
    from vision.models import OWN_SHAPE, SQUEEZE
    d = TileDetector.__new__(TileDetector)
    net = _RecordingNet()
    d.nets, d.size, d.threshold = [net], size, 0.35
    d.detect(np.zeros((*shape, 3), np.uint8))
    own_shape = max(shape) >= OWN_SHAPE * min(shape)  # not a square upload: no squeezed pass
    assert len(net.shapes) == (1 if own_shape else 1 + 2 * len(SQUEEZE))  # plain, then across and down per factor
    assert all(h % 32 == 0 and w % 32 == 0 for _, _, h, w in net.shapes), net.shapes
