"""The event log: cycles, faults, self-tests, scores, settings changes, lift travel times.

One SQLite file (stdlib ``sqlite3``) in WAL mode with ``synchronous=FULL``: a row is on disk when
``append`` returns, and a process killed mid-write or a power cut leaves the file consistent with
every committed row (SQLite's journal rolls back a transaction that did not finish). The
maintenance trends and the match's score sheet (``service.match_api``) are read from it.

A log damaged all the same (an SD card that lost a write the card had acknowledged) is found at
start by ``PRAGMA quick_check``: it is moved aside, with its ``-wal`` and ``-shm``, as
``events.sqlite.damaged-<UTC time>`` (kept for the technician, never deleted), a new log is
started, and ``EventLog.damaged`` says so (the page shows it); the service does not stop over it,
so systemd never restart-loops on a bad log (issue #23, section 3).

Rows: ``events(id, t, kind, data)``: ``t`` wall-clock seconds (Unix time), ``kind`` one of
``KINDS``, ``data`` a JSON object. A fault's trace (docs/trace.md: the last cycles before it) and a
self-test's trace (docs/trace.md section 8) are kept beside their entry in ``traces(event_id, data)``, gzip-compressed JSON lines. Lift travel times are also kept one row per side and cycle in
``lift_times(id, t, cycle, side, up_s)`` for the trends. Safe to use from several threads (one
connection behind a lock).

The outbox (issue #22): an event whose kind is in the log's ``outbox`` kinds gets a row in
``outbox(event_id)`` in the same transaction as the event itself, so an event is in the outbox
exactly when it is in the log. The MQTT publisher (``service.mqtt``) reads the outbox in id order
and ``acknowledge``s an event when the broker has acknowledged it; what is left is sent again after
a broker outage or a restart. ``meta(key, value)`` holds ``log_id``, a random id made when the file
is created: ``<log_id>:<event id>`` names an event across tables and across a log started anew
(after damage), where the row ids start again at 1.
"""

from __future__ import annotations

import datetime
import gzip
import json
import sqlite3
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from scoring.match import SEATS

from .errors import ServiceError

KINDS = ("start", "stop", "cycle", "fault", "warning", "fault-cleared", "selftest", "score", "draw", "session",
         "settings", "operator", "match")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY AUTOINCREMENT, t REAL NOT NULL, kind TEXT NOT NULL,
                                   data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_kind ON events(kind, id);
CREATE TABLE IF NOT EXISTS lift_times (id INTEGER PRIMARY KEY AUTOINCREMENT, t REAL NOT NULL, cycle INTEGER NOT NULL,
                                       side TEXT NOT NULL, up_s REAL NOT NULL);
