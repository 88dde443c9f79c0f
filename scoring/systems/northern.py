"""The northern push-down rules (麻将规则（第4稿）, 推倒和): doubling fans with a cap, dealer points, kongs.

A hand's fans (番) add up and double its points: 门清 1, 对对和 1, 混一色 1, 大钓 1, 捉五魁 1, 海底捞月 1,
杠上开花 1, 一条龙 3, 七对 4 (豪华七对子 +1), 清一色 5; 上楼 (``floors``, 0-2) doubles once per floor. At
most 6 fans count (封顶). A hand with none of the listed patterns is 推倒和: no fan, only the base
(门清 and 混一色 too, unless ``plain_extras``), and it wins only self-drawn; a hand with a claimed set
wins only self-drawn too (吃碰后只能自摸; 抢杠 counts as a discard win).

Base points (底数): 平点 20 (a non-dealer wins on a non-dealer's discard), 庄点 30 (the dealer wins
on a discard), 点庄 40 (the dealer discards to a non-dealer), 平摸 40 (a non-dealer self-draws: the
dealer 20, each other 10), 庄摸 60 (the dealer self-draws: 20 each); each payment is base x 2^fans,
at most 640 (the dealer's too). Kongs pay apart, only when the konger wins, never doubled: an
exposed kong 10 from the seat that gave it, a concealed kong 20 from each other seat. 跟庄 (the three
others follow the dealer's first discard): the dealer pays 10 to each (``follow_dealer_payments``).

Source: ../shared/seeds/004_439ac0ac3d24f1c0.txt, the passage "麻将规则（第4稿）" items 1-9 (quoted in
docs/rules/northern.md). Open points and choices: docs/rules/northern.md.
"""

from __future__ import annotations

from .base import (DISCARDER, KONG_REPLACEMENT, LAST_TILE, ROBBING_KONG, SEAT_WIND, SEATS, SEAT_ZH, SELF_DRAWN,
                   TILES_136, Element, ElementSpec, NEED_DISCARDER, Note, Option, RulesError, RuleSystem,
                   SystemResult, Unit, check_discarder, seat_payments, total_of)
from .notation import Group, ParsedHand, fours, is_seven_pairs, kind, parse, readings, suit, to_code, waits

SEED = "../shared/seeds/004_439ac0ac3d24f1c0.txt 麻将规则（第4稿）"
CAP_FANS, CAP_PAYMENT = 6, 640
KONG_EXPOSED, KONG_CONCEALED, FOLLOW = 10, 20, 10
#: (dealer wins?, self-drawn?) -> points each payer pays before the doublings: (from the dealer, from others)
BASE = {(False, False): (40, 20), (True, False): (30, 30), (False, True): (20, 10), (True, True): (20, 20)}


def _spec(key: str, name_zh: str, name_en: str, value: int, item: str) -> ElementSpec:
    return ElementSpec(key, name_zh, name_en, value, f"{SEED} {item}")


_FANS = (
    _spec("plain", "推倒和(屁牌)", "Plain push-down win: no pattern, base only", 0, "6(1) 推倒和只能自摸才能赢，但不算番，只记底数"),
    _spec("concealed", "门清", "Concealed hand", 1, "6(2) 没有吃碰明杠过的牌型。加1番。暗杠算门清"),
    _spec("all_pungs", "对对和", "All pungs", 1, "6(3) 4个刻子和一个对子,加1番"),
    _spec("half_flush", "混一色", "Half flush", 1, "6(4) 只有一门牌和风牌,加1番"),
    _spec("big_single", "大钓", "Twelve tiles shown, single wait", 1, "6(5) 吃碰12张牌，只剩一张单钓和牌。加1番"),
    _spec("five_closed", "捉五魁", "Won on the closed 5m, the only wait", 1, "6(6) 只和嵌单五万一张牌的牌型。加1番"),
    _spec("last_tile", "海底捞月", "Won on the last tile", 1, "6(7) 拿到海底牌最后一张时和牌…最后一张所出的牌给别人放了铳，也是"),
    _spec("dragon", "一条龙", "Pure straight 1-9", 3, "6(8) 凑齐一种花色的1--9。3番"),
    _spec("seven_pairs", "七对", "Seven pairs", 4, "6(9) 14张牌为7个对子。4番"),
    _spec("kong_flower", "杠上开花", "Won on a kong replacement tile", 1, "6(10) 开杠补得的牌为自摸牌。加1番"),
    _spec("full_flush", "清一色", "Full flush", 5, "6(11) 和牌的14张均为一种花色。5番"),
    _spec("luxury", "豪华七对子", "Luxury seven pairs: four alike", 1, "6(13) 七对子中有两对一样的对子（在7对基础上加1番）"),
    _spec("floor", "上楼", "Upstairs: the dealer kept the deal or the last hand was drawn", 1, "3 庄家连庄或荒牌，上楼，仅有2层"),
)
FANS: dict[str, ElementSpec] = {f.key: f for f in _FANS}
PATTERNS = frozenset(("all_pungs", "big_single", "five_closed", "last_tile", "dragon", "seven_pairs", "kong_flower",
                      "full_flush", "luxury"))  # the list of 6(1): a hand with none of them is 推倒和
