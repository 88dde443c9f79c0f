"""The data helpers of training and the benchmark: labels that cannot be right, and the synthetic
close-ups of turned tiles."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.data import LabelledBox, LabelledImage, impossible_labels, label_box, load_split
from vision.synth import compose_loose_scene
from vision.tiles import copies_in_a_set


def photo(*tiles: str) -> LabelledImage:
    return LabelledImage(path=None, boxes=tuple(LabelledBox(t, (0, 0, 1, 1)) for t in tiles), session="s")  # type: ignore[arg-type]


def test_copies_in_a_set():
    assert copies_in_a_set("5p") == 4 and copies_in_a_set("C") == 4 and copies_in_a_set("3f") == 1
    with pytest.raises(KeyError):
        copies_in_a_set("back")


def test_impossible_labels():
    assert impossible_labels(photo("1p", "1p", "1p", "1p", "2f")) == {}
    assert impossible_labels(photo(*["1p"] * 5, "2f", "2f", "3f")) == {"1p": 5, "2f": 2}
    assert impossible_labels(photo()) == {}


def test_an_image_without_boxes_is_left_out_unless_asked_for(tmp_path):
    """A photo of tiles that nobody boxed must not train the detector as background, nor be scored."""
    (tmp_path / "train" / "images").mkdir(parents=True)
    (tmp_path / "train" / "labels").mkdir()
    for name in ("hand_001_jpg.rf.a", "hand_002_jpg.rf.b", "hand_003_jpg.rf.c"):
        (tmp_path / "train" / "images" / f"{name}.jpg").write_bytes(b"")
    (tmp_path / "train" / "labels" / "hand_001_jpg.rf.a.txt").write_text("4 0.5 0.5 0.1 0.2\n")
    (tmp_path / "train" / "labels" / "hand_002_jpg.rf.b.txt").write_text("")  # an empty label file
    # hand_003 has no label file at all
    items = load_split("train", tmp_path)
    assert [i.path.name for i in items] == ["hand_001_jpg.rf.a.jpg"]
    assert items[0].boxes == (LabelledBox("E", (288.0, 256.0, 352.0, 384.0)),) and items[0].session == "hand"
    every = load_split("train", tmp_path, unlabelled=True)
    assert [len(i.boxes) for i in every] == [1, 0, 0]
    # a tile labelled as a polygon (YOLOv8's segment format) is a tile too: its bounding box
    (tmp_path / "train" / "labels" / "hand_003_jpg.rf.c.txt").write_text(
        "4 0.5 0.25 0.75 0.25 0.75 0.5 0.5 0.5 0.5 0.25\n")
    items = load_split("train", tmp_path)
    assert [i.path.name for i in items] == ["hand_001_jpg.rf.a.jpg", "hand_003_jpg.rf.c.jpg"]
    assert items[1].boxes == (LabelledBox("E", (320.0, 160.0, 480.0, 320.0)),)


def test_label_lines():
    assert label_box("4 0.5 0.5 0.1 0.2") == LabelledBox("E", (288.0, 256.0, 352.0, 384.0))
    assert label_box("0 0.1 0.2 0.3 0.2 0.2 0.4", size=100) == LabelledBox("1f", (10.0, 20.0, 30.0, 40.0))
    assert label_box("   ") is None
    for bad in ("4 0.5 0.5 0.1", "4 0.1 0.2 0.3 0.2 0.2", "x 0.5 0.5 0.1 0.2", "99 0.5 0.5 0.1 0.2", "-1 0.5 0.5 0.1 0.2", "4 a b c d"):
        with pytest.raises(ValueError):
            label_box(bad)


@pytest.mark.parametrize("seed", range(6))
def test_loose_scene_boxes_enclose_the_tiles_drawn(seed):
    magenta = (255, 0, 255)  # a colour that the felt's noise does not give exactly
    faces = {"1m": [np.full((80, 60, 3), magenta, np.uint8)], "E": [np.full((90, 64, 3), magenta, np.uint8)]}
    img, placed = compose_loose_scene(faces, ["1m", "E"], np.random.default_rng(seed), size=320)
    assert img.shape == (320, 320, 3) and img.dtype == np.uint8
    assert placed, "a scene has tiles"
    inside = np.zeros(img.shape[:2], bool)
    for t in placed:
        x1, y1, x2, y2 = t.box
        assert 0 <= x1 < x2 <= 320 and 0 <= y1 < y2 <= 320 and t.tile in ("1m", "E")
        inside[y1:y2, x1:x2] = True
    # the faces are drawn only inside the boxes (but where a packed grid runs past the picture's
    # edge: a tile mostly outside it gets no box)
    face = (img == magenta).all(axis=2)
    assert face.sum() > 0
    assert (face & ~inside).sum() <= 0.1 * face.sum()


def test_match_predictions_by_overlap_and_by_place():
    from vision.data import LabelledBox, LabelledImage, match_predictions
    item = LabelledImage(Path("x.jpg"), (LabelledBox("1m", (0, 0, 40, 60)), LabelledBox("2m", (50, 0, 90, 60)),
                                         LabelledBox("3m", (100, 0, 160, 80))), "s")
    # the first overlaps its label well; the third is the same place boxed far smaller (a turned
    # tile's label is the box around the turned box), IoU 0.25 only
    preds = [(1, 1, 41, 59), (200, 0, 240, 60), (115, 20, 145, 60)]
    assert match_predictions(preds, item) == {0: 0}
    assert match_predictions(preds, item, centres=True) == {0: 0, 2: 2}
