"""The rule-system framework: what every rule system declares and returns.

A *rule system* (a way of playing and scoring: MCR, riichi, Taiwan 16-tile, the classic doubling
table, ...) is one ``RuleSystem`` value: its names, its tile set and hand size, its own situation
options, the table gear and dice rule it needs, and a ``score`` function from a hand string and
options to a ``SystemResult``. The registry (``scoring.systems``) maps names to systems.

Adding a system is one module, its doc and its examples:

1. ``scoring/systems/<name>.py`` builds a ``RuleSystem`` (``SYSTEM = RuleSystem(...)``) whose scorer
   parses the hand with ``scoring.systems.notation.parse`` (tile set and size checked there), finds
   its scoring elements (one ``ElementSpec`` per element, with names, value, unit and source),
   applies its combination rules and returns ``SystemResult`` with the payments of the four seats;
2. one line in ``scoring.systems._MODULES`` registers it;
3. ``docs/rules/<name>.md`` gives the seed passage as the specification and every open point with
   the choice made; ``tests/scoring/systems/test_<name>.py`` holds at least 20 worked examples with
   their sources, the property test (``check_result``) and bad-input tests.

Seats are named by their seat wind: ``E`` is the dealer (庄家), ``S`` the dealer's right-hand
neighbour (下家), ``W`` across, ``N`` the dealer's left (上家). Payments are per seat, positive =
receives, and sum to zero.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any, Callable, Mapping

from ..errors import ScoringError

SEATS = ("E", "S", "W", "N")
#: The seats by their winds' Chinese names (a note's Chinese side names seats so).
SEAT_ZH = {"E": "东", "S": "南", "W": "西", "N": "北"}


class RulesError(ScoringError):
    """A ``ScoringError`` with the framework's extra codes (the CLI and batch print code and message)."""

    CODES = ScoringError.CODES + (
        "tile-not-in-set",   # a tile the system does not play (a flower in riichi, an honour in Changsha)
        "unknown-rules",     # a rule-system name not registered
        "unknown-option",    # an option of another system, or of none
    )


class Unit(str, enum.Enum):
    """What an element's value counts."""

    FAN = "fan"          # MCR 番 (points of the fan table)
    TAI = "tai"          # Taiwan 台
    HAN = "han"          # riichi 翻
    FU = "fu"            # riichi 符
    POINTS = "points"    # money or points directly
    DOUBLES = "doubles"  # doublings of a base (the classic table)


#: Short labels of the situation options for a form (the page's score form), English and Chinese,
#: by option name: one table for every system (an option of the same name means the same thing).
OPTION_LABELS: dict[str, tuple[str, str]] = {
    "self_drawn": ("self-drawn", "自摸"), "seat_wind": ("seat wind", "门风"),
    "prevalent_wind": ("prevalent wind", "圈风"), "discarder": ("discarder", "放炮者"),
    "flowers": ("flowers", "花牌"), "last_tile": ("last tile", "海底"),
    "kong_replacement": ("kong replacement", "杠上开花"), "robbing_kong": ("robbing the kong", "抢杠"),
    "fourth_tile": ("fourth tile", "和绝张"), "riichi": ("riichi", "立直"), "double_riichi": ("double riichi", "两立直"),
    "ippatsu": ("ippatsu", "一发"), "dora": ("dora indicators", "宝牌指示牌"),
    "ura_dora": ("ura-dora indicators", "里宝牌指示牌"), "tenhou": ("tenhou", "天和"), "chiihou": ("chiihou", "地和"),
    "honba": ("honba", "本场"), "open_tanyao": ("open tanyao", "喰断"), "kiriage": ("kiriage mangan", "切上满贯"),
    "first_turn": ("first go-around", "天胡/地胡"), "dealer_streak": ("dealer's wins in a row", "连庄数"),
    "base": ("base stake", "底"), "per_tai": ("stake per tai", "每台"), "liable": ("pays for all", "全包"),
    "horse_hit": ("horse hits", "买马中"), "kong_discard": ("kong discard", "杠上炮"),
    "opening": ("opening win", "起手胡"), "birds": ("birds", "扎鸟"), "bird_from": ("birds counted from", "鸟从谁数"),
    "bird_rule": ("bird hit", "中鸟"), "dealer_bonus": ("dealer bonus", "庄闲"),
    "concealed_big": ("concealed is big", "门清算大胡"), "gold": ("gold tile", "金"), "rob_gold": ("rob the gold", "抢金"),
    "gold_flowers": ("gold as flower", "金算花"), "floors": ("floors", "上楼"),
    "plain_extras": ("plain-win extras", "推倒和加番"),
}


