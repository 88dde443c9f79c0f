"""Fuzhou (seed 002): worked examples, the gold, flower counting, special hands, payments, property test,
bad input.

The seed gives the rules and the formulas but no worked hands, so each example below is a hand built
for one rule, with the value the seed's formula states for it (1.8.2: 有加番牌型时 积分数=底分*（花数*2+番数）;
无加番牌型时 自摸积分数=底分*（花数*2）each, 捉铳积分数=底分*花数), the rule named in the source column. The 17-tile
hands are the 16-tile game's (atom-chen/shisanshui-1 play_mode_config_fuzhou.lua: MahjongHandCount = 16,
144 tiles), scored with the same formulas.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import ScoringError, systems
from system_checks import assert_refused, check_result, situation, winning_hands

S = "seed 002 福州麻将"
G = {"gold": "5p"}
TSUMO = {**G, "self_drawn": True, "seat_wind": "S"}
RON = {**G, "discarder": "N", "seat_wind": "S"}
PLAIN = "123m456m789m234p1s1s"

EXAMPLES = [  # (hand, options, points per payer, paid by all three?, element keys, source)
    (PLAIN, TSUMO, 30, True, {"plain"}, f"{S} 1.8.1 平胡: 一张花都没抓到且没开过杠 (30番); 花数 0"),
    (PLAIN, RON, 30, True, {"plain"}, f"{S} 1.8.1 加番牌型…按自摸算 (choice: each pays)"),
    ("1fC" + PLAIN, TSUMO, 4, True, {"flower", "honour", "doubled"}, f"{S} 1.4 中…作为花牌; 1.8.2 自摸 底分*（花数*2）"),
    ("1fC" + PLAIN, RON, 2, False, {"flower", "honour"}, f"{S} 1.8.2 捉铳积分数=底分*花数"),
    ("123m456m789m234p5p5p", TSUMO, 70, True, {"gold_pair", "plain_bonus"}, f"{S} 1.8.1 金雀 60番, 还能达成平和 再加10番"),
    ("1f123m456m789m234p5p5p", TSUMO, 62, True, {"flower", "doubled", "gold_pair"}, f"{S} 金雀 60 + 花数 1 x 2"),
    ("1m4m7m2s5s8s3p6p9p1s4s5p5p5p", TSUMO, 50, True, {"three_golds", "plain_bonus"},
     f"{S} 三金倒: 抓到三个金，不管其他牌如何就可和牌（40番）+ 平和 10"),
    ("2f1m4m7m2s5s8s3p6p9p1s4s5p5p5p", TSUMO, 42, True, {"flower", "doubled", "three_golds"}, f"{S} 三金倒 40 + 1 x 2"),
    (PLAIN, {**TSUMO, "rob_gold": True}, 40, True, {"rob_gold", "plain_bonus"}, f"{S} 抢金 30番, 还能达成平和 再加10番"),
    ("1f2f" + PLAIN, {**RON, "rob_gold": True}, 34, True, {"flower", "doubled", "rob_gold"}, f"{S} 抢金 30 + 2 x 2"),
    ("[1111m,1]456m789m234p1s1s", TSUMO, 2, True, {"exposed_kong", "doubled"}, f"{S} 1.4 一个明杠计1朵花"),
    ("[1111m,1]456m789m234p1s1s", RON, 1, False, {"exposed_kong"}, f"{S} 明杠 1; 捉铳 底分*花数"),
    ("[1111m,5]456m789m234p1s1s", TSUMO, 2, True, {"exposed_kong", "doubled"}, f"{S} 明杠 (加杠 is exposed)"),
    ("[1111m]456m789m234p1s1s", TSUMO, 4, True, {"concealed_kong", "doubled"}, f"{S} 1.4 暗杠计2朵花"),
    ("1f2f3f4f" + PLAIN, TSUMO, 12, True, {"flower", "flower_kong", "doubled"},
     f"{S} 1.4 抓齐春、夏、秋、冬…算作花暗杠，再额外计2朵花"),
    ("CCCC" + PLAIN, TSUMO, 12, True, {"honour", "flower_kong", "doubled"}, f"{S} 1.4 抓齐四个一样的花…再额外计2朵花"),
    ("1f2f3f4f5f6f7f8f" + PLAIN, TSUMO, 24, True, {"flower", "flower_kong", "doubled"}, f"{S} 1.4 两个花暗杠: 8 + 4"),
    ("1f" + PLAIN, {**TSUMO, "seat_wind": "E", "dealer_streak": 2}, 6, True, {"flower", "dealer_streak", "doubled"},
     f"{S} 1.5 连庄一次加1番; 1.8.1 花、连庄…×2"),
    ("1f12m3m456m789m234p5p1s", {**TSUMO, "gold": "1s"}, 2, True, {"flower", "doubled"}, f"{S} 1.3 金 即百搭 (1s for 1s)"),
    ("1f12m5p456m789m234p1s1s", TSUMO, 2, True, {"flower", "doubled"}, f"{S} 1.3 金 即百搭 (5p for 3m)"),
    ("1f123m456m789m234p567s1s1s", TSUMO, 2, True, {"flower", "doubled"}, "16-tile Fuzhou (17 tiles), seed formula"),
    ("123m456m789m234p567s1s1s", TSUMO, 30, True, {"plain"}, "16-tile Fuzhou 平胡, seed 平胡 30番"),
    ("1f123m456m789m234p1s5p", {**TSUMO, "gold_flowers": True}, 4, True, {"flower", "gold", "doubled"},
     "house rule 金番 (16-tile practice): a gold held is a flower"),
    ("1f123m456m789m5p5p5p1s1s", TSUMO, 62, True, {"flower", "doubled", "gold_pair"},
     f"{S} 金雀 60 with three golds: only the highest special hand counts"),
]


@pytest.mark.parametrize("hand, opts, points, everyone, keys, source", EXAMPLES, ids=[e[5][:40] for e in EXAMPLES])
def test_worked_examples(hand, opts, points, everyone, keys, source) -> None:
    r = systems.score("fuzhou", hand, opts)
    check_result(r)
    assert r.legal and r.total == points and {e.key for e in r.elements} == keys, (source, r.elements)
    payers = {s: -v for s, v in r.payments.items() if v < 0}
    assert set(payers.values()) == {points} and len(payers) == (3 if everyone else 1), (source, r.payments)


def test_base_and_dealer_streak_paid_by_the_dealer() -> None:
    r = systems.score("fuzhou", "1fC" + PLAIN, {**TSUMO, "base": 5})
    assert r.payments == {"E": -20, "S": 60, "W": -20, "N": -20}  # 底分 5 x 花数 2 x 2
    r = systems.score("fuzhou", "1f" + PLAIN, {**TSUMO, "dealer_streak": 2})
    # 庄家连庄时如果和牌者不是庄家本人，那么他就需要支付连庄番数给赢家 (x 2 self-drawn)
    assert r.payments == {"E": -6, "S": 10, "W": -2, "N": -2} and "连庄" in r.notes[0]


@pytest.mark.parametrize("hand, opts, code, words", [
    ("[CCC,1]456m789m234p1s1s", G, "bad-meld", "honours as flowers"),
    ("123m456m789m234p1s1sC", G, "syntax", "ends with the flower"),
    ("123m456m789m234p1s", G, "tile-count", "14 or 17"),
    (PLAIN, {}, "bad-value", "needs the gold"),
    (PLAIN, {"gold": "C"}, "bad-value", "needs the gold"),
    ("[555p,1]456m789m234p1s1s", G, "bad-meld", "金不能用于碰牌"),
    (PLAIN, {**G, "birds": "1m"}, "unknown-option", "it belongs to changsha"),
    (PLAIN, {**G, "dora": "1m"}, "unknown-option", "it belongs to riichi"),
    ("1f1f" + PLAIN, G, "fifth-tile", "flower"),
    ("123m456m789m234p1s2s", G, "not-winning", "golds stand for any tile"),
    (PLAIN, {**G, "self_drawn": True, "discarder": "N"}, "contradictory-flags", "discarder"),
])
def test_bad_input(hand, opts, code, words) -> None:
    assert_refused("fuzhou", hand, opts, code, words)


SUITED = [f"{r}{s}" for s in "mps" for r in range(1, 10)]


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([4, 5]).flatmap(lambda n: winning_hands(n, SUITED, kongs=True, flowers=True)),
       st.text("ESWNCFP", max_size=5), st.sampled_from(SUITED), st.booleans(), st.sampled_from("ESWN"),
       st.integers(0, 3))
def test_property_total_is_sum_and_no_excluded_pair(hand, honours, gold, tsumo, seat, streak) -> None:
    try:
        r = systems.score("fuzhou", honours + hand, {**situation(tsumo, seat), "gold": gold, "dealer_streak": streak})
    except ScoringError as e:
        assert e.code in ("fifth-tile", "bad-meld"), e.message  # a fifth tile or honour; the gold in a meld
        return
    check_result(r)
    assert r.legal and r.details["per_payer"] == r.total
