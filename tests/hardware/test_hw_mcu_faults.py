"""Faults of the link itself, with the mcu backend only: MCU reset, dead line, noise."""

from __future__ import annotations

import time

import hardware
from hardware.vocabulary import BackendLost, BackendReset
from hardware.vocabulary import (ClearSafeStop, ReplyCode, StartShuffle,
                                 StopReason)
from hardware.sim.faults import FaultSpec
from hw_driver import Table


def test_mcu_reset_mid_cycle():
    b = hardware.open_backend("mcu", faults=[FaultSpec("mcu-reset", at_s=3.0)], speed=8)
    try:
        t = Table(b)
        t.start()
        t.call(StartShuffle(60_000))
        t.log += b.run_until(lambda e: isinstance(e, BackendReset), 10)
        assert t.of(BackendReset)[0].boot == 2
        assert b.model.running() == {}  # the rebooted MCU starts with every motor off
        t.log += b.advance(0.5)
        _, r = t.call(StartShuffle(60_000))
        assert (r.code, r.detail) == (ReplyCode.SAFE_STOP, StopReason.POWER_ON)
        assert t.call(ClearSafeStop())[1].code == ReplyCode.OK
    finally:
        b.close()


def test_link_broken_device_stops_by_itself():
    b = hardware.open_backend("mcu", faults=[FaultSpec("link-broken", at_s=2.0)], speed=8)
    try:
        t = Table(b)
        t.start()
        t.call(StartShuffle(60_000))
        assert b.model.running()
        t.log += b.run_until(lambda e: isinstance(e, BackendLost), 20)
        t0 = time.monotonic()
        while b.model.running() and time.monotonic() - t0 < 1.0:
            time.sleep(0.01)
        assert b.model.running() == {}  # heartbeat rule: stopped within the 500 ms window
        # the reason the device latched: the firmware under MicroPython reports it on a line of
        # its own after the outputs it switched off, so a loaded machine may see it a moment later
        while b.device.runner.engine.stop_reason != 1 and time.monotonic() - t0 < 2.0:
            time.sleep(0.01)
        assert b.device.runner.engine.stop_reason == 1  # HOST_TIMEOUT
    finally:
        b.close()
