"""Fuzhou mahjong (福州麻将): 144 tiles, the gold (金) wild tile, flowers counted, four special hands.

The gold is the tile turned up after the flower replacements (option ``gold``, e.g. ``5p``); every
gold in the hand stands for any tile (``notation.readings(..., wild=gold)``) and is never used in a
claimed set (金不能用于碰牌). The 8 flowers and the 28 honours are all flowers (36 花), written in the
hand outside the brackets (``1f2fCE…``); the hand itself holds suited tiles only.

花数 (the flower count): one per flower or honour, one per exposed kong, two per concealed kong, two
more per 花暗杠 (four of one honour, or all four seasons 1f-4f, or all four plants 5f-8f), one per
dealer streak (连庄) when the dealer wins. Special hands (加番牌型, only the highest counts): 平胡 30 (no
flower, no kong), 抢金 30, 三金倒 40 (three golds: a win whatever the rest), 金雀 60 (two golds as the
pair); 抢金, 三金倒 and 金雀 take 10 more when the hand is also 平胡.

Payments per payer, in 底分 (``base``): with a special hand 花数 x 2 + 番, from each other seat (the
seed counts these wins as self-drawn, 按自摸算); otherwise self-drawn 花数 x 2 from each other seat,
on a discard 花数 from the discarder. When the dealer has a streak and another seat wins, the dealer
pays the streak (连庄番数) to the winner besides.

Hands: the seed's 14 tiles (four sets and a pair) or the 16-tile game's 17 (five sets and a pair),
told apart by their size.

Source: ../shared/seeds/002_4c2a73aa42bc09ab.txt, the passage "1.1 福州麻将简介 … 1.8.2 计算公式"
(quoted in docs/rules/fuzhou.md). Open points and choices: docs/rules/fuzhou.md.
"""

from __future__ import annotations

from .base import (DISCARDER, SEAT_WIND, SEATS, SELF_DRAWN, TILES_144_HONOUR_FLOWERS, Element, ElementSpec,
                   NEED_DISCARDER, Note, Option, RulesError, RuleSystem, SystemResult, Unit, check_discarder,
                   seat_payments, total_of)
from .notation import ParsedHand, is_honour, kind, parse, read_tiles, readings, suit

SEED = "../shared/seeds/002_4c2a73aa42bc09ab.txt 福州麻将"


_ITEMS = (
    ElementSpec("flower", "花牌", "Flower (1f-8f)", 1, f"{SEED} 1.4 花: 春、夏、秋、冬、梅、兰、菊、竹 … 作为花牌处理"),
    ElementSpec("honour", "字牌花", "Honour, counted as a flower", 1, f"{SEED} 1.4 花: 中、发、白、东、南、西、北，作为花牌处理"),
    ElementSpec("exposed_kong", "明杠", "Exposed kong", 1, f"{SEED} 1.4: 一个明杠计1朵花"),
    ElementSpec("concealed_kong", "暗杠", "Concealed kong", 2, f"{SEED} 1.4: 暗杠计2朵花"),
    ElementSpec("flower_kong", "花暗杠", "Flower kong: four alike, or all seasons, or all plants", 2,
                f"{SEED} 1.4: 抓齐四个一样的花或者抓齐春、夏、秋、冬和抓齐梅、兰、菊、竹，算作花暗杠，再额外计2朵花"),
    ElementSpec("dealer_streak", "连庄", "Dealer streak (the dealer wins)", 1, f"{SEED} 1.5: 连庄一次加1番"),
    ElementSpec("gold", "金", "Gold held (house rule 金番)", 1, "16-tile Fuzhou practice (docs/rules/fuzhou.md)"),
    ElementSpec("doubled", "花数×2", "Flower count doubled (self-drawn, or a special hand)", 1,
                f"{SEED} 1.8.1: 花、连庄得点数都按自摸算（即×2）; 1.8.2 自摸积分数=底分*（花数*2）"),
    ElementSpec("plain", "平胡", "Plain win: no flower, no kong", 30, f"{SEED} 1.8.1 平胡 (30番)"),
    ElementSpec("rob_gold", "抢金", "Robbing the gold: won before or on the dealer's first discard", 30,
                f"{SEED} 1.8.1 抢金 (30番)"),
    ElementSpec("three_golds", "三金倒", "Three golds", 40, f"{SEED} 1.8.1 三金倒: 抓到三个金，不管其他牌如何就可和牌（40番）"),
    ElementSpec("gold_pair", "金雀", "Two golds as the pair", 60, f"{SEED} 1.8.1 金雀: 用2个金做将牌（60番）"),
    ElementSpec("plain_bonus", "平和加番", "Also plain (no flower, no kong)", 10,
                f"{SEED} 1.8.1: 如果抢金/三金倒/金雀情况下还能达成平和，则再加10番"),
)
ITEMS: dict[str, ElementSpec] = {i.key: i for i in _ITEMS}
SPECIALS = ("rob_gold", "three_golds", "gold_pair")
#: One special hand counts (the highest); 平胡 is the plain win without the others.
EXCLUDES: dict[str, frozenset[str]] = {
    **{k: frozenset(s for s in SPECIALS + ("plain",) if s != k) for k in SPECIALS},
    "plain": frozenset(SPECIALS + ("plain_bonus",)),
}
FLOWER_KEYS = ("flower", "honour", "exposed_kong", "concealed_kong", "flower_kong", "dealer_streak", "gold")

