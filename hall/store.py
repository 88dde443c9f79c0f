"""The hall's database: every table's availability, status and events (SQLite, WAL, by default;
PostgreSQL through a ``postgresql://`` URL, with psycopg 3, the ``postgres`` extra).

Tables:

* ``tables(table_id, availability, availability_t, status, status_t)``: the latest retained
  topics of each table (``status`` JSON as the table sent it; ``*_t`` the hall's Unix time);
* ``events(table_id, event_id, log, seq, kind, t, received_t, data)``: each event once:
  ``(table_id, event_id)`` is the primary key, so a copy sent again after an outage is dropped;
* ``lift(table_id, log, seq, t, side, up_s, nominal_s, deadline_s)``: the lift travel times of
  the ``cycle`` events, for the maintenance list;
* ``seating(round, table_id, players)``, ``hall_meta('tournament', name)`` and
  ``hall_meta('round', n)``: the tournament (``hall.tournament``), one at a time, replaced as a
  whole, and the round being played now (the organiser's, ``set_round``).

The SQL is the same for both engines (``ON CONFLICT``, ``DOUBLE PRECISION`` times); ``_Db`` hides
what differs: placeholders, transactions, the schema script, SQLite's pragmas.

Safe to use from several threads (one connection behind a lock): the MQTT thread writes, the page
reads. Malformed payloads raise ``BadPayload`` (the subscriber counts and logs them).
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Iterator

from .errors import HallError
from .maintenance import WINDOW, ranked

SIDES = ("E", "S", "W", "N")
#: a database given as a URL: PostgreSQL (anything else with :// is refused)
PG_URL = re.compile(r"postgres(ql)?://", re.I)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (table_id TEXT PRIMARY KEY, availability TEXT, availability_t DOUBLE PRECISION,
                                   status TEXT, status_t DOUBLE PRECISION);
CREATE TABLE IF NOT EXISTS events (table_id TEXT NOT NULL, event_id TEXT NOT NULL, log TEXT NOT NULL,
                                   seq BIGINT NOT NULL, kind TEXT NOT NULL, t DOUBLE PRECISION NOT NULL,
                                   received_t DOUBLE PRECISION NOT NULL, data TEXT NOT NULL,
                                   PRIMARY KEY (table_id, event_id));
CREATE INDEX IF NOT EXISTS events_kind_t ON events(kind, t);
CREATE INDEX IF NOT EXISTS events_table_t ON events(table_id, t);
CREATE TABLE IF NOT EXISTS lift (table_id TEXT NOT NULL, log TEXT NOT NULL, seq BIGINT NOT NULL,
                                 t DOUBLE PRECISION NOT NULL, side TEXT NOT NULL, up_s DOUBLE PRECISION NOT NULL,
                                 nominal_s DOUBLE PRECISION, deadline_s DOUBLE PRECISION);
CREATE INDEX IF NOT EXISTS lift_table_side ON lift(table_id, side, t);
CREATE TABLE IF NOT EXISTS seating (round INTEGER NOT NULL, table_id TEXT NOT NULL, players TEXT NOT NULL,
                                    PRIMARY KEY (round, table_id));
CREATE TABLE IF NOT EXISTS hall_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


_SET_META = "INSERT INTO hall_meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"


def describe(database: str | Path) -> str:
    """``database`` as it may be shown: a URL without its password."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", str(database))


