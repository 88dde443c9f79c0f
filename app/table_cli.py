"""The table commands of ``mjtable``: cycle, diagnose, selftest, dice, config, faults.

``app.cli`` builds the parser and turns errors into one line; this module adds the
sub-commands (``add_parsers``) and runs them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
from typing import IO, Iterator

from controller import cycle as CY
from controller import settings as ST
from controller.dice import Method, roll, wall_break
from controller.faults import CATALOGUE, catalogue_json, code_sheet, lookup, render_code_sheet
from controller.replay import findings
from controller.runtime import TableRuntime, centre_state, lift_states
from hardware import table_spec as TS

BACKENDS = TS.BACKENDS
SIDES = ("E", "S", "W", "N")


class TableCliError(Exception):
    """A table command that cannot run (one line for the user)."""


def _backend_args(p: argparse.ArgumentParser, faults: bool = True) -> None:
    p.add_argument("--sim", action="store_true", help="run on the built-in simulated machine")
    p.add_argument("--backend", choices=BACKENDS, default=None,
                   help="sim (the model directly), gpio (the GPIO backend; with --sim on mock pins), mcu (the "
                        "microcontroller link; with --sim over a pseudo-terminal)")
    p.add_argument("--profile", default=None, help="machine profile name or .toml path (default: the setting)")
    p.add_argument("--port", default="/dev/serial0", help="serial device of the table's microcontroller (mcu)")
    p.add_argument("--seed", type=int, default=None, help="seed of the simulated machine (default: random)")
    p.add_argument("--device", choices=TS.DEVICES, default="python",
                   help="mcu with --sim: the device end in this process (python), or the firmware "
                        "(firmware/rp2040) under the MicroPython unix port (micropython; a dev install)")
    if faults:
        p.add_argument("--fault", action="append", default=[], metavar="KIND[:SIDE][:NAME=VALUE,...]",
                       help="inject a fault into the simulated machine (see mjtable faults --list); repeatable")


def add_parsers(sub) -> None:
    """Add the table sub-commands to ``sub`` (an argparse sub-parsers object)."""
    c = sub.add_parser("cycle", help="run one table cycle: home, shuffle, build the walls, lift, dice")
    _backend_args(c)
    c.add_argument("--tile-count", type=int, default=None, help="tile count for this run (default: the setting)")
    c.add_argument("--speed", type=float, default=0.0,
                   help="simulated machine time per wall second (0: as fast as possible); mcu: the machine speed-up")
    c.add_argument("--cycles", type=int, default=1, help="run this many cycles (default 1)")
    c.add_argument("--json", action="store_true", help="print the final state as JSON")
    c.add_argument("--record", metavar="FILE", default=None,
                   help="record what was commanded and reported to FILE, a trace (docs/trace.md)")

    d = sub.add_parser("diagnose", help="inject a fault into the simulator and show its diagnosis, or diagnose a "
                                        "recorded trace (--trace FILE)")
    _backend_args(d)
    d.add_argument("--max-cycles", type=int, default=6, help="cycles to run before giving up (trends need several)")
    d.add_argument("--speed", type=float, default=0.0,
                   help="mcu: the machine speed-up (default 0: the fastest that the simulated 115200-baud line "
                        "carries, 4x for the default profile)")
    d.add_argument("--json", action="store_true")
    d.add_argument("--record", metavar="FILE", default=None, help="record the run to FILE, a trace (docs/trace.md)")
    d.add_argument("--trace", metavar="FILE", default=None,
                   help="diagnose the trace in FILE (recorded by --record, the service or the table's board: "
                        "docs/trace.md) instead of running the simulator")

    s = sub.add_parser("selftest", help="technician mode: exercise every actuator and sensor in turn")
    _backend_args(s)
    s.add_argument("--json", action="store_true")
    s.add_argument("--record", metavar="FILE", default=None,
                   help="record the self-test to FILE, a trace (docs/trace.md); mjtable diagnose --trace FILE replays it")

    r = sub.add_parser("dice", help="roll the dice and show where to break the wall")
    r.add_argument("--method", choices=[m.value for m in Method], default=None,
                   help="two-throw (MCR), one-throw (big die points, small die counts), sum-smaller (Changsha: the "
                        "sum points, the small die counts) or sum-count (riichi: the sum points and counts); "
                        "default: the stored setting")
    r.add_argument("--values", default=None, help="the values shown by motor dice, e.g. 3,4,2,5 (default: electronic dice)")
    r.add_argument("--dealer", default=None, help="the dealer's side E/S/W/N")
    r.add_argument("--tile-count", type=int, default=None)
    r.add_argument("--profile", default=None)
    r.add_argument("--json", action="store_true")

    g = sub.add_parser("config", help="read or change a setting (tile-count, profile, dice-method, dealer, rules, "
                       "confirm-below); config show lists them")
    g.add_argument("action", choices=["get", "set", "show"])
    g.add_argument("key", nargs="?", help="tile-count, profile, dice-method, dealer, rules (a system of mjtable rules "
                   "--list, or none) or confirm-below (0.5-0.95: tiles read from a photo below this confidence are "
                   "listed for the player to confirm; default 0.6)")
    g.add_argument("value", nargs="?")

    f = sub.add_parser("faults", help="the fault codes and the injectable faults; one code in full: mjtable faults E21")
    f.add_argument("code", nargs="?", help="one fault code (e.g. E21): meaning, causes, checks, parts, connectors, safety")
    f.add_argument("--list", action="store_true", help="list every fault code (the default)")
    f.add_argument("--json", action="store_true")


# --- helpers ----------------------------------------------------------------------------------

def _open(args, *, kind_default: str = "sim"):
    """Open the table the options ask for (``hardware.open_table``); returns (backend, stored settings).

    ``--sim`` (or a ``--fault``) is the simulated machine behind ``--backend`` (default sim); without
    it, the real table: ``--backend gpio`` or ``--backend mcu --port``.
    """
    import hardware
    stored = ST.load()
    kind = args.backend or (kind_default if args.sim else None)
    faults = getattr(args, "fault", [])
    if kind is None:
        raise TableCliError("no table given: add --sim to run on the simulated machine, or --backend mcu --port "
                            "/dev/serial0 (or --backend gpio) on the table's Raspberry Pi")
    simulated = bool(args.sim or faults)
    if not simulated and kind == "sim":
        raise TableCliError("the sim backend is the simulated machine: add --sim")
    profile = args.profile or stored.profile
    speed = 1.0
    if simulated and kind == "mcu":  # the simulated microcontroller's speed-up (--speed 0: the default)
        profile = hardware.load_profile(profile)
        speed = _mcu_speed(getattr(args, "speed", 0.0), profile)
    spec = hardware.TableSpec(simulated=simulated, backend=kind, port=args.port, profile=profile,
                              seed=args.seed, faults=tuple(faults), speed=speed, device=args.device)
    return hardware.open_table(spec), stored


def _mcu_speed(requested: float, profile) -> float:
    """The machine speed-up of a simulated microcontroller for ``--speed`` ``requested`` (0: the
    default). Its serial line runs at 115200 baud and carries the machine's sensor events up to
    ``hardware.sim.mcu_device.link_speed_limit(profile)`` (4.3x for the default profile): the
    default is that limit rounded down to a whole speed-up (4x), and a faster ``requested`` is
    refused, since the device would drop sensor events (E63). Returns the speed; raises
    TableCliError naming the limit."""
    from hardware.sim.mcu_device import LINE_BAUD, link_speed_limit
    limit = math.floor(link_speed_limit(profile) * 10) / 10
    default = float(max(1, math.floor(limit)))
    if not requested:
        return default
    if requested > limit:
        raise TableCliError(f"--speed {requested:g} is too fast for a simulated mcu table: its {LINE_BAUD}-baud line "
                            f"carries the machine's sensor events up to {limit:g}x for profile {profile.name!r} "
                            f"(faster, the microcontroller drops them: E63); give --speed {limit:g} or less, or "
                            f"leave it out ({default:g}x)")
    return requested


def _settings(backend, stored: ST.StoredSettings, tile_count: int | None) -> CY.Settings:
    gear = tile_count if tile_count is not None else stored.tile_count
    allowed = tuple(backend.profile.gears)
    if gear not in allowed:
        raise TableCliError(f"tile count {gear} is not supported: allowed are {', '.join(map(str, allowed))}")
    if stored.rules is not None:
        problem = ST.rule_system(stored.rules).gear_problem(gear)
        if problem:
            raise TableCliError(f"tile count {gear} does not fit the table's rules: {problem} (mjtable config set "
                                "rules none to play without)")
    return CY.Settings.from_profile(backend.profile, gear, stored.dice_method, stored.dealer)


def _progress_printer(out: IO[str], backend):
    tty = out.isatty()
    last = {"phase": None}

    def show(t: CY.Table) -> None:
        stacks = "  ".join(f"{s} {n:2d}/{e}" for s, n, e in zip(SIDES, t.obs.stacks, t.settings.stacks))
        lifts = " ".join(lift_states(t, t.sensors))
        line = (f"[{backend.now():6.1f}s] {t.phase.value:<12} stacks {stacks}   lifts {lifts}"
                f"   centre {centre_state(t.sensors)}")
        if tty:
            out.write("\r" + line + ("\n" if t.phase is not last["phase"] else ""))
        elif t.phase is not last["phase"]:
            out.write(line + "\n")
        last["phase"] = t.phase
        out.flush()
    return show


def result_json(t: CY.Table, backend) -> dict:
    """The final object of ``mjtable cycle --json``."""
    trend = {s: (list(t.trend[i][-1:]) or [None])[0] for i, s in enumerate(SIDES)}
    return {"ok": t.fault is None and t.phase is CY.Phase.WALLS_UP, "state": t.phase.value,
            "backend": backend.kind, "tile_count": t.settings.gear,
            "stacks": dict(zip(SIDES, t.obs.stacks)), "expected": dict(zip(SIDES, t.settings.stacks)),
            "lift_up_s": trend,
            "fault": t.fault.to_dict() if t.fault else None,
            "diagnoses": [d.to_dict() for d in t.diagnoses],
            "warnings": [w.to_dict() for w in t.warnings],
            "dice": t.wall.to_dict() if t.wall else None, "cycles": t.cycles}


def diagnosis_json(head: dict, cycles: int, table: CY.Table, first=None, others=()) -> dict:
    """The object of ``mjtable diagnose --json``, live or from a trace: ``head`` (``fault`` or
    ``trace``), ``cycles``, ``state`` (the phase the table ended in), ``diagnosis`` (``first``: the
    injected kind's diagnosis; by default the first finding of the last cycle: the fault, else the
    first warning; None), ``diagnoses`` (all findings of the last cycle,
    ``controller.replay.findings``) and ``others`` (diagnoses of earlier cycles or of other kinds
    seen on the way, not ``diagnosis``)."""
    ds = findings(table)
    first = first if first is not None else (ds[0] if ds else None)
    return {**head, "cycles": cycles, "state": table.phase.value, "diagnosis": first.to_dict() if first else None,
            "diagnoses": [d.to_dict() for d in ds], "others": [d.to_dict() for d in others]}


@contextlib.contextmanager
def recording(path: str | None, backend, settings: CY.Settings, **extra) -> Iterator:
    """A ``hardware.trace.TraceWriter`` to ``path`` (None: yields None), closed with an ``end`` record;
    a run that raises leaves the trace without it (cut off where it stopped).
    Raises TableCliError naming the file when it cannot be written."""
    from hardware.trace import TraceWriter, make_header
    if path is None:
        yield None
        return
    try:
        f = open(path, "w", encoding="utf-8")
    except OSError as e:
        raise TableCliError(f"--record {path}: cannot write the trace: {e.strerror or e}") from None
    with f:
        w = TraceWriter.to_file(make_header(backend.profile, settings.gear, backend.kind,
                                            dice_method=settings.dice_method.value, dealer=settings.dealer, **extra), f)
        yield w
        w.note(backend.now(), "end")


def _summary(t: CY.Table) -> str:
    lines = []
    if t.phase is CY.Phase.WALLS_UP:
        counts = ", ".join(f"{s} {n}" for s, n in zip(SIDES, t.obs.stacks))
        lifts = ", ".join(f"{s} {t.trend[i][-1]:.2f} s" for i, s in enumerate(SIDES) if t.trend[i])
        lines.append(f"Walls up: {t.settings.gear} tiles, stacks {counts}; lift travel {lifts}.")
        if t.wall:
            lines.append("Dice: " + t.wall.describe())
            lines.append("骰子：" + t.wall.describe_zh())
    for w in t.warnings:
        lines.append(w.render(warning=True))
    lines += _render_all(t.diagnoses)
    return "\n".join(lines)


def _render_all(diags) -> list[str]:
    """Each fault's block; with several, a header says how many and that the first stopped the motion."""
    if len(diags) > 1:
        codes = ", ".join(f"{d.code}{' ' + d.side if d.side else ''}" for d in diags)
        return [f"{len(diags)} faults in this cycle ({codes}); the first stopped the motion. / "
                f"本次循环共 {len(diags)} 个故障（{codes}）；第一个使机器停止。"] + [d.render() for d in diags]
    return [d.render() for d in diags]


