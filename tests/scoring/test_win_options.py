"""``WinContext.from_options``: the win options by name, the one reading of CLI flags, batch keys and
HTTP bodies."""

from __future__ import annotations

import pytest

from scoring import Flower, ScoringError, WinContext, Wind


def test_missing_options_take_their_defaults() -> None:
    assert WinContext.from_options({}) == WinContext.make()
    assert dict(WinContext.OPTIONS) == {"self_drawn": False, "seat_wind": "E", "prevalent_wind": "E", "flowers": 0,
                                        "last_tile": False, "kong_replacement": False, "robbing_kong": False,
                                        "fourth_tile": False}
    assert WinContext.from_options(WinContext.OPTIONS) == WinContext()


def test_every_option_by_its_name() -> None:
    ctx = WinContext.from_options({"self_drawn": True, "seat_wind": "south", "prevalent_wind": "西",
                                   "flowers": ["1f", "5f"], "last_tile": True, "kong_replacement": True,
                                   "robbing_kong": False, "fourth_tile": True})
    assert ctx.self_drawn and ctx.last_tile and ctx.kong_replacement and ctx.fourth_tile and not ctx.robbing_kong
    assert ctx.seat_wind is Wind.SOUTH and ctx.prevalent_wind is Wind.WEST
    assert ctx.flowers == 2 and ctx.flower_tiles == (Flower(1), Flower(5))


@pytest.mark.parametrize("options, words", [
    ({"self_drawm": True}, "unknown option(s) 'self_drawm'; allowed: self_drawn, seat_wind, prevalent_wind, "
                           "flowers, last_tile, kong_replacement, robbing_kong, fourth_tile"),
    ({"seat_wind": "X"}, "seat_wind 'X' is not a wind: use E, S, W or N"),
    ({"flowers": 9}, "flowers must be between 0 and 8"),
    ({"flowers": "2"}, "flowers must be a count 0-8 or a list of flowers"),
    ({"flowers": ["1f", "1f"]}, "a flower is listed twice"),
    ({"self_drawn": 1}, "self_drawn must be true or false, got 1"),
    ({"last_tile": None}, "last_tile must be true or false, got None"),
])
def test_a_bad_option_is_one_bad_value_naming_it(options, words) -> None:
    with pytest.raises(ScoringError) as e:
        WinContext.from_options(options)
    assert e.value.code == "bad-value" and words in e.value.message


def test_the_callers_own_keys_are_skipped_and_listed_as_allowed() -> None:
    assert WinContext.from_options({"hand": "123m", "rules": "mcr", "self_drawn": True},
                                   other_keys=("hand", "rules")) == WinContext.make(self_drawn=True)
    with pytest.raises(ScoringError) as e:
        WinContext.from_options({"winner": "E"}, other_keys=("hand", "rules"))
    assert e.value.message == ("unknown option(s) 'winner'; allowed: hand, rules, self_drawn, seat_wind, "
                               "prevalent_wind, flowers, last_tile, kong_replacement, robbing_kong, fourth_tile")


def test_options_must_be_a_mapping() -> None:
    with pytest.raises(ScoringError, match="mapping of names to values, got list"):
        WinContext.from_options([("self_drawn", True)])  # type: ignore[arg-type]