class _Db:
    """One connection to SQLite (a path) or PostgreSQL (a URL), with ``?`` placeholders for both.

    Raises (constructor): HallError naming the database (never its password) and what failed.
    """

    def __init__(self, database: str | Path) -> None:
        self.pg = isinstance(database, str) and bool(PG_URL.match(database))
        where = describe(database)
        if self.pg:
            try:
                import psycopg
            except ImportError:
                raise HallError(f"the hall's database {where} is PostgreSQL, which needs psycopg 3: "
                                "pip install 'mjtable[postgres]'") from None
            try:
                self.conn: Any = psycopg.connect(str(database), autocommit=True, connect_timeout=10)
                for stmt in filter(str.strip, _SCHEMA.split(";")):
                    self.conn.execute(stmt)
            except psycopg.Error as e:
                raise HallError(f"cannot open the hall's database {where}: {str(e).strip().splitlines()[0]}") from None
            return
        path = Path(database)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=10)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as e:
            raise HallError(f"cannot open the hall's database {where}: {e}") from None

    def execute(self, sql: str, args: Iterable[Any] = ()) -> Any:
        """Run one statement (``?`` placeholders); returns the cursor."""
        if self.pg:
            return self.conn.execute(sql.replace("?", "%s"), tuple(args))
        return self.conn.execute(sql, tuple(args))

    def executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        if self.pg:
            with self.conn.cursor() as cur:
                cur.executemany(sql.replace("?", "%s"), rows)
        else:
            self.conn.executemany(sql, rows)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing (SQLite: ``BEGIN IMMEDIATE``, the write lock at once)."""
        if self.pg:
            with self.conn.transaction():
                yield
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self.conn.close()


class BadPayload(ValueError):
    """A message that is not what ``docs/mqtt.md`` describes (names what is wrong)."""


class Store:
    """The hall's database: a SQLite file at ``database`` (a path; created with its folder), or a
    PostgreSQL database at a ``postgresql://user:password@host:port/dbname`` URL (the tables are
    created in it; the database itself must exist). The same interface either way.

    Raises:
        HallError: the file cannot be opened or is not a database; the server cannot be reached or
            refuses the login; psycopg is not installed for a URL.
    """

    def __init__(self, database: str | Path) -> None:
        self.database = database
        self._db = _Db(database)
        self._lock = threading.Lock()
        self.duplicates = 0

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- writing (the MQTT thread) --
    def set_availability(self, table: str, value: str, now: float | None = None) -> None:
        """``online`` or ``offline`` for ``table``. Raises BadPayload for anything else."""
        if value not in ("online", "offline"):
            raise BadPayload(f"availability of {table} must be online or offline, got {value[:40]!r}")
        with self._lock:
            self._db.execute("INSERT INTO tables(table_id, availability, availability_t) VALUES (?, ?, ?) "
                             "ON CONFLICT(table_id) DO UPDATE SET availability = excluded.availability, "
                             "availability_t = excluded.availability_t", (table, value, now or time.time()))

    def set_status(self, table: str, status: dict[str, Any], now: float | None = None) -> None:
        """The latest status of ``table`` (the JSON object of its ``status`` topic)."""
        if not isinstance(status, dict) or "state" not in status:
            raise BadPayload(f"status of {table} must be a JSON object with a state")
        with self._lock:
            self._db.execute("INSERT INTO tables(table_id, status, status_t) VALUES (?, ?, ?) "
                             "ON CONFLICT(table_id) DO UPDATE SET status = excluded.status, status_t = excluded.status_t",
                             (table, json.dumps(status, ensure_ascii=False), now or time.time()))

    def add_event(self, table: str, ev: dict[str, Any], now: float | None = None) -> bool:
        """Keep one event (the JSON of an ``event/<kind>`` topic). Returns False for a duplicate
        (an event id already kept for this table), True for a new one.

        Raises:
            BadPayload: not an object with ``id``, ``log``, ``seq``, ``kind``, ``t``, ``data``, or
                its ``table`` is not the topic's.
        """
        try:
            eid, log, seq, kind, t, data = ev["id"], ev["log"], int(ev["seq"]), ev["kind"], float(ev["t"]), ev["data"]
        except (KeyError, TypeError, ValueError):
            raise BadPayload(f"an event of {table} needs id, log, seq, kind, t and data") from None
        if ev.get("table", table) != table or not isinstance(data, dict) or not isinstance(eid, str):
            raise BadPayload(f"event {str(eid)[:80]!r} on the topic of {table} names table {ev.get('table')!r}")
        received = now or time.time()
        with self._lock, self._db.transaction():
            cur = self._db.execute("INSERT INTO events(table_id, event_id, log, seq, kind, t, received_t, data) "
                                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                                   (table, eid, log, seq, kind, t, received, json.dumps(data, ensure_ascii=False)))
            new = cur.rowcount == 1
            if new and kind == "cycle":
                lift = data.get("lift_up_s") or {}
                for side in SIDES:
                    v = lift.get(side)
                    if isinstance(v, (int, float)) and v > 0:
                        self._db.execute("INSERT INTO lift VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                         (table, log, seq, t, side, float(v), data.get("lift_nominal_s"),
                                          data.get("lift_deadline_s")))
        if not new:
            self.duplicates += 1
        return new

    # -- reading (the page) --
    def fleet(self, now: float | None = None) -> list[dict[str, Any]]:
        """Every table known, by id: ``{"table", "online", "availability_t", "state", "state_zh",
        "fault_code", "fault", "cycles", "tile_count", "rules", "status_t", "events", "last_event_t",
        "pending_events"}`` (None where the table has not said)."""
        with self._lock:
            rows = self._db.execute("SELECT table_id, availability, availability_t, status, status_t FROM tables "
                                    "ORDER BY table_id").fetchall()
            counts = dict((r[0], (r[1], r[2])) for r in self._db.execute(
                "SELECT table_id, COUNT(*), MAX(t) FROM events GROUP BY table_id"))
        out = []
        for tid, avail, avail_t, status, status_t in rows:
            st = json.loads(status) if status else {}
            n, last = counts.get(tid, (0, None))
            out.append({"table": tid, "online": avail == "online", "availability": avail,
                        "availability_t": avail_t, "state": st.get("state"), "state_zh": st.get("state_zh"),
                        "fault_code": st.get("fault_code"), "fault": st.get("fault"), "cycles": st.get("cycles"),
                        "tile_count": st.get("tile_count"), "rules": st.get("rules"), "status_t": status_t,
                        "events": n, "last_event_t": last, "pending_events": st.get("pending_events")})
        return out

    def faults(self, days: float, now: float | None = None, limit: int = 500) -> list[dict[str, Any]]:
        """The faults of the last ``days`` days, newest first: ``{"table", "t", "code", "name",
        "side", "meaning", "meaning_zh", "observed", "observed_zh", "event_id"}``."""
        since = (now or time.time()) - days * 86400
        with self._lock:
            rows = self._db.execute("SELECT table_id, t, data, event_id FROM events WHERE kind = 'fault' AND t >= ? "
                                    "ORDER BY t DESC LIMIT ?", (since, int(limit))).fetchall()
        out = []
        for tid, t, data, eid in rows:
            d = json.loads(data)
            out.append({"table": tid, "t": t, "event_id": eid,
                        **{k: d.get(k) for k in ("code", "name", "side", "meaning", "meaning_zh", "observed",
                                                 "observed_zh")}})
        return out

    def maintenance(self) -> list[dict[str, Any]]:
        """The maintenance list (``hall.maintenance.ranked``) over each table's last ``WINDOW``
        cycles per side."""
        with self._lock:
            keys = self._db.execute("SELECT DISTINCT table_id, side FROM lift ORDER BY 1, 2").fetchall()
            lifts = []
            for tid, side in keys:
                rows = self._db.execute("SELECT up_s, nominal_s, deadline_s FROM lift WHERE table_id = ? AND side = ? "
                                        "ORDER BY t DESC, seq DESC LIMIT ?", (tid, side, WINDOW)).fetchall()
                rows.reverse()
                lifts.append((tid, side, [r[0] for r in rows], rows[-1][1], rows[-1][2]))
        return ranked(lifts)

    def events(self, table: str | None = None, kind: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """Kept events, newest first: ``{"table", "id", "log", "seq", "kind", "t", "received_t", "data"}``."""
        q = "SELECT table_id, event_id, log, seq, kind, t, received_t, data FROM events WHERE 1 = 1"
        args: list[Any] = []
        if table is not None:
            q += " AND table_id = ?"
            args.append(table)
        if kind is not None:
            q += " AND kind = ?"
            args.append(kind)
        q += " ORDER BY t DESC, seq DESC LIMIT ?"
        args.append(int(limit))
        with self._lock:
            rows = self._db.execute(q, args).fetchall()
        return [{"table": r[0], "id": r[1], "log": r[2], "seq": r[3], "kind": r[4], "t": r[5], "received_t": r[6],
                 "data": json.loads(r[7])} for r in rows]

    # -- the tournament --
    def set_tournament(self, name: str, seating: list[Any]) -> None:
        """Replace the tournament: its name and seating (``hall.tournament.Seat``s, checked)."""
        with self._lock, self._db.transaction():
            self._db.execute("DELETE FROM seating")
            self._db.executemany("INSERT INTO seating VALUES (?, ?, ?)",
                                 [(s.round, s.table, json.dumps(list(s.players), ensure_ascii=False)) for s in seating])
            self._db.execute(_SET_META, ("tournament", name))
            self._db.execute(_SET_META, ("round", str(min(s.round for s in seating))))

    def tournament(self) -> tuple[str | None, list[tuple[int, str, list[str]]]]:
        """``(name, [(round, table, players)])``; ``(None, [])`` before any."""
        with self._lock:
            name = self._db.execute("SELECT value FROM hall_meta WHERE key = 'tournament'").fetchone()
            rows = self._db.execute("SELECT round, table_id, players FROM seating ORDER BY 1, 2").fetchall()
        return (name[0] if name else None), [(r, t, json.loads(p)) for r, t, p in rows]

    def current_round(self) -> int | None:
        """The round being played now (the first round at registration); None before any tournament."""
        with self._lock:
            row = self._db.execute("SELECT value FROM hall_meta WHERE key = 'round'").fetchone()
        return int(row[0]) if row else None

    def set_round(self, n: int) -> None:
        """Make round ``n`` the one being played now.

        Raises:
            HallError: no tournament, or ``n`` is not one of its rounds (names those there are).
        """
        with self._lock:
            rounds = [r[0] for r in self._db.execute("SELECT DISTINCT round FROM seating ORDER BY 1")]
            if not rounds:
                raise HallError("no tournament is registered: register its seating first")
            if n not in rounds:
                raise HallError(f"round {n} is not in the tournament: its rounds are {', '.join(map(str, rounds))}")
            self._db.execute(_SET_META, ("round", str(n)))

    def table_ids(self) -> list[str]:
        """Every table the hall has heard of, by id."""
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT table_id FROM tables ORDER BY 1")]

    def match_events(self, tables: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """The ``match``, ``score`` and ``draw`` events of ``tables``: ``{table: [{"log", "seq",
        "kind", "t", "data"}]}`` (each kept once)."""
        out: dict[str, list[dict[str, Any]]] = {}
        with self._lock:
            for tid in tables:
                rows = self._db.execute("SELECT log, seq, kind, t, data FROM events WHERE table_id = ? AND kind IN "
                                        "('match', 'score', 'draw') ORDER BY log, seq", (tid,)).fetchall()
                out[tid] = [{"log": r[0], "seq": r[1], "kind": r[2], "t": r[3], "data": json.loads(r[4])} for r in rows]
        return out

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM events").fetchone()[0])