def _side_letter(value: str) -> str:
    """E/S/W/N from the spellings winds accept elsewhere (E, east, 东, 0-3)."""
    from scoring import ScoringError, Wind
    try:
        return Wind.parse(value.strip() if not value.strip().isdigit() else int(value), "dealer").value
    except ScoringError as e:
        raise TableCliError(e.message) from None


# --- commands ---------------------------------------------------------------------------------

def _check_speed(speed: float) -> None:
    if not (speed >= 0 and speed < float("inf")):
        raise TableCliError(f"--speed {speed}: give machine seconds per wall second, 0 or more (0: as fast as possible)")


def cmd_cycle(args, out: IO[str]) -> int:
    if args.cycles < 1:
        raise TableCliError("--cycles must be at least 1")
    _check_speed(args.speed)
    backend, stored = _open(args)
    try:
        settings = _settings(backend, stored, args.tile_count)
        pace = (1.0 / args.speed) if (args.speed and backend.kind != "mcu") else 0.0
        progress = None if args.json else _progress_printer(out, backend)
        with recording(args.record, backend, settings, seed=args.seed, faults=list(args.fault)) as trace:
            rt = TableRuntime(backend, settings, progress=progress, pace=pace, trace=trace)
            t = rt.table
            for _ in range(args.cycles):
                t = rt.run_cycle()
                if t.fault:
                    break
        if args.json:
            out.write(json.dumps(result_json(t, backend), ensure_ascii=False, indent=2) + "\n")
        else:
            out.write(_summary(t) + "\n")
        return 0 if t.fault is None else 1
    finally:
        backend.close()


