"""Fixtures of the vision tests."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.synth import compose_scene
from vision_scenes import parse_row, real_faces

HAND_ROWS = ["1m 2m 3m 4p 5p 6p 7s 8s 9s E E E N | N"]


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


@pytest.fixture(scope="session")
def scene_file(tmp_path_factory) -> Path:
    """A PNG of a laid-out hand made from real tile crops: 123m456p789sEEEN, N laid apart."""
    img, _ = compose_scene([parse_row(r) for r in HAND_ROWS], real_faces(), np.random.default_rng(0), size=(600, 800))
    p = tmp_path_factory.mktemp("scene") / "hand.png"
    cv2.imwrite(str(p), img)
    return p
