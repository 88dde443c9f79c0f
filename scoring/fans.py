"""The MCR fan table: one spec per fan, the 81 fans of 第九条 plus 明暗杠.

Each spec (``Fan``) is the one place where a fan is described: its number in the rules table
(1-81; ``None`` for 明暗杠, outside the table), its Chinese name as printed in the rules text, the
common English name, its points (分), the rule text's definition, what it excludes (不计, the
fans not counted with it, 不重复原则; the occurrences of a fan that lie inside it, 套算一次; whether
it is concealed by definition), which function of ``scoring.calculator`` detects it
(``Fan.detector``, the function itself: ``Fan.detector_function``), and what its detector records
as evidence. The calculator takes its points and exclusions from these specs;
``tests/scoring/test_fan_specs.py`` checks that every fan has exactly one spec, that each named
detector exists and counts that fan, that each fan is found in a hand that has it (with evidence
of its kind) and not in a near miss.

Evidence comes from the detectors: as they count a fan in a reading, they record the sets they
used (indices into the reading's packs, ``calculator.Reading.evidence``), or the winning tile, the
knitted straight, the four alike; ``scoring.score`` only turns them into notation.

Fans whose detection needs the counting principles (不拆移 no splitting, 套算一次 combine once,
不得相同 no identical reuse) are detected by family, in ``scoring.calculator``: every combination
of chows by ``_two_chows``/``_three_chows``/``_four_chows``, counted by
``_count_three_chows``/``_count_four_chows`` (套算一次, with ``_limit_chow_pairs``), every
combination of pungs by ``_two_pungs``/``_three_pungs``, counted by
``_count_three_pungs``/``_count_four_pungs``, which read the detectors' answers from tables made
by the detectors themselves (``_TWO_CHOWS_OF``, ``_THREE_CHOWS_OF``, ``_TWO_PUNGS_OF``,
``_THREE_PUNGS_OF``); the counting functions record the evidence (the first three sets in reading
order that make a fan of three, every set that makes a fan of two). A reading scored without its
evidence (the search for the best reading) takes the same counts from ``_CHOW_FANS`` (by the
chows' middle tiles, and the pair where it matters) and ``_PUNG_FANS`` (by the pungs' tiles):
tables that those counting functions fill themselves the first time a combination is asked for
(``tests/scoring/test_calculator_tables.py`` checks both paths agree on every reading).

Example, fan 28 Pure Straight (清龙): the spec below (names, 16 points, no exclusions), detected
by ``calculator._three_chows`` (``a + 3 == b and b + 3 == c`` of one suit), counted with its three
chows as evidence by ``_count_three_chows`` / ``_count_four_chows``. Nine Gates counts the fans of
its best regular reading, so a Nine Gates won on its 1 or 9 also has it (shown as the whole hand:
the gates have no sets).

Source: 中国麻将竞赛规则 (../shared/seeds/000_ba052a8ec20fd579.txt), 第九条 番种的分值与计分.
"""

from __future__ import annotations

import dataclasses

#: Evidence kinds: what a fan's detector records as its evidence (``calculator.Reading.evidence``),
#: shown by ``scoring.score`` as notation.
EVIDENCE = ("whole-hand", "win-tile", "two-chows", "three-chows", "chows-and-pair", "two-pungs", "three-pungs",
            "pungs", "winds", "dragons", "dragon-pungs", "prevalent-wind", "seat-wind", "terminal-pungs",
            "concealed-pungs", "kongs", "melded-kongs", "concealed-kongs", "melded-hand", "knitted-straight",
            "tile-hog", "flowers")


