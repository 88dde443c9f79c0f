"""Taiwan 16-tile: worked examples, payments, the property test and bad input.

Sources: SEED = ../shared/seeds/004_439ac0ac3d24f1c0.txt "十六張台灣麻將", item number given (the seed states
the 台 of each item and its combinations: "門清一摸三", "全求 … 加計獨聽1台, 共3台", "半求 … 含獨聽.自摸共3台",
"五暗坎 … 不計門清.對對胡; 如為自摸, 加計不求", "字一色 … 累計台數後減除4台"); CHH = https://chh.cx/archives/12 and
NH = nh48jid.com 台灣十六張麻將:台數表 for the items the seed leaves out. Each hand is built to show
the item; the expected total is what the source states for it.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import ScoringError, systems
from system_checks import assert_refused, check_result, situation, winning_hands

SEED = "seed 004 十六張台灣麻將"
A = "123m456m789m234p55s67s8s"          # concealed, all chows, no honours, two-sided wait (5s/8s)
FLUSH = "[234m,1]111m333m555m99m78m6m"  # one suit, three concealed pungs, waits 6m/9m
RON = {"discarder": "N", "seat_wind": "S"}
TSUMO = {"self_drawn": True, "seat_wind": "S"}

EXAMPLES = [  # (hand, options, total 台, keys counted, source)
    (A, RON, 3, {"concealed", "ping_hu"}, f"{SEED} 7: 平胡 2, 允許門清加1台"),
    (A, TSUMO, 3, {"concealed", "concealed_self_drawn"}, f"{SEED} 3-4: 門清一摸三"),
    ("[123m,1][456m,1][789p,1][234s,1][567s,1]9s9s", RON, 3, {"all_melded", "single_wait"}, f"{SEED} 5: 全求 共3台"),
    ("[123m,1][456m,1][789p,1][234s,1][567s,1]9s9s", TSUMO, 3, {"half_melded", "single_wait", "self_drawn"},
     f"{SEED} 6: 半求 含獨聽.自摸共3台"),
    ("[111m,1][222p,2]333s444s555m9p9p", RON, 7, {"all_pungs", "three_concealed", "single_wait"},
     f"{SEED} 8, 16, 11: 對對胡 4 + 三暗坎 2 + 獨聽 1"),
    ("[111m,1]222p333s444s555m9p9p", RON, 10, {"all_pungs", "four_concealed", "single_wait"},
     f"{SEED} 17, 8, 11: 四暗坎 5 + 對對胡 4 + 獨聽 1"),
    ("111m222p333s444s555m9p9p", TSUMO, 16, {"five_concealed", "concealed_self_drawn", "single_wait"},
     f"{SEED} 18: 五暗坎 13, 不計門清.對對胡, 自摸加計不求 2; 獨聽 1"),
    ("EEESSSWWWNNNCCCPP", {"self_drawn": True, "seat_wind": "S", "prevalent_wind": "E"}, 45,
     {"big_winds", "dragon", "concealed_self_drawn", "single_wait", "five_concealed", "all_honours",
      "all_honours_overlap"}, f"{SEED} 13: 字一色 16 不計對對胡, with 大四喜 減除4台; CHH 大四喜 16"),
    (FLUSH, RON, 14, {"full_flush", "three_concealed"}, f"{SEED} 14, 16: 清一色 12 + 三暗坎 2"),
    ("[234m,1]111m333m555mNN78m6m", RON, 6, {"half_flush", "three_concealed"}, f"{SEED} 15, 16: 湊一色 4 + 三暗坎 2"),
    ("[SSS,1]123m456p789s55s67s8s", {"discarder": "N", "seat_wind": "S", "prevalent_wind": "S"}, 2,
     {"seat_wind", "round_wind"}, f"{SEED} 1: 風字坎 合開門序1台, 合圈序加1台"),
    ("[CCC,1]123m456p789s55s67s8s", RON, 1, {"dragon"}, f"{SEED} 2: 箭字坎 1"),
    (A, {"discarder": "N", "seat_wind": "E"}, 4, {"dealer", "concealed", "ping_hu"}, f"{SEED} 9: 作莊 1 (胡)"),
    (A, {"discarder": "E", "seat_wind": "S"}, 4, {"dealer", "concealed", "ping_hu"}, f"{SEED} 9: 作莊 1 (放)"),
    (A, {"discarder": "N", "seat_wind": "E", "dealer_streak": 2}, 8, {"dealer", "streak", "concealed", "ping_hu"},
     f"{SEED} 10: 連N拉N 2N台; NH 連2拉2為5台 with 作莊"),
    (A, {**RON, "robbing_kong": True}, 4, {"concealed", "ping_hu", "robbing_kong"}, f"{SEED} 12: 搶槓 1"),
    ("123m456m789m234p55s68s7s", RON, 2, {"concealed", "single_wait"}, f"{SEED} 11: 獨聽 (中洞) 1, not 平胡 (非獨聽)"),
    (A, {**TSUMO, "last_tile": True}, 4, {"concealed", "concealed_self_drawn", "last_tile_draw"}, "CHH 海底撈月 1"),
    (A, {**RON, "last_tile": True}, 4, {"concealed", "ping_hu", "last_tile_discard"}, "CHH 河底撈魚 1"),
    ("[4444p]123m456m789m55s67s8s", {**TSUMO, "kong_replacement": True}, 4,
     {"concealed", "concealed_self_drawn", "kong_replacement"}, f"CHH 槓上開花 1; {SEED} 3 允許暗槓"),
    ("[CCC,1][FFF,1][PPP,1]123m55s67s8s", RON, 8, {"big_dragons"}, "CHH 大三元 8 (三元牌 not counted again)"),
    ("[CCC,1][FFF,1]123m456m78sPP9s", RON, 4, {"little_dragons"}, "CHH 小三元 4"),
    ("[EEE,1][SSS,1][WWW,1]123mNN78s9s", {**RON, "prevalent_wind": "E"}, 8, {"little_winds"}, "CHH 小四喜 8"),
    (A, {"self_drawn": True, "seat_wind": "E", "first_turn": True}, 25, {"dealer", "heaven"}, f"NH 天胡 24; {SEED} 9"),
    (A, {**TSUMO, "first_turn": True}, 16, {"earth"}, "NH 地胡 16"),
    (A, {**RON, "first_turn": True}, 10, {"human", "ping_hu"},
     "NH 人胡 8; SEED 7 平胡 2 (人胡 replaces 門清, docs/rules/taiwan.md)"),
    ("2f" + A, RON, 2, {"concealed", "seat_flower"}, "正花 1 (夏 is South's); 平胡 needs 無花 (SEED 7)"),
    ("1f2f3f4f6f" + A, RON, 4, {"concealed", "flower_set", "seat_flower"}, "花槓 2 + 正花 1 (蘭 6f is South's)"),
    ("1f2f3f4f5f6f7f8f" + A, RON, 9, {"concealed", "eight_flowers"}, "八仙過海 8, no flower item besides"),
]

@pytest.mark.parametrize("hand, opts, total, keys, source", EXAMPLES, ids=[e[4][:40] for e in EXAMPLES])
def test_worked_examples(hand, opts, total, keys, source) -> None:
    r = systems.score("taiwan", hand, opts)
    check_result(r)
    assert r.legal and {e.key for e in r.elements} == keys and r.total == total, (source, r.elements)


def test_payments_base_plus_per_tai() -> None:
    r = systems.score("taiwan", A, {"discarder": "N", "seat_wind": "E"})  # 4 台: the discarder pays 100 + 4 x 20
    assert r.payments == {"E": 180, "S": 0, "W": 0, "N": -180}
    r = systems.score("taiwan", A, {**TSUMO, "base": 50, "per_tai": 10})  # 3 台 each; the dealer 1 台 more
    assert r.payments == {"E": -90, "S": 250, "W": -80, "N": -80} and "dealer (E) pays 1" in r.notes[-1]
    r = systems.score("taiwan", A, {"self_drawn": True, "seat_wind": "E", "dealer_streak": 1})  # 3+1+2 = 6 台
    assert r.total == 6 and r.payments == {"E": 660, "S": -220, "W": -220, "N": -220}


@pytest.mark.parametrize("hand, opts, code, words", [
    ("123m456m789m234p0s5s67s8s", {}, "tile-not-in-set", "red five"),
    ("123m456m789m5s67s8s", {}, "tile-count", "a winning taiwan hand has 17"),
    ("123m456m789m234p55s67s8s1f", {}, "syntax", "winning tile comes last"),
    ("1f1f" + A, {}, "fifth-tile", "flower is written twice"),
    (A, {"riichi": True}, "unknown-option", "it belongs to riichi"),
    (A, {"flowers": 2}, "unknown-option", "taiwan takes"),
    (A, {"self_drawn": True, "robbing_kong": True}, "contradictory-flags", "搶槓"),
    ("123m456m789m234p55s67s9s", {}, "not-winning", "five sets"),
    (A, {"base": -1}, "bad-value", "base must be a whole number"),
])
def test_bad_input(hand, opts, code, words) -> None:
    assert_refused("taiwan", hand, opts, code, words)


@settings(max_examples=80, deadline=None)
@given(winning_hands(5, flowers=True), st.booleans(), st.sampled_from("ESWN"), st.sampled_from("ESWN"), st.integers(0, 3), st.booleans())
def test_property_total_is_sum_and_no_excluded_pair(hand, tsumo, seat, prevalent, streak, last) -> None:
    opts = {**situation(tsumo, seat), "prevalent_wind": prevalent, "dealer_streak": streak, "last_tile": last}
    try:
        r = systems.score("taiwan", hand, opts)
    except ScoringError as e:
        assert e.code in ("fifth-tile", "bad-meld"), e.message
        return
    check_result(r)
    assert r.payments is not None