#: The situation options' help in Chinese, by option name (the page's tooltip on the Chinese page), in
#: the seeds' own terms (seeds 002 and 004; MCR's from the rules text): one line for every system that
#: takes the option, where its English ``help`` may name the system's own reading.
OPTION_HELP_ZH: dict[str, str] = {
    "self_drawn": "自摸和牌；不选则为和别人打出的牌（点炮）",
    "seat_wind": "和牌者的门风 东/南/西/北（东为庄家）",
    "prevalent_wind": "本圈的圈风 东/南/西/北",
    "discarder": "打出和牌张（放炮）的座位 东/南/西/北；点炮和牌据此计算收付",
    "flowers": "亮出的花牌张数 0-8（每张 1 番）",
    "last_tile": "和牌墙上最后一张牌（海底）",
    "kong_replacement": "开杠后补牌和牌（杠上开花）",
    "robbing_kong": "和别人补杠的那张牌（抢杠）",
    "fourth_tile": "和牌张是场上该牌的最后一张（和绝张）",
    "riichi": "已宣告立直",
    "double_riichi": "第一巡即立直（两立直，含立直）",
    "ippatsu": "立直后一巡内和牌（一发）",
    "dora": "宝牌指示牌，如 3m 或 3m7z",
    "ura_dora": "里宝牌指示牌（立直时才计）",
    "tenhou": "庄家配牌即和（天和）",
    "chiihou": "闲家第一巡自摸和牌，此前无人鸣牌（地和）",
    "honba": "本场数：每一本场付款者多付 300 点",
    "open_tanyao": "自选规则：副露后断幺九仍计（喰断，通常计）",
    "kiriage": "自选规则：4 翻 30 符与 3 翻 60 符按满贯计（切上满贯）",
    "first_turn": "第一巡内和牌：庄家天胡，闲家地胡（台湾：点炮为人胡）",
    "dealer_streak": "庄家连庄次数 N（台湾：连N拉N，多 2N 台；福州：连庄加分）",
    "base": "底分：台湾每次和牌的底，福州每分的注",
    "per_tai": "每台的注",
    "liable": "全包：包赔三家的座位（让和牌者亮出 12 张的放炮者，或杠上开花前放杠者）",
    "horse_hit": "自摸且买中马（买马，买中翻翻）：再翻一倍",
    "kong_discard": "和开杠者补牌后打出的牌（杠上炮）",
    "opening": "起手胡：配牌即胡（庄家 14 张，闲家 13 张）：四喜、板板胡、六六顺、缺一色",
    "birds": "和牌后翻出的鸟牌（扎鸟），如 5m2p",
    "bird_from": "鸟牌的 1 从谁数起：和牌者（基本规则：和牌为庄）或庄家（指南：以庄家为起点）",
    "bird_rule": "中鸟：付款翻倍（中鸟翻倍）或加 1 分（中鸟加分）",
    "dealer_bonus": "自选规则 庄闲：庄家付出或收入的每一笔多 1 分",
    "concealed_big": "自选规则：门清算大胡",
    "gold": "金（百搭牌），补完花后翻开，如 5p（必填）",
    "rob_gold": "抢金：庄家第一次出牌前或和庄家打出的第一张牌",
    "gold_flowers": "自选规则：手中每张金算一花（金番，十六张玩法）",
    "floors": "上楼：庄家连庄或荒庄后上楼 0-2 层，每层和牌翻一倍（杠分不翻）",
    "plain_extras": "自选规则：推倒和（无所列番种）也计门清、混一色（仍只能自摸和）",
}

