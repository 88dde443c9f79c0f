"""Scoring behaviour: bad input, contradictory flags, properties, payments, rule profiles."""

from __future__ import annotations

import itertools
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hand_generator import generate
from scoring import ScoringError, parse_hand, score_hand


def fans(hand: str, **kw) -> dict:
    return score_hand(hand, **kw).fan_counts()


# --- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("hand, kw, code, words", [
    ("123m456m789m234p5s", {}, "tile-count", "13 concealed tiles"),
    ("[123m,1]123m456m789m234p5s5s", {}, "tile-count", "with 1 meld"),
    ("1357m2468p1357s9sE", {}, "not-winning", "not a winning hand"),
    ("11111m234m567m888m", {}, "fifth-tile", "1m appears 5 times"),
    ("[1111m]1m23456789m99m", {}, "fifth-tile", "1m appears 5 times"),
    ("123m456m789m234p5s5s", {"robbing_kong": True, "self_drawn": True}, "contradictory-flags", "robbing the kong"),
    ("123m456m789m234p5s5s", {"kong_replacement": True, "self_drawn": True}, "contradictory-flags", "needs a kong"),
    ("[1111p]123m456m789m5s5s", {"kong_replacement": True}, "contradictory-flags", "self-drawn"),
    ("123m456m789m234p5s5s", {"fourth_tile": True}, "contradictory-flags", "holding another 5s"),
    ("123m456m789m234p5s5s", {"robbing_kong": True}, "contradictory-flags", "cannot hold another 5s"),
    ("[555s,1]123m456m789m2p2p", {"robbing_kong": True}, "contradictory-flags", "robbing the kong"),
    ("123m456m789m234p5s5s", {"seat_wind": "X"}, "bad-value", "seat_wind 'X' is not a wind"),
    ("123m456m789m23p55s4p", {"robbing_kong": True, "last_tile": True}, "contradictory-flags", "last tile"),
    ("123m456m789m234p5s5s", {"flowers": 9}, "bad-value", "between 0 and 8"),
    ("123m456m789m234p5s5s", {"flowers": ["1f", "1f"]}, "bad-value", "listed twice"),
    ("123m456m789m234p5s5s", {"flowers": ["9f"]}, "bad-value", "1f-8f"),
    ("123m456m789m234p5s5s", {"rules": "riichi"}, "bad-value", "mcr, mcr-1998"),
    ("123m456m789m234p5s5s", {"self_drawn": "yes"}, "bad-value", "true or false"),
])
def test_bad_input_is_a_clear_error(hand: str, kw: dict, code: str, words: str) -> None:
    with pytest.raises(ScoringError) as e:
        score_hand(hand, **kw)
    assert e.value.code == code
    assert words in e.value.message


def test_implied_conditions_are_counted_not_demanded() -> None:
    # three 9s in the winner's own exposed pung: winning on the 4th is 和绝张 without the flag
    assert 58 in fans("[999m,1]123p456p55s78m9m")
    # 4 of a tile used without a kong: Tile Hog counted from the tiles
    assert fans("123m123m1m456p789p1m")[64] == 1
    # robbing the kong excludes 和绝张 even when both are given
    r = fans("123m456m789m23p55s4p", robbing_kong=True, fourth_tile=True)
    assert 47 in r and 58 not in r


# --- properties --------------------------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**9))
def test_a_fifth_copy_always_errors(seed: int) -> None:
    sit = generate(1, seed=seed)[0]
    hand = parse_hand(sit.to_notation())
    counts = hand.counts()
    rng = random.Random(seed)
    target = rng.choice([t for t in range(len(counts)) if counts[t]])
    concealed = list(hand.concealed)
    # replace other concealed tiles by the target until there are five of it
    for i, t in enumerate(concealed):
        if counts[target] >= 5:
            break
        if t != target:
            concealed[i] = target
            counts[target] += 1
    if counts[target] < 5 and hand.win_tile != target:
        hand = type(hand)(hand.melds, tuple(concealed), target)
        counts[target] += 1
    else:
        hand = type(hand)(hand.melds, tuple(concealed), hand.win_tile)
    if counts[target] < 5:
        return  # too few concealed tiles to reach five (e.g. four melds and a single wait)
    with pytest.raises(ScoringError) as e:
        score_hand(hand.notation(), **sit.score_kwargs())
    assert e.value.code == "fifth-tile"


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10**9))
def test_total_does_not_depend_on_meld_order(seed: int) -> None:
    sit = generate(1, seed=seed)[0]
    text = sit.to_notation()
    melds = re.findall(r"\[[^\]]*\]", text)
    rest = re.sub(r"\[[^\]]*\]", "", text)
    base = score_hand(text, **sit.score_kwargs())
    for perm in itertools.islice(itertools.permutations(melds), 24):
        other = score_hand("".join(perm) + rest, **sit.score_kwargs())
        assert other.total == base.total and other.fan_counts() == base.fan_counts()


