"""The ``mjtable`` command line: the parser, the scoring commands and the demo.

* ``mjtable score HAND [--self-drawn] [--seat-wind E] [--prevalent-wind E] [--flowers N]
  [--last-tile] [--kong-replacement] [--robbing-kong] [--fourth-tile] [--rules mcr|mcr-1998] [--json]``
* ``mjtable score --batch FILE`` (``-`` for standard input): JSON lines in, JSON lines out.
* ``mjtable score HAND --rules riichi|taiwan|classic|... [that system's options]`` and ``mjtable
  rules --list [--json]``: the other rule systems (``app.rules_cli``, ``scoring.systems``).
* ``mjtable fans [--json]``: the fan table.
* ``mjtable demo``: one simulated table cycle, the dice, a table scene and hands scored.
* the table commands (``cycle``, ``diagnose``, ``selftest``, ``dice``, ``config``, ``faults``) come
  from ``app.table_cli``, ``recognize``/``score-photo`` from ``app.vision_cli``,
  ``serve`` from ``app.service_cli`` and ``doctor`` from ``app.doctor_cli``.

Errors are one line on standard error with a non-zero exit code (1 for a hand or input that
cannot be scored, 2 for a command-line usage error), never a traceback. SIGTERM unwinds like
Ctrl-C, so every motor is stopped on the way out.
"""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata
from pathlib import Path
from typing import IO, Callable, Iterable, Sequence

import scoring
import scoring.systems
from controller.table_scoring import score_from_options
from scoring import FANS, MELDED_AND_CONCEALED_KONG, ScoreResult, ScoringError, WinContext, tile_name
from scoring.analysis import ShantenReport, WaitsReport, analyse_shanten, find_waits
from scoring.hand import display_key
from scoring.shanten import Shape

from . import cli_args, doctor_cli, rules_cli, service_cli, table_cli, vision_cli

#: Keys a batch line may carry as input (see ``mjtable score --batch``): the win options of
#: ``WinContext.OPTIONS`` and these, which ``_score_line`` reads itself.
SCORE_LINE_KEYS = ("id", "hand", "rules")
BATCH_KEYS = SCORE_LINE_KEYS[:2] + tuple(WinContext.OPTIONS) + SCORE_LINE_KEYS[2:]
#: Keys that annotate a line (as in ../shared/data/mcr/rulebook_examples.jsonl) and are ignored.
BATCH_ANNOTATIONS = ("expected", "fan_section", "note", "comment")

DEMO_HANDS: tuple[tuple[str, dict, str], ...] = (
    ("[EEE,1][SSSS,1]55pWWWNNN", {"self_drawn": True}, "Big Four Winds, self-drawn"),
    ("123m456m789m234p5s5s", {"seat_wind": "S"}, "a concealed Pure Straight on a discard"),
    ("[123m,1]55789m12789s3s", {"self_drawn": True, "flowers": 2}, "Mixed Double Chow, Two Terminal Chows"),
    ("1m9m1s9s1p9pESWNCFPP", {"self_drawn": True}, "Thirteen Orphans"),
    ("[234s,1]345m345p67s88s5s", {}, "not enough: under the 8-point minimum"),
)


