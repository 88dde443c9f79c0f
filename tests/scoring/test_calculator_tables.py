"""The calculator's precomputed tables say all that the fans they stand for depend on.

``_Situation`` takes the fans of a hand's tiles and of its win from a template kept under a key
(``_RANK_CLASS``, ``_SUITS_CLASS``, reversible, green, the five win flags): two hands with the
same key must have the same fans, whatever their tiles. Checked on random sets of tile kinds
against the detectors run directly. A regular reading counted for comparison (the sets' fans from
``_PUNG_FANS`` and ``_CHOW_FANS``, the counted slots listed as they are set) must count what the
recording run, which runs the detectors, counts.
"""

from __future__ import annotations

import random

from scoring import calculator as C
from scoring.hand import WinContext
from scoring.tiles import TABLE_SIZE

_TILES = [t for t in range(TABLE_SIZE) if t % 10 and t != 30]


def _direct(table: list[int], ctx: WinContext, fourth_tile: bool) -> list[int]:
    masks = C.tile_masks(table)
    ft = [0] * C.N_SLOTS
    C._suits(masks, ft)
    C._tile_traits(masks, ft, True)
    C._rank_range(masks, ft)
    C._win_flags(ctx, fourth_tile, ft)
    return ft


def test_tile_and_win_fans_template_depends_on_its_key_only() -> None:
    rng = random.Random(19)
    C._TILE_AND_WIN_FANS.clear()
    seen_keys = set()
    for i in range(20_000):
        kinds = rng.sample(_TILES, rng.choice((1, 2, 3, 4, 5, 7, 9, 14)))
        if rng.random() < 0.3:  # few kinds of one or two suits: the rank-range fans
            kinds = [t for t in kinds if t // 10 == kinds[0] // 10] or kinds
        table = [0] * TABLE_SIZE
        for t in kinds:
            table[t] = 1
        self_drawn = rng.random() < 0.5
        ctx = WinContext.make(self_drawn=self_drawn, last_tile=rng.random() < 0.2,
                              kong_replacement=self_drawn and rng.random() < 0.2,
                              robbing_kong=not self_drawn and rng.random() < 0.2)
        fourth_tile = rng.random() < 0.2
        s = C._Situation((), bytes(table), kinds[0], ctx, C.MCR, fourth_tile, bytes(table), C.NO_MELDS)
        assert s.fans == _direct(table, ctx, fourth_tile), (kinds, ctx, fourth_tile)
        seen_keys.add(id(s.fans))
    assert len(seen_keys) < 2_000  # the templates are shared


def test_a_reading_counted_without_recording_has_the_fans_of_the_recording_run() -> None:
    """A regular reading counted for comparison takes its sets' fans from ``_PUNG_FANS`` and
    ``_CHOW_FANS`` and sums over the slots it lists as it sets them; the recording run (``record=True``, for the evidence)
    runs the detectors and scans all 83 slots. Both must count the same fans, on every reading of
    random hands (a slot left out of the list, or a stale table entry, fails here)."""
    from hand_generator import generate

    from scoring import score_hand
    from scoring.decompose import regular_divisions

    checked = 0
    for h in generate(1500, 19, self_check=False):
        for rules in ("mcr", "mcr-1998"):
            result = score_hand(h.to_notation(), rules=rules, **h.score_kwargs())
            reading = result[3][1]  # the chosen reading, before its fans are made records
            if reading.shape != "regular":
                continue
            s, unique_wait = reading._evidence[0], reading._evidence[5]
            for division in regular_divisions(bytes(s.standing), 4 - len(s.fixed)):
                fast = C._regular_reading(s, *division, unique_wait)
                recorded = C._regular_reading(s, *division, unique_wait, True)
                assert (fast.fans, fast.total) == (recorded.fans, recorded.total), (h.to_notation(), rules, division)
                checked += 1
    assert checked > 2000


def test_tile_masks_set_the_bit_of_each_kind_of_tile_present() -> None:
    # tile_masks (and _Situation inline) read the kinds as binary digits; here each bit is set one by one
    rng = random.Random(6)
    for _ in range(20_000):
        table = [rng.choice((0, 0, 0, 1, 2, 3, 4)) if t in _TILES else 0 for t in range(TABLE_SIZE)]
        want = [0, 0, 0, 0]
        for t in _TILES:
            if table[t]:
                want[t // 10] |= C.TILE_BIT[t]
        assert C.tile_masks(table) == tuple(want)
        assert C.tile_masks(bytes(table)) == tuple(want)
