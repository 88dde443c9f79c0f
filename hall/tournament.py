"""A tournament over the hall's tables: the seating of each round, each table's session as the
table recorded it, and the standings by 第十一条 (``../shared/seeds/000_ba052a8ec20fd579.txt``).

* The organiser registers the seating: per round, per table, the four players at the sides E, S,
  W, N drawn by lot (定位, 第五条 term 7), as a CSV ``round,table,E,S,W,N`` or as JSON.
* Each table keeps its score sheet (``service.match_api``: a new match with its four players, the
  hands won or drawn, edits, undos, deletes) and publishes those events (``match``, ``score``,
  ``draw``) to the broker; the hall keeps each once (event id). A round's session at a table is
  the table's match whose players are the round's four in that order: the first such match at that
  table for the first round that seats them there, the next for the next.
* A session's points are the table's own score sheet, replayed by the table's code
  (``service.match_api.replay`` and ``sheet``): an edited or undone hand changes them as it does at
  the table. Each player gets the session's match points (局分 - 500, 第十条 2 (一)) and standard
  points (第十条 2 (二): 4, 2, 1, 0; ties share).
* Standings (``scoring.match.ranking``, 第十一条): by the sum of standard points, then the sum of
  match points, then the best single-session standard points and how often; per round and overall.

The round being played now is the organiser's (``Store.set_round``; the first round at registration).
The hall tells each table its seating for that round (``seating_messages``): a retained message on
``mjtable/<table_id>/seating`` (``docs/mqtt.md``), which the table's page shows.

A session that has not reached its 16th hand counts with the hands played so far and is marked
``finished: false`` (a tournament cut short by time counts what was played).
"""

from __future__ import annotations

import csv
import dataclasses
import io
from typing import Any, Iterable

from scoring.match import BASE_SESSION_POINTS, ranking
from service.config import TABLE_ID
from service.match_api import replay, sheet

from .errors import HallError

SIDES = ("E", "S", "W", "N")
MATCH_KINDS = ("match", "score", "draw")


@dataclasses.dataclass(frozen=True)
class Seat:
    """One table in one round: ``players`` at E, S, W, N."""

    round: int
    table: str
    players: tuple[str, str, str, str]

    def to_dict(self) -> dict[str, Any]:
        return {"round": self.round, "table": self.table, "players": list(self.players)}


def from_rows(rows: Iterable[tuple[int, str, list[str]]]) -> list[Seat]:
    """The seating from ``Store.tournament()``'s rows ``(round, table, players)``."""
    return [Seat(r, t, tuple(p)) for r, t, p in rows]  # type: ignore[arg-type]


def check(seating: Iterable[Seat]) -> list[Seat]:
    """The seating sorted by round and table.

    Raises:
        HallError: a round below 1, a bad table id, a name empty or over 24 characters, a table twice
            in a round, a player twice in a round, or no seating at all.
    """
    out = sorted(seating, key=lambda s: (s.round, s.table))
    if not out:
        raise HallError("the tournament needs at least one table in one round")
    seen_tables: set[tuple[int, str]] = set()
    seen_players: dict[tuple[int, str], str] = {}
    for s in out:
        where = f"round {s.round}, table {s.table}"
        if not isinstance(s.round, int) or s.round < 1:
            raise HallError(f"{where}: the round must be a number from 1")
        if not TABLE_ID.fullmatch(s.table):
            raise HallError(f"{where}: a table id is 1-64 letters, digits, - and _ (its [mqtt] table_id)")
        if len(s.players) != 4 or any(not p.strip() or len(p) > 24 for p in s.players):
            raise HallError(f"{where}: four players at E, S, W, N, each 1-24 characters")
        if (s.round, s.table) in seen_tables:
            raise HallError(f"{where}: the table is seated twice in this round")
        seen_tables.add((s.round, s.table))
        for p in s.players:
            other = seen_players.get((s.round, p))
            if other is not None:
                raise HallError(f"{where}: {p} also sits at table {other} in this round")
            seen_players[(s.round, p)] = s.table
    return out


def parse_csv(text: str) -> list[Seat]:
    """The seating from CSV with the header ``round,table,E,S,W,N`` (a UTF-8 byte-order mark is
    allowed). Raises HallError naming the line."""
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    if not rows or [c.strip() for c in rows[0]] != ["round", "table", "E", "S", "W", "N"]:
        raise HallError("the seating CSV must start with the header round,table,E,S,W,N")
    out = []
    for n, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) != 6:
            raise HallError(f"seating CSV line {n}: 6 fields (round,table,E,S,W,N), got {len(row)}")
        try:
            rnd = int(row[0])
        except ValueError:
            raise HallError(f"seating CSV line {n}: the round must be a number, got {row[0]!r}") from None
        out.append(Seat(rnd, row[1].strip(), tuple(c.strip() for c in row[2:])))  # type: ignore[arg-type]
    return check(out)


