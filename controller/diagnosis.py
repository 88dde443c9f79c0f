"""Diagnosis: what was observed during a cycle, and which catalogue fault it points to.

The one diagnosis engine (issue #16 section 3). Three layers:

* the judges (``travelled``, ``turned``, ``rest_limits_code``, ``no_travel_code``, ``missed_top_code``,
  ``late``, ``feeder_code``, ``push_head_code``, ``slow_trend``): measured values in, a catalogue code
  out, with the one set of thresholds below (shares of the profile's nominal timings). The cycle and
  the self-test (controller.selftest) both decide their codes here;
* the cycle's judgings, pure functions over ``Observations`` (an immutable record the state machine
  updates from the hardware events): ``homing_faults``, ``lift_faults``, ``probe_faults``,
  ``build_faults``, ``feeder_fault`` ... each return every fault seen (``after_*`` the first), as
  ``controller.faults.Diagnosis`` with the measured evidence;
* the texts: each diagnosis names its code and a variant, and its observed texts (English and
  Chinese) come from the templates of controller.fault_texts, next to the catalogue.

How faults are told apart (the technician's answers, ../shared/seeds/002_4c2a73aa42bc09ab.txt,
and the machine's sensors):

* Lift limit sensors, read at rest after homing (lift down): top and bottom both active: the top
  sensor is stuck active (E11); top active and bottom inactive: both read inverted, polarity
  reversed (E15); neither active after a full down travel: the bottom sensor gives no signal (E14).
  At the top: bottom still active: the bottom sensor is stuck (E13).
* A lift that misses the top: it is lowered again and the way down is timed. A full-length way
  down (>= 95 % of nominal) means the lift did reach the top and the top sensor never said so
  (E12); a shorter one means the bar stopped part-way, 升牌杆不到位 (E21); a side whose travel time
  has been growing cycle after cycle is a failing lift-motor capacitor (E23). A lift whose bottom
  limit never released did not move at all (E71).
* A lift that reaches the top but late: uneven walls (E22, a warning); growing over cycles: E23.
* The centre lift (the played set drops through it, then it closes the hole): a stroke that misses
  its limit by the deadline is E24.
* A feeder that missed its deadline: no motion pulses at all with the push head out (its home
  sensor went inactive and stayed so): the push head jammed and stalled the shared drive (E34);
  no motion pulses with the head home: the motor's wire (E31); motion pulses but no tile passing:
  the wheel is jammed (E32). Every stack counted and the deadline still passed: the push head was
  never seen home: no home-sensor change at all is the sensor (E35), a head that moved and stayed
  out is jammed (E34). Stacks counted with no tile-present edge: the tile-present sensor is dirty
  (E33).
* The jam sensor going active while anything moves: a tile jammed at the disc outlet (E53).
* Stack counts against the gear: every side short by the same number, or every side complete with
  a tile left at the throat: the gear does not match the tiles (E41); one side one tile short: a
  tile is missing (E42); anything else: E43.
* No disc pulse while shuffling: the disc stalls (E51); no dice pulse while the dice motor ran:
  the dice did not spin (E52, a warning: the break is still computed).
"""

from __future__ import annotations

import dataclasses
import statistics

from hardware.vocabulary import MotionDone, Outcome, Sensor, Side

from .fault_texts import observed
from .faults import BY_CODE, Diagnosis
from .names import SIDES, SIDES_ZH, phase_zh

# --- the thresholds: one set, for the cycle and the self-test alike ----------------------------
# Each is a share of (or a count against) the machine profile's own nominal figure (hardware/profiles/
# *.toml, [timing]: lift_up_s, lift_down_s, the pulse half-periods), so a table with faster lifts is
# judged against its own travel.
#: a way down at least this share of nominal means the lift had reached the top (E12), less: the bar
#: stopped part-way (E21)
FULL_TRAVEL = 0.95
#: a limit reached in less than this share of the nominal travel did not really travel (the limit
#: already read active, or fired early)
MIN_TRAVEL = 0.5
#: a lift up slower than this share of nominal is late (uneven walls, E22)
LATE = 1.25
#: growth over the side's first recorded travel that counts as a trend (E23)
GROWTH = 1.10
#: a lift up this share of nominal or slower in each of the last SLOW_CYCLES cycles is slowing (an E23
#: warning from the trend, before it becomes late or misses its deadline)
SLOW = 1.15
SLOW_CYCLES = 3
#: pulse sensors: fewest changes that prove a motor turns (a stuck input gives none)
MIN_PULSES = 1
TREND_KEEP = 20
#: a feeder's drive pulses every feeder_pulse_s (0.25 s) and its push head's home sensor changes
#: about twice per push_cycle_s (0.4 s) while it turns (default profile): no change for this long
#: (ms) means it had stopped
QUIET_MS = 1000


def _i(side: str | None) -> int:
    return SIDES.index(side) if side else -1


def _set(t: tuple, i: int, v) -> tuple:
    return t[:i] + (v,) + t[i + 1:]


