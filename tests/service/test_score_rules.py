"""POST /api/score with ``rules`` other than MCR."""

from __future__ import annotations

from service_support import AUTH


def test_score_by_another_rule_system(api) -> None:
    c, _, _ = api
    r = c.post("/api/score", headers=AUTH, json={"hand": "12345678s234m55p9s", "rules": "riichi", "self_drawn": True,
                                                  "seat_wind": "S", "options": {"riichi": True}})
    assert r.status_code == 200, r.text
    assert r.json()["score"]["total"] == 5 and r.json()["score"]["payments"]["S"] == 8000
    r = c.post("/api/score", headers=AUTH, json={"hand": "12345678s234m55p9s", "rules": "riichi",
                                                  "options": {"flowers": 2}})
    assert r.status_code == 422 and "belongs to mcr" in r.json()["error"]["message"]
    r = c.post("/api/score", headers=AUTH, json={"hand": "12345678s234m55p9s", "rules": "nosuch"})
    assert r.status_code == 422 and "allowed are" in r.json()["error"]["message"]
    r = c.post("/api/score", headers=AUTH, json={"hand": "12345678s234m55p9s", "rules": "riichi", "winner": "S",
                                                  "discarder": "N"})
    assert r.status_code == 422 and "winner" in r.json()["error"]["message"]  # a calculator: nothing is recorded
