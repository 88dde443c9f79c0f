"""The registry of rule systems: MCR and the other systems of the seeds, one module each.

Use::

    >>> from scoring import systems
    >>> r = systems.score("riichi", "234m567p22s456s78s9s", {"self_drawn": True, "riichi": True})
    >>> r.total, r.unit.value, r.payments                      # doctest: +SKIP
    (3, 'han', {'E': -2600, 'S': 5200, 'W': -1300, 'N': -1300})

* ``SYSTEMS``: ``{name: RuleSystem}`` in registration order; ``get(name)``; ``score(name, hand,
  options)``; ``systems_with_option(option)``.
* The types (``RuleSystem``, ``Option``, ``TileSet``, ``Element``, ``SystemResult``, ``Unit``,
  ``RulesError``) live in ``scoring.systems.base``, the notation and decomposition in
  ``scoring.systems.notation``.

Adding a system is one module, its doc and its examples: write ``scoring/systems/<name>.py`` with a
``SYSTEMS`` tuple of ``RuleSystem`` values, add its name to ``_MODULES`` below, write
``docs/rules/<name>.md`` and ``tests/scoring/systems/test_<name>.py`` (see ``base``'s docstring).

This package is chosen over one ``systems.py`` so that each system sits in its own module beside
the framework, away from the MCR engine's files, and the registry stays a short list.
"""

from __future__ import annotations

import importlib
from typing import Any, Mapping

from .base import (SEATS, Element, Option, RulesError, RuleSystem, SystemResult, TileSet, Unit,
                   seat_payments, total_of)

#: The modules that define systems, in the order ``mjtable rules --list`` shows them.
_MODULES = ("mcr", "riichi", "taiwan", "classic", "changsha", "fuzhou", "northern")

SYSTEMS: dict[str, RuleSystem] = {}


def register(system: RuleSystem) -> RuleSystem:
    """Add a system to the registry (its name must be new). Returns it."""
    if system.name in SYSTEMS:
        raise AssertionError(f"rule system {system.name!r} registered twice")
    for o in system.options:  # one name, one meaning: a shared option has one kind in every system
        for other in SYSTEMS.values():
            same = other.option(o.name)
            if same is not None and same.kind != o.kind:
                raise AssertionError(f"option {o.name!r} is {o.kind} in {system.name}, {same.kind} in {other.name}")
    SYSTEMS[system.name] = system
    return system


for _name in _MODULES:
    for _system in importlib.import_module(f"{__name__}.{_name}").SYSTEMS:
        register(_system)


def get(name: str) -> RuleSystem:
    """The system called ``name``; ``RulesError("unknown-rules")`` listing the systems otherwise."""
    system = SYSTEMS.get(name) if isinstance(name, str) else None
    if system is None:
        raise RulesError("unknown-rules", f"rules {name!r} unknown: allowed are {', '.join(SYSTEMS)}")
    return system


def score(name: str, hand: str, options: Mapping[str, Any] | None = None) -> SystemResult:
    """Score ``hand`` by the system ``name`` with its situation ``options`` (see ``RuleSystem.score``)."""
    return get(name).score(hand, options)


def systems_with_option(option: str) -> list[str]:
    """Names of the systems that take ``option``."""
    return [s.name for s in SYSTEMS.values() if s.option(option) is not None]


def all_options() -> dict[str, Option]:
    """Every option name of every system (first definition), for the CLI's flags."""
    out: dict[str, Option] = {}
    for s in SYSTEMS.values():
        for o in s.options:
            out.setdefault(o.name, o)
    return out


__all__ = ["SEATS", "SYSTEMS", "Element", "Option", "RuleSystem", "RulesError", "SystemResult", "TileSet",
           "Unit", "all_options", "get", "register", "score", "seat_payments", "systems_with_option",
           "total_of"]