def with_changes(obj, **changes):
    """A copy of the frozen dataclass ``obj`` with ``changes``: ``dataclasses.replace`` without its
    per-field ``__init__`` pass, for the per-sensor-event hot path (the fields are already valid)."""
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    new.__dict__.update(changes)
    return new


@dataclasses.dataclass(frozen=True)
class Observations:
    """What the controller saw during the current cycle. Per-side tuples are in E, S, W, N order.

    Attributes:
        stacks: stacks counted per side in this build.
        feeding: sides with a FeedStacks running.
        feed_outcome: per side, the outcome of the last FeedStacks (None while running).
        feed_ms: per side, how long the last FeedStacks ran (ms; None while running): its deadline, or
            less when the device stopped a stalled feeder (the motion engine's stall-to-stop, docs/protocol.md section 3).
        feeder_edges, tile_edges: per side, changes of the feeder-motion and tile-present inputs
            while building.
        disc_edges: disc rotation pulses (edges) while shuffling and building.
        dice_edges: dice rotation pulses while the dice motor ran.
        lift_dir: per side, the direction last commanded (True up, False down, None none).
        lift_outcome, lift_ms: per side, outcome and travel time (ms) of the last lift motion.
        bottom_left: per side, whether the bottom limit released during the up motion.
        probing: the sides lowered again after missing the top, in the order they missed (E S W N
            letters); probe_ms, probe_outcome: per side, that way down (ms) and its outcome.
        feed_base: per side, the stacks already counted when the running FeedStacks began (a
            refill pause resumes with the rest); the microcontroller's own count in MotionDone
            is added to it, so a sensor event lost on the link does not lose a stack.
        events_dropped: sensor events the microcontroller could not send (its queue was full).
        lift_was_up: per side, the lift was known to be at the top when this motion began.
        push_edges: per side, changes of the push-head home sensor while building.
        centre_dir: direction last commanded to the centre lift (True up, False down, None none).
        centre_outcome, centre_ms: outcome and travel time (ms) of its last motion.
        last_motion_ms, last_home_ms: per side, time (ms, the events' clock) of the last feeder-motion
            and push-home change while building.
        tiles_since_stack: per side, tile-present changes since the side's last stack.
        quiet: per side, for a feed that ended at its deadline, ``(drive_quiet, home_quiet)``: no
            feeder-motion / push-home change in the last ``QUIET_MS`` before it ended (a fault that
            began part-way through the build stops the pulses then, not from the start).
    """

    stacks: tuple = (0, 0, 0, 0)
    feeding: tuple = (False, False, False, False)
    feed_outcome: tuple = (None, None, None, None)
    feed_ms: tuple = (None, None, None, None)
    feeder_edges: tuple = (0, 0, 0, 0)
    tile_edges: tuple = (0, 0, 0, 0)
    disc_edges: int = 0
    dice_edges: int = 0
    lift_dir: tuple = (None, None, None, None)
    lift_outcome: tuple = (None, None, None, None)
    lift_ms: tuple = (None, None, None, None)
    bottom_left: tuple = (False, False, False, False)
    probing: tuple = ()
    probe_ms: tuple = (None, None, None, None)
    probe_outcome: tuple = (None, None, None, None)
    feed_base: tuple = (0, 0, 0, 0)
    events_dropped: int = 0
    lift_was_up: tuple = (False, False, False, False)
    push_edges: tuple = (0, 0, 0, 0)
    centre_dir: bool | None = None
    centre_outcome: Outcome | None = None
    centre_ms: int | None = None
    last_motion_ms: tuple = (None, None, None, None)
    last_home_ms: tuple = (None, None, None, None)
    tiles_since_stack: tuple = (0, 0, 0, 0)
    quiet: tuple = (None, None, None, None)

    # -- updates (each returns a new record) --
    def lifts_commanded(self, down: bool, were_up: tuple = (False, False, False, False)) -> "Observations":
        """The four side lifts were sent down (or up)."""
        return dataclasses.replace(self, lift_dir=(not down,) * 4, lift_outcome=(None,) * 4, lift_ms=(None,) * 4,
                                   bottom_left=(False,) * 4, probing=(), probe_ms=(None,) * 4, probe_outcome=(None,) * 4,
                                   lift_was_up=tuple(were_up))

    def centre_commanded(self, up: bool) -> "Observations":
        return dataclasses.replace(self, centre_dir=up, centre_outcome=None, centre_ms=None)

    def start_shuffle(self) -> "Observations":
        return dataclasses.replace(self, disc_edges=0)

    def start_feeding(self, resume: bool = False, sides: list[int] | None = None) -> "Observations":
        which = tuple(i in (sides if sides is not None else range(4)) for i in range(4))
        if resume:
            # a side not fed again keeps its outcome (a feed that ended at its deadline is still judged)
            outcome = tuple(None if w else o for w, o in zip(which, self.feed_outcome))
            return dataclasses.replace(self, feeding=which, feed_outcome=outcome, feed_base=self.stacks)
        return dataclasses.replace(self, feeding=which, feed_outcome=(None,) * 4, stacks=(0,) * 4,
                                   feeder_edges=(0,) * 4, tile_edges=(0,) * 4, feed_base=(0,) * 4, events_dropped=0,
                                   push_edges=(0,) * 4, last_motion_ms=(None,) * 4, last_home_ms=(None,) * 4,
                                   tiles_since_stack=(0,) * 4, quiet=(None,) * 4)

    def start_parking(self, sides: list[int]) -> "Observations":
        """Push heads of ``sides`` are being brought home (FeedStacks with 0 stacks); their motion
        and home-sensor edges are counted afresh (the build, if any, was judged already)."""
        which = tuple(i in sides for i in range(4))
        return dataclasses.replace(self, feeding=which, feed_outcome=(None,) * 4, feeder_edges=(0,) * 4,
                                   push_edges=(0,) * 4)

    def dropped(self, n: int) -> "Observations":
        return dataclasses.replace(self, events_dropped=self.events_dropped + n)

    def stack(self, side: str | None) -> "Observations":
        i = _i(side)
        return with_changes(self, stacks=_set(self.stacks, i, self.stacks[i] + 1),
                                   tiles_since_stack=_set(self.tiles_since_stack, i, 0)) if i >= 0 else self

    def feed_quiet(self, i: int, now_ms: int) -> "Observations":
        """Side ``i``'s feed ended at its deadline at ``now_ms``: record whether its drive and its
        push-head home sensor had gone quiet (no change in the last ``QUIET_MS``)."""
        def quiet(t):
            return t is None or now_ms - t > QUIET_MS
        return dataclasses.replace(self, quiet=_set(self.quiet, i, (quiet(self.last_motion_ms[i]),
                                                                    quiet(self.last_home_ms[i]))))

    def probe(self, side: str) -> "Observations":
        """Side ``side`` missed the top and is lowered again (its way down is timed)."""
        return dataclasses.replace(self, probing=self.probing + (side,))

    def probes_done(self) -> bool:
        """Every side lift has ended its up motion and every side lowered again has ended that too."""
        return (all(o is not None for o in self.lift_outcome)
                and all(self.probe_outcome[_i(side)] is not None for side in self.probing))

    def sensor(self, ev, phase: str) -> "Observations":
        s = ev.sensor
        if s is Sensor.DISC_PULSE:
            return with_changes(self, disc_edges=self.disc_edges + 1) if phase in ("shuffling", "building") \
                else self
        if s is Sensor.DICE_PULSE:
            return with_changes(self, dice_edges=self.dice_edges + 1) if phase == "dice" else self
        i = _i(None if ev.side is None else SIDES[int(ev.side)])
        if i < 0:
            return self
        if s is Sensor.FEEDER_MOTION and phase in ("building", "parking"):
            return with_changes(self, feeder_edges=_set(self.feeder_edges, i, self.feeder_edges[i] + 1),
                                       last_motion_ms=_set(self.last_motion_ms, i, ev.t_ms))
        if s is Sensor.TILE_PRESENT and phase == "building":
            return with_changes(self, tile_edges=_set(self.tile_edges, i, self.tile_edges[i] + 1),
                                       tiles_since_stack=_set(self.tiles_since_stack, i, self.tiles_since_stack[i] + 1))
        if s is Sensor.PUSH_HOME and phase in ("building", "parking"):
            return with_changes(self, push_edges=_set(self.push_edges, i, self.push_edges[i] + 1),
                                       last_home_ms=_set(self.last_home_ms, i, ev.t_ms))
        if s is Sensor.LIFT_BOTTOM and ev.value == 0 and self.lift_dir[i] is True:
            return with_changes(self, bottom_left=_set(self.bottom_left, i, True))
        return self

    def motion_done(self, ev: MotionDone) -> "Observations":
        i = _i(None if ev.side is None else SIDES[int(ev.side)])
        if ev.command == "Lift" and ev.side is None:
            return dataclasses.replace(self, centre_outcome=ev.outcome, centre_ms=ev.elapsed_ms)
        if ev.command == "FeedStacks" and i >= 0:
            counted = max(self.stacks[i], self.feed_base[i] + ev.detail)
            return dataclasses.replace(self, feed_outcome=_set(self.feed_outcome, i, ev.outcome),
                                       feed_ms=_set(self.feed_ms, i, ev.elapsed_ms),
                                       stacks=_set(self.stacks, i, counted))
        if ev.command == "Lift" and i >= 0:
            if SIDES[i] in self.probing and self.lift_outcome[i] is not None:
                return dataclasses.replace(self, probe_ms=_set(self.probe_ms, i, ev.elapsed_ms),
                                           probe_outcome=_set(self.probe_outcome, i, ev.outcome))
            return dataclasses.replace(self, lift_outcome=_set(self.lift_outcome, i, ev.outcome),
                                       lift_ms=_set(self.lift_ms, i, ev.elapsed_ms))
        return self

    # -- queries --
    def all_lifts_done(self) -> bool:
        """Every side lift commanded has ended, and the centre lift if it was commanded."""
        return all(o is not None for o in self.lift_outcome) and self.centre_done()

    def centre_done(self) -> bool:
        return self.centre_dir is None or self.centre_outcome is not None

    def all_feeders_done(self) -> bool:
        return all(o is not None for o, f in zip(self.feed_outcome, self.feeding) if f)