OPTIONS = (
    SELF_DRAWN, SEAT_WIND, DISCARDER,
    Option("gold", "tiles", "", "the gold 金 (wild tile), turned up after the flower replacements, e.g. '5p' (needed)"),
    Option("rob_gold", "bool", False, "抢金: won before the dealer's first discard (天胡) or on it"),
    Option("dealer_streak", "int", 0, "the dealer's consecutive wins N (连庄: N more; a non-dealer winner gets N "
                                      "from the dealer)", (0, 50)),
    Option("base", "int", 1, "底分, the stake per point", (0, 10**6)),
    Option("gold_flowers", "bool", False, "house rule: each gold held counts as a flower (金番, 16-tile practice)"),
)


def _item(key: str, count: int = 1, tiles: tuple[str, ...] = (), value: int | None = None) -> Element:
    return ITEMS[key].element(Unit.POINTS, count, tiles, value)


def _gold(text: str) -> str:
    tiles, end = read_tiles(text, 0, "[]")
    if end != len(text) or len(tiles) != 1 or suit(tiles[0][0]) not in "mps" or tiles[0][0][0] == "0":
        raise RulesError("bad-value", f"fuzhou needs the gold 金, one suited tile like '5p' (option gold), "
                         f"got {text!r}")
    return tiles[0][0]


def _flower_items(hand: ParsedHand, golds: int, o: dict) -> list[Element]:
    out = []
    flowers = [t for t in hand.flowers if t.endswith("f")]
    honours = [t for t in hand.flowers if is_honour(t)]
    if flowers:
        out.append(_item("flower", len(flowers), tuple(flowers)))
    if honours:
        out.append(_item("honour", len(honours), tuple(honours)))
    exposed = [m.notation() for m in hand.melds if m.kind == "kong" and not m.concealed]
    concealed = [m.notation() for m in hand.melds if m.kind == "kong" and m.concealed]
    if exposed:
        out.append(_item("exposed_kong", len(exposed), tuple(exposed)))
    if concealed:
        out.append(_item("concealed_kong", len(concealed), tuple(concealed)))
    sets = [t * 4 for t in sorted(set(honours)) if honours.count(t) == 4]
    sets += [f"{''.join(g)}f" for g in ("1234", "5678") if all(f"{d}f" in flowers for d in g)]
    if sets:
        out.append(_item("flower_kong", len(sets), tuple(sets)))
    if o["dealer_streak"] and o["seat_wind"] == "E":
        out.append(_item("dealer_streak", o["dealer_streak"]))
    if o["gold_flowers"] and golds:
        out.append(_item("gold", golds))
    return out


