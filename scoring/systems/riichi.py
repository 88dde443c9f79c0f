"""Riichi (Japanese mahjong, 立直麻将) through the ``mahjong`` package: no second riichi scorer here.

This module reads our notation (red fives ``0m 0p 0s``, melds in brackets: ``[123m,1]`` chi,
``[555p,2]`` pon, ``[EEEE]`` closed kan, ``[7777s,1]`` open kan, ``[7777s,5]`` added kan 加杠),
turns it and the situation options into the package's tiles, melds and ``HandConfig``, and turns
its answer into a ``SystemResult``: one element per yaku (han; names in Japanese, Chinese and
English) and per fu item, the total in han, ``details`` with han, fu, the limit name and the cost,
and the payments of the four seats (dealer or not, tsumo or ron, honba).

Source: ../shared/seeds/004_439ac0ac3d24f1c0.txt, the passage "９.役" (a hand needs a yaku; pinfu,
tanyao, iipeiko, riichi: "平和的基本符只有副底，就算是自摸那两符一样不能算"); the scoring itself is the
``mahjong`` package's (https://github.com/MahjongRepository/mahjong, MIT). Open points and choices:
docs/rules/riichi.md.
"""

from __future__ import annotations

from mahjong.constants import EAST, NORTH, SOUTH, WEST
from mahjong.hand_calculating.hand import HandCalculator
from mahjong.hand_calculating.hand_config import HandConfig, OptionalRules
from mahjong.meld import Meld as LibMeld

from .base import (DISCARDER, KONG_REPLACEMENT, LAST_TILE, PREVALENT_WIND, ROBBING_KONG, SEAT_WIND, SEATS, SELF_DRAWN,
                   TILES_136_RED, Element, Note, Option, RulesError, RuleSystem, SystemResult, Unit, seat_payments,
                   total_of)
from .notation import HONOURS, read_tiles, kind, parse

SEED = "../shared/seeds/004_439ac0ac3d24f1c0.txt, passage 9.役"
LIB = "mahjong package (MahjongRepository/mahjong)"

OPTIONS = (
    SELF_DRAWN, SEAT_WIND, PREVALENT_WIND, DISCARDER,
    Option("riichi", "bool", False, "riichi declared (立直)"),
    Option("double_riichi", "bool", False, "double riichi, declared on the first turn (两立直; implies riichi)"),
    Option("ippatsu", "bool", False, "won within one go-around of riichi (一发)"),
    Option("dora", "tiles", "", "dora indicators (宝牌指示牌), e.g. '3m' or '3m7z'"),
    Option("ura_dora", "tiles", "", "ura-dora indicators (里宝牌指示牌; count only with riichi)"),
    LAST_TILE, KONG_REPLACEMENT, ROBBING_KONG,
    Option("tenhou", "bool", False, "dealer wins on the first draw (天和)"),
    Option("chiihou", "bool", False, "non-dealer wins on the first draw, no call before (地和)"),
    Option("honba", "int", 0, "honba counters (本场): 300 more per counter from the payers", (0, 99)),
    Option("open_tanyao", "bool", True, "house rule: all simples counts on an open hand (喰断, common: yes)"),
    Option("kiriage", "bool", False, "house rule: 4 han 30 fu and 3 han 60 fu are mangan (切上满贯)"),
)