@dataclasses.dataclass(frozen=True, slots=True)
class Fan:
    """One fan (番种) of the table: its spec.

    Attributes:
        number: 1-81 as numbered in 第九条, or ``None`` for a fan outside the table (明暗杠).
        name_zh: Chinese name as in the rules text.
        name_en: English name (the common translation of the rules).
        points: points (分) for one occurrence.
        definition: the rule text's definition, shortened.
        excludes: numbers of the fans not counted with it (不计), from the rules text and the
            fans it necessarily implies; applied by ``calculator._exclusions``.
        excludes_1998: more fans it excludes when the 1998 text is taken literally (``mcr-1998``).
        voids_a_suit: the fan necessarily leaves a suit void, so under ``mcr-1998`` One Voided
            Suit (75) is not counted with it.
        takes_off: ``(fan, n)`` pairs: ``n`` occurrences of that fan lie inside this one and are
            not counted again (套算一次), while its other occurrences are, unless a counted fan
            excludes that fan altogether (Big Three Winds: its three wind pungs are not also
            three Pungs of Terminals or Honors; Nine Gates: the 111 or 999 of the gates).
        concealed: the fan is concealed by definition: with it, Fully Concealed Hand (56) counts
            as a plain Self-Drawn (80), its concealed part being inside the fan (Four Concealed
            Pungs, Nine Gates).
        detector: the name of the function in ``scoring.calculator`` that detects it (``"score"``:
            ``scoring.score.score``, for flowers); ``detector_function`` gives the function.
        evidence: the kind of evidence its detector records (one of ``EVIDENCE``): the whole hand,
            the winning tile, or which sets.
    """

    number: int | None
    name_zh: str
    name_en: str
    points: int
    definition: str
    excludes: tuple[int, ...] = ()
    excludes_1998: tuple[int, ...] = ()
    voids_a_suit: bool = False
    takes_off: tuple[tuple[int, int], ...] = ()
    concealed: bool = False
    detector: str = ""
    evidence: str = "whole-hand"

    @property
    def detector_function(self):
        """The function named by ``detector`` (in ``scoring.calculator``, or ``scoring.score.score``).

        Raises:
            AttributeError: no such function (a broken spec; the spec tests check every one).
        """
        import importlib
        module = importlib.import_module(".score" if self.detector == "score" else ".calculator", __package__)
        return getattr(module, self.detector)


