"""The classic doubling table (seed 004, first passage): worked examples, payments, property test, bad input.

Every expected value is the seed's own table: 无番 自摸40（点炮20）, 单番 80（40）, 满贯 160（80）, 双满贯 320（160）,
四满贯 640（320）, 八满贯 1280（640）, with the pattern and heading named in each case, and its notes
(风圈与风位重叠则为双番; 杠上开花牌型不满贯按满贯计，超过满贯牌型按实际牌型计; the 全包 cases; 买马 翻翻).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import ScoringError, systems
from system_checks import TILES, assert_refused, check_result, situation, winning_hands

S = "seed 004 经典麻将规则"
RON = {"discarder": "N", "seat_wind": "S", "prevalent_wind": "S"}
TSUMO = {"self_drawn": True, "seat_wind": "S", "prevalent_wind": "S"}
HALF = "123m456m789mWWW5m5m"  # 混一色, the West pung scores nothing for seat S in the South round

EXAMPLES = [  # (hand, options, value, pattern key, source)
    (HALF, RON, 20, "half_flush", f"{S} 无番 点炮20 a混一色"),
    (HALF, TSUMO, 40, "half_flush", f"{S} 无番自摸40 a混一色"),
    ("[111m,1][333p,1]555s777mWW", RON, 20, "all_pungs", f"{S} 无番 点炮20 b对对胡"),
    ("123m456m789mSSS5m5m", {**RON, "prevalent_wind": "E"}, 40, "half_flush", f"{S} 单番 点炮40: 本位风刻"),
    ("[111m,1][333p,1]555sCCCWW", TSUMO, 80, "all_pungs", f"{S} 单番自摸80 b对对胡 + 中发白刻"),
    ("123m456m789mEEE5m5m", {"discarder": "S", "seat_wind": "E", "prevalent_wind": "E"}, 80, "half_flush",
     f"{S} 满贯 点炮80: 双番风刻; 风圈与风位重叠则为双番"),
    ("123m456mCCCFFF5m5m", RON, 80, "half_flush", f"{S} 满贯 点炮80: 中发白刻任意有两副"),
    ("123mCCCFFFSSS5m5m", RON, 80, "half_flush", f"{S} 满贯 is the limit of 混一色 with honour pungs (choice)"),
    ("123m456m789m234m5m5m", RON, 80, "full_flush", f"{S} 满贯 点炮80 c清一色"),
    ("123m456m789m234m5m5m", TSUMO, 160, "full_flush", f"{S} 满贯自摸160 c清一色"),
    ("[111m,1][333m,1]555mEEE9m9m", RON, 80, "half_flush_pungs", f"{S} 满贯 点炮80 d混一色对对胡"),
    ("[1111m,1]456m789mWWW5m5m", {**TSUMO, "kong_replacement": True}, 160, "kong_flower",
     f"{S} 满贯自摸160 e杠上开花"),
    ("[1111m,1]456m789p234s5s5s", {**TSUMO, "kong_replacement": True}, 160, "kong_flower",
     f"{S} 杠上开花牌型不满贯按满贯计"),
    ("[1111m,1][333m,1]555m777m9m9m", {**TSUMO, "kong_replacement": True}, 320, "full_flush_pungs",
     f"{S} 超过满贯牌型按实际牌型计: 双满贯自摸320 b清一色对对胡"),
    ("[111m,1][999p,1]111sEEE9s9s", RON, 160, "mixed_terminal_pungs", f"{S} 双满贯 点炮160 a一九对"),
    ("[111m,1][333m,1]555m777m9m9m", RON, 160, "full_flush_pungs", f"{S} 双满贯 点炮160 b清一色对对胡"),
    ("111m333p555s777mWW", TSUMO, 640, "four_concealed", f"{S} 四满贯自摸640 a四暗刻"),
    ("123m456pCCCFFFPP", RON, 320, "little_dragons", f"{S} 四满贯 点炮320 b小三元"),
    ("[111m,1][999m,1]111p999s1s1s", RON, 320, "terminal_pungs", f"{S} 四满贯 点炮320 c净一九对对胡"),
    ("[EEE,1][SSS,1]WWWCCCFF", RON, 320, "all_honours", f"{S} 四满贯 点炮320 d风一色"),
    ("1m9m1s9s1p9pESWNCFPP", TSUMO, 1280, "thirteen_orphans", f"{S} 八满贯自摸1280 a十三幺"),
    ("[EEE,1][SSS,1][WWW,1]NNN5m5m", RON, 640, "four_winds", f"{S} 八满贯 点炮640 b四喜"),
    ("[CCC,1][FFF,1]PPP123m5m5m", RON, 640, "big_dragons", f"{S} 八满贯 点炮640 c大三元"),
    ("[1111m,1][2222p,1][3333s,1][EEEE]5m5m", TSUMO, 1280, "four_kongs", f"{S} 八满贯自摸1280 d十八罗汉"),
]


@pytest.mark.parametrize("hand, opts, value, pattern, source", EXAMPLES, ids=[e[4][19:] for e in EXAMPLES])
def test_worked_examples(hand, opts, value, pattern, source) -> None:
    r = systems.score("classic", hand, opts)
    check_result(r)
    assert r.legal and r.details["value"] == value and r.elements[0].key == pattern, (source, r.elements)
    paid = -min(r.payments.values())
    assert paid == value  # each payer pays the value: the discarder alone, or each other seat when self-drawn


@pytest.mark.parametrize("hand, opts, payments, source", [
    ("[123m,1][456m,1][789m,1][WWW,1]5m5m", {**TSUMO, "liable": "W"}, {"E": 0, "S": 120, "W": -120, "N": 0},
     f"{S} 如果自摸家有人出牌使其十二张落地，则出牌人全包"),
    (HALF, {"seat_wind": "S", "prevalent_wind": "S", "robbing_kong": True, "discarder": "W"},
     {"E": 0, "S": 120, "W": -120, "N": 0}, f"{S} 抢明杠算自摸，由开杠人全包"),
    ("[1111m,1]456m789mWWW5m5m", {**TSUMO, "kong_replacement": True, "liable": "N"},
     {"E": 0, "S": 480, "W": 0, "N": -480}, f"{S} 出牌致开杠人杠上开花，出牌人全包"),
    (HALF, {**TSUMO, "horse_hit": True}, {"E": -80, "S": 240, "W": -80, "N": -80}, f"{S} 可自摸奖励一手买马，买中翻翻"),
])
def test_payments_and_full_liability(hand, opts, payments, source) -> None:
    r = systems.score("classic", hand, opts)
    check_result(r)
    assert r.payments == payments, source


def test_a_hand_without_a_pattern_is_not_a_win() -> None:
    r = systems.score("classic", "123m456m789m234p5m5m", RON)
    check_result(r)
    assert not r.legal and r.total == 0 and "20起步" in r.notes[0]


@pytest.mark.parametrize("hand, opts, code, words", [
    ("1f123m456m789mWWW5m5m", {}, "tile-not-in-set", "is a flower"),
    ("123m456m789mWWW5m", {}, "tile-count", "a winning classic hand has 14"),
    (HALF, {"dora": "1m"}, "unknown-option", "it belongs to riichi"),
    (HALF, {"dealer_streak": 1}, "unknown-option", "it belongs to taiwan"),
    (HALF, {"liable": "N"}, "contradictory-flags", "liable"),
    (HALF, {"robbing_kong": True}, "contradictory-flags", "made the kong"),
    (HALF, {"kong_replacement": True, "self_drawn": True}, "contradictory-flags", "needs a kong"),
    ("123m456m789mWWW5m6m", {}, "not-winning", "four sets and a pair"),
])
def test_bad_input(hand, opts, code, words) -> None:
    assert_refused("classic", hand, opts, code, words)


@st.composite
def hands(draw):
    """Four sets and a pair; a suit or two with honours are likely, so that patterns show up."""
    pool = draw(st.sampled_from([TILES, [t for t in TILES if t[-1] in "mESWNCFP"], [t for t in TILES if t[-1] == "p"],
                                 list("ESWNCFP") + ["1m", "9m", "1s", "9p"]]))
    return draw(winning_hands(4, pool, kongs=True))


@settings(max_examples=100, deadline=None)
@given(hands(), st.booleans(), st.sampled_from("ESWN"), st.sampled_from("ESWN"))
def test_property_total_is_sum_and_no_excluded_pair(hand, tsumo, seat, prevalent) -> None:
    opts = {**situation(tsumo, seat), "prevalent_wind": prevalent}
    try:
        r = systems.score("classic", hand, opts)
    except ScoringError as e:
        assert e.code == "fifth-tile", e.message
        return
    check_result(r)
    if r.legal:
        assert r.details["value"] == 20 * 2 ** r.total and -min(r.payments.values()) == r.details["value"]
