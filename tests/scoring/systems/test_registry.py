"""The rule-system registry: every system's declaration, option refusal, MCR through its public API."""

from __future__ import annotations

import pytest

from scoring import ScoringError, score_hand, systems
from system_checks import check_result


def test_every_system_declares_what_the_table_and_the_cli_need() -> None:
    assert list(systems.SYSTEMS) == ["mcr", "mcr-1998", "riichi", "taiwan", "classic", "changsha", "fuzhou", "northern"]
    for s in systems.SYSTEMS.values():
        assert s.name_zh and s.name_en and s.dice_rule and s.doc
        assert s.tile_set.count in (108, 136, 144) and s.hand_sizes
        names = [o.name for o in s.options]
        assert len(names) == len(set(names))
        for o in s.options:
            assert o.check(o.default) == o.default and o.help
        for key, excluded in s.excludes.items():
            assert key not in excluded
    assert systems.get("taiwan").hand_sizes == (17,) and systems.get("taiwan").tile_set.count == 144


@pytest.mark.parametrize("hand, opts", [
    ("[EEE,1][SSSS,1]55pWWWNNN", {"self_drawn": True}),
    ("123m456m789m234p5s5s", {"seat_wind": "S", "discarder": "E"}),
    ("[123m,1]55789m12789s3s", {"self_drawn": True, "flowers": 2}),
])
def test_mcr_through_the_registry_is_score_hand(hand, opts) -> None:
    for rules in ("mcr", "mcr-1998"):
        r = systems.score(rules, hand, opts)
        ref = score_hand(hand, rules=rules, **{k: v for k, v in opts.items() if k != "discarder"})
        check_result(r)
        assert (r.total, r.legal) == (ref.total, ref.legal)
        assert [e.name_en for e in r.elements] == [f.name_en for f in ref.fans]
        assert r.payments[opts.get("seat_wind", "E")] == ref.payments.winner_receives


def test_an_option_of_another_system_is_refused_with_the_allowed_list() -> None:
    with pytest.raises(ScoringError) as e:
        systems.score("taiwan", "123m456m789m234p55s67s8s", {"dora": "3m"})
    assert e.value.code == "unknown-option"
    assert "belongs to riichi" in e.value.message and "taiwan takes: self_drawn" in e.value.message
    with pytest.raises(ScoringError, match="no rule system takes it"):
        systems.score("riichi", "234456m66p12344s4s", {"hand_limit": 5})
    with pytest.raises(ScoringError, match="allowed are mcr, mcr-1998, riichi, taiwan, classic, changsha, fuzhou, northern"):
        systems.score("sichuan", "123m", {})


@pytest.mark.parametrize("value", ["X", 3, None])
def test_a_seat_option_names_the_allowed_seats(value) -> None:
    with pytest.raises(ScoringError, match="seat_wind must be a seat E, S, W or N"):
        systems.score("classic", "123m456m789mWWW5m5m", {"seat_wind": value})


@pytest.mark.parametrize("name, fits, refused", [("riichi", 136, 144), ("taiwan", 144, 136), ("classic", 136, 108)])
def test_each_system_names_the_gear_it_needs(name, fits, refused) -> None:
    s = systems.get(name)
    assert s.gear == fits and s.gear_problem(fits) is None
    assert f"set the tile-count gear to {fits}, not {refused}" in s.gear_problem(refused)


def test_every_option_has_a_label_in_both_languages() -> None:
    from scoring.systems.base import OPTION_LABELS
    names = {o.name for s in systems.SYSTEMS.values() for o in s.options}
    assert names <= set(OPTION_LABELS), sorted(names - set(OPTION_LABELS))
    assert all(en and zh for en, zh in OPTION_LABELS.values())


def test_every_option_has_chinese_help_and_every_choice_its_words() -> None:
    """The page shows a system's options in Chinese (issue #20): the help as a tooltip, a choice's
    values by their words; none may be missing, none English-only."""
    import re

    from scoring.systems.base import OPTION_HELP_ZH, option_view
    cjk = re.compile("[\u4e00-\u9fff]")
    for s in systems.SYSTEMS.values():
        for o in s.options:
            view = option_view(o)
            assert cjk.search(view["label_zh"]) and cjk.search(view["help_zh"]), (s.name, o.name)
            if o.kind == "choice":
                assert [v for v, _, _ in view["choice_labels"]] == list(o.choices)
                assert all(en and cjk.search(zh) for _, en, zh in view["choice_labels"]), (s.name, o.name)
    names = {o.name for s in systems.SYSTEMS.values() for o in s.options}
    assert set(OPTION_HELP_ZH) == names  # no help left for an option that is gone


@pytest.mark.parametrize("rules", ["mcr", "mcr-1998"])
def test_property_mcr_through_the_registry_total_is_sum_and_no_excluded_fan(rules) -> None:
    """The property test for MCR (issue #20's Must show): 400 generated winning situations of every shape
    (tests/scoring/hand_generator.py, checked against PyMahjongGB elsewhere), scored through the
    registry: the total is the sum of the fans, no fan is counted with one whose 不计 names it (the fan
    table's, plus the 1998 text's under mcr-1998), the payments sum to zero; and the same fans as the
    engine."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from hand_generator import generate_cached

    situations, _ = generate_cached(400, 2026)
    assert systems.get(rules).excludes["fan-1"]  # Big Four Winds excludes the wind pungs: the table is stated
    for sit in situations:
        opts = sit.score_kwargs()
        if not opts["self_drawn"]:
            opts["discarder"] = "ESWN"["ESWN".index(opts["seat_wind"]) - 1]
        r = systems.score(rules, sit.to_notation(), opts)
        check_result(r)
        ref = score_hand(sit.to_notation(), rules=rules, **sit.score_kwargs())
        assert r.total == ref.total and [e.name_en for e in r.elements] == [f.name_en for f in ref.fans]