#: Yaku of the package (by class name): (Japanese, Chinese, English).
YAKU_NAMES: dict[str, tuple[str, str, str]] = {
    "Tsumo": ("門前清自摸和", "门前清自摸和", "Fully concealed self-draw"),
    "Riichi": ("立直", "立直", "Riichi"),
    "Ippatsu": ("一発", "一发", "Ippatsu (one-shot)"),
    "Chankan": ("搶槓", "抢杠", "Robbing a kan"),
    "Rinshan": ("嶺上開花", "岭上开花", "After a kan"),
    "Haitei": ("海底摸月", "海底摸月", "Last tile draw"),
    "Houtei": ("河底撈魚", "河底捞鱼", "Last tile discard"),
    "Pinfu": ("平和", "平和", "All sequences (pinfu)"),
    "Tanyao": ("断幺九", "断幺九", "All simples"),
    "Iipeiko": ("一盃口", "一杯口", "Pure double sequence"),
    "SeatWindEast": ("自風 東", "自风 东", "Seat wind East"),
    "SeatWindSouth": ("自風 南", "自风 南", "Seat wind South"),
    "SeatWindWest": ("自風 西", "自风 西", "Seat wind West"),
    "SeatWindNorth": ("自風 北", "自风 北", "Seat wind North"),
    "RoundWindEast": ("場風 東", "场风 东", "Round wind East"),
    "RoundWindSouth": ("場風 南", "场风 南", "Round wind South"),
    "RoundWindWest": ("場風 西", "场风 西", "Round wind West"),
    "RoundWindNorth": ("場風 北", "场风 北", "Round wind North"),
    "Haku": ("役牌 白", "役牌 白", "White dragon"),
    "Hatsu": ("役牌 發", "役牌 发", "Green dragon"),
    "Chun": ("役牌 中", "役牌 中", "Red dragon"),
    "DaburuRiichi": ("ダブル立直", "两立直", "Double riichi"),
    "Chiitoitsu": ("七対子", "七对子", "Seven pairs"),
    "Chantai": ("混全帯幺九", "混全带幺九", "Half outside hand"),
    "Ittsu": ("一気通貫", "一气通贯", "Pure straight"),
    "Sanshoku": ("三色同順", "三色同顺", "Mixed triple sequence"),
    "SanshokuDoukou": ("三色同刻", "三色同刻", "Triple triplets"),
    "SanKantsu": ("三槓子", "三杠子", "Three kans"),
    "Toitoi": ("対々和", "对对和", "All triplets"),
    "Sanankou": ("三暗刻", "三暗刻", "Three concealed triplets"),
    "Shosangen": ("小三元", "小三元", "Little three dragons"),
    "Honroto": ("混老頭", "混老头", "All terminals and honours"),
    "Ryanpeikou": ("二盃口", "二杯口", "Twice pure double sequence"),
    "Junchan": ("純全帯幺九", "纯全带幺九", "Fully outside hand"),
    "Honitsu": ("混一色", "混一色", "Half flush"),
    "Chinitsu": ("清一色", "清一色", "Full flush"),
    "Renhou": ("人和", "人和", "Blessing of man"),
    "Tenhou": ("天和", "天和", "Blessing of heaven"),
    "Chiihou": ("地和", "地和", "Blessing of earth"),
    "Daisangen": ("大三元", "大三元", "Big three dragons"),
    "Suuankou": ("四暗刻", "四暗刻", "Four concealed triplets"),
    "SuuankouTanki": ("四暗刻単騎", "四暗刻单骑", "Four concealed triplets, single wait"),
    "Tsuuiisou": ("字一色", "字一色", "All honours"),
    "Ryuuiisou": ("緑一色", "绿一色", "All green"),
    "Chinroutou": ("清老頭", "清老头", "All terminals"),
    "ChuurenPoutou": ("九蓮宝燈", "九莲宝灯", "Nine gates"),
    "DaburuChuurenPoutou": ("純正九蓮宝燈", "纯正九莲宝灯", "True nine gates"),
    "KokushiMusou": ("国士無双", "国士无双", "Thirteen orphans"),
    "DaburuKokushiMusou": ("国士無双十三面待ち", "国士无双十三面", "Thirteen orphans, 13-sided wait"),
    "DaiSuushii": ("大四喜", "大四喜", "Big four winds"),
    "Shousuushii": ("小四喜", "小四喜", "Little four winds"),
    "Suukantsu": ("四槓子", "四杠子", "Four kans"),
    "Dora": ("ドラ", "宝牌", "Dora"),
    "UraDora": ("裏ドラ", "里宝牌", "Ura dora"),
    "AkaDora": ("赤ドラ", "赤宝牌", "Red five"),
}
#: The seed's own passage covers these four; the rest is the package's (and the public rules it follows).
_SEED_YAKU = {"Pinfu", "Tanyao", "Iipeiko", "Riichi"}

#: Fu reasons of the package: (Chinese, English).
FU_NAMES: dict[str, tuple[str, str]] = {
    "base": ("副底", "Base"), "closed_ron": ("门前荣和", "Concealed ron"), "tsumo": ("自摸", "Self-draw"),
    "pair_wait": ("单骑", "Pair wait"), "kanchan": ("嵌张", "Closed wait"), "penchan": ("边张", "Edge wait"),
    "valued_pair": ("役牌雀头", "Value pair"), "double_valued_pair": ("连风雀头", "Double value pair"),
    "open_pon": ("明刻 中张", "Open pon, simples"), "open_terminal_pon": ("明刻 幺九", "Open pon, terminals/honours"),
    "closed_pon": ("暗刻 中张", "Closed pon, simples"),
    "closed_terminal_pon": ("暗刻 幺九", "Closed pon, terminals/honours"),
    "open_kan": ("明杠 中张", "Open kan, simples"), "open_terminal_kan": ("明杠 幺九", "Open kan, terminals/honours"),
    "closed_kan": ("暗杠 中张", "Closed kan, simples"),
    "closed_terminal_kan": ("暗杠 幺九", "Closed kan, terminals/honours"),
    "hand_without_fu": ("副露平和形", "Open pinfu shape"),
}