def cmd_diagnose(args, out: IO[str]) -> int:
    """Inject ``--fault`` and run cycles until the diagnosis of an injected kind shows (its code in
    ``controller.faults.BY_KIND``), a fault stops the table, or ``--max-cycles`` ran; with
    ``--trace FILE``, replay a recorded trace instead (``_diagnose_trace``). Other diagnoses on the
    way (a simulated line that could not keep up: E63) are listed apart (``others``), not taken for
    the injected fault's; with none of the injected kind, the first one seen is reported."""
    if args.trace is not None:
        return _diagnose_trace(args, out)
    from controller.faults import BY_KIND
    from hardware.sim.faults import parse_fault
    if not args.fault:
        raise TableCliError("give the fault to inject: --fault KIND[:SIDE] (see mjtable faults --list)")
    if args.max_cycles < 1:
        raise TableCliError("--max-cycles must be at least 1")
    _check_speed(args.speed)
    args.sim = True
    backend, stored = _open(args)
    try:
        kinds = {parse_fault(f).kind for f in args.fault}
        wanted = {BY_KIND[k].code for k in kinds if k in BY_KIND}
        settings = _settings(backend, stored, None)
        with recording(args.record, backend, settings, seed=args.seed, faults=list(args.fault)) as trace:
            rt = TableRuntime(backend, settings, trace=trace)
            found, seen = None, []
            t = rt.table
            for n in range(1, args.max_cycles + 1):
                t = rt.run_cycle()
                diags = list(findings(t))
                seen += diags
                found = next((d for d in diags if d.code in wanted), None) or t.fault
                if found:
                    break
        if found is None and seen:
            found = seen[0]
        others = [d for d in seen if d is not found]
        if args.json:
            out.write(json.dumps(diagnosis_json({"fault": args.fault}, n, t, found, others), ensure_ascii=False,
                                 indent=2) + "\n")
        elif found:
            out.write(f"Injected {', '.join(args.fault)} on the {backend.kind} backend; diagnosed after {n} cycle(s):\n")
            faults = list(t.diagnoses)
            if any(found is d for d in faults):  # every fault of the cycle, the first (which stopped it) first
                out.write("\n".join(_render_all(faults)) + "\n")
            else:
                out.write(found.render(warning=True) + "\n")
            rest = [d for d in others if not any(d is f for f in faults)]
            if rest:
                out.write("Also seen on the way:\n" + "\n".join(d.render(warning=not any(d is f for f in faults))
                                                                for d in rest) + "\n")
        else:
            out.write(f"Injected {', '.join(args.fault)}: no fault observed in {args.max_cycles} cycles.\n")
        return 0 if found else 1
    finally:
        backend.close()


