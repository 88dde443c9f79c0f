"""The parts of the simulated machine: each owns its state and the faults injected into it.

:class:`hardware.sim.model.TableModel` composes them (as gpiozero composes devices over pins):
the shuffle :class:`Disc`, per side a :class:`Feeder` (its conveyor, the tiles it carries and the
wall it builds), a :class:`PushHead` (the stacking head its feeder's motor turns through a cam) and
a :class:`Lift`; the :class:`CentreLift`, the :class:`Dice` and the :class:`Link` (the serial line,
for the simulated microcontroller). The machine keeps the clock, the motors and the sensor lines;
a part schedules its events on the machine's clock and sets the physical state of its sensors
(``machine.set_physical``); what an input reads is the physical state after the part's sensor
faults (:meth:`Part.read`).

Times in seconds of machine time; positions of a lift as a fraction of its travel (0 bottom, 1 top).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from firmware_bridge import catalogue as C

from .faults import FaultSpec

if TYPE_CHECKING:
    from .model import TableModel

NONE = C.SIDE_NONE
HOME_FRACTION = 0.3   # of a cam turn, the push head at home
PUSH_AT = 0.65        # of a cam turn, mid-stroke: the stack goes into the wall
LEAVE_S = 0.02        # a moving lift leaves its limit sensor this long after it starts


class Part:
    """A part of the machine on ``side`` (0..3, or None): its state and its injected faults.

    ``KINDS`` lists the fault kinds (:data:`hardware.sim.faults.INJECTABLE`) the part takes."""

    KINDS: tuple[str, ...] = ()

    def __init__(self, machine: "TableModel", side: int | None = None) -> None:
        self.m = machine
        self.side = side
        self.faults: list[FaultSpec] = []

    def fault(self, kind: str) -> FaultSpec | None:
        """The injected fault of ``kind``, or None."""
        for f in self.faults:
            if f.kind == kind:
                return f
        return None

    def has(self, kind: str) -> bool:
        return self.fault(kind) is not None

    def inject(self, spec: FaultSpec) -> None:
        """Take ``spec`` (replacing a fault of the same kind)."""
        self.faults = [f for f in self.faults if f.kind != spec.kind] + [spec]

    def repair(self, kind: str) -> list[FaultSpec]:
        """Remove the faults of ``kind``; returns them."""
        gone = [f for f in self.faults if f.kind == kind]
        self.faults = [f for f in self.faults if f.kind != kind]
        return gone

    def read(self, sensor: int, physical: int) -> int:
        """What this part's input ``sensor`` reads when its physical state is ``physical``."""
        return physical

    def refresh(self) -> None:
        """The faults changed: a motion under way goes on under the new ones."""


class Pulse:
    """A rotation or motion sensor that toggles every ``half`` s while its part turns."""

    def __init__(self, machine: "TableModel", sensor: int, side: int, half: float) -> None:
        self.m, self.key, self.half = machine, (sensor, side), half
        self.on = False
        self.gen = 0

    def set(self, on: bool) -> None:
        if self.on == on:
            return
        self.on = on
        self.gen += 1
        if on:
            self.m.schedule(self.m.now + self.half, self._toggle, self.gen)

    def _toggle(self, gen: int) -> None:
        if gen != self.gen:
            return
        self.m.set_physical(self.key[0], self.key[1], 1 - self.m.physical[self.key])
        self.m.schedule(self.m.now + self.half, self._toggle, gen)


