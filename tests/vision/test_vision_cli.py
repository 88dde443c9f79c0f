"""The ``recognize`` and ``score-photo`` command handlers: output, exit codes, one-line errors."""

from __future__ import annotations

import argparse
import io
import json

import cv2
import numpy as np
import pytest

from app import vision_cli


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


@pytest.mark.parametrize("where, says", [
    ("no/such/dir.png", "the folder"),
    ("out.xyz", "use a file name ending in a suffix"),
    ("out", "use a file name ending in a suffix"),
    (".", "use a file name ending in a suffix"),
    ("", "use a file name ending in a suffix"),
    ("a" * 300 + ".png", "too long"),
])
def test_annotate_to_an_unwritable_place(tmp_path, scene_file, where, says):
    # refused before the photo is read (no work lost), with its own code
    code, out, err = run(["recognize", str(scene_file), "--annotate", str(tmp_path / where) if where else ""])
    assert code == 1 and err.startswith("mjtable: unwritable-output:") and says in err, err
    assert err.count("\n") == 1 and out == ""


def test_recognize_json_and_annotation(tmp_path, scene_file):
    ann = tmp_path / "out.png"
    code, out, err = run(["recognize", str(scene_file), "--json", "--annotate", str(ann)])
    data = json.loads(out)
    assert set(data) >= {"tiles", "hand", "uncertain"}
    assert len(data["tiles"]) == 14
    t = data["tiles"][0]
    assert set(t) == {"tile", "box", "confidence", "sideways"}
    assert len(t["box"]) == 4 and all(isinstance(v, int) for v in t["box"]) and 0 <= t["confidence"] <= 1
    assert cv2.imread(str(ann)) is not None
    if data["hand"] is not None:
        assert code == 0 and err == ""
    else:
        assert code == 1 and err.startswith("mjtable: layout:")


def _fake_recognition(monkeypatch, tiles):
    """Make the handlers see ``tiles`` (DetectedTile list) as what the picture shows."""
    from vision import pipeline
    from vision.assemble import assemble

    class Stub:
        def recognize(self, image):
            return pipeline.Recognition(tuple(tiles), assemble(tiles), 0.01)

    monkeypatch.setattr(pipeline, "_DEFAULT", Stub())


def _laid(*rows, confidence=0.99):
    from vision.synth import compose_scene
    from vision_scenes import as_detected, parse_row

    faces = {n: [np.full((80, 60, 3), 230, np.uint8)] for n in
             [f"{r}{s}" for s in "mps" for r in range(1, 10)] + list("ESWNCFP") + [f"{i}f" for i in range(1, 9)]}
    _, placed = compose_scene([parse_row(r) for r in rows], faces, np.random.default_rng(0))
    return as_detected(placed, confidence)


def test_score_photo_scores_the_recognised_hand(monkeypatch, scene_file):
    _fake_recognition(monkeypatch, _laid("3f", "1m 2m 3m 4m 5m 6m 7m 8m 9m E E E N | N"))
    code, out, err = run(["score-photo", str(scene_file), "--self-drawn", "--json"])
    assert code == 0, err
    data = json.loads(out)
    assert data["recognition"]["hand"] == "123456789mEEEN" + "N"
    assert data["score"]["total"] >= 16 + 1  # Pure Straight 16 + flower
    assert "Pure Straight" in {f["name_en"] for f in data["score"]["fans"]}
    code, out, _ = run(["score-photo", str(scene_file), "--self-drawn", "--flowers", "0"])
    assert code == 0 and "Pure Straight" in out and "0 from flowers" in out


def test_score_photo_refuses_uncertain_tiles_unless_asked(monkeypatch, scene_file):
    tiles = _laid("1m 2m 3m 4m 5m 6m 7m 8m 9m E E E N | N")
    tiles[3] = tiles[3].__class__(tiles[3].tile, tiles[3].box, 0.42, False)
    _fake_recognition(monkeypatch, tiles)
    code, out, err = run(["score-photo", str(scene_file)])
    assert code == 1 and err.startswith("mjtable: uncertain:") and "4m (0.42)" in err and err.count("\n") == 1
    assert "Please confirm" in out
    code, out, err = run(["score-photo", str(scene_file), "--accept-uncertain"])
    assert code == 0 and "Please confirm" in out


def test_a_hand_that_does_not_add_up(monkeypatch, scene_file):
    _fake_recognition(monkeypatch, _laid("1m 2m 3m 4m 5m 6m 7m 8m 9m E E E N N"))
    for command in ("recognize", "score-photo"):
        code, out, err = run([command, str(scene_file)])
        assert code == 1 and err.startswith("mjtable: layout:") and "单放" in err and err.count("\n") == 1


def test_a_hand_that_is_no_win(monkeypatch, scene_file):
    _fake_recognition(monkeypatch, _laid("1m 2m 3m 4m 5m 6m 7m 8m 9m E S W N | P"))
    code, out, err = run(["score-photo", str(scene_file)])
    assert code == 1 and err.startswith("mjtable: not-winning:") and err.count("\n") == 1
    # with --json, stdout is still one JSON object: what was read, no score, the reason
    code, out, err = run(["score-photo", str(scene_file), "--json"])
    doc = json.loads(out)
    assert code == 1 and doc["score"] is None and doc["error"].startswith("not-winning:")
    assert doc["recognition"]["hand"] == "123456789mESWN" + "P" and err.startswith("mjtable: not-winning:")
    # the words of the use-case POST /api/score/photo answers with too (tests/service/test_score_use_cases.py)
    from controller.table_scoring import score_photo
    assert err == f"mjtable: {score_photo(lambda: doc['recognition'], {}, name=str(scene_file)).problem}\n"