#: The package's mutually exclusive yaku (it never returns both): element key -> keys it excludes.
EXCLUDES = {
    "DaburuRiichi": frozenset({"Riichi"}),
    "Chinitsu": frozenset({"Honitsu"}),
    "Junchan": frozenset({"Chantai", "Honroto"}),
    "Ryanpeikou": frozenset({"Iipeiko", "Chiitoitsu"}),
    "Honroto": frozenset({"Chantai", "Junchan"}),
    "Haitei": frozenset({"Houtei", "Rinshan"}),
    "Houtei": frozenset({"Haitei", "Chankan"}),
    "SuuankouTanki": frozenset({"Suuankou"}),
    "DaburuKokushiMusou": frozenset({"KokushiMusou"}),
    "DaburuChuurenPoutou": frozenset({"ChuurenPoutou"}),
}

_WIND = {"E": EAST, "S": SOUTH, "W": WEST, "N": NORTH}
_SUIT_BASE = {"m": 0, "p": 9, "s": 18}
_HONOUR_34 = {"E": 27, "S": 28, "W": 29, "N": 30, "P": 31, "F": 32, "C": 33}
_RED_ID = {"m": 16, "p": 52, "s": 88}


def _index34(tile: str) -> int:
    t = kind(tile)
    return _HONOUR_34[t] if t in HONOURS else _SUIT_BASE[t[1]] + int(t[0]) - 1


class _Ids:
    """Hands out distinct 136-format ids: a red five gets its suit's red id, others avoid it (when
    the hand is played with red fives; without any written, all four ids of a five are plain)."""

    def __init__(self, reds: bool) -> None:
        self.used: set[int] = set()
        self.reserved = set(_RED_ID.values()) if reds else set()

    def take(self, tile: str) -> int:
        if tile[0] == "0":
            self.used.add(_RED_ID[tile[1]])
            return _RED_ID[tile[1]]
        base = 4 * _index34(tile)
        for i in range(base, base + 4):
            if i not in self.used and i not in self.reserved:
                self.used.add(i)
                return i
        raise RulesError("fifth-tile", f"four {tile} with red fives in play: one five of each suit is red, "
                         f"write it 0{tile[1]}")


def _indicators(text: str, name: str) -> list[str]:
    tiles, end = read_tiles(text, 0, "[]")
    if end != len(text):
        raise RulesError("syntax", f"{name} must be indicator tiles only (e.g. '3m7z'), got {text!r}")
    return [t for t, _ in tiles]