def _diag(code: str, side: str | None, variant: str, evidence: dict, **values) -> Diagnosis:
    """The diagnosis ``code`` on ``side``: its observed texts from the templates of
    :data:`controller.fault_texts.OBSERVED` (``variant``, filled from ``values`` and the side), and the
    measured ``evidence``."""
    en, zh = observed(code, variant, side=side, **values)
    return Diagnosis(BY_CODE[code], side, en, zh, dict(evidence))


def _level(sensors, sensor: Sensor, i: int) -> int | None:
    return sensors.get((sensor, Side(i)))


# --- the judges: observations -> fault code, shared by the cycle and the self-test ---------------
# Each takes what was measured (readings, counts, times against the profile's nominal) and returns
# the catalogue code or None. The cycle's ``after_*`` functions and controller.selftest's part
# verdicts both decide their code here; tests/controller/test_one_code.py runs every injectable
# fault through both and compares.

def travelled(elapsed_ms: int, nominal_s: float) -> bool:
    """A motion that reached its limit after ``elapsed_ms`` (ms) really travelled: at least
    ``MIN_TRAVEL`` of its nominal time ``nominal_s`` (s, from the profile)."""
    return elapsed_ms >= 1000 * MIN_TRAVEL * nominal_s


def turned(changes: int) -> bool:
    """A pulse sensor (disc, feeder wheel, dice) that changed ``changes`` times proves its motor turned."""
    return changes >= MIN_PULSES


