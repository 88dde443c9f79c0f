"""Reference oracle: score a :class:`hand_generator.Situation` with PyMahjongGB.

PyMahjongGB (``MahjongGB.MahjongFanCalculator``, verbose mode) returns one
``(points_per_instance, count, name_zh, name_en)`` tuple per fan awarded. This module maps the
Chinese names onto the MCR rules-table numbers 1..81 (``None`` for 明暗杠, 5 points, which is
outside the table), so results have the same shape as ``scoring``'s ``fan_counts()``:
``{fan_number_or_None: count}``.

PyMahjongGB is a declared dev dependency: importing this module fails if it is missing.
"""

from __future__ import annotations

from MahjongGB import MahjongFanCalculator

from hand_generator import Situation

#: Reference names in rules-table order; position + 1 is the fan number.
REFERENCE_NAMES_IN_TABLE_ORDER: tuple[str, ...] = (
    "大四喜", "大三元", "绿一色", "九莲宝灯", "四杠", "连七对", "十三幺",
    "清幺九", "小四喜", "小三元", "字一色", "四暗刻", "一色双龙会",
    "一色四同顺", "一色四节高",
    "一色四步高", "三杠", "混幺九",
    "七对", "七星不靠", "全双刻", "清一色", "一色三同顺", "一色三节高", "全大", "全中", "全小",
    "清龙", "三色双龙会", "一色三步高", "全带五", "三同刻", "三暗刻",
    "全不靠", "组合龙", "大于五", "小于五", "三风刻",
    "花龙", "推不倒", "三色三同顺", "三色三节高", "无番和", "妙手回春", "海底捞月", "杠上开花", "抢杠和",
    "碰碰和", "混一色", "三色三步高", "五门齐", "全求人", "双暗杠", "双箭刻",
    "全带幺", "不求人", "双明杠", "和绝张",
    "箭刻", "圈风刻", "门风刻", "门前清", "平和", "四归一", "双同刻", "双暗刻", "暗杠", "断幺",
    "一般高", "喜相逢", "连六", "老少副", "幺九刻", "明杠", "缺一门", "无字",
    "独听・边张", "独听・嵌张", "独听・单钓", "自摸",
    "花牌",
)
#: 明暗杠 (one concealed + one melded kong) is outside the 81-fan table.
OUTSIDE_TABLE_NAME = "明暗杠"

#: Reference Chinese fan name -> fan number (1..81) or None.
NAME_TO_NUMBER: dict[str, int | None] = {
    name: i + 1 for i, name in enumerate(REFERENCE_NAMES_IN_TABLE_ORDER)
}
NAME_TO_NUMBER[OUTSIDE_TABLE_NAME] = None

assert len(REFERENCE_NAMES_IN_TABLE_ORDER) == 81, len(REFERENCE_NAMES_IN_TABLE_ORDER)
assert len(NAME_TO_NUMBER) == 82, "duplicate fan name in the table"

#: Points of one instance of each fan, by number (the rules table, 第九条); None = 明暗杠.
FAN_POINTS: dict[int | None, int] = {None: 5}
for _lo, _hi, _pts in (
    (1, 7, 88), (8, 13, 64), (14, 15, 48), (16, 18, 32), (19, 27, 24), (28, 33, 16),
    (34, 38, 12), (39, 47, 8), (48, 54, 6), (55, 58, 4), (59, 68, 2), (69, 81, 1),
):
    for _n in range(_lo, _hi + 1):
        FAN_POINTS[_n] = _pts


class UnknownReferenceFan(AssertionError):
    """The reference returned a fan name or point value this mapping does not know."""


def reference_raw(sit: Situation) -> tuple[tuple[int, int, str, str], ...]:
    """The reference's verbose answer: ``((points_per_instance, count, name_zh, name_en), ...)``.

    Raises ``TypeError`` (from PyMahjongGB) if the situation is not a legal win.
    """
    return MahjongFanCalculator(**sit.to_pymahjonggb_kwargs())


def reference_result(sit: Situation) -> tuple[dict[int | None, int], int]:
    """``({fan_number_or_None: count}, total_points)`` according to PyMahjongGB.

    ``total_points`` includes flowers (花牌, fan 81, one point per flower). Raises
    :class:`UnknownReferenceFan` if the reference names a fan outside the mapping or gives it
    points different from the rules table (which would mean the numbering is wrong).
    """
    counts: dict[int | None, int] = {}
    total = 0
    for points, count, name_zh, name_en in reference_raw(sit):
        try:
            number = NAME_TO_NUMBER[name_zh]
        except KeyError:
            raise UnknownReferenceFan(f"unmapped reference fan {name_zh!r} ({name_en})") from None
        if FAN_POINTS[number] != points:
            raise UnknownReferenceFan(
                f"{name_zh} ({name_en}) mapped to #{number} worth {FAN_POINTS[number]}, "
                f"reference says {points}"
            )
        counts[number] = counts.get(number, 0) + count
        total += points * count
    return counts, total


def reference_fans(sit: Situation) -> dict[int | None, int]:
    """``{fan_number_or_None: count}`` according to PyMahjongGB (see :func:`reference_result`)."""
    return reference_result(sit)[0]


def reference_total(sit: Situation) -> int:
    """Total points (all fans times their counts, flowers included) according to PyMahjongGB."""
    return reference_result(sit)[1]
