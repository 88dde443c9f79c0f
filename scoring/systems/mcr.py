"""MCR (中国麻将竞赛规则) as a registered rule system, through the MCR engine's public API.

Nothing is scored here: ``scoring.score_hand`` does it (81 fans, 第九条); this module turns its
``ScoreResult`` into a ``SystemResult`` (one element per fan, unit ``fan``) and spreads the 第十条
payments over the four seats. Two systems: ``mcr`` (current competition practice) and ``mcr-1998``
(the 1998 text literally), as ``scoring.score_hand``'s ``rules``.

Source: ../shared/seeds/000_ba052a8ec20fd579.txt, 第九条 (fans) and 第十条 (payments: self-drawn,
each of the three others pays 8 + total; on a discard the discarder pays 8 + total, the others 8).
"""

from __future__ import annotations

from .. import score_hand
from .base import (DISCARDER, KONG_REPLACEMENT, LAST_TILE, PREVALENT_WIND, ROBBING_KONG, SEAT_WIND, SEATS, SELF_DRAWN,
                   TILES_144_COUNTED, Element, Note, Option, RuleSystem, SystemResult, Unit, seat_payments, total_of)

_SOURCE = "../shared/seeds/000_ba052a8ec20fd579.txt 第九条"
OPTIONS = (SELF_DRAWN, SEAT_WIND, PREVALENT_WIND,
           Option("flowers", "int", 0, "number of flower tiles laid out, 0-8 (花牌, 1 point each)", (0, 8)),
           LAST_TILE, KONG_REPLACEMENT, ROBBING_KONG,
           Option("fourth_tile", "bool", False, "the last tile of its kind (和绝张)"), DISCARDER)


def _scorer(profile: str):
    def scorer(hand: str, opts: dict) -> SystemResult:
        r = score_hand(hand, rules=profile, **{k: v for k, v in opts.items() if k != "discarder"})
        elements = tuple(Element(f"fan-{f.number}" if f.number is not None else "fan-kong", f.name_zh, f.name_en,
                                 f.points, Unit.FAN, f.count, f.tiles,
                                 f"{_SOURCE} fan {f.number}" if f.number else f"{_SOURCE} 明暗杠")
                         for f in r.fans)
        payments, notes = None, []
        winner = opts["seat_wind"]
        if r.legal and r.payments is not None:
            p = r.payments
            if p.self_drawn:
                payments = seat_payments(winner, {s: p.from_each_other for s in SEATS if s != winner})
            elif opts["discarder"] is not None and opts["discarder"] != winner:
                payments = seat_payments(winner, {s: p.from_discarder if s == opts["discarder"] else p.from_each_other
                                                  for s in SEATS if s != winner})
            else:
                notes.append(Note("give discarder (a seat other than the winner's) for the payments of a discard win",
                                  "点炮和牌须给出放炮者（和牌者以外的座位），才能计算收付"))
        return SystemResult(profile, r.hand, r.legal, elements, total_of(elements, Unit.FAN), Unit.FAN, payments,
                            {"shape": r.shape, "fan_points": r.fan_points}, tuple(notes))
    return scorer


def _excludes(profile: str) -> dict[str, frozenset[str]]:
    """The 不计 of the fan table (``scoring.fans.FANS``: ``excludes``; under the 1998 text also
    ``excludes_1998`` and One Voided Suit (75) with a fan that voids a suit), by element key, for the
    property tests' check that no excluded fan is counted with its excluder. The engine applies them
    (``scoring.calculator._exclusions``); this only states them."""
    from ..fans import FANS
    out = {}
    for n, f in FANS.items():
        gone = set(f.excludes)
        if profile == "mcr-1998":
            gone |= set(f.excludes_1998) | ({75} if f.voids_a_suit else set())
        if gone:
            out[f"fan-{n}"] = frozenset(f"fan-{x}" for x in gone)
    return out


_COMMON = dict(tile_set=TILES_144_COUNTED, hand_sizes=(14,), options=OPTIONS, unit=Unit.FAN,
               dice_rule="two throws: the dealer's sum picks the second thrower, the two sums added count the "
                         "stacks (000 掷骰与开牌)",
               doc="README.md#score-a-hand", dice_method="two-throw")
SYSTEMS = (
    RuleSystem("mcr", "中国麻将竞赛规则", "Chinese Official (MCR), current practice", scorer=_scorer("mcr"),
               excludes=_excludes("mcr"), **_COMMON),
    RuleSystem("mcr-1998", "中国麻将竞赛规则（1998）", "Chinese Official (MCR), the 1998 text",
               scorer=_scorer("mcr-1998"), excludes=_excludes("mcr-1998"), **_COMMON),
)
