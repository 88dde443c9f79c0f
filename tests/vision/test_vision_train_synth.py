"""The classifier's synthetic crops against issue 21's silent errors (``vision.train`` options
``--cls-white``, ``--cls-edge``, ``--cls-hard``) and fine-tuning from an exported classifier."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.synth import WHITE_FRAME_COLOURS, paint_white_dragon

MODELS = Path(__file__).resolve().parents[2] / "vision" / "models"


def tile_picture() -> tuple[np.ndarray, tuple[float, float, float, float]]:
    """Green felt with an ivory tile (box 100-160 x 50-130) carrying dark strokes on its face."""
    img = np.zeros((200, 260, 3), np.uint8)
    img[:] = (60, 140, 50)
    img[50:130, 100:160] = (200, 225, 235)
    img[70:110:6, 112:148] = (30, 30, 160)  # red-brown strokes of a character
    return img, (100.0, 50.0, 160.0, 130.0)


def test_a_white_dragon_is_painted_inside_the_box_only():
    img, box = tile_picture()
    for seed in range(20):
        out = paint_white_dragon(img, box, np.random.default_rng(seed))
        outside = np.ones(img.shape[:2], bool)
        outside[50:130, 100:160] = False
        assert (out[outside] == img[outside]).all()
        assert (img == tile_picture()[0]).all()  # the input is left alone
        face = out[60:120, 108:152].astype(int)
        # the strokes are gone: no pixel of the face is the strokes' red-brown any more
        assert not ((np.abs(face - (30, 30, 160)).sum(axis=2)) < 40).any()


def test_most_white_dragons_get_a_frame_of_a_frame_colour():
    img, box = tile_picture()
    framed = 0
    for seed in range(40):
        face = paint_white_dragon(img, box, np.random.default_rng(seed))[55:125, 105:155].reshape(-1, 3).astype(int)
        dark = face[face.sum(axis=1) < 450]  # the ivory body sums to 660
        if len(dark) > 20:
            framed += 1
            colour = np.median(dark, axis=0)
            assert min(np.abs(colour - c).sum() for c in WHITE_FRAME_COLOURS) < 200, colour
    assert 25 <= framed <= 39  # 85% framed, 15% blank


def test_a_box_too_small_is_left_alone():
    img, _ = tile_picture()
    assert (paint_white_dragon(img, (10, 10, 15, 40), np.random.default_rng(0)) == img).all()


train = pytest.importorskip("vision.train", reason="the train extra (PyTorch) is not installed")


def test_no_tile_keeps_out_boxes_on_a_tile_even_with_a_loose_label():
    labels = [(0, 0, 40, 60), (42, 0, 82, 60)]
    assert not train.no_tile((2, 1, 41, 61), labels)            # the tile itself
    assert not train.no_tile((10, -30, 30, 35), labels)         # IoU < 0.3 but the tile's centre inside
    assert train.no_tile((23, 0, 59, 60), labels)               # straddling two tiles: half of each
    assert train.no_tile((84, 0, 110, 60), labels)              # beyond the row's end
    assert train.no_tile((30, 0, 62, 60), []) is True


def test_edge_boxes_are_beside_the_tiles():
    from vision.data import LabelledBox, LabelledImage
    it = LabelledImage(path=None, boxes=(LabelledBox("1m", (100, 100, 140, 160)), LabelledBox("2m", (142, 100, 182, 160))),
                       session="s")  # type: ignore[arg-type]
    rng = np.random.default_rng(0)
    boxes = [train.edge_box(it, rng) for _ in range(200)]
    assert all(b is not None for b in boxes)
    for b in boxes:
        assert train.no_tile(b, [x.box for x in it.boxes])
        # next to a tile (within a tile's width of the row), not anywhere in the picture
        assert 100 - 40 <= b[0] and b[2] <= 182 + 40 and 100 - 60 <= b[1] and b[3] <= 160 + 60
    assert train.edge_box(LabelledImage(path=None, boxes=(), session="s"), rng) is None  # type: ignore[arg-type]


def test_fine_tuning_starts_from_the_exported_classifier_exactly():
    pytest.importorskip("onnx")
    import onnxruntime as ort
    import torch
    for name in ("classifier.onnx", "classifier_turned.onnx"):
        model = train.Classifier()
        train.load_fused_classifier(model, MODELS / name)
        model.eval()
        x = np.random.default_rng(0).uniform(0, 255, (4, 3, 64, 48)).astype(np.float32)
        ours = model(torch.from_numpy(x)).detach().numpy()
        theirs = ort.InferenceSession(str(MODELS / name), providers=["CPUExecutionProvider"]).run(None, {"image": x})[0]
        assert np.abs(ours - theirs).max() < 1e-3


def test_a_detector_is_refused_as_a_classifier_to_fine_tune():
    pytest.importorskip("onnx")
    from vision.errors import VisionError
    with pytest.raises(VisionError, match="not a classifier"):
        train.load_fused_classifier(train.Classifier(), MODELS / "detector.onnx")


def test_a_squeezed_crop_keeps_its_size_and_loses_detail_along_one_axis():
    """``--cls-lowres``: a crop shrunk 3-12 times along its width or its height and enlarged back."""
    rng = np.random.default_rng(3)
    crop = rng.integers(0, 256, (64, 48, 3), dtype=np.uint8)  # detail everywhere, both ways
    axes = set()
    for _ in range(20):
        out = train.low_resolution(crop, rng)
        assert out.shape == crop.shape and out.dtype == crop.dtype
        across = np.abs(np.diff(out.astype(int), axis=1)).mean()  # detail along the width
        down = np.abs(np.diff(out.astype(int), axis=0)).mean()
        assert min(across, down) < 0.5 * max(across, down)  # one axis has lost most of it
        axes.add("width" if across < down else "height")
    assert axes == {"width", "height"}
