"""The table camera's calibration through the service (issue 21): ``POST /api/camera/calibrate``
runs the use-case of ``mjtable camera calibrate`` (``controller.camera_setup``) on two uploaded
pictures, or on pictures the table's camera took (``POST /api/camera/picture``), stores it in the
settings and answers the drawn view; failures are one clear message in both languages and store
nothing. Pictures: the synthetic table of ``tests/vision/vision_scenes.py``."""

from __future__ import annotations

import sys

import cv2
import numpy as np
import pytest

from controller import settings as ST
from service_support import AUTH, ROOT, make_client

sys.path.insert(0, str(ROOT / "tests" / "vision"))
from vision_scenes import camera, laid_hand_strip, top_view  # noqa: E402


def png(img: np.ndarray) -> bytes:
    return cv2.imencode(".png", img)[1].tobytes()


@pytest.fixture(scope="module")
def scene() -> dict[str, bytes]:
    """The empty table, a hand laid out at E (the camera's bottom side) and one at S, as PNG."""
    rng, strip = np.random.default_rng(3), laid_hand_strip()
    return {"empty": png(camera(top_view(rng))), "hand": png(camera(top_view(rng, strip, "E"))),
            "right": png(camera(top_view(rng, strip, "S")))}


def test_calibrate_from_uploads_stores_the_view_and_the_capture_then_reads_the_seat(api, scene) -> None:
    c, _, log = api
    assert c.get("/api/camera").json() == {"available": False, "calibration": None}
    files = {"empty": ("empty.png", scene["empty"], "image/png"), "hand": ("hand.png", scene["hand"], "image/png")}
    r = c.post("/api/camera/calibrate", files=files)
    assert r.status_code == 401 and ST.load().camera is None
    r = c.post("/api/camera/calibrate", headers=AUTH, files=files, data={"bottom_seat": "E"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["seat"] == "E" and body["camera"] == ST.load().camera and body["camera"]["bottom_seat"] == "E"
    side = body["camera"]["side"]
    assert set(body["zones"]) == set("ESWN") and body["zones"]["E"][3] == pytest.approx(side, abs=0.1)
    assert 0 < body["zones"]["E"][1] < side  # a strip some tile heights deep, not the whole view
    view = cv2.imdecode(np.frombuffer(c.get(body["view"]).content, np.uint8), cv2.IMREAD_COLOR)
    assert view.shape[:2] == (side, side)
    assert c.get("/api/camera").json()["calibration"] == body["camera"]
    assert log.events("settings", 1)[0]["data"]["changes"] == {"camera": "calibrated"}
    # the capture now reads in that view and says whose hand it is
    frames = [("frames", (f"f{i}.png", scene["right"], "image/png")) for i in range(3)]
    r = c.post("/api/score/capture", headers=AUTH, files=frames, data={"options": '{"self_drawn": true}'})
    assert r.status_code == 200, r.text
    assert r.json()["recognition"]["seat"] == "S" and r.json()["recognition"]["hand"] == "123m456p789sEEEN" + "N"


def test_the_camera_takes_the_pictures(tmp_path, scene) -> None:
    """``--camera-image`` stands in for the camera: it shows the hand laid out at S."""
    shot = tmp_path / "camera.png"
    shot.write_bytes(scene["right"])
    c, _, log = make_client(tmp_path / "svc", camera_image=shot)
    with c:
        assert c.get("/api/camera").json()["available"] is True
        assert c.post("/api/camera/picture").status_code == 401
        r = c.post("/api/camera/picture", headers=AUTH)
        assert r.status_code == 200, r.text
        taken = r.json()
        assert taken["size"] == [1280, 720]
        preview = cv2.imdecode(np.frombuffer(c.get(taken["preview"]).content, np.uint8), cv2.IMREAD_COLOR)
        assert max(preview.shape[:2]) == 800
        r = c.post("/api/camera/calibrate", headers=AUTH, files={"empty": ("e.png", scene["empty"], "image/png")},
                   data={"hand": taken["picture"], "bottom_seat": "W"})
        assert r.status_code == 200, r.text
        # the camera's bottom side named W: the right side is N (counter-clockwise W, N, E, S)
        assert r.json()["seat"] == "N" and ST.load().camera["bottom_seat"] == "W"
        r = c.post("/api/camera/calibrate", headers=AUTH, files={"empty": ("e.png", scene["empty"], "image/png")},
                   data={"hand": "no-such-key"})
        assert r.status_code == 404 and "take it again" in r.json()["error"]["message"]
    log.close()


@pytest.mark.parametrize("case, status, says", [
    ("no felt", 422, "no play area found"), ("no tile", 422, "no tile found in the hand picture"),
    ("sizes", 422, "same camera at the same size"), ("no hand", 422, "hand: send the picture"),
    ("seat", 422, "bottom_seat 'X': allowed are E, S, W, N"), ("not a picture", 415, "hand.png is not an image"),
    ("json", 422, "send multipart/form-data")])
def test_a_failed_calibration_is_one_clear_message_and_stores_nothing(api, scene, case, status, says) -> None:
    c, _, log = api
    files = {"empty": ("empty.png", scene["empty"], "image/png"), "hand": ("hand.png", scene["hand"], "image/png")}
    data = {}
    if case == "no felt":
        files["empty"] = ("empty.png", png(cv2.resize(np.random.default_rng(0).integers(0, 256, (72, 128, 3), np.uint8),
                                                      (1280, 720), interpolation=cv2.INTER_NEAREST)), "image/png")
    elif case == "no tile":
        files["hand"] = ("hand.png", scene["empty"], "image/png")
    elif case == "sizes":
        files["hand"] = ("hand.png", png(np.full((480, 640, 3), 128, np.uint8)), "image/png")
    elif case == "no hand":
        del files["hand"]
    elif case == "seat":
        data = {"bottom_seat": "X"}
    elif case == "not a picture":
        files["hand"] = ("hand.png", b"not a picture", "image/png")
    r = c.post("/api/camera/calibrate", headers=AUTH, json={"empty": "x"}) if case == "json" else \
        c.post("/api/camera/calibrate", headers=AUTH, files=files, data=data)
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert says in err["message"] and "\n" not in err["message"]
    if status == 422 and case in ("no felt", "no tile", "sizes"):
        assert err["code"] == "calibration" and err["message_zh"], err  # the page shows it in Chinese
    assert ST.load().camera is None and log.count("settings") == 0