def rest_limits_code(top: int | None, bottom: int | None) -> str | None:
    """A side lift down at rest must read top 0, bottom 1. Both active: the top sensor is stuck (E11);
    top active and bottom not: both read inverted (E15); neither: the bottom gives no signal (E14)."""
    if top == 1:
        return "E11" if bottom == 1 else "E15"
    return "E14" if bottom == 0 else None


def no_travel_code(up: bool, left_limit_active: bool) -> str:
    """A lift told to go ``up`` (or down) 'arrived' at once without travelling. If the limit it left
    still reads active the target limit is stuck active (E11 top / E13 bottom); else both read the
    reverse of the position (E15)."""
    if left_limit_active:
        return "E11" if up else "E13"
    return "E15"


def missed_top_code(bottom_released: bool, down_completed: bool, down_ms: int, nominal_down_s: float) -> str:
    """A lift up ran into its deadline without the top limit and was lowered again (its way down
    timed, ``down_ms``). The bottom limit never released: the lift did not move (E71). The way down
    never reached the bottom limit: the bottom sensor (E14). A full way down (``FULL_TRAVEL`` of the
    nominal ``nominal_down_s``): it had reached the top, the top sensor is silent (E12); shorter: the
    bar stopped part-way, 升牌杆不到位 (E21)."""
    if not bottom_released:
        return "E71"
    if not down_completed:
        return "E14"
    return "E12" if down_ms >= 1000 * FULL_TRAVEL * nominal_down_s else "E21"


def late(up_ms: int, nominal_up_s: float) -> bool:
    """A lift that reached the top after more than ``LATE`` x nominal is late (E22, a warning)."""
    return up_ms > 1000 * LATE * nominal_up_s


def feeder_code(wheel_turned: bool, head_out: bool, tiles_came: bool, flow_judged: bool = True) -> str | None:
    """A feeder that ran: no wheel motion with its push head out and stuck: the head stalled the
    drive it shares (E34); no motion otherwise: the motor's wire (E31); motion but no tile while tiles
    could come (``flow_judged``: the disc turned, nothing jammed, tiles in the machine): the wheel is
    jammed (E32)."""
    if not wheel_turned:
        return "E34" if head_out else "E31"
    if not tiles_came and flow_judged:
        return "E32"
    return None


def push_head_code(drive_turned: bool, home_changes: int, came_home: bool) -> str | None:
    """A push head driven by its turning feeder (its cam): the home sensor never changed while the
    drive turned: the sensor (E35); the head did not come home: jammed out (E34)."""
    if drive_turned and home_changes == 0:
        return "E35"
    if not came_home:
        return "E34"
    return None


def slow_trend(history: tuple[float, ...], nominal_up_s: float) -> bool:
    """The last ``SLOW_CYCLES`` up travels (s, oldest first) were each at least ``SLOW`` x nominal:
    the lift is consistently slow (its motor or capacitor weakening), a warning before it is late."""
    last = history[-SLOW_CYCLES:]
    return len(last) == SLOW_CYCLES and all(t >= SLOW * nominal_up_s for t in last)


# --- lifts ------------------------------------------------------------------------------------

def _no_travel(obs: Observations, i: int, nominal_s: float) -> bool:
    """The lift 'arrived' at once although it was known to be at the other limit."""
    return obs.lift_outcome[i] is Outcome.COMPLETED and not travelled(obs.lift_ms[i] or 0, nominal_s)


