"""Build-time check for setuptools (the project is described in pyproject.toml).

``pip install`` runs this file to build mjtable. On a 32-bit ARM Python (32-bit Raspberry Pi OS,
even on a 64-bit kernel) it stops the build with one message: PyPI has no 32-bit ARM wheels of
OpenCV, numpy, scipy or onnxruntime (see service/pi_arch.py and docs/raspberry-pi.md).
"""

import importlib.util
import os
import sys

from setuptools import setup


def _pi_arch():
    # by path: the package's __init__ would import its dependencies, absent while building
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "service", "pi_arch.py")
    spec = importlib.util.spec_from_file_location("_mjtable_pi_arch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    refusal = _pi_arch().arm32_refusal()
    if refusal:
        sys.exit("error: " + refusal)
    setup()