def _findings_text(t: CY.Table) -> str:
    """Every fault of the last cycle (``_render_all``), then its warnings."""
    return "\n".join(_render_all(t.diagnoses) + [w.render(warning=True) for w in t.warnings])


def _diagnose_trace(args, out: IO[str]) -> int:
    """``mjtable diagnose --trace FILE``: replay the trace (controller.replay) and print its diagnosis.
    A self-test trace (header ``"run": "selftest"``, docs/trace.md section 8) is replayed through the
    self-test; its JSON is the object of ``mjtable selftest --json`` with ``trace``, ``run``,
    ``diagnosis`` (the first failing part), ``diagnoses`` (every failing part) and ``replay`` (with
    ``aborted``). Exit 0 when a diagnosis was found, 1 when none."""
    from hardware.trace import read_trace
    from controller.replay import is_selftest, replay, replay_selftest
    given = [o for o, v in (("--fault", args.fault), ("--sim", args.sim), ("--backend", args.backend),
                            ("--record", args.record), ("--seed", args.seed is not None)) if v]
    if given:
        raise TableCliError(f"--trace diagnoses a recorded trace: leave out {', '.join(given)}")
    trace = read_trace(args.trace)
    h = trace.header
    if is_selftest(trace):  # a self-test: replayed through run_selftest (controller.replay.replay_selftest)
        r = replay_selftest(trace)
        failed = [p.to_dict() for p in r.report.failed]
        found, aborted = bool(failed), r.aborted
        doc = {"trace": args.trace, "run": "selftest", **r.report.to_dict(),
               "diagnosis": failed[0] if failed else None, "diagnoses": failed}
        title = f"a self-test, {h.backend} backend, {h.software}, {len(trace.records)} records"
        body = r.report.render() if r.report.parts else "No part was judged."
    else:
        r = replay(trace)
        found, aborted = bool(findings(r.table)), None
        doc = diagnosis_json({"trace": args.trace}, r.cycles, r.table)
        title = f"{h.backend} backend, {h.software}, {h.tile_count} tiles, {len(trace.records)} records, {r.cycles} cycle(s)"
        body = _findings_text(r.table) if found else "No fault in the trace."
    if args.json:
        doc["replay"] = {"records": len(trace.records), "commands_checked": r.commands_checked,
                         "divergence": r.divergence.to_dict() if r.divergence else None, "ends": r.ends,
                         **({"aborted": aborted} if doc.get("run") == "selftest" else {})}
        out.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        return 0 if found else 1
    out.write(f"Trace {args.trace}: {title}.\n")
    if h.description:
        out.write(f"  {h.description}\n")
    out.write(body + "\n")
    for note in (f"the recorded self-test was aborted: {aborted}" if aborted else None,
                 r.ends["text"] if r.ends else None, r.divergence.describe() if r.divergence else None):
        if note:
            out.write(f"Note: {note}.\n")
    if not r.divergence and r.commands_checked:
        out.write(f"The replay sent the {r.commands_checked} recorded commands.\n")
    return 0 if found else 1


