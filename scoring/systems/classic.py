"""The classic doubling table (经典麻将规则, seed 004's first passage): base 20, six value tiers.

A hand scores by its best *pattern* (混一色, 对对胡, 清一色 … 十八罗汉); each pattern has a tier counted in
doublings of the base 20 (on a discard: no-fan 20, one-fan 40, 满贯 80, 双满贯 160, 四满贯 320, 八满贯 640;
self-drawn doubles it: 40 … 1280). On the two no-fan patterns (混一色, 对对胡) the honour pungs add one
doubling each (本圈, 本位 — both for a wind that is both —, 中发白), up to 满贯. 杠上开花 makes a smaller hand
满贯. Elements are in ``doubles``; ``details["value"]`` is 20 x 2^total.

Patterns exclude each other (only the best counts) and a pattern of 满贯 or more excludes the honour
pungs: ``EXCLUDES``. Payments: on a discard the discarder pays the value; self-drawn each other seat
pays the self-drawn value, unless one seat is fully liable (全包) and pays for all three.

Source: ../shared/seeds/004_439ac0ac3d24f1c0.txt, first passage "经典麻将规则 20起步 …" (quoted in
docs/rules/classic.md). Open points and choices: docs/rules/classic.md.
"""

from __future__ import annotations

import dataclasses

from .base import (DISCARDER, KONG_REPLACEMENT, PREVALENT_WIND, ROBBING_KONG, SEAT_WIND, SEATS, SEAT_ZH, SELF_DRAWN,
                   TILES_136, Element, NEED_DISCARDER, Note, Option, RulesError, RuleSystem, SystemResult, Unit,
                   seat_payments, total_of)
from .notation import DRAGONS, WINDS, Group, ParsedHand, from_code, is_honour, is_terminal, kind, parse, readings, suit

SEED = "../shared/seeds/004_439ac0ac3d24f1c0.txt 经典麻将规则"
BASE = 20
MANGUAN = 2  # doublings of 满贯 (80 on a discard)


@dataclasses.dataclass(frozen=True, slots=True)
class Pattern:
    """A hand pattern of the table: key, names, tier in doublings of 20, the seed's heading."""

    key: str
    name_zh: str
    name_en: str
    tier: int
    heading: str


_PATTERNS = (
    Pattern("half_flush", "混一色", "Half flush", 0, "无番自摸40（点炮20）a"),
    Pattern("all_pungs", "对对胡", "All pungs", 0, "无番自摸40（点炮20）b"),
    Pattern("full_flush", "清一色", "Full flush", 2, "满贯自摸160（点炮80）c"),
    Pattern("half_flush_pungs", "混一色对对胡", "Half flush, all pungs", 2, "满贯自摸160（点炮80）d"),
    Pattern("kong_flower", "杠上开花", "Won on a kong replacement", 2, "满贯自摸160（点炮80）e; 杠上开花牌型不满贯按满贯计"),
    Pattern("mixed_terminal_pungs", "一九对", "Terminal and honour pungs", 3, "双满贯自摸320（点炮160）a"),
    Pattern("full_flush_pungs", "清一色对对胡", "Full flush, all pungs", 3, "双满贯自摸320（点炮160）b"),
    Pattern("four_concealed", "四暗刻", "Four concealed pungs", 4, "四满贯自摸640（点炮320）a"),
    Pattern("little_dragons", "小三元", "Little three dragons", 4, "四满贯自摸640（点炮320）b"),
    Pattern("terminal_pungs", "净一九对对胡", "Pure terminal pungs", 4, "四满贯自摸640（点炮320）c"),
    Pattern("all_honours", "风一色", "All honours", 4, "四满贯自摸640（点炮320）d"),
    Pattern("thirteen_orphans", "十三幺", "Thirteen orphans", 5, "八满贯自摸1280（点炮640）a"),
    Pattern("four_winds", "四喜", "Four winds", 5, "八满贯自摸1280（点炮640）b"),
    Pattern("big_dragons", "大三元", "Big three dragons", 5, "八满贯自摸1280（点炮640）c"),
    Pattern("four_kongs", "十八罗汉", "Four kongs", 5, "八满贯自摸1280（点炮640）d"),
)
PATTERNS: dict[str, Pattern] = {p.key: p for p in _PATTERNS}
HONOUR_PUNG = ("honour_pung", "番刻", "Honour pung (本圈, 本位, 中发白)",
               "单番/满贯注释：本圈，本位，中发白刻; 风圈与风位重叠则为双番")

