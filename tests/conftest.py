"""Safety check shared by every test that drives the simulated machine: after the test (passed,
failed or raised) no motor of any simulated machine is still running, and gpiozero's global mock
pin factory, if one was made, is reset for the next test."""

from __future__ import annotations

import gc
import sys

import pytest


@pytest.fixture(autouse=True)
def no_motor_left_running():
    yield
    model_module = sys.modules.get("hardware.sim.model")
    if model_module is None:
        return  # this test never built a simulated machine
    gc.collect()
    running = {id(m): m.running() for m in list(model_module.LIVE_MODELS) if m.running()}
    gpiozero = sys.modules.get("gpiozero")
    if gpiozero is not None:
        factory = gpiozero.Device.pin_factory
        if factory is not None and hasattr(factory, "reset"):
            factory.reset()
    assert not running, f"motors left running: {running}"
