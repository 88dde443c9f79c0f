"""Persisted settings: the tile count (and the machine profile and dice method it goes with), and
the rules the table is played by.

Stored as JSON in the state folder: ``$MJTABLE_STATE_DIR``, else ``$XDG_STATE_HOME/mjtable``,
else ``~/.local/state/mjtable``; file ``settings.json``. Written atomically (a temporary file
renamed over the old one), so a power cut leaves either the old or the new settings, never half.

A tile count is checked against the machine profile's gears (136 / 144 / 152 / 108 in the default
profile); a change made while a cycle runs applies from the next cycle (see
``controller.cycle.request_gear``).

The rules (issue #20): ``rules`` names a system of ``scoring.systems`` (``mjtable rules --list``)
or is unset (``none``: any gear, hands scored by MCR). Picking a system sets the gear it is played
with (Changsha 108, Taiwan and Fuzhou 144 with flowers, riichi and the classic table 136, MCR 144)
and, where it names one, its dice method (Changsha: the sum picks the wall, the smaller die
counts); a gear the profile lacks refuses the rules, and while rules are set a tile count that
does not fit them is refused with the reason. The dice method can still be changed by hand after
the rules (a house choice some halls make).

The flag threshold (issue #21): ``confirm-below`` is the confidence under which a tile read from a
photo is listed for the player to confirm (``CONFIRM_BELOW``, 0.6, by default; ``check_confirm_below``
gives the range and why). A referee who would rather be asked more and miss fewer errors raises it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

from .dice import Method

KEYS = ("tile-count", "profile", "dice-method", "dealer", "rules", "confirm-below")
#: each key's field of ``StoredSettings`` (and key in settings.json and in the API)
FIELDS = {key: key.replace("-", "_") for key in KEYS}
#: ``config set rules none`` (or an empty value) unsets the rules.
NO_RULES = ("none", "")
#: The flag threshold by default: a tile read from a photo with a lower confidence is listed for the
#: player to confirm: the camera pipeline's own default, ``vision.assemble.MIN_CONFIDENCE`` (not
#: imported: importing vision loads OpenCV, and the command line and the service read and check
#: the setting without it; tests/controller/test_confirm_below_setting.py ties the two values).
#: Measured in vision/README.md "The flag threshold against silent photos".
CONFIRM_BELOW = 0.6
#: the thresholds a table may set, inclusive (``check_confirm_below`` says why)
CONFIRM_BELOW_RANGE = (0.5, 0.95)


class SettingsError(ValueError):
    """A setting that is unknown or out of range; the message names the key and what is allowed.
    ``message_zh``: the same in Chinese where the page can send the value (None elsewhere)."""

    def __init__(self, message: str, message_zh: str | None = None) -> None:
        super().__init__(message)
        self.message_zh = message_zh


@dataclasses.dataclass(frozen=True)
class StoredSettings:
    """The persisted settings.

    Attributes:
        tile_count: tiles in the set the machine builds (a gear of the profile).
        profile: machine profile name (hardware/profiles/NAME.toml) or a path to one.
        dice_method: ``two-throw`` (the rules' method) or ``one-throw``.
        dealer: the dealer's side E/S/W/N (for the wall break).
        rules: the rule system's name (``scoring.systems.SYSTEMS``), or ``None``: no rules set.
        camera: the table camera's calibration (``vision.table_camera.TableCalibration.to_dict``,
            set by ``mjtable camera calibrate``, checked by ``check_camera``), or ``None``.
        confirm_below: the flag threshold, a confidence 0-1: tiles read from a photo below it are
            listed for the player to confirm (``check_confirm_below``).
    """

    tile_count: int = 136
    profile: str = "default"
    dice_method: str = Method.TWO_THROW.value
    dealer: str = "E"
    rules: str | None = None
    camera: dict | None = None
    confirm_below: float = CONFIRM_BELOW

    @property
    def scoring_rules(self) -> str:
        """The system hands at this table are scored by: the rules set, else ``"mcr"``."""
        return self.rules or "mcr"


def rule_system(name: str):
    """The ``scoring.systems.RuleSystem`` called ``name``.

    Raises:
        SettingsError: no such system (the message lists the systems).
    """
    import scoring.systems
    try:
        return scoring.systems.get(name)
    except scoring.systems.RulesError:
        raise SettingsError(f"rules {name!r} unknown: allowed are {', '.join(scoring.systems.SYSTEMS)}, "
                            "or none", f"没有规则“{name}”：可选 {'、'.join(scoring.systems.SYSTEMS)}，或不设规则") from None


def rules_choices(gears: "tuple[int, ...] | list[int]") -> list[dict]:
    """The systems a table with these tile-count ``gears`` can be set to, for a settings form:
    ``[{"name", "name_zh", "name_en", "tile_count", "dice_method"}]`` (``dice_method`` None where
    the system keeps the table's own)."""
    import scoring.systems
    return [{"name": s.name, "name_zh": s.name_zh, "name_en": s.name_en, "tile_count": s.gear,
             "dice_method": s.dice_method} for s in scoring.systems.SYSTEMS.values() if s.gear in gears]


def check_confirm_below(value: "str | float") -> float:
    """The flag threshold ``value`` (a confidence, e.g. ``"0.75"`` from the command line) as a float,
    when it lies in ``CONFIRM_BELOW_RANGE`` (0.5 to 0.95, both included).

    Why that range: below 0.5 a tile whose reading is no surer than a coin toss would be scored
    without asking anyone (at 0.5 the photos of ``valid-`` with an unasked error already rise from
    15.3 % to 20.6 %); at 0.95 nearly half of a photo's tiles are asked about already (8.1 per
    photo on ``valid-``, 8.7 on the held-out photos), and the rest are read at 0.95-1.00, so above
    it the player would confirm nearly the whole hand and the camera would save nothing.
    The figures per threshold (silent-error photos against tiles asked per photo): vision/README.md,
    "The flag threshold against silent photos" (``benchmarks/vision_eval.py --thresholds``).

    Raises:
        SettingsError: not a number, or outside the range (the message names both ends).
    """
    low, high = CONFIRM_BELOW_RANGE
    try:  # as a number is written (0.75, .75, 1): not Python's other spellings (+0.7, 0.7_5, 7e-1, ٠.٧)
        x = float(value) if not isinstance(value, str) or re.fullmatch(r"[0-9]*\.?[0-9]+", value.strip()) \
            else float("nan")
    except (TypeError, ValueError):
        x = float("nan")
    if isinstance(value, bool) or not low <= x <= high:  # NaN fails both comparisons
        raise SettingsError(f"confirm-below {value!r} is not allowed: give a confidence from {low} to {high} (tiles "
                            f"read below it are listed for the player to confirm; default {CONFIRM_BELOW})",
                            f"确认门槛 {value} 不可用：请在 {low} 到 {high} 之间选（把握低于它的牌请玩家确认；"
                            f"默认 {CONFIRM_BELOW}）")
    return x


def check_camera(data: object) -> dict:
    """``data`` if it is a table camera calibration as ``mjtable camera calibrate`` stores it:
    ``{"homography": 3x3 numbers, "side": px, "picture": [w, h] px, "corners": 4x2 px, "tile": [w, h]
    px, "bottom_seat": E|S|W|N}`` (``vision.table_camera.TableCalibration.to_dict``). Plain Python,
    so that the service loads the settings without the camera pipeline.

    Raises:
        SettingsError: naming the first key that is missing or wrong.
    """
    def numbers(v: object, n: int) -> bool:
        return isinstance(v, list) and len(v) == n and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and x == x and abs(x) != float("inf") for x in v)
    if not isinstance(data, dict):
        raise SettingsError("camera must be an object (from mjtable camera calibrate)")
    checks = {"homography": lambda v: isinstance(v, list) and len(v) == 3 and all(numbers(r, 3) for r in v),
              "side": lambda v: isinstance(v, int) and not isinstance(v, bool) and 16 <= v <= 20000,
              "picture": lambda v: numbers(v, 2) and all(isinstance(x, int) and x >= 16 for x in v),
              "corners": lambda v: isinstance(v, list) and len(v) == 4 and all(numbers(c, 2) for c in v),
              "tile": lambda v: numbers(v, 2) and all(x >= 0 for x in v),
              "bottom_seat": lambda v: v in ("E", "S", "W", "N")}
    for key, ok in checks.items():
        if key not in data or not ok(data[key]):
            raise SettingsError(f"camera.{key} is missing or not valid: run mjtable camera calibrate again")
    unknown = [k for k in data if k not in checks]
    if unknown:
        raise SettingsError(f"camera: unknown key {unknown[0]!r} (keys: {', '.join(checks)})")
    return dict(data)


