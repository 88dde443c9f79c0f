"""Traces: what the controller commanded and what the machine reported, with times, as JSON lines.

The format is documented for other writers (a table's own board, another program) in
``docs/trace.md``; this module is its one implementation:

* :func:`to_json` / :func:`from_json`: the JSON form of the table's vocabulary
  (:mod:`hardware.vocabulary`): every goal command and every event, enum values by *name*
  (``"LIFT_TOP"``, ``"DEADLINE"``), sides as ``"E"``..``"N"`` or null. One serializer for all.
* :class:`TraceWriter`: writes the header line, then one object per command, event or controller
  note (``op``), each with ``t`` = machine time in seconds. The controller's runtime
  (``controller.runtime.TableRuntime``) calls it at its boundary with the backend, so every
  backend (sim, gpio, mcu) records the same thing.
* :func:`read_trace` / :func:`parse_trace`: a trace back as a :class:`Trace`; a line that is not
  valid raises :class:`TraceError` naming the line and what was expected. A last line cut off
  (a recording stopped by a power cut) is dropped and said so (``Trace.cut_line``).

The controller's own events (``op`` records: start of a cycle with its dice, the operator's
clear, ticks ...) are serialized by ``controller.replay``; here they are kept as plain dicts
(checked only for ``t`` and ``op``).
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import IO, Any, Callable, Iterable

from .errors import CommandError, HardwareError
from .vocabulary import (COMMANDS, EVENT_TYPES, GEARS, DeviceState, FaultCode, Light, Motor, Outcome,
                         ReplyCode, Sensor, Side, StopReason)

#: the trace format's version (the header's ``mjtable_trace``)
FORMAT_VERSION = 1
#: what a record is, by the key it carries
RECORD_KINDS = ("event", "command", "op")


class TraceError(HardwareError):
    """A trace that cannot be read: ``str()`` is one line, ``FILE:LINE: what was expected``."""

    def __init__(self, source: str, line: int, message: str) -> None:
        self.source, self.line, self.message = source, line, message
        super().__init__(f"{source}:{line}: {message}")


# ------------------------------------------------------------------- JSON form of the vocabulary
_BY_NAME = {c.__name__: c for c in (*COMMANDS, *EVENT_TYPES)}
#: field name -> enum type (``code`` depends on the class: Reply has a ReplyCode, Fault a FaultCode)
_ENUM_FIELDS: dict[str, type[Enum]] = {"side": Side, "sensor": Sensor, "motor": Motor, "outcome": Outcome,
                                       "state": DeviceState, "stop_reason": StopReason}
#: what each event/command is called in error messages
_WHAT = {"SensorChanged": "sensor event", "StacksCounted": "stack event", "MotionDone": "motion-done event",
         "Fault": "fault event", "Reply": "reply event", "Status": "status event", "Connected": "connected event",
         "BackendReset": "reset event", "BackendLost": "link-lost event", "CommandFailed": "command-failed event"}
_MEANING = {"t_ms": "machine time, ms", "elapsed_ms": "ms", "deadline_ms": "ms", "cmd_id": "the command's id",
            "value": "0 or 1", "detail": "a whole number", "count": "stacks so far", "stacks": "0..40",
            "up": "true or false"}


def _enum_type(cls: type, name: str) -> type[Enum] | None:
    if name == "code":
        return ReplyCode if cls.__name__ == "Reply" else FaultCode
    return _ENUM_FIELDS.get(name)


def _key(sensor: Enum, side: Side | None) -> str:
    return sensor.name if side is None else f"{sensor.name}:{side.name}"


def readings_to_json(readings: dict) -> dict[str, int]:
    """``{(Sensor, Side | None): 0|1}`` -> ``{"LIFT_TOP:E": 0, "LID": 1, ...}`` (sorted)."""
    return {_key(k[0], k[1]): int(v) for k, v in sorted(readings.items(), key=lambda kv: (kv[0][0], -1 if kv[0][1] is None else kv[0][1]))}


def _part_key(text: Any, enum: type[Enum], what: str) -> tuple:
    if not isinstance(text, str):
        raise ValueError(f"expected {what} as \"NAME\" or \"NAME:SIDE\", got {json.dumps(text)}")
    name, _, side = text.partition(":")
    try:
        part = enum[name]
    except KeyError:
        raise ValueError(f"unknown {what} {name!r}; allowed: {', '.join(e.name for e in enum)}") from None
    if side and side not in Side.__members__:
        raise ValueError(f"unknown side {side!r} in {text!r}; allowed: E, S, W, N")
    return part, (Side[side] if side else None)


def readings_from_json(data: Any) -> dict:
    """The inverse of :func:`readings_to_json`; ValueError naming what was wrong."""
    if not isinstance(data, dict):
        raise ValueError("expected readings as an object {\"SENSOR:SIDE\": 0 or 1, ...}")
    out = {}
    for k, v in data.items():
        if v not in (0, 1) or isinstance(v, bool):
            raise ValueError(f"expected reading {k!r} to be 0 or 1, got {json.dumps(v)}")
        out[_part_key(k, Sensor, "sensor")] = v
    return out


def _value_to_json(name: str, v: Any) -> Any:
    if v is None:
        return None
    if name == "lights":
        return [b.name for b in Light if b & int(v)]
    if name == "readings":
        return readings_to_json(v)
    if name == "running":
        return sorted(_key(m, s) for m, s in v)
    if isinstance(v, Enum):
        return v.name
    return v


def to_json(obj: Any) -> dict:
    """The JSON form of a goal command or an event of :mod:`hardware.vocabulary`:
    ``{"command": "Lift", "side": "E", "up": true, "deadline_ms": 3000}``,
    ``{"event": "SensorChanged", "sensor": "LIFT_TOP", "side": "E", "value": 1, "t_ms": 1234}``.
    Enum values by name, sides ``"E"``..``"N"`` or null, a Light set as a list of names, Status
    readings as ``{"SENSOR:SIDE": 0|1}``. Raises CommandError for anything else."""
    cls = type(obj)
    if cls not in _BY_NAME.values():
        raise CommandError(f"not a command or event of the table's vocabulary: {cls.__name__}")
    kind = "command" if cls in COMMANDS else "event"
    out: dict[str, Any] = {kind: cls.__name__}
    for f in dataclasses.fields(obj):
        out[f.name] = _value_to_json(f.name, getattr(obj, f.name))
    return out


def _field_from_json(cls: type, f: dataclasses.Field, v: Any) -> Any:
    name, ann = f.name, str(f.type)
    what = f'"{name}"'
    optional = "None" in ann
    if v is None:
        if optional:
            return None
        raise ValueError(f"expected {what} not null")
    enum = _enum_type(cls, name)
    if enum is not None:
        if enum is Side and not isinstance(v, str):
            raise ValueError(f"expected {what} to be one of E, S, W, N" + (" or null" if optional else ""))
        if not isinstance(v, str) or v not in enum.__members__:
            allowed = ", ".join(enum.__members__) + (" or null" if optional else "")
            raise ValueError(f"expected {what} to be one of {allowed}, got {json.dumps(v)}")
        return enum[v]
    if name == "lights":
        if not isinstance(v, list) or any(x not in Light.__members__ for x in v):
            raise ValueError(f"expected {what} to be a list of {', '.join(Light.__members__)}")
        mask = Light(0)
        for x in v:
            mask |= Light[x]
        return int(mask)
    if name == "readings":
        return readings_from_json(v)
    if name == "running":
        if not isinstance(v, list):
            raise ValueError(f"expected {what} as a list of \"MOTOR\" or \"MOTOR:SIDE\"")
        return frozenset(_part_key(x, Motor, "motor") for x in v)
    if ann.startswith("bool"):
        if not isinstance(v, bool):
            raise ValueError(f"expected {what} to be true or false" + (" or null" if optional else ""))
        return v
    if ann.startswith("int"):
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"expected {what} ({_MEANING.get(name, 'a whole number')}) to be a whole number, "
                             f"got {json.dumps(v)}")
        return v
    if ann.startswith("float"):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"expected {what} to be a number")
        return float(v)
    if ann.startswith("str"):
        if not isinstance(v, str):
            raise ValueError(f"expected {what} to be a string")
        return v
    return v


def from_json(data: dict, t: float | None = None) -> Any:
    """A command or event from its JSON form (:func:`to_json`). ``t`` (s): the record's machine
    time; an event's ``t_ms`` may be left out and is then ``round(t * 1000)``.

    Raises:
        ValueError: one line naming the field and what is allowed (``expected "side" to be one of
            E, S, W, N ...``); CommandError for a command whose values are out of range.
    """
    kind = "event" if "event" in data else "command"  # a MotionDone's "command" is a field
    name = data.get(kind)
    cls = _BY_NAME.get(name) if isinstance(name, str) else None
    group = COMMANDS if kind == "command" else EVENT_TYPES
    if cls is None or cls not in group:
        raise ValueError(f"expected \"{kind}\" to be one of {', '.join(c.__name__ for c in group)}, "
                         f"got {json.dumps(name)}")
    what = _WHAT.get(cls.__name__, f"{cls.__name__} {kind}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    extra = set(data) - set(fields) - {kind, "t", "id", "error", "note"}
    if extra:
        raise ValueError(f"unknown key {sorted(extra)[0]!r} in a {what}; its keys: {', '.join(fields) or 'none'}")
    args = {}
    for fname, f in fields.items():
        if fname not in data:
            if fname == "t_ms" and t is not None:
                args[fname] = int(round(t * 1000))
                continue
            if f.default is not dataclasses.MISSING:
                continue
            raise ValueError(f"expected \"{fname}\" ({_MEANING.get(fname, 'see docs/trace.md')}) in a {what}")
        args[fname] = _field_from_json(cls, f, data[fname])
    return cls(**args)


# ----------------------------------------------------------------------------- the header
@dataclass(frozen=True)
class TraceHeader:
    """The first line of a trace.

    Attributes:
        version: the format's version (:data:`FORMAT_VERSION`).
        profile: the machine profile: ``{"name", "timing": {...}, "gears": {"136": [17, 17, 17, 17]}}``,
            the nominal values the diagnosis judges by (timing and gears may be partial: the rest comes
            from the named profile, or ``default``).
        tile_count: the gear in use at the start (tiles).
        backend: "sim", "gpio", "mcu" or what wrote the trace ("board", "hand-written" ...).
        software: the writer's name and version ("mjtable 0.1.0").
        dice_method, dealer: the settings of the cycle (MCR two-throw, E by default).
        description: free text (what the trace shows; the seed passage of a hand-written one).
        extra: every other key of the header line, kept (seed, faults of a simulated run ...).
    """

    version: int
    profile: dict
    tile_count: int
    backend: str
    software: str
    dice_method: str = "two-throw"
    dealer: str = "E"
    description: str = ""
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"mjtable_trace": self.version, "profile": self.profile, "tile_count": self.tile_count,
                "backend": self.backend, "software": self.software, "dice_method": self.dice_method,
                "dealer": self.dealer, **({"description": self.description} if self.description else {}),
                **self.extra}


def profile_json(profile) -> dict:
    """The header's ``profile`` of a :class:`hardware.Profile`: its name, nominal timings and gears."""
    return {"name": profile.name, "timing": dataclasses.asdict(profile.timing),
            "gears": {str(k): list(v) for k, v in profile.gears.items()}}