#: The 81 specs in table order.
_SPECS: tuple[Fan, ...] = (
    Fan(1, "大四喜", "Big Four Winds", 88, "4 pungs (kongs) of winds",
        excludes=(48, 73), detector="_count_four_pungs", evidence="winds"),
    Fan(2, "大三元", "Big Three Dragons", 88, "3 pungs (kongs) of dragons",
        excludes=(59,), voids_a_suit=True, detector="_three_pungs", evidence="three-pungs"),
    Fan(3, "绿一色", "All Green", 88, "only 23468 bamboo and green dragon",
        excludes=(49, 75), detector="_tile_traits", evidence="whole-hand"),
    Fan(4, "九莲宝灯", "Nine Gates", 88, "1112345678999 of one suit concealed, winning on any tile of that suit",
        excludes=(22, 62), takes_off=((73, 1),), concealed=True, detector="_nine_gates_reading",
        evidence="whole-hand"),
    Fan(5, "四杠", "Four Kongs", 88, "4 kongs",
        excludes=(79,), detector="_count_kongs_and_concealed_pungs", evidence="kongs"),
    Fan(6, "连七对", "Seven Shifted Pairs", 88, "7 consecutive pairs of one suit",
        excludes=(), detector="_seven_pairs_reading", evidence="whole-hand"),
    Fan(7, "十三幺", "Thirteen Orphans", 88, "one of each terminal and honor plus a pair of one of them",
        excludes=(), detector="_thirteen_orphans_reading", evidence="whole-hand"),
    Fan(8, "清幺九", "All Terminals", 64, "pungs and pair of terminals (1 and 9) only",
        excludes=(48, 55, 73, 76, 65), excludes_1998=(32,), detector="_tile_traits", evidence="whole-hand"),
    Fan(9, "小四喜", "Little Four Winds", 64, "3 wind pungs and a wind pair",
        excludes=(73,), detector="_regular_reading", evidence="winds"),
    Fan(10, "小三元", "Little Three Dragons", 64, "2 dragon pungs and a dragon pair",
        excludes=(59,), voids_a_suit=True, detector="_regular_reading", evidence="dragons"),
    Fan(11, "字一色", "All Honors", 64, "pungs (kongs) and pair of honors only",
        excludes=(48, 55, 73, 75), detector="_tile_traits", evidence="whole-hand"),
    Fan(12, "四暗刻", "Four Concealed Pungs", 64, "4 concealed pungs (concealed kongs)",
        excludes=(48, 62), concealed=True, detector="_count_kongs_and_concealed_pungs", evidence="concealed-pungs"),
    Fan(13, "一色双龙会", "Pure Terminal Chows", 64, "123, 123, 789, 789 of one suit with a pair of 5 of that suit",
        excludes=(22, 63, 76), detector="_pure_terminal_chows", evidence="chows-and-pair"),
    Fan(14, "一色四同顺", "Quadruple Chow", 48, "4 identical chows of one suit",
        excludes=(), voids_a_suit=True, detector="_four_chows", evidence="chows-and-pair"),
    Fan(15, "一色四节高", "Four Pure Shifted Pungs", 48, "4 pungs of one suit, ranks rising by one",
        excludes=(48,), voids_a_suit=True, detector="_count_four_pungs", evidence="pungs"),
    Fan(16, "一色四步高", "Four Pure Shifted Chows", 32, "4 chows of one suit rising by one or by two",
        excludes=(), voids_a_suit=True, detector="_four_chows", evidence="chows-and-pair"),
    Fan(17, "三杠", "Three Kongs", 32, "3 kongs",
        excludes=(), detector="_count_kongs_and_concealed_pungs", evidence="kongs"),
    Fan(18, "混幺九", "All Terminals and Honors", 32, "pungs and pair of terminals and honors only",
        excludes=(48, 55, 73), detector="_tile_traits", evidence="whole-hand"),
    Fan(19, "七对", "Seven Pairs", 24, "7 pairs",
        excludes=(), detector="_seven_pairs_reading", evidence="whole-hand"),
    Fan(20, "七星不靠", "Greater Honors and Knitted Tiles", 24, "all 7 honors and 7 knitted 147/258/369 tiles, no pair",
        excludes=(), detector="_honors_and_knitted_reading", evidence="whole-hand"),
    Fan(21, "全双刻", "All Even Pungs", 24, "pungs and pair of even numbered tiles (2 4 6 8)",
        excludes=(48, 68, 76), detector="_pack_traits", evidence="whole-hand"),
    Fan(22, "清一色", "Full Flush", 24, "numbered tiles of one suit only",
        excludes=(), detector="_suits", evidence="whole-hand"),
    Fan(23, "一色三同顺", "Pure Triple Chow", 24, "3 identical chows of one suit",
        excludes=(), detector="_three_chows", evidence="three-chows"),
    Fan(24, "一色三节高", "Pure Shifted Pungs", 24, "3 pungs of one suit, ranks rising by one",
        excludes=(), detector="_three_pungs", evidence="three-pungs"),
    Fan(25, "全大", "Upper Tiles", 24, "only numbered tiles 7 8 9",
        excludes=(76,), detector="_rank_range", evidence="whole-hand"),
    Fan(26, "全中", "Middle Tiles", 24, "only numbered tiles 4 5 6",
        excludes=(68, 76), detector="_rank_range", evidence="whole-hand"),
    Fan(27, "全小", "Lower Tiles", 24, "only numbered tiles 1 2 3",
        excludes=(76,), detector="_rank_range", evidence="whole-hand"),
    Fan(28, "清龙", "Pure Straight", 16, "123 456 789 of one suit",
        excludes=(), detector="_three_chows", evidence="three-chows"),
    Fan(29, "三色双龙会", "Three-Suited Terminal Chows", 16, "123 and 789 in two suits, pair of 5 in the third",
        excludes=(63, 76), detector="_three_suited_terminal_chows", evidence="chows-and-pair"),
    Fan(30, "一色三步高", "Pure Shifted Chows", 16, "3 chows of one suit rising by one or by two",
        excludes=(), detector="_three_chows", evidence="three-chows"),
    Fan(31, "全带五", "All Five", 16, "every set and the pair contain a 5",
        excludes=(68, 76), detector="_pack_traits", evidence="whole-hand"),
    Fan(32, "三同刻", "Triple Pung", 16, "3 pungs (kongs) of the same rank in the three suits",
        excludes=(), detector="_three_pungs", evidence="three-pungs"),
    Fan(33, "三暗刻", "Three Concealed Pungs", 16, "3 concealed pungs",
        excludes=(), detector="_count_kongs_and_concealed_pungs", evidence="concealed-pungs"),
    Fan(34, "全不靠", "Lesser Honors and Knitted Tiles", 12, "14 single knitted 147/258/369 tiles and honors",
        excludes=(), detector="_honors_and_knitted_reading", evidence="whole-hand"),
    Fan(35, "组合龙", "Knitted Straight", 12, "147, 258, 369 in three different suits",
        excludes=(), detector="_knitted_straight_reading", evidence="knitted-straight"),
    Fan(36, "大于五", "Upper Four", 12, "only numbered tiles 6 to 9",
        excludes=(76,), detector="_rank_range", evidence="whole-hand"),
    Fan(37, "小于五", "Lower Four", 12, "only numbered tiles 1 to 4",
        excludes=(76,), detector="_rank_range", evidence="whole-hand"),
    Fan(38, "三风刻", "Big Three Winds", 12, "3 wind pungs",
        excludes=(), voids_a_suit=True, takes_off=((73, 3),), detector="_three_pungs", evidence="three-pungs"),
    Fan(39, "花龙", "Mixed Straight", 8, "123 456 789 spread over the three suits",
        excludes=(), detector="_three_chows", evidence="three-chows"),
    Fan(40, "推不倒", "Reversible Tiles", 8, "only 1234589 dots, 245689 bamboo and white dragon",
        excludes=(75,), detector="_tile_traits", evidence="whole-hand"),
    Fan(41, "三色三同顺", "Mixed Triple Chow", 8, "the same chow in the three suits",
        excludes=(), detector="_three_chows", evidence="three-chows"),
    Fan(42, "三色三节高", "Mixed Shifted Pungs", 8, "3 pungs in the three suits, ranks rising by one",
        excludes=(), detector="_three_pungs", evidence="three-pungs"),
    Fan(43, "无番和", "Chicken Hand", 8, "a winning hand with no other fan (flowers aside)",
        excludes=(), detector="_regular_reading", evidence="whole-hand"),
    Fan(44, "妙手回春", "Last Tile Draw", 8, "self-drawn on the last tile of the wall",
        excludes=(80,), detector="_win_flags", evidence="win-tile"),
    Fan(45, "海底捞月", "Last Tile Claim", 8, "won on the last discard",
        excludes=(), detector="_win_flags", evidence="win-tile"),
    Fan(46, "杠上开花", "Out with Replacement Tile", 8, "won on the replacement tile of a kong",
        excludes=(80,), detector="_win_flags", evidence="win-tile"),
    Fan(47, "抢杠和", "Robbing the Kong", 8, "won on the tile another player adds to a pung",
        excludes=(), detector="_win_flags", evidence="win-tile"),
    Fan(48, "碰碰和", "All Pungs", 6, "4 pungs (kongs) and a pair",
        excludes=(), detector="_regular_reading", evidence="pungs"),
    Fan(49, "混一色", "Half Flush", 6, "one suit and honors",
        excludes=(), detector="_suits", evidence="whole-hand"),
    Fan(50, "三色三步高", "Mixed Shifted Chows", 6, "3 chows in the three suits rising by one",
        excludes=(), detector="_three_chows", evidence="three-chows"),
    Fan(51, "五门齐", "All Types", 6, "all three suits, winds and dragons",
        excludes=(), detector="_suits", evidence="whole-hand"),
    Fan(52, "全求人", "Melded Hand", 6, "4 claimed sets and winning on a discard as a single wait",
        excludes=(79,), detector="_regular_reading", evidence="melded-hand"),
    Fan(53, "双暗杠", "Two Concealed Kongs", 6, "2 concealed kongs",
        excludes=(), detector="_count_kongs_and_concealed_pungs", evidence="concealed-kongs"),
    Fan(54, "双箭刻", "Two Dragon Pungs", 6, "2 dragon pungs (kongs)",
        excludes=(59,), detector="_two_pungs", evidence="two-pungs"),
    Fan(55, "全带幺", "Outside Hand", 4, "every set and the pair contain a terminal or honor",
        excludes=(), detector="_pack_traits", evidence="whole-hand"),
    Fan(56, "不求人", "Fully Concealed Hand", 4, "no claimed set, self-drawn",
        excludes=(80,), detector="_regular_reading", evidence="whole-hand"),
    Fan(57, "双明杠", "Two Melded Kongs", 4, "2 melded kongs",
        excludes=(), detector="_count_kongs_and_concealed_pungs", evidence="melded-kongs"),
    Fan(58, "和绝张", "Last Tile", 4, "won on the last of its kind, three being visible",
        excludes=(), detector="_win_flags", evidence="win-tile"),
    Fan(59, "箭刻", "Dragon Pung", 2, "a pung (kong) of dragons",
        excludes=(), detector="_regular_reading", evidence="dragon-pungs"),
    Fan(60, "圈风刻", "Prevalent Wind", 2, "a pung (kong) of the prevalent wind",
        excludes=(), detector="_wind_pung", evidence="prevalent-wind"),
    Fan(61, "门风刻", "Seat Wind", 2, "a pung (kong) of the seat wind",
        excludes=(), detector="_wind_pung", evidence="seat-wind"),
    Fan(62, "门前清", "Concealed Hand", 2, "no claimed set, won on a discard",
        excludes=(), detector="_regular_reading", evidence="whole-hand"),
    Fan(63, "平和", "All Chows", 2, "4 chows and a pair of a numbered tile",
        excludes=(76,), detector="_regular_reading", evidence="chows-and-pair"),
    Fan(64, "四归一", "Tile Hog", 2, "all 4 of a tile used without a kong",
        excludes=(), detector="_regular_reading", evidence="tile-hog"),
    Fan(65, "双同刻", "Double Pung", 2, "2 pungs of the same rank in two suits",
        excludes=(), detector="_two_pungs", evidence="two-pungs"),
    Fan(66, "双暗刻", "Two Concealed Pungs", 2, "2 concealed pungs",
        excludes=(), detector="_count_kongs_and_concealed_pungs", evidence="concealed-pungs"),
    Fan(67, "暗杠", "Concealed Kong", 2, "a concealed kong",
        excludes=(), detector="_count_kongs_and_concealed_pungs", evidence="concealed-kongs"),
    Fan(68, "断幺", "All Simples", 2, "no terminal or honor",
        excludes=(76,), detector="_tile_traits", evidence="whole-hand"),
    Fan(69, "一般高", "Pure Double Chow", 1, "2 identical chows of one suit",
        excludes=(), detector="_two_chows", evidence="two-chows"),
    Fan(70, "喜相逢", "Mixed Double Chow", 1, "the same chow in two suits",
        excludes=(), detector="_two_chows", evidence="two-chows"),
    Fan(71, "连六", "Short Straight", 1, "2 chows of one suit making 6 consecutive tiles",
        excludes=(), detector="_two_chows", evidence="two-chows"),
    Fan(72, "老少副", "Two Terminal Chows", 1, "123 and 789 of one suit",
        excludes=(), detector="_two_chows", evidence="two-chows"),
    Fan(73, "幺九刻", "Pung of Terminals or Honors", 1, "a pung (kong) of terminals or of a non-scoring wind",
        excludes=(), detector="_regular_reading", evidence="terminal-pungs"),
    Fan(74, "明杠", "Melded Kong", 1, "a melded kong",
        excludes=(), detector="_count_kongs_and_concealed_pungs", evidence="melded-kongs"),
    Fan(75, "缺一门", "One Voided Suit", 1, "one of the three suits missing",
        excludes=(), detector="_suits", evidence="whole-hand"),
    Fan(76, "无字", "No Honors", 1, "no honor tile",
        excludes=(), detector="_suits", evidence="whole-hand"),
    Fan(77, "边张", "Edge Wait", 1, "the only wait is the 3 of 12 or the 7 of 89",
        excludes=(), detector="_wait_fan", evidence="win-tile"),
    Fan(78, "坎张", "Closed Wait", 1, "the only wait is the middle of a chow",
        excludes=(), detector="_wait_fan", evidence="win-tile"),
    Fan(79, "单钓将", "Single Wait", 1, "the only wait is the pair tile",
        excludes=(), detector="_wait_fan", evidence="win-tile"),
    Fan(80, "自摸", "Self-Drawn", 1, "won on a self-drawn tile",
        excludes=(), detector="_win_flags", evidence="win-tile"),
    Fan(81, "花牌", "Flower Tiles", 1, "one point per flower, counted only after the 8-point minimum",
        excludes=(), detector="score", evidence="flowers"),
)

#: Fans by number 1..81.
FANS: dict[int, Fan] = {f.number: f for f in _SPECS}  # type: ignore[misc]

#: 明暗杠: one melded and one concealed kong. Not a fan of the 1998 table; current competition
#: practice (and the reference calculator) counts it 5 points instead of 明杠 1 + 暗杠 2.
MELDED_AND_CONCEALED_KONG = Fan(None, "明暗杠", "Concealed Kong and Melded Kong", 5,
                                "one melded kong and one concealed kong (current practice; not in the 1998 table)",
                                detector="_count_kongs_and_concealed_pungs", evidence="kongs")

#: Key used for 明暗杠 in fan-count dictionaries (JSON has no integer keys for it).
MIXED_KONGS_KEY = None

assert len(FANS) == len(_SPECS) == 81 and sorted(FANS) == list(range(1, 82))
assert sum(1 for f in FANS.values() if f.points == 88) == 7


def fan(number: int | None) -> Fan:
    """The fan with that number (``None`` gives 明暗杠). Raises KeyError for an unknown number."""
    if number is None:
        return MELDED_AND_CONCEALED_KONG
    return FANS[number]
