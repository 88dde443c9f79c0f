"""Fault injection: the faults a technician meets, by stable kind name.

Sources: the technician's answers in ``shared/seeds/002_4c2a73aa42bc09ab.txt`` (top):
升牌杆不到位 / walls uneven (lift-short, lift-late); the tile-count gear table behind the
panel (wrong-gear); 输送带电机与主板的连接线断了或者松了 (feeder-wire-loose);
输送带的轮子被东西卡住了 (feeder-jammed); 查看升牌磁控和磁铁 ... 正负极 (lift sensor
polarity, stuck sensors); 把升牌电机和电容换了 (lift-slow: a failing motor capacitor).

A spec string is ``KIND`` or ``KIND:SIDE`` (side E, S, W or N); :func:`parse_fault`
checks it against :data:`INJECTABLE`, which says per kind whether it takes a side and on
which backends it can be injected.
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
class FaultKind:
    """One injectable fault: ``sides`` is True when it needs a side; ``backends`` lists
    where it applies; ``symptom`` is what the controller observes."""

    name: str
    sides: bool
    backends: tuple[str, ...]
    symptom: str


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
              "Lift up ends DEADLINE (elapsed = deadline) and Fault(DEADLINE) for that side"),
    FaultKind("lift-late", True, _ALL,
              "the lift reaches the top later than nominal (uneven walls): Lift up COMPLETED "
              "with elapsed about late_lift_factor x lift_up_s, the other sides nominal"),
    FaultKind("lift-slow", True, _ALL,
              "failing lift motor capacitor: Lift up elapsed grows cycle after cycle "
              "(x(1 + capacitor_wear x n)), first within the deadline, then DEADLINE"),
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
              "a tile jams at the disc outlet after the disc turned jam_after_s: JAM reads 1 "
              "and the disc stops (no more DISC_PULSE changes) while the shuffle motor is "
              "energised"),
    FaultKind("mcu-reset", False, _MCU,
              "the microcontroller reboots mid-cycle: McuReset event, pending commands "
              "fail (CommandFailed), every motor stopped, device latched POWER_ON"),
    FaultKind("link-noise", False, _MCU,
              "1% of the bytes on the serial line hit, both ways: the cycle still completes "
              "(retransmissions and rejected frames in the link stats)"),
    FaultKind("link-broken", False, _MCU,
              "the serial line goes dead mid-cycle: LinkLost; the MCU stops every motor by "
              "itself within the 500 ms heartbeat window"),
)}


@dataclass(frozen=True)
class FaultSpec:
    """An injected fault: ``kind`` (a key of INJECTABLE), ``side`` (Side or None) and
    ``at_s`` (machine time of onset in s, for mcu-reset and link-broken; None = from
    the start, or the kind's default onset)."""

    kind: str
    side: Side | None = None
    at_s: float | None = None

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

    def __str__(self) -> str:
        return self.kind if self.side is None else f"{self.kind}:{self.side.name}"


_SIDE_NAMES = {**{s.name: s for s in Side}, "EAST": Side.E, "SOUTH": Side.S, "WEST": Side.W, "NORTH": Side.N,
               "东": Side.E, "南": Side.S, "西": Side.W, "北": Side.N}


def parse_fault(text: str | FaultSpec, backend: str | None = None) -> FaultSpec:
    """Parse ``KIND[:SIDE]`` (e.g. ``lift-short:E``, ``disc-stall``); when ``backend`` is
    given, check the fault applies to it. Raises FaultSpecError naming what is allowed."""
    if isinstance(text, FaultSpec):
        spec = text
    else:
        if not isinstance(text, str) or not text.strip():
            raise FaultSpecError(f"fault must be KIND or KIND:SIDE, got {text!r}")
        kind, _, side_text = text.strip().partition(":")
        side = None
        if side_text:
            side = _SIDE_NAMES.get(side_text.strip().upper())
            if side is None:
                raise FaultSpecError(f"fault {text!r}: side must be E, S, W or N, got "
                                     f"{side_text!r}")
        spec = FaultSpec(kind.strip().lower(), side)
    if backend is not None and backend not in INJECTABLE[spec.kind].backends:
        raise FaultSpecError(f"fault {spec} applies only to the "
                             f"{'/'.join(INJECTABLE[spec.kind].backends)} backend, "
                             f"not {backend}")
    return spec