def profile_from_json(data: dict):
    """The :class:`hardware.Profile` a header describes: the named profile (``default`` when the name
    is not one of hardware/profiles) with the header's timing and gears over it.
    Raises ValueError naming the key."""
    from .profile import PROFILE_DIR, Timing, load_profile

    name = data.get("name", "default")
    if not isinstance(name, str):
        raise ValueError("expected profile \"name\" to be a string")
    base = load_profile(name if (PROFILE_DIR / f"{name}.toml").is_file() else "default")
    timing = dataclasses.asdict(base.timing)
    given = data.get("timing", {})
    if not isinstance(given, dict):
        raise ValueError("expected profile \"timing\" to be an object of seconds")
    for k, v in given.items():
        if k not in timing:
            raise ValueError(f"unknown profile timing {k!r}; allowed: {', '.join(timing)}")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"expected profile timing {k} to be a number of seconds >= 0, got {json.dumps(v)}")
        timing[k] = float(v)
    gears = dict(base.gears)
    g = data.get("gears", {})
    if not isinstance(g, dict):
        raise ValueError("expected profile \"gears\" as {\"136\": [17, 17, 17, 17], ...}")
    for k, v in g.items():
        if not (isinstance(k, str) and k.isdigit() and int(k) in GEARS):
            raise ValueError(f"unknown gear {k!r}; allowed: {', '.join(map(str, GEARS))}")
        if not (isinstance(v, list) and len(v) == 4 and all(isinstance(x, int) and 0 < x <= 40 for x in v)):
            raise ValueError(f"expected gear {k} as four stack counts 1..40 (E, S, W, N)")
        gears[int(k)] = tuple(v)
    return dataclasses.replace(base, name=name, timing=Timing(**timing), gears=gears)


