"""The flag threshold as a table setting (issue 21, ``confirm_below``): the settings API checks and
stores it, the photo endpoints read it at each request, and the photo worker's job uses it for that
job only."""

from __future__ import annotations

import json
import sys

import pytest

from service_support import AUTH, ROOT, make_client, status_until, wait_state

sys.path.insert(0, str(ROOT / "tests" / "vision"))


def _upload(c, photo, options: dict | None = None):
    return c.post("/api/score/photo", headers=AUTH, data={"options": json.dumps(options or {"self_drawn": True})},
                  files={"photo": ("hand.png", photo.read_bytes(), "image/png")})


def _below(rec: dict, threshold: float) -> list[str]:
    """The tiles of a recognition read below ``threshold``."""
    return sorted(t["tile"] for t in rec["tiles"] if t["confidence"] < threshold)


def test_the_settings_api_stores_the_threshold_and_refuses_one_outside_its_range(api, state_dir) -> None:
    c, control, log = api
    got = c.get("/api/settings").json()
    assert got["confirm_below"] == 0.6 and got["confirm_below_default"] == 0.6
    assert got["confirm_below_range"] == [0.5, 0.95]
    r = c.put("/api/settings", headers=AUTH, json={"confirm_below": 0.75})
    assert r.status_code == 200 and r.json()["confirm_below"] == 0.75 and r.json()["note"] is None
    assert c.get("/api/settings").json()["confirm_below"] == 0.75
    assert json.loads((state_dir / "settings.json").read_text())["confirm_below"] == 0.75
    assert log.events("settings")[0]["data"]["changes"] == {"confirm_below": 0.75}
    n = len(log.events(limit=1000))
    for bad, says, zh in ((0.3, "from 0.5 to 0.95", "在 0.5 到 0.95 之间"), (0.99, "from 0.5 to 0.95", "0.5 到 0.95"),
                          (1, "from 0.5 to 0.95", "0.5 到 0.95"), ("0.7", "confirm_below", "确认门槛应为数字"),
                          (True, "confirm_below", "确认门槛应为数字")):
        r = c.put("/api/settings", headers=AUTH, json={"confirm_below": bad})
        assert r.status_code == 422 and says in r.json()["error"]["message"], (bad, r.text)
        assert zh in r.json()["error"]["message_zh"], (bad, r.text)  # the page shows it as it is
    assert c.get("/api/settings").json()["confirm_below"] == 0.75 and len(log.events(limit=1000)) == n
    # the other settings are kept, and kept working, beside it
    r = c.put("/api/settings", headers=AUTH, json={"tile_count": 108, "confirm_below": 0.8})
    assert r.status_code == 200 and status_until(c, lambda st: st["tile_count"] == 108)["tile_count"] == 108
    assert c.get("/api/settings").json()["confirm_below"] == 0.8


def test_the_threshold_alone_does_not_wait_for_the_next_cycle(tmp_path) -> None:
    c, control, log = make_client(tmp_path, speed=1.0)
    with c:
        assert c.post("/api/cycle", headers=AUTH).status_code == 200
        wait_state(c, ["shuffling", "building"])
        r = c.put("/api/settings", headers=AUTH, json={"confirm_below": 0.7})
        assert r.status_code == 200 and r.json()["note"] is None  # photos, not the machine
        assert log.events("settings")[0]["data"] == {"changes": {"confirm_below": 0.7}, "pending": False,
                                                     "source": "page"}
        assert c.get("/api/status").json()["pending_tile_count"] is None
        r = c.put("/api/settings", headers=AUTH, json={"tile_count": 108, "confirm_below": 0.7})
        assert "next cycle" in r.json()["note"]
        assert c.post("/api/stop", headers=AUTH).status_code == 200
    log.close()


