"""Helpers of the vision tests: synthetic table scenes with known answers."""

from __future__ import annotations

import numpy as np

from vision.assemble import DetectedTile
from vision.synth import SceneTile


def parse_row(spec: str) -> list[list[tuple[str, bool]]]:
    """A row written as groups separated by ``|``; tiles separated by spaces; ``~`` after a tile
    means sideways; ``B`` a face-down tile. E.g. ``"1m 2m 3m | 5p~ 5p 5p | 9s"``."""
    groups = []
    for g in spec.split("|"):
        tiles = []
        for tok in g.split():
            side = tok.endswith("~")
            name = tok.rstrip("~")
            tiles.append(("back" if name == "B" else name, side))
        groups.append(tiles)
    return groups


def as_detected(placed: list[SceneTile], confidence: float = 0.99) -> list[DetectedTile]:
    """The ground truth of a scene as the detector and classifier would report it."""
    return [DetectedTile(t.tile, tuple(float(v) for v in t.box), confidence, t.sideways) for t in placed]




def real_faces(per_label: int = 3, min_height: int = 50) -> dict[str, list[np.ndarray]]:
    """Upright tile crops from the real photos of the ``test`` split of chinese-mahjong-detection
    (evaluation photos: never used in training), up to ``per_label`` per tile, in file order.

    Skips the test (pytest.skip) when ../shared/data is not there.
    """
    import cv2
    import pytest

    from vision.data import DETECTION, load_split

    if not (DETECTION / "test").is_dir():
        pytest.skip("../shared/data/tiles/chinese-mahjong-detection is not available")
    faces: dict[str, list[np.ndarray]] = {}
    for item in load_split("test"):
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
