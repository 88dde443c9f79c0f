"""The ``recognize`` and ``score-photo`` command handlers: output, exit codes, one-line errors."""

from __future__ import annotations

import argparse
import io
import json

import cv2
import numpy as np
import pytest

from app import vision_cli


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    """Each test reads and writes its own settings (the stored ``confirm-below`` among them)."""
    monkeypatch.setenv("MJTABLE_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


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
    """Make the handlers see ``tiles`` (DetectedTile list) as what the picture shows: the models are
    left out, the rest of ``Recognizer.recognize`` (the assembly, the flag threshold) is the pipeline's own."""
    from vision import pipeline
    from vision_scenes import model_free_recognizer

    monkeypatch.setattr(pipeline, "_DEFAULT", model_free_recognizer(tiles))


def _laid(*rows, confidence=0.99):
    from vision_scenes import laid_tiles

    return laid_tiles(*rows, confidence=confidence)


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
    assert code == 1 and err.startswith("mjtable: uncertain:") and "4m (0.420)" in err and err.count("\n") == 1
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


# ---- score-photo --rules X (issue #20): the system's hand size, tile set, flowers and options ----

def test_score_photo_by_taiwan_reads_17_tiles_with_the_flowers_in_the_hand(monkeypatch, scene_file):
    _fake_recognition(monkeypatch, _laid("1f 5f", "1m 2m 3m 4m 5m 6m 7m 8m 9m 2p 3p 4p 5s 5s 5s 8s | 8s"))
    code, out, err = run(["score-photo", str(scene_file), "--rules", "taiwan", "--self-drawn", "--json"])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["recognition"]["hand"] == "1f5f123456789m234p5558s8s"
    from scoring import systems
    want = systems.score("taiwan", "1f5f123456789m234p5558s8s", {"self_drawn": True})
    assert doc["score"] == want.to_dict() and doc["score"]["rules"] == "taiwan"
    assert {e["key"] for e in doc["score"]["elements"]} >= {"seat_flower", "concealed_self_drawn"}
    # the text output is the rule system's breakdown, with the taiwan options of `mjtable score --rules taiwan`
    code, out, err = run(["score-photo", str(scene_file), "--rules", "taiwan", "--base", "50", "--per-tai", "10",
                          "--discarder", "W"])
    assert code == 0, err
    want = systems.score("taiwan", "1f5f123456789m234p5558s8s", {"base": 50, "per_tai": 10, "discarder": "W"})
    assert "rules: taiwan (台灣十六張麻將" in out and f"Total  {want.total} tai" in out
    assert "Payments (+ receives): " + "  ".join(f"{k} {v:+d}" for k, v in want.payments.items()) in out


def test_score_photo_refuses_a_tile_outside_the_system_and_an_option_of_another(monkeypatch, scene_file):
    _fake_recognition(monkeypatch, _laid("1m 2m 3m 4m 5m 6m 7m 8m 9m E E E N | N"))
    code, out, err = run(["score-photo", str(scene_file), "--rules", "changsha"])
    assert code == 1 and err.count("\n") == 1
    assert err.startswith(f"mjtable: tile-not-in-set: {scene_file} shows E (an honour), N (an honour): changsha "
                          "plays 108: suits only")
    # an option of another system: refused before the photo is read, with the system that takes it
    from vision import pipeline
    monkeypatch.setattr(pipeline, "_DEFAULT", None)
    monkeypatch.setattr(pipeline, "Recognizer", lambda: pytest.fail("the photo was read"))
    code, out, err = run(["score-photo", str(scene_file), "--rules", "changsha", "--riichi"])
    assert code == 1 and err.startswith("mjtable: unknown-option: option 'riichi' is not one of changsha's (it belongs "
                                        "to riichi)") and err.count("\n") == 1
    code, out, err = run(["score-photo", str(scene_file), "--rules", "taiwan", "--flowers", "2"])
    assert code == 1 and "option 'flowers' is not one of taiwan's (it belongs to mcr" in err
    code, out, err = run(["score-photo", str(scene_file), "--birds", "5m"])  # MCR: its win options only
    assert code == 1 and err.startswith("mjtable: unknown-option: option 'birds' is not one of mcr's (it belongs to "
                                        "changsha)") and err.count("\n") == 1


def test_score_photo_by_changsha_with_birds_and_by_riichi_with_dora(monkeypatch, scene_file):
    from scoring import systems
    _fake_recognition(monkeypatch, _laid("1m 1m 1m 2p 3p 4p 5s 6s 7s 8s 8s 8s 2m | 2m"))
    code, out, err = run(["score-photo", str(scene_file), "--rules", "changsha", "--self-drawn", "--birds", "1m5p",
                          "--json"])
    assert code == 0, err
    want = systems.score("changsha", "1112m234p567888s2m", {"self_drawn": True, "birds": "1m5p"})
    assert json.loads(out)["score"] == want.to_dict()
    _fake_recognition(monkeypatch, _laid("1m 2m 3m 4p 5p 6p 7s 8s 9s 2s 2s 2s 5m | 5m"))
    code, out, err = run(["score-photo", str(scene_file), "--rules", "riichi", "--riichi", "--dora", "4m", "--json"])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["score"] == systems.score("riichi", "1235m456p222789s5m", {"riichi": True, "dora": "4m"}).to_dict()
    assert any("red fives are read as plain fives" in n for n in doc["recognition"]["notes"])


def test_score_photo_by_fuzhou_counts_the_honours_laid_out_as_flowers(monkeypatch, scene_file):
    from scoring import systems
    _fake_recognition(monkeypatch, _laid("E C 2f", "1m 2m 3m 4p 5p 6p 7s 8s 9s 2s 2s 2s 5m | 5m"))
    code, out, err = run(["score-photo", str(scene_file), "--rules", "fuzhou", "--gold", "9p", "--self-drawn",
                          "--json"])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["recognition"]["hand"] == "2fCE1235m456p222789s5m"
    assert doc["score"] == systems.score("fuzhou", "2fCE1235m456p222789s5m",
                                         {"gold": "9p", "self_drawn": True}).to_dict()


def test_recognize_assembles_for_the_rules_given(monkeypatch, scene_file):
    _fake_recognition(monkeypatch, _laid("1f 5f", "1m 2m 3m 4m 5m 6m 7m 8m 9m 2p 3p 4p 5s 5s 5s 8s | 8s"))
    code, out, err = run(["recognize", str(scene_file), "--rules", "taiwan", "--json"])
    assert code == 0 and json.loads(out)["hand"] == "1f5f123456789m234p5558s8s"
    code, out, err = run(["recognize", str(scene_file)])  # MCR: 17 tiles are too many
    assert code == 1 and err.startswith("mjtable: layout:")


def test_a_taiwan_photo_end_to_end_with_the_models(tmp_path):
    """A synthetic scene of real tile crops (tests/vision/vision_scenes.py), read by the committed models."""
    import cv2

    from vision.synth import compose_scene
    from vision_scenes import parse_row, real_faces

    img, _ = compose_scene([parse_row(r) for r in ("1f 5f", "1m 2m 3m 4m 5m 6m 7m 8m 9m 2p 3p 4p 5s 5s 5s 8s | 8s")],
                           real_faces(), np.random.default_rng(0), size=(600, 800))
    photo = tmp_path / "taiwan.png"
    cv2.imwrite(str(photo), img)
    code, out, err = run(["score-photo", str(photo), "--rules", "taiwan", "--self-drawn", "--seat-wind", "S",
                          "--json"])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["recognition"]["hand"] == "1f5f123456789m234p5558s8s" and doc["recognition"]["flowers"] == ["1f", "5f"]
    from scoring import systems
    assert doc["score"] == systems.score("taiwan", doc["recognition"]["hand"],
                                         {"self_drawn": True, "seat_wind": "S"}).to_dict()


@pytest.mark.parametrize("rules, rows, hand, flags, opts", [
    ("classic", ("1m 2m 3m 4m 5m 6m 7m 8m 9m 1m 2m 3m 5m | 5m",), "1122334556789m5m", ["--self-drawn"],
     {"self_drawn": True}),
    ("northern", ("1m 1m 1m 3p 3p 3p 5s 5s 5s 7s 7s 7s 9m | 9m",), "1119m333p555777s9m",
     ["--self-drawn", "--floors", "1"], {"self_drawn": True, "floors": 1}),
    ("taiwan", ("3f", "1m 2m 3m 4m 5m 6m 7m 8m 9m 2p 3p 4p 5s 5s 5s 8s | 8s"), "3f123456789m234p5558s8s",
     ["--seat-wind", "W", "--discarder", "N", "--dealer-streak", "2"],
     {"seat_wind": "W", "discarder": "N", "dealer_streak": 2}),
])
def test_score_photo_by_each_system_matches_score_rules(monkeypatch, scene_file, rules, rows, hand, flags, opts):
    """score-photo --rules X gives what `mjtable score --rules X` gives for the hand read, with the same options."""
    from scoring import systems
    _fake_recognition(monkeypatch, _laid(*rows))
    code, out, err = run(["score-photo", str(scene_file), "--rules", rules, *flags, "--json"])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["recognition"]["hand"] == hand
    assert doc["score"] == systems.score(rules, hand, opts).to_dict()


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


def test_unread_areas_are_named_in_the_text_output_and_the_json(monkeypatch, scene_file):
    # issue 21: where the detector responds as to tiles but none was read (a gap of kind
    # "unread"), both commands say so with the area's box; the hand is still scored
    import dataclasses

    from vision import pipeline
    from vision.assemble import Gap, assemble
    tiles = _laid("1m 2m 3m 4m 5m 6m 7m 8m 9m E E E N | N")

    class Stub:
        def recognize(self, image, rules="mcr", min_confidence=None):
            a = assemble(tiles, rules=rules)
            return pipeline.Recognition(tuple(tiles), dataclasses.replace(
                a, gaps=a.gaps + (Gap((10.0, 20.0, 200.5, 120.0), "unread"),)), 0.01)

    monkeypatch.setattr(pipeline, "_DEFAULT", Stub())
    for command in ("recognize", "score-photo"):
        code, out, err = run([command, str(scene_file)])
        assert code == 0, err
        assert "Tiles here were not read (check the photo): [10, 20, 200, 120]" in out
    code, out, _ = run(["recognize", str(scene_file), "--json"])
    assert json.loads(out)["gaps"] == [{"box": [10, 20, 200, 120], "kind": "unread"}]
    _fake_recognition(monkeypatch, tiles)  # no such area: no such line
    assert "not read" not in run(["recognize", str(scene_file)])[1]


# ---- the flag threshold: --confirm-below, else the table's confirm-below setting (issue 21) ----

def _flagged(out: str) -> list[str]:
    return [t["tile"] for t in json.loads(out)["uncertain"]]


def test_the_flag_threshold_is_the_stored_setting_unless_given(monkeypatch, scene_file):
    from vision_scenes import unsure_hand

    from controller import settings as ST
    _fake_recognition(monkeypatch, unsure_hand())
    # the default, 0.6: 4m read at 0.65 is not asked about, the hand scores
    code, out, err = run(["recognize", str(scene_file), "--json"])
    assert code == 0 and _flagged(out) == []
    code, out, err = run(["score-photo", str(scene_file)])
    assert code == 0 and "Please confirm" not in out, err
    # the table asks for more: 4m (0.65) is listed, 7m (0.9) is not; score-photo refuses it
    ST.save(ST.validate("confirm-below", "0.75", ST.load()))
    code, out, err = run(["recognize", str(scene_file), "--json"])
    assert code == 0 and _flagged(out) == ["4m"]
    code, out, err = run(["recognize", str(scene_file)])
    assert "Please confirm (not read surely: a confidence below 0.75," in out and "4m (0.650)" in out
    assert "7m (0.9" not in out
    code, out, err = run(["score-photo", str(scene_file)])
    assert code == 1 and err.startswith("mjtable: uncertain:") and "4m (0.650)" in err and err.count("\n") == 1
    # the option wins over the setting, both ways
    code, out, err = run(["score-photo", str(scene_file), "--confirm-below", "0.6", "--json"])
    assert code == 0 and json.loads(out)["recognition"]["uncertain"] == []
    ST.save(ST.validate("confirm-below", "0.6", ST.load()))
    code, out, err = run(["recognize", str(scene_file), "--confirm-below", "0.95", "--json"])
    assert code == 0 and _flagged(out) == ["4m", "7m"]
    code, out, err = run(["recognize", str(scene_file), "--confirm-below", " 0.75 ", "--json"])  # as config set takes it
    assert code == 0 and _flagged(out) == ["4m"]


@pytest.mark.parametrize("command", ["recognize", "score-photo"])
@pytest.mark.parametrize("value", ["0.3", "0.99", "1", "high", "nan", "-0.7", "+0.7", "٠.٧"])
def test_confirm_below_outside_its_range_is_misuse(command, value, capsys):
    # argparse's exit 2 with one line naming the option and the range, before any photo is read
    with pytest.raises(SystemExit) as e:
        run([command, "x.jpg", "--confirm-below", value])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "argument --confirm-below" in err and "give a confidence from 0.5 to 0.95" in err, err


def test_a_broken_stored_threshold_is_one_line(monkeypatch, scene_file, state_dir):
    from vision_scenes import unsure_hand
    _fake_recognition(monkeypatch, unsure_hand())
    state_dir.mkdir()
    (state_dir / "settings.json").write_text('{"confirm_below": 2}')
    for command in ("recognize", "score-photo"):
        code, out, err = run([command, str(scene_file)])
        assert code == 1 and out == "" and err.count("\n") == 1
        assert "confirm-below '2' is not allowed" in err and "0.5 to 0.95" in err and "mjtable config set confirm-below" in err
    # the option alone does not need the file
    code, out, err = run(["recognize", str(scene_file), "--confirm-below", "0.7", "--json"])
    assert code == 0 and _flagged(out) == ["4m"]
