"""``mjtable rules`` and the rule-system side of ``mjtable score`` (``--rules riichi|taiwan|classic|...``).

* ``mjtable rules --list [--json]``: the registered systems with tile set, hand size, options.
* ``mjtable score HAND --rules X [options of X]``: scored by ``scoring.systems``; an option of
  another system is refused with X's list. MCR hands keep ``app.cli``'s own output unless an
  option only the registry knows (``--discarder``) is given.
* batch lines with a ``rules`` other than mcr/mcr-1998 take that system's option keys.

Wired into ``mjtable`` by ``app/cli.py`` (``add_parsers``, ``add_score_options``,
``wants_registry``, ``cmd_score``, ``batch_line``, ``cmd_rules``).
"""

from __future__ import annotations

import argparse
import json
from typing import IO, Any

from scoring import PROFILES, ScoringError, systems

from . import cli_args

def add_parsers(sub) -> None:
    r = sub.add_parser("rules", help="the rule systems that can score (MCR, riichi, Taiwan, classic ...)",
                       description="List the rule systems: tile set, hand size, options, dice rule.")
    r.add_argument("--list", action="store_true", help="list the systems (the default)")
    r.add_argument("--json", action="store_true", help="print as JSON")


def _flag_type(o: systems.Option):
    if o.kind == "int":
        return int
    if o.kind in ("seat", "seat?"):
        return cli_args.wind
    return str


def add_score_options(s: argparse.ArgumentParser) -> None:
    """Add a flag for every rule-system option ``s`` does not have yet (MCR's exist already); the
    parser's defaults of them go with the parsed arguments (``given_options``), since ``score`` and
    ``score-photo`` differ (``--flowers``: 0, or the photo's)."""
    defaults: dict[str, Any] = {}
    for name, o in systems.all_options().items():
        flag = "--" + name.replace("_", "-")
        if flag not in s._option_string_actions:
            if o.kind == "bool":  # a house rule on by default can be turned off: --no-open-tanyao
                action = argparse.BooleanOptionalAction if o.default else "store_true"
                s.add_argument(flag, action=action, default=None, help=o.help)
            else:
                s.add_argument(flag, type=_flag_type(o), default=None, help=o.help,
                               choices=o.choices if o.kind == "choice" else None)
        defaults[name] = s.get_default(name)
    s.set_defaults(rule_option_defaults=defaults)


def given_options(args: argparse.Namespace) -> dict[str, Any]:
    """The rule-system options given on the command line (those that differ from their parser's default)."""
    defaults = getattr(args, "rule_option_defaults", {})
    return {k: getattr(args, k) for k, d in defaults.items() if getattr(args, k, d) != d}


def wants_registry(args: argparse.Namespace) -> bool:
    """Score through ``scoring.systems``: a system other than MCR, or an option MCR's own path lacks."""
    mcr = systems.get("mcr")
    return args.rules not in PROFILES or any(k == "discarder" or mcr.option(k) is None for k in given_options(args))


def format_result(r: systems.SystemResult) -> str:
    """A readable breakdown: one line per element, the total, legality, notes and the seat payments."""
    s = systems.get(r.system)
    lines = [f"Hand   {r.hand}    rules: {r.system} ({s.name_zh}, {s.name_en})"]
    for e in r.elements:
        ja = f" {e.name_ja}" if e.name_ja else ""
        count = f" x{e.count}" if e.count > 1 else ""
        lines.append(f"  {e.name_zh}{ja}  {e.name_en}: {e.value} {e.unit.value}{count}  {' '.join(e.tiles)}")
    extra = ", ".join(f"{k} {v}" for k, v in r.details.items() if not isinstance(v, (list, dict)))
    lines.append(f"Total  {r.total} {r.unit.value}" + (f" ({extra})" if extra else ""))
    lines.append("Legal win." if r.legal else "Not a win under these rules.")
    lines.extend(f"Note: {n}" for n in r.notes)
    if r.payments is not None:
        lines.append("Payments (+ receives): " + "  ".join(f"{k} {v:+d}" for k, v in r.payments.items()))
    return "\n".join(lines)


def cmd_score(args: argparse.Namespace, out: IO[str]) -> int:
    """Score ``args.hand`` by ``args.rules`` with the options given (raises ScoringError)."""
    result = systems.score(args.rules, args.hand, given_options(args))
    if args.json:
        out.write(json.dumps(result.to_dict(), ensure_ascii=False, indent=2) + "\n")
    else:
        out.write(format_result(result) + "\n")
    return 0


