"""Taiwan 16-tile mahjong (台灣十六張麻將): 144 tiles, flowers in the hand, 台 items, base + per-台 payments.

A winning hand is 17 tiles (16 + the winning tile; kongs counted as 3, flowers apart): five sets and
a pair. Flowers are written in the hand as tiles ``1f``-``8f`` (before the winning tile).

Each 台 item is one ``Tai`` in ``ITEMS`` (key, names, value, source). ``score`` reads the hand every
way it decomposes, counts the items of each reading, drops the items another counted item excludes
(``EXCLUDES``) and keeps the reading with the most 台.

Source: ../shared/seeds/004_439ac0ac3d24f1c0.txt, the passage "十六張台灣麻將" (items 1-18, quoted in
docs/rules/taiwan.md); the items it leaves out (flowers, 自摸, 海底, 槓上開花, 三元 and 四喜 hands,
天胡/地胡, 人胡) from the public 台數表 pages named in ``SOURCE_PAGES``. Open points: docs/rules/taiwan.md.
"""

from __future__ import annotations

import dataclasses

from .base import (DISCARDER, KONG_REPLACEMENT, LAST_TILE, PREVALENT_WIND, ROBBING_KONG, SEAT_WIND, SEATS, SELF_DRAWN,
                   TILES_144, Element, NEED_DISCARDER, Note, Option, RulesError, RuleSystem, SystemResult, Unit,
                   seat_payments, total_of)
from .notation import DRAGONS, WINDS, Group, ParsedHand, from_code, is_honour, parse, readings, suit, waits

SEED = "../shared/seeds/004_439ac0ac3d24f1c0.txt 十六張台灣麻將"
SOURCE_PAGES = {
    "chh": "https://chh.cx/archives/12 (2023台灣最新麻將16張台數表)",
    "nh": "https://nh48jid.com 台灣十六張麻將:台數表一覽",
    "common": "common Taiwan table practice (no stored page found; docs/rules/taiwan.md)",
}


@dataclasses.dataclass(frozen=True, slots=True)
class Tai:
    """One 台 item: key, Chinese and English names, 台 per occurrence, source."""

    key: str
    name_zh: str
    name_en: str
    value: int
    source: str


