"""Match points (比赛分) over a session, standard points (标准分) and the ranking (名次评定).

Source: 中国麻将竞赛规则 (../shared/seeds/000_ba052a8ec20fd579.txt):

* 第十条 1 (三) hand points (盘分): self-drawn, each of the three others pays 8 + total; on a
  discard the discarder pays 8 + total and the two others 8 each. A drawn hand (荒牌) moves no
  points. Penalties (罚分) are deducted at the end of the hand.
* 第十条 2 (一) session points (局分): the base points (基础比赛分, 500 as the terms give it) plus
  the hand points of the session.
* 第十条 2 (二) standard points: players are ranked by session points; the first gets as many
  standard points as there are players in the group, every other player the number of players
  minus their rank (four players: 4, 2, 1, 0). The text does not say what tied players get:
  here they share the standard points of the ranks they tie on (two tied for first among four
  get (4 + 2) / 2 = 3 each), which keeps the sum of standard points fixed.
* 第十一条 ranking: by the sum of standard points; ties broken by 1. the higher sum of match
  points, 2. the higher best single-session standard points, 3. more sessions with that best
  score (and so on down the sorted list of session standard points).
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Mapping, Sequence

from .errors import ScoringError
from .score import Payments

SEATS = ("E", "S", "W", "N")
#: 基础比赛分: a player's points at the start of a session.
BASE_SESSION_POINTS = 500


@dataclasses.dataclass(frozen=True, slots=True)
class HandRecord:
    """The outcome of one hand (盘) at a table of four.

    Attributes:
        winner: the winner's seat (E/S/W/N), or None for a drawn hand (荒牌).
        discarder: who discarded the winning tile, or None when the win was self-drawn.
        total: the winner's points (fans and flowers).
        penalties: points deducted from players for infringements (罚分), seat -> points >= 0.
    """

    winner: str | None
    discarder: str | None = None
    total: int = 0
    penalties: Mapping[str, int] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.winner is not None and self.winner not in SEATS:
            raise ScoringError("bad-value", f"winner {self.winner!r} is not a seat: use E, S, W, N or none for a draw")
        if self.discarder is not None:
            if self.discarder not in SEATS:
                raise ScoringError("bad-value", f"discarder {self.discarder!r} is not a seat: use E, S, W or N")
            if self.discarder == self.winner:
                raise ScoringError("bad-value", "the winner cannot have discarded their own winning tile")
            if self.winner is None:
                raise ScoringError("bad-value", "a drawn hand has no discarder")
        if not isinstance(self.total, int) or self.total < 0 or (self.winner is not None and self.total < 8):
            raise ScoringError("bad-value", f"a win scores at least 8 points, got {self.total!r}")
        for seat, p in self.penalties.items():
            if seat not in SEATS or not isinstance(p, int) or p < 0:
                raise ScoringError("bad-value", f"penalty {seat!r}: {p!r}: give a seat E/S/W/N and points >= 0")


def hand_points(record: HandRecord) -> dict[str, int]:
    """Points won (+) or lost (-) by each seat in one hand (盘分), penalties deducted.

    Returns:
        ``{"E": int, "S": int, "W": int, "N": int}``; without penalties they sum to 0.
    """
    points = {s: 0 for s in SEATS}
    if record.winner is not None:
        pay = Payments.for_total(record.total, record.discarder is None)
        for seat in SEATS:
            if seat == record.winner:
                points[seat] += pay.winner_receives
            elif seat == record.discarder:
                points[seat] -= pay.from_discarder or 0
            else:
                points[seat] -= pay.from_each_other
    for seat, p in record.penalties.items():
        points[seat] -= p
    return points


def session_points(records: Iterable[HandRecord], base: int = BASE_SESSION_POINTS) -> list[dict[str, int]]:
    """Running session points (局分) after each hand: base points plus hand points so far.

    Returns:
        One ``{seat: points}`` per hand, in order (empty list for no hand).
    """
    running = {s: base for s in SEATS}
    out = []
    for r in records:
        for seat, p in hand_points(r).items():
            running[seat] += p
        out.append(dict(running))
    return out


def standard_points(points: Mapping[str, int]) -> dict[str, float]:
    """Standard points of one session from the players' session points (第十条 2 (二)).

    With n players the first gets n, the player ranked k (k >= 2) gets n - k; tied players share
    the standard points of the ranks they occupy.

    Args:
        points: player -> session points.
    Returns:
        player -> standard points (a float when a tie splits them).
    """
    n = len(points)
    by_rank = [n] + [n - k for k in range(2, n + 1)]
    ordered = sorted(points, key=lambda p: -points[p])
    out: dict[str, float] = {}
    i = 0
    while i < n:
        j = i
        while j + 1 < n and points[ordered[j + 1]] == points[ordered[i]]:
            j += 1
        share = sum(by_rank[i:j + 1]) / (j - i + 1)
        for k in range(i, j + 1):
            out[ordered[k]] = int(share) if share == int(share) else share
        i = j + 1
    return out


@dataclasses.dataclass(frozen=True, slots=True)
class Standing:
    """A player's line in the ranking (第十一条)."""

    player: str
    rank: int
    standard_points: float
    match_points: int
    sessions: tuple[float, ...]


def ranking(sessions: Sequence[Mapping[str, tuple[float, int]]]) -> list[Standing]:
    """Rank players over several sessions (第十一条 名次评定).

    Args:
        sessions: one mapping per session, player -> (standard points, match points of the session).

    Returns:
        Standings, best first; players equal on every criterion share a rank.
    """
    players = sorted({p for s in sessions for p in s})
    totals = {}
    for p in players:
        std = tuple(sorted((s[p][0] for s in sessions if p in s), reverse=True))
        match = sum(s[p][1] for s in sessions if p in s)
        totals[p] = (sum(std), match, std)

    def key(p: str) -> tuple:
        std_sum, match, std = totals[p]
        # 1. standard points, 2. match points, 3. best single session, then how many such sessions
        return (-std_sum, -match, tuple(-x for x in std))

    ordered = sorted(players, key=key)
    out: list[Standing] = []
    for i, p in enumerate(ordered):
        rank = out[-1].rank if out and key(ordered[i - 1]) == key(p) else i + 1
        std_sum, match, std = totals[p]
        out.append(Standing(p, rank, std_sum, match, std))
    return out