def state_dir() -> Path:
    env = os.environ.get("MJTABLE_STATE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_STATE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "state") / "mjtable"


def settings_path() -> Path:
    return state_dir() / "settings.json"


def allowed_tile_counts(profile: str) -> tuple[int, ...]:
    """The gears of the profile, e.g. ``(136, 144, 152, 108)``. Raises hardware.ProfileError."""
    from hardware import load_profile
    return tuple(load_profile(profile).gears)


def validate(key: str, value: str, current: StoredSettings) -> StoredSettings:
    """Return ``current`` with ``key`` set to ``value`` (a string from the command line).

    Raises:
        SettingsError: unknown key, or a value outside the allowed ones (listed in the message).
    """
    if key == "tile-count":
        allowed = allowed_tile_counts(current.profile)
        try:
            n = int(value)
        except ValueError:
            n = -1
        if n not in allowed:
            raise SettingsError(f"tile-count {value!r} is not supported: allowed are "
                                f"{', '.join(map(str, allowed))} (profile {current.profile})")
        if current.rules is not None:
            problem = rule_system(current.rules).gear_problem(n)
            if problem:
                raise SettingsError(f"tile-count {n} does not fit the table's rules: {problem} "
                                    "(change the rules first, or set rules none)")
        return dataclasses.replace(current, tile_count=n)
    if key == "profile":
        allowed_tile_counts(value)  # loads and validates the profile
        return dataclasses.replace(current, profile=value)
    if key == "dice-method":
        try:
            return dataclasses.replace(current, dice_method=Method(value).value)
        except ValueError:
            raise SettingsError(f"dice-method {value!r} unknown: allowed are "
                                f"{', '.join(m.value for m in Method)}") from None
    if key == "rules":
        if value.strip().lower() in NO_RULES:
            return dataclasses.replace(current, rules=None, dice_method=_own_dice_method(current))
        system = rule_system(value.strip())
        allowed = allowed_tile_counts(current.profile)
        if system.gear not in allowed:
            raise SettingsError(f"rules {system.name} need the {system.gear}-tile gear ({system.tile_set.description}), "
                                f"which profile {current.profile} does not have (its gears: "
                                f"{', '.join(map(str, allowed))})",
                                f"{system.name_zh} 要用 {system.gear} 张的档位，本机没有（可选 "
                                f"{'、'.join(map(str, allowed))} 张）")
        return dataclasses.replace(current, rules=system.name, tile_count=system.gear,
                                   dice_method=system.dice_method or _own_dice_method(current))
    if key == "confirm-below":
        return dataclasses.replace(current, confirm_below=check_confirm_below(value.strip()))
    if key == "dealer":
        side = {"E": "E", "S": "S", "W": "W", "N": "N", "EAST": "E", "SOUTH": "S", "WEST": "W", "NORTH": "N",
                "东": "E", "南": "S", "西": "W", "北": "N"}.get(value.strip().upper())
        if side is None:
            raise SettingsError(f"dealer {value!r} is not a side: allowed are E, S, W, N")
        return dataclasses.replace(current, dealer=side)
    raise SettingsError(f"unknown setting {key!r}: settings are {', '.join(KEYS)}")


def _own_dice_method(current: StoredSettings) -> str:
    """The table's own dice method when rules stop choosing it: the stored one, unless the rules
    being replaced had set it (then the default, two-throw)."""
    if current.rules is not None and rule_system(current.rules).dice_method == current.dice_method:
        return StoredSettings.dice_method
    return current.dice_method


def load(path: Path | None = None, lenient: bool = False) -> StoredSettings:
    """The stored settings, or the defaults when none were saved.

    Args:
        lenient: skip what is unreadable or invalid instead of raising (``config set`` uses it,
            so that a broken file can be repaired from the command line).

    Raises:
        SettingsError: the file exists but is not valid (names the file and the bad key).
    """
    p = path or settings_path()
    try:
        raw = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return StoredSettings()
    except (OSError, UnicodeDecodeError) as e:
        if lenient:
            return StoredSettings()
        why = e.strerror if isinstance(e, OSError) else "not UTF-8 text"
        raise SettingsError(f"cannot read settings file {p}: {why}; fix it with mjtable config set, or delete it") \
            from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        if lenient:
            return StoredSettings()
        raise SettingsError(f"settings file {p} is not valid JSON ({e.msg}, line {e.lineno}); fix it with "
                            "mjtable config set, or delete it") from None
    if not isinstance(data, dict):
        if lenient:
            return StoredSettings()
        raise SettingsError(f"settings file {p} must hold a JSON object; fix it with mjtable config set, or delete it")
    s = StoredSettings()
    fields = {field: key for key, field in FIELDS.items()}
    # the profile first (it decides the gears), the rules before the tile count and dice method they set
    for k in ("profile", "rules", "tile_count", "dice_method", "dealer", "confirm_below"):
        if k not in data:
            continue
        try:
            s = validate(fields[k], "none" if data[k] is None else str(data[k]), s)
        except Exception as e:  # noqa: BLE001 - SettingsError, or a ProfileError for a bad profile
            if not lenient:
                raise SettingsError(f"settings file {p}: {e}; fix it with mjtable config set {fields[k]} VALUE") \
                    from None
    if data.get("camera") is not None:
        try:
            s = dataclasses.replace(s, camera=check_camera(data["camera"]))
        except SettingsError as e:
            if not lenient:
                raise SettingsError(f"settings file {p}: {e}") from None
    unknown = [k for k in data if k not in fields and k != "camera"]
    if unknown and not lenient:
        raise SettingsError(f"settings file {p}: unknown key {unknown[0]!r}; fix it with mjtable config set, "
                            "or delete it")
    return s


def save(settings: StoredSettings, path: Path | None = None) -> Path:
    """Write the settings atomically; returns the file written."""
    p = path or settings_path()
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(".json.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(dataclasses.asdict(settings), fh, indent=2)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except OSError as e:
        raise SettingsError(f"cannot write settings file {p}: {e.strerror} (set MJTABLE_STATE_DIR to a writable "
                            "folder)") from None
    return p
