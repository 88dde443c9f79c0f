"""No motor output left on, whatever way the process ends (issue #23 section 1), on gpiozero's
MockFactory: an exception, SIGTERM through the service's signal handling, and a killed process
followed by the unit's stop hook. Also the heartbeat output and the lift reversal dead time on the
GPIO backend's pins."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

import hardware
from firmware_bridge.motion import REVERSAL_DEAD_MS
from hardware.vocabulary import ClearSafeStop, FeedStacks, Lift, Side, StartShuffle, StopAll
from hardware import pi_safety as S
from hardware.gpio import HEARTBEAT_LEASE_S

ROOT = Path(__file__).resolve().parents[2]
PROFILE = hardware.load_profile()
OUTPUTS = S.motor_output_pins(PROFILE)


def _levels(factory) -> dict[int, bool]:
    """The electrical level of every output pin of the default profile."""
    return {p: bool(factory.pin(f"GPIO{p}").state) for p in OUTPUTS}


def _motors_on(backend) -> None:
    backend.submit(ClearSafeStop())
    backend.submit(Lift(Side.E, True, 3000))
    backend.submit(Lift(None, False, 2500))
    backend.submit(FeedStacks(Side.S, 3, 5000))
    backend.submit(StartShuffle(5000))


def _expand(spec: str) -> list[int]:
    pins: list[int] = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        pins.extend(range(int(lo), int(hi or lo) + 1))
    return pins


def test_an_exception_leaves_every_output_low(monkeypatch):
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    with pytest.raises(RuntimeError, match="boom"):
        with hardware.open_gpio(PROFILE, "mock") as b:  # real clock, deadline ticker thread
            factory = b.pin_factory
            _motors_on(b)
            on = _levels(factory)
            assert on[PROFILE.gpio.outputs["lift_up"][0]] and on[PROFILE.gpio.outputs["shuffle"][0]]
            assert on[PROFILE.gpio.outputs["centre_down"][0]]
            raise RuntimeError("boom")
    assert not any(_levels(factory).values()), _levels(factory)


def test_sigterm_to_the_service_leaves_every_output_low(tmp_path, monkeypatch):
    """``mjtable serve`` with the GPIO backend on mock pins, in this process: SIGTERM while
    motors run goes through the service's own signal handling, and every output ends low."""
    from app import cli

    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    monkeypatch.setenv("MJTABLE_STATE_DIR", str(tmp_path / "state"))
    opened = []
    real_open = hardware.open_gpio

    def capture(*a, **k):
        b = real_open(*a, **k)
        opened.append(b)
        return b
    monkeypatch.setattr(hardware, "open_gpio", capture)
    cfg = tmp_path / "table.toml"
    cfg.write_text('[machine]\nbackend = "gpio"\nprofile = "default"\n'
                   '[camera]\npreload = false\n')
    seen: dict[str, object] = {}

    def drive() -> None:
        end = time.monotonic() + 30
        while not opened and time.monotonic() < end:
            time.sleep(0.02)
        b = opened[0]
        time.sleep(0.5)  # the server is starting; the pins are claimed
        _motors_on(b)
        seen["on"] = _levels(b.pin_factory)
        os.kill(os.getpid(), signal.SIGTERM)

    t = threading.Thread(target=drive, daemon=True)
    t.start()
    rc = cli.main(["serve", "--config", str(cfg), "--port", "0",
                   "--token-file", str(tmp_path / "token"), "--log", str(tmp_path / "ev.sqlite"),
                   "--no-preload"])
    t.join(5)
    assert rc == 0
    assert any(seen["on"].values())  # motors were running when the signal came
    assert not any(_levels(opened[0].pin_factory).values())


CHILD = textwrap.dedent("""
    import json, sys, time
    import hardware
    from hardware.vocabulary import ClearSafeStop, FeedStacks, Lift, Side, StartShuffle
    from hardware import pi_safety as S
    state_file = sys.argv[1]
    b = hardware.open_gpio("default", "mock")
    b.submit(ClearSafeStop()); b.submit(Lift(Side.W, True, 60000)); b.submit(StartShuffle(60000))
    b.submit(FeedStacks(Side.N, 5, 60000))
    f = b.pin_factory
    # what a Pi kernel keeps after the process dies: the last level of every output
    levels = {p: int(f.pin(f"GPIO{p}").state) for p in S.motor_output_pins(b.profile)}
    with open(state_file, "w") as fh:
        json.dump(levels, fh)
    print("running", flush=True)
    time.sleep(600)
""")

