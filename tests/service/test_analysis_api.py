"""POST /api/waits and POST /api/shanten: the JSON of ``mjtable waits/shanten --json``, no token
needed (nothing is changed or recorded), bad hands and bad values refused with 422."""

from __future__ import annotations

from scoring.analysis import analyse_shanten, find_waits


def test_waits_answers_as_the_command_line(api) -> None:
    c, _, log = api
    before = len(log.events(limit=1000))
    r = c.post("/api/waits", json={"hand": "123m456m789m234p5s", "seen": "5s", "seat_wind": "S"})
    assert r.status_code == 200, r.text
    d = r.json()
    assert d == find_waits("123m456m789m234p5s", "5s", seat_wind="S").to_dict()
    assert [w["tile"] for w in d["waits"]] == ["5s"] and d["waits"][0]["unseen"] == 2
    assert d["waits"][0]["discard"]["total"] == 21 and d["waits"][0]["self_drawn"]["legal"]
    assert len(log.events(limit=1000)) == before  # analysis only: nothing recorded


def test_shanten_answers_as_the_command_line(api) -> None:
    c, _, _ = api
    r = c.post("/api/shanten", json={"hand": "[123m,1]456m789m23p5s6s1p"})
    assert r.status_code == 200, r.text
    d = r.json()
    assert d == analyse_shanten("[123m,1]456m789m23p5s6s1p").to_dict()
    assert d["shanten"] == 0 and d["by_shape"]["seven_pairs"] is None and d["discards"][0]["tile"] in ("5s", "6s")


def test_a_refused_hand_says_why_in_chinese_too(api) -> None:
    """The page shows ``message_zh`` in Chinese: each analysis refusal carries one, worded for the
    analysis (13 tiles for waits, 13 or 14 for shanten), the position of a syntax error included."""
    c, _, _ = api
    for path, hand, code, zh in (
            ("/api/waits", "123m456m789m234p5s5s", "already-winning", "已经和了"),
            ("/api/shanten", "123m456m789m", "tile-count", "13 或 14 张"),
            ("/api/waits", "123m456m789m234p", "tile-count", "听牌分析要 13 张"),
            ("/api/shanten", "11111m456m789m234p", "fifth-tile", "超过 4 张"),
            ("/api/waits", "123m456m789m234p5x", "syntax", "第 ")):
        e = c.post(path, json={"hand": hand}).json()["error"]
        assert e["code"] == code and zh in e["message_zh"], (hand, e)


def test_bad_hands_and_values_are_422_with_a_message(api) -> None:
    c, _, _ = api
    for path, body, words in (
            ("/api/waits", {"hand": "123m456m789m234p5s5s"}, "already-winning"),
            ("/api/waits", {"hand": "123m456m789m234p"}, "tile-count"),
            ("/api/shanten", {"hand": "11111m456m789m234p"}, "fifth-tile"),
            ("/api/shanten", {"hand": "123m456m789m234p5s", "seen": "5s5s5s5s"}, "fifth-tile"),
            ("/api/waits", {"hand": "123m456m789m234p5s", "self_drawn": True}, "self_drawn"),
            ("/api/waits", {"hand": "123m456m789m234p5s", "flowers": 9}, "flowers")):
        r = c.post(path, json=body)
        assert r.status_code == 422, (body, r.text)
        assert words in r.json()["error"]["code"] + r.json()["error"]["message"], r.text


def test_seen_tiles_as_a_string_or_a_list(api) -> None:
    # as `mjtable waits --seen 5s` and a --batch line's "seen": ["5s"]
    c, _, _ = api
    for path in ("/api/waits", "/api/shanten"):
        as_text = c.post(path, json={"hand": "123m456m789m234p5s", "seen": "5s1p"})
        as_list = c.post(path, json={"hand": "123m456m789m234p5s", "seen": ["5s", "1p"]})
        assert as_text.status_code == as_list.status_code == 200, as_list.text
        assert as_text.json() == as_list.json()
    r = c.post("/api/waits", json={"hand": "123m456m789m234p5s", "seen": ["5s", 3]})
    assert r.status_code == 422 and "seen" in r.text
    # a typo in the seen tiles is said of them, not of the hand (which is fine)
    r = c.post("/api/waits", json={"hand": "123m456m789m234p5s", "seen": "zz"})
    err = r.json()["error"]
    assert r.status_code == 422 and "seen tiles:" in err["message"] and err["message_zh"].startswith("已见的牌"), err
