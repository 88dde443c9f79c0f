"""Changsha mahjong (长沙麻将): 108 suited tiles, the 2/5/8 pair, big hands, opening wins, birds.

A small win (小胡, 平胡) is four sets and a pair of 2, 5 or 8 (二五八将). A big win (大胡) counts each big
hand it shows (碰碰胡, 将将胡, 清一色, 七小对 and its 豪华 quads, 全求人, 海底捞月/海底炮, 杠上开花, 杠上炮,
抢杠胡, 天胡, 地胡; 门清 as a house rule); 碰碰胡, 清一色, 七小对 and 全求人 free the pair from 2/5/8, and
将将胡 needs no shape at all (14 tiles all 2/5/8). Values per payer, in points: a small win 1 on a
discard, 2 self-drawn; each big hand 6 either way (大胡可叠加). Opening wins (起手胡: 四喜, 板板胡, 六六顺,
缺一色) are scored on the dealt hand (``opening``), each as a small self-drawn win.

Payments: the discarder pays on a discard; each other seat pays when self-drawn (and for an opening
win). Then per payer: +1 when the dealer wins or pays (``dealer_bonus``, 庄闲), and the birds
(扎鸟, ``birds`` = the tiles turned up): a bird's rank counts seats from the winner (1, 5, 9 = the
winner, 2, 6 = the next seat …); on a discard a bird on the winner or the discarder doubles the
discarder's payment; self-drawn, a bird on the winner doubles every payment, a bird on a payer
doubles that payer's. Several winners on one discard (通炮): ``score_discard`` scores each hand and
adds their payments.

Source: ../shared/seeds/004_439ac0ac3d24f1c0.txt, passages "长沙麻将的一些实战技巧漫谈 一、长沙麻将的基本
规则", "长沙麻将教程" and "打长沙麻将指南技巧" (quoted in docs/rules/changsha.md); the points per hand
and the big-hand list from the public rules text of lixinpingfriend/dahhu (config_CSMJ.lua,
HowToPlayTexts 长沙麻将). Open points and choices: docs/rules/changsha.md.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..errors import ScoringError
from .base import (DISCARDER, KONG_REPLACEMENT, LAST_TILE, ROBBING_KONG, SEAT_WIND, SEATS, SEAT_ZH, SELF_DRAWN,
                   TILES_108, Element, ElementSpec, NEED_DISCARDER, Note, Option, RulesError, RuleSystem,
                   SystemResult, Unit, check_discarder, seat_payments, total_of)
from .notation import Group, ParsedHand, fours, is_seven_pairs, kind, parse, rank, read_tiles, readings, suit

SEED = "../shared/seeds/004_439ac0ac3d24f1c0.txt"
BASICS = f"{SEED} 长沙麻将的一些实战技巧漫谈 一、基本规则"
GUIDE = f"{SEED} 打长沙麻将指南技巧"
TUTORIAL = f"{SEED} 长沙麻将教程"
DAHHU = "lixinpingfriend/dahhu config_CSMJ.lua (长沙麻将 HowToPlayTexts)"
SMALL, BIG = 1, 6  # points per payer: a small win on a discard, one big hand


_ITEMS = (
    ElementSpec("small", "小胡(平胡)", "Small win: four sets and a 2/5/8 pair", SMALL,
                f"{BASICS}: 普通胡…要求2、5、8做将; {DAHHU}: 小胡接炮 点炮方出1分"),
    ElementSpec("small_self_drawn", "小胡自摸", "Small win self-drawn (each pays 2)", 1, f"{DAHHU}: 小胡自摸 三家每人出2分"),
    ElementSpec("all_pungs", "碰碰胡", "All pungs", BIG, f"{BASICS}: 清一色、碰碰胡、七小对、全求人四种大胡均可任意做将"),
    ElementSpec("all_258", "将将胡(乱将)", "All tiles 2, 5, 8", BIG, f"{BASICS}: 乱将胡则只需要14张全是258就可以，且可吃可碰"),
    ElementSpec("full_flush", "清一色", "Full flush", BIG, f"{BASICS}: 四种大胡"),
    ElementSpec("seven_pairs", "七小对", "Seven pairs", BIG, f"{BASICS}: 四种大胡; {SEED} 中高级提高班: 小七对"),
    ElementSpec("luxury", "豪华(四张)", "Luxury: four alike in seven pairs (one more big hand each)", BIG,
                f"{DAHHU}: 双豪华七小对 算3个大胡, 三豪华七小对 算4个大胡"),
    ElementSpec("all_melded", "全求人", "All melded, single wait", BIG, f"{BASICS}: 四种大胡; {DAHHU}: 单调牌可以不为258"),
    ElementSpec("last_draw", "海底捞月", "Won on the last tile (海底)", BIG, f"{BASICS}: “赌海底”要求 2、5、8做将; {DAHHU}"),
    ElementSpec("last_discard", "海底炮", "Won on the last tile, discarded", BIG, f"{BASICS}: 赌海底; {DAHHU}"),
    ElementSpec("kong_flower", "杠上开花", "Won on a kong replacement tile", BIG, f"{GUIDE}: 杠上开花; {BASICS}: 杠上开花或抢杠"),
    ElementSpec("kong_discard", "杠上炮", "Won on the konger's replacement discard", BIG, f"{GUIDE}: 打出的该补张牌杠上炮，大胡"),
    ElementSpec("robbing_kong", "抢杠胡", "Robbing a kong", BIG, f"{BASICS}: 杠上开花或抢杠 要求2、5、8做将; {DAHHU}"),
    ElementSpec("heaven", "天胡", "Heavenly win (dealer, dealt hand)", BIG, f"{GUIDE}: 天胡; {DAHHU}: 天胡,单指庄家"),
    ElementSpec("earth", "地胡", "Earthly win (on the dealer's first discard)", BIG, f"{DAHHU}: 地胡,单指闲家"),
    ElementSpec("concealed", "门前清", "Concealed hand (house rule)", BIG, f"{SEED} 中高级提高班: 现在长沙某些地方门清也算大番子"),
    ElementSpec("four_alike", "四喜", "Opening: four alike", 2, f"{GUIDE}: 四喜; {DAHHU}: 起手胡算小胡自摸"),
    ElementSpec("no_258", "板板胡", "Opening: no 2, 5 or 8", 2, f"{GUIDE}: 板板胡; {DAHHU}: 手中没有2,5,8的牌"),
    ElementSpec("two_pungs", "六六顺", "Opening: two pungs", 2, f"{GUIDE}: 六六顺; {DAHHU}: 手中有两个刻子"),
    ElementSpec("void_suit", "缺一色", "Opening: a suit missing", 2, f"{GUIDE}: 缺一色; {DAHHU}: 没有万条筒中任意一门"),
)
ITEMS: dict[str, ElementSpec] = {h.key: h for h in _ITEMS}
OPENING_KEYS = frozenset({"four_alike", "no_258", "two_pungs", "void_suit"})
BIG_KEYS = frozenset(ITEMS) - OPENING_KEYS - {"small", "small_self_drawn"}  # each worth BIG
#: A big hand replaces the small win; an opening win is scored alone.
EXCLUDES: dict[str, frozenset[str]] = {
    **{k: frozenset({"small", "small_self_drawn"} | OPENING_KEYS) for k in BIG_KEYS},
    **{k: frozenset(BIG_KEYS | {"small", "small_self_drawn"}) for k in OPENING_KEYS},
}
#: The big hands of the hand's shape that let any pair be the eyes (任意做将).
FREE_PAIR = frozenset({"all_pungs", "full_flush", "seven_pairs", "all_melded"})

OPTIONS = (
    SELF_DRAWN, SEAT_WIND, DISCARDER, LAST_TILE, KONG_REPLACEMENT, ROBBING_KONG,
    Option("kong_discard", "bool", False, "won on the tile a konger discarded from his replacement draw (杠上炮)"),
    Option("first_turn", "bool", False, "won in the first go-around: 天胡 (dealer, self-drawn), 地胡 (on the "
                                        "dealer's first discard)"),
    Option("opening", "bool", False, "an opening win (起手胡) on the dealt hand (14 tiles dealer, 13 others): 四喜, "
                                     "板板胡, 六六顺, 缺一色"),
    Option("birds", "tiles", "", "the bird tiles turned up after the win (扎鸟), e.g. '5m2p'"),
    Option("bird_from", "choice", "winner", "whose seat a bird's 1 is: the winner's (seed 基本规则: 和牌为庄) or "
                                            "the dealer's (seed 指南: 以庄家为起点)", ("winner", "dealer")),
    Option("bird_rule", "choice", "double", "a bird hit doubles the payment (中鸟翻倍, seed) or adds 1 point "
                                            "(中鸟加分)", ("double", "add")),
    Option("dealer_bonus", "bool", True, "house rule 庄闲: 1 point more on every payment the dealer makes or "
                                         "receives"),
    Option("concealed_big", "bool", False, "house rule: a concealed hand (门清) is a big hand"),
)


def _item(key: str, count: int = 1, tiles: tuple[str, ...] = ()) -> Element:
    return ITEMS[key].element(Unit.POINTS, count, tiles)


def _is_258(tile: str) -> bool:
    return rank(tile) in (2, 5, 8)


def _shape_items(hand: ParsedHand, groups: tuple[Group, ...] | None) -> list[str]:
    """The big hands a reading shows by its tiles (``groups`` None: the seven-pairs reading; ``()``: no
    shape, the loose 将将胡)."""
    tiles = [kind(t) for t in hand.all_tiles()]
    found = []
    if groups is None:
        found.append("seven_pairs")
    elif groups and all(g.is_triplet for g in groups if g.kind != "pair"):
        found.append("all_pungs")
    if all(_is_258(t) for t in tiles):
        found.append("all_258")
    if len({suit(t) for t in tiles}) == 1:
        found.append("full_flush")
    if len(hand.melds) == 4:
        found.append("all_melded")
    return found


def _situation_items(hand: ParsedHand, o: dict) -> list[str]:
    tsumo = o["self_drawn"]
    found = []
    if o["last_tile"]:
        found.append("last_draw" if tsumo else "last_discard")
    if o["kong_replacement"]:
        found.append("kong_flower")
    if o["kong_discard"]:
        found.append("kong_discard")
    if o["robbing_kong"]:
        found.append("robbing_kong")
    if o["first_turn"]:
        found.append("heaven" if o["seat_wind"] == "E" else "earth")
    if o["concealed_big"] and not hand.exposed:
        found.append("concealed")
    return found


def _reading_value(hand: ParsedHand, groups: tuple[Group, ...] | None, o: dict) -> tuple[int, list[Element]] | None:
    """Points per payer and the elements of one reading; None when the reading is not a win."""
    shape = _shape_items(hand, groups)
    pair_ok = bool(groups) and any(g.kind == "pair" and g.first % 10 in (2, 5, 8) for g in groups)
    if not (pair_ok or FREE_PAIR & set(shape) or "all_258" in shape):
        return None
    big = shape + _situation_items(hand, o)
    elements: list[Element] = []
    if big:
        elements = [_item(k) for k in big]
        quads = fours(hand) if groups is None else []
        if quads:
            elements.append(_item("luxury", len(quads), tuple(quads)))
    else:
        elements = [_item("small")] + ([_item("small_self_drawn")] if o["self_drawn"] else [])
    return total_of(elements, Unit.POINTS), elements


def _opening(hand: ParsedHand, o: dict) -> list[Element]:
    tiles = [kind(t) for t in hand.all_tiles()]
    counts = {t: tiles.count(t) for t in set(tiles)}
    found = []
    quads = fours(hand)
    if quads:
        found.append(_item("four_alike", len(quads), tuple(quads)))
    if not any(_is_258(t) for t in tiles):
        found.append(_item("no_258"))
    pungs = sorted(t for t, c in counts.items() if c >= 3)
    if len(pungs) >= 2:
        found.append(_item("two_pungs", 1, tuple(pungs)))
    if len({suit(t) for t in tiles}) < 3:
        found.append(_item("void_suit"))
    return found


def _check_options(hand: ParsedHand, o: dict) -> None:
    tsumo, seat, disc = o["self_drawn"], o["seat_wind"], o["discarder"]
    check_discarder(o)
    if o["opening"]:
        others = [k for k in ("self_drawn", "last_tile", "kong_replacement", "kong_discard", "robbing_kong",
                              "first_turn") if o[k]]
        if others or disc is not None:
            raise RulesError("contradictory-flags", "an opening win (起手胡) is shown on the dealt hand: no "
                             f"{', '.join(others) or 'discarder'} with it")
        return
    if o["kong_replacement"] and (not tsumo or not any(m.kind == "kong" for m in hand.melds)):
        raise RulesError("contradictory-flags", "杠上开花 needs a kong and a self-drawn win (self_drawn)")
    if (o["kong_discard"] or o["robbing_kong"]) and tsumo:
        raise RulesError("contradictory-flags", "杠上炮 and 抢杠胡 are wins on another seat's tile, not self-drawn")
    if o["kong_discard"] and o["robbing_kong"]:
        raise RulesError("contradictory-flags", "a win cannot both rob a kong and take the konger's discard")
    if o["first_turn"]:
        if seat == "E" and not tsumo:
            raise RulesError("contradictory-flags", "天胡 is the dealer's (E) self-drawn win on the dealt hand")
        if seat != "E" and (tsumo or disc not in (None, "E") or hand.melds):
            raise RulesError("contradictory-flags", "地胡 is a non-dealer's win on the dealer's (E) first discard")


def _birds(text: str) -> list[str]:
    tiles, end = read_tiles(text, 0, "[]")
    if end != len(text):
        raise RulesError("bad-value", f"birds must be tiles like '5m2p', got {text!r}")
    bad = [t for t, _ in tiles if suit(t) not in "mps" or t[0] == "0"]
    if bad:
        raise RulesError("tile-not-in-set", f"bird {bad[0]} is not a tile of the 108 (suits only, ranks 1-9)")
    return [t for t, _ in tiles]


def _bird_seat(tile: str, start: str) -> str:
    """The seat a bird lands on: its rank counted from ``start`` (1 = start, 2 = next seat 下家 ...)."""
    return SEATS[(SEATS.index(start) + rank(tile) - 1) % 4]


def _payments(amount: int, o: dict, birds: list[str], notes: list[str]) -> tuple[dict[str, int] | None, dict]:
    winner = o["seat_wind"]
    tsumo = o["self_drawn"] or o["opening"]
    if not tsumo and o["discarder"] is None:
        notes.append(NEED_DISCARDER)
        return None, {}
    payers = [s for s in SEATS if s != winner] if tsumo else [o["discarder"]]
    start = winner if o["bird_from"] == "winner" else "E"
    landed = [_bird_seat(b, start) for b in birds]
    paid, hits = {}, {}
    for p in payers:
        base = amount + (1 if o["dealer_bonus"] and "E" in (winner, p) else 0)
        n = landed.count(winner) + landed.count(p)
        hits[p] = n
        paid[p] = base * 2 ** n if o["bird_rule"] == "double" else base + n
    if birds:
        double = o["bird_rule"] == "double"
        notes.append(Note(f"birds {''.join(birds)} land on {', '.join(landed)} (counted from {start}); hits per payer "
                          f"{', '.join(f'{k} {v}' for k, v in hits.items())} ({'each doubles' if double else 'each adds 1'})",
                          f"鸟 {''.join(birds)} 落在{'、'.join(SEAT_ZH[s] for s in landed)}（从{SEAT_ZH[start]}数起）；"
                          f"各付款者中鸟：{'，'.join(f'{SEAT_ZH[k]} {v}' for k, v in hits.items())}"
                          f"（{'中鸟翻倍' if double else '中鸟加分'}）"))
    return seat_payments(winner, paid), {"bird_seats": landed, "bird_hits": hits}


def _score(text: str, o: dict) -> SystemResult:
    sizes = ((14,) if o["seat_wind"] == "E" else (13,)) if o["opening"] else (14,)
    hand = parse(text, TILES_108, sizes, "changsha" + (" opening (起手胡, dealer 14, others 13)" if o["opening"]
                                                       else ""))
    _check_options(hand, o)
    birds = _birds(o["birds"])
    notes: list[str] = []
    if o["opening"]:
        if hand.melds:
            raise RulesError("bad-meld", "an opening win is shown on the dealt hand: no melds")
        elements = _opening(hand, o)
        if not elements:
            return SystemResult("changsha", hand.notation(), False, (), 0, Unit.POINTS, None, {},
                                (Note("no opening win: 四喜 (four alike), 板板胡 (no 2/5/8), 六六顺 (two pungs) or 缺一色 "
                                      "(a suit missing)", "不是起手胡：须有四喜、板板胡（无 2、5、8）、六六顺（两刻）或缺一色"),))
    else:
        options: list[tuple[Group, ...] | None] = list(readings(hand, o["self_drawn"]))
        if is_seven_pairs(hand):
            options.append(None)
        if not options and not all(_is_258(t) for t in hand.all_tiles()):
            raise RulesError("not-winning", f"{hand.notation()} is not a winning hand: four sets and a pair, seven "
                             "pairs, or 14 tiles all 2/5/8 (将将胡)")
        scored = [v for v in (_reading_value(hand, g, o) for g in options or [()]) if v is not None]
        if not scored:
            return SystemResult("changsha", hand.notation(), False, (), 0, Unit.POINTS, None, {},
                                (Note("a small win (平胡) needs a pair of 2, 5 or 8 (二五八将); only 碰碰胡, 清一色, 七小对, "
                                      "全求人 and 将将胡 take any pair",
                                      "小胡（平胡）须以 2、5、8 作将（二五八将）；只有碰碰胡、清一色、七小对、全求人和将将胡可用任意将"),))
        elements = max(scored, key=lambda v: v[0])[1]
    total = total_of(elements, Unit.POINTS)
    payments, details = _payments(total, o, birds, notes)
    big = sum(e.count for e in elements if e.key in BIG_KEYS)
    return SystemResult("changsha", hand.notation(), True, tuple(elements), total, Unit.POINTS, payments,
                        {"big_hands": big, **details}, tuple(notes))


def score_discard(wins: Mapping[str, str], discarder: str, options: Mapping[str, Any] | None = None
                  ) -> tuple[dict[str, SystemResult], dict[str, int]]:
    """Several winners on one discard (通炮, 一炮多响): each seat's hand scored, and the summed payments.

    Args:
        wins: ``{winner seat: hand}`` (one or more).
        discarder: the seat that discarded the tile.
        options: shared options for every hand (birds, house rules, last_tile …); ``seat_wind``,
            ``self_drawn`` and ``discarder`` are set per winner.

    Returns ``({seat: SystemResult}, {seat: net payment})``: the discarder pays each winner as if alone.
    Source: ../shared/seeds/004_439ac0ac3d24f1c0.txt 打长沙麻将指南技巧 "通炮：即几个玩家可胡同一张牌" and
    "如果出现通炮情况，则下轮由放炮玩家当庄家".
    """
    system = SYSTEMS[0]
    if not wins or discarder in wins:
        raise RulesError("contradictory-flags", "通炮: give one or more winners, none of them the discarder")
    results, net = {}, {s: 0 for s in SEATS}
    for seat, hand in wins.items():
        try:
            r = system.score(hand, {**(options or {}), "seat_wind": seat, "self_drawn": False, "discarder": discarder})
        except ScoringError as e:  # which of the winners' hands
            raise RulesError(e.code, f"winner {seat}: {e.message}", e.position) from None
        results[seat] = r
        for s, v in (r.payments or {}).items():
            net[s] += v
    return results, net


SYSTEMS = (RuleSystem(
    "changsha", "长沙麻将", "Changsha mahjong", tile_set=TILES_108, hand_sizes=(14,), options=OPTIONS,
    dice_rule="点数之和定方位，小点数垛: the sum picks the wall (1/5/9 the dealer's, 2/6/10 the next seat's, "
              "3/7/11 across, 4/8/12 the left), the smaller die counts the stacks",
    doc="docs/rules/changsha.md", scorer=_score, unit=Unit.POINTS, excludes=EXCLUDES,
    dice_method="sum-smaller"),)
