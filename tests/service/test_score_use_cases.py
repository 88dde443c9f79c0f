"""The HTTP API and the command line score through the same use-cases: ``WinContext.from_options`` for a
hand's options (one set of names, one check, one message) and ``controller.table_scoring.score_photo``
for a photo."""

from __future__ import annotations

import io
import json

import pytest

from app.cli import run_batch
from controller.table_scoring import score_photo
from scoring import ScoringError, WinContext
from service_support import AUTH

HAND = "123m456m789m234p5s5s"


def _batch_error(options: dict) -> str:
    out = io.StringIO()
    run_batch([json.dumps({"id": 1, "hand": HAND, **options})], out)
    row = json.loads(out.getvalue())
    assert not row["ok"] and row["error"]["code"] == "bad-value"
    return row["error"]["message"]


@pytest.mark.parametrize("key, value", [("flowers", 9), ("flowers", "2"), ("seat_wind", "X"), ("prevalent_wind", 7),
                                        ("self_drawn", 1), ("fourth_tile", None)])
def test_a_bad_value_has_one_message_on_the_command_line_and_over_http(api, key, value) -> None:
    c, _, log = api
    with pytest.raises(ScoringError) as e:
        WinContext.from_options({key: value})
    r = c.post("/api/score", headers=AUTH, json={"hand": HAND, key: value})
    assert r.status_code == 422
    err = r.json()["error"]
    assert err["message"] == f"{key}: {e.value.message}" and err["fields"] == [{"field": key, "problem": e.value.message}]
    assert _batch_error({key: value}) == e.value.message
    assert log.count("score") == 0


def test_an_unknown_key_is_refused_with_the_same_words(api) -> None:
    c, _, _ = api
    r = c.post("/api/score", headers=AUTH, json={"hand": HAND, "self_drawm": True})
    http = r.json()["error"]["message"]
    batch = _batch_error({"self_drawm": True})
    options = ", ".join(WinContext.OPTIONS)
    for message in (http, batch):
        assert "unknown option(s) 'self_drawm'; allowed: " in message and message.endswith(options)
    assert r.status_code == 422


def test_good_options_score_the_same_on_the_command_line_and_over_http(api) -> None:
    c, _, _ = api
    options = {"self_drawn": True, "seat_wind": "S", "flowers": ["1f", "6f"], "last_tile": True}
    r = c.post("/api/score", headers=AUTH, json={"hand": HAND, **options})
    out = io.StringIO()
    assert run_batch([json.dumps({"hand": HAND, **options})], out) == 0
    line = json.loads(out.getvalue())
    assert r.status_code == 200 and r.json()["score"]["total"] == line["total"]
    assert r.json()["score"]["fans"] == line["fans"]


def _recognition(hand: str | None, tiles: list[str], uncertain=(), problems=()) -> dict:
    boxed = [{"tile": t, "box": [40 * i, 0, 40 * i + 38, 52], "confidence": 0.99, "sideways": False}
             for i, t in enumerate(tiles)]
    return {"tiles": boxed, "hand": hand, "uncertain": [dict(boxed[i], confidence=0.4) for i in uncertain],
            "melds": [], "concealed": tiles[:-1], "winning_tile": tiles[-1] if tiles else None, "flowers": [],
            "problems": list(problems), "notes": [], "seconds": 0.01, "image_size": [800, 600]}


NOT_A_WIN = _recognition("123456789mESWNP", [f"{n}m" for n in range(1, 10)] + ["E", "S", "W", "N", "P"])


@pytest.mark.parametrize("rec, options, code", [
    (_recognition(None, [], ()), {}, "no-tiles"),
    (_recognition(None, ["1m", "2m"], problems=["单放: no tile laid apart"]), {}, "layout"),
    (_recognition("123456789mEEENN", [f"{n}m" for n in range(1, 10)] + ["E", "E", "E", "N", "N"], uncertain=(3,)),
     {}, "uncertain"),
    (NOT_A_WIN, {}, "not-winning"),
])
def test_a_photo_that_cannot_be_scored_says_why_as_the_command_line_does(api, monkeypatch, rec, options, code) -> None:
    c, _, log = api
    scorer = c.app.state.scorer
    monkeypatch.setattr(scorer, "read_upload", lambda data, name, rules="mcr", min_confidence=None: {
        "recognition": rec, "photo": "k", "annotated": "/api/score/photo/k.jpg"})
    r = c.post("/api/score/photo", headers=AUTH, data={"options": json.dumps(options)},
               files={"photo": ("hand.png", b"png", "image/png")})
    assert r.status_code == 200, r.text
    d = r.json()
    expected = score_photo(lambda: rec, options, name="hand.png")
    assert expected.problem_code == code and d["problem"] == expected.problem and d["score"] is None
    assert d["recognition"] == rec and log.count("score") == 0


