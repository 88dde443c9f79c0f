"""The device side of firmware_bridge runs under MicroPython and sends the same bytes."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
TRACE = HERE / "engine_trace.py"


def test_engine_trace_same_bytes_under_micropython(run_mp):
    cp = subprocess.run([sys.executable, str(TRACE), str(REPO)], capture_output=True,
                        text=True, timeout=120, check=True)
    mp = run_mp(TRACE, REPO)
    assert mp.returncode == 0, mp.stderr or mp.stdout
    cp_lines, mp_lines = cp.stdout.splitlines(), mp.stdout.splitlines()
    assert cp_lines[-1] == "done" and len([x for x in cp_lines if x.startswith("tx ")]) > 50
    for i, (a, b) in enumerate(zip(cp_lines, mp_lines)):
        assert a == b, "line %d differs:\nCPython:     %s\nMicroPython: %s" % (i + 1, a, b)
    assert len(cp_lines) == len(mp_lines)


def test_it_is_micropython(micropython):
    probe = subprocess.run([micropython, "-c", "import sys; print(sys.implementation.name)"],
                           capture_output=True, text=True, timeout=30)
    assert probe.stdout.strip() == "micropython"