FAKE_PINCTRL = textwrap.dedent("""\
    #!{python}
    # a stand-in for /usr/bin/pinctrl: records its arguments and applies "set <pins> op dl|dh"
    # to the pin levels the killed process left behind
    import json, sys
    args = sys.argv[1:]
    with open({log!r}, "a") as fh:
        fh.write(" ".join(args) + "\\n")
    assert args[0] == "set" and args[2] == "op" and args[3] in ("dl", "dh"), args
    pins = []
    for part in args[1].split(","):
        lo, _, hi = part.partition("-")
        pins.extend(range(int(lo), int(hi or lo) + 1))
    levels = json.load(open({state!r}))
    for p in pins:
        levels[str(p)] = 0 if args[3] == "dl" else 1
    json.dump(levels, open({state!r}, "w"))
""")


def test_a_killed_process_then_the_stop_hook_switches_every_output_off(tmp_path):
    state, log = tmp_path / "pins.json", tmp_path / "pinctrl.log"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "pinctrl"
    fake.write_text(FAKE_PINCTRL.format(python=sys.executable, log=str(log), state=str(state)))
    fake.chmod(0o755)
    env = {**os.environ, "GPIOZERO_PIN_FACTORY": "mock", "MJTABLE_STATE_DIR": str(tmp_path / "s")}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(state)], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "running", child.stderr.read()
        left = json.loads(state.read_text())
        assert sum(left.values()) >= 3  # lift W up, shuffle, feeder N: on when it died
        child.kill()  # SIGKILL: no Python cleanup runs (as after TimeoutStopSec, or the OOM killer)
        assert child.wait(10) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
        child.stdout.close()
        child.stderr.close()
    unit = S.render_unit(PROFILE, "gpio")
    (hook,) = [ln for ln in unit.splitlines() if ln.startswith("ExecStopPost=")]
    argv = hook.removeprefix("ExecStopPost=").removeprefix("+").split()
    assert argv[0] == S.PINCTRL
    # systemd runs it whatever ended the process; here: the same argv, pinctrl found on PATH
    subprocess.run([fake.name, *argv[1:]], check=True,
                   env={**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"})
    recorded = log.read_text().split()
    assert recorded[0] == "set" and recorded[2:] == ["op", "dl"]
    assert sorted(_expand(recorded[1])) == OUTPUTS  # every motor output, the heartbeat too
    assert not any(json.loads(state.read_text()).values())


def test_heartbeat_toggles_only_while_fed_and_ends_low():
    b = hardware.open_backend("gpio")
    try:
        hb = b.pin_factory.pin(f"GPIO{PROFILE.gpio.outputs['heartbeat'][0]}")
        for _ in range(20):           # the control loop turning: advance() feeds the heartbeat
            b.advance(0.05)
        assert b.heartbeat_edges >= 10
        n = b.heartbeat_edges
        with b.lock:                  # the machine's time goes on, nobody feeds: a hung loop
            for _ in range(int(HEARTBEAT_LEASE_S / 0.05) + 2):
                b._step_to(b.model.now + 0.05)
            fed_on = b.heartbeat_edges - n
            for _ in range(20):
                b._step_to(b.model.now + 0.05)
        assert fed_on >= HEARTBEAT_LEASE_S / 0.05 / 2   # it ran on through the lease ...
        assert b.heartbeat_edges - n == fed_on          # ... then stopped
        assert not hb.state                             # low: the watchdog drops motor power
        n = b.heartbeat_edges
        b.stop_all()                  # an operator stop keeps motor power's feed going
        b.advance(0.05)
        b.advance(0.05)
        assert b.heartbeat_edges > n
    finally:
        b.close()
    assert not hb.state


def test_lift_reversal_waits_the_dead_time_on_the_gpio_pins():
    b = hardware.open_backend("gpio")
    try:
        f = b.pin_factory
        up = f.pin(f"GPIO{PROFILE.gpio.outputs['lift_up'][2]}")
        down = f.pin(f"GPIO{PROFILE.gpio.outputs['lift_down'][2]}")
        b.submit(ClearSafeStop())
        b.submit(Lift(Side.W, True, 3000))
        assert up.state and not down.state
        b.advance(1.0)                    # mid-travel: stop, and reverse at once
        b.submit(StopAll())
        b.submit(Lift(Side.W, False, 3000))
        assert not up.state and not down.state   # up relay open, down relay not yet closed
        t0 = b.now()
        while not down.state:
            assert not up.state
            b.advance(0.005)
        assert b.now() - t0 == pytest.approx(REVERSAL_DEAD_MS / 1000, abs=0.006)
        assert not up.state
    finally:
        b.close()


def test_the_simulator_waits_the_dead_time_too():
    b = hardware.open_backend("sim")
    try:
        m = b.model
        b.submit(ClearSafeStop())
        b.submit(Lift(Side.S, True, 3000))
        b.advance(0.5)
        b.submit(StopAll())
        b.submit(Lift(Side.S, False, 3000))
        b.advance(REVERSAL_DEAD_MS / 1000 - 0.01)
        assert not m.running()
        b.advance(0.02)
        assert m.running()
    finally:
        b.close()