def test_score_photo_of_several_frames_votes(tmp_path, scene_file):
    from vision.synth import frame_of
    img, rng = cv2.imread(str(scene_file)), np.random.default_rng(5)
    paths = []
    for i in range(3):
        p = tmp_path / f"frame{i}.png"
        cv2.imwrite(str(p), frame_of(img, [], rng, glare=0, shadow=0)[0])
        paths.append(str(p))
    code, out, err = run(["score-photo", *paths, "--json", "--self-drawn", "--annotate", str(tmp_path / "a.png")])
    assert code == 0, err
    rec = json.loads(out)["recognition"]
    assert rec["frames"] == 3 and rec["hand"] == "123m456p789sEEEN" + "N"
    assert all(sum(t["votes"].values()) <= 3 for t in rec["tiles"]) and (tmp_path / "a.png").is_file()
    code, out, err = run(["score-photo", *paths, "--self-drawn"])
    assert code == 0 and "tiles found in 3 frames" in out, err


@pytest.mark.parametrize("count", [2, 6])
def test_score_photo_refuses_two_or_six_frames(scene_file, count):
    code, out, err = run(["score-photo", *[str(scene_file)] * count])
    assert code == 1 and out == "" and err.count("\n") == 1
    assert f"give one photo, or 3 to 5 frames of the same hand, not {count} files" in err


def test_camera_calibrate_stores_the_view_and_score_photo_reads_in_it(tmp_path, monkeypatch):
    from vision_scenes import camera, laid_hand_strip, top_view

    from controller import settings as ST
    monkeypatch.setenv("MJTABLE_STATE_DIR", str(tmp_path / "state"))
    rng, strip = np.random.default_rng(4), laid_hand_strip()
    files = {}
    for name, top in (("empty", top_view(rng)), ("hand", top_view(rng, strip, "E")), ("right", top_view(rng, strip, "S"))):
        files[name] = tmp_path / f"{name}.png"
        cv2.imwrite(str(files[name]), camera(top))
    code, out, err = run(["score-photo", str(files["right"]), "--table-camera"])
    assert code == 1 and "not calibrated: run mjtable camera calibrate" in err and err.count("\n") == 1
    code, out, err = run(["camera", "calibrate", "--empty", str(files["empty"]), "--hand", str(files["hand"])])
    assert code == 0, err
    assert "laid out at seat E" in out and "bottom E, right S, top W, left N" in out
    assert ST.load().camera is not None and ST.load().camera["bottom_seat"] == "E"
    code, out, err = run(["score-photo", str(files["right"]), "--table-camera", "--json", "--self-drawn"])
    assert code == 0, err
    rec = json.loads(out)["recognition"]
    assert rec["seat"] == "S" and rec["hand"] == "123m456p789sEEEN" + "N"


def test_camera_calibrate_without_a_play_area_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("MJTABLE_STATE_DIR", str(tmp_path / "state"))
    p = tmp_path / "noise.png"
    cv2.imwrite(str(p), np.random.default_rng(0).integers(0, 256, (480, 640, 3), dtype=np.uint8))
    code, out, err = run(["camera", "calibrate", "--empty", str(p), "--hand", str(p)])
    assert code == 1 and out == "" and err.startswith("mjtable: calibration: no play area found") and err.count("\n") == 1
    assert not (tmp_path / "state" / "settings.json").exists()


def test_camera_calibrate_with_the_live_camera(tmp_path, monkeypatch):
    """``--camera usb``: the empty table, then (after Enter) the hand, taken at the service's frame size."""
    from fake_camera import FakeCapture
    from vision_scenes import camera, laid_hand_strip, top_view

    from controller import settings as ST
    from service.scorer import CAMERA_SIZE
    monkeypatch.setenv("MJTABLE_STATE_DIR", str(tmp_path / "state"))
    rng = np.random.default_rng(8)
    shots = [camera(top_view(rng), CAMERA_SIZE), camera(top_view(rng, laid_hand_strip(), "E"), CAMERA_SIZE)]

    class TableCamera(FakeCapture):
        def read(self):
            assert (self.props[cv2.CAP_PROP_FRAME_WIDTH], self.props[cv2.CAP_PROP_FRAME_HEIGHT]) == CAMERA_SIZE
            return True, shots.pop(0)
    monkeypatch.setattr(cv2, "VideoCapture", TableCamera)
    p = argparse.ArgumentParser(prog="mjtable")
    vision_cli.add_parsers(p.add_subparsers(dest="command"))
    asked, out, err = [], io.StringIO(), io.StringIO()
    code = vision_cli.cmd_camera(p.parse_args(["camera", "calibrate", "--camera", "usb", "--json"]), out, err,
                                 ask=lambda prompt: asked.append(len(shots)) or "")
    assert code == 0, err.getvalue()
    assert asked == [2, 1] and not shots  # Enter before each picture
    got = json.loads(out.getvalue())
    assert "press Enter" in err.getvalue()
    assert got["seat"] == "E" and got["camera"]["picture"] == list(CAMERA_SIZE) and ST.load().camera == got["camera"]
    code, out, err = run(["camera", "calibrate", "--camera", "usb", "--empty", "x.png"])
    assert code == 1 and "not both" in err and err.count("\n") == 1
    code, out, err = run(["camera", "calibrate", "--hand", "x.png"])
    assert code == 1 and "give --empty EMPTY.jpg and --hand HAND.jpg, or --camera" in err
