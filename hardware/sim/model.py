"""The machine model: a four-port automatic table on a virtual clock (seconds).

Not a mock: motors take time and sensors follow the machine's state.

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

_SIDES = C.SIDES
NONE = C.SIDE_NONE
#: every model created, so that a test fixture can check that no motor was left running
LIVE_MODELS: "weakref.WeakSet[TableModel]" = weakref.WeakSet()
# wrong-gear: the set that is in the machine instead of the gear's own
WRONG_SET = {136: 144, 144: 136, 152: 144, 108: 136}
_PER_SIDE_SENSORS = C.PER_SIDE_SENSORS
CENTRE = 4  #: index of the centre lift in the lift arrays
_BUTTONS = (C.SENSOR_LIFT_BUTTON_A, C.SENSOR_LIFT_BUTTON_B, C.SENSOR_DICE_BUTTON)
_HOME_FRACTION = 0.3   # of a cam turn, the push head at home
_PUSH_AT = 0.65        # of a cam turn, mid-stroke: the stack goes into the wall


def _limits(s: int) -> tuple[int, int, int]:
    """(top sensor, bottom sensor, side) of lift ``s`` (0..3 sides, 4 the centre)."""
    if s == CENTRE:
        return C.SENSOR_CENTRE_TOP, C.SENSOR_CENTRE_BOTTOM, NONE
    return C.SENSOR_LIFT_TOP, C.SENSOR_LIFT_BOTTOM, s


class TableModel:
    """The simulated machine.

    Args:
        profile: machine profile (timings, gears).
        seed: seed of the model's random generator (tile arrival, missing tile, dice).
        faults: FaultSpec or ``KIND[:SIDE][:NAME=VALUE,...]`` strings.
    Attributes (read by tests and the demo): ``now`` (s), ``motors``
    (``{(motor, side): direction}`` energised), ``walls`` (stacks per side), ``half``
    (a half stack per side), ``quadrant`` (tiles left in the disc per side),
    ``lift_times`` (list of ``(side, up, seconds)`` of completed lift strokes),
    ``changes`` (``{(sensor, side): number of reading changes}``), ``dice`` (last throw).
    """

    def __init__(self, profile: Profile, seed: int = 0,
                 faults: Iterable[FaultSpec | str] = ()) -> None:
        self.profile = profile
        self.t = profile.timing
        self.rng = random.Random(seed)
        self.now = 0.0
        self._q: list = []
        self._seq = 0
        self.faults: list[FaultSpec] = [parse_fault(f) for f in faults]
        self.motors: dict[tuple[int, int], int] = {}
        self.gear = profile.tiles
        self.sink: Callable[[int, int, int], None] | None = None
        self.after_event: Callable[[], None] | None = None
        self.physical: dict[tuple[int, int], int] = {}
        self.reading: dict[tuple[int, int], int] = {}
        self.changes: dict[tuple[int, int], int] = {}
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
        # tiles
        self.quadrant = [0, 0, 0, 0]
        self.held = [0, 0, 0, 0]
        self.throat = [False] * 4
        self.walls = [0, 0, 0, 0]
        self.half = [False] * 4
        self.tiles_fed = [0, 0, 0, 0]
        self.cycles = 0
        self.missing_side: int | None = None
        self._flow = [False] * 4
        self._feed_gen = [0, 0, 0, 0]
        # push heads: cam position (fraction of a turn), a stack waiting, tiles queued
        self.cam = [0.0] * 4
        self._cam_t0 = [0.0] * 4
        self._cam_on = [False] * 4
        self._cam_gen = [0, 0, 0, 0]
        self.ready = [False] * 4
        self.queued = [0, 0, 0, 0]
        self._releasing = [False] * 4
        self._tp_free = [0.0] * 4
        # lifts: 0..3 the sides, 4 (CENTRE) the centre lift, which rests at the top
        self.lift_pos = [0.0] * 4 + [1.0]
        self.lift_vel = [0.0] * 5
        self.lift_t0 = [0.0] * 5
        self._lift_gen = [0, 0, 0, 0, 0]
        self._stroke_start: list[tuple[float, int] | None] = [None] * 5
        self._stroke_reach = [1.0] * 5   # where the rise under way stops (lift-short)
        self._leave_at = [0.0] * 5       # when the moving lift leaves its limit sensor
        self._wear_from = [0, 0, 0, 0]   # up strokes before lift-slow was injected
        self.jammed = False
        self._disc_on_s = 0.0
        self._disc_t0: float | None = None
        self.lights = 0
        self.up_strokes = [0, 0, 0, 0, 0]
        self.raised = [False] * 4
        self.lift_times: list[tuple[int, bool, float]] = []
        # pulses
        self._pulse_gen: dict[tuple[int, int], int] = {}
        self._pulsing: dict[tuple[int, int], bool] = {}
        self.dice: tuple[int, int] | None = None
        self._dice_pulses_at_start = 0
        self.fill_disc()
        LIVE_MODELS.add(self)

    # ------------------------------------------------------------------ faults
    def has(self, kind: str, side: int | None = None) -> bool:
        """True if fault ``kind`` is injected (for ``side``, when the kind takes one)."""
        return self.fault(kind, side) is not None

    def fault(self, kind: str, side: int | None = None) -> FaultSpec | None:
        """The injected fault ``kind`` (on ``side``, when the kind takes one), or None."""
        for f in self.faults:
            if f.kind == kind and (f.side is None or side is None or int(f.side) == side):
                return f
        return None

    def inject(self, fault: FaultSpec | str) -> FaultSpec:
        """Inject a fault now; it acts physically from this moment (see the module text):
        sensor faults change the reading at once, a motion under way goes on under the fault.
        A fault of the same kind and side already injected is replaced (new parameters).
        Raises FaultSpecError for a bad spec."""
        spec = parse_fault(fault)
        self.faults = [f for f in self.faults if not f.matches(spec.kind, spec.side)]
        self.faults.append(spec)
        if spec.kind == "lift-slow":
            s = int(spec.side)
            self._wear_from[s] = self.up_strokes[s] - (1 if self.lift_vel[s] > 0 else 0)
        self._refresh()
        return spec

    def repair(self, fault: FaultSpec | str) -> list[FaultSpec]:
        """Repair the injected faults of ``fault``'s kind and side (its parameters aside):
        the part works again from now (a jammed tile is taken out). Returns the faults
        removed (empty when none was injected). Raises FaultSpecError for a bad spec."""
        spec = parse_fault(fault)
        gone = [f for f in self.faults if f.matches(spec.kind, spec.side)]
        if gone:
            self.faults = [f for f in self.faults if f not in gone]
            if spec.kind == "tile-jam":
                self.clear_jam()
            self._refresh()
        return gone

    def _refresh(self) -> None:
        """After the faults changed: readings, motions and strokes under way follow."""
        for key, v in self.physical.items():
            self._publish(key, v)
        self._update()
        for s in list(_SIDES) + [CENTRE]:
            self._lift(s, replan=True)
        for s in _SIDES:
            if self._cam_on[s]:
                self._cam_gen[s] += 1
                self._cam_next(s, self._cam_gen[s])
        self._arm_jam()
        if self.after_event is not None:
            self.after_event()

    def _read(self, sensor: int, side: int, p: int) -> int:
        if sensor in (C.SENSOR_LIFT_TOP, C.SENSOR_LIFT_BOTTOM):
            which = "top" if sensor == C.SENSOR_LIFT_TOP else "bottom"
            if self.has(f"lift-{which}-stuck-on", side):
                return 1
            if self.has(f"lift-{which}-stuck-off", side):
                return 0
            if self.has("lift-sensor-reversed", side):
                return 1 - p
        if sensor == C.SENSOR_TILE_PRESENT and self.has("tile-sensor-dirty", side):
            return 1
        if sensor == C.SENSOR_PUSH_HOME and self.has("push-home-stuck-off", side):
            return 0
        return p

    # -------------------------------------------------------------- the clock
    def schedule(self, t: float, fn: Callable, *args) -> None:
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
    def _phys(self, sensor: int, side: int, v: int) -> None:
        key = (sensor, side)
        if self.physical.get(key) == v:
            return
        self.physical[key] = v
        self._publish(key, v)

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
        self._phys(button, NONE, 1 if pressed else 0)
        if self.after_event is not None:
            self.after_event()

    def clear_jam(self) -> None:
        """The technician takes the jammed tile out: the jam sensor reads 0 and the disc can turn
        again (with the tile-jam fault still injected it jams again after ``jam_after_s``)."""
        if self.jammed:
            self.jammed = False
            self._disc_on_s = 0.0
            self._phys(C.SENSOR_JAM, NONE, 0)
            self._update()

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
        self._update()

    def stop_all(self) -> None:
        """De-energise every motor."""
        if self.motors:
            self.motors.clear()
            self._update()

    def set_gear(self, tiles: int) -> None:
        """The gear dial. Without a wrong-gear fault the operator loaded the matching set."""
        self.gear = tiles
        if not any(self.tiles_fed) and not any(self.throat):
            self.fill_disc()  # nothing built yet from this set: the set matches the gear

    def running(self) -> dict[tuple[int, int], int]:
        """Energised motors ``{(motor, side): direction}`` (empty when all stopped). The buzzer
        is not a motor (see ``buzzing``): it may still sound a beep when a cycle has ended;
        the device stops it at its time like any motion."""
        return {k: v for k, v in self.motors.items() if k[0] != C.MOTOR_BUZZER}

    @property
    def buzzing(self) -> bool:
        return (C.MOTOR_BUZZER, NONE) in self.motors

    # --------------------------------------------------------------- the disc
    def tiles_in_set(self) -> int:
        return WRONG_SET[self.gear] if self.has("wrong-gear") else self.gear

    def _share(self, side: int) -> int:
        n = self.tiles_in_set()
        return n // 4 + (1 if side < n % 4 else 0)

    def fill_disc(self) -> None:
        """A full set drops into the disc (start of a cycle); walls are cleared."""
        self.quadrant = [self._share(s) for s in _SIDES]
        if self.profile.gears.get(self.gear) and not self.has("wrong-gear"):
            # the gear's own split (108 = 14, 13, 14, 13 stacks)
            self.quadrant = [2 * n for n in self.profile.gears[self.gear]]
        if self.has("missing-tile"):
            if self.missing_side is None:
                self.missing_side = self.rng.randrange(4)
            self.quadrant[self.missing_side] -= 1
        self.walls = [0, 0, 0, 0]
        self.half = [False] * 4
        self.ready = [False] * 4
        self.queued = [0, 0, 0, 0]
        self.held = [0, 0, 0, 0]
        self.tiles_fed = [0, 0, 0, 0]
        self.throat = [False] * 4
        for s in _SIDES:
            self._phys(C.SENSOR_TILE_PRESENT, s, 0)

    def disc_turning(self) -> bool:
        return ((C.MOTOR_SHUFFLE, NONE) in self.motors and not self.has("disc-stall")
                and not self.jammed)

    def _arm_jam(self) -> None:
        """With tile-jam injected and the disc turning: the jam comes once the disc has
        turned the fault's ``after`` seconds in all."""
        f = self.fault("tile-jam")
        if f is None or not self.disc_turning() or self._disc_t0 is None:
            return
        turned = self._disc_on_s + (self.now - self._disc_t0)
        self.schedule(self.now + max(0.0, f.param("after") - turned), self._jam,
                      self._pulse_gen[(C.SENSOR_DISC_PULSE, NONE)])

    def _jam(self, gen: int) -> None:
        if (gen == self._pulse_gen.get((C.SENSOR_DISC_PULSE, NONE)) and not self.jammed
                and self.has("tile-jam")):
            self.jammed = True
            self._phys(C.SENSOR_JAM, NONE, 1)
            self._update()

    # ---------------------------------------------------------- state changes
    def _update(self) -> None:
        disc = self.disc_turning()
        was_turning = self._pulsing.get((C.SENSOR_DISC_PULSE, NONE), False)
        self._pulse(C.SENSOR_DISC_PULSE, NONE, disc, self.t.disc_pulse_s)
        if disc and not was_turning:
            self._disc_t0 = self.now
            self._arm_jam()
        elif not disc and was_turning and self._disc_t0 is not None:
            self._disc_on_s += self.now - self._disc_t0
            self._disc_t0 = None
        for s in _SIDES:
            on = (C.MOTOR_FEEDER, s) in self.motors
            # a jammed push head stalls the drive it shares with the conveyor
            moving = (on and not self.has("feeder-wire-loose", s)
                      and not self.has("push-head-jammed", s))
            self._cam(s, on and not self.has("feeder-wire-loose", s))
            self._pulse(C.SENSOR_FEEDER_MOTION, s, moving, self.t.feeder_pulse_s)
            flow = moving and disc and not self.has("feeder-jammed", s)
            if flow and not self._flow[s]:
                self._flow[s] = True
                self._feed_gen[s] += 1
                if self.throat[s]:
                    self.throat[s] = False
                    self.schedule(self.now + self.t.tile_present_s, self._tile, s,
                                  self._feed_gen[s], True)
                else:
                    self._schedule_tile(s)
            elif not flow and self._flow[s]:
                self._flow[s] = False
                self._feed_gen[s] += 1
                if not on and self.quadrant[s] > 0 and not self.throat[s]:
                    # the conveyor coasts: the next tile ends up waiting at the throat
                    self.quadrant[s] -= 1
                    self.throat[s] = True
                    self._phys(C.SENSOR_TILE_PRESENT, s, 1)
            self._lift(s)
        self._lift(CENTRE)
        dice = (C.MOTOR_DICE, NONE) in self.motors
        spinning = dice and not self.has("dice-stuck")
        was = self._pulsing.get((C.SENSOR_DICE_PULSE, NONE), False)
        self._pulse(C.SENSOR_DICE_PULSE, NONE, spinning, self.t.dice_pulse_s)
        if was and not spinning:
            self.dice = (self.rng.randint(1, 6), self.rng.randint(1, 6))

    def _pulse(self, sensor: int, side: int, on: bool, half: float) -> None:
        key = (sensor, side)
        if self._pulsing.get(key, False) == on:
            return
        self._pulsing[key] = on
        gen = self._pulse_gen.get(key, 0) + 1
        self._pulse_gen[key] = gen
        if on:
            self.schedule(self.now + half, self._toggle, key, gen, half)

    def _toggle(self, key: tuple[int, int], gen: int, half: float) -> None:
        if self._pulse_gen.get(key) != gen:
            return
        self._phys(key[0], key[1], 1 - self.physical[key])
        self.schedule(self.now + half, self._toggle, key, gen, half)

    # ----------------------------------------------------------------- tiles
    def _schedule_tile(self, s: int) -> None:
        t = self.t
        delay = 2 * t.tile_present_s + self.rng.expovariate(1.0 / t.tile_interval_s)
        if self.rng.random() < t.face_up_fraction:
            delay += t.disc_revolution_s  # face up: goes round until flipped
        self.schedule(self.now + delay, self._tile, s, self._feed_gen[s], False)

    def _tile(self, s: int, gen: int, taken: bool) -> None:
        if gen != self._feed_gen[s]:
            return
        if not taken:
            if self.quadrant[s] <= 0:
                return  # nothing left on this side's share of the disc
            self.quadrant[s] -= 1
        # the tile reaches the push head; it waits there while a stack waits for the
        # head, and tiles pass the tile-present sensor one at a time
        self.queued[s] += 1
        self._kick(s)
        if self.quadrant[s] > 0:
            self._schedule_tile(s)

    def _kick(self, s: int) -> None:
        if not self._releasing[s]:
            self._releasing[s] = True
            self.schedule(max(self.now, self._tp_free[s]), self._release, s)

    def _release(self, s: int) -> None:
        """The next waiting tile moves past the tile-present sensor into the stacker."""
        self._releasing[s] = False
        if self.now < self._tp_free[s] - 1e-9:
            return self._kick(s)
        if self.queued[s] and not self.ready[s]:
            self.queued[s] -= 1
            self._stack_tile(s)
            if self.queued[s] and not self.ready[s]:
                self._kick(s)

    def _stack_tile(self, s: int) -> None:
        self._tp_free[s] = self.now + 2 * self.t.tile_present_s
        self.tiles_fed[s] += 1
        self._phys(C.SENSOR_TILE_PRESENT, s, 1)
        self.schedule(self.now + self.t.tile_present_s, self._tile_gone, s)
        self.held[s] += 1
        self.half[s] = self.held[s] == 1
        if self.held[s] == 2:
            self.held[s] = 0
            self.ready[s] = True

    def _tile_gone(self, s: int) -> None:
        if not self.throat[s] and not self.ready[s]:  # a waiting stack stays in view
            self._phys(C.SENSOR_TILE_PRESENT, s, 0)

    def _push(self, s: int) -> None:
        """Mid-stroke of the push head: a waiting stack goes into the wall."""
        if not self.ready[s]:
            return
        self.ready[s] = False
        if not self.throat[s]:
            self._phys(C.SENSOR_TILE_PRESENT, s, 0)
        self.walls[s] += 1
        self.half[s] = False
        self._phys(C.SENSOR_STACK, s, 1)
        self.schedule(self.now + self.t.push_s, self._phys, C.SENSOR_STACK, s, 0)
        if self.queued[s]:
            self._kick(s)

    # ------------------------------------------------------------ push heads
    def _cam(self, s: int, on: bool) -> None:
        """Start or stop side ``s``'s push-head cam (driven by its feeder motor)."""
        if on == self._cam_on[s]:
            return
        P = self.t.push_cycle_s
        if on:
            self._cam_on[s], self._cam_t0[s] = True, self.now
        else:
            self._cam_on[s] = False
            phase = (self.cam[s] + (self.now - self._cam_t0[s]) / P) % 1.0
            self.cam[s] = 0.0 if phase > 1.0 - 1e-6 else phase
        self._cam_gen[s] += 1
        if on:
            self._cam_next(s, self._cam_gen[s])

    def _cam_next(self, s: int, gen: int) -> None:
        """Schedule the cam's next event: leaving home, the push, or home again."""
        P = self.t.push_cycle_s
        phase = (self.cam[s] + (self.now - self._cam_t0[s]) / P) % 1.0
        if phase > 1.0 - 1e-6:
            phase = 0.0
        self.cam[s], self._cam_t0[s] = phase, self.now
        jammed = self.has("push-head-jammed", s)
        for mark in (_HOME_FRACTION, _PUSH_AT, 1.0):
            if phase < mark - 1e-9:
                if jammed and mark > _HOME_FRACTION:
                    return  # the head is stuck out on its way: the cam stops there
                self.schedule(self.now + (mark - phase) * P, self._cam_at, s, gen, mark)
                return

    def _cam_at(self, s: int, gen: int, mark: float) -> None:
        if gen != self._cam_gen[s]:
            return
        self.cam[s], self._cam_t0[s] = mark % 1.0, self.now
        if mark == _HOME_FRACTION:
            self._phys(C.SENSOR_PUSH_HOME, s, 0)
        elif mark == _PUSH_AT:
            self._push(s)
        else:
            self._phys(C.SENSOR_PUSH_HOME, s, 1)
        if gen == self._cam_gen[s]:  # (the motor may have been stopped by that change)
            self._cam_next(s, gen)

    # ----------------------------------------------------------------- lifts
    def travel_time(self, s: int, up: bool) -> float:
        """Bottom-to-top (``up``) or top-to-bottom travel time of side ``s`` now (s);
        ``s`` = CENTRE (4) is the centre lift."""
        t = self.t
        if s == CENTRE:
            return t.centre_up_s if up else t.centre_down_s
        if not up:
            return t.lift_down_s
        T = t.lift_up_s
        late = self.fault("lift-late", s)
        if late is not None:
            T *= late.param("factor")
        slow = self.fault("lift-slow", s)
        if slow is not None:
            # wear from the strokes since injection before this one (a stroke in progress
            # is already counted)
            before = self.up_strokes[s] - (1 if self.lift_vel[s] > 0 else 0) - self._wear_from[s]
            T *= 1 + slow.param("wear") * max(0, before)
        return T

    def _reach(self, s: int) -> float:
        """Where a rise of lift ``s`` stops now (fraction of its travel; 1 = the top)."""
        f = None if s == CENTRE else self.fault("lift-short", s)
        return 1.0 if f is None else f.param("reach")

    def _lift_pos(self, s: int) -> float:
        p = self.lift_pos[s] + self.lift_vel[s] * (self.now - self.lift_t0[s])
        top = self._stroke_reach[s] if self.lift_vel[s] > 0 else 1.0
        return min(max(p, 0.0), max(top, self.lift_pos[s]))

    def _lift(self, s: int, replan: bool = False) -> None:
        key = (C.MOTOR_CENTRE, NONE) if s == CENTRE else (C.MOTOR_LIFT, s)
        top, bottom, _ = _limits(s)
        d = self.motors.get(key)
        if s == CENTRE and self.has("centre-lift-stuck"):
            d = None  # tiles wedged under the plate, or the motor: it does not move
        vel = 0.0
        if d is not None:
            vel = 1.0 / self.travel_time(s, d == 1) * (1 if d == 1 else -1)
        old = self.lift_vel[s]
        if vel == old and not (replan and vel != 0.0):
            return
        # a re-plan (a fault injected or repaired) goes on with the stroke under way
        going_on = vel * old > 0
        pos = self._lift_pos(s)
        self.lift_pos[s], self.lift_vel[s], self.lift_t0[s] = pos, vel, self.now
        self._lift_gen[s] += 1
        gen = self._lift_gen[s]
        if vel > 0:
            reach = self._reach(s)
            # the bar stops short where the fault holds it, unless it is already past there
            self._stroke_reach[s] = reach if pos < reach else 1.0
            if pos < 1.0 and not going_on:
                self.up_strokes[s] += 1 if pos <= 0.0 else 0
                self._stroke_start[s] = (self.now, 1)
            if pos <= 0.0 and not going_on:
                self._leave_at[s] = self.now + 0.02
            if self._leave_at[s] > self.now and self.physical[(bottom, _limits(s)[2])]:
                self.schedule(self._leave_at[s], self._lift_leaves, s, gen, bottom)
            if self._stroke_reach[s] >= 1.0 and pos < 1.0:
                self.schedule(self.now + (1.0 - pos) / vel, self._lift_arrives, s, gen, True)
        elif vel < 0:
            if pos > 0.0 and not going_on:
                self._stroke_start[s] = (self.now, 0)
            if pos >= 1.0 and not going_on:
                self._leave_at[s] = self.now + 0.02
            if self._leave_at[s] > self.now and self.physical[(top, _limits(s)[2])]:
                self.schedule(self._leave_at[s], self._lift_leaves, s, gen, top)
            if pos > 0.0:
                self.schedule(self.now + pos / -vel, self._lift_arrives, s, gen, False)

    def _lift_leaves(self, s: int, gen: int, sensor: int) -> None:
        if gen == self._lift_gen[s]:
            self._phys(sensor, _limits(s)[2], 0)
            if sensor == C.SENSOR_LIFT_BOTTOM:
                self.raised[s] = True

    def _lift_arrives(self, s: int, gen: int, up: bool) -> None:
        if gen != self._lift_gen[s]:
            return
        self.lift_pos[s], self.lift_t0[s] = (1.0 if up else 0.0), self.now
        start = self._stroke_start[s]
        if start is not None and s != CENTRE:
            self.lift_times.append((s, up, self.now - start[0]))
            self._stroke_start[s] = None
        top, bottom, side = _limits(s)
        self._phys(top if up else bottom, side, 1)
        if s == CENTRE and not up and all(self.raised):
            # end of a cycle: the played set, pushed into the centre, drops into the disc
            self.raised = [False] * 4
            self.cycles += 1
            self.fill_disc()