CREATE TABLE IF NOT EXISTS outbox (event_id INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS traces (event_id INTEGER PRIMARY KEY, data BLOB NOT NULL);
"""


class _Damaged(Exception):
    """The log file is damaged (quick_check failed, or SQLite does not read it as a database)."""


class EventLog:
    """The SQLite event log at ``path`` (created with its folder if missing).

    Args:
        path: the SQLite file.
        outbox: the event kinds kept in the outbox until ``acknowledge`` (none by default: no
            publisher, no outbox rows).

    Attributes:
        log_id: this log file's random id (32 hex digits), kept in the file.
        damaged: None, or ``{"file": the damaged log's new path, "reason": what quick_check or
            SQLite said, "t": Unix time}`` when the log found at start was damaged and moved aside.

    Raises:
        ServiceError: the file cannot be opened (folder not writable, locked by another process).
    """

    def __init__(self, path: str | Path, outbox: tuple[str, ...] = ()) -> None:
        self.path = Path(path)
        unknown = [k for k in outbox if k not in KINDS]
        if unknown:
            raise ValueError(f"outbox kinds {unknown} unknown: each one of {', '.join(KINDS)}")
        self.outbox_kinds = frozenset(outbox)
        #: called with the event id after an outbox event is committed (the publisher's wake-up); must not block
        self.on_outbox = None
        self.damaged: dict[str, Any] | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ServiceError(f"cannot open the event log {self.path}: {e}", 503, "event-log") from None
        try:
            self._db = self._open()
        except _Damaged as e:
            self.damaged = {"file": str(self._move_aside()), "reason": str(e), "t": time.time()}
            self._db = self._open()
        self._lock = threading.Lock()
        self._db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('log_id', ?)", (uuid.uuid4().hex,))
        self.log_id: str = self._db.execute("SELECT value FROM meta WHERE key = 'log_id'").fetchone()[0]
        if self.damaged is not None:
            self.append("warning", {"code": "event-log-damaged", **self.damaged,
                                    "message": f"the event log was damaged ({self.damaged['reason']}): it was "
                                               f"moved aside as {self.damaged['file']} and a new log started"})

    def _open(self) -> sqlite3.Connection:
        """Connect, check (quick_check), set WAL and FULL sync, create the tables.
        Raises _Damaged for a damaged file, ServiceError when it cannot be opened at all."""
        try:
            db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=10)
        except (sqlite3.Error, OSError) as e:
            raise ServiceError(f"cannot open the event log {self.path}: {e}", 503, "event-log") from None
        try:
            rows = db.execute("PRAGMA quick_check(5)").fetchall()
            if [r[0] for r in rows] != ["ok"]:
                raise _Damaged("quick_check: " + "; ".join(str(r[0]) for r in rows)[:300])
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            db.executescript(_SCHEMA)
            return db
        except sqlite3.OperationalError as e:  # locked, read-only, disk full: not the file's fault
            db.close()
            raise ServiceError(f"cannot open the event log {self.path}: {e}", 503, "event-log") from None
        except sqlite3.DatabaseError as e:  # "file is not a database", "database disk image is malformed"
            db.close()
            raise _Damaged(str(e)) from None
        except _Damaged:
            db.close()
            raise

    def _move_aside(self) -> Path:
        """Rename the log and its -wal/-shm to ``<name>.damaged-<UTC time>``; returns the new path."""
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        dest = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        n = 1
        while dest.exists():
            n += 1
            dest = self.path.with_name(f"{self.path.name}.damaged-{stamp}-{n}")
        try:
            for suffix in ("-wal", "-shm", ""):  # the main file last: a crash in between leaves no WAL without it
                src = Path(f"{self.path}{suffix}")
                if src.exists():
                    src.rename(f"{dest}{suffix}")
        except OSError as e:
            raise ServiceError(f"the event log {self.path} is damaged and cannot be moved aside: {e}", 503,
                               "event-log") from None
        return dest

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- writing --
    def append(self, kind: str, data: dict[str, Any], t: float | None = None) -> int:
        """Append one event (committed and synced when this returns). Returns its id.

        Raises:
            ValueError: ``kind`` not in ``KINDS``.
        """
        if kind not in KINDS:
            raise ValueError(f"event kind {kind!r} unknown: one of {', '.join(KINDS)}")
        return self._append(kind, data, time.time() if t is None else t)

    def _append(self, kind: str, data: dict[str, Any], t: float, with_it=None) -> int:
        """Insert the event, its outbox row and ``with_it(db, event id)``'s rows in one transaction."""
        text = json.dumps(data, ensure_ascii=False, sort_keys=True)
        outbox = kind in self.outbox_kinds
        with self._lock:
            if not outbox and with_it is None:
                cur = self._db.execute("INSERT INTO events(t, kind, data) VALUES (?, ?, ?)", (t, kind, text))
                return int(cur.lastrowid)
            self._db.execute("BEGIN IMMEDIATE")
            try:
                cur = self._db.execute("INSERT INTO events(t, kind, data) VALUES (?, ?, ?)", (t, kind, text))
                eid = int(cur.lastrowid)
                if with_it is not None:
                    with_it(self._db, eid)
                if outbox:
                    self._db.execute("INSERT INTO outbox(event_id) VALUES (?)", (eid,))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        if outbox:
            self._notify(eid)
        return eid

    def _notify(self, eid: int) -> None:
        fn = self.on_outbox
        if fn is not None:
            fn(eid)

    def append_cycle(self, data: dict[str, Any], lift_up_s: dict[str, float | None]) -> int:
        """A finished cycle and its lift-up travel times (s per side), in one transaction."""
        now = time.time()

        def lifts(db, eid: int) -> None:
            for side, v in lift_up_s.items():
                if v is not None:
                    db.execute("INSERT INTO lift_times(t, cycle, side, up_s) VALUES (?, ?, ?, ?)",
                               (now, eid, side, float(v)))
        return self._append("cycle", data, now, lifts)

    def append_fault(self, data: dict[str, Any], trace: str | None) -> int:
        """A fault and its trace (JSON lines, docs/trace.md; None: none recorded), in one transaction.
        Returns the event id (``GET /api/faults/{event id}/trace``)."""
        return self.append_with_trace("fault", data, trace)

    def append_with_trace(self, kind: str, data: dict[str, Any], trace: str | None) -> int:
        """An event of ``kind`` (a fault, a self-test) and its trace (JSON lines, docs/trace.md; None:
        none recorded), in one transaction. Returns the event id (``GET /api/faults/{event id}/trace``).
        Raises ValueError for a kind not in ``KINDS``."""
        if kind not in KINDS:
            raise ValueError(f"event kind {kind!r} unknown: one of {', '.join(KINDS)}")
        blob = gzip.compress(trace.encode("utf-8"), 6) if trace is not None else None

        def keep(db, eid: int) -> None:
            db.execute("INSERT INTO traces(event_id, data) VALUES (?, ?)", (eid, blob))
        return self._append(kind, data, time.time(), keep if blob is not None else None)

    def trace(self, event_id: int) -> str | None:
        """The trace saved with fault or self-test ``event_id`` (JSON lines), None when there is none."""
        with self._lock:
            row = self._db.execute("SELECT data FROM traces WHERE event_id = ?", (int(event_id),)).fetchone()
        return None if row is None else gzip.decompress(row[0]).decode("utf-8")

    # -- the outbox (service.mqtt) --
    def outbox(self, after: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        """The outbox's events with an id above ``after``, oldest first, at most ``limit``:
        ``[{"id", "t", "kind", "data"}]``."""
        with self._lock:
            rows = self._db.execute("SELECT e.id, e.t, e.kind, e.data FROM outbox o JOIN events e ON e.id = o.event_id "
                                    "WHERE o.event_id > ? ORDER BY o.event_id LIMIT ?", (after, int(limit))).fetchall()
        return [{"id": r[0], "t": r[1], "kind": r[2], "data": json.loads(r[3])} for r in rows]

    def acknowledge(self, event_id: int) -> None:
        """Take the event out of the outbox (the broker has it). No error if it is not there."""
        with self._lock:
            self._db.execute("DELETE FROM outbox WHERE event_id = ?", (int(event_id),))

    def pending(self) -> int:
        """How many events wait in the outbox."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM outbox").fetchone()[0])

    # -- reading --
    def events(self, kind: str | None = None, limit: int = 50, after: int = 0) -> list[dict[str, Any]]:
        """The latest events (newest first), of one kind or all: ``[{"id", "t", "kind", "data"}]``."""
        q = "SELECT id, t, kind, data FROM events WHERE id > ?"
        args: list[Any] = [after]
        if kind is not None:
            q += " AND kind = ?"
            args.append(kind)
        q += " ORDER BY id DESC LIMIT ?"
        args.append(int(limit))
        with self._lock:
            rows = self._db.execute(q, args).fetchall()
        return [{"id": r[0], "t": r[1], "kind": r[2], "data": json.loads(r[3])} for r in rows]

    def count(self, kind: str) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM events WHERE kind = ?", (kind,)).fetchone()[0])

    def trends(self, last: int = 50) -> dict[str, Any]:
        """Maintenance trends: per side the lift-up travel times (s) of the last ``last`` cycles,
        oldest first, with their mean and the growth of the last five over the first five (ratio);
        cycles run; faults by code."""
        out: dict[str, Any] = {"lift_up_s": {}, "cycles": self.count("cycle")}
        with self._lock:
            for side in SEATS:
                rows = self._db.execute("SELECT up_s FROM lift_times WHERE side = ? ORDER BY id DESC LIMIT ?",
                                        (side, last)).fetchall()
                vals = [r[0] for r in reversed(rows)]
                growth = None
                if len(vals) >= 2:
                    k = min(5, len(vals) // 2)
                    growth = round((sum(vals[-k:]) / k) / (sum(vals[:k]) / k), 3)
                out["lift_up_s"][side] = {"times": vals, "mean": round(sum(vals) / len(vals), 3) if vals else None,
                                          "growth": growth}
            faults = self._db.execute("SELECT json_extract(data, '$.code'), COUNT(*) FROM events WHERE kind = 'fault' "
                                      "GROUP BY 1 ORDER BY 1").fetchall()
        out["faults_by_code"] = {code: n for code, n in faults if code}
        return out

    def events_of(self, kinds: tuple[str, ...], after: int = 0) -> list[dict[str, Any]]:
        """The events of ``kinds`` with an id >= ``after``, oldest first: ``[{"id", "t", "kind", "data"}]``."""
        marks = ", ".join("?" * len(kinds))
        with self._lock:
            rows = self._db.execute(f"SELECT id, t, kind, data FROM events WHERE id >= ? AND kind IN ({marks}) "
                                    "ORDER BY id", (after, *kinds)).fetchall()
        return [{"id": r[0], "t": r[1], "kind": r[2], "data": json.loads(r[3])} for r in rows]

    def last_id(self, kind: str, **where: str) -> int:
        """The id of the newest ``kind`` event whose data has the given top-level values (0 if none)."""
        q = "SELECT MAX(id) FROM events WHERE kind = ?"
        args: list[Any] = [kind]
        for key, v in where.items():
            q += f" AND json_extract(data, '$.{key}') = ?"
            args.append(v)
        with self._lock:
            return int(self._db.execute(q, args).fetchone()[0] or 0)


def integrity(path: str | Path) -> str:
    """``PRAGMA integrity_check`` of the log file (``"ok"`` when sound)."""
    db = sqlite3.connect(str(path))
    try:
        return str(db.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        db.close()
