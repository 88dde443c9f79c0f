"""Fixtures of the hardware tests: a table driver over each backend. (The check that no motor
of any simulated machine is left running after a test is in tests/conftest.py.)"""

from __future__ import annotations

import pytest

import hardware
from hw_driver import Table

MCU_SPEED = 4.0  # the link carries ~680 frames/s: a full build at 8x (with the push-head
# home pulses) saturates it, and at 6x a tile-present pulse was still dropped now and then
# (EVENTS_DROPPED; benchmarks/link_bench.py: above 4x the machine's events overflow 115200 baud)


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