def test_a_photo_is_scored_with_its_own_flowers_unless_given(api, monkeypatch) -> None:
    c, _, log = api
    rec = dict(_recognition("123456789mEEENN", [f"{n}m" for n in range(1, 10)] + ["E", "E", "E", "N", "N"]),
               flowers=["2f", "7f"])
    monkeypatch.setattr(c.app.state.scorer, "read_upload",
                        lambda data, name, rules="mcr", min_confidence=None: {"recognition": rec, "photo": "k"})
    photo = {"photo": ("hand.png", b"png", "image/png")}
    d = c.post("/api/score/photo", headers=AUTH, data={"options": '{"self_drawn": true}'}, files=photo).json()
    assert d["problem"] is None and d["score"]["total"] - d["score"]["fan_points"] == 2
    assert d["score"] == score_photo(lambda: rec, {"self_drawn": True}).result.to_dict()
    d = c.post("/api/score/photo", headers=AUTH, data={"options": '{"self_drawn": true, "flowers": 0}'},
               files=photo).json()
    assert d["score"]["total"] == d["score"]["fan_points"]
    assert log.count("score") == 2


def test_bad_photo_options_are_refused_before_the_photo_is_read(api, monkeypatch) -> None:
    c, _, _ = api
    monkeypatch.setattr(c.app.state.scorer, "read_upload",
                        lambda data, name, rules="mcr", min_confidence=None: pytest.fail("the photo was read"))
    photo = {"photo": ("hand.png", b"png", "image/png")}
    for options, field in (('{"seat_wind": "Q"}', "options.seat_wind"), ('{"winner": "E"}', "options.winner"),
                           ('{"rules": "klingon"}', "rules 'klingon' unknown: allowed are mcr, mcr-1998, riichi"),
                           ('{"rules": "taiwan", "flowers": 2}', "option 'flowers' is not one of taiwan's"),
                           ('{"options": {"riichi": true}}', "options.options")):
        r = c.post("/api/score/photo", headers=AUTH, data={"options": options}, files=photo)
        assert r.status_code == 422 and field in r.json()["error"]["message"], r.text


# ---- a photo scored by another rule system (issue #20): the same use-case as `mjtable score-photo --rules X` ----

def _laid_recognition(rows: tuple[str, ...], rules: str) -> dict:
    """What the worker answers for a laid-out scene assembled for ``rules`` (vision.assemble), as plain data."""
    import sys
    from pathlib import Path

    import numpy as np
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vision"))
    from vision.assemble import assemble
    from vision.pipeline import Recognition
    from vision.synth import compose_scene
    from vision_scenes import as_detected, parse_row

    faces = {n: [np.full((80, 60, 3), 230, np.uint8)] for n in
             [f"{r}{s}" for s in "mps" for r in range(1, 10)] + list("ESWNCFP") + [f"{i}f" for i in range(1, 9)]}
    _, placed = compose_scene([parse_row(r) for r in rows], faces, np.random.default_rng(0))
    tiles = as_detected(placed)
    return Recognition(tuple(tiles), assemble(tiles, rules=rules), 0.01).to_dict()


TAIWAN_ROWS = ("1f 5f", "1m 2m 3m 4m 5m 6m 7m 8m 9m 2p 3p 4p 5s 5s 5s 8s | 8s")


