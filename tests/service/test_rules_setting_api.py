"""The table's rules over HTTP (issue #20): GET/PUT /api/settings carry ``rules``; picking a system
sets its gear and dice method; a gear that does not fit is refused with the reason in both languages."""

from __future__ import annotations

from service_support import AUTH, status_until, wait_state


def test_settings_list_the_rules_the_table_can_be_set_to(api) -> None:
    c, _, _ = api
    st = c.get("/api/settings").json()
    assert st["rules"] is None and st["scoring_rules"] == "mcr"
    choices = {x["name"]: x for x in st["rules_choices"]}
    assert {"mcr", "riichi", "taiwan", "changsha", "fuzhou", "classic", "northern"} <= set(choices)
    assert choices["changsha"]["tile_count"] == 108 and choices["changsha"]["dice_method"] == "sum-smaller"
    assert choices["taiwan"]["tile_count"] == 144 and choices["taiwan"]["dice_method"] is None


def test_picking_changsha_sets_the_108_gear_and_its_dice(api) -> None:
    c, control, log = api
    r = c.put("/api/settings", headers=AUTH, json={"rules": "changsha"})
    assert r.status_code == 200, r.text
    assert (r.json()["rules"], r.json()["tile_count"], r.json()["dice_method"]) == ("changsha", 108, "sum-smaller")
    st = status_until(c, lambda st: st["tile_count"] == 108, 10.0)
    assert st["tile_count"] == 108 and st["dice_method"] == "sum-smaller"
    # the page sends its whole form: rules with the gear and method they go with
    r = c.put("/api/settings", headers=AUTH, json={"rules": "changsha", "tile_count": 108, "dice_method": "sum-smaller",
                                                  "dealer": "S"})
    assert r.status_code == 200
    r = c.put("/api/settings", headers=AUTH, json={"tile_count": 136})
    assert r.status_code == 422
    err = r.json()["error"]
    assert "does not fit the table's rules" in err["message"] and "108" in err["message_zh"]
    assert c.get("/api/settings").json()["tile_count"] == 108  # nothing changed
    r = c.post("/api/cycle", headers=AUTH)
    assert r.status_code == 200
    st = wait_state(c, ["walls-up"])
    assert [w["stacks"] for w in st["walls"]] == [14, 13, 14, 13]
    assert any(e["data"]["changes"].get("rules") == "changsha" for e in log.events("settings"))


def test_unknown_rules_and_releasing_them(api) -> None:
    c, _, _ = api
    r = c.put("/api/settings", headers=AUTH, json={"rules": "tenhou"})
    assert r.status_code == 422 and "rules 'tenhou' unknown" in r.json()["error"]["message"]
    assert c.put("/api/settings", headers=AUTH, json={"rules": "riichi"}).json()["dice_method"] == "sum-count"
    r = c.put("/api/settings", headers=AUTH, json={"rules": "none", "tile_count": 144})
    assert r.status_code == 200 and r.json()["rules"] is None and r.json()["tile_count"] == 144
    assert r.json()["dice_method"] == "two-throw"
