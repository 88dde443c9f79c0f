"""Fixtures of the hardware tests: a table driver, and the safety check that no motor of
any simulated machine is left running after a test."""

from __future__ import annotations

import gc

import pytest

import hardware
from hardware.sim.model import LIVE_MODELS
from hw_driver import Table

MCU_SPEED = 8.0  # the link carries ~680 frames/s: a full build at 16x saturates it


@pytest.fixture(autouse=True)
def no_motor_left_running():
    """After every test (passed, failed or raised), every simulated machine has every
    motor stopped, and gpiozero's global mock factory (if any) is reset."""
    yield
    gc.collect()
    running = {id(m): m.running() for m in list(LIVE_MODELS) if m.running()}
    from gpiozero import Device
    if Device.pin_factory is not None and hasattr(Device.pin_factory, "reset"):
        Device.pin_factory.reset()
    assert not running, f"motors left running: {running}"


@pytest.fixture(params=["sim", "gpio", "mcu"])
def kind(request):
    return request.param


@pytest.fixture
def open_table(kind):
    """``open_table(faults=[...], seed=...)`` -> Table over the parametrized backend."""
    opened = []

    def make(faults=(), seed: int = 1) -> Table:
        b = hardware.open_backend(kind, seed=seed, faults=faults, speed=MCU_SPEED)
        opened.append(b)
        return Table(b)

    yield make
    for b in opened:
        b.close()