def test_a_photo_is_scored_by_the_rule_system_asked_for(api, monkeypatch) -> None:
    c, _, log = api
    asked = []

    def read_upload(data, name, rules="mcr", min_confidence=None):
        asked.append(rules)
        return {"recognition": _laid_recognition(TAIWAN_ROWS, rules), "photo": "k"}

    monkeypatch.setattr(c.app.state.scorer, "read_upload", read_upload)
    photo = {"photo": ("hand.png", b"png", "image/png")}
    body = {"rules": "taiwan", "self_drawn": True, "seat_wind": "S", "options": {"per_tai": 30}}
    r = c.post("/api/score/photo", headers=AUTH, data={"options": json.dumps(body)}, files=photo)
    assert r.status_code == 200, r.text
    d = r.json()
    assert asked == ["taiwan"] and d["problem"] is None
    assert d["recognition"]["hand"] == "1f5f123456789m234p5558s8s"
    want = score_photo(lambda: _laid_recognition(TAIWAN_ROWS, "taiwan"),
                       {"rules": "taiwan", "self_drawn": True, "seat_wind": "S", "per_tai": 30})
    assert d["score"] == want.result.to_dict() and d["score"]["rules"] == "taiwan" and log.count("score") == 1
    # the same layout by MCR: 17 tiles do not add up
    r = c.post("/api/score/photo", headers=AUTH, data={"options": "{}"}, files=photo)
    assert asked[-1] == "mcr" and r.json()["problem"].startswith("layout: ") and log.count("score") == 1


def test_a_photo_with_a_tile_outside_the_system_is_refused_by_name(api, monkeypatch) -> None:
    c, _, log = api
    rows = ("1m 2m 3m 4p 5p 6p 7s 8s 9s E E E N | N",)
    monkeypatch.setattr(c.app.state.scorer, "read_upload",
                        lambda data, name, rules="mcr", min_confidence=None: {
                            "recognition": _laid_recognition(rows, rules), "photo": "k"})
    r = c.post("/api/score/photo", headers=AUTH, data={"options": '{"rules": "changsha"}'},
               files={"photo": ("hand.png", b"png", "image/png")})
    assert r.status_code == 200 and r.json()["score"] is None
    assert r.json()["problem"] == ("tile-not-in-set: hand.png shows E (an honour), N (an honour): changsha plays "
                                   "108: suits only") and log.count("score") == 0
    # an option of another system is refused before the photo is read, as on the command line
    monkeypatch.setattr(c.app.state.scorer, "read_upload",
                        lambda data, name, rules="mcr", min_confidence=None: pytest.fail("the photo was read"))
    r = c.post("/api/score/photo", headers=AUTH, data={"options": '{"rules": "changsha", "options": {"riichi": true}}'},
               files={"photo": ("hand.png", b"png", "image/png")})
    assert r.status_code == 422 and "option 'riichi' is not one of changsha's (it belongs to riichi)" in r.text


@pytest.mark.parametrize("path, body, zh", [
    ("/api/waits", {"hand": HAND[:-2], "flowers": 9}, "请求内容有误：花牌不能大于 8"),
    ("/api/waits", {"hand": HAND[:-2], "seen": 5}, "请求内容有误：已见的牌应为文字或列表"),
    ("/api/waits", {"hand": HAND[:-2], "seen": ["1m"] * 137}, "请求内容有误：已见的牌太多（最多 136 项）"),
    ("/api/shanten", {"hand": HAND, "sean": "1m"}, "请求内容有误：sean：不认识这一项"),
    ("/api/shanten", {}, "请求内容有误：手牌必须填写"),
    ("/api/score", {"hand": HAND, "flowers": 9}, "请求内容有误：花牌应为 0 到 8 的整数，或花牌的列表（1f-8f，每张一次）"),
    ("/api/score", {"hand": HAND, "seat_wind": ["E"]}, "请求内容有误：门风可选：E、S、W、N"),
    ("/api/score", {"hand": HAND, "selfdrawn": True}, "请求内容有误：selfdrawn：不认识这一项"),
    ("/api/waits", {"hand": HAND[:-2], "seen": [5]}, "请求内容有误：已见的牌的第 1 项应为文字"),
    ("/api/lift", [], "请求内容有误：请求应为对象"),
    ("/api/lift", {"direction": "sideways"}, "请求内容有误：升降方向可选：up、down"),
    ("/api/lift", {"direction": "up", "constrained-str": 1}, "请求内容有误：constrained-str：不认识这一项"),
    ("/api/match/photo", {"photo": "x", "winner": "E", "corrections": [5]}, "请求内容有误：改正的第 1 项应为对象"),
    # a key the body does not take is named as sent, even one that reads as a field or a union branch
    ("/api/match/hand", {"hand": HAND, "winner": "E", "self_drawn": True}, "请求内容有误：self_drawn：不认识这一项"),
    ("/api/score", {"hand": HAND, "Flowers": 1}, "请求内容有误：Flowers：不认识这一项"),
    ("/api/score", {"hand": HAND, "WinBody": 1, "Foo": 2}, "请求内容有误：WinBody：不认识这一项；Foo：不认识这一项"),
    ("/api/lift", None, "请求内容有误：请求为空（应为 JSON 对象）"),
])
def test_a_refused_body_is_said_in_chinese_by_the_pages_names_for_its_fields(api, path, body, zh) -> None:
    """The page shows ``message_zh`` as it is: the field by its label on the page, and what is wrong
    with it where the check is the framework's (a rule's own check says it in ``message``)."""
    c, _, _ = api
    r = c.post(path, headers=AUTH, **({"json": body} if body is not None else {}))
    assert r.status_code == 422
    err = r.json()["error"]
    assert err["message_zh"] == zh, err
    assert all("[" not in f["field"] and ".constrained" not in f["field"] for f in err["fields"])  # no union branch


