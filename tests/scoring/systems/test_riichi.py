"""Riichi through the ``mahjong`` package, in our notation and options.

Worked examples, each with its source:
* LIB: the ``mahjong`` package's own tests, tests/hand_calculating/tests_yaku_calculation.py at commit
  5167518 (MahjongRepository/mahjong), function named in each case; its tests run with open tanyao off.
* DOC: the package's docstrings (HandCalculator.estimate_hand_value, ScoresCalculator.calculate_scores).
* RCR: EMA Riichi Competition Rules 2016, 4.3 "Scoring examples" 1-4
  (https://ooyamaneko.net/en/mahjong/bookcmp/view.php?book=RCR_2016_en&chap=4.3): the hands are described
  there in words; the tiles below are one hand fitting each description.
* SEED: ../shared/seeds/004_439ac0ac3d24f1c0.txt, 9.役 ("平和的基本符只有副底，就算是自摸那两符一样不能算").
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import ScoringError, systems
from system_checks import assert_refused, check_result, situation, winning_hands

LIB = "mahjong tests_yaku_calculation.py@5167518"
BASE = "234456m66p12344s4s"  # sou 123444 man 234456 pin 66, winning 4s (the package's test hand)

# (hand, options, han, fu, source)
EXAMPLES = [
    (BASE, {"riichi": True}, 1, 40, f"{LIB} test_is_riichi"),
    (BASE, {"self_drawn": True}, 1, 30, f"{LIB} test_is_tsumo"),
    (BASE, {"riichi": True, "ippatsu": True}, 2, 40, f"{LIB} test_is_ippatsu"),
    ("[4444s]234456m66p23s1s", {"self_drawn": True, "kong_replacement": True}, 2, 40, f"{LIB} test_is_rinshan closed kan"),
    ("[4444s,1]234456m66p23s1s", {"self_drawn": True, "kong_replacement": True}, 1, 30, f"{LIB} test_is_rinshan open kan"),
    ("234456m66p23444s1s", {"robbing_kong": True}, 1, 40, f"{LIB} test_is_chankan"),
    (BASE, {"self_drawn": True, "last_tile": True}, 2, 30, f"{LIB} test_is_haitei"),
    ("[123s,1]234456m66p44s4s", {"self_drawn": True, "last_tile": True}, 1, 30, f"{LIB} test_is_haitei open"),
    (BASE, {"last_tile": True}, 1, 40, f"{LIB} test_is_houtei"),
    (BASE, {"double_riichi": True}, 2, 40, f"{LIB} test_is_daburu_riichi"),
    ("12345m123456s33p6m", {"dora": "2p"}, 3, 30, f"{LIB} test_dora_in_hand"),
    ("2456678m123678p2m", {"dora": "1m2p", "self_drawn": True}, 4, 30, f"{LIB} test_dora_in_hand"),
    ("678m3457p123345s7p", {"dora": "4s4s", "self_drawn": True}, 3, 30, f"{LIB} test_dora_in_hand double dora"),
    ("678m34p123345sFF5p", {"dora": "5z5z", "riichi": True}, 5, 40, f"{LIB} test_dora_in_hand honours"),
    ("[7777m]3457p123345s7p", {"dora": "6m", "self_drawn": True}, 5, 40, f"{LIB} test_dora_in_hand dora in kan"),
    ("12345m123456s33p6m", {"ura_dora": "2p", "riichi": True}, 4, 30, f"{LIB} test_ura_dora_in_hand"),
    ("12345m123456s33p6m", {"ura_dora": "2p", "self_drawn": True}, 2, 20, f"{LIB} test_ura_dora_in_hand (no riichi)"),
    ("340s456p1235559m9m", {"self_drawn": True}, 2, 30, f"{LIB} test_aka_dora one red"),
    ("340s406p1235559m9m", {"self_drawn": True}, 3, 30, f"{LIB} test_aka_dora two red"),
    ("340s406p1230559m9m", {"self_drawn": True}, 4, 30, f"{LIB} test_aka_dora three red"),
    ("12345678s678m88p3s", {}, 1, 30, f"{LIB} test_hands_calculation"),
    ("2399s123456m456p1s", {}, 1, 30, f"{LIB} test_hands_calculation"),
    ("6778s345m999pSSS7s", {"self_drawn": True}, 1, 40, f"{LIB} test_hands_calculation"),
    ("3344557789s345m7s", {"self_drawn": True}, 2, 30, f"{LIB} test_hands_calculation"),
    ("[123p,1]12667788pSS3p", {}, 2, 30, f"{LIB} test_hands_calculation"),
    ("[234p,1][789p,1]77889pSS9p", {}, 2, 30, f"{LIB} test_hands_calculation"),
    ("[123s,1][777s,1][888s,1]1156s4s", {"self_drawn": True}, 5, 30, f"{LIB} test_hands_calculation"),
    ("[123s,1]13789sPPCCC2s", {}, 4, 40, f"{LIB} test_hands_calculation"),
    ("22444m333567p44s4s", {}, 1, 40, "DOC estimate_hand_value, basic closed ron with tanyao"),
    ("234789m1234566p6p", {"self_drawn": True, "riichi": True}, 3, 20, "DOC riichi pinfu tsumo; SEED pinfu tsumo 20 fu"),
]


@pytest.mark.parametrize("hand, opts, han, fu, source", EXAMPLES, ids=[f"{i}-{e[0]}" for i, e in enumerate(EXAMPLES)])
def test_worked_examples(hand, opts, han, fu, source) -> None:
    r = systems.score("riichi", hand, {"open_tanyao": False, "seat_wind": "W", **opts})
    check_result(r)
    assert r.legal and (r.total, r.details["fu"]) == (han, fu), source


# (hand, options, {winner seat: payments}, source): the RCR's four examples, for East and for South.
RCR = "EMA RCR 2016 4.3"
PAYMENTS = [
    ("12345678s234m55p9s", {"riichi": True, "self_drawn": True, "seat_wind": "E"},
     {"E": 12000, "S": -4000, "W": -4000, "N": -4000}, f"{RCR} example 1 (mangan, East)"),
    ("12345678s234m55p9s", {"riichi": True, "self_drawn": True, "seat_wind": "S"},
     {"E": -4000, "S": 8000, "W": -2000, "N": -2000}, f"{RCR} example 1 (mangan, not East)"),
    ("12345678s234m55p9s", {"riichi": True, "seat_wind": "E", "discarder": "W"},
     {"E": 11600, "S": 0, "W": -11600, "N": 0}, f"{RCR} example 2 (4 fan 30, East)"),
    ("12345678s234m55p9s", {"riichi": True, "seat_wind": "N", "discarder": "E"},
     {"E": -7700, "S": 0, "W": 0, "N": 7700}, f"{RCR} example 2 (4 fan 30, not East)"),
    ("[123s,1]45678s234m55p9s", {"dora": "6s", "seat_wind": "E", "discarder": "S"},
     {"E": 2900, "S": -2900, "W": 0, "N": 0}, f"{RCR} example 3 (2 fan 30, East)"),
    ("[123s,1]45678s234m55p9s", {"dora": "6s", "seat_wind": "W", "discarder": "S"},
     {"E": 0, "S": -2000, "W": 2000, "N": 0}, f"{RCR} example 3 (2 fan 30, not East)"),
    ("111m222p333s5588s5s", {"self_drawn": True, "seat_wind": "E"},
     {"E": 48000, "S": -16000, "W": -16000, "N": -16000}, f"{RCR} example 4 (yakuman, 4 x mangan: 16000 all)"),
    ("234789m1234566p6p", {"self_drawn": True, "riichi": True, "seat_wind": "S"},
     {"E": -1300, "S": 2700, "W": -700, "N": -700}, "DOC estimate_hand_value: main 1300, additional 700"),
    ("234789m1234566p6p", {"self_drawn": True, "riichi": True, "seat_wind": "S", "honba": 2},
     {"E": -1500, "S": 3300, "W": -900, "N": -900}, "DOC calculate_scores: 100 per honba from each on tsumo"),
]


@pytest.mark.parametrize("hand, opts, payments, source", PAYMENTS, ids=[p[3] for p in PAYMENTS])
def test_payments(hand, opts, payments, source) -> None:
    r = systems.score("riichi", hand, opts)
    check_result(r)
    assert r.payments == payments, source


def test_result_names_and_fu() -> None:
    r = systems.score("riichi", "12345678s234m55p9s", {"riichi": True, "self_drawn": True})
    by_key = {e.key: e for e in r.elements}
    assert by_key["Ittsu"].value == 2 and by_key["Ittsu"].name_ja == "一気通貫" and by_key["Ittsu"].name_zh == "一气通贯"
    assert by_key["Pinfu"].source.startswith("../shared/seeds/004")
    assert r.details["limit"] == "mangan"
    assert sum(e.value for e in r.elements if e.unit is systems.Unit.FU) == 20


def test_tenhou_and_chiihou() -> None:
    assert systems.score("riichi", BASE, {"self_drawn": True, "tenhou": True}).details["limit"] == "yakuman"
    assert systems.score("riichi", BASE, {"self_drawn": True, "chiihou": True, "seat_wind": "S"}).total == 13
    with pytest.raises(ScoringError, match="cannot all hold") as e:
        systems.score("riichi", BASE, {"self_drawn": True, "tenhou": True, "seat_wind": "S"})
    assert e.value.code == "contradictory-flags"


def test_no_yaku_is_not_a_win() -> None:
    r = systems.score("riichi", "[678s,1]34s456789mPP5s", {"dora": "4s", "discarder": "N"})
    assert not r.legal and r.payments is None and "no yaku" in r.notes[0]


@pytest.mark.parametrize("hand, opts, code, words", [
    ("1f234456m66p2344s4s", {}, "tile-not-in-set", "is a flower"),
    ("234456m66p12344s4s", {"dora": "1f"}, "tile-not-in-set", "flower"),
    ("234456m66p1234s4s", {}, "tile-count", "a winning riichi hand has 14"),
    ("[123s,1]234456m66p12344s4s", {}, "tile-count", "has 14"),
    ("0m0m3456m66p12344s4s", {}, "fifth-tile", "one red five per suit"),
    (BASE, {"dora": "4s4s"}, "fifth-tile", "4s appears 5 times"),
    ("234456m66p12344s4s", {"flowers": 2}, "unknown-option", "it belongs to mcr"),
    ("234456m66p12344s4s", {"riichi": "yes"}, "bad-value", "riichi must be true or false"),
    ("234456m66p12344s4s", {"ippatsu": True}, "contradictory-flags", "ippatsu without riichi"),
    ("123456789m12345s", {}, "not-winning", "not a winning hand"),
    ("234456m66p12344x4s", {}, "syntax", "position"),
])
def test_bad_input_is_one_clear_error(hand, opts, code, words) -> None:
    assert_refused("riichi", hand, opts, code, words)


@settings(max_examples=60, deadline=None)
@given(winning_hands(4, melds=False), st.booleans(), st.booleans(), st.sampled_from("ESWN"), st.sampled_from("ESWN"))
def test_property_total_is_sum_and_no_excluded_pair(hand, tsumo, riichi, seat, prevalent) -> None:
    try:
        r = systems.score("riichi", hand, {**situation(tsumo, seat), "riichi": riichi, "prevalent_wind": prevalent,
                                           "dora": "1m"})
    except ScoringError as e:
        assert e.code == "fifth-tile"
        return
    check_result(r)
    if r.legal:
        assert r.total == r.details["han"] and r.payments is not None