def software_version() -> str:
    """``mjtable X.Y.Z`` (the installed package's version)."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return f"mjtable {version('mjtable')}"
    except PackageNotFoundError:  # pragma: no cover - run from a source tree without install
        return "mjtable (source)"


def make_header(profile, tile_count: int, backend: str, *, dice_method: str = "two-throw", dealer: str = "E",
                **extra) -> TraceHeader:
    """The header of a trace recorded now by this software."""
    return TraceHeader(FORMAT_VERSION, profile_json(profile), tile_count, backend, software_version(),
                       dice_method, dealer, extra=extra)


# ----------------------------------------------------------------------------- writing
def _t(t: float) -> float:
    return round(float(t), 6)


class TraceWriter:
    """Writes a trace: the header, then records. ``sink`` takes each record (a dict): a file's
    writer (:meth:`to_file`) or a list, a ring buffer ...

    Records (``t``: machine time in s when the controller took or sent it):
    ``{"t", "event": NAME, ...}``, ``{"t", "command": NAME, "id": cmd_id, ...}`` (``"error"`` when
    the backend refused to take it), ``{"t", "op": NAME, ...}`` (the controller's own events).
    """

    def __init__(self, header: TraceHeader, sink: Callable[[dict], None]) -> None:
        self.header = header
        self.sink = sink
        sink(header.to_json())

    @classmethod
    def to_file(cls, header: TraceHeader, out: IO[str]) -> "TraceWriter":
        """A writer of JSON lines to ``out`` (flushed after every tick, so a cut-off recording ends
        within one look at the machine)."""
        def write(rec: dict) -> None:
            out.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
            if rec.get("op") == "tick" or "mjtable_trace" in rec:
                out.flush()
        return cls(header, write)

    def event(self, t: float, ev: Any) -> None:
        """An event the backend reported (:mod:`hardware.vocabulary`)."""
        self.sink({"t": _t(t), **to_json(ev)})

    def command(self, t: float, cmd: Any, cmd_id: int | None, error: str | None = None) -> None:
        """A command the controller sent; ``cmd_id`` its id (None when it was not taken: ``error``)."""
        rec = to_json(cmd)
        rec = {"t": _t(t), "command": rec.pop("command"), "id": cmd_id, **rec}
        if error is not None:
            rec["error"] = error
        self.sink(rec)

    def note(self, t: float, op: str, **fields: Any) -> None:
        """A controller event (``op``) with its fields (JSON values)."""
        self.sink({"t": _t(t), "op": op, **fields})


# ----------------------------------------------------------------------------- reading
@dataclass(frozen=True)
class Record:
    """One record of a trace: ``line`` (1-based), ``t`` (s), ``kind`` ("event", "command", "op"),
    ``obj`` (the vocabulary object for events and commands, None for an op), ``data`` (the raw dict)."""

    line: int
    t: float
    kind: str
    obj: Any
    data: dict


@dataclass(frozen=True)
class Trace:
    """A parsed trace: its header, its records in order, its ``source`` name, ``cut_line``: the
    number of a last line that was cut off mid-way (dropped), or None, and ``header_line``: the
    header's line number (comments may come before it)."""

    header: TraceHeader
    records: tuple[Record, ...]
    source: str = "trace"
    cut_line: int | None = None
    header_line: int = 1


def _header(obj: Any, source: str, line: int) -> TraceHeader:
    def bad(msg: str) -> TraceError:
        return TraceError(source, line, msg)
    if not isinstance(obj, dict) or "mjtable_trace" not in obj:
        raise bad("expected the header: an object with \"mjtable_trace\" (the format version), \"profile\", "
                  "\"tile_count\", \"backend\", \"software\"")
    v = obj["mjtable_trace"]
    if v != FORMAT_VERSION or isinstance(v, bool):
        raise bad(f"expected \"mjtable_trace\": {FORMAT_VERSION} (the format version this software reads), got {json.dumps(v)}")
    for k, what in (("profile", "an object {\"name\", \"timing\", \"gears\"}"), ("tile_count", "the gear, tiles"),
                    ("backend", "what recorded it"), ("software", "the writer and its version")):
        if k not in obj:
            raise bad(f"expected \"{k}\" ({what}) in the header")
    if not isinstance(obj["profile"], dict):
        raise bad("expected \"profile\" to be an object {\"name\", \"timing\", \"gears\"}")
    if obj["tile_count"] not in GEARS or isinstance(obj["tile_count"], bool):
        raise bad(f"expected \"tile_count\" to be one of {', '.join(map(str, GEARS))}, got {json.dumps(obj['tile_count'])}")
    for k in ("backend", "software"):
        if not isinstance(obj[k], str):
            raise bad(f"expected \"{k}\" to be a string")
    known = {"mjtable_trace", "profile", "tile_count", "backend", "software", "dice_method", "dealer", "description"}
    try:
        profile_from_json(obj["profile"])
    except ValueError as e:
        raise bad(str(e)) from None
    return TraceHeader(v, obj["profile"], obj["tile_count"], obj["backend"], obj["software"],
                       str(obj.get("dice_method", "two-throw")), str(obj.get("dealer", "E")),
                       str(obj.get("description", "")), {k: x for k, x in obj.items() if k not in known})


def _record(obj: Any, line: int, source: str, last_t: float) -> Record:
    def bad(msg: str) -> TraceError:
        return TraceError(source, line, msg)
    if not isinstance(obj, dict):
        raise bad("expected an object {\"t\": seconds, \"event\" | \"command\" | \"op\": NAME, ...}")
    # the key that says what the record is ("command" is also a field of a MotionDone event and of a
    # rejected op)
    kinds = [k for k in RECORD_KINDS if k in obj and not (k == "command" and ("event" in obj or "op" in obj))]
    if len(kinds) != 1:
        raise bad("expected exactly one of \"event\", \"command\", \"op\" in a record" if kinds else
                  "expected \"event\", \"command\" or \"op\" (what the record is)")
    kind = kinds[0]
    what = _WHAT.get(str(obj.get(kind)), kind) if kind == "event" else kind
    if kind == "op":
        what = f"{obj.get('op')} record" if isinstance(obj.get("op"), str) else "op record"
    if "t" not in obj:
        raise bad(f"expected \"t\" (machine time, seconds) in a {what}")
    t = obj["t"]
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t < 0:
        raise bad(f"expected \"t\" (machine time, seconds) to be a number >= 0, got {json.dumps(t)}")
    if t < last_t - 1e-9:
        raise bad(f"expected \"t\" not to go back in time: {t} after {last_t}")
    if kind == "op":
        if not isinstance(obj["op"], str) or not obj["op"]:
            raise bad("expected \"op\" to be the name of a controller event (docs/trace.md)")
        return Record(line, float(t), kind, None, obj)
    if kind == "command" and "id" in obj and obj["id"] is not None and (
            isinstance(obj["id"], bool) or not isinstance(obj["id"], int)):
        raise bad("expected \"id\" (the command's id) to be a whole number or null")
    try:
        item = from_json(obj, float(t))
    except (ValueError, CommandError) as e:
        raise bad(str(e)) from None
    return Record(line, float(t), kind, item, obj)


def parse_trace(lines: Iterable[str], source: str = "trace") -> Trace:
    """Parse the lines of a trace (see :class:`TraceWriter`, docs/trace.md).

    Blank lines and lines starting with ``#`` are skipped (comments in a hand-written trace).
    A last line that is not valid JSON and has no line end is taken as cut off: dropped, its
    number in ``Trace.cut_line``.

    Raises:
        TraceError: ``SOURCE:LINE: expected ...`` for the first line that is not valid.
    """
    lines = list(lines)
    header: TraceHeader | None = None
    header_line = 1
    records: list[Record] = []
    cut = None
    last_t = 0.0
    for n, text in enumerate(lines, 1):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            if n == len(lines) and not text.endswith("\n") and header is not None:
                cut = n
                break
            raise TraceError(source, n, f"expected one JSON object per line ({e.msg} at column {e.colno})") from None
        if header is None:
            header, header_line = _header(obj, source, n), n
            continue
        rec = _record(obj, n, source, last_t)
        last_t = rec.t
        records.append(rec)
    if header is None:
        raise TraceError(source, 1, "expected the header line (an object with \"mjtable_trace\"); the trace is empty")
    return Trace(header, tuple(records), source, cut, header_line)


def read_trace(path: str | Path) -> Trace:
    """Read a trace file. Raises TraceError (``FILE:LINE: ...``; line 0 when the file cannot be read)."""
    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8")
    except OSError as e:
        raise TraceError(p.name, 0, f"cannot read the trace: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        line = p.read_bytes()[:e.start].count(b"\n") + 1
        raise TraceError(p.name, line, "expected UTF-8 text") from None
    return parse_trace(text.splitlines(keepends=True), p.name)


__all__ = ["FORMAT_VERSION", "TraceError", "to_json", "from_json", "readings_to_json", "readings_from_json",
           "TraceHeader", "make_header", "profile_json", "profile_from_json", "software_version", "TraceWriter",
           "Record", "Trace", "parse_trace", "read_trace"]
