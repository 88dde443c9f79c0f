"""A match scored by the table's rules (issue #20): a match started at a table set to Changsha or
riichi scores its hands by that system, with the deal's winds, the system's own options and its
payments per seat, and the sheet adds them up; what belongs to another system is refused."""

from __future__ import annotations

import scoring.systems
from service_support import AUTH

SMALL = "123m456m789m234p5s5s"        # Changsha: a small win (平胡) on a 2/5/8 pair
RIICHI = "234456m66p12344s4s"         # the mahjong package's riichi test hand, winning 4s


def new_match(c, **body) -> dict:
    r = c.post("/api/match/new", headers=AUTH, json=body)
    assert r.status_code == 200, r.text
    return r.json()["sheet"]


def test_a_changsha_match_scores_and_pays_by_changsha(api) -> None:
    c, _, log = api
    assert c.put("/api/settings", headers=AUTH, json={"rules": "changsha"}).status_code == 200
    sh = new_match(c)
    assert sh["rules"] == "changsha" and sh["unit"] == "points" and sh["rules_zh"] == "长沙麻将"
    names = {o["name"] for o in sh["options"]}
    assert {"birds", "dealer_bonus", "opening"} <= names and not names & {"seat_wind", "discarder", "self_drawn"}
    cur = sh["current"]
    assert cur["dealer"] == "E" and cur["seat_winds"]["E"] == "E"
    # the dealer (E) wins on W's discard; 庄闲 off: the discarder pays 1 (seed 004, 小胡接炮)
    r = c.post("/api/match/hand", headers=AUTH, json={"hand": SMALL, "winner": "E", "discarder": "W",
                                                      "options": {"dealer_bonus": False}})
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["score"]["rules"] == "changsha" and {e["key"] for e in d["score"]["elements"]} == {"small"}
    h = d["sheet"]["hands"][0]
    by_side = {side: h["points"][cur["players"][side]] for side in "ESWN"}
    assert by_side == {"E": 1, "S": 0, "W": -1, "N": 0} and h["unit"] == "points" and h["rules"] == "changsha"
    assert sum(d["sheet"]["totals"]) == 2000
    ev = log.events("score")[-1]["data"]
    assert ev["rules"] == "changsha" and ev["payments"] == {"E": 1, "S": 0, "W": -1, "N": 0}
    # hand 2: the dealer is S now, so S is East; N self-draws with the dealer bonus on (the default)
    cur2 = d["sheet"]["current"]
    assert cur2["dealer"] == "S"
    expect = scoring.systems.score("changsha", SMALL, {"self_drawn": True, "seat_wind": cur2["seat_winds"]["N"]})
    side_of = {w: s for s, w in cur2["seat_winds"].items()}
    r = c.post("/api/match/hand", headers=AUTH, json={"hand": SMALL, "winner": "N"})
    assert r.status_code == 200, r.text
    h = r.json()["sheet"]["hands"][1]
    got = {side: h["points"][cur2["players"][side]] for side in "ESWN"}
    assert got == {side_of[w]: v for w, v in expect.payments.items()} and got["S"] < got["E"] < 0 < got["N"]


def test_what_belongs_to_another_system_is_refused(api) -> None:
    c, _, log = api
    c.put("/api/settings", headers=AUTH, json={"rules": "changsha"})
    new_match(c)
    for body, words in (
            ({"hand": SMALL, "winner": "E", "fourth_tile": True}, "fourth_tile"),
            ({"hand": SMALL, "winner": "E", "options": {"dora": "3m"}}, "dora"),
            ({"hand": SMALL, "winner": "E", "options": {"seat_wind": "S"}}, "come from the deal"),
            ({"hand": SMALL, "winner": "E", "rules": "mcr"}, "scored by changsha"),
            ({"hand": SMALL, "winner": "E", "flowers": 2}, "flowers"),
            ({"hand": "123m456m789m234p6s6s", "winner": "E", "discarder": "S"}, "二五八将"),
            ({"hand": "123m456m789m234p5z5z", "winner": "E"}, "")):
        r = c.post("/api/match/hand", headers=AUTH, json=body)
        assert r.status_code == 422, (body, r.text)
        err = r.json()["error"]
        assert words in err["message"] and err["message_zh"], (body, err)
    assert log.count("score") == 0


def test_a_riichi_match_and_an_mcr_match_side_by_side(api) -> None:
    c, _, _ = api
    sh = new_match(c, rules="riichi")
    assert sh["rules"] == "riichi" and sh["unit"] == "han"
    r = c.post("/api/match/hand", headers=AUTH, json={"hand": RIICHI, "winner": "S", "discarder": "E",
                                                      "options": {"riichi": True}})
    assert r.status_code == 200, r.text
    sc = r.json()["score"]
    assert "Riichi" in {e["key"] for e in sc["elements"]} and sc["payments"]["E"] < 0
    h = r.json()["sheet"]["hands"][0]
    assert sum(h["points"]) == 0 and h["total"] == sc["total"]
    # a match started without rules takes the table's: none set, so MCR; MCR takes no system options
    sh = new_match(c)
    assert sh["rules"] == "mcr" and sh["unit"] == "fan"
    r = c.post("/api/match/hand", headers=AUTH, json={"hand": "123m456m789m234p5s5s", "winner": "E",
                                                      "options": {"riichi": True}})
    assert r.status_code == 422 and "other rule systems" in r.json()["error"]["message"]
    r = c.post("/api/match/new", headers=AUTH, json={"rules": "mahjong-soul"})
    assert r.status_code == 422 and "unknown" in r.json()["error"]["message"]