@pytest.mark.parametrize("body, fields, zh", [
    ({"draw": False}, [{"field": "draw", "problem": "Input should be True"}], "请求内容有误：流局可选：true"),
    ({"hand": HAND, "winner": "Q"}, [{"field": "winner", "problem": "Input should be 'E', 'S', 'W' or 'N'"}],
     "请求内容有误：和牌者可选：E、S、W、N"),
    # as near to a draw by the count of errors, but a won hand by the keys sent
    ({"hand": HAND}, [{"field": "winner", "problem": "Field required"}], "请求内容有误：和牌者必须填写"),
    ({"hand": HAND, "winner": 5, "flowers": "x"},
     [{"field": "winner", "problem": "Input should be 'E', 'S', 'W' or 'N'"},
      {"field": "flowers", "problem": "Input should be a valid integer or a valid list"}],
     "请求内容有误：和牌者可选：E、S、W、N；花牌应为整数或列表"),
    # an empty edit is refused, not taken for a draw that would replace the recorded hand
    ({}, [{"field": "draw", "problem": "Field required"}], "请求内容有误：流局必须填写"),
])
def test_a_body_of_one_model_or_another_is_refused_by_the_nearer_one(api, body, fields, zh) -> None:
    """PUT /api/match/hands/N takes a won hand or a draw: a refused body is said by the model it comes
    nearest to, with no model's class name in it (not "WinBody.hand: Field required; DrawBody.draw...")."""
    c, _, _ = api
    r = c.put("/api/match/hands/1", headers=AUTH, json=body)
    assert r.status_code == 422
    err = r.json()["error"]
    assert err["fields"] == fields and err["message_zh"] == zh, err
    r = c.put("/api/match/hands/x", headers=AUTH, json={"draw": True})  # a path parameter: named, not "path"
    assert r.status_code == 422 and r.json()["error"]["message_zh"] == "请求内容有误：记录序号应为整数", r.text
    assert r.json()["error"]["fields"][0]["field"] == "hand_id"
    r = c.put("/api/match/hands/x", headers=AUTH, json=[])  # and the body's own problem, from another source
    assert r.json()["error"]["message_zh"] == "请求内容有误：记录序号应为整数；请求应为对象", r.text


def test_a_fault_id_beyond_the_logs_integers_is_refused_not_a_500(api) -> None:
    c, _, _ = api
    r = c.get("/api/faults/9223372036854775808/trace", headers=AUTH)
    assert r.status_code == 422 and r.json()["error"]["fields"][0]["field"] == "event_id", r.text
    r = c.get("/api/faults/9223372036854775807/trace", headers=AUTH)
    assert r.status_code == 404 and r.json()["error"]["code"] == "no-trace", r.text


@pytest.mark.parametrize("body, code, zh", [
    ({"hand": "123m456x"}, "syntax", "手牌写法有误（第 8 个字符）。"),
    ({"hand": HAND, "rules": "nosuch"}, "unknown-rules", "没有这个规则。"),
    ({"hand": "123m456m789m234pEE", "rules": "changsha"}, "tile-not-in-set", "这套规则不用这张牌（第 17 个字符）。"),
])
def test_a_hand_refused_by_post_score_is_said_in_chinese_too(api, body, code, zh) -> None:
    """POST /api/score answers a hand it cannot score as the match's routes do (match_api.scoring_error):
    the code, "code: message", and message_zh."""
    c, _, _ = api
    r = c.post("/api/score", headers=AUTH, json=body)
    assert r.status_code == 422, r.text
    err = r.json()["error"]
    assert err["code"] == code and err["message"].startswith(f"{code}: ") and err["message_zh"] == zh, err
