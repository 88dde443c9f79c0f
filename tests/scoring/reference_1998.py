"""Build PyMahjongGB with its own 1998 switches, as an oracle for the ``mcr-1998`` profile.

The reference calculator's C++ source carries compile-time switches for the 1998 text. Two of
them are what ``mcr-1998`` does: ``STRICT_98_RULE`` (seven pairs without the set-defined fans;
One Voided Suit not counted with fans that necessarily void a suit; All Terminals excluding
Triple Pung) and ``SUPPORT_CONCEALED_KONG_AND_MELDED_KONG 0`` (明杠 + 暗杠 instead of 明暗杠).
The third, ``KNITTED_STRAIGHT_BODY_WITH_ECS 0`` (no wait fan when the winning tile is also a
knitted-straight tile), has no basis in the 1998 text, whose wait fans (77-79) do not mention
组合龙 and whose 就高不就低 takes the reading with the wait: it stays at 1. This module
downloads the same sdist as the dev dependency (PyMahjongGB 1.4.0) from PyPI, flips the switches,
compiles it into ``build/pymahjonggb-1998/`` (once; reused afterwards) and runs a comparison in a
child process, since the patched module has the same name as the installed one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

VERSION = "1.4.0"
ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / f"pymahjonggb-1998-{VERSION}"

PATCHES = (
    ("MahjongGB/mahjong-algorithm/fan_calculator.h",
     "#define SUPPORT_CONCEALED_KONG_AND_MELDED_KONG      1",
     "#define SUPPORT_CONCEALED_KONG_AND_MELDED_KONG      0"),
    ("MahjongGB/mahjong-algorithm/fan_calculator.cpp", "//#define STRICT_98_RULE", "#define STRICT_98_RULE"),
)


def build() -> Path:
    """Return the folder holding the compiled 1998 build (building it on first use).

    Raises:
        RuntimeError: download, patch or compile failed (with the tool's output).
    """
    done = BUILD / "src" / ".built"
    if done.exists():
        return BUILD / "src"
    BUILD.mkdir(parents=True, exist_ok=True)
    run = lambda *cmd, cwd=None: subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)  # noqa: E731
    r = run(sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
            f"pymahjonggb=={VERSION}", "-d", str(BUILD))
    if r.returncode:
        raise RuntimeError(f"downloading the PyMahjongGB sdist failed:\n{r.stdout}\n{r.stderr}")
    sdist = next(BUILD.glob("*.tar.gz"))
    with tarfile.open(sdist) as tar:
        tar.extractall(BUILD, filter="data")
    src = BUILD / "src"
    if src.exists():
        import shutil
        shutil.rmtree(src)
    (BUILD / f"PyMahjongGB-{VERSION}").rename(src)
    for rel, old, new in PATCHES:
        path = src / rel
        text = path.read_text(encoding="utf-8-sig")
        if old not in text:
            raise RuntimeError(f"{rel}: switch {old!r} not found; the reference source changed")
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    r = run(sys.executable, "setup.py", "build_ext", "--inplace", cwd=src)
    if r.returncode:
        raise RuntimeError(f"compiling the 1998 reference failed:\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    done.touch()
    return src


_CHILD = r"""
import json, sys
src, tests, root, n, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
sys.path.insert(0, src)
import MahjongGB
assert MahjongGB.__file__.startswith(src), MahjongGB.__file__
sys.path[1:1] = [root, tests]
from hand_generator import generate
from oracle import reference_result
from scoring import score_hand
out = []
for s in generate(n, seed=seed, self_check=False):
    ref, ref_total = reference_result(s)
    r = score_hand(s.to_notation(), **s.score_kwargs(), rules="mcr-1998")
    ours = r.fan_counts()
    if ours != ref or r.total != ref_total:
        out.append({"hand": s.to_notation(), "flags": s.flags_text(),
                    "ours": {str(k): v for k, v in ours.items()}, "ours_total": r.total,
                    "ref": {str(k): v for k, v in ref.items()}, "ref_total": ref_total})
print(json.dumps({"n": n, "mismatches": out}))
"""


def compare(n: int, seed: int) -> dict:
    """Score ``n`` generated hands with ``rules="mcr-1998"`` and with the 1998 build.

    Returns:
        ``{"n": n, "mismatches": [{"hand", "flags", "ours", "ours_total", "ref", "ref_total"}]}``.
    """
    src = build()
    env = dict(os.environ, PYTHONPATH="")
    r = subprocess.run([sys.executable, "-c", _CHILD, str(src), str(Path(__file__).parent), str(ROOT), str(n),
                        str(seed)], capture_output=True, text=True, env=env)
    if r.returncode:
        raise RuntimeError(f"comparison child failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout)
