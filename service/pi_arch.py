"""Is this Python a 64-bit one on ARM? One check, used at install time and by ``mjtable doctor``.

Standard library only: ``setup.py`` loads this file by its path during ``pip install`` (before any
dependency is there), and :mod:`service.doctor` imports it.

Why: PyPI has no 32-bit ARM (armv7l) wheels for opencv-python-headless, numpy 2, scipy or
onnxruntime, so on 32-bit Raspberry Pi OS ``pip install`` would try to compile them for hours and
fail. 32-bit Raspberry Pi OS on a Pi 4 or 5 boots a 64-bit kernel, so ``uname -m`` (and
``platform.machine()``) says ``aarch64`` there: only the size of a pointer in the running Python
tells a 32-bit userland apart.
"""

from __future__ import annotations

import platform
import struct

#: ``platform.machine()`` values of ARM machines (32-bit userland or kernel, or 64-bit).
ARM_MACHINES = ("aarch64", "arm64", "armv8l", "armv7l", "armv6l")

MESSAGE_32BIT = ("mjtable needs 64-bit Raspberry Pi OS: this Python is 32-bit ({machine}, {bits}-bit pointers), and "
                 "PyPI has no 32-bit ARM wheels of opencv-python-headless, numpy, scipy or onnxruntime. Write the "
                 "64-bit image (Raspberry Pi OS (64-bit), Bookworm or later) with Raspberry Pi Imager, then install "
                 "again (docs/raspberry-pi.md).")


def arm32_refusal(machine: str | None = None, pointer_bytes: int | None = None) -> str | None:
    """The one-line refusal for a 32-bit Python on an ARM machine, else None.

    Args:
        machine: ``platform.machine()`` (None: this machine's).
        pointer_bytes: ``struct.calcsize("P")``, 4 or 8 (None: this Python's).
    Returns:
        ``MESSAGE_32BIT`` filled in when ``machine`` is ARM and pointers are 4 bytes; None on a
        64-bit ARM Python and on any other machine (x86-64 developers, CI).
    """
    machine = platform.machine() if machine is None else machine
    pointer_bytes = struct.calcsize("P") if pointer_bytes is None else pointer_bytes
    if machine.lower() in ARM_MACHINES and pointer_bytes < 8:
        return MESSAGE_32BIT.format(machine=machine, bits=pointer_bytes * 8)
    return None
