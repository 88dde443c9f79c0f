"""The machine model: a four-port automatic table on a virtual clock (seconds).

Not a mock: motors take time and sensors follow the machine's state. The machine is composed of
part models (:mod:`hardware.sim.parts`: the disc, per side a feeder, a push head and a lift, the
centre lift, the dice, the link), each owning its state and its injected faults, as gpiozero
composes devices over pins; the machine keeps the clock, the motors and the sensor lines.

* **Disc and tiles.** Two tile sets: one is in the machine being shuffled and built while
  the other is played. The set in the disc is spread over the four ports (a port's
  magnet conveyor picks the tiles that pass it; the model gives each side a quarter of
  the set, the remainder to E, S, ...). While the shuffle disc turns and a side's feeder
  runs, tiles reach that side's push head at random intervals (exponential, mean
  ``tile_interval_s``; a fraction ``face_up_fraction`` arrive face up and go round once
  more, ``disc_revolution_s``). Each tile pulses the tile-present sensor; two tiles make
  a stack two-high at the push head; the tile-present sensor sees a tile pass, and keeps
  seeing the stack while it waits for the push head.
* **Push heads.** A side's feeder motor also turns that side's push-head cam (one turn
  ``push_cycle_s``: the head is home, PUSH_HOME = 1, for the first 30% of the turn, then
  strokes out and back). At mid-stroke the head pushes a waiting stack into the wall (a
  STACK sensor pulse); tiles that arrive while a stack waits queue behind it. A motor
  stopped mid-stroke leaves the head out (PUSH_HOME = 0). A feeder stopped while its
  quarter still holds tiles leaves one tile at the throat (tile-present stays 1).
* **Lifts** travel between their bottom and top limit sensors in ``lift_up_s`` /
  ``lift_down_s``; a lift can be stopped anywhere and restarted.
* **The centre lift** (index 4 of the lift arrays; sensors CENTRE_TOP / CENTRE_BOTTOM)
  rests at the top, closing the hole. The players push the played set into the centre;
  when the centre lift reaches the bottom after the four walls were raised, the played
  set drops into the disc: the disc is refilled for the next cycle.
* **Jam sensor**: 1 while a tile is jammed at the disc outlet (fault ``tile-jam``: the
  disc jams after turning the fault's ``after`` seconds and stops).
* **Buttons** (two lift buttons, the dice button): :meth:`press` sets them.
* **Indicators**: ``lights`` (the last SetIndicators mask) and the buzzer (a motor key,
  ``(MOTOR_BUZZER, SIDE_NONE)`` in ``motors`` while it sounds).
* **Pulse sensors**: the disc, each feeder's conveyor wheel and the dice cup toggle a
  sensor every half period while they turn.

Faults (:mod:`hardware.sim.faults`) can be injected at any moment (:meth:`TableModel.inject`)
and repaired again (:meth:`TableModel.repair`); each acts physically from then on: a lift that
is up when ``lift-short`` is injected comes down normally and stops short on its next rise; a
stroke under way when ``lift-late`` or ``lift-slow`` is injected goes on at the new speed;
``lift-slow`` wears the capacitor from the strokes after its injection; a fault of the tile set
(``wrong-gear``, ``missing-tile``) applies from the next set that drops into the disc.

Readings: ``physical`` is the truth (magnet at the sensor, tile at the throat ...);
``reading`` is what the input gives after the injected faults (stuck, reversed, dirty).
Every change of a reading goes to ``sink(sensor, side, value)`` (the backend's input
side). Motors are switched through :meth:`set_motor` (the backend's output side).
Deterministic for a seed.
"""

from __future__ import annotations

import heapq
import math
import random
import weakref
from typing import Callable, Iterable

from firmware_bridge import catalogue as C

from ..profile import Profile
from .faults import FaultSpec, parse_fault
from .parts import CentreLift, Dice, Disc, Feeder, Link, Lift, Part, PushHead

_SIDES = C.SIDES
NONE = C.SIDE_NONE
#: every model created, so that a test fixture can check that no motor was left running
LIVE_MODELS: "weakref.WeakSet[TableModel]" = weakref.WeakSet()
# wrong-gear: the set that is in the machine instead of the gear's own
WRONG_SET = Disc.WRONG_SET
_PER_SIDE_SENSORS = C.PER_SIDE_SENSORS
CENTRE = 4  #: index of the centre lift in ``lifts_all`` and ``lift_pos``
_BUTTONS = (C.SENSOR_LIFT_BUTTON_A, C.SENSOR_LIFT_BUTTON_B, C.SENSOR_DICE_BUTTON)