def test_a_photo_is_flagged_by_the_setting_at_its_request(api, hand_photo) -> None:
    c, _, log = api
    r = _upload(c, hand_photo)
    assert r.status_code == 200, r.text
    rec = r.json()["recognition"]
    # the photo's tiles are read at 0.90-0.99: none below the default 0.6, some below 0.95
    unsure = _below(rec, 0.95)
    assert unsure and not _below(rec, 0.6) and rec["uncertain"] == [] and r.json()["score"] is not None
    assert c.put("/api/settings", headers=AUTH, json={"confirm_below": 0.95}).status_code == 200
    r = _upload(c, hand_photo)
    body = r.json()
    assert sorted(t["tile"] for t in body["recognition"]["uncertain"]) == unsure
    assert body["score"] is None and body["problem"].startswith("uncertain:")
    r = _upload(c, hand_photo, {"self_drawn": True, "accept_uncertain": True})
    assert r.json()["score"] is not None and len(r.json()["recognition"]["uncertain"]) == len(unsure)
    assert c.put("/api/settings", headers=AUTH, json={"confirm_below": 0.6}).status_code == 200
    r = _upload(c, hand_photo)
    assert r.json()["recognition"]["uncertain"] == [] and r.json()["score"] is not None


def test_a_capture_is_read_at_the_setting_of_its_request(tmp_path, hand_photo, monkeypatch) -> None:
    # both ways of POST /api/score/capture (uploaded frames, the table's camera) hand the stored
    # threshold to the worker's job (whose use of it test_the_photo_job_flags_by_its_own_threshold_only checks)
    from test_api import _frames

    from service import photos
    given = []
    c, _, log = make_client(tmp_path / "cam", camera_image=hand_photo)
    reader = c.app.state.scorer.photos
    job = reader._job

    def spy(fn, *args):  # the service's side: what goes to the worker with the job
        if fn is photos._frames_job:
            given.append(args[5])  # (datas, images, names, camera, rules, min_confidence)
        return job(fn, *args)
    monkeypatch.setattr(reader, "_job", spy)
    with c:
        for threshold in (0.95, 0.7):
            assert c.put("/api/settings", headers=AUTH, json={"confirm_below": threshold}).status_code == 200
            r = c.post("/api/score/capture", headers=AUTH, files=_frames(hand_photo, 3),
                       data={"options": '{"self_drawn": true}'})
            assert r.status_code == 200, r.text
            r = c.post("/api/score/capture", headers=AUTH, json={"self_drawn": True, "frames": 3})
            assert r.status_code == 200, r.text
            r = c.post("/api/score/photo", headers=AUTH, files={"photo": ("h.png", hand_photo.read_bytes(), "image/png")})
            assert r.status_code == 200, r.text
    log.close()
    assert given == [0.95, 0.95, 0.95, 0.7, 0.7, 0.7]


@pytest.mark.parametrize("threshold, flagged", [(None, []), (0.6, []), (0.75, ["4m"]), (0.95, ["4m", "7m"])])
def test_the_photo_job_flags_by_its_own_threshold_only(monkeypatch, hand_photo, threshold, flagged) -> None:
    # the worker's side, in this process: each job is assembled at the threshold it was given, and
    # the recognizer the jobs share keeps its own (a job at 0.95 changes nothing for the next)
    from vision_scenes import model_free_recognizer, unsure_hand

    from service import photos
    rec = model_free_recognizer(unsure_hand())
    monkeypatch.setattr(photos, "_REC", rec)
    data = hand_photo.read_bytes()
    r = photos._frames_job([data], [None], ["hand.png"], None, "mcr", threshold)
    assert r["ok"], r
    assert [t["tile"] for t in r["recognition"]["uncertain"]] == flagged
    assert rec.min_confidence == 0.6
    r = photos._frames_job([data], [None], ["hand.png"], None, "mcr")
    assert r["recognition"]["uncertain"] == []


@pytest.mark.parametrize("broken", [{"confirm_below": "abc"}, {"tile_count": "abc"}])
def test_a_broken_settings_file_is_said_and_repaired_not_a_500(api, state_dir, broken) -> None:
    # a file edited by hand: GET answers with the readable settings and the problem; a PUT writes
    # it whole again, as `mjtable config set` does
    c, _, _ = api
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / "settings.json").write_text(json.dumps({"dealer": "W", **broken}))
    r = c.get("/api/settings")
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["problem"] and "settings.json" in d["problem"] and d["dealer"] == "W"
    assert d["confirm_below"] == 0.6 and d["tile_count"] == 136
    r = c.put("/api/settings", headers=AUTH, json={"dealer": "S"})
    assert r.status_code == 200, r.text
    assert json.loads((state_dir / "settings.json").read_text())["dealer"] == "S"
    d = c.get("/api/settings").json()
    assert d["problem"] is None and d["dealer"] == "S"
