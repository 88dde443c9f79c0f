"""The hardware behavioural suite (tests/hardware/test_hw_backends.py: full builds, lifts,
dice, and every machine fault with its symptom) run through the firmware under MicroPython:
the same test functions, with the mcu backend's device end being firmware/rp2040 in the unix
port at a 160 KB heap instead of the in-process device engine."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hardware"))

import hardware  # noqa: E402
from hardware.sim.mcu_device import link_speed_limit  # noqa: E402
from hw_driver import Table  # noqa: E402

import test_hw_backends as suite  # noqa: E402

# 6 in tests/hardware. The firmware reads its slow inputs (74HC165 chain) once per pass of its
# main loop; the stand-in's virtual clock runs the machine in lock-step with those passes, so
# no pulse is missed whatever the load (a tile-present pulse of 40 ms machine time is 10 ms of
# the board's time at 4x). The speed is what the 115200-baud line carries for the profile
# (hardware.sim.mcu_device.link_speed_limit, 4.3): at 8x the machine's sensor events overflow
# it, as on SimulatedMcu.
MCU_SPEED = float(int(link_speed_limit(hardware.load_profile("default"))))

for _name in dir(suite):
    if _name.startswith("test_"):
        globals()[_name] = getattr(suite, _name)


@pytest.fixture
def kind(micropython):
    return "mcu"


@pytest.fixture
def open_table(micropython, kind):
    if kind != "mcu":     # a test of the suite parametrized over other backends too
        pytest.skip("runs the firmware on the mcu backend only")
    opened = []

    def make(faults=(), seed=1):
        b = hardware.open_backend("mcu", seed=seed, faults=faults, speed=MCU_SPEED,
                                  device="micropython")
        opened.append(b)
        return Table(b)

    yield make
    for b in opened:
        b.close()
