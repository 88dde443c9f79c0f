"""Checks every rule system's results must pass (the property tests call them on every scored hand)."""

from __future__ import annotations

from scoring import systems
from scoring.systems import SystemResult, total_of


def check_result(r: SystemResult) -> None:
    """The total is the sum of its parts; no element is counted with one that excludes it; the seat
    payments sum to zero and only the winner receives."""
    system = systems.get(r.system)
    assert r.unit is system.unit
    assert r.total == total_of(r.elements, r.unit), (r.total, [e.to_dict() for e in r.elements])
    keys = {e.key for e in r.elements}
    for e in r.elements:
        assert e.count >= 1 and e.name_zh and e.name_en and e.source
        clash = system.excludes.get(e.key, frozenset()) & keys
        assert not clash, f"{e.key} is counted with {clash}, which it excludes"
    if r.payments is not None:
        assert set(r.payments) == set(systems.SEATS) and sum(r.payments.values()) == 0
        assert sum(v > 0 for v in r.payments.values()) == 1
    if not r.legal:
        assert r.payments is None
