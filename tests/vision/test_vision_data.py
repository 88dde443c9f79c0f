"""The data helpers of training and the benchmark: labels that cannot be right, and the synthetic
close-ups of turned tiles."""

from __future__ import annotations

import numpy as np
import pytest

from vision.data import LabelledBox, LabelledImage, impossible_labels
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
