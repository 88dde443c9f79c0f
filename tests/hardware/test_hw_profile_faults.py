"""Profiles (validation names the key) and the fault catalogue and parser."""

from __future__ import annotations

import copy
import tomllib

import pytest

from hardware.vocabulary import Side
from hardware import FaultSpecError, ProfileError, load_profile, open_backend
from hardware.profile import PROFILE_DIR, parse_profile
from hardware.sim.faults import INJECTABLE, FaultSpec, parse_fault

RAW = tomllib.loads((PROFILE_DIR / "default.toml").read_text())


def test_default_profile_gears_and_deadlines():
    p = load_profile()
    assert p.gears == {136: (17,) * 4, 144: (18,) * 4, 152: (19,) * 4, 108: (14, 13, 14, 13)}
    assert p.tiles == 136 and p.gpio.inputs["lift_top"][0].active_high is False
    assert p.feed_deadline_ms(17) == int(1000 * (17 * 1.2 * 1.3 + 2.0))
    assert p.timing.lift_up_s < p.timing.lift_deadline_s


def _bad(path, value):
    d = copy.deepcopy(RAW)
    node = d
    for k in path[:-1]:
        node = node[k]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return d


@pytest.mark.parametrize("path,value,message", [
    (("timing", "lift_up_s"), -1, "timing.lift_up_s must be a positive number, got -1"),
    (("timing", "dice_spin_s"), "1", "timing.dice_spin_s must be a positive number"),
    (("timing", "lift_up_s"), 5.0, "timing.lift_up_s must be below timing.lift_deadline_s"),
    (("timing", "face_up_fraction"), 1.5, "timing.face_up_fraction must be a number"),
    (("timing", "shuffle_speed"), 3, "timing.shuffle_speed is not a known key"),
    (("machine", "tiles"), 140, "machine.tiles must be one of 136, 144, 152, 108"),
    (("gears", "136"), [17, 17, 17, 16], "gears.136 must hold 136 tiles"),
    (("gears", "136"), [17, 17], "gears.136 must be a list of 4 stack counts"),
    (("gpio", "outputs", "dice"), 9, "gpio.outputs.dice: GPIO9 is already used by "
                                     "gpio.outputs.shuffle"),
    (("gpio", "outputs", "feeder"), [16, 17, 18], "gpio.outputs.feeder must be a list of 4"),
    # an active-high output on a pin pulled up at reset (BCM2835 table 6-31) is refused
    (("gpio", "outputs", "dice"), 4, "gpio.outputs.dice: GPIO4 is pulled up from power-on"),
    (("gpio", "outputs", "lift_up"), [20, 21, 35, 23], "gpio.outputs.lift_up[2]: GPIO35 is "
                                                       "pulled up"),
    (("gpio", "outputs", "heartbeat"), 8, "gpio.outputs.heartbeat: GPIO8 is pulled up"),
    # active-low drivers: a pin pulled down at reset would switch them on
    (("gpio", "outputs_active_high"), False, "gpio.outputs.shuffle: GPIO9 is pulled down from "
                                             "power-on until the service starts, which switches "
                                             "an active-low output on"),
    # a glitch filter at least as long as the sensor's pulse would swallow every pulse
    (("gpio", "inputs", "stack", "bounce_ms"), 100, "gpio.inputs.stack.bounce_ms must be "
                                                    "shorter than the sensor's pulse "
                                                    "(timing.push_s = 0.1 s)"),
    (("gpio", "inputs", "estop", "active"), "on", "gpio.inputs.estop.active must be"),
    (("gpio", "inputs", "estop", "pull"), "down", "gpio.inputs.estop: pull \"down\" with active"),
    (("gpio", "pin_factory"), "wiringpi", "gpio.pin_factory must be one of"),
    (("timing", "lift_down_s"), KeyError, "timing.lift_down_s is missing"),
    (("timing", "push_cycle_s"), 1.2, "timing.push_cycle_s must be below timing.feed_stack_s"),
    (("gpio", "inputs", "estop", "bounce"), 20, "gpio.inputs.estop.bounce is not a known key"),
    (("gpio", "inputs", "estop", "bounce_ms"), -5, "gpio.inputs.estop.bounce_ms must be an integer 0..1000"),
])
def test_profile_errors_name_the_key(path, value, message):
    with pytest.raises(ProfileError) as exc:
        parse_profile(_bad(path, value))
    assert message in str(exc.value)


