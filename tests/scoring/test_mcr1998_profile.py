"""The ``mcr-1998`` profile against the reference calculator built with its own 1998 switches.

Two known, documented differences.

All Chows with a knitted straight: the 1998 text defines 平和 as four chows and a numbered pair,
and the knitted straight is not three chows, so ``mcr-1998`` does not count 平和 there; the
reference's 1998 switch does.

Seven pairs made only of honors. Under the 1998 switches the
reference no longer counts All Honors for seven pairs (the text defines 字一色 by pungs and a
pair) and then counts One Voided Suit three times (each of the three suits is missing). The rules
have no fan for "missing three suits": 缺一门 is a hand lacking one suit of numbered tiles. We
count none of it.
"""

from __future__ import annotations

from reference_1998 import compare


def _honors_only_seven_pairs(m: dict) -> bool:
    body = m["hand"]
    return all(ch in "ESWNCFP" for ch in body) and m["ref"].get("19") == 1 and m["ref"].get("75") == 3 \
        and "75" not in m["ours"]


def _all_chows_with_knitted_straight(m: dict) -> bool:
    ref = dict(m["ref"])
    return "35" in ref and ref.pop("63", None) == 1 and ref == m["ours"] and m["ref_total"] - 2 == m["ours_total"]


def test_mcr_1998_agrees_with_the_reference_built_for_1998() -> None:
    result = compare(20_000, seed=1998)
    unexplained = [m for m in result["mismatches"]
                   if not _honors_only_seven_pairs(m) and not _all_chows_with_knitted_straight(m)]
    assert not unexplained, f"{len(unexplained)} of {result['n']} hands differ, first ones: {unexplained[:10]}"
    # both known differences occur in the sample (so the exceptions above are not dead code)
    assert any(map(_honors_only_seven_pairs, result["mismatches"]))
    assert any(map(_all_chows_with_knitted_straight, result["mismatches"]))