def test_total_is_sum_of_fans_and_flowers_after_minimum() -> None:
    r = score_hand("[234s,1]345m345p67s88s5s", flowers=8)
    assert r.fan_points == 6 and r.total == 14
    assert not r.legal and r.payments is None  # flowers do not count toward the 8-point minimum


# --- payments (第十条) --------------------------------------------------------------------------

def test_payments_self_drawn_and_discard() -> None:
    r = score_hand("123m456m789m234p5s5s", self_drawn=True)
    assert r.payments.from_discarder is None
    assert r.payments.from_each_other == 8 + r.total
    assert r.payments.winner_receives == 3 * (8 + r.total)
    d = score_hand("123m456m789m234p5s5s")
    assert d.payments.from_discarder == 8 + d.total
    assert d.payments.from_each_other == 8
    assert d.payments.winner_receives == 8 + d.total + 16


# --- waits --------------------------------------------------------------------------------------

@pytest.mark.parametrize("hand, fan", [
    ("12m456m789m234p55s3m", 77),   # edge wait 12-3
    ("13m456m789m234p55s2m", 78),   # closed wait
    ("123m456m789m234p5s5s", 79),   # single wait
])
def test_unique_wait_fans(hand: str, fan: int) -> None:
    assert fan in fans(hand)


def test_no_wait_fan_with_several_waits() -> None:
    # 23m waits on 1m and 4m: two waits, no edge fan even when winning on 1m
    r = fans("23m456m789m234p55s1m")
    assert not {77, 78, 79} & set(r)
    # the rules text (fan 78): 4556 + 5 is a closed wait, 45567 + 6 is not (45567 also waits on 3 and 8)
    assert 78 in fans("4556m123p789p111s5m")
    assert not {77, 78, 79} & set(fans("45567m123p789p11s6m"))


# --- rule profiles ----------------------------------------------------------------------------

def test_mcr_counts_mixed_kongs_1998_counts_melded_and_concealed() -> None:
    hand = "[1111m][1111p,1]1113444s5s"
    assert fans(hand, self_drawn=True)[None] == 1
    old = fans(hand, self_drawn=True, rules="mcr-1998")
    assert None not in old and old[74] == 1 and old[67] == 1


def test_1998_seven_pairs_have_no_set_defined_fans() -> None:
    hand = "778899m7799s7799p"  # seven pairs that are not four sets and a pair
    assert 25 in fans(hand)                          # Upper Tiles with seven pairs today
    assert 25 not in fans(hand, rules="mcr-1998")   # 全大 is defined by sets and pair in 1998
    assert 19 in fans(hand, rules="mcr-1998")


def test_1998_no_repetition_voided_suit_with_dragons() -> None:
    hand = "[CCC,1][FFF,2]PPP123m4p4p"
    assert 75 in fans(hand)
    assert 75 not in fans(hand, rules="mcr-1998")


def test_1998_all_terminals_excludes_triple_pung() -> None:
    hand = "111m111s111p999m9s9s"
    assert 32 in fans(hand)
    assert 32 not in fans(hand, rules="mcr-1998")


def test_knitted_straight_body_wait_counts_in_both_profiles() -> None:
    # 3p completes the knitted straight's 369p and, read with 12p, an edge wait: 就高不就低 takes
    # the wait in both profiles (the 1998 wait fans do not mention 组合龙)
    hand = "147m258s369p12p55m3p"
    for rules in ("mcr", "mcr-1998"):
        assert {35, 77} <= set(fans(hand, rules=rules))
    # the only wait is 3m: single wait on the pair, whether 3m also completes the knitted straight
    assert 79 in fans("3369m147s111258p3m", rules="mcr-1998")


def test_1998_no_all_chows_with_a_knitted_straight() -> None:
    hand = "147m258s369p123m55p"
    assert 63 in fans(hand)
    assert 63 not in fans(hand, rules="mcr-1998")