_ITEMS = (
    Tai("dealer", "作莊", "Dealer", 1, f"{SEED} 9"),
    Tai("streak", "連莊拉莊", "Dealer streak (連N拉N)", 2, f"{SEED} 10 (2 per N)"),
    Tai("seat_wind", "門風坎", "Seat wind pung", 1, f"{SEED} 1"),
    Tai("round_wind", "圈風坎", "Round wind pung", 1, f"{SEED} 1"),
    Tai("dragon", "箭字坎", "Dragon pung", 1, f"{SEED} 2"),
    Tai("concealed", "門清", "Concealed hand", 1, f"{SEED} 3"),
    Tai("concealed_self_drawn", "不求(門清自摸)", "Concealed self-draw", 2, f"{SEED} 4"),
    Tai("self_drawn", "自摸", "Self-drawn", 1, SOURCE_PAGES["chh"]),
    Tai("all_melded", "全求", "All melded, won on a discard", 2, f"{SEED} 5"),
    Tai("half_melded", "半求", "All melded, self-drawn", 1, f"{SEED} 6"),
    Tai("ping_hu", "平胡", "Plain hand", 2, f"{SEED} 7"),
    Tai("all_pungs", "對對胡", "All pungs", 4, f"{SEED} 8"),
    Tai("single_wait", "獨聽", "Single wait", 1, f"{SEED} 11"),
    Tai("robbing_kong", "搶槓", "Robbing a kong", 1, f"{SEED} 12"),
    Tai("all_honours", "字一色", "All honours", 16, f"{SEED} 13"),
    Tai("all_honours_overlap", "字一色減台", "All honours with a four winds/three dragons hand", -4, f"{SEED} 13"),
    Tai("full_flush", "清一色", "Full flush", 12, f"{SEED} 14"),
    Tai("half_flush", "湊一色", "Half flush", 4, f"{SEED} 15"),
    Tai("three_concealed", "三暗坎", "Three concealed pungs", 2, f"{SEED} 16"),
    Tai("four_concealed", "四暗坎", "Four concealed pungs", 5, f"{SEED} 17"),
    Tai("five_concealed", "五暗坎", "Five concealed pungs", 13, f"{SEED} 18"),
    Tai("last_tile_draw", "海底撈月", "Last tile self-drawn", 1, SOURCE_PAGES["chh"]),
    Tai("last_tile_discard", "河底撈魚", "Last discard", 1, SOURCE_PAGES["chh"]),
    Tai("kong_replacement", "槓上開花", "Won on a replacement tile", 1, SOURCE_PAGES["chh"]),
    Tai("little_dragons", "小三元", "Little three dragons", 4, SOURCE_PAGES["chh"]),
    Tai("big_dragons", "大三元", "Big three dragons", 8, SOURCE_PAGES["chh"]),
    Tai("little_winds", "小四喜", "Little four winds", 8, SOURCE_PAGES["chh"]),
    Tai("big_winds", "大四喜", "Big four winds", 16, SOURCE_PAGES["chh"]),
    Tai("heaven", "天胡", "Heavenly hand (dealer, first draw)", 24, SOURCE_PAGES["nh"]),
    Tai("earth", "地胡", "Earthly hand (first draw)", 16, SOURCE_PAGES["nh"]),
    Tai("human", "人胡", "Human hand (first-turn discard)", 8, SOURCE_PAGES["nh"]),
    Tai("seat_flower", "正花", "Seat flower", 1, SOURCE_PAGES["common"]),
    Tai("flower_set", "花槓", "Four flowers of a kind", 2, SOURCE_PAGES["common"]),
    Tai("eight_flowers", "八仙過海", "All eight flowers", 8, SOURCE_PAGES["common"]),
)
ITEMS: dict[str, Tai] = {t.key: t for t in _ITEMS}

#: key -> keys it excludes (the seed's "不計" and the choices in docs/rules/taiwan.md).
EXCLUDES: dict[str, frozenset[str]] = {
    "concealed_self_drawn": frozenset({"self_drawn"}),
    "all_honours": frozenset({"all_pungs"}),
    "full_flush": frozenset({"half_flush"}),
    "five_concealed": frozenset({"concealed", "all_pungs", "four_concealed", "three_concealed"}),
    "four_concealed": frozenset({"three_concealed"}),
    "big_dragons": frozenset({"dragon", "little_dragons"}),
    "little_dragons": frozenset({"dragon"}),
    "big_winds": frozenset({"seat_wind", "round_wind", "little_winds"}),
    "little_winds": frozenset({"seat_wind", "round_wind"}),
    "heaven": frozenset({"self_drawn", "concealed_self_drawn", "concealed", "single_wait", "earth"}),
    "earth": frozenset({"self_drawn", "concealed_self_drawn", "concealed", "single_wait"}),
    "human": frozenset({"concealed", "single_wait"}),
    "eight_flowers": frozenset({"seat_flower", "flower_set"}),
}

#: The flowers of each seat: 春/梅 East, 夏/蘭 South, 秋/菊 West, 冬/竹 North (Taiwan numbers 菊 3, 竹 4;
#: our 7f is 竹 bamboo and 8f 菊 chrysanthemum, the MCR order).
SEAT_FLOWERS = {"E": ("1f", "5f"), "S": ("2f", "6f"), "W": ("3f", "8f"), "N": ("4f", "7f")}

OPTIONS = (
    SELF_DRAWN, SEAT_WIND, PREVALENT_WIND, DISCARDER, LAST_TILE, KONG_REPLACEMENT, ROBBING_KONG,
    Option("first_turn", "bool", False, "won in the first go-around: 天胡 (dealer, self-drawn), 地胡 (self-drawn), "
                                        "人胡 (on a discard)"),
    Option("dealer_streak", "int", 0, "the dealer's consecutive wins N (連N拉N: 2N 台 more when the dealer "
                                      "wins or pays)", (0, 50)),
    Option("base", "int", 100, "base stake 底 paid on every win", (0, 10**6)),
    Option("per_tai", "int", 20, "stake per 台", (0, 10**6)),
)


