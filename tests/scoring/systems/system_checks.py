"""Checks every rule system's results must pass (the property tests call them on every scored hand)."""

from __future__ import annotations

import re

from scoring import systems
from scoring.systems import SystemResult, total_of
from scoring.systems.base import Note


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
    # every note has its Chinese (the page's Chinese side shows notes_zh)
    assert len(r.to_dict()["notes_zh"]) == len(r.notes)
    for note in r.notes:
        assert isinstance(note, Note) and re.search("[\u4e00-\u9fff]", note.zh), note


def assert_refused(system: str, hand: str, opts: dict, code: str, words: str) -> None:
    """Scoring fails with one clear line: the given code, the words in the message."""
    import pytest
    from scoring import ScoringError
    with pytest.raises(ScoringError) as e:
        systems.score(system, hand, opts)
    assert e.value.code == code and words in e.value.message and "\n" not in e.value.message


def situation(tsumo: bool, seat: str) -> dict:
    """Self-drawn, or won on the discard of the seat before the winner's."""
    return {"self_drawn": tsumo, "seat_wind": seat, "discarder": None if tsumo else "ESWN"["ESWN".index(seat) - 1]}


TILES = [f"{r}{s}" for s in "mps" for r in range(1, 10)] + list("ESWNCFP")


def winning_hands(sets: int, pool=TILES, melds: bool = True, kongs: bool = False, flowers: bool = False):
    """A hypothesis strategy: ``sets`` chows/pungs (kongs if asked, always bracketed) and a pair from ``pool``,
    some sets claimed (bracketed) if ``melds``, the rest shuffled, a random set of flowers in front if asked.
    Hands may hold a fifth copy of a tile: the scorer must refuse them (``fifth-tile``)."""
    from hypothesis import strategies as st

    @st.composite
    def build(draw):
        parts = []
        for _ in range(sets):
            t = draw(st.sampled_from(pool))
            if len(t) == 2 and int(t[0]) <= 7 and draw(st.booleans()):
                tiles = [f"{int(t[0]) + i}{t[1]}" for i in range(3)]
            else:
                tiles = [t] * (4 if kongs and draw(st.integers(0, 5)) == 0 else 3)
            parts.append((len(tiles) == 4 or (melds and draw(st.booleans())), tiles))
        bracketed = "".join(f"[{''.join(ts)},1]" for claimed, ts in parts if claimed)
        loose = [t for claimed, ts in parts if not claimed for t in ts] + [draw(st.sampled_from(pool))] * 2
        fl = "".join(sorted(draw(st.sets(st.sampled_from([f"{i}f" for i in range(1, 9)]))))) if flowers else ""
        return fl + bracketed + "".join(draw(st.permutations(loose)))
    return build()
