"""Every endpoint of the API on the simulated machine, with every refusal: no token, wrong token,
bad values (422), wrong state (409), bad uploads (413/415), and what a refusal leaves unchanged."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from service_support import AUTH, TOKEN, make_client, wait_state

WRITES = [("post", "/api/cycle", None), ("post", "/api/lift", {"direction": "up"}), ("post", "/api/refill", None),
          ("post", "/api/stop", None), ("post", "/api/dice", {}), ("put", "/api/settings", {"tile_count": 144}),
          ("post", "/api/faults/clear", None), ("post", "/api/sim/fault", {"fault": "disc-stall"}),
          ("delete", "/api/sim/fault?fault=all", None),
          ("post", "/api/selftest", None), ("post", "/api/score", {"hand": "123m456m789m234p5s5s"}),
          ("post", "/api/score/capture", {}), ("post", "/api/match/new", {}), ("post", "/api/match/draw", {}),
          ("post", "/api/match/hand", {"hand": "123m456m789m234p5s5s", "winner": "E"}), ("post", "/api/match/undo", None),
          ("put", "/api/match/hands/1", {"draw": True}), ("delete", "/api/match/hands/1", None),
          ("post", "/api/match/photo", {"photo": "x", "winner": "E"}), ("get", "/api/auth", None)]


@pytest.mark.parametrize("method,path,body", WRITES)
def test_every_write_needs_the_right_token_and_changes_nothing_without_it(api, method, path, body) -> None:
    c, control, log = api
    before = (c.get("/api/status").json(), len(log.events(limit=1000)))
    for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789"}, {"Authorization": f"Basic {TOKEN}"},
                    {"Authorization": TOKEN}):
        r = getattr(c, method)(path, headers=headers, **({"json": body} if body is not None else {}))
        assert r.status_code == 401, (path, headers, r.text)
        assert r.json()["error"]["code"] == "unauthorized" and "Bearer" in r.headers["www-authenticate"]
    after = (c.get("/api/status").json(), len(log.events(limit=1000)))
    assert after[0]["state"] == before[0]["state"] == "idle" and after[1] == before[1]
    assert not control.backend.model.running() and not control.backend.model.faults


def test_photo_upload_needs_the_token(api, hand_photo) -> None:
    c, _, log = api
    r = c.post("/api/score/photo", files={"photo": ("h.png", hand_photo.read_bytes(), "image/png")})
    assert r.status_code == 401 and log.count("score") == 0


def test_reading_needs_no_token_and_never_shows_it(api) -> None:
    c, _, _ = api
    for path in ("/api/status", "/api/faults", "/api/settings", "/api/match", "/api/match/csv", "/api/trends", "/api/log",
                 "/api/selftest", "/", "/static/app.js", "/static/style.css"):
        r = c.get(path)
        assert r.status_code == 200, path
        assert TOKEN not in r.text
    st = c.get("/api/status").json()
    assert st["state"] == "idle" and [w["side"] for w in st["walls"]] == ["E", "S", "W", "N"]
    assert st["tile_count"] == 136 and st["tiles_in_play"]["count"] == 136 and st["sim"] is True


def test_a_cycle_end_to_end_and_its_log(api) -> None:
    c, control, log = api
    r = c.post("/api/cycle", headers=AUTH)
    assert r.status_code == 200
    st = wait_state(c, ["walls-up"])
    assert [w["stacks"] for w in st["walls"]] == [17] * 4 and {w["lift"] for w in st["walls"]} == {"up"}
    assert st["dice"]["throws"][0]["dice"] == [3, 4] and st["cycles"] == 1
    cyc = log.events("cycle")
    assert len(cyc) == 1 and cyc[0]["data"]["stacks"] == {"E": 17, "S": 17, "W": 17, "N": 17}
    tr = c.get("/api/trends").json()
    assert tr["cycles"] == 1 and all(len(tr["lift_up_s"][s]["times"]) == 1 for s in "ESWN")
    assert tr["lift_up_s"]["E"]["times"][0] == pytest.approx(2.0, abs=0.1)
    assert c.get("/api/log", params={"kind": "operator"}).json()["events"][0]["data"]["action"] == "cycle"


def test_wrong_state_refusals(tmp_path) -> None:
    # a machine paced to real time: the cycle is still moving when the next requests come
    c, control, log = make_client(tmp_path, speed=1.0)
    with c:
        assert c.post("/api/faults/clear", headers=AUTH).status_code == 409
        assert c.post("/api/refill", headers=AUTH).status_code == 409
        assert c.post("/api/cycle", headers=AUTH).status_code == 200
        wait_state(c, ["shuffling", "building"])
        for path, body, words in (("/api/lift", {"direction": "up"}, "only when idle or with the walls up"),
                                  ("/api/cycle", None, "wait for the cycle to end"),
                                  ("/api/dice", {}, "the cycle throws the dice itself"),
                                  ("/api/selftest", None, "needs it at rest")):
            r = c.post(path, headers=AUTH, **({"json": body} if body is not None else {}))
            assert r.status_code == 409, path
            assert r.json()["error"]["code"] == "wrong-state" and words in r.json()["error"]["message"]
        # a tile-count change while moving is accepted for the next cycle
        r = c.put("/api/settings", headers=AUTH, json={"tile_count": 108})
        assert r.status_code == 200 and "next cycle" in r.json()["note"]
        assert c.get("/api/status").json()["pending_tile_count"] == 108
        # stop all: every motor stops, latched as E73 until cleared
        r = c.post("/api/stop", headers=AUTH)
        assert r.status_code == 200 and r.json()["state"] == "safe-stop" and r.json()["fault"]["code"] == "E73"
        assert not control.backend.model.running()
        assert "clear it first" in c.post("/api/cycle", headers=AUTH).json()["error"]["message"]
        assert c.post("/api/lift", headers=AUTH, json={"direction": "down"}).status_code == 409
        assert c.post("/api/faults/clear", headers=AUTH).status_code == 200
        assert [e["data"]["code"] for e in log.events("fault-cleared")] == ["E73"]
        assert c.post("/api/stop", headers=AUTH).status_code == 200
    assert not control.backend.model.running()
    log.close()


@pytest.mark.parametrize("method,path,body,field", [
    ("post", "/api/lift", {"direction": "sideways"}, "direction"),
    ("post", "/api/lift", {}, "direction"),
    ("post", "/api/lift", {"direction": "up", "speed": 2}, "speed"),
    ("post", "/api/dice", {"values": [0, 7, 3, 3]}, "values.0"),
    ("post", "/api/dice", {"values": [1, 2, 3]}, "4 dice values"),
    ("put", "/api/settings", {"tile_count": 140}, "allowed are 136, 144, 152, 108"),
    ("put", "/api/settings", {"tile_count": "many"}, "tile_count"),
    ("put", "/api/settings", {"dealer": "X"}, "dealer"),
    ("put", "/api/settings", {"dice_method": "three-throw"}, "dice_method"),
    ("put", "/api/settings", {}, "nothing to change"),
    ("post", "/api/sim/fault", {"fault": "gremlins"}, "unknown fault kind"),
    ("post", "/api/sim/fault", {"fault": "lift-short"}, "needs a side"),
    ("post", "/api/sim/fault", {"fault": "lift-short:W:reach=1.5"}, "reach must be 0.05..0.99, got 1.5"),
    ("post", "/api/sim/fault", {"fault": "lift-slow:N:speed=2"}, "its parameters: wear"),
    ("post", "/api/score", {"hand": "11111m234m567m888m"}, "fifth-tile"),
    ("post", "/api/score", {"hand": "123m456m789m234p5s5s", "flowers": 9}, "flowers"),
    ("post", "/api/score", {"hand": "123m456m789m234p5s5s", "seat_wind": "X"}, "seat_wind"),
    ("post", "/api/score", {"hand": "123m456m789m234p5s5s", "winner": "E"}, "winner"),  # recorded by /api/match
    ("post", "/api/score", {"hnad": "123m"}, "hand"),
])
def test_bad_values_get_a_clear_422_and_change_nothing(api, method, path, body, field) -> None:
    c, control, log = api
    n = len(log.events(limit=1000))
    r = getattr(c, method)(path, headers=AUTH, json=body)
    assert r.status_code == 422, r.text
    assert field in r.json()["error"]["message"]
    assert len(log.events(limit=1000)) == n and c.get("/api/status").json()["state"] == "idle"
    assert c.get("/api/settings").json()["tile_count"] == 136 and not control.backend.model.faults


def test_settings_change_when_idle_is_used_at_once_and_saved(api, state_dir) -> None:
    c, _, log = api
    r = c.put("/api/settings", headers=AUTH, json={"tile_count": 108, "dealer": "S"})
    assert r.status_code == 200 and r.json()["note"] is None
    st = c.get("/api/status").json()
    assert st["tile_count"] == 108 and [w["expected"] for w in st["walls"]] == [14, 13, 14, 13] and st["dealer"] == "S"
    assert json.loads((state_dir / "settings.json").read_text())["tile_count"] == 108
    assert log.events("settings")[0]["data"]["changes"] == {"tile_count": 108, "dealer": "S"}
    c.post("/api/cycle", headers=AUTH)
    assert [w["stacks"] for w in wait_state(c, ["walls-up"])["walls"]] == [14, 13, 14, 13]


def test_manual_lift_and_dice_when_idle(api) -> None:
    c, control, _ = api
    assert c.post("/api/lift", headers=AUTH, json={"direction": "up"}).status_code == 200
    st = wait_state(c, ["idle"])
    assert {w["lift"] for w in st["walls"]} == {"up"}
    assert all(p == 1.0 for p in control.backend.model.lift_pos)
    r = c.post("/api/dice", headers=AUTH, json={"values": [6, 6, 1, 1]})
    assert r.status_code == 200 and r.json()["source"] == "given" and r.json()["count"] == 6 + 6 + 1 + 1
    r = c.post("/api/dice", headers=AUTH, json={})
    assert r.status_code == 200 and r.json()["source"] == "electronic" and "text_zh" in r.json()
    assert c.get("/api/status").json()["dice"]["count"] == r.json()["count"]


def test_injected_fault_is_diagnosed_listed_and_cleared(api) -> None:
    c, control, log = api
    assert c.post("/api/sim/fault", headers=AUTH, json={"fault": "lift-short:W"}).json() == {"injected": "lift-short:W"}
    c.post("/api/cycle", headers=AUTH)
    st = wait_state(c, ["fault"])
    assert st["fault"]["code"] == "E21" and st["fault"]["side"] == "W"
    f = c.get("/api/faults").json()
    assert f["current"]["code"] == "E21" and f["current"]["causes"] and f["current"]["checks_zh"]
    assert f["recent"][0]["data"]["code"] == "E21" and len(f["catalogue"]) >= 20 and f["injectable"] is True
    assert not control.backend.model.running()
    assert c.post("/api/faults/clear", headers=AUTH).status_code == 200
    st = wait_state(c, ["idle"])  # re-homed; clearing never starts a cycle
    assert st["fault"] is None and st["cycles"] == 0
    c.post("/api/cycle", headers=AUTH)  # still injected: the next cycle shows it again
    assert wait_state(c, ["fault"])["fault"]["code"] == "E21"
    assert c.get("/api/trends").json()["faults_by_code"]["E21"] == 2


def test_two_faults_at_once_are_both_in_the_status_and_the_fault_event(api) -> None:
    c, control, log = api
    for spec in ("lift-short:E", "lift-short:W"):
        assert c.post("/api/sim/fault", headers=AUTH, json={"fault": spec}).status_code == 200
    c.post("/api/cycle", headers=AUTH)
    st = wait_state(c, ["fault"])
    assert (st["fault"]["code"], st["fault"]["side"]) == ("E21", "E")  # the first stopped the motion
    assert [(d["code"], d["side"]) for d in st["diagnoses"]] == [("E21", "E"), ("E21", "W")]
    event = log.events("fault", 1)[0]["data"]
    assert event["code"] == "E21" and [d["side"] for d in event["diagnoses"]] == ["E", "W"]
    assert st["state_zh"] == "故障"


def test_an_injected_fault_takes_parameters_and_is_repaired_again(api) -> None:
    c, control, log = api
    r = c.post("/api/sim/fault", headers=AUTH, json={"fault": "lift-short:w:reach=0.6"})
    assert r.json() == {"injected": "lift-short:W:reach=0.6"}
    got = c.get("/api/sim/fault").json()
    assert got["faults"] == ["lift-short:W:reach=0.6"]
    assert {p["name"]: p["default"] for k in got["kinds"] if k["kind"] == "lift-short" for p in k["params"]} == {"reach": 0.85}
    c.post("/api/cycle", headers=AUTH)
    st = wait_state(c, ["fault"])
    assert (st["fault"]["code"], st["fault"]["side"]) == ("E21", "W") and "60 %" in st["fault"]["observed"]
    r = c.delete("/api/sim/fault?fault=lift-short:W", headers=AUTH)
    assert r.status_code == 200 and r.json() == {"repaired": ["lift-short:W:reach=0.6"], "faults": []}
    assert log.events("operator", 1)[0]["data"] == {"action": "repair", "faults": ["lift-short:W:reach=0.6"]}
    r = c.delete("/api/sim/fault?fault=lift-short:W", headers=AUTH)
    assert r.status_code == 409 and "no fault lift-short:W is injected (injected now: none)" in r.text
    r = c.delete("/api/sim/fault?fault=lift-short:Q", headers=AUTH)
    assert r.status_code == 422 and "side must be E, S, W or N" in r.text
    assert c.post("/api/faults/clear", headers=AUTH).status_code == 200
    wait_state(c, ["idle"])
    c.post("/api/cycle", headers=AUTH)  # repaired: the practice goes on without a restart
    st = wait_state(c, ["walls-up"])
    assert st["fault"] is None and not control.backend.model.faults


def test_selftest_reports_every_part(api) -> None:
    c, _, log = api
    c.post("/api/sim/fault", headers=AUTH, json={"fault": "feeder-jammed:S"})
    r = c.post("/api/selftest", headers=AUTH)
    assert r.status_code == 200
    rep = r.json()
    assert rep["passed"] is False and any(p["code"] == "E32" and p["side"] == "S" for p in rep["parts"])
    assert c.get("/api/selftest").json()["report"] == rep and log.count("selftest") == 1


def test_selftest_trace_is_kept_beside_its_entry_and_replays_to_its_report(api) -> None:
    from controller.replay import replay_selftest
    from hardware.trace import parse_trace
    c, _, _ = api
    c.post("/api/sim/fault", headers=AUTH, json={"fault": "lift-short:N"})
    rep = c.post("/api/selftest", headers=AUTH).json()
    last = c.get("/api/selftest").json()
    assert last["report"] == rep and isinstance(last["id"], int)
    r = c.get(f"/api/faults/{last['id']}/trace", headers=AUTH)
    assert r.status_code == 200
    trace = parse_trace(r.text.splitlines(keepends=True), "selftest")
    assert trace.header.extra["run"] == "selftest"
    got = replay_selftest(trace)
    assert got.report.to_dict() == rep and got.divergence is None and got.ends is None
    assert [(p["code"], p["side"]) for p in rep["parts"] if not p["passed"]] == [("E21", "N")]


def test_score_a_photo(api, hand_photo) -> None:
    c, _, log = api
    opts = json.dumps({"self_drawn": True, "seat_wind": "S"})
    r = c.post("/api/score/photo", headers=AUTH, data={"options": opts},
               files={"photo": ("hand.png", hand_photo.read_bytes(), "image/png")})
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["recognition"]["hand"] == "123456789mEEENN"
    assert "Pure Straight" in {f["name_en"] for f in d["score"]["fans"]} and d["photo"]
    assert d["recognition"]["image_size"] == [800, 600]
    # the photo with the tiles drawn: a JPEG at its own URL, not base64 in the JSON
    assert d["annotated"].startswith("/api/score/photo/") and d["annotated"].endswith(".jpg") and len(r.content) < 20_000
    img = c.get(d["annotated"])
    assert img.status_code == 200 and img.headers["content-type"] == "image/jpeg"
    import cv2
    import numpy as np
    pic = cv2.imdecode(np.frombuffer(img.content, np.uint8), cv2.IMREAD_COLOR)
    assert pic.shape[:2] == (600, 800)  # the photo's own size (under 1600 px: not shrunk)
    assert c.get("/api/score/photo/nosuchphoto.jpg").status_code == 404


def test_photos_beyond_the_queue_get_503_with_retry_after(api, hand_photo) -> None:
    from service.photos import MAX_WAITING
    c, _, log = api
    slots = c.app.state.scorer.photos._slots
    for _ in range(MAX_WAITING + 1):  # one photo being read, MAX_WAITING waiting
        assert slots.acquire(blocking=False)
    try:
        r = c.post("/api/score/photo", headers=AUTH, files={"photo": ("h.png", hand_photo.read_bytes(), "image/png")})
        assert r.status_code == 503 and r.json()["error"]["code"] == "busy" and int(r.headers["retry-after"]) > 0
    finally:
        for _ in range(MAX_WAITING + 1):
            slots.release()
    r = c.post("/api/score/photo", headers=AUTH, files={"photo": ("h.png", hand_photo.read_bytes(), "image/png")})
    assert r.status_code == 200, r.text


def test_bad_uploads_are_refused(api, hand_photo) -> None:
    c, _, log = api
    r = c.post("/api/score/photo", headers=AUTH, files={"photo": ("x.png", b"not an image at all", "image/png")})
    assert r.status_code == 415 and "not an image" in r.json()["error"]["message"]
    r = c.post("/api/score/photo", headers=AUTH, files={"photo": ("x.png", b"", "image/png")})
    assert r.status_code == 415
    big = b"\x89PNG" + b"\0" * (3 * 1024 * 1024)
    r = c.post("/api/score/photo", headers=AUTH, files={"photo": ("big.png", big, "image/png")})
    assert r.status_code == 413 and r.json()["error"]["code"] == "too-large"
    # a small file that would unpack to 60 megapixels: refused from its header, under its own name
    import io
    from PIL import Image
    buf = io.BytesIO()
    Image.new("1", (10_000, 6_000)).save(buf, format="PNG")
    r = c.post("/api/score/photo", headers=AUTH, files={"photo": ("bomb.png", buf.getvalue(), "image/png")})
    err = r.json()["error"]
    assert r.status_code == 413 and err["code"] == "too-large", r.text
    assert err["message"].startswith("bomb.png is 10000x6000 pixels") and "mjtable-photo-" not in err["message"]
    r = c.post("/api/score/photo", headers=AUTH, data={"options": '{"flowers": 12}'},
               files={"photo": ("h.png", hand_photo.read_bytes(), "image/png")})
    assert r.status_code == 422 and "options.flowers" in r.json()["error"]["message"]
    r = c.post("/api/score/photo", headers=AUTH)
    assert r.status_code == 422 and "photo" in r.json()["error"]["message"]
    assert log.count("score") == 0


def test_capture_without_camera_and_with_one(api, tmp_path, hand_photo) -> None:
    c, _, _ = api
    r = c.post("/api/score/capture", headers=AUTH, json={})
    assert r.status_code == 404 and "no camera configured" in r.json()["error"]["message"]
    c2, control, log = make_client(tmp_path / "cam", camera_image=hand_photo)
    with c2:
        r = c2.post("/api/score/capture", headers=AUTH, json={"self_drawn": True})
        assert r.status_code == 200 and r.json()["score"]["total"] > 16
    log.close()


def _frames(photo, count: int, seed: int = 0) -> list[tuple[str, tuple[str, bytes, str]]]:
    """``count`` camera frames of ``photo`` (each with its own shake, glare, shadow and noise:
    ``vision.synth.frame_of``) as the multipart ``frames`` files."""
    import cv2
    import numpy as np

    from vision.synth import frame_of
    img, rng = cv2.imread(str(photo)), np.random.default_rng(seed)
    return [("frames", (f"f{i}.png", cv2.imencode(".png", frame_of(img, [], rng, glare=0.3, shadow=0.3)[0])[1].tobytes(),
                        "image/png")) for i in range(count)]


def test_capture_of_uploaded_frames_votes_per_tile(api, hand_photo) -> None:
    c, _, log = api
    r = c.post("/api/score/capture", files=_frames(hand_photo, 3), data={"options": '{"self_drawn": true}'})
    assert r.status_code == 401 and log.count("score") == 0
    r = c.post("/api/score/capture", headers=AUTH, files=_frames(hand_photo, 3),
               data={"options": '{"self_drawn": true}'})
    assert r.status_code == 200, r.text
    body = r.json()
    rec = body["recognition"]
    assert rec["frames"] == 3 and rec["hand"] == "123456789mEEEN" + "N"
    assert all(sum(t["votes"].values()) <= 3 and isinstance(t["changed"], bool) for t in rec["tiles"])
    assert body["score"]["total"] > 16 and body["annotated"].startswith("/api/score/photo/")
    assert c.get(body["annotated"]).headers["content-type"] == "image/jpeg"


@pytest.mark.parametrize("count", [2, 6])
def test_capture_refuses_a_wrong_number_of_frames(api, hand_photo, count) -> None:
    c, _, log = api
    r = c.post("/api/score/capture", headers=AUTH, files=_frames(hand_photo, count))
    assert r.status_code == 422 and f"3 to 5 pictures of the same hand, not {count}" in r.json()["error"]["message"]
    for frames in (2, 6, 0, "5", True):
        r = c.post("/api/score/capture", headers=AUTH, json={"frames": frames})
        assert r.status_code == 422 and "frames: 1, or 3 to 5" in r.json()["error"]["message"], r.text
    r = c.post("/api/score/capture", headers=AUTH, files=_frames(hand_photo, 2)[:1] + [
        ("frames", ("x.png", b"not a picture", "image/png"))] * 2)
    assert r.status_code == 415 and "x.png is not an image" in r.json()["error"]["message"], r.text
    assert log.count("score") == 0


def test_capture_from_the_camera_takes_frames(tmp_path, hand_photo) -> None:
    c, _, log = make_client(tmp_path / "cam", camera_image=hand_photo)
    with c:
        r = c.post("/api/score/capture", headers=AUTH, json={"self_drawn": True, "frames": 3})
        assert r.status_code == 200, r.text
        rec = r.json()["recognition"]
        # one picture file read three times: every tile has three votes for one label
        assert rec["frames"] == 3 and all(t["votes"] == {t["tile"]: 3} and not t["changed"] for t in rec["tiles"])
        r = c.post("/api/score/capture", headers=AUTH, json={"self_drawn": True, "frames": 3, "nonsense": 1})
        assert r.status_code == 422 and "nonsense" in r.json()["error"]["message"], r.text
    log.close()


def test_capture_in_the_calibrated_view_reports_the_seat(tmp_path, monkeypatch) -> None:
    import cv2
    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vision"))
    from vision_scenes import camera, laid_hand_strip, top_view

    from controller import settings as ST
    from vision.table_camera import calibrate
    monkeypatch.setenv("MJTABLE_STATE_DIR", str(tmp_path / "state"))
    rng = np.random.default_rng(6)
    cal, _ = calibrate(camera(top_view(rng)))  # no hand: the zones are the whole view, the nearest side decides
    ST.save(dataclasses.replace(ST.load(), camera=cal.to_dict()))
    picture = camera(top_view(rng, laid_hand_strip(), "S"))
    files = [("frames", (f"f{i}.png", cv2.imencode(".png", picture)[1].tobytes(), "image/png")) for i in range(3)]
    c, _, log = make_client(tmp_path / "svc")
    with c:
        r = c.post("/api/score/capture", headers=AUTH, files=files, data={"options": '{"self_drawn": true}'})
        assert r.status_code == 200, r.text
        rec = r.json()["recognition"]
        assert rec["seat"] == "S" and rec["hand"] == "123m456p789sEEEN" + "N"
        # the annotated picture is the part of the view around the hand, the boxes in its pixels
        x1, y1, x2, y2 = rec["crop"]
        assert 0 <= x1 < x2 <= cal.side and 0 <= y1 < y2 <= cal.side and rec["image_size"] == [x2 - x1, y2 - y1]
        assert (y2 - y1) < cal.side / 3  # the hand's strip, not the whole table
        assert all(0 <= t["box"][0] and t["box"][2] <= x2 - x1 and 0 <= t["box"][1] and t["box"][3] <= y2 - y1
                   for t in rec["tiles"])
        jpeg = cv2.imdecode(np.frombuffer(c.get(r.json()["annotated"]).content, np.uint8), cv2.IMREAD_COLOR)
        assert jpeg.shape[:2] == (y2 - y1, x2 - x1)
    log.close()


def test_log_and_unknown_kind(api) -> None:
    c, _, _ = api
    assert c.get("/api/log", params={"kind": "nonsense"}).status_code == 422
    assert c.get("/api/log", params={"limit": 0}).status_code == 422


def test_live_events_stream_status_changes(api) -> None:
    c, control, _ = api
    import threading
    got: list[dict] = []

    def read():
        with c.stream("GET", "/api/events") as r:
            assert r.headers["content-type"].startswith("text/event-stream")
            for line in r.iter_lines():
                if line.startswith("data: "):
                    got.append(json.loads(line[6:]))
                    if any(m.get("state") == "walls-up" for m in got):
                        return

    th = threading.Thread(target=read, daemon=True)
    th.start()
    import time
    time.sleep(0.3)
    c.post("/api/cycle", headers=AUTH)
    th.join(20)
    states = [m["state"] for m in got if m["type"] == "status"]
    assert states[0] == "idle" and "building" in states and states[-1] == "walls-up"
    control.hub.close()  # the stream ends when the service stops


def test_one_fault_code_in_full(api) -> None:
    c, _, _ = api
    d = c.get("/api/faults/codes/E21").json()
    assert d["code"] == "E21" and d["causes"] and d["checks_zh"] and d["connectors"] and "mains" in d["safety"]
    assert "lift-short" in d["injected_by"] and "电源" in d["safety_zh"]
    r = c.get("/api/faults/codes/E99")
    assert r.status_code == 404 and "E21" in r.json()["error"]["message"]


def test_an_upload_stays_in_memory(api, monkeypatch) -> None:
    """An upload over Starlette's 1 MB spool size is not rolled over to a temporary file (on a Pi,
    the SD card): the spool holds the largest accepted upload."""
    import tempfile

    import numpy as np
    from PIL import Image
    import starlette.formparsers as fp

    spools: list = []

    class Recording(tempfile.SpooledTemporaryFile):
        def __init__(self, *a, **k) -> None:
            super().__init__(*a, **k)
            spools.append(self)

    monkeypatch.setattr(fp, "SpooledTemporaryFile", Recording)
    import io
    buf = io.BytesIO()
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (700, 700, 3), dtype=np.uint8)).save(buf, "PNG")
    assert 1024 * 1024 < len(buf.getvalue()) < 2 * 1024 * 1024
    c, _, _ = api
    r = c.post("/api/score/photo", headers=AUTH, files={"photo": ("noise.png", buf.getvalue(), "image/png")})
    assert r.status_code == 200, r.text
    assert spools and not any(s._rolled for s in spools)


def test_a_photo_worker_that_dies_is_replaced(api, hand_photo) -> None:
    """The worker process killed (as the kernel's OOM killer would): that photo gets a 503, the
    next one a new worker; the control loop never noticed."""
    import os
    import signal
    import time
    c, control, _ = api
    photo = {"photo": ("h.png", hand_photo.read_bytes(), "image/png")}
    assert c.post("/api/score/photo", headers=AUTH, files=photo).status_code == 200
    pool = c.app.state.scorer.photos._pool
    (pid,) = list(pool._processes)
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.5)
    r = c.post("/api/score/photo", headers=AUTH, files=photo)
    assert r.status_code == 503 and "photo reader stopped" in r.json()["error"]["message"]
    r = c.post("/api/score/photo", headers=AUTH, files=photo)
    assert r.status_code == 200 and r.json()["recognition"]["hand"] == "123456789mEEENN"
    assert control.alive and control.error is None


def test_a_photo_without_its_length_is_refused(api) -> None:
    """A chunked upload could be of any size and would be spooled to disk: 411, nothing read."""
    c, _, _ = api
    body = iter([b"--x\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"a.png\"\r\n\r\n", b"x" * 10,
                 b"\r\n--x--\r\n"])
    r = c.post("/api/score/photo", headers={**AUTH, "Content-Type": "multipart/form-data; boundary=x"}, content=body)
    assert r.status_code == 411 and r.json()["error"]["code"] == "length-required"