def cmd_selftest(args, out: IO[str]) -> int:
    """``mjtable selftest``: every part judged (``controller.selftest``); ``--record FILE`` writes the
    self-test's trace (header ``"run": "selftest"``, docs/trace.md section 8). Exit 0 when every part passed."""
    from controller.selftest import SelfTestAborted, run_selftest
    from controller.tracing import RecordingBackend
    backend, stored = _open(args)
    try:
        settings = _settings(backend, stored, None)
        with recording(args.record, backend, settings, run="selftest", fitted=sorted(backend.fitted),
                       seed=args.seed, faults=list(args.fault)) as trace:
            try:
                report = run_selftest(backend if trace is None else RecordingBackend(backend, trace))
            except SelfTestAborted as e:
                raise TableCliError(f"self-test aborted, every motor stopped: {e}") from None
        if args.json:
            out.write(json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n")
        else:
            out.write(report.render() + "\n")
        return 0 if report.passed else 1
    finally:
        backend.close()


def cmd_dice(args, out: IO[str]) -> int:
    import hardware
    stored = ST.load()
    method = Method.parse(args.method or stored.dice_method)
    profile = hardware.load_profile(args.profile or stored.profile)
    gear = args.tile_count if args.tile_count is not None else stored.tile_count
    if gear not in profile.gears:
        raise TableCliError(f"tile count {gear} is not supported: allowed are {', '.join(map(str, profile.gears))}")
    if args.values:
        try:
            values = tuple(int(v) for v in args.values.replace(" ", "").split(","))
        except ValueError:
            raise TableCliError(f"--values {args.values!r}: give the dice as numbers 1-6 separated by commas") from None
        source = "motor dice (values given)"
    else:
        values = roll(4 if method is Method.TWO_THROW else 2)
        source = "electronic dice"
    b = wall_break(method, values, dict(zip(SIDES, profile.stacks(gear))), _side_letter(args.dealer or stored.dealer))
    if args.json:
        out.write(json.dumps({"source": source, **b.to_dict()}, ensure_ascii=False, indent=2) + "\n")
    else:
        out.write(f"{method.value}, {source}, {gear} tiles:\n{b.describe()}\n{b.describe_zh()}\n")
    return 0


def cmd_config(args, out: IO[str]) -> int:
    """``mjtable config get KEY``, ``config set KEY VALUE`` (``controller.settings.validate``, saved) and
    ``config show`` (every setting, ``KEY = VALUE`` a line). Raises TableCliError for a missing or
    unknown key, SettingsError for a value that is not allowed."""
    current = ST.load(lenient=args.action == "set")  # a broken file can be repaired with config set
    field = ST.FIELDS
    if args.action == "show":
        if args.key is not None:
            raise TableCliError("config show takes no key: it lists every setting (config get KEY for one)")
        for key, name in field.items():
            value = getattr(current, name)
            out.write(f"{key} = {'none' if value is None else value}\n")
        return 0
    if args.key is None:
        raise TableCliError(f"config {args.action} needs a key: {', '.join(ST.KEYS)}")
    if args.key not in field:
        raise TableCliError(f"unknown setting {args.key!r}: settings are {', '.join(ST.KEYS)}")
    if args.action == "get":
        if args.value is not None:
            raise TableCliError("config get takes no value")
        value = getattr(current, field[args.key])
        out.write(f"{'none' if value is None else value}\n")
        return 0
    if args.value is None:
        raise TableCliError(f"config set {args.key} needs a value")
    new = ST.validate(args.key, args.value, current)
    path = ST.save(new)
    value = getattr(new, field[args.key])
    applies = "applies to the next photo read" if args.key == "confirm-below" else "applies from the next cycle"
    out.write(f"{args.key} = {'none' if value is None else value} (saved in {path}; {applies})\n")
    if args.key == "rules" and new.rules is not None:
        system = ST.rule_system(new.rules)
        out.write(f"  {system.name_en} ({system.name_zh}): tile-count = {new.tile_count}, dice-method = "
                  f"{new.dice_method}" + ("" if system.dice_method else " (the seed names no dice method the table "
                                          "can throw: the table's own is kept)") + "\n")
    return 0


def cmd_faults(args, out: IO[str]) -> int:
    from hardware.sim.faults import INJECTABLE, kinds_json
    if args.code:
        if args.list:
            raise TableCliError("give either a code (mjtable faults E21) or --list, not both")
        try:
            f = lookup(args.code)
        except KeyError as exc:
            raise TableCliError(exc.args[0]) from None
        out.write((json.dumps(code_sheet(f), ensure_ascii=False, indent=2) if args.json else render_code_sheet(f)) + "\n")
        return 0
    if args.json:
        data = catalogue_json()
        data["injectable"] = kinds_json()
        out.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
        return 0
    out.write("Fault codes:\n")
    for f in CATALOGUE:
        out.write(f"  {f.code}  {f.name:<32} {f.meaning_en}\n        {f.meaning_zh}\n")
    out.write("\nInjectable into the simulator (mjtable cycle --sim --fault KIND[:SIDE][:NAME=VALUE,...]):\n")
    for k in INJECTABLE.values():
        sides = "E/S/W/N" if k.sides else "-"
        only = "" if len(k.backends) == 3 else f"  (backend {', '.join(k.backends)} only)"
        out.write(f"  {k.name:<24} sides {sides:<8}{only}\n")
        for p in k.params:
            unit = f" {p.unit}" if p.unit else ""
            out.write(f"      {p.name}={p.default:g}{unit}  (allowed {p.low:g}..{p.high:g}{unit}): {p.meaning}\n")
    out.write("  e.g. --fault lift-short:W:reach=0.92, --fault lift-slow:N:wear=0.1, --fault tile-jam:after=2\n")
    return 0


COMMANDS = {"cycle": cmd_cycle, "diagnose": cmd_diagnose, "selftest": cmd_selftest, "dice": cmd_dice,
            "config": cmd_config, "faults": cmd_faults}