#: The values of the ``"choice"`` options, English and Chinese, by option name then value (the page's
#: select shows them; the value itself is what the API and the command line take).
CHOICE_LABELS: dict[str, dict[str, tuple[str, str]]] = {
    "bird_from": {"winner": ("from the winner", "从和牌者数"), "dealer": ("from the dealer", "从庄家数")},
    "bird_rule": {"double": ("a hit doubles", "中鸟翻倍"), "add": ("a hit adds 1", "中鸟加分")},
}


def option_view(o: "Option") -> dict:
    """An option as a form shows it (the page's options of a rule system): ``Option.to_dict()`` with
    ``label_en``, ``label_zh`` (``OPTION_LABELS``), ``help_zh`` (``OPTION_HELP_ZH``) and, for a
    ``"choice"``, ``choice_labels``: ``[[value, English, Chinese]]`` (``CHOICE_LABELS``).
    Raises KeyError for an option without its labels (a test checks every system's)."""
    en, zh = OPTION_LABELS[o.name]
    view = {**o.to_dict(), "label_en": en, "label_zh": zh, "help_zh": OPTION_HELP_ZH[o.name]}
    if o.kind == "choice":
        view["choice_labels"] = [[v, *CHOICE_LABELS[o.name][v]] for v in o.choices]
    return view


@dataclasses.dataclass(frozen=True, slots=True)
class Option:
    """A situation option of a rule system (how the hand was won, house rules).

    Attributes:
        name: snake_case key (CLI flag ``--name-with-dashes``, batch and API key as is).
        kind: ``"bool"``, ``"int"``, ``"seat"`` (E/S/W/N), ``"seat?"`` (E/S/W/N or None),
            ``"tiles"`` (tile notation, e.g. ``"3m5z"``; ``""`` for none) or ``"choice"``.
        default: the value when not given.
        help: one line for ``--help`` and ``mjtable rules``.
        choices: allowed values for ``"choice"``; (min, max) for ``"int"``.
    """

    name: str
    kind: str
    default: Any
    help: str
    choices: tuple = ()

    def check(self, value: Any) -> Any:
        """The value checked and normalised; ``RulesError("bad-value")`` naming the option otherwise."""
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            raise RulesError("bad-value", f"{self.name} must be true or false, got {value!r}")
        if self.kind == "int":
            lo, hi = self.choices or (0, 10**6)
            if isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi:
                return value
            raise RulesError("bad-value", f"{self.name} must be a whole number {lo}-{hi}, got {value!r}")
        if self.kind in ("seat", "seat?"):
            if value is None and self.kind == "seat?":
                return None
            if isinstance(value, str) and value.strip().upper()[:1] in SEATS and len(value.strip()) == 1:
                return value.strip().upper()
            raise RulesError("bad-value", f"{self.name} must be a seat E, S, W or N"
                             f"{' (or none)' if self.kind == 'seat?' else ''}, got {value!r}")
        if self.kind == "tiles":
            if isinstance(value, str):
                return value.strip()
            raise RulesError("bad-value", f"{self.name} must be tiles in notation (e.g. '3m7z'), got {value!r}")
        if self.kind == "choice":
            if value in self.choices:
                return value
            raise RulesError("bad-value", f"{self.name} must be one of {', '.join(map(str, self.choices))}, "
                             f"got {value!r}")
        raise AssertionError(f"option {self.name}: unknown kind {self.kind!r}")

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "default": self.default, "help": self.help,
                "choices": list(self.choices)}


# Options several systems share, defined once (a system lists the ones it takes).
SELF_DRAWN = Option("self_drawn", "bool", False, "won on a self-drawn tile (自摸); else on a discard")
SEAT_WIND = Option("seat_wind", "seat", "E", "the winner's seat wind E/S/W/N (门风; E is the dealer 庄家)")
PREVALENT_WIND = Option("prevalent_wind", "seat", "E", "the round's prevalent wind E/S/W/N (圈风)")
DISCARDER = Option("discarder", "seat?", None,
                   "seat (E/S/W/N) that discarded the winning tile; needed for the payments of a discard win")
