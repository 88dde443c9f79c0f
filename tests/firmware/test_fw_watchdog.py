"""The firmware feeds machine.WDT every pass of its main loop; a pass that hangs longer than
the profile's ``mcu.watchdog_ms`` resets the board (the stand-in's WDT, on its virtual clock)."""

import hardware
from hardware.sim.micropython_mcu import MP_DIR, built_firmware

SCRIPT = """
import sys, os
sys.path.insert(0, {fw!r})
sys.path.insert(0, {mp!r})
os.chdir({flash!r})
import machine, pinmap, app

class Link:          # nothing on the line
    def read(self):
        return b""
    def write(self, data):
        pass

a = app.App(machine, pinmap, machine.clock, link=Link(), boot=1)
clock = machine.clock
for i in range(pinmap.WATCHDOG_MS + 300):    # longer than the timeout, fed every pass
    a.step()
    clock.sleep_ms(1)
print("fed", a.passes)
clock.sleep_ms({hang})                        # one pass that hangs
a.step()
print("not reset")
"""


def run(run_mp, tmp_path, hang_ms):
    fw = built_firmware(hardware.load_profile("default"))
    script = tmp_path / "wdt.py"
    script.write_text(SCRIPT.format(fw=str(fw), mp=str(MP_DIR), flash=str(tmp_path), hang=hang_ms))
    return run_mp(script)


def test_a_pass_longer_than_the_watchdog_resets_the_board(run_mp, tmp_path):
    timeout = hardware.load_profile("default").mcu.watchdog_ms
    r = run(run_mp, tmp_path, timeout + 200)
    assert r.returncode == 4, r.stdout + r.stderr          # the stand-in's reset: the process ends
    assert r.stdout.split()[:2] == ["fed", str(timeout + 300)] and "not reset" not in r.stdout


def test_a_pass_within_the_watchdog_does_not(run_mp, tmp_path):
    timeout = hardware.load_profile("default").mcu.watchdog_ms
    r = run(run_mp, tmp_path, timeout - 200)
    assert r.returncode == 0 and "not reset" in r.stdout, r.stdout + r.stderr
