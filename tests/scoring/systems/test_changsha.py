"""Changsha (seed 004): worked examples, birds, dealer bonus, several winners, property test, bad input.

Sources: the seed's Changsha passages (../shared/seeds/004_439ac0ac3d24f1c0.txt: 基本规则 = "长沙麻将的一些实战技巧
漫谈 一、长沙麻将的基本规则", 指南 = "打长沙麻将指南技巧") for the hands, the 2/5/8 rule and the birds; the points
(小胡自摸 三家每人出2分, 小胡接炮 点炮方出1分, 大胡 6, 大胡可叠加, 起手胡算小胡自摸, 双豪华 3 / 三豪华 4 大胡) from
the public rules text of lixinpingfriend/dahhu (config_CSMJ.lua, "DAHHU" below). The examples set
``dealer_bonus`` off so that each payer pays the figure the source states; the 庄闲 bonus has its own test.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import ScoringError, systems
from scoring.systems.changsha import score_discard
from system_checks import assert_refused, check_result, situation, winning_hands

B, G, D = "seed 004 基本规则", "seed 004 指南", "DAHHU"
RON = {"discarder": "N", "seat_wind": "S", "dealer_bonus": False}
TSUMO = {"self_drawn": True, "seat_wind": "S", "dealer_bonus": False}
OPEN = {"opening": True, "seat_wind": "S", "dealer_bonus": False}
SMALL = "123m456m789m234p5s5s"

EXAMPLES = [  # (hand, options, points per payer, element keys, source)
    (SMALL, TSUMO, 2, {"small", "small_self_drawn"}, f"{D} 小胡自摸: 三家每人出2分"),
    (SMALL, RON, 1, {"small"}, f"{D} 小胡接炮: 点炮方出1分; {B} 2、5、8做将"),
    ("111m333p555s777m9m9m", RON, 6, {"all_pungs"}, f"{B} 碰碰胡…可任意做将; {D} 大胡接炮 点炮方出6分"),
    ("[123m,1]456m789m234m9m9m", RON, 6, {"full_flush"}, f"{B} 清一色…可任意做将"),
    ("1m1m3m3m4m4m6m6m7p7p9p9p1s1s", TSUMO, 6, {"seven_pairs"}, f"{B} 七小对…可任意做将; {D} 大胡自摸 每人出6分"),
    ("1111m3p3p4p4p6s6s7s7s9s9s", RON, 12, {"seven_pairs", "luxury"}, f"{D} 豪华七小对 (one quad: 2 big hands)"),
    ("1111m3333p4s4s6s6s9s9s", RON, 18, {"seven_pairs", "luxury"}, f"{D} 双豪华七小对 算3个大胡的分"),
    ("1111m3333p6666s7s7s", RON, 24, {"seven_pairs", "luxury"}, f"{D} 三豪华七小对 算4个大胡的分"),
    ("2m2m5m8m8m2p5p5p8p2s5s5s8s8s", RON, 6, {"all_258"}, f"{B} 乱将胡则只需要14张全是258就可以"),
    ("[222m,1][555p,2]888s222s5m5m", RON, 12, {"all_pungs", "all_258"}, f"{B} 乱将胡 可吃可碰; {D} 大胡可叠加"),
    ("[111m,1]333m555m777m9m9m", RON, 12, {"full_flush", "all_pungs"}, f"{D} 清一色碰碰胡,算两个大胡"),
    ("[123m,1][456p,1][789s,1][234m,1]7s7s", RON, 6, {"all_melded"}, f"{B} 全求人 可任意做将; {D} 单调牌可以不为258"),
    (SMALL, {**TSUMO, "last_tile": True}, 6, {"last_draw"}, f"{B} 赌海底 要求2、5、8做将; {D} 海底捞月 算大胡"),
    (SMALL, {**RON, "last_tile": True}, 6, {"last_discard"}, f"{D} 海底炮 胡牌后算大胡"),
    ("[1111m,1]456m789m234p5s5s", {**TSUMO, "kong_replacement": True}, 6, {"kong_flower"}, f"{B} 杠上开花; {G}"),
    (SMALL, {**RON, "kong_discard": True}, 6, {"kong_discard"}, f"{G} 打出的该补张牌杠上炮，大胡"),
    (SMALL, {**RON, "robbing_kong": True}, 6, {"robbing_kong"}, f"{B} 抢杠 要求2、5、8做将; {D} 抢杠胡"),
    (SMALL, {**TSUMO, "seat_wind": "E", "first_turn": True}, 6, {"heaven"}, f"{G} 天胡; {D} 天胡,单指庄家"),
    (SMALL, {**RON, "discarder": "E", "first_turn": True}, 6, {"earth"}, f"{D} 地胡,庄家打出第一张牌时闲家胡"),
    (SMALL, {**RON, "concealed_big": True}, 6, {"concealed"}, f"{D.split()[0]} 门清 house rule; seed 中高级提高班 门清也算大番子"),
    ("1111m234p567s789s", OPEN, 2, {"four_alike"}, f"{G} 四喜; {D} 起手胡算小胡自摸"),
    ("1m3m4m6m7m9m1p3p4p6p7p9p1s", OPEN, 2, {"no_258"}, f"{G} 板板胡; {D} 手中没有2,5,8的牌"),
    ("111m333p245s6789s", OPEN, 2, {"two_pungs"}, f"{G} 六六顺; {D} 手中有两个刻子"),
    ("123456789m2p3p5p5p", OPEN, 2, {"void_suit"}, f"{G} 缺一色; {D} 没有万条筒中任意一门"),
    ("1111m222p3p4p5p6p7p8p", OPEN, 6, {"four_alike", "two_pungs", "void_suit"}, f"{D} 起手胡…有几个算几次"),
]


@pytest.mark.parametrize("hand, opts, points, keys, source", EXAMPLES, ids=[e[4][:40] for e in EXAMPLES])
def test_worked_examples(hand, opts, points, keys, source) -> None:
    r = systems.score("changsha", hand, opts)
    check_result(r)
    assert r.legal and r.total == points and {e.key for e in r.elements} == keys, (source, r.elements)
    payers = [v for v in r.payments.values() if v < 0]
    assert all(v == -points for v in payers) and len(payers) == (3 if opts.get("self_drawn") or
                                                                  opts.get("opening") else 1)


@pytest.mark.parametrize("hand, opts", [
    ("123m456m789m234p4s4s", RON),  # 平胡 needs 2/5/8 eyes
    ("123m456m789m234p4s4s", {**TSUMO, "last_tile": True}),  # 海底捞月: 平胡需要258做将
    ("123m456m789m234p4s4s", {**RON, "robbing_kong": True}),  # 抢杠: 2、5、8做将
])
def test_the_258_pair_rule(hand, opts) -> None:
    r = systems.score("changsha", hand, opts)
    check_result(r)
    assert not r.legal and r.payments is None and "2, 5 or 8" in r.notes[0]


@pytest.mark.parametrize("opts, payments, source", [
    ({**RON, "birds": "1m"}, {"E": 0, "S": 2, "W": 0, "N": -2}, f"{G} 点炮时，鸟如果扎在胡牌方…点炮人出双倍分数"),
    ({**RON, "birds": "3m"}, {"E": 0, "S": 2, "W": 0, "N": -2}, f"{G} 鸟…扎在…点炮方，即为中鸟 (3 from S is N)"),
    ({**RON, "birds": "4m"}, {"E": 0, "S": 1, "W": 0, "N": -1}, f"{G} a bird on a seat not in the deal (E) counts nothing"),
    ({**RON, "birds": "5p9s"}, {"E": 0, "S": 4, "W": 0, "N": -4}, f"{B} 和牌为庄，抓到1、5、9…中鸟 (two birds: x4)"),
    ({**TSUMO, "birds": "9m"}, {"E": -4, "S": 12, "W": -4, "N": -4}, f"{G} 自摸时，鸟如果扎在胡牌方，即所有玩家给双倍分数"),
    ({**TSUMO, "birds": "2m"}, {"E": -2, "S": 8, "W": -4, "N": -2}, f"{G} 如果扎在别的玩家，只此一玩家给双倍分数"),
    ({**TSUMO, "birds": "3m", "bird_from": "dealer"}, {"E": -2, "S": 8, "W": -4, "N": -2},
     f"{G} 以庄家为起点…三为对家"),
    ({**TSUMO, "birds": "9m", "bird_rule": "add"}, {"E": -3, "S": 9, "W": -3, "N": -3}, "中鸟加分 house rule: +1 a bird"),
])
def test_birds(opts, payments, source) -> None:
    r = systems.score("changsha", SMALL, opts)
    check_result(r)
    assert r.payments == payments, (source, r.notes)


def test_dealer_bonus_is_one_point_more_with_the_dealer() -> None:
    r = systems.score("changsha", SMALL, {"self_drawn": True, "seat_wind": "S"})  # 庄闲 on by default
    assert r.payments == {"E": -3, "S": 7, "W": -2, "N": -2}  # DAHHU 庄闲: 与庄家相关的…输赢都多1分
    r = systems.score("changsha", SMALL, {"self_drawn": True, "seat_wind": "E"})
    assert r.payments == {"E": 9, "S": -3, "W": -3, "N": -3}


def test_several_winners_on_one_discard() -> None:
    results, net = score_discard({"S": SMALL, "W": "111m333p555s777m9m9m"}, "N", {"dealer_bonus": False})
    assert results["S"].total == 1 and results["W"].total == 6  # 通炮: each hand scored as if alone
    assert net == {"E": 0, "S": 1, "W": 6, "N": -7}
    with pytest.raises(ScoringError):
        score_discard({"N": SMALL}, "N")


@pytest.mark.parametrize("hand, opts, code, words", [
    ("123m456m789mEEE5s5s", {}, "tile-not-in-set", "is an honour"),
    ("1f123m456m789m234p5s5s", {}, "tile-not-in-set", "is a flower"),
    ("123m456m789m234p5s", {}, "tile-count", "has 14"),
    ("123m456m789m234p5s5s", {"opening": True, "seat_wind": "S"}, "tile-count", "has 13"),
    (SMALL, {"dora": "1m"}, "unknown-option", "it belongs to riichi"),
    (SMALL, {"gold": "5p"}, "unknown-option", "it belongs to fuzhou"),
    (SMALL, {"hand_limit": 1}, "unknown-option", "no rule system takes it"),
    (SMALL, {"self_drawn": True, "discarder": "N"}, "contradictory-flags", "discarder"),
    (SMALL, {"kong_replacement": True, "self_drawn": True}, "contradictory-flags", "needs a kong"),
    (SMALL, {"first_turn": True, "discarder": "N"}, "contradictory-flags", "天胡"),
    (SMALL, {"birds": "E"}, "tile-not-in-set", "bird E"),
    (SMALL, {"bird_rule": "triple"}, "bad-value", "bird_rule"),
    ("123m456m789m234p5s6s", {}, "not-winning", "2/5/8"),
])
def test_bad_input(hand, opts, code, words) -> None:
    assert_refused("changsha", hand, opts, code, words)


SUITED = [f"{r}{s}" for s in "mps" for r in range(1, 10)]


@settings(max_examples=100, deadline=None)
@given(st.one_of(winning_hands(4, SUITED, kongs=True), winning_hands(4, [t for t in SUITED if t[1] == "p"])),
       st.booleans(), st.sampled_from("ESWN"), st.text("1234569mps", max_size=4).filter(
           lambda b: not b or b[-1] in "mps"))
def test_property_total_is_sum_and_no_excluded_pair(hand, tsumo, seat, birds) -> None:
    try:
        r = systems.score("changsha", hand, {**situation(tsumo, seat), "birds": birds})
    except ScoringError as e:
        assert e.code in ("fifth-tile", "syntax"), e.message
        return
    check_result(r)
    if r.legal:
        assert r.total == (6 * r.details["big_hands"] if r.details["big_hands"] else 1 + tsumo)
