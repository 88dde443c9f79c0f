"""Argument types shared by the ``mjtable`` sub-commands (one definition for every command)."""

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