def batch_line(ident: Any, data: dict, annotations: tuple[str, ...]) -> dict:
    """One batch line for a system other than MCR: ``hand``, ``rules`` and the system's option keys.

    Returns ``{"id", "ok": true, "rules", "legal", "total", "unit", "elements", "payments", "details",
    "notes"}``; raises ScoringError for a bad line (the caller turns it into an error object).
    """
    if "hand" not in data:
        raise ScoringError("bad-value", "the key 'hand' is missing")
    opts = {k: v for k, v in data.items() if k not in ("id", "hand", "rules") + annotations}
    result = systems.score(data["rules"], data["hand"], opts)
    d = result.to_dict()
    return {"id": ident, "ok": True, **{k: d[k] for k in ("rules", "legal", "total", "unit", "elements",
                                                         "payments", "details", "notes")}}


def seat_and_hand(value: str) -> tuple[str, str]:
    """``"S:123m..."`` (or ``S=...``; a seat E/S/W/N, 东南西北) -> ``("S", "123m...")``: a ``--win`` value."""
    seat, sep, hand = value.partition(":") if ":" in value else value.partition("=")
    if not sep or not hand.strip():
        raise argparse.ArgumentTypeError(f"{value!r}: give a winner as SEAT:HAND, e.g. S:123m456m789m22p55s5s")
    return cli_args.wind(seat), hand.strip()


def cmd_score_discard(args: argparse.Namespace, out: IO[str]) -> int:
    """Several winners on one discard (通炮, Changsha): ``--win SEAT:HAND`` per winner, ``--discarder``, and
    the Changsha options shared by every hand (birds, house rules). Each hand is scored as if alone
    (``scoring.systems.changsha.score_discard``), then the payments are summed per seat.

    Prints each winner's breakdown and the payments together (``--json``: ``{"rules", "discarder", "wins":
    {seat: result}, "payments"}``). Raises ScoringError naming the winner for a bad hand, and for
    ``--win`` without ``--rules changsha``, without ``--discarder``, or with options set per winner."""
    from scoring.systems.changsha import score_discard

    if args.rules != "changsha":
        raise ScoringError("contradictory-flags", f"several winners on one discard (通炮, --win) are a Changsha rule "
                           f"(seed 004): give --rules changsha, not {args.rules}")
    opts = given_options(args)
    set_per_winner = sorted(k for k in opts if k in ("seat_wind", "self_drawn"))
    if set_per_winner:
        raise ScoringError("contradictory-flags", f"with --win the seat is each winner's and the win is on a discard: "
                           f"leave out {', '.join('--' + k.replace('_', '-') for k in set_per_winner)}")
    discarder = opts.pop("discarder", None)
    if discarder is None:
        raise ScoringError("contradictory-flags", "several winners on one discard: give the seat that discarded "
                           "with --discarder E|S|W|N")
    wins: dict[str, str] = {}
    for seat, hand in args.win:
        if seat in wins:
            raise ScoringError("contradictory-flags", f"--win {seat} is given twice: one hand per winner")
        wins[seat] = hand
    results, net = score_discard(wins, discarder, opts)
    if args.json:
        out.write(json.dumps({"rules": "changsha", "discarder": discarder,
                              "wins": {s: r.to_dict() for s, r in results.items()}, "payments": net},
                             ensure_ascii=False, indent=2) + "\n")
        return 0
    for seat, r in results.items():
        out.write(f"Winner {seat} (on {discarder}'s discard)\n{format_result(r)}\n\n")
    out.write(f"通炮: {len(results)} winners on {discarder}'s discard; payments together (+ receives): "
              + "  ".join(f"{k} {v:+d}" for k, v in net.items()) + "\n")
    return 0


def cmd_rules(args: argparse.Namespace, out: IO[str]) -> int:
    if args.json:
        out.write(json.dumps({"systems": [s.to_dict() for s in systems.SYSTEMS.values()]},
                             ensure_ascii=False, indent=2) + "\n")
        return 0
    for s in systems.SYSTEMS.values():
        sizes = "/".join(map(str, s.hand_sizes))
        out.write(f"{s.name:<10} {s.name_zh}  {s.name_en}\n"
                  f"           tiles {s.tile_set.description}; hand {sizes} tiles; total in {s.unit.value}\n"
                  f"           options: {', '.join(o.name for o in s.options)}\n"
                  f"           dice: {s.dice_rule}\n")
    return 0