#: Only one pattern counts; a pattern of 满贯 or more also excludes the honour pungs.
EXCLUDES: dict[str, frozenset[str]] = {
    p.key: frozenset(k for k in PATTERNS if k != p.key) | (frozenset({"honour_pung"}) if p.tier >= MANGUAN
                                                           else frozenset())
    for p in _PATTERNS
}

_ORPHANS = {"1m", "9m", "1p", "9p", "1s", "9s", *WINDS, *DRAGONS}

OPTIONS = (
    SELF_DRAWN, SEAT_WIND, PREVALENT_WIND, DISCARDER, KONG_REPLACEMENT, ROBBING_KONG,
    Option("liable", "seat?", None, "seat that pays for all (全包): the discarder who let the winner show 12 tiles, "
                                    "or whose discard made the kong before 杠上开花"),
    Option("horse_hit", "bool", False, "self-drawn and the bought horse hits (买马, 买中翻翻): one more doubling"),
)


def _element(p: Pattern, tiles: tuple[str, ...] = ()) -> Element:
    return Element(p.key, p.name_zh, p.name_en, p.tier, Unit.DOUBLES, 1, tiles, f"{SEED}: {p.heading}")


def _patterns(hand: ParsedHand, groups: tuple[Group, ...] | None, o: dict) -> list[Pattern]:
    """The patterns a reading shows (``groups`` None for thirteen orphans)."""
    if groups is None:
        return [PATTERNS["thirteen_orphans"]]
    tiles = [kind(t) for t in hand.all_tiles()]
    suits = {suit(t) for t in tiles}
    sets = [g for g in groups if g.kind != "pair"]
    pair = next(g for g in groups if g.kind == "pair")
    triplets = [g for g in sets if g.is_triplet]
    pungs = len(triplets) == 4
    found: list[str] = []
    if suits == {"z"}:
        found.append("all_honours")
    elif len(suits) == 1:
        found.append("full_flush_pungs" if pungs else "full_flush")
    elif len(suits) == 2 and "z" in suits:
        found.append("half_flush_pungs" if pungs else "half_flush")
    if pungs:
        found.append("all_pungs")
        if all(is_terminal(t) or is_honour(t) for t in tiles) and suits != {"z"}:
            found.append("mixed_terminal_pungs" if "z" in suits else "terminal_pungs")
    if sum(g.concealed for g in triplets) == 4:
        found.append("four_concealed")
    dragons = sum(from_code(g.first) in DRAGONS for g in triplets)
    winds = sum(from_code(g.first) in WINDS for g in triplets)
    if dragons == 3:
        found.append("big_dragons")
    elif dragons == 2 and from_code(pair.first) in DRAGONS:
        found.append("little_dragons")
    if winds == 4 or (winds == 3 and from_code(pair.first) in WINDS):
        found.append("four_winds")
    if sum(g.kind == "kong" for g in sets) == 4:
        found.append("four_kongs")
    if o["kong_replacement"]:
        found.append("kong_flower")
    return [PATTERNS[k] for k in found]


def _honour_pungs(groups: tuple[Group, ...], o: dict) -> list[str]:
    """One entry per honour doubling: a dragon pung, a pung of the round's or the seat's wind (twice if both)."""
    out = []
    for g in groups:
        if not g.is_triplet or not is_honour(from_code(g.first)):
            continue
        t = from_code(g.first)
        out += [g.notation()] * ((t in DRAGONS) + (t == o["prevalent_wind"]) + (t == o["seat_wind"]))
    return out


def _value(hand: ParsedHand, groups: tuple[Group, ...] | None, o: dict) -> tuple[int, list[Element], list[str]]:
    found = _patterns(hand, groups, o)
    if not found:
        return -1, [], []
    best = max(found, key=lambda p: p.tier)
    elements = [_element(best)]
    notes = [Note(f"{p.name_zh} not counted (only the best pattern counts)", f"{p.name_zh}不计（只计最大的一种牌型）")
             for p in found if p is not best]
    if best.tier < MANGUAN and groups is not None:
        honours = _honour_pungs(groups, o)
        used = honours[:MANGUAN - best.tier]
        if used:
            k, zh, en, heading = HONOUR_PUNG
            elements.append(Element(k, zh, en, 1, Unit.DOUBLES, len(used), tuple(used), f"{SEED}: {heading}"))
        if len(honours) > len(used):
            over = len(honours) - len(used)
            notes.append(Note(f"{over} honour doubling(s) over the 满贯 limit not counted", f"超出满贯的 {over} 个番刻翻倍不计"))
    return total_of(elements, Unit.DOUBLES), elements, notes


