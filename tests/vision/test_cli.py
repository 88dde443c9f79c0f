"""The ``recognize`` and ``score-photo`` command handlers: output, exit codes, one-line errors."""

from __future__ import annotations

import argparse
import io
import json

import cv2
import numpy as np
import pytest

from controller import vision_cli


def run(argv: list[str]) -> tuple[int, str, str]:
    p = argparse.ArgumentParser(prog="mjtable")
    vision_cli.add_parsers(p.add_subparsers(dest="command"))
    args = p.parse_args(argv)
    out, err = io.StringIO(), io.StringIO()
    code = vision_cli.HANDLERS[args.command](args, out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("command", ["recognize", "score-photo"])
@pytest.mark.parametrize("content, message", [(None, "no such file"), (b"", "empty"), (b"GIF89a garbage", "decode")])
def test_bad_files_give_one_line_and_exit_1(tmp_path, command, content, message):
    p = tmp_path / "hand.jpg"
    if content is not None:
        p.write_bytes(content)
    code, out, err = run([command, str(p)])
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("mjtable: unreadable-image:") and message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["recognize", "score-photo"])
def test_a_picture_without_tiles(tmp_path, command):
    p = tmp_path / "felt.png"
    rng = np.random.default_rng(0)
    felt = np.clip(np.array([60, 130, 50]) + rng.normal(0, 6, (480, 640, 3)), 0, 255).astype(np.uint8)
    cv2.imwrite(str(p), felt)
    code, out, err = run([command, str(p)])
    assert code == 1
    assert err.startswith("mjtable: no-tiles:") and err.count("\n") == 1


def test_parser_rejects_bad_options():
    with pytest.raises(SystemExit):
        run(["score-photo", "x.jpg", "--seat-wind", "Q"])
    with pytest.raises(SystemExit):
        run(["score-photo", "x.jpg", "--flowers", "9"])


def test_annotate_to_an_unwritable_place(tmp_path, scene_file):
    code, out, err = run(["recognize", str(scene_file), "--annotate", str(tmp_path / "no" / "such" / "dir.png")])
    assert code == 1 and "cannot write the annotated picture" in err and err.count("\n") == 1
