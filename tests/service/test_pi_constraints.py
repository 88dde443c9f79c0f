"""deploy/pi-constraints.txt resolves against the project's dependencies for a 64-bit Raspberry
Pi OS Bookworm (aarch64, CPython 3.11, glibc 2.36) from wheels only: pip's resolver, asked by
``pip install --dry-run --platform ... --only-binary=:all:`` (needs PyPI, as the mcr-1998 test
does). What the dry run cannot see: the ``platform_machine`` markers of the ``pi`` extra are
judged on this machine, so the extra's packages are resolved on their own, with no dependency."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib

from service_support import ROOT

PLATFORMS = ["manylinux2014_aarch64"] + [f"manylinux_2_{n}_aarch64" for n in range(17, 37)]  # Bookworm: glibc 2.36
TARGET = ["--python-version", "3.11", "--implementation", "cp", "--abi", "cp311", "--only-binary=:all:"]
for _p in PLATFORMS:
    TARGET += ["--platform", _p]


def _dry_run(tmp_path, reqs: list[str], *extra: str) -> dict[str, str]:
    report = tmp_path / "report.json"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                        "--disable-pip-version-check", "--report", str(report), *TARGET, *extra, *reqs],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in json.loads(report.read_text())["install"]}


def test_constraints_resolve_for_bookworm_aarch64(tmp_path):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = project["dependencies"] + project["optional-dependencies"]["fast"]
    got = _dry_run(tmp_path, reqs, "-c", str(ROOT / "deploy" / "pi-constraints.txt"))
    pins = {}
    for line in (ROOT / "deploy" / "pi-constraints.txt").read_text().splitlines():
        if m := re.match(r"([A-Za-z0-9_.-]+)==([^;\s]+)", line):
            pins[m.group(1).lower()] = m.group(2)
    assert pins["numpy"].startswith("1.")  # the ABI of apt's picamera2 / simplejpeg on Bookworm
    for name, version in pins.items():
        assert got[name] == version, (name, got.get(name))
    assert {"opencv-python-headless", "scipy", "onnxruntime", "pillow", "fastapi"} <= set(got)
    # the pi extra's GPIO packages have aarch64 / pure-Python wheels for that Python
    pi = [re.split(r"\s*;", r)[0] for r in project["optional-dependencies"]["pi"]]
    got_pi = _dry_run(tmp_path, pi, "--no-deps")
    assert "lgpio" in got_pi and not got_pi["lgpio"].startswith("0.0.")  # 0.0.0.2 is an empty placeholder
