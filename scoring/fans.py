"""The MCR fan table: the 81 fans of 第九条 with their points, plus 明暗杠.

Every fan has one entry here: its number in the rules table (1-81; ``None`` for a fan outside
the table), its Chinese name as printed in the rules text, the common English name, its points
(分) and the definition from the rules text. Which fans a fan excludes (不计) is applied by the
calculator (``scoring.calculator``), next to the code that detects each fan.

Source: 中国麻将竞赛规则 (../shared/seeds/000_ba052a8ec20fd579.txt), 第九条 番种的分值与计分.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, slots=True)
class Fan:
    """One fan (番种) of the table.

    Attributes:
        number: 1-81 as numbered in 第九条, or ``None`` for a fan outside the table.
        name_zh: Chinese name as in the rules text.
        name_en: English name (the common translation of the rules).
        points: points (分) for one occurrence.
        definition: the rule text's definition, shortened.
    """

    number: int | None
    name_zh: str
    name_en: str
    points: int
    definition: str


_TABLE: tuple[tuple[int, str, str, int, str], ...] = (
    (1, "大四喜", "Big Four Winds", 88, "4 pungs (kongs) of winds"),
    (2, "大三元", "Big Three Dragons", 88, "3 pungs (kongs) of dragons"),
    (3, "绿一色", "All Green", 88, "only 23468 bamboo and green dragon"),
    (4, "九莲宝灯", "Nine Gates", 88, "1112345678999 of one suit concealed, winning on any tile of that suit"),
    (5, "四杠", "Four Kongs", 88, "4 kongs"),
    (6, "连七对", "Seven Shifted Pairs", 88, "7 consecutive pairs of one suit"),
    (7, "十三幺", "Thirteen Orphans", 88, "one of each terminal and honor plus a pair of one of them"),
    (8, "清幺九", "All Terminals", 64, "pungs and pair of terminals (1 and 9) only"),
    (9, "小四喜", "Little Four Winds", 64, "3 wind pungs and a wind pair"),
    (10, "小三元", "Little Three Dragons", 64, "2 dragon pungs and a dragon pair"),
    (11, "字一色", "All Honors", 64, "pungs (kongs) and pair of honors only"),
    (12, "四暗刻", "Four Concealed Pungs", 64, "4 concealed pungs (concealed kongs)"),
    (13, "一色双龙会", "Pure Terminal Chows", 64, "123, 123, 789, 789 of one suit with a pair of 5 of that suit"),
    (14, "一色四同顺", "Quadruple Chow", 48, "4 identical chows of one suit"),
    (15, "一色四节高", "Four Pure Shifted Pungs", 48, "4 pungs of one suit, ranks rising by one"),
    (16, "一色四步高", "Four Pure Shifted Chows", 32, "4 chows of one suit rising by one or by two"),
    (17, "三杠", "Three Kongs", 32, "3 kongs"),
    (18, "混幺九", "All Terminals and Honors", 32, "pungs and pair of terminals and honors only"),
    (19, "七对", "Seven Pairs", 24, "7 pairs"),
    (20, "七星不靠", "Greater Honors and Knitted Tiles", 24, "all 7 honors and 7 knitted 147/258/369 tiles, no pair"),
    (21, "全双刻", "All Even Pungs", 24, "pungs and pair of even numbered tiles (2 4 6 8)"),
    (22, "清一色", "Full Flush", 24, "numbered tiles of one suit only"),
    (23, "一色三同顺", "Pure Triple Chow", 24, "3 identical chows of one suit"),
    (24, "一色三节高", "Pure Shifted Pungs", 24, "3 pungs of one suit, ranks rising by one"),
    (25, "全大", "Upper Tiles", 24, "only numbered tiles 7 8 9"),
    (26, "全中", "Middle Tiles", 24, "only numbered tiles 4 5 6"),
    (27, "全小", "Lower Tiles", 24, "only numbered tiles 1 2 3"),
    (28, "清龙", "Pure Straight", 16, "123 456 789 of one suit"),
    (29, "三色双龙会", "Three-Suited Terminal Chows", 16, "123 and 789 in two suits, pair of 5 in the third"),
    (30, "一色三步高", "Pure Shifted Chows", 16, "3 chows of one suit rising by one or by two"),
    (31, "全带五", "All Five", 16, "every set and the pair contain a 5"),
    (32, "三同刻", "Triple Pung", 16, "3 pungs (kongs) of the same rank in the three suits"),
    (33, "三暗刻", "Three Concealed Pungs", 16, "3 concealed pungs"),
    (34, "全不靠", "Lesser Honors and Knitted Tiles", 12, "14 single knitted 147/258/369 tiles and honors"),
    (35, "组合龙", "Knitted Straight", 12, "147, 258, 369 in three different suits"),
    (36, "大于五", "Upper Four", 12, "only numbered tiles 6 to 9"),
    (37, "小于五", "Lower Four", 12, "only numbered tiles 1 to 4"),
    (38, "三风刻", "Big Three Winds", 12, "3 wind pungs"),
    (39, "花龙", "Mixed Straight", 8, "123 456 789 spread over the three suits"),
    (40, "推不倒", "Reversible Tiles", 8, "only 1234589 dots, 245689 bamboo and white dragon"),
    (41, "三色三同顺", "Mixed Triple Chow", 8, "the same chow in the three suits"),
    (42, "三色三节高", "Mixed Shifted Pungs", 8, "3 pungs in the three suits, ranks rising by one"),
    (43, "无番和", "Chicken Hand", 8, "a winning hand with no other fan (flowers aside)"),
    (44, "妙手回春", "Last Tile Draw", 8, "self-drawn on the last tile of the wall"),
    (45, "海底捞月", "Last Tile Claim", 8, "won on the last discard"),
    (46, "杠上开花", "Out with Replacement Tile", 8, "won on the replacement tile of a kong"),
    (47, "抢杠和", "Robbing the Kong", 8, "won on the tile another player adds to a pung"),
    (48, "碰碰和", "All Pungs", 6, "4 pungs (kongs) and a pair"),
    (49, "混一色", "Half Flush", 6, "one suit and honors"),
    (50, "三色三步高", "Mixed Shifted Chows", 6, "3 chows in the three suits rising by one"),
    (51, "五门齐", "All Types", 6, "all three suits, winds and dragons"),
    (52, "全求人", "Melded Hand", 6, "4 claimed sets and winning on a discard as a single wait"),
    (53, "双暗杠", "Two Concealed Kongs", 6, "2 concealed kongs"),
    (54, "双箭刻", "Two Dragon Pungs", 6, "2 dragon pungs (kongs)"),
    (55, "全带幺", "Outside Hand", 4, "every set and the pair contain a terminal or honor"),
    (56, "不求人", "Fully Concealed Hand", 4, "no claimed set, self-drawn"),
    (57, "双明杠", "Two Melded Kongs", 4, "2 melded kongs"),
    (58, "和绝张", "Last Tile", 4, "won on the last of its kind, three being visible"),
    (59, "箭刻", "Dragon Pung", 2, "a pung (kong) of dragons"),
    (60, "圈风刻", "Prevalent Wind", 2, "a pung (kong) of the prevalent wind"),
    (61, "门风刻", "Seat Wind", 2, "a pung (kong) of the seat wind"),
    (62, "门前清", "Concealed Hand", 2, "no claimed set, won on a discard"),
    (63, "平和", "All Chows", 2, "4 chows and a pair of a numbered tile"),
    (64, "四归一", "Tile Hog", 2, "all 4 of a tile used without a kong"),
    (65, "双同刻", "Double Pung", 2, "2 pungs of the same rank in two suits"),
    (66, "双暗刻", "Two Concealed Pungs", 2, "2 concealed pungs"),
    (67, "暗杠", "Concealed Kong", 2, "a concealed kong"),
    (68, "断幺", "All Simples", 2, "no terminal or honor"),
    (69, "一般高", "Pure Double Chow", 1, "2 identical chows of one suit"),
    (70, "喜相逢", "Mixed Double Chow", 1, "the same chow in two suits"),
    (71, "连六", "Short Straight", 1, "2 chows of one suit making 6 consecutive tiles"),
    (72, "老少副", "Two Terminal Chows", 1, "123 and 789 of one suit"),
    (73, "幺九刻", "Pung of Terminals or Honors", 1, "a pung (kong) of terminals or of a non-scoring wind"),
    (74, "明杠", "Melded Kong", 1, "a melded kong"),
    (75, "缺一门", "One Voided Suit", 1, "one of the three suits missing"),
    (76, "无字", "No Honors", 1, "no honor tile"),
    (77, "边张", "Edge Wait", 1, "the only wait is the 3 of 12 or the 7 of 89"),
    (78, "坎张", "Closed Wait", 1, "the only wait is the middle of a chow"),
    (79, "单钓将", "Single Wait", 1, "the only wait is the pair tile"),
    (80, "自摸", "Self-Drawn", 1, "won on a self-drawn tile"),
    (81, "花牌", "Flower Tiles", 1, "one point per flower, counted only after the 8-point minimum"),
)

#: Fans by number 1..81.
FANS: dict[int, Fan] = {n: Fan(n, zh, en, p, d) for n, zh, en, p, d in _TABLE}

#: 明暗杠: one melded and one concealed kong. Not a fan of the 1998 table; current competition
#: practice (and the reference calculator) counts it 5 points instead of 明杠 1 + 暗杠 2.
MELDED_AND_CONCEALED_KONG = Fan(None, "明暗杠", "Concealed Kong and Melded Kong", 5,
                                "one melded kong and one concealed kong (current practice; not in the 1998 table)")

#: Key used for 明暗杠 in fan-count dictionaries (JSON has no integer keys for it).
MIXED_KONGS_KEY = None

assert len(FANS) == 81 and sorted(FANS) == list(range(1, 82))
assert sum(1 for f in FANS.values() if f.points == 88) == 7


def fan(number: int | None) -> Fan:
    """The fan with that number (``None`` gives 明暗杠). Raises KeyError for an unknown number."""
    if number is None:
        return MELDED_AND_CONCEALED_KONG
    return FANS[number]
