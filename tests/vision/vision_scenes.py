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


