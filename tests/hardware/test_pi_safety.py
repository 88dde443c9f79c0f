"""hardware.pi_safety: reset pulls, the outputs the stop hook covers, the config.txt lines and
the systemd unit (issue #23 sections 1, 2 and 4)."""

from __future__ import annotations

import copy
import tomllib

import pytest

from hardware import ProfileError, load_profile
from hardware import pi_safety as S
from hardware.profile import PROFILE_DIR, parse_profile

RAW = tomllib.loads((PROFILE_DIR / "default.toml").read_text())


def test_reset_pulls_follow_the_bcm2835_table():
    up = [p for p in range(54) if S.pulled_up_at_reset(p)]
    assert up == list(range(0, 9)) + [34, 35, 36] + list(range(46, 54))
    assert [S.reset_pull(p) for p in (9, 27, 28, 29, 30, 33, 37, 45)] == \
        ["down", "down", "none", "none", "down", "down", "down", "down"]
    with pytest.raises(ValueError, match="GPIO54 is not a BCM GPIO; allowed: 0-53"):
        S.reset_pull(54)
    assert S.output_on_at_reset(4, True) and not S.output_on_at_reset(4, False)
    assert S.output_on_at_reset(9, False) and not S.output_on_at_reset(9, True)
    assert not S.output_on_at_reset(28, True) and not S.output_on_at_reset(28, False)


def test_pin_ranges():
    assert S.pin_ranges([27, 9, 10, 11, 13, 16, 17, 10]) == "9-11,13,16-17,27"
    assert S.pin_ranges([5]) == "5" and S.pin_ranges([]) == ""


def test_default_map_has_no_output_that_the_reset_pull_switches_on():
    p = load_profile()
    pins = S.motor_output_pins(p)
    every_output = sorted(x for v in p.gpio.outputs.values() for x in v)
    assert pins == every_output and len(pins) == 17 and "heartbeat" in p.gpio.outputs
    assert not any(S.pulled_up_at_reset(x) for x in pins)
    assert all(S.reset_pull(x) == "down" for x in pins)
    # the 46 GPIOs of the CM3+ are all used, none twice
    used = pins + [ip.pin for ips in p.gpio.inputs.values() for ip in ips]
    assert sorted(used) == list(range(46))


def test_config_txt_lines_of_the_default_gpio_build():
    lines = S.config_txt_lines(load_profile())
    assert lines == ["gpio=9-13,16-27=op,dl", "dtparam=strict_gpiod", "force_eeprom_read=0",
                     "enable_uart=0", "camera_auto_detect=0", "display_auto_detect=0"]


def _active_low_map() -> dict:
    """The default profile with active-low drivers on pins pulled up at reset, and the
    inputs moved onto the other pins (none on GPIO 0/1 or 14/15)."""
    d = copy.deepcopy(RAW)
    d["gpio"]["outputs_active_high"] = False
    outs = iter([*range(2, 9), 34, 35, 36, *range(46, 52)])
    d["gpio"]["outputs"] = {k: ([next(outs) for _ in range(4)] if isinstance(v, list)
                                else next(outs))
                            for k, v in d["gpio"]["outputs"].items() if k != "heartbeat"}
    ins = iter([*range(9, 14), *range(16, 34), *range(37, 46)])
    for spec in d["gpio"]["inputs"].values():
        if "pins" in spec:
            spec["pins"] = [next(ins) for _ in range(4)]
        else:
            spec["pin"] = next(ins)
    return d


def test_config_txt_lines_follow_the_profile():
    p = parse_profile(_active_low_map())
    assert S.off_level(p) == "dh"
    assert S.config_txt_lines(p) == ["gpio=2-8,34-36,46-51=op,dh", "dtparam=strict_gpiod",
                                     "camera_auto_detect=0", "display_auto_detect=0"]
    assert S.stop_hook_command(p) == ["/usr/bin/pinctrl", "set", "2-8,34-36,46-51", "op", "dh"]


def test_unit_for_gpio_switches_every_output_off_after_any_exit():
    p = load_profile()
    text = S.render_unit(p, "gpio")
    hooks = [ln for ln in text.splitlines() if ln.startswith("ExecStopPost=")]
    assert hooks == ["ExecStopPost=+/usr/bin/pinctrl set 9-13,16-27 op dl"]
    for line in ("Type=notify", "WatchdogSec=10", "Restart=on-failure", "MemoryMax=768M",
                 "KillSignal=SIGTERM", "NoNewPrivileges=yes", "ProtectSystem=strict"):
        assert line in text.splitlines()
    assert "network-online.target" not in text.replace("no network-online.target wait", "")
    assert "--shell /usr/sbin/nologin" in text
    # options that would hide /dev/gpiochip*, /dev/ttyAMA*, /dev/video* from the service
    for hiding in ("PrivateDevices=", "DevicePolicy=", "DeviceAllow=", "ProtectClock=",
                   "PrivateUsers="):
        assert not any(ln.startswith(hiding) for ln in text.splitlines())


