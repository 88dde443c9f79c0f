"""The table camera's calibration in the settings file (``controller.settings.check_camera``)."""

from __future__ import annotations

import json

import pytest

from controller import settings as ST

GOOD = {"homography": [[1.0, 0.0, -10.0], [0.0, 1.0, -5.0], [0.0, 0.0, 1.0]], "side": 900, "picture": [1280, 720],
        "corners": [[10, 5], [910, 5], [910, 905], [10, 905]], "tile": [48.0, 64.0], "bottom_seat": "E"}


def test_a_calibration_is_stored_and_read_back(tmp_path):
    p = tmp_path / "settings.json"
    ST.save(ST.StoredSettings(rules="mcr", tile_count=144, camera=GOOD), p)
    got = ST.load(p)
    assert got.camera == GOOD and got.rules == "mcr"
    assert ST.load(tmp_path / "none.json").camera is None


@pytest.mark.parametrize("change, names", [
    ({"side": "900"}, "camera.side"), ({"homography": [[1, 0], [0, 1]]}, "camera.homography"),
    ({"bottom_seat": "X"}, "camera.bottom_seat"), ({"tile": [48, float("nan")]}, "camera.tile"),
    ({"zoom": 2}, "unknown key 'zoom'")])
def test_a_bad_calibration_names_its_key(tmp_path, change, names):
    p = tmp_path / "settings.json"
    p.write_text(json.dumps({"tile_count": 136, "camera": {**GOOD, **change}}))
    with pytest.raises(ST.SettingsError, match=names) as e:
        ST.load(p)
    assert str(p) in str(e.value) and "\n" not in str(e.value)
    lenient = ST.load(p, lenient=True)  # `config set` can still repair the file
    assert lenient.camera is None and lenient.tile_count == 136