def test_unknown_profile_lists_known_ones():
    with pytest.raises(ProfileError, match="known profiles: default"):
        load_profile("nosuch")


CONTRACT = {
    "lift-top-stuck-on": True, "lift-top-stuck-off": True, "lift-bottom-stuck-on": True,
    "lift-bottom-stuck-off": True, "lift-sensor-reversed": True, "lift-short": True,
    "lift-late": True, "lift-slow": True, "feeder-wire-loose": True, "feeder-jammed": True,
    "tile-sensor-dirty": True, "wrong-gear": False, "missing-tile": False,
    "disc-stall": False, "dice-stuck": False, "push-head-jammed": True,
    "push-home-stuck-off": True, "centre-lift-stuck": False, "tile-jam": False,
    "mcu-reset": False, "link-noise": False, "link-broken": False}


def test_injectable_list_is_the_contract():
    assert {k: v.sides for k, v in INJECTABLE.items()} == CONTRACT
    assert [k for k, v in INJECTABLE.items() if v.backends == ("mcu",)] == [
        "mcu-reset", "link-noise", "link-broken"]
    assert all(v.symptom for v in INJECTABLE.values())


def test_parse_fault():
    assert parse_fault("lift-short:e") == FaultSpec("lift-short", Side.E)
    assert parse_fault(" disc-stall ") == FaultSpec("disc-stall", None)
    assert str(parse_fault("feeder-jammed:N")) == "feeder-jammed:N"
    with pytest.raises(FaultSpecError, match="unknown fault kind 'lift-broken'; allowed: "
                                             "lift-top-stuck-on"):
        parse_fault("lift-broken:E")
    with pytest.raises(FaultSpecError, match="side must be E, S, W or N, got 'X'"):
        parse_fault("lift-short:X")
    with pytest.raises(FaultSpecError, match="needs a side"):
        parse_fault("lift-short")
    with pytest.raises(FaultSpecError, match="belongs to no side"):
        parse_fault("disc-stall:E")
    with pytest.raises(FaultSpecError, match="applies only to the mcu backend, not sim"):
        parse_fault("mcu-reset", "sim")
    with pytest.raises(FaultSpecError, match="applies only to the mcu backend, not gpio"):
        open_backend("gpio", faults=["link-noise"])
    with pytest.raises(FaultSpecError, match="applies only to the sim/mcu backend, not gpio"):
        open_backend("gpio", faults=["tile-jam"])  # the GPIO build has no jam sensor


def test_optional_gpio_parts_may_be_left_out_but_not_the_core():
    d = _bad(("gpio", "outputs", "buzzer"), 44)
    with pytest.raises(ProfileError, match="GPIO44 is already used by gpio.outputs.buzzer"):
        parse_profile(d)
    d = copy.deepcopy(RAW)
    d["gpio"]["inputs"]["estop"]["pin"] = 46
    d["gpio"]["inputs"]["dice_button"] = {"pin": 35, "active": "low", "pull": "up"}
    p = parse_profile(d)
    assert "dice_button" in p.gpio.inputs and "jam" not in p.gpio.inputs
    with pytest.raises(ProfileError, match=r"\[gpio.inputs.push_home\] table is missing"):
        parse_profile(_bad(("gpio", "inputs", "push_home"), KeyError))
    with pytest.raises(ProfileError, match="timing.centre_down_s must be below "
                                           "timing.centre_deadline_s"):
        parse_profile(_bad(("timing", "centre_down_s"), 9.0))