EXCLUDES: dict[str, frozenset[str]] = {
    "full_flush": frozenset({"half_flush"}),
    "plain": PATTERNS,
    "seven_pairs": frozenset({"all_pungs"}),
}

OPTIONS = (
    SELF_DRAWN, SEAT_WIND, DISCARDER, LAST_TILE, KONG_REPLACEMENT, ROBBING_KONG,
    Option("floors", "int", 0, "上楼: floors up (0-2) after the dealer kept the deal or a drawn hand; each doubles "
                               "the hand (not the kongs)", (0, 2)),
    Option("plain_extras", "bool", False, "house rule: 门清 and 混一色 count on a 推倒和 (a hand with no listed "
                                          "pattern; it still wins only self-drawn)"),
)


def _fan(key: str, count: int = 1, tiles: tuple[str, ...] = ()) -> Element:
    return FANS[key].element(Unit.DOUBLES, count, tiles)


def _cap(raw: int) -> Element:
    return Element("cap", "封顶", "Cap: at most 6 fans", CAP_FANS - raw, Unit.DOUBLES, 1, (),
                   f"{SEED} 8 每盘最高番数不超过6番")


def _fans(hand: ParsedHand, groups: tuple[Group, ...] | None, o: dict) -> list[str]:
    """The fans of one reading (``groups`` None: seven pairs)."""
    tiles = [kind(t) for t in hand.all_tiles()]
    suits = {suit(t) for t in tiles}
    found = []
    if not hand.exposed:
        found.append("concealed")
    if groups is None:
        found.append("seven_pairs")
    else:
        sets = [g for g in groups if g.kind != "pair"]
        if all(g.is_triplet for g in sets):
            found.append("all_pungs")
        chows = {(g.first // 10, g.first % 10) for g in sets if g.kind == "chow"}
        if any({(s, 1), (s, 4), (s, 7)} <= chows for s in range(3)):
            found.append("dragon")
        if len(hand.melds) == 4:
            found.append("big_single")
        win = next(g for g in groups if g.has_win)
        if kind(hand.win_tile) == "5m" and win.kind == "chow" and win.first == to_code("4m") \
                and waits(hand) == ["5m"]:
            found.append("five_closed")
    if suits - {"z"} and len(suits - {"z"}) == 1:
        found.append("full_flush" if "z" not in suits else "half_flush")
    if o["last_tile"]:
        found.append("last_tile")
    if o["kong_replacement"]:
        found.append("kong_flower")
    return found


def _value(hand: ParsedHand, groups: tuple[Group, ...] | None, o: dict) -> tuple[int, list[Element], bool]:
    """(fans, elements, is 推倒和) of one reading."""
    found = _fans(hand, groups, o)
    plain = not PATTERNS & set(found)
    if plain:
        extras = [k for k in ("concealed", "half_flush") if k in found] if o["plain_extras"] else []
        elements = [_fan("plain")] + [_fan(k) for k in extras]
    else:
        elements = [_fan(k) for k in found if not ("half_flush" == k and "full_flush" in found)]
        quads = fours(hand) if groups is None else []
        if quads:
            elements.append(_fan("luxury", len(quads), tuple(quads)))
    return total_of(elements, Unit.DOUBLES), elements, plain


def _seat_from_offer(winner: str, offer: int) -> str:
    """The seat a claimed set came from: 1 the left (上家), 2 across, 3 the right (下家)."""
    i = SEATS.index(winner)
    return SEATS[(i - 1, i + 2, i + 1)[offer - 1] % 4]


def _kong_payments(hand: ParsedHand, winner: str) -> tuple[dict[str, int], list[str]]:
    paid = {s: 0 for s in SEATS if s != winner}
    notes = []
    for m in hand.melds:
        if m.kind != "kong":
            continue
        if m.concealed:
            for s in paid:
                paid[s] += KONG_CONCEALED
            notes.append(Note(f"暗杠 {m.notation()}: {KONG_CONCEALED} from each other seat",
                              f"暗杠 {m.notation()}：三家各付 {KONG_CONCEALED}"))
        else:
            giver = _seat_from_offer(winner, m.offer or 1)
            paid[giver] += KONG_EXPOSED
            notes.append(Note(f"明杠 {m.notation()}: {KONG_EXPOSED} from {giver}, who gave it",
                              f"明杠 {m.notation()}：放杠者{SEAT_ZH[giver]}家付 {KONG_EXPOSED}"))
    return paid, notes


def _check_options(hand: ParsedHand, o: dict) -> None:
    tsumo = o["self_drawn"]
    check_discarder(o)
    if o["kong_replacement"] and (not tsumo or not any(m.kind == "kong" for m in hand.melds)):
        raise RulesError("contradictory-flags", "杠上开花 needs a kong and a self-drawn win (self_drawn)")
    if o["robbing_kong"] and tsumo:
        raise RulesError("contradictory-flags", "抢杠和 is a win on another seat's tile (算做捉铳), not self-drawn")


def _score(text: str, o: dict) -> SystemResult:
    hand = parse(text, TILES_136, (14,), "northern")
    _check_options(hand, o)
    tsumo, winner = o["self_drawn"], o["seat_wind"]
    options: list[tuple[Group, ...] | None] = list(readings(hand, tsumo))
    if is_seven_pairs(hand):
        options.append(None)
    if not options:
        raise RulesError("not-winning", f"{hand.notation()} is not a winning hand: four sets and a pair, or seven "
                         "pairs")
    raw, elements, plain = max((_value(hand, g, o) for g in options), key=lambda v: (not v[2], v[0]))
    notes: list[str] = []
    why_not = None
    if not tsumo and hand.exposed:
        why_not = Note("a hand with a claimed set wins only self-drawn (吃碰后只能自摸，不能捉铳); 抢杠 is a discard win",
                       "吃碰后只能自摸，不能捉铳；抢杠算捉铳")
    elif not tsumo and plain:
        why_not = Note("推倒和 (no listed pattern) wins only self-drawn (推倒和只能自摸才能赢)", "推倒和（无所列番种）只能自摸才能赢")
    if why_not:
        return SystemResult("northern", hand.notation(), False, tuple(elements), raw, Unit.DOUBLES, None,
                            {}, (why_not,))
    if o["floors"]:
        elements.append(_fan("floor", o["floors"]))
    raw = total_of(elements, Unit.DOUBLES)
    if raw > CAP_FANS:
        elements.append(_cap(raw))
        notes.append(Note(f"{raw} fans capped at {CAP_FANS} (每盘最高番数不超过6番)",
                          f"{raw} 番封顶为 {CAP_FANS} 番（每盘最高番数不超过6番）"))
    fans = total_of(elements, Unit.DOUBLES)
    dealer_wins = winner == "E"
    from_dealer, from_other = BASE[(dealer_wins, tsumo)]
    if tsumo:
        payers = {s: (from_dealer if s == "E" else from_other) for s in SEATS if s != winner}
    elif o["discarder"] is not None:
        payers = {o["discarder"]: from_dealer if o["discarder"] == "E" else from_other}
    else:
        payers = {}
        notes.append(NEED_DISCARDER)
    hand_paid = {}
    for s, base in payers.items():
        hand_paid[s] = min(base * 2 ** fans, CAP_PAYMENT)
        if base * 2 ** fans > CAP_PAYMENT:
            notes.append(Note(f"{s} pays {CAP_PAYMENT}, not {base * 2 ** fans} (每人最多输640; 庄家也降低为640)",
                              f"{SEAT_ZH[s]}家付 {CAP_PAYMENT}，不是 {base * 2 ** fans}（每人最多输640；庄家也降低为640）"))
    kong_paid, kong_notes = _kong_payments(hand, winner)
    notes += kong_notes
    payments = None
    if payers:
        payments = seat_payments(winner, {s: hand_paid.get(s, 0) + kong_paid[s] for s in kong_paid
                                          if hand_paid.get(s, 0) + kong_paid[s]})
    return SystemResult("northern", hand.notation(), True, tuple(elements), fans, Unit.DOUBLES, payments,
                        {"hand_payments": hand_paid, "kong_payments": {s: v for s, v in kong_paid.items() if v}},
                        tuple(notes))


def follow_dealer_payments(dealer: str = "E") -> dict[str, int]:
    """跟庄: the three others discarded the dealer's first discard; the dealer pays 10 to each.

    Settled apart from the hand (whoever wins). Source: ../shared/seeds/004_439ac0ac3d24f1c0.txt
    麻将规则（第4稿） 7 "跟庄,庄家付给每家10元".
    """
    if dealer not in SEATS:
        raise RulesError("bad-value", f"dealer must be a seat E, S, W or N, got {dealer!r}")
    return {s: (-3 * FOLLOW if s == dealer else FOLLOW) for s in SEATS}


SYSTEMS = (RuleSystem(
    "northern", "推倒和(麻将规则第4稿)", "Northern push-down rules (fans double, cap 6)", tile_set=TILES_136,
    hand_sizes=(14,), options=OPTIONS,
    dice_rule="not given by the seed (the table's default two-dice break); the last 7 stacks (14 tiles) stay "
              "for kong replacements (荒牌: 一杠7，二杠8，三杠9)",
    doc="docs/rules/northern.md", scorer=_score, unit=Unit.DOUBLES, excludes=EXCLUDES),)