def _width(s: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


def _pad(s: str, width: int) -> str:
    return s + " " * max(0, width - _width(s))


def format_result(result: ScoreResult) -> str:
    """A readable breakdown: one line per fan (number, Chinese and English name, points, count,
    the sets that made it), the total, legality and the payments."""
    lines = [f"Hand   {result.hand}    rules: {result.rules}, shape: {result.shape}",
             f"  {'#':>3}  {_pad('番种', 12)}{_pad('Fan', 34)}{'pts':>4} {'x':>2}  tiles"]
    for f in result.fans:
        num = "-" if f.number is None else str(f.number)
        count = f"x{f.count}" if f.count > 1 else ""
        lines.append(f"  {num:>3}  {_pad(f.name_zh, 12)}{_pad(f.name_en, 34)}{f.points:>4} {count:>2}  "
                     f"{' '.join(f.tiles)}")
    flowers = result.total - result.fan_points
    lines.append(f"Total  {result.total} points ({result.fan_points} from fans, {flowers} from flowers)")
    if result.legal:
        p = result.payments
        assert p is not None
        if p.self_drawn:
            lines.append(f"Legal win (>= {scoring.MINIMUM_POINTS} points without flowers). Payments (第十条): "
                         f"self-drawn, each of the three others pays {scoring.BASE_POINTS} + {result.total} = "
                         f"{p.from_each_other}; the winner receives {p.winner_receives}.")
        else:
            lines.append(f"Legal win (>= {scoring.MINIMUM_POINTS} points without flowers). Payments (第十条): "
                         f"the discarder pays {scoring.BASE_POINTS} + {result.total} = {p.from_discarder}, "
                         f"each other player {p.from_each_other}; the winner receives {p.winner_receives}.")
    else:
        lines.append(f"Not a legal win: {result.fan_points} points without flowers, the minimum is "
                     f"{scoring.MINIMUM_POINTS} (起和分). No payments.")
    return "\n".join(lines)


def _no_constants(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _unique_keys(pairs: list) -> dict:
    keys = [k for k, _ in pairs]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    if dupes:
        raise ValueError(f"key {dupes[0]!r} appears twice")
    return dict(pairs)


def _score_line(data: dict) -> dict:
    """Score one batch line's hand with its options (``hand``, ``rules``, the win options)."""
    if "hand" not in data:
        raise ScoringError("bad-value", "the key 'hand' is missing")
    result = score_from_options(data["hand"], data, SCORE_LINE_KEYS)
    return {"legal": result.legal, "total": result.total, "fans": [f.to_dict() for f in result.fans],
            "payments": result.payments.to_dict() if result.payments else None}


def _batch_line(line: str, keys: Sequence[str] = BATCH_KEYS, compute: Callable[[dict], dict] = _score_line) -> dict:
    """Read one batch line and ``compute`` its answer; never raises (every problem becomes an
    error object). ``keys`` are the keys a line may carry (the first two: ``id`` and ``hand``)."""
    try:
        data = json.loads(line, parse_constant=_no_constants, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as e:
        return _error(None, "bad-json", f"not a JSON object: {e.msg} at column {e.colno}")
    except (ValueError, RecursionError) as e:
        msg = "nested too deeply" if isinstance(e, RecursionError) else str(e)
        return _error(None, "bad-json", f"not a usable JSON object: {msg}")
    if not isinstance(data, dict):
        return _error(None, "bad-json", "each line must be a JSON object, e.g. {\"hand\": \"123m456m789m234p5s5s\"}")
    ident = data.get("id")
    if not (ident is None or isinstance(ident, (str, int, float))):
        return _error(None, "bad-value", "id must be a string or a number")
    unknown = [k for k in data if k not in keys and k not in BATCH_ANNOTATIONS]
    try:
        if compute is _score_line:
            rules = data.get("rules", "mcr")
            if not isinstance(rules, str):
                raise ScoringError("bad-value", f"rules must be a string, got {rules!r}")
            if rules not in scoring.PROFILES or "discarder" in data:
                return rules_cli.batch_line(ident, {"rules": "mcr", **data}, BATCH_ANNOTATIONS)
            # the keys are checked by WinContext.from_options, as in POST /api/score
            return {"id": ident, "ok": True, **_score_line({k: v for k, v in data.items() if k not in BATCH_ANNOTATIONS})}
        if unknown:
            raise ScoringError("bad-value", f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: "
                               f"{', '.join(keys)}")
        if "hand" not in data:
            raise ScoringError("bad-value", "the key 'hand' is missing")
        answer = compute({k: v for k, v in data.items() if k in keys})
    except ScoringError as e:
        return _error(ident, e.code, e.message)
    except Exception as e:  # noqa: BLE001 - the batch goes on; the line says what failed
        return _error(ident, "internal-error", f"{type(e).__name__}: {e} (please report this hand)")
    return {"id": ident, "ok": True, **answer}


def _error(ident, code: str, message: str) -> dict:
    return {"id": ident, "ok": False, "error": {"code": code, "message": message}}


def run_batch(lines: Iterable[bytes | str], out: IO[str], keys: Sequence[str] = BATCH_KEYS,
              compute: Callable[[dict], dict] = _score_line) -> int:
    """Score JSON lines (or ``compute`` another answer from each, reading ``keys``); write one
    JSON line per non-blank input line, in order.

    Lines may be bytes (each decoded as UTF-8 on its own, so one bad byte spoils only its line)
    or text. A UTF-8 byte-order mark at the start is ignored.

    Returns:
        The number of lines that gave an error object.
    """
    failed = 0
    for number, raw in enumerate(lines, 1):
        if isinstance(raw, bytes):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                res = _error(None, "bad-json", f"line {number} is not UTF-8 text (byte {e.start + 1})")
                failed += 1
                out.write(json.dumps(res, ensure_ascii=False) + "\n")
                continue
        else:
            line = raw
        if number == 1:
            line = line.lstrip("\ufeff")
        if not line.strip():
            continue
        res = _batch_line(line, keys, compute)
        failed += not res["ok"]
        out.write(json.dumps(res, ensure_ascii=False) + "\n")
        out.flush()
    return failed


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (the usage is one ``--help`` away)."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="mjtable", description="Runs an automatic mahjong table (自动麻将机) and "
                                "scores hands by the Chinese Official rules (MCR).")
    p.add_argument("--version", action="version", version="mjtable 0.1.0")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("score", help="score a winning hand (MCR, all 81 fans)",
                       description="Score a winning hand in MCR notation, e.g. '[EEE,2][SSSS,1]WWWNN55pN' "
                       "(melds in brackets, winning tile last).")
    s.add_argument("hand", nargs="?", help="the hand; omit with --batch")
    s.add_argument("--batch", metavar="FILE", help="score JSON lines from FILE ('-' for standard input)")
    _win_options(s, single_win=True)
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    rules_cli.add_score_options(s)
    s.add_argument("--win", action="append", metavar="SEAT:HAND", type=rules_cli.seat_and_hand,
                   help="Changsha, several winners on one discard (通炮): each winner's seat and hand, e.g. "
                   "--win S:123m456m789m22p55s5s --win W:...; with --discarder, instead of HAND")
    rules_cli.add_parsers(sub)

    _analysis_parser(sub, "waits", "the tiles a 13-tile hand waits on (听牌), each scored",
                     "Every tile that completes a 13-tile hand (a kong counting 3), with its score on a discard and "
                     "self-drawn, whether it reaches the 8-point minimum, and how many copies are unseen. 和绝张 is "
                     "applied by itself where the other three copies are visible.", win_options=True)
    _analysis_parser(sub, "shanten", "how far a 13- or 14-tile hand is from ready (向听), and its useful tiles",
                     "The shanten of each shape and overall; for 13 tiles the useful tiles (有效牌), for 14 tiles each "
                     "discard with the useful tiles after it, best first.", win_options=False)

    f = sub.add_parser("fans", help="list the 81 fans of the MCR table")
    f.add_argument("--json", action="store_true", help="print as JSON")

    vision_cli.add_parsers(sub)
    table_cli.add_parsers(sub)
    service_cli.add_parsers(sub)
    doctor_cli.add_parsers(sub)
    from hall.cli import add_parser as _hall_parser  # the composition root wires the hall in (issue #22)
    _hall_parser(sub)
    dm = sub.add_parser("demo", help="one simulated table cycle you can watch, the dice, then hands scored")
    dm.add_argument("--speed", type=float, default=8.0,
                    help="simulated machine seconds per wall second (default 8: a cycle takes a few seconds; 0: instant)")
    return p


def _analysis_parser(sub, name: str, help: str, description: str, win_options: bool) -> None:
    """The parser of ``waits`` or ``shanten``: a hand or ``--batch``, ``--seen``, ``--json``."""
    p = sub.add_parser(name, help=help, description=description)
    p.add_argument("hand", nargs="?", help="the hand, melds first, e.g. '[123m,1]456m789m234p5s'; omit with --batch")
    p.add_argument("--batch", metavar="FILE", help="JSON lines from FILE ('-' for standard input)")
    p.add_argument("--seen", metavar="TILES", help="tiles visible elsewhere (discards, others' melds), e.g. 5s5s1pE")
    if win_options:
        _win_options(p, single_win=False)
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def _win_options(p: argparse.ArgumentParser, single_win: bool) -> None:
    """The win options of ``score`` (``single_win``) or ``waits`` (``cli_args.win_options``), and ``--rules``."""
    cli_args.win_options(p, single_win=single_win)
    if single_win:
        p.add_argument("--rules", choices=list(scoring.systems.SYSTEMS), default="mcr",
                       help="the rule system: mcr (current practice, default), mcr-1998 (the 1998 text literally), "
                       "or another (mjtable rules --list); each takes its own options")
    else:
        p.add_argument("--rules", choices=sorted(scoring.PROFILES), default="mcr",
                       help="mcr (current practice, default) or mcr-1998 (the 1998 text literally)")


_SCORE_DEFAULTS = {**WinContext.OPTIONS, "rules": "mcr", "json": False}


def _cmd_score(args: argparse.Namespace, out: IO[str]) -> int:
    if args.batch is not None:
        if args.hand is not None:
            raise _UsageError("give either a HAND or --batch FILE, not both")
        given = [f"--{k.replace('_', '-')}" for k in {**{k: 0 for k, d in _SCORE_DEFAULTS.items() if getattr(args, k) != d},
                                                       **rules_cli.given_options(args)}] + (["--win"] if args.win else [])
        if given:
            raise _UsageError(f"score options ({', '.join(given)}) apply only to a single HAND; with --batch give them per line "
                              f"(keys {', '.join(BATCH_KEYS[2:])})")
        failed = _run_batch_file(args.batch, out)
        return 1 if failed else 0
    if args.win:
        if args.hand is not None:
            raise _UsageError("give either a HAND or the winners' hands with --win SEAT:HAND (通炮), not both")
        return rules_cli.cmd_score_discard(args, out)
    if args.hand is None:
        raise _UsageError("give a HAND to score (e.g. mjtable score 123m456m789m234p55s) or --batch FILE")
    if rules_cli.wants_registry(args):
        return rules_cli.cmd_score(args, out)
    result = score_from_options(args.hand, {**cli_args.given_win_options(args), "rules": args.rules})
    if args.json:
        out.write(json.dumps(result.to_dict(), ensure_ascii=False, indent=2) + "\n")
    else:
        out.write(format_result(result) + "\n")
    return 0


def _run_batch_file(path: str, out: IO[str], keys: Sequence[str] = BATCH_KEYS,
                    compute: Callable[[dict], dict] = _score_line) -> int:
    """``run_batch`` over the file ``path`` (``-``: standard input); the number of failed lines."""
    if path == "-":
        return run_batch(sys.stdin.buffer, out, keys, compute)
    try:
        with open(path, "rb") as fh:
            return run_batch(fh, out, keys, compute)
    except OSError as e:
        raise _InputError(f"cannot read batch file {path!r}: {e.strerror}") from None


#: Keys of a ``waits --batch`` line and of a ``shanten --batch`` line.
WAITS_KEYS = ("id", "hand", "seen", "seat_wind", "prevalent_wind", "flowers", "last_tile", "kong_replacement",
              "robbing_kong", "rules")
SHANTEN_KEYS = ("id", "hand", "seen")


def _waits_line(data: dict) -> dict:
    return find_waits(data["hand"], **{k: v for k, v in data.items() if k not in ("id", "hand")}).to_dict()


def _shanten_line(data: dict) -> dict:
    return analyse_shanten(data["hand"], data.get("seen")).to_dict()


def _tiles(codes) -> str:
    """Tiles in the order the hand is written (m, p, s, honours), one name each."""
    return " ".join(tile_name(t) for t in sorted(codes, key=display_key))


def _fan_list(fans) -> str:
    return ", ".join(f"{f.name_zh} {f.name_en} {f.points}" + (f" x{f.count}" if f.count > 1 else "") for f in fans)


def format_waits(report: WaitsReport) -> str:
    """The waits as text: one block per winning tile (unseen copies, both scores, their fans)."""
    if report.shanten > 0:
        return (f"Hand   {report.hand}\nNot ready: shanten {report.shanten} (向听), no waits; "
                "'mjtable shanten' lists the useful tiles.")
    if not report.waits:
        return (f"Hand   {report.hand}\nReady in shape, but every winning tile is one the hand already holds "
                "four of: no tile can win it.")
    waits = sorted(report.waits, key=lambda w: display_key(w.tile))  # as the hand is written (m, p, s, honours)
    lines = [f"Hand   {report.hand}   ready (听牌), {len(waits)} wait(s): {' '.join(tile_name(w.tile) for w in waits)}"]
    if not any(r is not None and r.legal for w in waits for r in (w.discard, w.self_drawn)):
        lines.append(f"  no wait reaches {scoring.MINIMUM_POINTS} points (起和分): the hand may not win on any of them")
    for w in waits:
        lines.append(f"  {tile_name(w.tile):<3} {w.unseen} unseen" + ("  (dead: every copy is visible)" if not w.unseen else ""))
        for label, r in (("discard", w.discard), ("self-drawn", w.self_drawn)):
            if r is None:
                lines.append(f"      {label:<11} no such win (a kong of this tile cannot be robbed)")
                continue
            verdict = "" if r.legal else (
                f"  under {scoring.MINIMUM_POINTS} points: may not win on it (起和分)" if r.fan_points == r.total else
                f"  {r.fan_points} without flowers, under {scoring.MINIMUM_POINTS}: may not win on it "
                "(起和分: flowers do not count)")
            lines.append(f"      {label:<11} {r.total:>3} points{verdict}: {_fan_list(r.fans)}")
    return "\n".join(lines)


_SHAPE_LABELS = {Shape.REGULAR: "regular", Shape.SEVEN_PAIRS: "seven pairs", Shape.THIRTEEN_ORPHANS: "thirteen orphans",
                 Shape.HONORS_AND_KNITTED: "honors and knitted", Shape.KNITTED_STRAIGHT: "knitted straight"}


def format_shanten(report: ShantenReport) -> str:
    """The shanten analysis as text: overall, by shape, then the useful tiles or the discards."""
    word = f"{report.shanten}" + {-1: ", complete (和牌)", 0: ", ready (听牌)"}.get(report.shanten, " (向听)")
    lines = [f"Hand   {report.hand}   shanten {word}",
             "  by shape: " + ", ".join(f"{_SHAPE_LABELS[s]} {'-' if v is None else v}" for s, v in report.by_shape.items())]
    if report.useful is not None:
        lines.append(f"  useful (有效牌): {_tiles(report.useful)}  ({report.unseen} unseen)")
    for d in report.discards:
        lines.append(f"  discard {tile_name(d.tile):<3} shanten {d.shanten}  useful {_tiles(d.useful)}  ({d.unseen} unseen)")
    return "\n".join(lines)


def _analysis_command(args: argparse.Namespace, out: IO[str], keys: Sequence[str], compute: Callable[[dict], dict],
                      single: Callable[[], object], fmt: Callable) -> int:
    """``waits`` and ``shanten``: one hand, or ``--batch`` lines (options then apply per line)."""
    if args.batch is not None:
        if args.hand is not None:
            raise _UsageError("give either a HAND or --batch FILE, not both")
        given = [f"--{k.replace('_', '-')}" for k, default in _SCORE_DEFAULTS.items()
                 if k in keys + ("json",) and getattr(args, k, default) != default] + (["--seen"] if args.seen else [])
        if given:
            raise _UsageError(f"options ({', '.join(given)}) apply only to a single HAND; with --batch give them per "
                              f"line (keys {', '.join(keys[2:])})")
        return 1 if _run_batch_file(args.batch, out, keys, compute) else 0
    if args.hand is None:
        raise _UsageError(f"give a HAND (e.g. mjtable {args.command} 123m456m789m234p5s) or --batch FILE")
    report = single()
    out.write((json.dumps(report.to_dict(), ensure_ascii=False, indent=2) if args.json else fmt(report)) + "\n")
    return 0


def _cmd_waits(args: argparse.Namespace, out: IO[str]) -> int:
    return _analysis_command(args, out, WAITS_KEYS, _waits_line, lambda: find_waits(
        args.hand, args.seen, seat_wind=args.seat_wind, prevalent_wind=args.prevalent_wind, flowers=args.flowers,
        last_tile=args.last_tile, kong_replacement=args.kong_replacement, robbing_kong=args.robbing_kong,
        rules=args.rules), format_waits)


def _cmd_shanten(args: argparse.Namespace, out: IO[str]) -> int:
    return _analysis_command(args, out, SHANTEN_KEYS, _shanten_line, lambda: analyse_shanten(args.hand, args.seen),
                             format_shanten)


def _cmd_fans(args: argparse.Namespace, out: IO[str]) -> int:
    table = list(FANS.values()) + [MELDED_AND_CONCEALED_KONG]
    if args.json:
        out.write(json.dumps({"fans": [{"number": f.number, "name_zh": f.name_zh, "name_en": f.name_en,
                                        "points": f.points, "definition": f.definition} for f in table]},
                             ensure_ascii=False, indent=2) + "\n")
        return 0
    for f in table:
        num = "-" if f.number is None else str(f.number)
        out.write(f"{num:>3}  {f.points:>2}  {_pad(f.name_zh, 12)}{_pad(f.name_en, 34)}{f.definition}\n")
    return 0


def _cmd_demo(args: argparse.Namespace, out: IO[str]) -> int:
    """The main job on the simulator: one table cycle at a speed a person can watch, the dice and
    the wall break, then hands scored."""
    import hardware

    from controller.cycle import Settings
    from controller.runtime import TableRuntime

    stored = table_cli.ST.load()
    out.write("mjtable demo: one cycle of a simulated four-port table (自动麻将机), then scoring (MCR)\n\n")
    backend = hardware.open_table(hardware.TableSpec(profile=stored.profile))  # simulated, a random seed
    try:
        settings = Settings.from_profile(backend.profile, stored.tile_count, stored.dice_method, stored.dealer)
        speed = args.speed
        out.write(f"$ mjtable cycle --sim --tile-count {stored.tile_count} --speed {speed:g}\n")
        rt = TableRuntime(backend, settings, progress=table_cli._progress_printer(out, backend),
                          pace=1.0 / speed if speed > 0 else 0.0)
        t = rt.run_cycle()
        out.write(table_cli._summary(t) + "\n")
    finally:
        backend.close()
    photo = Path(__file__).resolve().parents[1] / "demo" / "table_hand.jpg"
    if photo.exists():
        out.write("\n$ mjtable score-photo demo/table_hand.jpg   # a table scene made of real tile crops "
                  "(demo/README.md)\n")
        out.flush()
        vision_cli.cmd_score_photo(argparse.Namespace(
            image=[str(photo)], self_drawn=False, seat_wind="E", prevalent_wind="E", flowers=None, last_tile=False,
            kong_replacement=False, robbing_kong=False, fourth_tile=False, rules="mcr", json=False, annotate=None,
            accept_uncertain=False, table_camera=False, confirm_below=None), out, sys.stderr)
    for hand, flags, what in DEMO_HANDS[:2]:
        shown = " ".join(f"--{k.replace('_', '-')}" + ("" if v is True else f" {v}")
                         for k, v in flags.items() if v is not False)
        out.write(f"\n$ mjtable score '{hand}' {shown}   # {what}\n")
        out.write(format_result(score_from_options(hand, flags)) + "\n")
    out.write("\nMore: mjtable cycle --sim --fault lift-short:W, mjtable selftest --sim, mjtable faults --list, "
              "mjtable --help\n")
    return 0 if t.fault is None else 1


class _UsageError(Exception):
    pass


def _table_errors() -> tuple[type[BaseException], ...]:
    from hardware import HardwareError

    from service.doctor import DoctorError

    from controller.dice import DiceError
    from controller.settings import SettingsError
    return (table_cli.TableCliError, SettingsError, DiceError, HardwareError, DoctorError)


_TABLE_ERRORS = _table_errors()


class _InputError(Exception):
    pass


def _stop_on_sigterm() -> None:
    """SIGTERM (systemctl stop, kill) unwinds like Ctrl-C, so the backend is closed and every
    motor stopped on the way out."""
    import signal

    def handler(signum, frame):
        raise KeyboardInterrupt
    try:
        signal.signal(signal.SIGTERM, handler)
    except ValueError:
        pass  # not the main thread (tests call main() from elsewhere)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mjtable`` console script. Returns the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    out = sys.stdout
    if args.command not in ("serve", "hall"):  # the servers handle SIGTERM themselves
        _stop_on_sigterm()
    try:
        if args.command == "score":
            return _cmd_score(args, out)
        if args.command == "rules":
            return rules_cli.cmd_rules(args, out)
        if args.command == "waits":
            return _cmd_waits(args, out)
        if args.command == "shanten":
            return _cmd_shanten(args, out)
        if args.command == "fans":
            return _cmd_fans(args, out)
        if args.command == "demo":
            return _cmd_demo(args, out)
        if args.command == "serve":
            return service_cli.cmd_serve(args, out)
        if args.command == "doctor":
            return doctor_cli.cmd_doctor(args, out)
        if args.command == "unit":
            return service_cli.cmd_unit(args, out)
        if args.command == "token":
            return service_cli.cmd_token(args, out)
        if args.command == "hall":
            from hall.cli import cmd_hall
            return cmd_hall(args, out, bind=service_cli._bind)
        if args.command in vision_cli.HANDLERS:
            return vision_cli.HANDLERS[args.command](args, out)
        if args.command in table_cli.COMMANDS:
            return table_cli.COMMANDS[args.command](args, out)
        parser.print_help()
        return 2
    except ScoringError as e:
        print(f"mjtable: {e.code}: {e.message}", file=sys.stderr)
        return 1
    except (*_TABLE_ERRORS, _InputError) as e:
        print(f"mjtable: {e}", file=sys.stderr)
        return 1
    except _UsageError as e:
        print(f"mjtable: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        moving = args.command in ("cycle", "diagnose", "selftest", "demo")
        print("mjtable: interrupted" + ("; every motor was stopped" if moving else ""), file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
