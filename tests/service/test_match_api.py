"""The match through the API (/api/match): winds from the deal, the dealer moving every hand,
seat changes between rounds, undo, edit and delete as new log events, the CSV, errors in both
languages, the table's dealer following the match."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from scoring import score_hand
from scoring.match import HandRecord, deal, player_points, standard_points
from service_support import AUTH

PLAYERS = ["张伟", "Li", "王芳", "Chen"]


def _new(c) -> dict:
    r = c.post("/api/match/new", headers=AUTH, json={"players": PLAYERS})
    assert r.status_code == 200, r.text
    return r.json()["sheet"]


def test_the_winds_come_from_the_match_never_from_the_request(api) -> None:
    c, control, _ = api
    sh = _new(c)
    cur = sh["current"]
    assert (cur["number"], cur["round"], cur["hand"], cur["prevalent_wind"], cur["dealer"]) == (1, 1, 1, "E", "E")
    assert cur["names"] == dict(zip("ESWN", PLAYERS))
    # the demo photo's hand, won by South: the East pung is the prevalent wind only, not the seat wind too
    r = c.post("/api/match/hand", headers=AUTH, json={"hand": "123456789mEEENN", "winner": "S"})
    assert r.status_code == 200, r.text
    d = r.json()
    expected = score_hand("123456789mEEENN", self_drawn=True, seat_wind="S", prevalent_wind="E")
    as_east = score_hand("123456789mEEENN", self_drawn=True, seat_wind="E", prevalent_wind="E")
    assert d["score"]["total"] == expected.total == as_east.total - 2
    assert "Seat Wind" not in {f["name_en"] for f in d["score"]["fans"]}
    assert all("tiles" in f for f in d["score"]["fans"])  # each fan with the sets that made it
    # a seat wind in the request is refused, not used
    r = c.post("/api/match/hand", headers=AUTH, json={"hand": "123456789mEEENN", "winner": "S", "seat_wind": "E"})
    assert r.status_code == 422
    # hand 2: the dealer moved to S (whether or not the dealer won); S is now East
    cur = d["sheet"]["current"]
    assert (cur["number"], cur["dealer"], cur["seat_winds"]) == (2, "S", {"E": "N", "S": "E", "W": "S", "N": "W"})
    assert c.get("/api/settings").json()["dealer"] == "S" and control.rt.table.settings.dealer == "S"


def test_a_whole_session_follows_the_rules_and_the_sheet_adds_up(api) -> None:
    c, _, log = api
    _new(c)
    hand = "123m456m789m234p5s5s"
    wins = {1: ("E", "S"), 2: None, 3: ("N", None), 5: ("W", "E"), 9: ("S", None), 16: ("E", "W")}
    for n in range(1, 17):
        w = wins.get(n)
        if w is None:
            r = c.post("/api/match/draw", headers=AUTH, json={})
        else:
            r = c.post("/api/match/hand", headers=AUTH, json={"hand": hand, "winner": w[0], "discarder": w[1]})
        assert r.status_code == 200, r.text
        assert r.json()["deal"]["number"] == n
    sh = c.get("/api/match").json()
    assert sh["finished"] and sh["current"] is None and len(sh["hands"]) == 16
    r = c.post("/api/match/draw", headers=AUTH, json={})
    assert r.status_code == 409 and "new match" in r.json()["error"]["message"] and r.json()["error"]["message_zh"]
    # the sheet against the engine and the match functions
    rows, records = [], []
    for n in range(1, 17):
        w = wins.get(n)
        total = score_hand(hand, self_drawn=w[1] is None, seat_wind=deal(n).seat_winds[w[0]],
                           prevalent_wind=deal(n).prevalent_wind).total if w else 0
        records.append((deal(n), HandRecord(w[0] if w else None, w[1] if w else None, total)))
    rows = player_points(records)
    assert [h["points"] for h in sh["hands"]] == [[p[0][i] for i in range(4)] for p in rows]
    totals = [rows[-1][1][i] for i in range(4)]
    assert sh["totals"] == totals and sum(sh["match_points"]) == 0
    assert sh["standard_points"] == [standard_points(dict(enumerate(totals)))[i] for i in range(4)]
    # hand 5 is in the South round after the seat change: W is player D (index 3)
    assert sh["hands"][4]["deal"]["prevalent_wind"] == "S" and sh["hands"][4]["winner_player"] == 3
    assert log.count("match") == 1


def test_undo_edit_and_delete_are_new_events_and_nothing_is_erased(api) -> None:
    c, _, log = api
    _new(c)
    first = c.post("/api/match/hand", headers=AUTH, json={"hand": "123m456m789m234p5s5s", "winner": "E",
                                                         "discarder": "S"}).json()["recorded"]
    c.post("/api/match/draw", headers=AUTH, json={})
    third = c.post("/api/match/hand", headers=AUTH, json={"hand": "123m456m789m234p5s5s", "winner": "N"}).json()
    assert third["deal"]["number"] == 3
    r = c.post("/api/match/undo", headers=AUTH)
    assert r.status_code == 200 and r.json()["undone"] == third["recorded"]
    assert r.json()["sheet"]["current"]["number"] == 3 and len(r.json()["sheet"]["hands"]) == 2
    # edit hand 1: now a self-drawn win by W, scored again with hand 1's winds
    r = c.put(f"/api/match/hands/{first}", headers=AUTH, json={"hand": "[EEE,1]123m456m789m5s5s", "winner": "W"})
    assert r.status_code == 200, r.text
    h1 = r.json()["sheet"]["hands"][0]
    want = score_hand("[EEE,1]123m456m789m5s5s", self_drawn=True, seat_wind="W", prevalent_wind="E").total
    assert h1["winner"] == "W" and h1["total"] == want and h1["edited"] and h1["deal"]["number"] == 1
    # a win edited into a draw, then deleted
    assert c.put(f"/api/match/hands/{first}", headers=AUTH, json={"draw": True}).json()["sheet"]["hands"][0][
        "kind"] == "draw"
    r = c.delete(f"/api/match/hands/{first}", headers=AUTH)
    assert r.status_code == 200 and [h["deal"]["number"] for h in r.json()["sheet"]["hands"]] == [2]
    assert c.delete(f"/api/match/hands/{first}", headers=AUTH).status_code == 404
    assert log.count("score") == 2 and log.count("draw") == 1  # the undone and deleted hands are still logged
    assert [e["data"]["action"] for e in log.events("match", 10)] == ["delete", "edit", "edit", "undo", "new"]


def test_bad_hands_are_refused_in_both_languages_with_the_cli_checks(api) -> None:
    c, _, log = api
    _new(c)
    n = len(log.events(limit=1000))
    cases = [({"hand": "123m456m789m234p5s5s", "winner": "E", "discarder": "S", "kong_replacement": True},
              "contradictory-flags", "杠上开花"),
             ({"hand": "123m456m789m234p5s5s", "winner": "E", "robbing_kong": True}, "contradictory-flags", "抢杠和"),
             ({"hand": "11111m234m567m888m", "winner": "E"}, "fifth-tile", "4 张"),
             ({"hand": "[234s,1]345m345p67s88s5s", "winner": "E", "discarder": "S"}, "not-legal", "起和分"),
             ({"hand": "123m456m789m234p5s5s", "winner": "E", "discarder": "E"}, "bad-value", "放炮"),
             ({"hand": "123x", "winner": "E"}, "syntax", "字符")]
    for body, code, zh in cases:
        r = c.post("/api/match/hand", headers=AUTH, json=body)
        assert r.status_code == 422, r.text
        e = r.json()["error"]
        assert e["code"] == code and zh in e["message_zh"], e
        assert not any("a" <= ch <= "z" for ch in e["message_zh"].replace("x", "")), e["message_zh"]
    r = c.post("/api/match/hand", headers=AUTH, json={"hand": "123m456m789m234p5s5s", "winner": "E", "flowers": 9})
    assert r.status_code == 422
    assert len(log.events(limit=1000)) == n


def test_flowers_are_a_count_or_which_ones(api) -> None:
    c, _, _ = api
    _new(c)
    r = c.post("/api/match/hand", headers=AUTH, json={"hand": "123m456m789m234p5s5s", "winner": "E", "discarder": "S",
                                                     "flowers": ["1f", "5f"]})
    assert r.status_code == 200 and r.json()["score"]["total"] == 23
    assert r.json()["sheet"]["hands"][0]["flags"]["flowers"] == ["1f", "5f"]
    for bad in (["1f", "1f"], ["9f"], "2", True):
        r = c.post("/api/match/hand", headers=AUTH, json={"hand": "123m456m789m234p5s5s", "winner": "E", "flowers": bad})
        assert r.status_code == 422, bad


def test_the_csv_opens_in_a_spreadsheet_with_the_chinese(api) -> None:
    c, _, _ = api
    _new(c)
    c.post("/api/match/hand", headers=AUTH, json={"hand": "123m456m789m234p5s5s", "winner": "E", "discarder": "S"})
    c.post("/api/match/draw", headers=AUTH, json={})
    r = c.get("/api/match/csv")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    assert r.content.startswith(b"\xef\xbb\xbf") and "attachment" in r.headers["content-disposition"]
    rows = list(csv.reader(io.StringIO(r.content.decode("utf-8-sig"))))
    assert rows[0][-4:] == [f"{p} 盘分" for p in PLAYERS]
    assert rows[1][:7] == ["1", "1", "E", "张伟", "张伟", "Li", "21"] and rows[1][-4:] == ["45", "-29", "-8", "-8"]
    assert rows[2][4] == "荒牌 draw"
    assert rows[-3][0].startswith("局分") and rows[-3][-4:] == ["545", "471", "492", "492"]
    assert rows[-1][0].startswith("标准分")


def _upload(c, hand_photo) -> dict:
    r = c.post("/api/score/photo", headers=AUTH, files={"photo": ("hand.png", hand_photo.read_bytes(), "image/png")})
    assert r.status_code == 200, r.text
    return r.json()


def test_a_photo_is_scored_after_its_tiles_are_checked_and_corrected(api, hand_photo) -> None:
    c, _, log = api
    _new(c)
    d = _upload(c, hand_photo)
    tiles = [t["tile"] for t in d["recognition"]["tiles"]]
    nine = tiles.index("9m")
    r = c.post("/api/match/photo", headers=AUTH, json={"photo": d["photo"], "winner": "S",
                                                      "corrections": [{"index": nine, "tile": "6m"}]})
    assert r.status_code == 200, r.text
    want = score_hand("123456678mEEENN", self_drawn=True, seat_wind="S", prevalent_wind="E")
    assert r.json()["score"]["total"] == want.total and r.json()["score"]["hand"] == want.hand
    logged = log.events("score", 1)[0]["data"]
    assert logged["photo"]["id"] == d["photo"] and logged["photo"]["corrections"] == [
        {"index": nine, "from": "9m", "to": "6m"}] and logged["source"] == "photo"
    assert Path(logged["photo"]["file"]).read_bytes()[:2] == b"\xff\xd8"  # the annotated JPEG kept with the log
    # a correction to something that is no tile, an index outside the photo, an unknown photo
    for body, status in (({"corrections": [{"index": 0, "tile": "0m"}]}, 422), ({"confirmed": [99]}, 422),
                         ({"photo": "gone"}, 404)):
        r = c.post("/api/match/photo", headers=AUTH, json={"photo": d["photo"], "winner": "S", **body})
        assert r.status_code == status, r.text


def test_an_uncertain_tile_must_be_confirmed_and_the_winning_tile_can_be_marked(api, hand_photo) -> None:
    c, _, _ = api
    _new(c)
    d = _upload(c, hand_photo)
    reading = c.app.state.scorer.photos.reading(d["photo"])
    tiles = reading["tiles"]
    reading["uncertain"] = [dict(tiles[0], confidence=0.31)]
    r = c.post("/api/match/photo", headers=AUTH, json={"photo": d["photo"], "winner": "E", "discarder": "N"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "uncertain" and "确认" in r.json()["error"]["message_zh"]
    # the winning tile pushed against the row: not laid apart, so it has to be marked
    win = len(tiles) - 1
    before = tiles[win - 1]["box"]
    w = before[2] - before[0]
    tiles[win]["box"] = [before[2] + 2, before[1], before[2] + 2 + w, before[3]]
    body = {"photo": d["photo"], "winner": "E", "discarder": "N", "confirmed": [0]}
    r = c.post("/api/match/photo", headers=AUTH, json=body)
    assert r.status_code == 422 and r.json()["error"]["code"] == "not-a-hand"
    r = c.post("/api/match/photo", headers=AUTH, json={**body, "win": win})
    assert r.status_code == 200, r.text
    assert r.json()["score"]["hand"] == score_hand("123456789mEEENN").hand


def test_a_taiwan_match_scores_a_photo_of_17_tiles_with_its_flowers(api, tmp_path) -> None:
    """Issue #20: the match's photo is assembled by the match's rules (Taiwan: 16 + 1 tiles, flowers in the
    hand), read by the committed models from a scene of real tile crops (tests/vision/vision_scenes.py)."""
    import sys

    import cv2
    import numpy as np
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vision"))
    from vision.synth import compose_scene
    from vision_scenes import parse_row, real_faces

    from scoring import systems

    img, _ = compose_scene([parse_row(r) for r in ("1f 5f", "1m 2m 3m 4m 5m 6m 7m 8m 9m 2p 3p 4p 5s 5s 5s 8s | 8s")],
                           real_faces(), np.random.default_rng(0), size=(600, 800))
    photo = tmp_path / "taiwan.png"
    cv2.imwrite(str(photo), img)
    c, _, log = api
    r = c.post("/api/match/new", headers=AUTH, json={"players": PLAYERS, "rules": "taiwan"})
    assert r.status_code == 200, r.text
    r = c.post("/api/score/photo", headers=AUTH, data={"options": '{"rules": "taiwan"}'},
               files={"photo": ("taiwan.png", photo.read_bytes(), "image/png")})
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["recognition"]["hand"] == "1f5f123456789m234p5558s8s", d["recognition"]
    r = c.post("/api/match/photo", headers=AUTH, json={"photo": d["photo"], "winner": "S", "discarder": "W"})
    assert r.status_code == 200, r.text
    seat = r.json()["deal"]["seat_winds"]
    want = systems.score("taiwan", "1f5f123456789m234p5558s8s", {"seat_wind": seat["S"], "discarder": seat["W"],
                                                                 "prevalent_wind": r.json()["deal"]["prevalent_wind"]})
    assert r.json()["score"]["total"] == want.total and r.json()["score"]["rules"] == "taiwan"
    assert r.json()["assembly"]["flowers"] == ["1f", "5f"]
    # flowers given apart are refused: Taiwan writes them in the hand
    r = c.post("/api/match/photo", headers=AUTH, json={"photo": d["photo"], "winner": "S", "flowers": 2})
    assert r.status_code == 422 and "write them in the hand" in r.json()["error"]["message"]