LAST_TILE = Option("last_tile", "bool", False, "won on the last tile of the wall (海底)")
KONG_REPLACEMENT = Option("kong_replacement", "bool", False, "won on a kong replacement tile (杠上开花)")
ROBBING_KONG = Option("robbing_kong", "bool", False, "won on a tile robbed from a kong (抢杠)")


@dataclasses.dataclass(frozen=True, slots=True)
class TileSet:
    """The tiles a system plays.

    Attributes:
        count: tiles in the set (the table's gear): 136, 144 or 108.
        honours: winds and dragons are played.
        flowers: the 8 flowers 1f-8f are played and written in the hand (where they score).
        red_fives: one red five per suit, written 0m 0p 0s (riichi's aka dora).
        description: one line for ``mjtable rules --list``.
        honour_flowers: the honours are flowers (Fuzhou): written outside the brackets like ``1f``-``8f``,
            never in a set, up to four of each; they go to ``ParsedHand.flowers``.
    """

    count: int
    honours: bool
    flowers: bool
    red_fives: bool
    description: str
    honour_flowers: bool = False

    def not_played(self, tile: str) -> str | None:
        """What ``tile`` (notation: ``"1m"``, ``"0p"``, ``"E"``, ``"3f"``) is when this set has no place for
        it in a hand: ``"a flower"`` (no flowers written in the hand: 136 and 108 tiles, and MCR's 144,
        whose flowers are a count), ``"a red five"`` or ``"an honour"`` (108 tiles); None when it is played.
        Source: the tile sets of seed 004 (Changsha 108, suits only) and the systems' docs."""
        if tile.endswith("f") and not self.flowers:
            return "a flower"
        if tile[:1] == "0" and not self.red_fives:
            return "a red five"
        if tile in "ESWNCFP" and len(tile) == 1 and not self.honours:
            return "an honour"
        return None


TILES_136 = TileSet(136, True, False, False, "136: suits and honours")
TILES_136_RED = TileSet(136, True, False, True, "136: suits and honours, one red five per suit (0m 0p 0s)")
TILES_144 = TileSet(144, True, True, False, "144: suits, honours and 8 flowers (1f-8f in the hand)")
TILES_144_COUNTED = TileSet(144, True, False, False, "144: suits, honours and 8 flowers (given as a count)")
TILES_108 = TileSet(108, False, False, False, "108: suits only")
TILES_144_HONOUR_FLOWERS = TileSet(144, True, True, False, "144: suits in the hand; the 8 flowers (1f-8f) and the 28 "
                                   "honours are flowers, written before the winning tile", honour_flowers=True)


class Note(str):
    """A result's note (``SystemResult.notes``): the English sentence (the string itself) with its Chinese
    (``zh``), which the page shows on its Chinese side (``SystemResult.to_dict()["notes_zh"]``)."""

    zh: str

    def __new__(cls, en: str, zh: str) -> "Note":
        note = super().__new__(cls, en)
        note.zh = zh
        return note


#: The note of a discard win scored without its discarder (every system's payments need it).
NEED_DISCARDER = Note("give discarder for the payments of a win on a discard", "点炮和牌须给出放炮者（discarder），才能计算收付")