class TableModel:
    """The simulated machine, composed of its parts.

    Args:
        profile: machine profile (timings, gears).
        seed: seed of the model's random generator (tile arrival, missing tile, dice).
        faults: FaultSpec or ``KIND[:SIDE][:NAME=VALUE,...]`` strings.
    Parts: ``disc`` (:class:`~hardware.sim.parts.Disc`), ``feeders``, ``heads`` and ``lifts`` (one
    per side, E S W N), ``centre`` (the centre lift), ``dice``, ``link``.
    Attributes (read by tests and the demo): ``now`` (s), ``motors``
    (``{(motor, side): direction}`` energised), ``walls`` (stacks per side), ``half``
    (a half stack per side), ``quadrant`` (tiles left in the disc per side), ``lift_pos``
    (position of each lift as a fraction of its travel, the centre lift last),
    ``lift_times`` (list of ``(side, up, seconds)`` of completed lift strokes),
    ``changes`` (``{(sensor, side): number of reading changes}``), ``dice`` (last throw),
    ``faults`` (every fault injected now).
    """

    def __init__(self, profile: Profile, seed: int = 0,
                 faults: Iterable[FaultSpec | str] = ()) -> None:
        self.profile = profile
        self.t = profile.timing
        self.rng = random.Random(seed)
        self.now = 0.0
        self._q: list = []
        self._seq = 0
        self.motors: dict[tuple[int, int], int] = {}
        self.gear = profile.tiles
        self.sink: Callable[[int, int, int], None] | None = None
        self.after_event: Callable[[], None] | None = None
        self.physical: dict[tuple[int, int], int] = {}
        self.reading: dict[tuple[int, int], int] = {}
        self.changes: dict[tuple[int, int], int] = {}
        self.lights = 0
        self.cycles = 0
        self.lift_times: list[tuple[int, bool, float]] = []
        # the parts
        self.disc = Disc(self)
        self.feeders = [Feeder(self, s) for s in _SIDES]
        self.heads = [PushHead(self, s) for s in _SIDES]
        self.lifts = [Lift(self, s) for s in _SIDES]
        self.centre = CentreLift(self)
        self.dice_cup = Dice(self)
        self.link = Link(self)
        self.lifts_all: list[Lift] = self.lifts + [self.centre]
        self._by_kind: dict[str, str] = {}
        for attr, part in (("disc", self.disc), ("feeders", self.feeders[0]), ("heads", self.heads[0]),
                           ("lifts", self.lifts[0]), ("centre", self.centre),
                           ("dice_cup", self.dice_cup), ("link", self.link)):
            for kind in type(part).KINDS:
                self._by_kind[kind] = attr
        self._order: list[FaultSpec] = []  # injection order, for ``faults``
        for f in faults:
            spec = parse_fault(f)
            self._part(spec).inject(spec)
            self._order.append(spec)
        # the sensors at power-on: lifts down, push heads home, the centre lift up, the lid closed
        for s in _SIDES:
            for sensor in _PER_SIDE_SENSORS:
                self.physical[(sensor, s)] = 1 if sensor in (C.SENSOR_LIFT_BOTTOM,
                                                             C.SENSOR_PUSH_HOME) else 0
        for sensor in C.SIDELESS_SENSORS:
            self.physical[(sensor, NONE)] = 0
        self.physical[(C.SENSOR_LID, NONE)] = 1
        self.physical[(C.SENSOR_CENTRE_TOP, NONE)] = 1  # the centre lift rests up
        for key, v in self.physical.items():
            self.reading[key] = self._read(key[0], key[1], v)
            self.changes[key] = 0
        self.fill_disc()
        LIVE_MODELS.add(self)

    # ------------------------------------------------------------------ faults
    def _part(self, spec: FaultSpec) -> Part:
        """The part that takes fault ``spec``."""
        attr = self._by_kind[spec.kind]
        part = getattr(self, attr)
        return part[int(spec.side)] if isinstance(part, list) else part

    def _parts_of(self, kind: str, side: int | None) -> list[Part]:
        part = getattr(self, self._by_kind[kind])
        if isinstance(part, list):
            return part if side is None else [part[side]]
        return [part]

    @property
    def faults(self) -> list[FaultSpec]:
        """Every fault injected now, in the order of injection."""
        return [f for f in self._order if f in self._part(f).faults]

    def has(self, kind: str, side: int | None = None) -> bool:
        """True if fault ``kind`` is injected (for ``side``, when the kind takes one)."""
        return self.fault(kind, side) is not None

    def fault(self, kind: str, side: int | None = None) -> FaultSpec | None:
        """The injected fault ``kind`` (on ``side``, when the kind takes one; any side when
        ``side`` is None), or None."""
        for part in self._parts_of(kind, side):
            f = part.fault(kind)
            if f is not None:
                return f
        return None

    def inject(self, fault: FaultSpec | str) -> FaultSpec:
        """Inject a fault now into the part it concerns; it acts physically from this moment
        (see the module text): sensor faults change the reading at once, a motion under way goes
        on under the fault. A fault of the same kind and side already injected is replaced (new
        parameters). Raises FaultSpecError for a bad spec."""
        spec = parse_fault(fault)
        part = self._part(spec)
        self._order = [f for f in self._order if not f.matches(spec.kind, spec.side)] + [spec]
        part.inject(spec)
        self._refresh()
        return spec

    def repair(self, fault: FaultSpec | str) -> list[FaultSpec]:
        """Repair the injected faults of ``fault``'s kind and side (its parameters aside): the
        part works again from now (a jammed tile is taken out). Returns the faults removed
        (empty when none was injected). Raises FaultSpecError for a bad spec."""
        spec = parse_fault(fault)
        gone = self._part(spec).repair(spec.kind)
        if gone:
            self._order = [f for f in self._order if f not in gone]
            self._refresh()
        return gone

    def _refresh(self) -> None:
        """After the faults changed: readings, motions and strokes under way follow."""
        for key, v in self.physical.items():
            self._publish(key, v)
        self.update()
        for lift in self.lifts_all:
            lift.refresh()
        for head in self.heads:
            head.refresh()
        self.disc.refresh()
        if self.after_event is not None:
            self.after_event()

    def _read(self, sensor: int, side: int, p: int) -> int:
        if sensor in (C.SENSOR_LIFT_TOP, C.SENSOR_LIFT_BOTTOM):
            return self.lifts[side].read(sensor, p)
        if sensor == C.SENSOR_TILE_PRESENT:
            return self.feeders[side].read(sensor, p)
        if sensor == C.SENSOR_PUSH_HOME:
            return self.heads[side].read(sensor, p)
        return p

    # -------------------------------------------------------------- the clock
    def schedule(self, t: float, fn: Callable, *args) -> None:
        """Call ``fn(*args)`` at machine time ``t`` (s)."""
        self._seq += 1
        heapq.heappush(self._q, (t, self._seq, fn, args))

    def next_event_time(self) -> float:
        """Machine time (s) of the next scheduled physical event, or +inf."""
        return self._q[0][0] if self._q else math.inf

    def run_to(self, t: float) -> None:
        """Process every physical event up to machine time ``t`` (s), in order."""
        q = self._q
        while q and q[0][0] <= t:
            et, _, fn, args = heapq.heappop(q)
            self.now = max(self.now, et)
            fn(*args)
            if self.after_event is not None:
                self.after_event()
        self.now = max(self.now, t)

    # ----------------------------------------------------------------- sensors
    def set_physical(self, sensor: int, side: int, v: int) -> None:
        """A part's sensor is physically ``v`` now (what it reads follows, after its faults)."""
        key = (sensor, side)
        if self.physical.get(key) == v:
            return
        self.physical[key] = v
        self._publish(key, v)

    _phys = set_physical  # (older name, used by tests)

    def _publish(self, key: tuple[int, int], p: int) -> None:
        r = self._read(key[0], key[1], p)
        if self.reading.get(key) != r:
            self.reading[key] = r
            self.changes[key] = self.changes.get(key, 0) + 1
            if self.sink is not None:
                self.sink(key[0], key[1], r)

    def press_estop(self, pressed: bool) -> None:
        """Press (True) or release the emergency stop button."""
        self.press(C.SENSOR_ESTOP, pressed)

    def press(self, button: int, pressed: bool) -> None:
        """Press (True) or release a button: SENSOR_ESTOP, SENSOR_LIFT_BUTTON_A / _B or
        SENSOR_DICE_BUTTON. Raises ValueError for another sensor."""
        if button not in _BUTTONS + (C.SENSOR_ESTOP,):
            raise ValueError(f"not a button: sensor {button!r}")
        self.set_physical(button, NONE, 1 if pressed else 0)
        if self.after_event is not None:
            self.after_event()

    def clear_jam(self) -> None:
        """The technician takes the jammed tile out: the jam sensor reads 0 and the disc can turn
        again (with the tile-jam fault still injected it jams again after its ``after`` s)."""
        self.disc.clear_jam()

    def set_lights(self, mask: int) -> None:
        """The lights (catalogue LIGHT_* mask)."""
        self.lights = mask

    # -------------------------------------------------------------- actuators
    def set_motor(self, motor: int, side: int, on: bool, direction: int = 1) -> None:
        """Energise (``on``) or de-energise one motor; ``direction`` 1 = forward / up."""
        key = (motor, side)
        if on:
            if self.motors.get(key) == direction:
                return
            self.motors[key] = direction
        else:
            if key not in self.motors:
                return
            del self.motors[key]
        self.update()

    def stop_all(self) -> None:
        """De-energise every motor."""
        if self.motors:
            self.motors.clear()
            self.update()

    def set_gear(self, tiles: int) -> None:
        """The gear dial. Without a wrong-gear fault the operator loaded the matching set."""
        self.gear = tiles
        if not any(f.tiles_fed for f in self.feeders) and not any(f.throat for f in self.feeders):
            self.fill_disc()  # nothing built yet from this set: the set matches the gear

    def running(self) -> dict[tuple[int, int], int]:
        """Energised motors ``{(motor, side): direction}`` (empty when all stopped). The buzzer
        is not a motor (see ``buzzing``): it may still sound a beep when a cycle has ended;
        the device stops it at its time like any motion."""
        return {k: v for k, v in self.motors.items() if k[0] != C.MOTOR_BUZZER}

    @property
    def buzzing(self) -> bool:
        return (C.MOTOR_BUZZER, NONE) in self.motors

    # ------------------------------------------------------- the parts' state
    @property
    def walls(self) -> list[int]:
        """Stacks in each side's wall (E, S, W, N)."""
        return [f.wall for f in self.feeders]

    @property
    def half(self) -> list[bool]:
        """A half stack (one tile) at each side's push head."""
        return [f.half for f in self.feeders]

    @property
    def quadrant(self) -> list[int]:
        """Tiles of each side's share still in the disc."""
        return [f.quadrant for f in self.feeders]

    @property
    def lift_pos(self) -> list[float]:
        """Each lift's position (fraction of its travel) at its last start or stop; the centre lift last."""
        return [lift.pos for lift in self.lifts_all]

    @property
    def jammed(self) -> bool:
        return self.disc.jammed

    @property
    def dice(self) -> tuple[int, int] | None:
        """The two dice of the last throw."""
        return self.dice_cup.value

    # --------------------------------------------------------------- the disc
    def tiles_in_set(self) -> int:
        return self.disc.tiles_in_set()

    def fill_disc(self) -> None:
        """A full set drops into the disc (start of a cycle); walls are cleared."""
        for feeder, n in zip(self.feeders, self.disc.shares()):
            feeder.fill(n)

    def disc_turning(self) -> bool:
        return self.disc.turning()

    def travel_time(self, s: int, up: bool) -> float:
        """Bottom-to-top (``up``) or top-to-bottom travel time of lift ``s`` now (s); ``s`` =
        CENTRE (4) is the centre lift."""
        return self.lifts_all[s].travel_time(up)

    def centre_down(self) -> None:
        """The centre lift reached the bottom: after the four walls were raised, the played set,
        pushed into the centre, drops into the disc (end of a cycle)."""
        if all(lift.raised for lift in self.lifts):
            for lift in self.lifts:
                lift.raised = False
            self.cycles += 1
            self.fill_disc()

    # ---------------------------------------------------------- state changes
    def update(self) -> None:
        """The motors changed (or a part's state): every part follows, in a fixed order."""
        disc = self.disc.update()
        for s in _SIDES:
            self.feeders[s].update(disc)
            self.lifts[s].update()
        self.centre.update()
        self.dice_cup.update()

    _update = update
