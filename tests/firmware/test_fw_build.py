"""make firmware (firmware/build.py), the profile's [mcu] section and the boot counter."""

import sys
from pathlib import Path

import pytest

from firmware.build import build, pinmap_source
from hardware.errors import ProfileError
from hardware.profile import load_profile, parse_profile

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hardware"))

from test_hw_profile_faults import _bad  # noqa: E402  (the default profile with one value changed)


def test_default_profile_maps_every_part_once():
    m = load_profile().mcu
    assert m.link == "usb" and m.uart == (0, 0, 1, 115200)
    bits = [b for v in m.outputs.values() for b in v]
    assert len(bits) == len(set(bits)) == 24
    gpios = [ip.gpio for v in m.inputs.values() for ip in v if ip.gpio is not None]
    assert len(gpios) == len(set(gpios)) == 19
    assert set(gpios) | {2, 3, 4, 5, 6, 7, 8} == set(range(0, 23)) | {26, 27, 28}


@pytest.mark.parametrize("path,value,message", [
    (("mcu", "inputs", "estop", "gpio"), 23, "mcu.inputs.estop.gpio must be a GPIO the Pico"),
    (("mcu", "inputs", "estop", "gpio"), 9, "GPIO9 is already used by mcu.inputs.lift_top.gpios[0]"),
    (("mcu", "outputs", "dice"), 12, "chain bit 12 is already used by mcu.outputs.shuffle"),
    (("mcu", "outputs", "dice"), 24, "mcu.outputs.dice must be an integer 0..23"),
    (("mcu", "inputs", "lid", "bit"), 0, "input chain bit 0 is already used"),
    (("mcu", "inputs", "estop", "pull"), "down", "reads the idle input as on"),
    (("mcu", "uart", "tx"), 4, "UART0 has TX on GPIO 0, 12, 16, 28"),
    (("mcu", "link"), "uart", "GPIO1 is already used by mcu.uart.rx"),
    (("mcu", "watchdog_ms"), 9000, "mcu.watchdog_ms must be an integer 100..8388"),
    (("mcu", "inputs", "stack"), None, "[mcu.inputs.stack] table is missing"),
])
def test_mcu_section_is_validated(path, value, message):
    with pytest.raises(ProfileError) as exc:
        parse_profile(_bad(path, KeyError if value is None else value))
    assert message in str(exc.value)


def test_profile_without_mcu_has_none_and_no_firmware():
    p = parse_profile(_bad(("mcu",), KeyError))
    assert p.mcu is None
    with pytest.raises(ProfileError, match="has no \\[mcu\\] section"):
        pinmap_source(p)


def test_build_writes_mpy_and_pinmap(tmp_path):
    files = build("default", tmp_path / "fw")
    names = sorted(str(f.relative_to(tmp_path / "fw")) for f in files)
    assert "main.py" in names and "pinmap.py" in names and "app.mpy" in names
    assert "firmware_bridge/device.mpy" in names and "firmware_bridge/host.mpy" not in names
    assert all((tmp_path / "fw" / n).read_bytes()[:1] == b"M" for n in names if n.endswith(".mpy"))
    ns = {}
    exec((tmp_path / "fw" / "pinmap.py").read_text(), ns)
    assert ns["LINK"] == "usb" and ns["SHIFT_OUT"] == (2, 3, 4, 5, 3)
    assert ns["LIFT_UP"] == (4, 5, 6, 7) and len(ns["INPUTS"]) == 34
    assert (9, 0, 21, None, False, "up", 0) in ns["INPUTS"]   # push_home E on GPIO21


def test_boot_counter_survives_in_flash(run_mp, tmp_path):
    script = tmp_path / "boots.py"
    script.write_text(
        "import sys, os\n"
        "sys.path.insert(0, %r)\n"
        "os.chdir(%r)\n"
        "import app\n"
        "print(app.next_boot(), app.next_boot(), app.next_boot())\n"
        % (str(tmp_path / "fw"), str(tmp_path)))
    build("default", tmp_path / "fw", compile=False)
    r = run_mp(script)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.split() == ["1", "2", "3"]
    assert (tmp_path / "bootcount").read_bytes() == b"\x03\x00\x00\x00"