def _score(text: str, o: dict) -> SystemResult:
    hand = parse(text, TILES_136_RED, (14,), "riichi")
    dora = _indicators(o["dora"], "dora")
    ura = _indicators(o["ura_dora"], "ura_dora")
    for t in dora + ura:
        if t.endswith("f"):
            raise RulesError("tile-not-in-set", f"{t} is a flower: riichi plays 136 tiles, no flowers")
    counts: dict[str, int] = {}
    for t in hand.all_tiles() + dora + ura:
        counts[kind(t)] = counts.get(kind(t), 0) + 1
    for t, c in counts.items():
        if c > 4:
            raise RulesError("fifth-tile", f"{t} appears {c} times among the hand and the indicators: there are 4")
    reds = any(t[0] == "0" for t in hand.all_tiles() + dora + ura)
    ids = _Ids(reds)
    all_ids: list[int] = []
    melds = []
    for m in hand.melds:
        mids = [ids.take(t) for t in m.tiles]
        all_ids += mids
        if m.kind == "chow":
            melds.append(LibMeld(LibMeld.CHI, mids, opened=True))
        elif m.kind == "pung":
            melds.append(LibMeld(LibMeld.PON, mids, opened=True))
        else:
            melds.append(LibMeld(LibMeld.SHOUMINKAN if m.promoted else LibMeld.KAN, mids, opened=not m.concealed))
    all_ids += [ids.take(t) for t in hand.concealed]
    win_id = ids.take(hand.win_tile)
    all_ids.append(win_id)
    dealer = o["seat_wind"] == "E"
    tsumo = o["self_drawn"]
    config = HandConfig(
        is_tsumo=tsumo, is_riichi=o["riichi"] or o["double_riichi"], is_ippatsu=o["ippatsu"],
        is_rinshan=o["kong_replacement"], is_chankan=o["robbing_kong"],
        is_haitei=o["last_tile"] and tsumo, is_houtei=o["last_tile"] and not tsumo,
        is_daburu_riichi=o["double_riichi"], is_tenhou=o["tenhou"], is_chiihou=o["chiihou"],
        player_wind=_WIND[o["seat_wind"]], round_wind=_WIND[o["prevalent_wind"]], tsumi_number=o["honba"],
        options=OptionalRules(has_open_tanyao=o["open_tanyao"], has_aka_dora=reds, kiriage=o["kiriage"]))
    dora_ids = [ids.take(t) for t in dora]
    ura_ids = [ids.take(t) for t in ura]
    r = HandCalculator.estimate_hand_value(all_ids, win_id, melds=melds, dora_indicators=dora_ids, config=config,
                                           ura_dora_indicators=ura_ids)
    if r.error == HandCalculator.ERR_HAND_NOT_WINNING:
        raise RulesError("not-winning", f"{hand.notation()} is not a winning hand: the tiles make neither four sets "
                         "and a pair, nor seven pairs, nor thirteen orphans")
    if r.error == HandCalculator.ERR_NO_YAKU:
        return SystemResult("riichi", hand.notation(), False, (), 0, Unit.HAN, None, {"han": 0, "fu": 0},
                            (Note("no yaku (役): a hand without one cannot win, dora do not count as one (seed 004, 9.役)",
                                  "无役：没有役不能和牌，宝牌不算役（9.役）"),))
    if r.error:
        raise RulesError("contradictory-flags", f"these options cannot all hold: {r.error.replace('_', ' ')} "
                         "(riichi needs a closed hand; ippatsu needs riichi; haitei/rinshan/tenhou/chiihou need tsumo, "
                         "houtei/chankan need ron; tenhou is the dealer's (seat E), chiihou another seat's)")
    elements = []
    for y in r.yaku:
        name = type(y).__name__
        han = y.han_open if r.is_open_hand else y.han_closed
        if not han:
            continue
        ja, zh, en = YAKU_NAMES.get(name, (y.name, y.name, y.name))
        elements.append(Element(name, zh, en, han, Unit.HAN, 1, (), SEED if name in _SEED_YAKU else LIB, ja))
    total = total_of(elements, Unit.HAN)
    fu_items = [Element(f"fu-{d['reason']}", *FU_NAMES.get(d["reason"], (d["reason"], d["reason"])), d["fu"], Unit.FU,
                        1, (), LIB) for d in (r.fu_details or [])]
    cost = r.cost
    details = {"han": r.han, "fu": r.fu, "limit": cost.get("yaku_level") or None, "dealer": dealer,
               "main": cost["main"], "additional": cost["additional"]}
    notes: list[str] = []
    winner = o["seat_wind"]
    payments = None
    if tsumo:
        payers = {s: (cost["main"] if s == "E" else cost["additional"]) + cost["main_bonus"]
                  for s in SEATS if s != winner}
        payments = seat_payments(winner, payers)
    elif o["discarder"] is not None and o["discarder"] != winner:
        payments = seat_payments(winner, {o["discarder"]: cost["main"] + cost["main_bonus"]})
    else:
        notes.append(Note("give discarder (a seat other than the winner's) for the payments of a ron",
                          "荣和须给出放铳者（和牌者以外的座位），才能计算收付"))
    if total != r.han:  # the package's han and the sum of its yaku always agree; say so if they ever do not
        notes.append(Note(f"the package gives {r.han} han, its yaku add up to {total}",
                          f"mahjong 包给出 {r.han} 翻，其役相加为 {total} 翻"))
    return SystemResult("riichi", hand.notation(), True, tuple(elements) + tuple(fu_items), total, Unit.HAN,
                        payments, details, tuple(notes))


SYSTEMS = (RuleSystem(
    "riichi", "日本立直麻将", "Japanese riichi mahjong", tile_set=TILES_136_RED, hand_sizes=(14,), options=OPTIONS,
    dice_rule="two dice, the sum counted counter-clockwise from the dealer (1 = dealer) picks the wall, the wall is "
              "broken that many stacks from its right end (common practice; the seed does not say)",
    doc="docs/rules/riichi.md", scorer=_score, unit=Unit.HAN, excludes=EXCLUDES,
    dice_method="sum-count"),)
