"""Persisted settings: the tile count (and the machine profile and dice method it goes with).

Stored as JSON in the state folder: ``$MJTABLE_STATE_DIR``, else ``$XDG_STATE_HOME/mjtable``,
else ``~/.local/state/mjtable``; file ``settings.json``. Written atomically (a temporary file
renamed over the old one), so a power cut leaves either the old or the new settings, never half.

A tile count is checked against the machine profile's gears (136 / 144 / 152 / 108 in the default
profile); a change made while a cycle runs applies from the next cycle (see
``controller.cycle.request_gear``).
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

from .dice import Method

KEYS = ("tile-count", "profile", "dice-method", "dealer")


class SettingsError(ValueError):
    """A setting that is unknown or out of range; the message names the key and what is allowed."""


@dataclasses.dataclass(frozen=True)
class StoredSettings:
    """The persisted settings.

    Attributes:
        tile_count: tiles in the set the machine builds (a gear of the profile).
        profile: machine profile name (hardware/profiles/NAME.toml) or a path to one.
        dice_method: ``two-throw`` (the rules' method) or ``one-throw``.
        dealer: the dealer's side E/S/W/N (for the wall break).
    """

    tile_count: int = 136
    profile: str = "default"
    dice_method: str = Method.TWO_THROW.value
    dealer: str = "E"


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
        return dataclasses.replace(current, tile_count=n)
    if key == "profile":
        allowed_tile_counts(value)  # loads and validates the profile
        return dataclasses.replace(current, profile=value)
    if key == "dice-method":
        try:
            return dataclasses.replace(current, dice_method=Method(value).value)
        except ValueError:
            raise SettingsError(f"dice-method {value!r} unknown: allowed are two-throw, one-throw") from None
    if key == "dealer":
        side = {"E": "E", "S": "S", "W": "W", "N": "N", "EAST": "E", "SOUTH": "S", "WEST": "W", "NORTH": "N",
                "东": "E", "南": "S", "西": "W", "北": "N"}.get(value.strip().upper())
        if side is None:
            raise SettingsError(f"dealer {value!r} is not a side: allowed are E, S, W, N")
        return dataclasses.replace(current, dealer=side)
    raise SettingsError(f"unknown setting {key!r}: settings are {', '.join(KEYS)}")


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
    fields = {"tile_count": "tile-count", "profile": "profile", "dice_method": "dice-method", "dealer": "dealer"}
    for k in ("profile", "tile_count", "dice_method", "dealer"):  # the profile first: it decides the gears
        if k not in data:
            continue
        try:
            s = validate(fields[k], str(data[k]), s)
        except Exception as e:  # noqa: BLE001 - SettingsError, or a ProfileError for a bad profile
            if not lenient:
                raise SettingsError(f"settings file {p}: {e}; fix it with mjtable config set {fields[k]} VALUE") \
                    from None
    unknown = [k for k in data if k not in fields]
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