def _did_not_move(side: str, up: bool, ms: int, top, bottom, s) -> Diagnosis:
    """A lift told to go ``up`` (or down) from the other end 'arrived' at once: the limit it was
    going to already read active (code: :func:`no_travel_code`)."""
    code = no_travel_code(up, (bottom if up else top) == 1)
    variant = "did-not-move" if code != "E15" else ("no-travel-up" if up else "no-travel-down")
    return _diag(code, side, variant, {"top": top, "bottom": bottom, ("up_ms" if up else "down_ms"): ms},
                 ms=ms, nominal_s=s.lift_up_s if up else s.lift_down_s)


def _rest_limits(side: str, top, bottom, out, ms: int, s) -> Diagnosis | None:
    """Lift ``side`` lowered (outcome ``out`` after ``ms``) and read at rest: :func:`rest_limits_code`."""
    code = rest_limits_code(top, bottom)
    if code == "E11":
        return _diag("E11", side, "at-rest", {"top": top, "bottom": bottom})
    if code == "E15":
        return _diag("E15", side, "at-rest", {"top": top, "bottom": bottom, "down_ms": ms}, down_s=ms / 1000,
                     outcome=out.name.lower() if out is not None else "no answer")
    if code == "E14" and out is Outcome.DEADLINE:
        return _diag("E14", side, "down-deadline", {"top": top, "bottom": bottom, "down_ms": ms}, down_s=ms / 1000,
                     deadline_s=s.lift_deadline_ms / 1000, nominal_s=s.lift_down_s)
    return None


def homing_faults(obs: Observations, sensors, s) -> tuple[Diagnosis, ...]:
    """Lifts down at rest: both limit sensors of each side must read bottom active, top inactive
    (:func:`rest_limits_code`); then the centre lift's stroke. Every side at fault, in E S W N order.

    A lift that was up (walls up) and 'reached' the bottom at once did not move: its bottom
    limit reads active at the top (stuck, E13) or both limits read inverted (E15)."""
    out = []
    for i, side in enumerate(SIDES):
        top, bottom = _level(sensors, Sensor.LIFT_TOP, i), _level(sensors, Sensor.LIFT_BOTTOM, i)
        ms = obs.lift_ms[i] or 0
        if obs.lift_was_up[i] and _no_travel(obs, i, s.lift_down_s):
            out.append(_did_not_move(side, False, ms, top, bottom, s))
            continue
        d = _rest_limits(side, top, bottom, obs.lift_outcome[i], ms, s)
        if d is not None:
            out.append(d)
    centre = centre_stroke(obs, sensors, s)
    return tuple(out) + ((centre,) if centre else ())


def after_homing(obs: Observations, sensors, s) -> Diagnosis | None:
    """The first of :func:`homing_faults`, or None."""
    return next(iter(homing_faults(obs, sensors, s)), None)


def centre_stroke(obs: Observations, sensors, s) -> Diagnosis | None:
    """The centre lift's last stroke (down: the played set drops; up: the hole closes) must reach its
    limit within the deadline (profile ``centre_deadline_s``), else E24. A stroke cut short by a stop
    (SAFE_STOP, STOPPED) is not the lift's fault: the stop is reported by itself."""
    if obs.centre_dir is None or obs.centre_outcome is not Outcome.DEADLINE:
        return None
    up = obs.centre_dir
    ms = obs.centre_ms or 0
    top, bottom = sensors.get((Sensor.CENTRE_TOP, None)), sensors.get((Sensor.CENTRE_BOTTOM, None))
    left = top == 0 if not up else bottom == 0
    return _diag("E24", None, f"{'up' if up else 'down'}-{'left' if left else 'stuck'}",
                 {"ms": ms, "up": up, "top": top, "bottom": bottom}, ms_s=ms / 1000,
                 deadline_s=s.centre_deadline_ms / 1000, nominal_s=s.centre_up_s if up else s.centre_down_s,
                 top=top, bottom=bottom)


def after_parking(obs: Observations, sensors, s) -> Diagnosis | None:
    """Push heads left out (a stop mid-stroke) were driven home before the lifts rise. One that did
    not arrive by its deadline: the drive turned (motion pulses) but the home sensor never changed
    is the sensor (E35); otherwise the head is stuck out (E34) (:func:`push_head_code`)."""
    for i, side in enumerate(SIDES):
        if not obs.feeding[i] or obs.feed_outcome[i] is not Outcome.DEADLINE:
            continue
        home = _level(sensors, Sensor.PUSH_HOME, i)
        code = push_head_code(turned(obs.feeder_edges[i]), obs.push_edges[i], False)
        return _diag(code, side, "parking", {"push_home": home, "feeder_pulses": obs.feeder_edges[i]},
                     wait_s=s.park_deadline_ms / 1000, pulses=obs.feeder_edges[i], home=home)
    return None


def tile_jam(phase: str) -> Diagnosis:
    return _diag("E53", None, "jam", {"phase": phase}, phase=phase)


