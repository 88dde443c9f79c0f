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
    """Upright tile crops from the real photos of the ``test`` split (``vision.data.tile_faces``:
    never used in training). Skips the test (pytest.skip) when ../shared/data is not there."""
    import pytest

    from vision.data import tile_faces

    try:
        return tile_faces("test", per_label, min_height)
    except FileNotFoundError:
        pytest.skip("../shared/data/tiles/chinese-mahjong-detection is not available")