def _item(key: str, count: int = 1, tiles: tuple[str, ...] = ()) -> Element:
    t = ITEMS[key]
    return Element(key, t.name_zh, t.name_en, t.value, Unit.TAI, count, tiles, t.source)


def _reading_items(hand: ParsedHand, groups: tuple[Group, ...], o: dict, single_wait: bool) -> list[Element]:
    """The 台 items of one reading, before exclusions."""
    sets = [g for g in groups if g.kind != "pair"]
    pair = next(g for g in groups if g.kind == "pair")
    triplets = [g for g in sets if g.is_triplet]
    tsumo = o["self_drawn"]
    out: list[Element] = []
    for w, key in ((o["seat_wind"], "seat_wind"), (o["prevalent_wind"], "round_wind")):
        hits = [g.notation() for g in triplets if from_code(g.first) == w]
        if hits:
            out.append(_item(key, len(hits), tuple(hits)))
    dragons = [g.notation() for g in triplets if from_code(g.first) in DRAGONS]
    if dragons:
        out.append(_item("dragon", len(dragons), tuple(dragons)))
    n_dragon_pairs = from_code(pair.first) in DRAGONS
    n_wind_pairs = from_code(pair.first) in WINDS
    winds = [g for g in triplets if from_code(g.first) in WINDS]
    if len(dragons) == 3:
        out.append(_item("big_dragons", 1, tuple(dragons)))
    elif len(dragons) == 2 and n_dragon_pairs:
        out.append(_item("little_dragons", 1, tuple(dragons) + (pair.notation(),)))
    if len(winds) == 4:
        out.append(_item("big_winds", 1, tuple(g.notation() for g in winds)))
    elif len(winds) == 3 and n_wind_pairs:
        out.append(_item("little_winds", 1, tuple(g.notation() for g in winds) + (pair.notation(),)))
    melded = hand.exposed
    if not melded:
        out.append(_item("concealed"))
        if tsumo:
            out.append(_item("concealed_self_drawn"))
    if tsumo:
        out.append(_item("self_drawn"))
    if len(hand.melds) == 5 and all(not m.concealed for m in hand.melds):
        out.append(_item("half_melded" if tsumo else "all_melded"))
    if single_wait:
        out.append(_item("single_wait", 1, (hand.win_tile,)))
    if not triplets and not hand.flowers and not any(is_honour(t) for t in hand.all_tiles()) \
            and not single_wait and not tsumo:
        out.append(_item("ping_hu"))
    if len(triplets) == 5:
        out.append(_item("all_pungs"))
    hidden = [g.notation() for g in triplets if g.concealed]
    if len(hidden) >= 3:
        out.append(_item({3: "three_concealed", 4: "four_concealed", 5: "five_concealed"}[len(hidden)], 1,
                         tuple(hidden)))
    suits = {suit(t) for t in hand.all_tiles()}
    if suits == {"z"}:
        out.append(_item("all_honours"))
        if any(e.key in ("big_dragons", "little_dragons", "big_winds", "little_winds") for e in out):
            out.append(_item("all_honours_overlap"))
    elif len(suits) == 1:
        out.append(_item("full_flush"))
    elif len(suits) == 2 and "z" in suits:
        out.append(_item("half_flush"))
    return out


def _situation_items(hand: ParsedHand, o: dict) -> list[Element]:
    tsumo = o["self_drawn"]
    out: list[Element] = []
    if o["last_tile"]:
        out.append(_item("last_tile_draw" if tsumo else "last_tile_discard"))
    if o["kong_replacement"]:
        out.append(_item("kong_replacement"))
    if o["robbing_kong"]:
        out.append(_item("robbing_kong"))
    if o["first_turn"]:
        out.append(_item("human" if not tsumo else "heaven" if o["seat_wind"] == "E" else "earth"))
    flowers = set(hand.flowers)
    if len(flowers) == 8:
        out.append(_item("eight_flowers", 1, tuple(sorted(flowers))))
    else:
        sets = [g for g in (("1f", "2f", "3f", "4f"), ("5f", "6f", "7f", "8f")) if flowers.issuperset(g)]
        if sets:
            out.append(_item("flower_set", len(sets), tuple(t for g in sets for t in g)))
        own = [f for f in SEAT_FLOWERS[o["seat_wind"]] if f in flowers and not any(f in g for g in sets)]
        if own:
            out.append(_item("seat_flower", len(own), tuple(own)))
    return out


