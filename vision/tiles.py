"""The classifier's label set and the maps from the training data sets' labels.

44 labels: the 34 tiles in scoring notation (``1m``..``9m``, ``1p``..``9p``, ``1s``..``9s``,
``E S W N C F P``), the 8 flowers ``1f``..``8f`` (1-4 seasons 春夏秋冬, 5-8 梅兰竹菊, the order of
the rules text), ``back`` (a face-down tile) and ``unknown`` (not a tile, or unreadable).
"""

from __future__ import annotations

SUITED: tuple[str, ...] = tuple(f"{r}{s}" for s in "mps" for r in range(1, 10))
HONORS: tuple[str, ...] = tuple("ESWNCFP")
FLOWERS: tuple[str, ...] = tuple(f"{i}f" for i in range(1, 9))
BACK = "back"
UNKNOWN = "unknown"
#: The classifier's output order (index -> name).
LABELS: tuple[str, ...] = SUITED + HONORS + FLOWERS + (BACK, UNKNOWN)
LABEL_INDEX: dict[str, int] = {n: i for i, n in enumerate(LABELS)}
NUM_LABELS = len(LABELS)  # 44

#: Names of ``tiles/chinese-mahjong-detection`` (see its data.yaml) -> our label.
DETECTION_NAMES: dict[str, str] = {
    **{f"sc{i}": f"{i}m" for i in range(1, 10)},
    **{f"sd{i}": f"{i}p" for i in range(1, 10)},
    **{f"sb{i}": f"{i}s" for i in range(1, 10)},
    "hwe": "E", "hws": "S", "hww": "W", "hwn": "N",
    "hdw": "P", "hdg": "F", "hdr": "C",
    **{f"bs{i}": f"{i}f" for i in range(1, 5)},
    **{f"bf{i}": f"{i + 4}f" for i in range(1, 5)},
}

#: 1-based labels of ``tiles/camerash/data.csv`` -> our label (its flowers are plum, orchid,
#: chrysanthemum, bamboo: 39-42 -> 5f 6f 8f 7f).
CAMERASH_LABELS: dict[int, str] = {
    **{i: f"{i}p" for i in range(1, 10)},
    **{i + 9: f"{i}s" for i in range(1, 10)},
    **{i + 18: f"{i}m" for i in range(1, 10)},
    28: "E", 29: "S", 30: "W", 31: "N", 32: "C", 33: "F", 34: "P",
    35: "1f", 36: "2f", 37: "3f", 38: "4f", 39: "5f", 40: "6f", 41: "8f", 42: "7f",
}


def is_flower(name: str) -> bool:
    """True for ``1f``..``8f``."""
    return name in FLOWERS


def copies_in_a_set(name: str) -> int:
    """How many of the tile ``name`` one set holds: 4 of each of the 34 hand tiles, 1 of each flower
    (rules text, article 1: 144 tiles). Raises KeyError for ``back``, ``unknown`` or another name."""
    if name in FLOWERS:
        return 1
    if name in SUITED or name in HONORS:
        return 4
    raise KeyError(f"{name!r} is not a tile of the set")


def is_hand_tile(name: str) -> bool:
    """True for the 34 tiles that make a hand (not flowers, ``back`` or ``unknown``)."""
    return name in SUITED or name in HONORS