@dataclasses.dataclass(frozen=True, slots=True)
class Element:
    """One scoring element counted in a result (a fan, 台, yaku, fu item, doubling ...).

    Attributes:
        key: stable id within the system (``"pinfu"``, ``"zimo"``, ``"mcr-48"``).
        name_zh, name_en: names; ``name_ja`` for riichi.
        value: the value of one occurrence, in ``unit``.
        unit: what the value counts.
        count: occurrences (``value * count`` goes to the total).
        tiles: the tiles or sets that made it, in notation (empty for situation elements).
        source: where the rule comes from (seed file and passage, or the public page).
        name_ja: Japanese name (riichi), else ``None``.
    """

    key: str
    name_zh: str
    name_en: str
    value: int
    unit: Unit
    count: int = 1
    tiles: tuple[str, ...] = ()
    source: str = ""
    name_ja: str | None = None

    @property
    def points(self) -> int:
        return self.value * self.count

    def to_dict(self) -> dict:
        d = {"key": self.key, "name_zh": self.name_zh, "name_en": self.name_en, "value": self.value,
             "unit": self.unit.value, "count": self.count, "tiles": list(self.tiles), "source": self.source}
        if self.name_ja is not None:
            d["name_ja"] = self.name_ja
        return d


@dataclasses.dataclass(frozen=True, slots=True)
class ElementSpec:
    """A scoring element as a system's table lists it: key, names, value per occurrence, source.

    ``element(unit, count, tiles)`` makes the counted ``Element``; ``value`` overrides the listed value
    (an element whose value is computed, e.g. a doubling of a count).
    """

    key: str
    name_zh: str
    name_en: str
    value: int
    source: str

    def element(self, unit: Unit, count: int = 1, tiles: tuple[str, ...] = (), value: int | None = None) -> Element:
        return Element(self.key, self.name_zh, self.name_en, self.value if value is None else value, unit, count,
                       tiles, self.source)


@dataclasses.dataclass(frozen=True, slots=True)
class SystemResult:
    """A hand scored by a rule system.

    Attributes:
        system: the system's name (``"riichi"``).
        hand: the hand as read, in notation.
        legal: the hand is a win under the system (shape and minimum reached).
        elements: what was counted, each once with its count.
        total: the sum of ``element.points`` over ``elements`` whose unit is ``unit`` (always).
        unit: the unit of ``total``.
        payments: per seat E/S/W/N, positive = receives, summing to 0; ``None`` when the hand is
            not a win or the payers are not known (a discard win without ``discarder``).
        details: system-specific figures (riichi: ``han``, ``fu``, ``limit``; classic: ``value``).
        notes: plain sentences: elements left out and why, payment rule used, partial points; each a
            ``Note`` (English, with its Chinese ``zh``).
    """

    system: str
    hand: str
    legal: bool
    elements: tuple[Element, ...]
    total: int
    unit: Unit
    payments: Mapping[str, int] | None
    details: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"rules": self.system, "hand": self.hand, "legal": self.legal, "total": self.total,
                "unit": self.unit.value, "elements": [e.to_dict() for e in self.elements],
                "payments": dict(self.payments) if self.payments is not None else None,
                "details": dict(self.details), "notes": list(self.notes),
                "notes_zh": [getattr(n, "zh", n) for n in self.notes]}


def total_of(elements: tuple[Element, ...] | list[Element], unit: Unit) -> int:
    """Sum of ``points`` of the elements in ``unit`` (the one way a system computes its total)."""
    return sum(e.points for e in elements if e.unit is unit)


def check_discarder(options: Mapping[str, Any]) -> None:
    """``contradictory-flags`` when ``discarder`` is given with a self-drawn win or is the winner's seat."""
    disc = options.get("discarder")
    if disc is not None and (options.get("self_drawn") or disc == options.get("seat_wind")):
        raise RulesError("contradictory-flags", "discarder is another seat than the winner's, on a discard win only")


def seat_payments(winner: str, payers: Mapping[str, int]) -> dict[str, int]:
    """Per-seat payments from ``{payer seat: amount paid}``: the winner receives the sum.

    Returns ``{"E": .., "S": .., "W": .., "N": ..}`` (positive = receives), summing to 0.
    """
    out = {s: 0 for s in SEATS}
    for seat, amount in payers.items():
        if seat == winner:
            raise AssertionError("the winner does not pay")
        out[seat] -= amount
        out[winner] += amount
    return out