def lift_faults(obs: Observations, sensors, s) -> tuple[Diagnosis, ...]:
    """All lifts reached the top: they must have travelled (:func:`travelled`), and the bottom
    limits released. Every side at fault, in E S W N order."""
    out = []
    for i, side in enumerate(SIDES):
        top, bottom = _level(sensors, Sensor.LIFT_TOP, i), _level(sensors, Sensor.LIFT_BOTTOM, i)
        if _no_travel(obs, i, s.lift_up_s):
            out.append(_did_not_move(side, True, obs.lift_ms[i] or 0, top, bottom, s))
        elif bottom == 1 and top == 1:
            out.append(_diag("E13", side, "at-top", {"up_ms": obs.lift_ms[i]}, up_s=(obs.lift_ms[i] or 0) / 1000))
    return tuple(out)


def after_lift(obs: Observations, sensors, s) -> Diagnosis | None:
    """The first of :func:`lift_faults`, or None."""
    return next(iter(lift_faults(obs, sensors, s)), None)


def _growing(history: tuple[float, ...], latest: float) -> bool:
    """A side's travel time is growing: above its earlier times, and by GROWTH over the first."""
    return bool(history) and latest > max(history) * 1.02 and latest >= history[0] * GROWTH


def probe_faults(obs: Observations, trend: tuple, s) -> tuple[Diagnosis, ...]:
    """The lifts that missed the top (``obs.probing``), each lowered again: tell sensor, short travel and
    slow motor apart (:func:`missed_top_code`; a trend of growing travel times first: E23). One
    diagnosis per side, in the order the sides missed."""
    return tuple(_probe(obs, side, trend, s) for side in obs.probing)


def after_probe(obs: Observations, trend: tuple, s) -> Diagnosis:
    """The first of :func:`probe_faults`."""
    return probe_faults(obs, trend, s)[0]


def _probe(obs: Observations, side: str, trend: tuple, s) -> Diagnosis:
    i = _i(side)
    up_ms = obs.lift_ms[i] or 0
    hist = trend[i]
    deadline = s.lift_deadline_ms / 1000
    down_ms, down_out = obs.probe_ms[i], obs.probe_outcome[i]
    code = missed_top_code(obs.bottom_left[i], down_out is Outcome.COMPLETED, down_ms or 0, s.lift_down_s)
    if code == "E71":
        return _diag("E71", side, "did-not-move", {"up_ms": up_ms}, up_s=up_ms / 1000)
    # a capacitor failing shows in the completed travels of earlier cycles growing; the travel
    # cut short by the deadline says nothing about it (the probe below decides then)
    if len(hist) >= 2 and _growing(hist[:-1], hist[-1]):
        return _diag("E23", side, "growing-missed", {"up_ms": up_ms, "trend_s": list(hist)}, deadline_s=deadline,
                     history=_times(hist[-5:]), nominal_s=s.lift_up_s)
    down = (down_ms or 0) / 1000
    values = dict(up_s=up_ms / 1000, deadline_s=deadline, down_s=down, nominal_s=s.lift_down_s)
    variant = {"E14": "missed-both", "E12": "full-way-down", "E21": "short-way-down"}[code]
    return _diag(code, side, variant, {"up_ms": up_ms, "down_ms": down_ms},
                 pct=min(100, round(100 * down / s.lift_down_s)), **values)


def _times(times) -> str:
    """Travel times (s) as the texts list them: ``"2.00, 2.10"``."""
    return ", ".join(f"{t:.2f}" for t in times)


def lift_warnings(obs: Observations, trend: tuple, s) -> tuple[Diagnosis, ...]:
    """Late or slowing lifts (warnings: the walls rose, unevenly). ``trend``: the earlier cycles' up
    times per side (s), this cycle not yet in it. Growing over the earlier cycles, or slow
    (:func:`slow_trend`, at least ``SLOW`` x nominal) in each of the last ``SLOW_CYCLES`` cycles with
    this one: E23; late this cycle (:func:`late`): E22."""
    out = []
    times = [(obs.lift_ms[i] or 0) / 1000 for i in range(4)]
    for i, side in enumerate(SIDES):
        t = times[i]
        others = statistics.median(times[:i] + times[i + 1:])
        if _growing(trend[i], t):
            out.append(_diag("E23", side, "growing", {"up_s": t, "trend_s": list(trend[i])}, up_s=t,
                             history=_times(trend[i][-5:]), nominal_s=s.lift_up_s,
                             deadline_s=s.lift_deadline_ms / 1000))
        elif late(obs.lift_ms[i] or 0, s.lift_up_s):
            out.append(_diag("E22", side, "late", {"up_s": t, "others_s": others}, up_s=t, nominal_s=s.lift_up_s,
                             others_s=others))
        elif slow_trend(trend[i] + (t,), s.lift_up_s):
            last = trend[i][-(SLOW_CYCLES - 1):] + (t,)
            pct = round(100 * (min(last) / s.lift_up_s - 1))
            out.append(_diag("E23", side, "slow", {"up_s": t, "trend_s": list(last), "slower_pct": pct}, pct=pct,
                             nominal_s=s.lift_up_s, cycles=SLOW_CYCLES, history=_times(last), others_s=others))
    return tuple(out)


