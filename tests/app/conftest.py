"""Every command-line test keeps its settings in its own state folder (``MJTABLE_STATE_DIR``)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("MJTABLE_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"