def _check_options(hand: ParsedHand, o: dict) -> None:
    tsumo = o["self_drawn"]
    if o["robbing_kong"]:
        if o["discarder"] is None or o["discarder"] == o["seat_wind"]:
            raise RulesError("contradictory-flags", "robbing a kong: give discarder = the seat that made the kong "
                             "(it pays for all, seed: 抢明杠算自摸，由开杠人全包)")
        if o["kong_replacement"]:
            raise RulesError("contradictory-flags", "a win cannot both rob a kong and be on a kong replacement tile")
    elif o["discarder"] is not None and (tsumo or o["discarder"] == o["seat_wind"]):
        raise RulesError("contradictory-flags", "discarder is another seat than the winner's, on a discard win only")
    if o["kong_replacement"] and (not tsumo or not any(m.kind == "kong" for m in hand.melds)):
        raise RulesError("contradictory-flags", "杠上开花 needs a kong and a self-drawn win (self_drawn)")
    if o["liable"] is not None and (o["liable"] == o["seat_wind"] or not tsumo):
        raise RulesError("contradictory-flags", "liable (全包) is another seat than the winner's, on a self-drawn win")
    if o["horse_hit"] and not (tsumo or o["robbing_kong"]):
        raise RulesError("contradictory-flags", "买马 is a reward of a self-drawn win (自摸奖励一手买马)")


def _score(text: str, o: dict) -> SystemResult:
    hand = parse(text, TILES_136, (14,), "classic")
    kinds = [kind(t) for t in hand.all_tiles()]
    orphans = not hand.melds and set(kinds) == _ORPHANS
    _check_options(hand, o)
    # 抢明杠算自摸: robbing a kong is scored as self-drawn (and the konger pays for all)
    tsumo = o["self_drawn"] or o["robbing_kong"]
    options: list[tuple[Group, ...] | None] = list(readings(hand, tsumo)) + ([None] if orphans else [])
    if not options:
        raise RulesError("not-winning", f"{hand.notation()} is not a winning hand: four sets and a pair, or the "
                         "thirteen orphans")
    best = max((_value(hand, g, o) for g in options), key=lambda v: v[0])
    doubles, elements, notes = best
    if doubles < 0:
        return SystemResult("classic", hand.notation(), False, (), 0, Unit.DOUBLES, None, {"value": 0},
                            (Note("no pattern of the table: the hand must be at least 混一色 or 对对胡 (20起步)",
                                  "没有表中的牌型：至少须混一色或对对胡（20起步）"),))
    if tsumo:
        elements.append(Element("self_drawn", "自摸", "Self-drawn (twice the discard value)", 1, Unit.DOUBLES, 1, (),
                                f"{SEED}: 自摸 values are twice 点炮 values"
                                + ("; 抢明杠算自摸" if o["robbing_kong"] else "")))
    if o["horse_hit"]:
        elements.append(Element("horse", "买马", "Bought horse hits", 1, Unit.DOUBLES, 1, (),
                                f"{SEED}: 可自摸奖励一手买马，买中翻翻"))
    total = total_of(elements, Unit.DOUBLES)
    value = BASE * 2 ** total
    winner = o["seat_wind"]
    liable = o["discarder"] if o["robbing_kong"] else o["liable"]
    payments = None
    if tsumo and liable is not None:
        payments = seat_payments(winner, {liable: 3 * value})
        notes.append(Note(f"{liable} is fully liable (全包) and pays for the three others", f"{SEAT_ZH[liable]}家全包，替三家付"))
    elif tsumo:
        payments = seat_payments(winner, {s: value for s in SEATS if s != winner})
    elif o["discarder"] is not None:
        payments = seat_payments(winner, {o["discarder"]: value})
    else:
        notes.append(NEED_DISCARDER)
    return SystemResult("classic", hand.notation(), True, tuple(elements), total, Unit.DOUBLES, payments,
                        {"value": value, "base": BASE}, tuple(notes))


SYSTEMS = (RuleSystem(
    "classic", "经典麻将规则", "Classic doubling table (base 20)", tile_set=TILES_136, hand_sizes=(14,),
    options=OPTIONS, dice_rule="大点指位，小点数牌: the bigger die points to the seat, the smaller counts the stacks",
    doc="docs/rules/classic.md", scorer=_score, unit=Unit.DOUBLES, excludes=EXCLUDES,
    dice_method="one-throw"),)
