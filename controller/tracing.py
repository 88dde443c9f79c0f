"""The controller's own events in a trace (``op`` records, docs/trace.md).

A trace (``hardware.trace``) holds the backend's events and the commands sent, written by the
runtime at its boundary with the backend; the controller's own inputs go with them as ``op``
records, so that a replay gives the state machine exactly what the live run gave it:

==================  ======================================================================
``tick``            the runtime looked at the machine (``cycle.Tick``); without any tick
                    record in a trace, the replay looks every ``runtime.TICK_S``
``start_cycle``     ``dice`` (the values thrown), ``readings`` (``{"SENSOR:SIDE": 0|1}``),
                    ``carry`` (what the controller knew from before: settings, lift trend)
``read_positions``  ``readings``: every sensor read at once (at start), kept where the controller
                    knew nothing yet
``readings``        ``readings``: every sensor read afresh, replacing what the controller knew
                    (after a fault cleared on a link, after a self-test)
``clear_fault``     the technician cleared the fault
``refill``          both lift buttons (补牌)
``dice_button``     ``dice``: thrown again with the walls up
``manual_lift``     ``up``: the four lifts moved by hand
``stop_all_request``  ``source``: the operator's stop-all
``rejected``        ``command``, ``side``, ``reason``: a command that could not be sent
``link_quality``    ``frames_rejected``, ``retransmitted`` over the cycle (mcu)
``stop_all``        the controller stopped every motor directly (informational)
``end``             the recording was closed here (a trace without it was cut off)
==================  ======================================================================
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from hardware.errors import HardwareError
from hardware.trace import TraceHeader, TraceWriter, readings_from_json, readings_to_json

from . import cycle as CY

#: every op name, and the fields each needs (name -> meaning), for the errors of a replay
OPS: dict[str, dict[str, str]] = {
    "tick": {}, "start_cycle": {"dice": "the dice values, a list of 1..6"},
    "read_positions": {"readings": "{\"SENSOR:SIDE\": 0 or 1}"}, "readings": {"readings": "{\"SENSOR:SIDE\": 0 or 1}"},
    "clear_fault": {}, "refill": {},
    "dice_button": {"dice": "the dice values, a list of 1..6"}, "manual_lift": {"up": "true or false"},
    "stop_all_request": {}, "rejected": {"command": "the command's name", "reason": "why"},
    "link_quality": {"frames_rejected": "a whole number", "retransmitted": "a whole number"},
    "stop_all": {}, "end": {},
}


def op_of(event) -> tuple[str, dict[str, Any]] | None:
    """The ``op`` record (name, fields) of a controller event fed to the state machine by the
    runtime, or None for an event that is not one (hardware events are recorded as events;
    StartCycle and Tick are recorded by the runtime with what it read)."""
    if isinstance(event, CY.ClearFault):
        return "clear_fault", {}
    if isinstance(event, CY.RefillButtons):
        return "refill", {}
    if isinstance(event, CY.DiceButton):
        return "dice_button", {"dice": list(event.dice)}
    if isinstance(event, CY.ManualLift):
        return "manual_lift", {"up": event.up}
    if isinstance(event, CY.StopAllRequest):
        return "stop_all_request", {"source": event.source}
    if isinstance(event, CY.Rejected):
        return "rejected", {"command": event.command, "side": event.side, "reason": event.reason}
    if isinstance(event, CY.LinkQuality):
        return "link_quality", {"frames_rejected": event.frames_rejected, "retransmitted": event.retransmitted}
    return None


def _int(rec: dict, key: str) -> int:
    v = rec.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"expected \"{key}\" ({OPS[rec['op']].get(key, 'a whole number')}) in a {rec['op']} record")
    return v


def dice_of(rec: dict) -> tuple[int, ...]:
    """The ``dice`` of a start_cycle / dice_button record; ValueError naming what is wrong."""
    d = rec.get("dice")
    if not isinstance(d, list) or not d or any(isinstance(x, bool) or x not in range(1, 7) for x in d):
        raise ValueError(f"expected \"dice\" (the dice values, a list of 1..6) in a {rec['op']} record")
    return tuple(d)


def readings_of(rec: dict) -> dict:
    """The ``readings`` of a record (``{}`` when left out); ValueError naming what is wrong."""
    return readings_from_json(rec.get("readings", {}))


def event_of(rec: dict):
    """The controller event of an ``op`` record that is fed as it is (not tick, start_cycle,
    read_positions, stop_all, end: the replay handles those). Raises ValueError naming the field."""
    op = rec["op"]
    if op == "clear_fault":
        return CY.ClearFault()
    if op == "refill":
        return CY.RefillButtons()
    if op == "dice_button":
        return CY.DiceButton(dice_of(rec))
    if op == "manual_lift":
        if not isinstance(rec.get("up"), bool):
            raise ValueError("expected \"up\" (true or false) in a manual_lift record")
        return CY.ManualLift(rec["up"])
    if op == "stop_all_request":
        return CY.StopAllRequest(str(rec.get("source", "operator")))
    if op == "rejected":
        if not isinstance(rec.get("command"), str) or not isinstance(rec.get("reason"), str):
            raise ValueError("expected \"command\" and \"reason\" (strings) in a rejected record")
        side = rec.get("side")
        if side not in (None, *CY.SIDES):
            raise ValueError("expected \"side\" to be one of E, S, W, N or null in a rejected record")
        return CY.Rejected(rec["command"], side, rec["reason"])
    if op == "link_quality":
        return CY.LinkQuality(_int(rec, "frames_rejected"), _int(rec, "retransmitted"))
    raise ValueError(f"expected \"op\" to be one of {', '.join(OPS)}, got {op!r}")


def carry_of(table: CY.Table) -> dict[str, Any]:
    """What a cycle starting now takes over from before (so that a trace that begins at a cycle's
    start, the service's ring buffer, replays the same): the settings, the lift-travel trend, which
    lifts are known up, whether stacks wait to be dropped, the cycles completed."""
    s = table.settings
    return {"tile_count": s.gear, "dice_method": s.dice_method.value, "dealer": s.dealer,
            "trend": [list(x) for x in table.trend], "lifts_up": list(table.lifts_up),
            "raise_first": table.raise_first, "cycles": table.cycles}


class CycleRing:
    """A trace sink (``hardware.trace.TraceWriter(header, ring.add)``) that keeps the last ``cycles``
    cycles: a new cycle begins at each ``start_cycle`` record (which carries what the controller knew
    from before, so the kept cycles replay on their own). At most ``max_records`` records are kept:
    beyond that the oldest whole cycles go (never the running one).

    ``text()``: the trace as JSON lines (header first), what the service saves beside a fault."""

    def __init__(self, cycles: int = 3, max_records: int = 60_000) -> None:
        if cycles < 1 or max_records < 1:
            raise ValueError("a ring keeps at least one cycle and one record")
        self.cycles, self.max_records = cycles, max_records
        self.header: dict | None = None
        self._segments: deque[list[dict]] = deque([[]])
        self._count = 0

    def add(self, record: dict) -> None:
        """Take one record (the first one given is the header)."""
        if self.header is None:
            self.header = record
            return
        if record.get("op") == "start_cycle" and self._segments[-1]:
            self._segments.append([])
        self._segments[-1].append(record)
        self._count += 1
        # (the records before the first start_cycle, the start readings, count as one cycle)
        while len(self._segments) > 1 and (len(self._segments) > self.cycles or self._count > self.max_records):
            self._count -= len(self._segments.popleft())

    def text(self) -> str:
        """The kept records as a trace: header line and records, one JSON object per line."""
        lines = [self.header or TraceHeader(0, {}, 0, "", "").to_json()]
        return self.lines_text(lines + [r for seg in self._segments for r in seg])

    @staticmethod
    def lines_text(records: list[dict]) -> str:
        """``records`` (the header first) as the text of a trace: one JSON object per line."""
        return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)


class RecordingBackend:
    """``backend`` with what a caller outside the runtime (the self-test, ``controller.selftest``)
    commands and sees written to ``trace`` (a :class:`hardware.trace.TraceWriter` whose header says
    ``"run": "selftest"``, docs/trace.md section 8): every command with its id (or the error that
    refused it), every event each wait (``events``, ``advance``, ``run_until``) returned, in that
    order, each ``sensors()`` read as a ``readings`` op and ``stop_all()`` as a ``stop_all`` op.
    ``t`` is the backend's machine time when the call returned. Every other attribute is the
    backend's. ``controller.replay.replay_selftest`` serves such a trace back to the self-test."""

    def __init__(self, backend: Any, trace: TraceWriter) -> None:
        self._b, self._w = backend, trace

    def __getattr__(self, name: str) -> Any:
        return getattr(self._b, name)

    def submit(self, command) -> int:
        try:
            cmd_id = self._b.submit(command)
        except HardwareError as e:
            self._w.command(self._b.now(), command, None, error=str(e))
            raise
        self._w.command(self._b.now(), command, cmd_id)
        return cmd_id

    def _seen(self, events: list) -> list:
        t = self._b.now()
        for ev in events:
            self._w.event(t, ev)
        return events

    def events(self) -> list:
        return self._seen(self._b.events())

    def advance(self, dt: float) -> list:
        return self._seen(self._b.advance(dt))

    def run_until(self, predicate, timeout: float) -> list:
        return self._seen(self._b.run_until(predicate, timeout))

    def sensors(self):
        snap = self._b.sensors()
        self._w.note(self._b.now(), "readings", readings=readings_to_json(snap.values))
        return snap

    def stop_all(self) -> None:
        self._b.stop_all()
        self._w.note(self._b.now(), "stop_all")


__all__ = ["CycleRing", "RecordingBackend", "OPS", "op_of", "event_of", "dice_of", "readings_of", "carry_of", "readings_to_json"]
