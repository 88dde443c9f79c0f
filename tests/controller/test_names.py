"""Side and phase names have one home (controller.names): every phase of the cycle has its Chinese
name there, and the service's status takes it from there (the page once showed "parking")."""

from __future__ import annotations

import pytest

from controller import cycle as CY
from controller import names


def test_every_phase_has_a_chinese_name():
    assert set(names.PHASE_ZH) == {p.value for p in CY.Phase}
    assert names.phase_zh("parking") == "推牌头归位"
    assert names.phase_zh("manual lift up (side W)") == "manual lift up (side W)"  # not a phase: as it is


def test_sides():
    assert names.SIDES == CY.SIDES and [names.side_zh(s) for s in names.SIDES] == ["东", "南", "西", "北"]
    assert names.side_zh(None) == ""
    with pytest.raises(KeyError):
        names.side_zh("X")