def _apply_excludes(items: list[Element]) -> tuple[list[Element], list[str]]:
    keys = {e.key for e in items}
    gone = set().union(*(EXCLUDES.get(k, frozenset()) for k in keys))
    notes = [Note(f"{e.name_zh} not counted (included in a bigger item)", f"{e.name_zh}不计（已含在更大的台里）")
             for e in items if e.key in gone]
    return [e for e in items if e.key not in gone], notes


def _check_options(o: dict) -> None:
    tsumo = o["self_drawn"]
    if tsumo and o["robbing_kong"]:
        raise RulesError("contradictory-flags", "robbing a kong (搶槓) is a win on another player's tile, not self-drawn")
    if not tsumo and o["kong_replacement"]:
        raise RulesError("contradictory-flags", "槓上開花 is self-drawn: add self_drawn or drop kong_replacement")
    if o["discarder"] is not None and (tsumo or o["discarder"] == o["seat_wind"]):
        raise RulesError("contradictory-flags", "discarder is another seat than the winner's, on a discard win only")


def _score(text: str, o: dict) -> SystemResult:
    hand = parse(text, TILES_144, (17,), "taiwan")
    _check_options(o)
    tsumo = o["self_drawn"]
    options = readings(hand, tsumo)
    if not options:
        raise RulesError("not-winning", f"{hand.notation()} is not a winning hand: a Taiwan 16-tile hand is five sets "
                         "(chows, pungs, kongs) and a pair")
    single = len(waits(hand)) == 1
    situation = _situation_items(hand, o)
    best: tuple[int, list[Element], list[str]] | None = None
    for groups in options:
        items, notes = _apply_excludes(_reading_items(hand, groups, o, single) + situation)
        total = total_of(items, Unit.TAI)
        if best is None or total > best[0]:
            best = (total, items, notes)
    assert best is not None
    _, items, notes = best
    winner, n = o["seat_wind"], o["dealer_streak"]
    dealer_items = [_item("dealer")] + ([_item("streak", n)] if n else [])
    dealer_paid = winner == "E" or (not tsumo and o["discarder"] == "E")
    if dealer_paid:
        items = dealer_items + items
    elements = tuple(items)
    total = total_of(elements, Unit.TAI)
    extra = total_of(dealer_items, Unit.TAI)
    payments = None
    if tsumo:
        payers = {s: o["base"] + o["per_tai"] * (total + (extra if s == "E" and not dealer_paid else 0))
                  for s in SEATS if s != winner}
        payments = seat_payments(winner, payers)
        if not dealer_paid:
            notes.append(Note(f"the dealer (E) pays {extra} 台 more (作莊{' and 連莊拉莊' if n else ''})",
                              f"庄家（东）多付 {extra} 台（作莊{'及連莊拉莊' if n else ''}）"))
    elif o["discarder"] is not None:
        payments = seat_payments(winner, {o["discarder"]: o["base"] + o["per_tai"] * total})
    else:
        notes.append(NEED_DISCARDER)
    return SystemResult("taiwan", hand.notation(), True, elements, total, Unit.TAI, payments,
                        {"base": o["base"], "per_tai": o["per_tai"], "waits": waits(hand)}, tuple(notes))


SYSTEMS = (RuleSystem(
    "taiwan", "台灣十六張麻將", "Taiwan 16-tile mahjong", tile_set=TILES_144, hand_sizes=(17,), options=OPTIONS,
    dice_rule="the seed gives none; common practice: three dice, the sum counted from the dealer picks the wall",
    doc="docs/rules/taiwan.md", scorer=_score, unit=Unit.TAI, excludes=EXCLUDES),)