# --------------------------------------------------------------------------- the disc
class Disc(Part):
    """The shuffle disc and the tile set in it: turns while the shuffle motor runs (DISC_PULSE);
    a tile can jam at its outlet (JAM). Faults: ``disc-stall`` (does not turn), ``tile-jam``
    (jams after turning ``after`` s), ``wrong-gear`` (the set of another gear) and ``missing-tile``
    (one tile short), the last two from the next set that drops in."""

    KINDS = ("disc-stall", "tile-jam", "wrong-gear", "missing-tile")
    #: wrong-gear: the set that is in the machine instead of the gear's own
    WRONG_SET = {136: 144, 144: 136, 152: 144, 108: 136}

    def __init__(self, machine: "TableModel") -> None:
        super().__init__(machine)
        self.pulse = Pulse(machine, C.SENSOR_DISC_PULSE, NONE, machine.t.disc_pulse_s)
        self.jammed = False
        self.on_s = 0.0               # s turned since the last jam was cleared
        self.t0: float | None = None  # when it last started turning
        self.missing_side: int | None = None

    def turning(self) -> bool:
        return ((C.MOTOR_SHUFFLE, NONE) in self.m.motors and not self.has("disc-stall")
                and not self.jammed)

    def update(self) -> bool:
        """Follow the shuffle motor; returns whether the disc turns now."""
        disc = self.turning()
        was_turning = self.pulse.on
        self.pulse.set(disc)
        if disc and not was_turning:
            self.t0 = self.m.now
            self.arm_jam()
        elif not disc and was_turning and self.t0 is not None:
            self.on_s += self.m.now - self.t0
            self.t0 = None
        return disc

    def arm_jam(self) -> None:
        """With tile-jam injected and the disc turning: the jam comes once the disc has turned the
        fault's ``after`` seconds in all."""
        f = self.fault("tile-jam")
        if f is None or not self.turning() or self.t0 is None:
            return
        turned = self.on_s + (self.m.now - self.t0)
        self.m.schedule(self.m.now + max(0.0, f.param("after") - turned), self._jam, self.pulse.gen)

    def _jam(self, gen: int) -> None:
        if gen == self.pulse.gen and not self.jammed and self.has("tile-jam"):
            self.jammed = True
            self.m.set_physical(C.SENSOR_JAM, NONE, 1)
            self.m.update()

    def clear_jam(self) -> None:
        if self.jammed:
            self.jammed = False
            self.on_s = 0.0
            self.m.set_physical(C.SENSOR_JAM, NONE, 0)
            self.m.update()

    def refresh(self) -> None:
        self.arm_jam()

    def repair(self, kind: str) -> list[FaultSpec]:
        gone = super().repair(kind)
        if gone and kind == "tile-jam":
            self.clear_jam()  # the technician takes the jammed tile out
        return gone

    def tiles_in_set(self) -> int:
        gear = self.m.gear
        return self.WRONG_SET[gear] if self.has("wrong-gear") else gear

    def shares(self) -> list[int]:
        """Tiles of the set that each side's conveyor will pick (the gear's own split, or a
        quarter of the set, the remainder to E, S, ...), one short on one side with missing-tile."""
        n = self.tiles_in_set()
        out = [n // 4 + (1 if side < n % 4 else 0) for side in C.SIDES]
        gears = self.m.profile.gears
        if gears.get(self.m.gear) and not self.has("wrong-gear"):
            out = [2 * k for k in gears[self.m.gear]]  # the gear's own split (108 = 14, 13, 14, 13)
        if self.has("missing-tile"):
            if self.missing_side is None:
                self.missing_side = self.m.rng.randrange(4)
            out[self.missing_side] -= 1
        return out


# ------------------------------------------------------------------------- a feeder
class Feeder(Part):
    """A side's feeder: its motor drives the magnet conveyor that picks this side's share of the
    tiles from the turning disc, and the push-head cam. Tiles reach the push head at random
    intervals (exponential, mean ``tile_interval_s``; a face-up tile goes round once more), pass
    the tile-present sensor one at a time and are stacked two high; the push head pushes a waiting
    stack into the wall. FEEDER_MOTION pulses while the drive turns. Faults: ``feeder-wire-loose``
    (the motor gets no power), ``feeder-jammed`` (the wheel turns no tiles in), ``tile-sensor-dirty``
    (tile-present reads 1)."""

    KINDS = ("feeder-wire-loose", "feeder-jammed", "tile-sensor-dirty")

    def __init__(self, machine: "TableModel", side: int) -> None:
        super().__init__(machine, side)
        self.motion = Pulse(machine, C.SENSOR_FEEDER_MOTION, side, machine.t.feeder_pulse_s)
        self.quadrant = 0       # tiles of this side's share still in the disc
        self.held = 0           # tiles on the stacker (0 or 1)
        self.throat = False     # a tile waiting at the throat (the conveyor stopped under it)
        self.wall = 0           # stacks in this side's wall
        self.half = False       # a half stack (one tile) at the push head
        self.tiles_fed = 0
        self.ready = False      # a stack waiting for the push head
        self.queued = 0         # tiles waiting behind it
        self._flow = False
        self._gen = 0
        self._releasing = False
        self._tp_free = 0.0

    def read(self, sensor: int, physical: int) -> int:
        if sensor == C.SENSOR_TILE_PRESENT and self.has("tile-sensor-dirty"):
            return 1
        return physical

    def fill(self, tiles: int) -> None:
        """A new set: ``tiles`` of it for this side; the wall is cleared."""
        self.quadrant = tiles
        self.wall, self.half, self.ready, self.queued = 0, False, False, 0
        self.held, self.tiles_fed, self.throat = 0, 0, False
        self.m.set_physical(C.SENSOR_TILE_PRESENT, self.side, 0)

    def update(self, disc: bool) -> None:
        """Follow the feeder motor and the disc (``disc``: it turns)."""
        s, m = self.side, self.m
        on = (C.MOTOR_FEEDER, s) in m.motors
        powered = on and not self.has("feeder-wire-loose")
        head = m.heads[s]
        # a jammed push head stalls the drive it shares with the conveyor
        moving = powered and not head.has("push-head-jammed")
        head.drive(powered)
        self.motion.set(moving)
        flow = moving and disc and not self.has("feeder-jammed")
        if flow and not self._flow:
            self._flow = True
            self._gen += 1
            if self.throat:
                self.throat = False
                m.schedule(m.now + m.t.tile_present_s, self._tile, self._gen, True)
            else:
                self._schedule_tile()
        elif not flow and self._flow:
            self._flow = False
            self._gen += 1
            if not on and self.quadrant > 0 and not self.throat:
                # the conveyor coasts: the next tile ends up waiting at the throat
                self.quadrant -= 1
                self.throat = True
                m.set_physical(C.SENSOR_TILE_PRESENT, s, 1)

    def _schedule_tile(self) -> None:
        m, t = self.m, self.m.t
        delay = 2 * t.tile_present_s + m.rng.expovariate(1.0 / t.tile_interval_s)
        if m.rng.random() < t.face_up_fraction:
            delay += t.disc_revolution_s  # face up: goes round until flipped
        m.schedule(m.now + delay, self._tile, self._gen, False)

    def _tile(self, gen: int, taken: bool) -> None:
        if gen != self._gen:
            return
        if not taken:
            if self.quadrant <= 0:
                return  # nothing left on this side's share of the disc
            self.quadrant -= 1
        # the tile reaches the push head; it waits there while a stack waits for the head, and
        # tiles pass the tile-present sensor one at a time
        self.queued += 1
        self._kick()
        if self.quadrant > 0:
            self._schedule_tile()

    def _kick(self) -> None:
        if not self._releasing:
            self._releasing = True
            self.m.schedule(max(self.m.now, self._tp_free), self._release)

    def _release(self) -> None:
        """The next waiting tile moves past the tile-present sensor into the stacker."""
        self._releasing = False
        if self.m.now < self._tp_free - 1e-9:
            return self._kick()
        if self.queued and not self.ready:
            self.queued -= 1
            self._stack_tile()
            if self.queued and not self.ready:
                self._kick()

    def _stack_tile(self) -> None:
        m = self.m
        self._tp_free = m.now + 2 * m.t.tile_present_s
        self.tiles_fed += 1
        m.set_physical(C.SENSOR_TILE_PRESENT, self.side, 1)
        m.schedule(m.now + m.t.tile_present_s, self._tile_gone)
        self.held += 1
        self.half = self.held == 1
        if self.held == 2:
            self.held = 0
            self.ready = True

    def _tile_gone(self) -> None:
        if not self.throat and not self.ready:  # a waiting stack stays in view
            self.m.set_physical(C.SENSOR_TILE_PRESENT, self.side, 0)

    def push(self) -> None:
        """Mid-stroke of the push head: a waiting stack goes into the wall (a STACK pulse)."""
        if not self.ready:
            return
        m, s = self.m, self.side
        self.ready = False
        if not self.throat:
            m.set_physical(C.SENSOR_TILE_PRESENT, s, 0)
        self.wall += 1
        self.half = False
        m.set_physical(C.SENSOR_STACK, s, 1)
        m.schedule(m.now + m.t.push_s, m.set_physical, C.SENSOR_STACK, s, 0)
        if self.queued:
            self._kick()


# ----------------------------------------------------------------------- a push head
class PushHead(Part):
    """A side's stacking head, turned by its feeder's motor through a cam: one turn
    ``push_cycle_s``, home (PUSH_HOME = 1) for the first 30 % of the turn, then out and back; at
    mid-stroke it pushes the waiting stack into the wall. A motor stopped mid-stroke leaves the
    head out. Faults: ``push-head-jammed`` (sticks on its way out and stalls the drive),
    ``push-home-stuck-off`` (the home sensor never reads 1)."""

    KINDS = ("push-head-jammed", "push-home-stuck-off")

    def __init__(self, machine: "TableModel", side: int) -> None:
        super().__init__(machine, side)
        self.cam = 0.0      # cam position, fraction of a turn
        self._t0 = 0.0
        self._on = False
        self._gen = 0

    def read(self, sensor: int, physical: int) -> int:
        if sensor == C.SENSOR_PUSH_HOME and self.has("push-home-stuck-off"):
            return 0
        return physical

    def drive(self, on: bool) -> None:
        """Start or stop the cam (its feeder motor powered or not)."""
        if on == self._on:
            return
        P = self.m.t.push_cycle_s
        if on:
            self._on, self._t0 = True, self.m.now
        else:
            self._on = False
            phase = (self.cam + (self.m.now - self._t0) / P) % 1.0
            self.cam = 0.0 if phase > 1.0 - 1e-6 else phase
        self._gen += 1
        if on:
            self._next(self._gen)

    def refresh(self) -> None:
        if self._on:  # a turning cam: its next event under the faults now
            self._gen += 1
            self._next(self._gen)

    def _next(self, gen: int) -> None:
        """Schedule the cam's next event: leaving home, the push, or home again."""
        m, P = self.m, self.m.t.push_cycle_s
        phase = (self.cam + (m.now - self._t0) / P) % 1.0
        if phase > 1.0 - 1e-6:
            phase = 0.0
        self.cam, self._t0 = phase, m.now
        jammed = self.has("push-head-jammed")
        for mark in (HOME_FRACTION, PUSH_AT, 1.0):
            if phase < mark - 1e-9:
                if jammed and mark > HOME_FRACTION:
                    return  # the head is stuck out on its way: the cam stops there
                m.schedule(m.now + (mark - phase) * P, self._at, gen, mark)
                return

    def _at(self, gen: int, mark: float) -> None:
        if gen != self._gen:
            return
        m, s = self.m, self.side
        self.cam, self._t0 = mark % 1.0, m.now
        if mark == HOME_FRACTION:
            m.set_physical(C.SENSOR_PUSH_HOME, s, 0)
        elif mark == PUSH_AT:
            m.feeders[s].push()
        else:
            m.set_physical(C.SENSOR_PUSH_HOME, s, 1)
        if gen == self._gen:  # (the motor may have been stopped by that change)
            self._next(gen)


# ----------------------------------------------------------------------------- lifts
class Lift(Part):
    """A side's wall lift: travels between its bottom and top limit sensors in ``lift_up_s`` /
    ``lift_down_s``; can be stopped anywhere and restarted. Faults: the limit sensors stuck on or
    off or reversed; ``lift-short`` (a rise stops at ``reach`` of the travel), ``lift-late``
    (up travel x ``factor``), ``lift-slow`` (up travel grows by ``wear`` per up stroke since
    injection: a failing capacitor)."""

    KINDS = ("lift-top-stuck-on", "lift-top-stuck-off", "lift-bottom-stuck-on",
             "lift-bottom-stuck-off", "lift-sensor-reversed", "lift-short", "lift-late", "lift-slow")

    def __init__(self, machine: "TableModel", side: int | None, pos: float = 0.0) -> None:
        super().__init__(machine, side)
        self.pos = pos          # at lift_t0 (fraction of the travel)
        self.vel = 0.0          # travels per s (+ up)
        self.t0 = 0.0
        self.up_strokes = 0
        self.raised = False     # went up this cycle (its wall was raised)
        self._gen = 0
        self._stroke_start: float | None = None
        self._stroke_reach = 1.0  # where the rise under way stops
        self._leave_at = 0.0      # when the moving lift leaves its limit sensor
        self._wear_from = 0       # up strokes before lift-slow was injected

    # the sensors and the motor of this lift
    @property
    def top(self) -> tuple[int, int]:
        return C.SENSOR_LIFT_TOP, self.side

    @property
    def bottom(self) -> tuple[int, int]:
        return C.SENSOR_LIFT_BOTTOM, self.side

    def direction(self) -> int | None:
        return self.m.motors.get((C.MOTOR_LIFT, self.side))

    def read(self, sensor: int, physical: int) -> int:
        which = "top" if sensor == C.SENSOR_LIFT_TOP else "bottom"
        if self.has(f"lift-{which}-stuck-on"):
            return 1
        if self.has(f"lift-{which}-stuck-off"):
            return 0
        if self.has("lift-sensor-reversed"):
            return 1 - physical
        return physical

    def inject(self, spec: FaultSpec) -> None:
        super().inject(spec)
        if spec.kind == "lift-slow":
            self._wear_from = self.up_strokes - (1 if self.vel > 0 else 0)

    def travel_time(self, up: bool) -> float:
        """Bottom-to-top (``up``) or top-to-bottom travel time now (s)."""
        t = self.m.t
        if not up:
            return t.lift_down_s
        T = t.lift_up_s
        late = self.fault("lift-late")
        if late is not None:
            T *= late.param("factor")
        slow = self.fault("lift-slow")
        if slow is not None:
            # wear from the strokes since injection before this one (a stroke in progress is
            # already counted)
            before = self.up_strokes - (1 if self.vel > 0 else 0) - self._wear_from
            T *= 1 + slow.param("wear") * max(0, before)
        return T

    def reach(self) -> float:
        """Where a rise stops now (fraction of the travel; 1 = the top)."""
        f = self.fault("lift-short")
        return 1.0 if f is None else f.param("reach")

    def position(self) -> float:
        """Where the lift is now (fraction of its travel)."""
        p = self.pos + self.vel * (self.m.now - self.t0)
        top = self._stroke_reach if self.vel > 0 else 1.0
        return min(max(p, 0.0), max(top, self.pos))

    def refresh(self) -> None:
        self.update(replan=True)

    def update(self, replan: bool = False) -> None:
        """Follow the lift motor (``replan``: also re-plan a stroke under way, the faults changed)."""
        m = self.m
        d = self.direction()
        vel = 0.0
        if d is not None:
            vel = 1.0 / self.travel_time(d == 1) * (1 if d == 1 else -1)
        old = self.vel
        if vel == old and not (replan and vel != 0.0):
            return
        going_on = vel * old > 0  # a re-plan goes on with the stroke under way
        pos = self.position()
        self.pos, self.vel, self.t0 = pos, vel, m.now
        self._gen += 1
        gen = self._gen
        if vel > 0:
            reach = self.reach()
            # the bar stops short where the fault holds it, unless it is already past there
            self._stroke_reach = reach if pos < reach else 1.0
            if pos < 1.0 and not going_on:
                self.up_strokes += 1 if pos <= 0.0 else 0
                self._stroke_start = m.now
            if pos <= 0.0 and not going_on:
                self._leave_at = m.now + LEAVE_S
            if self._leave_at > m.now and m.physical[self.bottom]:
                m.schedule(self._leave_at, self._leaves, gen, self.bottom)
            if self._stroke_reach >= 1.0 and pos < 1.0:
                m.schedule(m.now + (1.0 - pos) / vel, self._arrives, gen, True)
        elif vel < 0:
            if pos > 0.0 and not going_on:
                self._stroke_start = m.now
            if pos >= 1.0 and not going_on:
                self._leave_at = m.now + LEAVE_S
            if self._leave_at > m.now and m.physical[self.top]:
                m.schedule(self._leave_at, self._leaves, gen, self.top)
            if pos > 0.0:
                m.schedule(m.now + pos / -vel, self._arrives, gen, False)

    def _leaves(self, gen: int, key: tuple[int, int]) -> None:
        if gen == self._gen:
            self.m.set_physical(key[0], key[1], 0)
            if key == self.bottom:
                self.raised = True

    def _arrives(self, gen: int, up: bool) -> None:
        if gen != self._gen:
            return
        m = self.m
        self.pos, self.t0 = (1.0 if up else 0.0), m.now
        self.stroke_done(up)
        key = self.top if up else self.bottom
        m.set_physical(key[0], key[1], 1)
        self.arrived(up)

    def stroke_done(self, up: bool) -> None:
        if self._stroke_start is not None:
            self.m.lift_times.append((self.side, up, self.m.now - self._stroke_start))
            self._stroke_start = None

    def arrived(self, up: bool) -> None:
        """The lift reached its top (``up``) or bottom limit."""


class CentreLift(Lift):
    """The centre lift: rests at the top, closing the hole; ``centre_up_s`` / ``centre_down_s``.
    When it reaches the bottom after the four walls were raised, the played set (pushed into the
    centre) drops into the disc: the next set. Fault ``centre-lift-stuck`` (it does not move)."""

    KINDS = ("centre-lift-stuck",)

    def __init__(self, machine: "TableModel") -> None:
        super().__init__(machine, None, pos=1.0)

    @property
    def top(self) -> tuple[int, int]:
        return C.SENSOR_CENTRE_TOP, NONE

    @property
    def bottom(self) -> tuple[int, int]:
        return C.SENSOR_CENTRE_BOTTOM, NONE

    def direction(self) -> int | None:
        if self.has("centre-lift-stuck"):
            return None  # tiles wedged under the plate, or the motor: it does not move
        return self.m.motors.get((C.MOTOR_CENTRE, NONE))

    def read(self, sensor: int, physical: int) -> int:
        return physical

    def travel_time(self, up: bool) -> float:
        return self.m.t.centre_up_s if up else self.m.t.centre_down_s

    def reach(self) -> float:
        return 1.0

    def stroke_done(self, up: bool) -> None:
        self._stroke_start = None  # the centre lift's strokes are not in lift_times

    def arrived(self, up: bool) -> None:
        if not up:
            self.m.centre_down()


# ------------------------------------------------------------------------------ dice
class Dice(Part):
    """The dice cup: spins while its motor runs (DICE_PULSE); when it stops, two dice show
    (``value``). Fault ``dice-stuck`` (the motor does not spin the cup)."""

    KINDS = ("dice-stuck",)

    def __init__(self, machine: "TableModel") -> None:
        super().__init__(machine)
        self.pulse = Pulse(machine, C.SENSOR_DICE_PULSE, NONE, machine.t.dice_pulse_s)
        self.value: tuple[int, int] | None = None

    def update(self) -> None:
        spinning = (C.MOTOR_DICE, NONE) in self.m.motors and not self.has("dice-stuck")
        was = self.pulse.on
        self.pulse.set(spinning)
        if was and not spinning:
            self.value = (self.m.rng.randint(1, 6), self.m.rng.randint(1, 6))


class Link(Part):
    """The serial line and the microcontroller, as the simulated MCU device sees them
    (``hardware.sim.mcu_device``): ``mcu-reset`` and ``link-broken`` at their onset ``at``,
    ``link-noise`` (a ``rate`` of the bytes hit)."""

    KINDS = ("mcu-reset", "link-noise", "link-broken")