@pytest.mark.parametrize("backend", ["mcu", "sim"])
def test_unit_for_other_backends_has_no_pinctrl_hook(backend):
    text = S.render_unit(load_profile(), backend)
    assert "ExecStopPost" not in text and "pinctrl set" not in text
    assert f"# backend {backend}: the Pi's pins drive no motor" in text


@pytest.mark.parametrize("kwargs,message", [
    ({"backend": "usb"}, "backend must be one of sim, gpio, mcu"),
    ({"config_path": "table.toml"}, "config_path must be an absolute path"),
    ({"install_dir": "/opt/mj table"}, "install_dir must be an absolute path without spaces"),
    ({"watchdog_s": 0}, "watchdog_s must be an integer 1..600"),
    ({"memory_max": "7 G"}, "memory_max must be a systemd size"),
])
def test_unit_refuses_values_that_break_it(kwargs, message):
    with pytest.raises(ValueError, match=message):
        S.render_unit(load_profile(), **kwargs)


def test_loader_refusal_uses_the_same_table():
    d = copy.deepcopy(RAW)
    d["gpio"]["outputs"]["shuffle"] = 36
    d["gpio"]["inputs"]["push_home"]["pins"] = [9, 37, 38, 39]
    with pytest.raises(ProfileError, match="gpio.outputs.shuffle: GPIO36 is pulled up"):
        parse_profile(d)


def _cli_unit(*args: str) -> str:
    import io

    from app import service_cli
    from app.cli import _parser
    out, err = io.StringIO(), io.StringIO()
    assert service_cli.cmd_unit(_parser().parse_args(["unit", *args]), out, err) == 0, err.getvalue()
    return out.getvalue()


def test_the_shipped_units_are_what_mjtable_unit_renders():
    """deploy/mjtable.service is the default configuration (backend mcu), deploy/mjtable-gpio.service
    the GPIO build: render them again with `mjtable unit [--backend gpio] > deploy/...`."""
    deploy = PROFILE_DIR.parents[1] / "deploy"
    assert (deploy / "mjtable.service").read_text() == _cli_unit()
    assert (deploy / "mjtable-gpio.service").read_text() == _cli_unit("--backend", "gpio")
    assert "ExecStopPost=+/usr/bin/pinctrl set 9-13,16-27 op dl" in _cli_unit("--backend", "gpio")


def test_mjtable_unit_reads_the_config(tmp_path, capsys):
    from app.cli import main
    cfg = tmp_path / "table.toml"
    cfg.write_text('[machine]\nbackend = "gpio"\n')
    text = _cli_unit("--config", str(cfg))
    assert f"serve --config {cfg.resolve()} --token-file" in text and "ExecStopPost=+" in text
    assert "ExecStopPost" not in _cli_unit("--config", str(cfg), "--backend", "mcu")
    cfg.write_text('[machine]\nbackend = "usb"\n')
    assert main(["unit", "--config", str(cfg)]) == 1
    assert capsys.readouterr().err.strip().endswith("machine.backend must be one of sim, gpio, mcu, got 'usb'")
    assert main(["unit", "--profile", "nosuch"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("mjtable: profile 'nosuch' not found") and "\n" not in err


def _pin_rows(p) -> list[str]:
    """The rows of docs/wiring.md's pin table for profile ``p``."""
    rows: dict[int, str] = {}
    for name, pins in p.gpio.outputs.items():
        for i, x in enumerate(pins):
            rows[x] = f"{name}{' ' + 'ESWN'[i] if len(pins) > 1 else ''} | output"
    for name, ips in p.gpio.inputs.items():
        for i, ip in enumerate(ips):
            use = (f"input, active {'high' if ip.active_high else 'low'}, pull {ip.pull}"
                   + (f", filter {ip.bounce_ms} ms" if ip.bounce_ms else ""))
            rows[ip.pin] = f"{name}{' ' + 'ESWN'[i] if len(ips) > 1 else ''} | {use}"
    return [f"| {x} | {S.reset_pull(x)} | {rows[x]} |" for x in sorted(rows)]


def test_wiring_doc_carries_the_config_txt_lines_and_the_pin_map():
    doc = (PROFILE_DIR.parents[1] / "docs" / "wiring.md").read_text()
    p = load_profile()
    block = "```\n" + "\n".join(S.config_txt_lines(p)) + "\n```"
    assert block in doc
    assert "ExecStopPost=+" + " ".join(S.stop_hook_command(p)) in doc
    table = [ln for ln in doc.splitlines() if ln.startswith("| ") and ln.split(" | ")[0][2:].isdigit()]
    assert table == _pin_rows(p)