def _score(text: str, o: dict) -> SystemResult:
    gold = _gold(o["gold"])
    hand = parse(text, TILES_144_HONOUR_FLOWERS, (14, 17), "fuzhou")
    if any(kind(t) == kind(gold) for m in hand.melds for t in m.tiles):
        raise RulesError("bad-meld", f"the gold {gold} is in a claimed set: a gold is never used in a set "
                         "(金不能用于碰牌)")
    tsumo, winner, disc = o["self_drawn"], o["seat_wind"], o["discarder"]
    check_discarder(o)
    golds = sum(kind(t) == kind(gold) for t in hand.concealed) + (kind(hand.win_tile) == kind(gold) and tsumo)
    options = readings(hand, tsumo, wild=gold)
    if not options and golds < 3:
        raise RulesError("not-winning", f"{hand.notation()} with the gold {gold} is not a winning hand: "
                         f"{(hand.size - 2) // 3} sets and a pair (golds stand for any tile), or three golds (三金倒)")
    notes: list[str] = []
    flower_elements = _flower_items(hand, golds, o)
    flower_count = total_of(flower_elements, Unit.POINTS)
    plain = not hand.flowers and not any(m.kind == "kong" for m in hand.melds)
    found = [k for k, ok in (("rob_gold", o["rob_gold"]), ("three_golds", golds >= 3),
                             ("gold_pair", any(g.kind == "pair" and g.wilds == 2 for r in options for g in r))) if ok]
    special: list[Element] = []
    if found:
        best = max(found, key=lambda k: ITEMS[k].value)
        special.append(_item(best))
        notes += [Note(f"{ITEMS[k].name_zh} not counted (only the highest special hand counts)",
                       f"{ITEMS[k].name_zh}不计（只计最高的一种特殊牌型）") for k in found if k != best]
        if plain:
            special.append(_item("plain_bonus"))
    elif plain:
        special.append(_item("plain"))
    elements = list(flower_elements)
    if (special or tsumo) and flower_count:
        elements.append(_item("doubled", value=flower_count))
    elements += special
    total = total_of(elements, Unit.POINTS)
    base = o["base"]
    all_pay = bool(special) or tsumo
    payments = None
    if all_pay or disc is not None:
        payers = [s for s in SEATS if s != winner] if all_pay else [disc]
        paid = {s: base * total for s in payers}
        if o["dealer_streak"] and winner != "E":
            extra = base * o["dealer_streak"] * (2 if all_pay else 1)
            paid["E"] = paid.get("E", 0) + extra
            notes.append(Note(f"the dealer (E) pays the streak {o['dealer_streak']} to the winner: {extra} "
                              "(庄家连庄时如果和牌者不是庄家本人，那么他就需要支付连庄番数给赢家)",
                              f"庄家（东）向和牌者支付连庄 {o['dealer_streak']}：{extra}"
                              "（庄家连庄时如果和牌者不是庄家本人，那么他就需要支付连庄番数给赢家）"))
        payments = seat_payments(winner, paid)
        if special and not tsumo:
            notes.append(Note("a special hand is paid as self-drawn (按自摸算): each other seat pays",
                              "特殊牌型按自摸算：三家都付"))
    else:
        notes.append(NEED_DISCARDER)
    return SystemResult("fuzhou", hand.notation(), True, tuple(elements), total, Unit.POINTS, payments,
                        {"gold": gold, "golds": golds, "flower_count": flower_count, "base": base,
                         "per_payer": base * total}, tuple(notes))


SYSTEMS = (RuleSystem(
    "fuzhou", "福州麻将", "Fuzhou mahjong (gold wild tile)", tile_set=TILES_144_HONOUR_FLOWERS, hand_sizes=(14, 17),
    options=OPTIONS, dice_rule="not given by the seed: the dealer throws; the gold is the first tile at the "
                               "replacement end after the flower replacements (补完花后，补花的那端的第一张翻开)",
    doc="docs/rules/fuzhou.md", scorer=_score, unit=Unit.POINTS, excludes=EXCLUDES),)
