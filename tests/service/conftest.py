"""Fixtures of the service tests: the app over a simulated machine, a photo of a hand."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from service_support import ROOT, make_client


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "state"
    monkeypatch.setenv("MJTABLE_STATE_DIR", str(d))
    return d


@pytest.fixture
def api(tmp_path):
    client, control, log = make_client(tmp_path)
    with client:
        yield client, control, log
    assert not control.alive and not control.backend.model.running()  # no motor left running
    log.close()


@pytest.fixture(scope="session")
def hand_photo(tmp_path_factory) -> Path:
    """A PNG of a laid-out hand made from real tile crops: 123456789m EEE N, the winning N laid apart."""
    import cv2
    import numpy as np

    sys.path.insert(0, str(ROOT / "tests" / "vision"))
    from vision.synth import compose_scene
    from vision_scenes import parse_row, real_faces

    img, _ = compose_scene([parse_row("1m 2m 3m 4m 5m 6m 7m 8m 9m E E E N | N")], real_faces(),
                           np.random.default_rng(1), size=(600, 800))
    p = tmp_path_factory.mktemp("photo") / "hand.png"
    cv2.imwrite(str(p), img)
    return p
