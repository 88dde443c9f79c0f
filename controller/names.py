"""The one home of the table's side and phase names, in English and Chinese.

Every text that names a side (东南西北) or a phase of the cycle (待机, 码牌 ...) takes it from here:
the diagnosis texts (controller.diagnosis), the fault blocks (controller.faults), the wall break
(controller.dice), the service's status (``state_zh``) and the match API. A phase without a Chinese
name here is caught by tests/controller/test_names.py against ``controller.cycle.Phase`` (the page
once showed "parking" untranslated because a second copy lacked it).
"""

from __future__ import annotations

#: the four sides in table order (the dealer's wind first): east, south, west, north
SIDES: tuple[str, ...] = ("E", "S", "W", "N")
#: each side's Chinese name
SIDES_ZH: dict[str, str] = {"E": "东", "S": "南", "W": "西", "N": "北"}
#: each phase of the cycle (``controller.cycle.Phase`` values) in Chinese
PHASE_ZH: dict[str, str] = {
    "idle": "待机", "clearing": "清墙", "homing": "归位", "shuffling": "洗牌", "building": "码牌",
    "parking": "推牌头归位", "refill-pause": "补牌暂停", "lifting": "升牌", "probing": "升牌复查",
    "dice": "掷骰", "walls-up": "牌墙已升起", "manual-lift": "手动升降", "fault": "故障", "safe-stop": "安全停机",
}


def phase_zh(phase: str) -> str:
    """The Chinese name of the phase ``phase`` (a ``Phase`` value such as ``"parking"``); a text that
    is not a phase (e.g. ``"manual lift up (side W)"``) is returned as it is."""
    return PHASE_ZH.get(phase, phase)


def side_zh(side: str | None) -> str:
    """东, 南, 西 or 北 for E, S, W or N; "" for None (a side-less part). Raises KeyError for any other."""
    return "" if side is None else SIDES_ZH[side]
