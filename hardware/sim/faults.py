"""Fault injection: the faults a technician meets, by stable kind name.

Sources: the technician's answers in ``shared/seeds/002_4c2a73aa42bc09ab.txt`` (top):
升牌杆不到位 / walls uneven (lift-short, lift-late); the tile-count gear table behind the
panel (wrong-gear); 输送带电机与主板的连接线断了或者松了 (feeder-wire-loose);
输送带的轮子被东西卡住了 (feeder-jammed); 查看升牌磁控和磁铁 ... 正负极 (lift sensor
polarity, stuck sensors); 把升牌电机和电容换了 (lift-slow: a failing motor capacitor).

A spec string is ``KIND[:SIDE][:NAME=VALUE,...]`` (side E, S, W or N), e.g. ``lift-short:W``,
``lift-short:W:reach=0.92``, ``tile-jam:after=2.5``. :func:`parse_fault` checks it against
:data:`INJECTABLE`, which says per kind whether it takes a side, on which backends it can be
injected and which parameters it takes (:class:`FaultParam`: default, allowed range, unit).
The parameters are the fault's severity (how short the lift stops, how fast the capacitor
wears): they belong to the fault, not to the machine profile, and default to the values the
profile used to carry. The same parser serves ``--fault`` on the command line and the body
of ``POST /api/sim/fault``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import FaultSpecError
from ..vocabulary import Side

BACKENDS = ("sim", "gpio", "mcu")
_ALL = BACKENDS
_MCU = ("mcu",)
_JAM_FITTED = ("sim", "mcu")  # the default GPIO build has no jam sensor


@dataclass(frozen=True)
class FaultParam:
    """One parameter of a fault kind: ``default`` and the allowed range ``low``..``high``
    (inclusive), in ``unit`` ("" for a plain ratio); ``meaning`` says what it sets."""

    name: str
    default: float
    low: float
    high: float
    unit: str
    meaning: str

    def check(self, kind: str, value: float) -> float:
        """``value`` if it lies in the allowed range, else FaultSpecError naming the range."""
        if not (isinstance(value, (int, float)) and not isinstance(value, bool)
                and self.low <= value <= self.high):
            raise FaultSpecError(f"fault {kind}: {self.name} must be {self.low:g}..{self.high:g}"
                                 f"{' ' + self.unit if self.unit else ''}, got {value!r}")
        return float(value)

    def as_json(self) -> dict:
        return {"name": self.name, "default": self.default, "min": self.low, "max": self.high,
                "unit": self.unit, "meaning": self.meaning}


@dataclass(frozen=True)
class FaultKind:
    """One injectable fault: ``sides`` is True when it needs a side; ``backends`` lists
    where it applies; ``symptom`` is what the controller observes; ``params`` its
    parameters (severity, onset), each with a default."""

    name: str
    sides: bool
    backends: tuple[str, ...]
    symptom: str
    params: tuple[FaultParam, ...] = ()

    def param(self, name: str) -> FaultParam | None:
        return next((p for p in self.params if p.name == name), None)


_REACH = FaultParam("reach", 0.85, 0.05, 0.99, "",
                    "fraction of its travel at which the bar stops on a rise")
_FACTOR = FaultParam("factor", 1.35, 1.01, 10.0, "",
                     "up travel time = nominal x factor (1.35: still inside the lift deadline)")
_WEAR = FaultParam("wear", 0.2, 0.01, 2.0, "",
                   "up travel grows by this fraction of nominal for every up stroke since injection")
_JAM_AFTER = FaultParam("after", 1.0, 0.0, 600.0, "s",
                        "the disc jams after turning this long (machine time)")
_ONSET = FaultParam("at", 5.0, 0.0, 3600.0, "s", "machine time of onset")
_NOISE = FaultParam("rate", 0.01, 0.0, 0.2, "", "fraction of bytes hit on the line, each way")


INJECTABLE: dict[str, FaultKind] = {k.name: k for k in (
    FaultKind("lift-top-stuck-on", True, _ALL,
              "top limit reads 1 at rest with the lift down (top and bottom both 1); Lift up "
              "completes at once with elapsed 0 without moving"),
    FaultKind("lift-top-stuck-off", True, _ALL,
              "top limit never reads 1: Lift up ends MotionDone(DEADLINE) + Fault(DEADLINE) "
              "although the bottom limit went 0 (the lift moved)"),
    FaultKind("lift-bottom-stuck-on", True, _ALL,
              "bottom limit reads 1 at all times (also with the lift at the top); Lift down "
              "completes at once with elapsed 0"),
    FaultKind("lift-bottom-stuck-off", True, _ALL,
              "bottom limit reads 0 with the lift down at rest; Lift down ends DEADLINE"),
    FaultKind("lift-sensor-reversed", True, _ALL,
              "both limits of the side read inverted: at rest (down) top 1 and bottom 0; "
              "Lift up completes at once without moving, Lift down ends DEADLINE"),
    FaultKind("lift-short", True, _ALL,
              "升牌杆不到位: the lift leaves the bottom but never reaches the top limit: "
              "Lift up ends DEADLINE (elapsed = deadline) and Fault(DEADLINE) for that side",
              (_REACH,)),
    FaultKind("lift-late", True, _ALL,
              "the lift reaches the top later than nominal (uneven walls): Lift up COMPLETED "
              "with elapsed about factor x lift_up_s, the other sides nominal", (_FACTOR,)),
    FaultKind("lift-slow", True, _ALL,
              "failing lift motor capacitor: Lift up elapsed grows cycle after cycle "
              "(x(1 + wear x n)), first within the deadline, then DEADLINE", (_WEAR,)),
    FaultKind("feeder-wire-loose", True, _ALL,
              "feeder commanded but no motion pulses, no tiles, no stacks: FeedStacks DEADLINE "
              "with 0 stacks and no FEEDER_MOTION changes on that side"),
    FaultKind("feeder-jammed", True, _ALL,
              "feeder motor energised, FEEDER_MOTION pulses present, but no tile-present "
              "changes and no stacks: FeedStacks DEADLINE with 0 stacks"),
    FaultKind("tile-sensor-dirty", True, _ALL,
              "tile-present sensor of that side reads 1 at all times (no edges while tiles "
              "pass); stacks are still counted"),
    FaultKind("wrong-gear", False, _ALL,
              "the machine holds the tile set of another gear (144 set in a 136 gear, "
              "otherwise the set below): 136 gear -> every side completes with one tile "
              "pair left (tile-present stays 1 on every side); 144/152 gear -> every side "
              "ends DEADLINE one stack short"),
    FaultKind("missing-tile", False, _ALL,
              "one tile missing: one side ends DEADLINE one stack short with a half stack "
              "(tile-present saw an odd number of tiles), the others complete"),
    FaultKind("disc-stall", False, _ALL,
              "the shuffle disc does not turn: no DISC_PULSE changes while the shuffle motor "
              "runs; feeders get no tiles (FeedStacks DEADLINE, 0 stacks) but pulse"),
    FaultKind("dice-stuck", False, _ALL,
              "the dice motor does not spin: RollDice completes but no DICE_PULSE changes"),
    FaultKind("push-head-jammed", True, _ALL,
              "the push head sticks on its way out and stalls the drive it shares with the "
              "conveyor: PUSH_HOME goes 0 and stays 0, no FEEDER_MOTION pulses, no tiles, "
              "no stacks: FeedStacks DEADLINE with 0 stacks (a loose wire leaves the head "
              "home: PUSH_HOME stays 1)"),
    FaultKind("push-home-stuck-off", True, _ALL,
              "the push head's home sensor never reads 1 (dirty or unplugged micro-switch): "
              "every stack is built and counted, but the head is never seen home: "
              "FeedStacks DEADLINE with detail = all the stacks"),
    FaultKind("centre-lift-stuck", False, _ALL,
              "the centre lift does not move (tiles wedged under the plate, or its motor): "
              "Lift(None, down) ends DEADLINE with CENTRE_TOP still 1; the played set does "
              "not drop into the disc"),
    FaultKind("tile-jam", False, _JAM_FITTED,
              "a tile jams at the disc outlet after the disc turned `after` s: JAM reads 1 "
              "and the disc stops (no more DISC_PULSE changes) while the shuffle motor is "
              "energised", (_JAM_AFTER,)),
    FaultKind("mcu-reset", False, _MCU,
              "the microcontroller reboots mid-cycle: BackendReset event, pending commands "
              "fail (CommandFailed), every motor stopped, device latched POWER_ON", (_ONSET,)),
    FaultKind("link-noise", False, _MCU,
              "a fraction (`rate`, 1%) of the bytes on the serial line hit, both ways: the "
              "cycle still completes (retransmissions and rejected frames in the link stats)",
              (_NOISE,)),
    FaultKind("link-broken", False, _MCU,
              "the serial line goes dead mid-cycle: BackendLost; the MCU stops every motor by "
              "itself within the 500 ms heartbeat window", (_ONSET,)),
)}


@dataclass(frozen=True)
class FaultSpec:
    """An injected fault: ``kind`` (a key of INJECTABLE), ``side`` (Side or None),
    ``params`` (``((name, value), ...)``: the parameters given; the others take their
    default, see :meth:`param`) and ``at_s`` (machine time of onset in s, for mcu-reset and
    link-broken; None = the ``at`` parameter, or its default). Raises FaultSpecError for an
    unknown kind, a missing or superfluous side, or a parameter the kind does not take or
    outside its range."""

    kind: str
    side: Side | None = None
    at_s: float | None = None
    params: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        k = INJECTABLE.get(self.kind)
        if k is None:
            raise FaultSpecError(f"unknown fault kind {self.kind!r}; allowed: "
                                 f"{', '.join(INJECTABLE)}")
        if k.sides and not isinstance(self.side, Side):
            raise FaultSpecError(f"fault {self.kind} needs a side: {self.kind}:E, :S, :W or :N")
        if not k.sides and self.side is not None:
            raise FaultSpecError(f"fault {self.kind} belongs to no side: give it as {self.kind}, "
                                 f"without :{self.side.name}")
        seen = set()
        for name, value in self.params:
            p = k.param(name)
            if p is None:
                allowed = ", ".join(q.name for q in k.params) or "none"
                raise FaultSpecError(f"fault {self.kind} has no parameter {name!r}; "
                                     f"its parameters: {allowed}")
            if name in seen:
                raise FaultSpecError(f"fault {self.kind}: parameter {name} given twice")
            seen.add(name)
            p.check(self.kind, value)
        if self.at_s is not None:
            _ONSET.check(self.kind, self.at_s)

    def param(self, name: str) -> float:
        """The value of parameter ``name``: as given, else its default. KeyError for a
        parameter the kind does not take."""
        for n, v in self.params:
            if n == name:
                return float(v)
        if name == "at" and self.at_s is not None:
            return float(self.at_s)
        p = INJECTABLE[self.kind].param(name)
        if p is None:
            raise KeyError(f"fault {self.kind} has no parameter {name!r}")
        return p.default

    @property
    def onset_s(self) -> float | None:
        """Machine time of onset (s) for the kinds with an ``at`` parameter, else None."""
        return self.param("at") if INJECTABLE[self.kind].param("at") else None

    def matches(self, kind: str, side: Side | None) -> bool:
        """True if this fault is of ``kind`` on ``side`` (parameters aside)."""
        return self.kind == kind and self.side == side

    def __str__(self) -> str:
        text = self.kind if self.side is None else f"{self.kind}:{self.side.name}"
        params = list(self.params)
        if self.at_s is not None and not any(n == "at" for n, _ in params):
            params.append(("at", self.at_s))
        if params:
            text += ":" + ",".join(f"{n}={v:g}" for n, v in params)
        return text


_SIDE_NAMES = {**{s.name: s for s in Side}, "EAST": Side.E, "SOUTH": Side.S, "WEST": Side.W, "NORTH": Side.N,
               "东": Side.E, "南": Side.S, "西": Side.W, "北": Side.N}
FORM = "KIND[:SIDE][:NAME=VALUE,...]"


def _parse_params(text: str, whole: str) -> tuple[tuple[str, float], ...]:
    out = []
    for item in text.split(","):
        name, eq, value = item.partition("=")
        name = name.strip().lower()
        if not eq or not name:
            raise FaultSpecError(f"fault {whole!r}: parameters are NAME=VALUE separated by commas "
                                 f"({FORM}), got {item.strip()!r}")
        try:
            number = float(value)
        except ValueError:
            raise FaultSpecError(f"fault {whole!r}: {name} must be a number, got "
                                 f"{value.strip()!r}") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise FaultSpecError(f"fault {whole!r}: {name} must be a finite number, got "
                                 f"{value.strip()!r}")
        out.append((name, number))
    return tuple(out)


def parse_fault(text: str | FaultSpec, backend: str | None = None) -> FaultSpec:
    """Parse ``KIND[:SIDE][:NAME=VALUE,...]`` (e.g. ``lift-short:E``, ``disc-stall``,
    ``lift-short:W:reach=0.92``, ``lift-late:E:factor=1.2``, ``tile-jam:after=2``); when
    ``backend`` is given, check the fault applies to it. The one parser of the command
    line's ``--fault`` and the service's ``POST /api/sim/fault``. Raises FaultSpecError
    naming what is allowed (kinds, sides, parameters and their ranges)."""
    if isinstance(text, FaultSpec):
        spec = text
    else:
        if not isinstance(text, str) or not text.strip():
            raise FaultSpecError(f"fault must be {FORM}, got {text!r}")
        parts = [p.strip() for p in text.strip().split(":")]
        kind, rest = parts[0].lower(), parts[1:]
        side = None
        params: tuple[tuple[str, float], ...] = ()
        if rest and "=" not in rest[0]:
            side = _SIDE_NAMES.get(rest[0].upper())
            if side is None:
                raise FaultSpecError(f"fault {text!r}: side must be E, S, W or N, got "
                                     f"{rest[0]!r}")
            rest = rest[1:]
        if len(rest) > 1 or (rest and "=" not in rest[0]):
            raise FaultSpecError(f"fault {text!r}: expected {FORM}; {':'.join(rest)!r} is not "
                                 "NAME=VALUE,...")
        if rest:
            params = _parse_params(rest[0], text)
        spec = FaultSpec(kind, side, None, params)
    if backend is not None and backend not in INJECTABLE[spec.kind].backends:
        raise FaultSpecError(f"fault {spec} applies only to the "
                             f"{'/'.join(INJECTABLE[spec.kind].backends)} backend, "
                             f"not {backend}")
    return spec


def kinds_json() -> list[dict]:
    """Every injectable kind for ``mjtable faults --list --json``: ``{"kind", "sides",
    "backends", "params": [{"name", "default", "min", "max", "unit", "meaning"}]}``."""
    return [{"kind": k.name, "sides": ["E", "S", "W", "N"] if k.sides else [],
             "backends": list(k.backends), "params": [p.as_json() for p in k.params]}
            for k in INJECTABLE.values()]