@dataclasses.dataclass(frozen=True, slots=True)
class RuleSystem:
    """A registered rule system.

    Attributes:
        name: the ``--rules`` value (``"riichi"``).
        name_zh, name_en: its names.
        tile_set: the tiles played (and the table gear: ``tile_set.count``).
        hand_sizes: tiles of a winning hand, each kong counted as 3, flowers left out, the winning
            tile included: ``(14,)``, or ``(17,)`` for Taiwan 16-tile.
        options: the situation options it takes (others are refused).
        dice_rule: how the dice open the wall, in words with its source.
        dice_method: the same as a method of the table's dice (``controller.dice.Method`` value:
            ``two-throw``, ``one-throw``, ``sum-smaller``, ``sum-count``) that the table setting
            ``rules`` switches to; ``None`` where the seed gives no method the table's dice can
            do (the table keeps its own setting).
        doc: path of its rules document in the repository.
        scorer: ``(hand_text, options) -> SystemResult``; options complete and checked.
        excludes: ``{element key: keys it excludes}`` (the property tests check none is counted
            with an element that excludes it).
        unit: the unit of ``SystemResult.total``.
    """

    name: str
    name_zh: str
    name_en: str
    tile_set: TileSet
    hand_sizes: tuple[int, ...]
    options: tuple[Option, ...]
    dice_rule: str
    doc: str
    scorer: Callable[[str, dict], SystemResult]
    unit: Unit
    excludes: Mapping[str, frozenset[str]] = dataclasses.field(default_factory=dict)
    dice_method: str | None = None

    @property
    def gear(self) -> int:
        """The table's tile-count gear this system needs (136, 144 or 108)."""
        return self.tile_set.count

    def gear_problem(self, tile_count: int) -> str | None:
        """``None`` when the table's ``tile_count`` gear fits this system, else the reason (one line).

        For the table setting ``rules`` (``controller.settings``): picking a system sets the gear,
        and a gear that does not fit the table's rules is refused with this reason.
        """
        if tile_count == self.gear:
            return None
        return (f"{self.name} is played with {self.tile_set.description}: set the tile-count gear to {self.gear}, "
                f"not {tile_count}")

    def option(self, name: str) -> Option | None:
        for o in self.options:
            if o.name == name:
                return o
        return None

    def resolve_options(self, given: Mapping[str, Any] | None) -> dict[str, Any]:
        """The given options checked, with defaults for the rest.

        Raises:
            RulesError: ``unknown-option`` for an option this system does not take (the message
                names the system(s) that take it and lists this system's options), ``bad-value``
                for a value outside the option's range.
        """
        from . import systems_with_option  # the registry; imported late (it imports this module)
        opts = {o.name: o.default for o in self.options}
        for key, value in (given or {}).items():
            o = self.option(key)
            if o is None:
                owners = [s for s in systems_with_option(key) if s != self.name]
                whose = f"it belongs to {', '.join(owners)}" if owners else "no rule system takes it"
                raise RulesError("unknown-option", f"option {key!r} is not one of {self.name}'s ({whose}); "
                                 f"{self.name} takes: {', '.join(o.name for o in self.options)}")
            opts[key] = o.check(value)
        return opts

    def score(self, hand: str, options: Mapping[str, Any] | None = None) -> SystemResult:
        """Score ``hand`` (notation, see ``scoring.systems.notation``) with ``options``.

        Raises:
            RulesError / ScoringError: with a code and a one-line message (syntax, tile-count,
                tile-not-in-set, fifth-tile, not-winning, unknown-option, bad-value ...).
        """
        if not isinstance(hand, str):
            raise RulesError("syntax", f"a hand must be a string, got {type(hand).__name__}")
        return self.scorer(hand, self.resolve_options(options))

    def to_dict(self) -> dict:
        return {"name": self.name, "name_zh": self.name_zh, "name_en": self.name_en,
                "tiles": self.tile_set.count, "gear": self.gear, "tile_set": self.tile_set.description,
                "hand_sizes": list(self.hand_sizes), "unit": self.unit.value, "dice_rule": self.dice_rule,
                "doc": self.doc, "options": [o.to_dict() for o in self.options]}
