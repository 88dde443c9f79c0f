"""Faults of the board and the line through the firmware under MicroPython: the RP2040
restarts (mcu-reset) and the serial line breaks (link-broken). The link-fault tests of the
in-process device (tests/hardware/test_hw_mcu_faults.py) run here unchanged with the
firmware as the device (at 4x at most: faster, the machine's events overflow the 115200-baud
line that the stand-in's UART keeps), and a whole cycle gets the same diagnoses (E61, E62)
as the controller's fault matrix (tests/controller/test_cycle.py)."""

import functools
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hardware"))

import hardware  # noqa: E402

import test_hw_mcu_faults as suite  # noqa: E402
from controller import cycle as CY  # noqa: E402
from controller.runtime import TableRuntime  # noqa: E402

SPEED = 4


@pytest.fixture
def through_the_firmware(monkeypatch, micropython):
    """``hardware.open_backend("mcu", ...)`` opens the firmware under MicroPython."""
    real = hardware.open_backend

    def open_firmware(kind, **kw):
        kw["speed"] = min(kw.get("speed", SPEED), SPEED)
        return real(kind, **dict(kw, device="micropython"))
    monkeypatch.setattr(hardware, "open_backend", open_firmware)


for _name in dir(suite):
    if _name.startswith("test_"):
        # a wrapper of its own: marking the suite's function would mark it in tests/hardware
        globals()[_name] = pytest.mark.usefixtures("through_the_firmware")(functools.wraps(
            getattr(suite, _name))(lambda _f=getattr(suite, _name): _f()))


@pytest.mark.parametrize("spec, code", [("link-broken", "E62")])
def test_diagnosed_through_the_firmware(micropython, spec, code):
    """A whole cycle with the line broken (onset at 5 s of machine time) ends in safe-stop with
    every motor stopped by the firmware itself (the fault matrix, test_fw_matrix.py, has every
    fault's diagnosis through the command line, mcu-reset's E61 among them)."""
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
        if code == "E61":
            assert b.device.reboots == ["fault mcu-reset: the RP2040 restarts"]
    finally:
        b.close()
