"""Faults of the board and the line through the firmware under MicroPython: the RP2040
restarts (mcu-reset) and the serial line breaks (link-broken). The same observations as
with the in-process device (tests/hardware/test_hw_mcu_faults.py) and the same diagnoses
(E61, E62) as in the controller's fault matrix (tests/controller/test_cycle.py)."""

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hardware"))

import hardware  # noqa: E402
from hw_driver import Table  # noqa: E402

from controller import cycle as CY  # noqa: E402
from controller.runtime import TableRuntime  # noqa: E402
from firmware_bridge import catalogue as C  # noqa: E402
from firmware_bridge.host import LinkLost, McuReset  # noqa: E402
from firmware_bridge.messages import ClearSafeStop, ReplyCode, StartShuffle, StopReason  # noqa: E402
from hardware.sim.faults import FaultSpec  # noqa: E402

SPEED = 4


def test_mcu_reset_reboots_the_firmware(micropython):
    b = hardware.open_backend("mcu", faults=[FaultSpec("mcu-reset", at_s=3.0)], speed=SPEED,
                              device="micropython")
    try:
        t = Table(b)
        t.start()
        t.call(StartShuffle(60_000))
        assert b.model.running()
        t.log += b.run_until(lambda e: isinstance(e, McuReset), 10)
        # the boot counter comes from the firmware's flash file, incremented at boot
        assert t.of(McuReset)[0].boot == 2
        assert b.device.reboots == ["fault mcu-reset: the RP2040 restarts"]
        assert b.model.running() == {}  # in reset every output is off; it boots with them off
        t.log += b.advance(0.5)
        _, r = t.call(StartShuffle(60_000))
        assert (r.code, r.detail) == (ReplyCode.SAFE_STOP, StopReason.POWER_ON)
        assert t.call(ClearSafeStop())[1].code == ReplyCode.OK
    finally:
        b.close()


def test_link_broken_firmware_stops_by_itself(micropython):
    b = hardware.open_backend("mcu", faults=[FaultSpec("link-broken", at_s=2.0)], speed=SPEED,
                              device="micropython")
    try:
        t = Table(b)
        t.start()
        t.call(StartShuffle(60_000))
        assert b.model.running()
        t.log += b.run_until(lambda e: isinstance(e, LinkLost), 20)
        t0 = time.monotonic()
        while b.model.running() and time.monotonic() - t0 < 1.0:
            time.sleep(0.01)
        assert b.model.running() == {}  # the firmware's host-silence rule: within 500 ms
        assert b.device.engine_state[1] == C.STOP_HOST_TIMEOUT
    finally:
        b.close()


@pytest.mark.parametrize("spec, code", [("mcu-reset", "E61"), ("link-broken", "E62")])
def test_diagnosed_through_the_firmware(micropython, spec, code):
    """A whole cycle with the fault (onset at 5 s of machine time): the diagnosis of the
    controller's fault matrix; E61 re-homes and finishes the cycle, E62 ends in safe-stop
    with every motor stopped by the firmware itself."""
    b = hardware.open_backend("mcu", seed=11, faults=[spec], speed=SPEED, device="micropython")
    try:
        rt = TableRuntime(b, CY.Settings.from_profile(b.profile, 136), dice=lambda: (3, 4, 2, 5))
        t = rt.run_cycle()
        end = time.monotonic() + 0.75          # the heartbeat window plus a margin
        while b.model.running() and time.monotonic() < end:
            time.sleep(0.02)
        assert b.model.running() == {}, f"{spec}: motors left running in {t.phase.value}"
        diags = ([t.fault] if t.fault else []) + list(t.warnings)
        assert code in [d.code for d in diags], [(d.code, d.observed_en) for d in diags]
        assert t.phase is (CY.Phase.WALLS_UP if code == "E61" else CY.Phase.SAFE_STOP)
    finally:
        b.close()
