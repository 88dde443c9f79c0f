"""Argument types and the win-option flags shared by the ``mjtable`` sub-commands (one definition for
every command)."""

from __future__ import annotations

import argparse


def wind(value: str) -> str:
    """``E``/``east``/``东``/0-3 -> ``"E"``; argparse error naming the value otherwise."""
    from scoring import ScoringError, Wind
    try:
        return Wind.parse(value.strip()).value
    except ScoringError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a wind: use E, S, W or N") from None


def flowers(value: str) -> int:
    """A number of flower tiles, 0-8."""
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of flowers (0-8)") from None
    if not 0 <= n <= 8:
        raise argparse.ArgumentTypeError(f"{n} flowers: there are 8 flower tiles, give 0-8")
    return n


def confirm_below(value: str) -> float:
    """A flag threshold for ``--confirm-below``: a confidence in ``controller.settings.CONFIRM_BELOW_RANGE``
    (``check_confirm_below``, the check of ``mjtable config set confirm-below``); argparse error otherwise."""
    from controller.settings import SettingsError, check_confirm_below
    try:
        return check_confirm_below(value)
    except SettingsError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def win_options(p: argparse.ArgumentParser, *, single_win: bool = True, photo: bool = False) -> None:
    """Add the flags of the win options (``scoring.WinContext.OPTIONS``, read by
    ``WinContext.from_options``) to ``p``: ``--seat-wind`` for ``seat_wind`` and so on, with the
    defaults of ``OPTIONS``.

    ``single_win`` False (``waits``, which scores both a discard and a self-drawn win and sets 和绝张
    by itself): without ``--self-drawn`` and ``--fourth-tile``. ``photo`` (``score-photo``):
    ``--flowers`` defaults to the flowers in the photo.
    """
    from scoring import WinContext

    d = WinContext.OPTIONS
    if single_win:
        p.add_argument("--self-drawn", action="store_true", help="won on a self-drawn tile (自摸)")
    p.add_argument("--seat-wind", type=wind, default=d["seat_wind"], help="seat wind E/S/W/N (门风; default E)")
    p.add_argument("--prevalent-wind", type=wind, default=d["prevalent_wind"],
                   help="prevalent wind E/S/W/N (圈风; default E)")
    if photo:
        p.add_argument("--flowers", type=flowers, default=None, help="number of flowers 0-8 (default: those in the photo)")
    else:
        p.add_argument("--flowers", type=flowers, default=d["flowers"], help="number of flower tiles 0-8 (花牌)")
    p.add_argument("--last-tile", action="store_true", help="last tile of the wall (妙手回春 / 海底捞月)")
    p.add_argument("--kong-replacement", action="store_true", help="won on a kong replacement tile (杠上开花)"
                   + ("" if single_win else "; self-drawn wins only"))
    p.add_argument("--robbing-kong", action="store_true", help="robbing the kong (抢杠和)"
                   + ("" if single_win else "; wins on a discard only"))
    if single_win:
        p.add_argument("--fourth-tile", action="store_true", help="the last tile of its kind (和绝张)")


def given_win_options(args: argparse.Namespace) -> dict:
    """The win options of ``args`` by name (``WinContext.OPTIONS``'s keys that the parser has; a
    ``--flowers`` left to the photo is left out)."""
    from scoring import WinContext

    return {k: getattr(args, k) for k in WinContext.OPTIONS if getattr(args, k, None) is not None}
