"""The northern push-down rules (seed 004, 麻将规则（第4稿）): worked examples, kongs, 跟庄, property test, bad input.

Every expected payment is the seed's own table and words: 番数相加；一番乘2，二番4，三番8，四番16，五番32; 平点 20,
庄点 30, 点庄 40, 平摸 40 (庄20, 平10), 庄摸 60 (各家20); 每盘最高番数不超过6番, 每人最多输640, 庄家本应输1280 也降低为640;
明杠 10 谁打谁付, 暗杠 20 每家都付, 杠不上楼; 跟庄 庄家付给每家10元; the fan values of item 6. The item is named in
each case.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import ScoringError, systems
from scoring.systems.northern import follow_dealer_payments
from system_checks import TILES, assert_refused, check_result, situation, winning_hands

S = "seed 004 第4稿"
TSUMO = {"self_drawn": True, "seat_wind": "S"}
RON = {"discarder": "N", "seat_wind": "S"}
OPEN_PLAIN = "[123m,1]456p789s234s5m5m"
CONCEALED_PLAIN = "123m456p789s234s5m5m"
PUNGS = "111m333p555s777s9m9m"


def pay(e=0, s=0, w=0, n=0):
    return {"E": e, "S": s, "W": w, "N": n}


EXAMPLES = [  # (hand, options, fans, payments, source)
    (OPEN_PLAIN, TSUMO, 0, pay(-20, 40, -10, -10), f"{S} 6(1) 推倒和 不算番，只记底数; 9 平摸:40,其中庄20,平10"),
    (OPEN_PLAIN, {**TSUMO, "seat_wind": "E"}, 0, pay(60, -20, -20, -20), f"{S} 9 庄摸:60,各家20"),
    (CONCEALED_PLAIN, TSUMO, 0, pay(-20, 40, -10, -10), f"{S} 6(1): 门清 is not in the list, still 推倒和 (choice)"),
    (CONCEALED_PLAIN, {**TSUMO, "plain_extras": True}, 1, pay(-40, 80, -20, -20), "house rule plain_extras: 门清 1, 一番乘2"),
    ("[111m,1]333p555s777s9m9m", TSUMO, 1, pay(-40, 80, -20, -20), f"{S} 6(3) 对对和 加1番; 一番乘2"),
    (PUNGS, RON, 2, pay(0, 80, 0, -80), f"{S} 6(2) 门清 + 6(3) 对对和; 平点:20, 二番4"),
    (PUNGS, {"discarder": "N", "seat_wind": "E"}, 2, pay(120, 0, 0, -120), f"{S} 9 庄点:30, 二番4"),
    (PUNGS, {"discarder": "E", "seat_wind": "S"}, 2, pay(-160, 160, 0, 0), f"{S} 9 点庄:40, 二番4"),
    ("[123m,1]456m678mEEE5m5m", TSUMO, 0, pay(-20, 40, -10, -10), f"{S} 6(4) 混一色, not in 6(1)'s list: 推倒和"),
    ("[123m,1]456m678mEEE5m5m", {**TSUMO, "plain_extras": True}, 1, pay(-40, 80, -20, -20),
     f"{S} 6(4) 混一色 加1番 (house rule plain_extras)"),
    ("[111m,1]333m555mEEE7m7m", TSUMO, 2, pay(-80, 160, -40, -40), f"{S} 6(3) 对对和 + 6(4) 混一色; 二番4"),
    ("[123m,1][456p,1][789s,1][EEE,1]5m5m", TSUMO, 1, pay(-40, 80, -20, -20), f"{S} 6(5) 大钓 加1番"),
    ("123p46m789s11sEEE5m", RON, 2, pay(0, 80, 0, -80), f"{S} 6(6) 捉五魁 + 门清; 二番4"),
    (OPEN_PLAIN, {**TSUMO, "last_tile": True}, 1, pay(-40, 80, -20, -20), f"{S} 6(7) 海底捞月 加1番"),
    (CONCEALED_PLAIN, {**RON, "last_tile": True}, 2, pay(0, 80, 0, -80), f"{S} 6(7) 最后一张所出的牌…放了铳，也是海底捞月"),
    ("[123m,1]456m789m234p5s5s", TSUMO, 3, pay(-160, 320, -80, -80), f"{S} 6(8) 一条龙 3番; 三番8"),
    ("1m1m3m3m5p5p7p7p9s9sEESS", TSUMO, 5, pay(-640, 1280, -320, -320), f"{S} 6(9) 七对 4番 + 门清; 五番32"),
    ("1111m3m3m5p5p7p7p9s9sEE", TSUMO, 6, pay(-640, 1920, -640, -640),
     f"{S} 6(13) 豪华七对子 +1; 8 闲家输640, 庄家本应输1280, 也降低为640"),
    ("[123m,1]345m678m999m5m5m", TSUMO, 5, pay(-640, 1280, -320, -320), f"{S} 6(11) 清一色 5番; 五番32"),
    ("[1111m,1]456p789s234s5m5m", {**TSUMO, "kong_replacement": True}, 1, pay(-50, 90, -20, -20),
     f"{S} 6(10) 杠上开花 加1番; 7 明杠10元…谁打谁付 (from E, the left)"),
    ("123m456m789m234m5m5m", TSUMO, 6, pay(-640, 1920, -640, -640), f"{S} 8 每盘最高番数不超过6番 (9 fans)"),
    (OPEN_PLAIN, {**TSUMO, "floors": 2}, 2, pay(-80, 160, -40, -40), f"{S} 3 上楼…仅有2层 (each floor doubles: choice)"),
    ("[1111m]456p789s234s5m5m", TSUMO, 0, pay(-40, 100, -30, -30), f"{S} 7 暗杠20…赢了每家都付20; 暗杠算门清"),
    ("[1111m]456p789s234s5m5m", {**TSUMO, "floors": 1}, 1, pay(-60, 140, -40, -40), f"{S} 7 杠不上楼"),
    ("[1111m,2]456p789s234s5m5m", TSUMO, 0, pay(-20, 50, -10, -20), f"{S} 7 明杠10元 (offer 2: across, N)"),
    (PUNGS, {"discarder": "W", "seat_wind": "S", "robbing_kong": True}, 2, pay(0, 80, -80, 0),
     f"{S} 4 门清…可以抢杠和，算做捉铳"),
]


@pytest.mark.parametrize("hand, opts, fans, payments, source", EXAMPLES, ids=[e[4][:40] for e in EXAMPLES])
def test_worked_examples(hand, opts, fans, payments, source) -> None:
    r = systems.score("northern", hand, opts)
    check_result(r)
    assert r.legal and r.total == fans and r.payments == payments, (source, r.elements, r.payments)


@pytest.mark.parametrize("hand, opts, words", [
    ("[111m,1]333p555s777s9m9m", RON, "吃碰后只能自摸"),
    (CONCEALED_PLAIN, RON, "推倒和只能自摸"),
    ("[111m,1]333p555s777s9m9m", {"discarder": "W", "seat_wind": "S", "robbing_kong": True}, "吃碰后只能自摸"),
])
def test_wins_on_a_discard_need_a_concealed_hand_and_a_pattern(hand, opts, words) -> None:
    r = systems.score("northern", hand, opts)
    check_result(r)
    assert not r.legal and r.payments is None and words in r.notes[0]


def test_follow_the_dealer() -> None:
    assert follow_dealer_payments() == {"E": -30, "S": 10, "W": 10, "N": 10}  # 7 跟庄,庄家付给每家10元
    with pytest.raises(ScoringError):
        follow_dealer_payments("X")


@pytest.mark.parametrize("hand, opts, code, words", [
    ("123m456p789s234s5m", {}, "tile-count", "has 14"),
    ("1f" + OPEN_PLAIN, {}, "tile-not-in-set", "is a flower"),
    ("[123m,1]406p789s234s5m5m", {}, "tile-not-in-set", "red five"),
    (OPEN_PLAIN, {"gold": "5p"}, "unknown-option", "it belongs to fuzhou"),
    (OPEN_PLAIN, {"birds": "1m"}, "unknown-option", "it belongs to changsha"),
    (OPEN_PLAIN, {"floors": 3}, "bad-value", "floors"),
    (OPEN_PLAIN, {"kong_replacement": True, "self_drawn": True}, "contradictory-flags", "needs a kong"),
    (PUNGS, {"robbing_kong": True, "self_drawn": True}, "contradictory-flags", "抢杠和"),
    ("[123m,1]456p789s234s5m6m", {}, "not-winning", "seven pairs"),
])
def test_bad_input(hand, opts, code, words) -> None:
    assert_refused("northern", hand, opts, code, words)


@settings(max_examples=100, deadline=None)
@given(winning_hands(4, TILES, kongs=True), st.booleans(), st.sampled_from("ESWN"), st.integers(0, 2),
       st.booleans())
def test_property_total_is_sum_and_no_excluded_pair(hand, tsumo, seat, floors, last) -> None:
    try:
        r = systems.score("northern", hand, {**situation(tsumo, seat), "floors": floors, "last_tile": last})
    except ScoringError as e:
        assert e.code == "fifth-tile", e.message
        return
    check_result(r)
    if r.legal:
        assert 0 <= r.total <= 6 and all(v <= 640 for v in r.details["hand_payments"].values())
