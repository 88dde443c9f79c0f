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

The course of a session (局) at one table, 第五条 terms 3-9 (``deal``):

* term 3 a round (圈) is four hands, each player the dealer once; term 4 a session is four rounds;
* term 5 the prevalent wind (圈风) is East in the first round, then South, West, North;
* terms 6 and 8 the dealer (庄家) has the seat wind East, the next player counter-clockwise (下家)
  South, across (对家) West, the one before (上家) North; the dealer moves on after every hand,
  won or drawn (无论是否和牌，庄家不连庄), so in each round the dealer is at the table's E, S, W
  and N sides in turn (play runs counter-clockwise, 第七条 2-3);
* term 7 the players start at the sides drawn by lot (定位); term 9 they change seats (轮转)
  as the competition's regulations (竞赛规程) say. The text gives no scheme, so ``SEAT_CHANGES``
  follows the competition practice of the MCR tournaments (the World/European Mahjong
  Organisation's MCR rules): before the South round the players at E and S swap and those at W
  and N swap; before the West and North rounds they move so that each player has sat once at
  every side (``"mcr"``). ``"none"``: nobody moves (a home game).
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Mapping, Sequence

from .errors import ScoringError
from .score import Payments

SEATS = ("E", "S", "W", "N")
#: 第五条 term 5: the prevalent wind of rounds 1-4.
ROUND_WINDS = SEATS
#: hands in a session: four rounds of four hands (第五条 terms 3-4).
HANDS_PER_SESSION = 16
#: Who sits where in each round: ``SEAT_CHANGES[practice][round][side index]`` is the index of the
#: player (by their starting side, E S W N = 0 1 2 3) at that side. "mcr": East round A B C D, South
#: round B A D C, West round D C A B, North round C D B A, so every player sits once at every side.
SEAT_CHANGES: dict[str, tuple[tuple[int, int, int, int], ...]] = {
    "mcr": ((0, 1, 2, 3), (1, 0, 3, 2), (3, 2, 0, 1), (2, 3, 1, 0)),
    "none": ((0, 1, 2, 3),) * 4,
}
#: 基础比赛分: a player's points at the start of a session.
BASE_SESSION_POINTS = 500


@dataclasses.dataclass(frozen=True, slots=True)
class HandRecord:
    """The outcome of one hand (盘) at a table of four.

    Attributes:
        winner: the winner's seat (E/S/W/N), or None for a drawn hand (荒牌).
        discarder: who discarded the winning tile, or None when the win was self-drawn.
        total: the winner's points (fans and flowers); under another rule system its total in
            that system's unit (台, han, doubles ...).
        penalties: points deducted from players for infringements (罚分), seat -> points >= 0.
        payments: the hand's payments per seat when the hand was scored by another rule system
            (``scoring.systems``: ``SystemResult.payments``, positive = receives, summing to 0);
            ``None`` for MCR, whose payments follow from ``total`` (第十条).
    """

    winner: str | None
    discarder: str | None = None
    total: int = 0
    penalties: Mapping[str, int] = dataclasses.field(default_factory=dict)
    payments: Mapping[str, int] | None = None

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
        if self.payments is not None:
            if self.winner is None or set(self.payments) != set(SEATS) or sum(self.payments.values()) != 0 \
                    or any(not isinstance(v, int) or isinstance(v, bool) for v in self.payments.values()):
                raise ScoringError("bad-value", f"payments {dict(self.payments)!r}: give whole numbers for each of "
                                   "E, S, W, N that sum to 0, for a won hand")
        elif not isinstance(self.total, int) or self.total < 0 or (self.winner is not None and self.total < 8):
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
    if record.payments is not None:
        points = dict(record.payments)
    elif record.winner is not None:
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


@dataclasses.dataclass(frozen=True, slots=True)
class Deal:
    """Where a hand stands in its session (第五条 terms 3-9).

    Attributes:
        number: the hand's number in the session, 1-16.
        round: the round, 1-4 (圈).
        hand: the hand in the round, 1-4.
        prevalent_wind: the round's wind E/S/W/N (圈风).
        dealer: the table side (E/S/W/N) of the dealer (庄家).
        seat_winds: table side -> that player's seat wind (门风) for this hand.
        players: table side -> index of the player sitting there (by starting side, 0-3).
    """

    number: int
    round: int
    hand: int
    prevalent_wind: str
    dealer: str
    seat_winds: Mapping[str, str]
    players: Mapping[str, int]

    def side_of(self, player: int) -> str:
        """The table side where ``player`` (0-3) sits in this hand."""
        return next(s for s, p in self.players.items() if p == player)

    def to_dict(self) -> dict:
        """JSON-ready: the attributes, ``seat_winds`` and ``players`` as plain dicts."""
        return {"number": self.number, "round": self.round, "hand": self.hand,
                "prevalent_wind": self.prevalent_wind, "dealer": self.dealer,
                "seat_winds": dict(self.seat_winds), "players": dict(self.players)}


def deal(number: int, practice: str = "mcr") -> Deal:
    """The round, prevalent wind, dealer, seat winds and seating of hand ``number`` (1-16).

    Hand n of a round (1-4) has its dealer at side ``SEATS[n - 1]``; the side k places
    counter-clockwise after the dealer has the seat wind ``SEATS[k]`` (第五条 terms 6, 8).

    Raises:
        ScoringError: ``bad-value`` for a number outside 1-16 or an unknown practice.
    """
    if practice not in SEAT_CHANGES:
        raise ScoringError("bad-value", f"seat-change practice {practice!r} unknown: one of {', '.join(SEAT_CHANGES)}")
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= HANDS_PER_SESSION:
        raise ScoringError("bad-value", f"hand number {number!r}: a session has hands 1-{HANDS_PER_SESSION} "
                                        "(four rounds of four, 第五条)")
    r, h = divmod(number - 1, 4)
    seating = SEAT_CHANGES[practice][r]
    return Deal(number, r + 1, h + 1, ROUND_WINDS[r], SEATS[h],
                {side: SEATS[(i - h) % 4] for i, side in enumerate(SEATS)},
                {side: seating[i] for i, side in enumerate(SEATS)})


def player_points(deals_and_records: Iterable[tuple[Deal, HandRecord]], base: int = BASE_SESSION_POINTS
                  ) -> list[tuple[dict[int, int], dict[int, int]]]:
    """Per hand, each player's hand points (盘分) and running session points (局分).

    ``HandRecord`` names table sides; the ``Deal`` says which player sat at each.

    Returns:
        One ``(points, running)`` per hand, each ``{player index 0-3: points}``.
    """
    running = {p: base for p in range(4)}
    out = []
    for d, rec in deals_and_records:
        pts = {d.players[side]: v for side, v in hand_points(rec).items()}
        for p, v in pts.items():
            running[p] += v
        out.append((pts, dict(running)))
    return out