def update_trend(trend: tuple, obs: Observations) -> tuple:
    """Append this cycle's lift-up times (s) per side, keeping the last TREND_KEEP."""
    return tuple((trend[i] + ((obs.lift_ms[i] or 0) / 1000,))[-TREND_KEEP:] for i in range(4))


# --- shuffle, feeders, counts -----------------------------------------------------------------

def after_shuffle(obs: Observations) -> Diagnosis | None:
    """No disc rotation pulse while shuffling (:func:`turned`): the disc stalls (E51)."""
    if not turned(obs.disc_edges):
        return _diag("E51", None, "no-pulse", {"disc_pulses": obs.disc_edges})
    return None


def _ran_s(obs: Observations, s, i: int) -> str:
    """How long side ``i``'s feeder ran before it was stopped, as text in s: the deadline, or less when the
    device stopped it as stalled (no motion pulse, or no tile, for its stall window)."""
    ms = obs.feed_ms[i] if obs.feed_ms[i] is not None else s.feed_deadline_ms[i]
    return f"{ms / 1000:.1f}" if ms < 10_000 else f"{ms / 1000:.0f}"


def _drive_quiet(obs: Observations, i: int) -> bool:
    """Side ``i``'s feeder drive gave no motion pulse at all, or none in the last ``QUIET_MS`` of its feed."""
    q = obs.quiet[i]
    return not turned(obs.feeder_edges[i]) if q is None else q[0]


def _head_not_home(obs: Observations, sensors, s, i: int, side: str) -> Diagnosis:
    """Side ``i`` built all its stacks but its feed ended at the deadline: the push head was never seen home
    (:func:`push_head_code`: a home sensor that stopped changing while the drive turned is the sensor)."""
    got, home = obs.stacks[i], _level(sensors, Sensor.PUSH_HOME, i)
    q = obs.quiet[i]
    stopped_changing = obs.push_edges[i] > 0 and q is not None and q[1] and not q[0]
    code = push_head_code(True, 0 if stopped_changing else obs.push_edges[i], False)
    variant = ("not-home-after-build" if code == "E34" else "stopped-changing" if stopped_changing
               else "never-changed")
    return _diag(code, side, variant, {"push_home": home, "stacks": got}, got=got, home=home,
                 ran_s=_ran_s(obs, s, i), quiet_s=QUIET_MS / 1000)


#: the order in which the feeders' findings come first (a head stuck out before a loose wire ...)
_FEED_RANK = {"E34": 0, "E35": 0, "E31": 1, "E32": 2, "E33": 3}


def feeder_fault(obs: Observations, sensors, s, i: int) -> Diagnosis | None:
    """Side ``i``'s feed, ended at its deadline (or stopped by the device as stalled), judged on its
    own (:func:`feeder_code`): a push head stuck out (E34), every stack built but the head never seen
    home (E35/E34), no wheel motion (E31), motion but not one tile (E32). None when the feed did not
    end at its deadline or none of these applies (the stack counts are judged with all sides)."""
    if obs.feed_outcome[i] is not Outcome.DEADLINE:
        return None
    side = SIDES[i]
    exp, got = s.stacks[i], obs.stacks[i]
    home = _level(sensors, Sensor.PUSH_HOME, i)
    head_out = home == 0 and obs.push_edges[i] > 0
    code = feeder_code(not _drive_quiet(obs, i), head_out, obs.tile_edges[i] > 0 or got > 0)
    if code is None or (code != "E34" and got >= exp):
        return _head_not_home(obs, sensors, s, i, side) if got >= exp else None
    pulses = obs.feeder_edges[i]
    variant = {"E34": "head-out-no-motion" if pulses == 0 else "head-out-stopped",
               "E31": "no-motion" if pulses == 0 else "stopped-turning", "E32": "no-tile"}[code]
    evidence = {"E34": {"push_home": home, "feeder_pulses": pulses, "stacks": got, "expected": exp},
                "E31": {"feeder_pulses": pulses, "stacks": got, "expected": exp},
                "E32": {"feeder_pulses": pulses, "stacks": 0}}[code]
    return _diag(code, side, variant, evidence, ran_s=_ran_s(obs, s, i), got=got, expected=exp, pulses=pulses,
                 quiet_s=QUIET_MS / 1000)


def build_faults(obs: Observations, sensors, s) -> tuple[Diagnosis, ...]:
    """The four feeders are done: each side's feeder (:func:`feeder_fault`) and tile sensor (stacks
    counted with no tile-present change: E33); when no side is at fault, the stack counts against the
    gear (E41, E42, E32, E43). Every side at fault is listed, the most telling first (a head stuck
    out, a loose wire, a jammed wheel, a dirty sensor)."""
    exp, got = s.stacks, obs.stacks
    if obs.events_dropped:
        # sensor edges were lost on the link: judge only what the microcontroller itself counted
        if any(exp[i] - got[i] for i in range(4)):
            return _found(_stack_counts(obs, sensors, s))
        # every stack counted: a feed that still ended at its deadline never saw its push head home
        # (the microcontroller's own finding, whatever edges were lost)
        return tuple(_head_not_home(obs, sensors, s, i, side) for i, side in enumerate(SIDES)
                     if obs.feed_outcome[i] is Outcome.DEADLINE)
    out = []
    for i, side in enumerate(SIDES):
        d = feeder_fault(obs, sensors, s, i)
        if d is None and got[i] > 0 and obs.tile_edges[i] == 0:
            d = _diag("E33", side, "no-edge", {"stacks": got[i], "tile_edges": 0}, got=got[i],
                      level=_level(sensors, Sensor.TILE_PRESENT, i))
        if d is not None:
            out.append(d)
    if out:
        return tuple(sorted(out, key=lambda d: _FEED_RANK[d.code]))
    return _found(_stack_counts(obs, sensors, s))


