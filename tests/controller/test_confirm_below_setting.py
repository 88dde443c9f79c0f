"""The flag threshold as a stored setting (``confirm-below``, issue 21): checked, persisted, refused
with its range; its default the camera pipeline's (the two values tied here: vision may not import controller)."""

from __future__ import annotations

import json

import pytest

from controller import settings as ST


def test_the_default_is_the_pipelines_and_it_is_persisted(tmp_path):
    from vision.assemble import MIN_CONFIDENCE
    assert ST.StoredSettings().confirm_below == ST.CONFIRM_BELOW == MIN_CONFIDENCE == 0.6
    p = tmp_path / "settings.json"
    s = ST.validate("confirm-below", "0.75", ST.load(p))
    ST.save(s, p)
    assert json.loads(p.read_text())["confirm_below"] == 0.75
    assert ST.load(p).confirm_below == 0.75 and ST.load(p).tile_count == 136
    for ends in ("0.5", "0.95", " 0.8 "):
        assert ST.validate("confirm-below", ends, s).confirm_below == float(ends)


@pytest.mark.parametrize("value", ["0.49", "0.951", "1", "0", "-0.7", "nan", "inf", "", "high", "0.7.5"])
def test_a_threshold_outside_the_range_is_refused_with_the_range(value):
    with pytest.raises(ST.SettingsError) as e:
        ST.validate("confirm-below", value, ST.StoredSettings())
    assert "confirm-below" in str(e.value) and "from 0.5 to 0.95" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("stored", [0.2, 1.5, "0.7x", True, [0.7]])
def test_a_bad_stored_threshold_names_the_key_and_the_repair(tmp_path, stored):
    p = tmp_path / "settings.json"
    p.write_text(json.dumps({"dealer": "S", "confirm_below": stored}))
    with pytest.raises(ST.SettingsError) as e:
        ST.load(p)
    assert str(p) in str(e.value) and "mjtable config set confirm-below" in str(e.value)
    lenient = ST.load(p, lenient=True)  # `config set` can still repair the file: the rest is kept
    assert lenient.confirm_below == 0.6 and lenient.dealer == "S"


def test_the_settings_module_loads_no_camera_pipeline():
    # the command line and the service read the threshold without OpenCV (vision imports it)
    import subprocess
    import sys
    code = ("import sys, controller.settings as S; S.check_confirm_below('0.75'); "
            "print(sorted(m for m in ('cv2', 'numpy', 'vision') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