def seating_messages(name: str | None, seating: list[Seat], current: int | None,
                     known: Iterable[str] = ()) -> dict[str, dict[str, Any] | None]:
    """What each table is told on ``mjtable/<table_id>/seating`` (retained), for the tournament
    ``name`` with ``seating`` and the round ``current`` being played now.

    Returns ``{table_id: payload}``: for every table of the tournament ``{"tournament", "round",
    "rounds", "table", "players"}`` (``players`` the four names at E, S, W, N, or None when the
    table sits out this round; ``rounds`` the tournament's round numbers); for the other tables of
    ``known`` None (their retained seating is cleared). No tournament (``name`` None): all None.
    """
    out: dict[str, dict[str, Any] | None] = {t: None for t in known}
    if name is None or current is None:
        return out
    rounds = sorted({s.round for s in seating})
    now = {s.table: list(s.players) for s in seating if s.round == current}
    for table in sorted({s.table for s in seating}):
        out[table] = {"tournament": name, "round": current, "rounds": rounds, "table": table,
                      "players": now.get(table)}
    return out


def sessions(seating: list[Seat], table_events: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each seat's session from its table's events (the hall's, ``{"log", "seq", "kind", "t", "data"}``,
    of the kinds ``MATCH_KINDS``, in any order).

    Returns one ``{"round", "table", "players", "match", "hands", "finished", "match_points",
    "standard_points"}`` per seat (points lists in E S W N order of the players); ``match`` None and
    no points while the table has not started that match.
    """
    out = []
    used: set[tuple[str, int]] = set()
    by_table: dict[str, list[tuple[str, int, list[str]]]] = {}
    ordered: dict[str, list[dict[str, Any]]] = {}
    for table, evs in table_events.items():
        first_t: dict[str, float] = {}
        for e in evs:  # a table's logs in the order they began; within one log, its own order (seq)
            first_t[e["log"]] = min(first_t.get(e["log"], e["t"]), e["t"])
        evs = sorted(evs, key=lambda e: (first_t[e["log"]], e["log"], e["seq"]))
        ordered[table] = evs
        by_table[table] = [(e["log"], e["seq"], list(e["data"].get("players", []))) for e in evs
                           if e["kind"] == "match" and e["data"].get("action") == "new"]
    for s in seating:
        found = next(((log, seq) for log, seq, players in by_table.get(s.table, [])
                      if players == list(s.players) and (log, seq) not in used), None)
        row: dict[str, Any] = {**s.to_dict(), "match": None, "hands": 0, "finished": False,
                               "match_points": None, "standard_points": None}
        if found is not None:
            used.add(found)
            log, seq = found
            evs = [{"id": e["seq"], "kind": e["kind"], "data": e["data"]} for e in ordered[s.table]
                   if e["log"] == log and e["seq"] >= seq]
            cut = next((i for i, e in enumerate(evs[1:], 1)
                        if e["kind"] == "match" and e["data"].get("action") == "new"), len(evs))
            sh = sheet(replay(evs[:cut]))
            row.update({"match": f"{log}:{seq}", "hands": len(sh["hands"]), "finished": sh["finished"],
                        "match_points": sh["match_points"], "standard_points": sh["standard_points"]})
        out.append(row)
    return out


def standings(rows: list[dict[str, Any]], upto_round: int | None = None, only_round: int | None = None
              ) -> list[dict[str, Any]]:
    """第十一条 standings over the sessions ``rows`` (from ``sessions``) that have started, of every
    round, up to ``upto_round`` or of ``only_round``: ``[{"rank", "player", "standard_points",
    "match_points", "sessions": [standard points, best first]}]``, best first; players equal on
    every criterion share a rank."""
    per_session = []
    for r in rows:
        if r["match"] is None:
            continue
        if (upto_round is not None and r["round"] > upto_round) or (only_round is not None and r["round"] != only_round):
            continue
        per_session.append({p: (r["standard_points"][i], r["match_points"][i]) for i, p in enumerate(r["players"])})
    return [{"rank": s.rank, "player": s.player, "standard_points": s.standard_points, "match_points": s.match_points,
             "sessions": list(s.sessions)} for s in ranking(per_session)]


def csv_bytes(rows: list[dict[str, Any]]) -> bytes:
    """The standings as CSV (UTF-8 with a byte-order mark): overall, then each round, then every
    session's points per player."""
    buf = io.StringIO()
    w = csv.writer(buf)
    rounds = sorted({r["round"] for r in rows})
    for title, st in [("overall", standings(rows))] + [(f"round {n}", standings(rows, only_round=n)) for n in rounds]:
        w.writerow([title])
        w.writerow(["rank", "player", "standard points", "match points", "sessions (standard points)"])
        for s in st:
            w.writerow([s["rank"], s["player"], _num(s["standard_points"]), s["match_points"],
                        " ".join(_num(x) for x in s["sessions"])])
        w.writerow([])
    w.writerow(["sessions"])
    w.writerow(["round", "table", "side", "player", "hands", "finished", "session points", "match points",
                "standard points"])
    for r in rows:
        for i, side in enumerate(SIDES):
            mp = r["match_points"][i] if r["match_points"] else ""
            w.writerow([r["round"], r["table"], side, r["players"][i], r["hands"], r["finished"],
                        "" if mp == "" else mp + BASE_SESSION_POINTS, mp,
                        _num(r["standard_points"][i]) if r["standard_points"] else ""])
    return ("\ufeff" + buf.getvalue()).encode("utf-8")


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)