def _found(d: Diagnosis | None) -> tuple[Diagnosis, ...]:
    return () if d is None else (d,)


def after_build(obs: Observations, sensors, s) -> Diagnosis | None:
    """The first of :func:`build_faults`, or None."""
    return next(iter(build_faults(obs, sensors, s)), None)


def _stack_counts(obs: Observations, sensors, s) -> Diagnosis | None:
    """The stacks built against the gear: wrong gear, a missing tile, or an unexplained count."""
    exp, got = s.stacks, obs.stacks
    short = [exp[i] - got[i] for i in range(4)]
    counts = dict(counts=", ".join(f"{SIDES[i]} {got[i]}/{exp[i]}" for i in range(4)),
                  counts_zh="，".join(f"{SIDES_ZH[SIDES[i]]} {got[i]}/{exp[i]}" for i in range(4)))
    left = [_level(sensors, Sensor.TILE_PRESENT, i) for i in range(4)]
    evidence = {"stacks": list(got), "expected": list(exp)}
    if all(d == 0 for d in short):
        if all(v == 1 for v in left):
            return _diag("E41", None, "tiles-left", {**evidence, "tiles_left": left}, gear=s.gear, **counts)
        return None
    if all(d == short[0] and d > 0 for d in short):
        return _diag("E41", None, "all-short", evidence, gear=s.gear, short=short[0], **counts)
    if sorted(short) == [0, 0, 0, 1]:
        return _diag("E42", SIDES[short.index(1)], "half-stack", evidence, **counts)
    for i, side in enumerate(SIDES):
        if (short[i] > 0 and obs.feed_outcome[i] is Outcome.DEADLINE and not _drive_quiet(obs, i)
                and obs.tiles_since_stack[i] == 0 and not obs.events_dropped):
            return _diag("E32", side, "tiles-stopped", evidence, got=got[i], **counts)
    worst = max(range(4), key=lambda i: abs(short[i]))
    return _diag("E43", SIDES[worst], "counts", evidence, **counts)


def after_dice(obs: Observations, ev: MotionDone) -> Diagnosis | None:
    """No dice rotation pulse while the dice motor ran (:func:`turned`): E52, a warning."""
    if not turned(obs.dice_edges):
        return _diag("E52", None, "no-pulse", {"dice_pulses": obs.dice_edges}, ran_s=ev.elapsed_ms / 1000)
    return None


# --- link, safety, refusals ---------------------------------------------------------------------

def estop_held() -> Diagnosis:
    return _diag("E73", None, "estop-held", {})


def safety_stop(ev) -> Diagnosis:
    if ev.code.name == "ESTOP":
        return _diag("E73", None, "estop", {})
    return _diag("E72", None, "host-timeout", {"silent_ms": ev.detail}, silent_ms=ev.detail)


def operator_stop(source: str) -> Diagnosis:
    """The operator's stop-all (from ``source``: "page", "button" ...) during a cycle: E73."""
    return _diag("E73", None, "operator", {"source": source}, source=source)


def link_lost(ev) -> Diagnosis:
    return _diag("E62", None, "lost", {"reason": ev.reason}, reason=ev.reason)


def mcu_reset(ev, phase: str) -> Diagnosis:
    return _diag("E61", None, "reset", {"previous_boot": ev.previous_boot, "boot": ev.boot}, phase=phase,
                 previous_boot=ev.previous_boot, boot=ev.boot)


def events_dropped(n: int) -> Diagnosis:
    return _diag("E63", None, "dropped", {"dropped": n}, dropped=n)


def link_noise(ev) -> Diagnosis | None:
    if ev.frames_rejected == 0:
        return None
    values = {"frames_rejected": ev.frames_rejected, "retransmitted": ev.retransmitted}
    return _diag("E63", None, "noise", values, **values)


def rejected(ev, phase: str) -> Diagnosis:
    what = getattr(ev, "command", None) or "a command"
    reason = getattr(ev, "reason", None) or str(getattr(ev, "error", ""))
    side = getattr(ev, "side", None)
    return _diag("E71", side, "rejected", {"reason": reason}, what=what, phase=phase,
                 reason=reason)


def no_answer(phase: str, waited_s: float) -> Diagnosis:
    return _diag("E71", None, "no-answer", {"waited_s": round(waited_s, 2)}, phase=phase, waited_s=waited_s)
