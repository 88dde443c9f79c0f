"""The table's cycle as a pure state machine: ``step(table, event, now) -> (table, commands)``.

No I/O, no clock, no randomness: the runtime (``controller.runtime``) feeds in the hardware
events (the table's vocabulary, ``hardware.vocabulary``: MotionDone, StacksCounted, SensorChanged, Fault, Reply …)
and controller events (``StartCycle``, ``Tick``, ``ClearFault``, ``RefillButtons`` …), sends the
commands out, and injects the time (seconds of machine time) and the dice values.

One cycle::

    [CLEARING (lifts up: only after a build was interrupted)] -> HOMING (the four lifts down, and
    the centre lift down: the played set, pushed into the centre, drops into the disc)
    -> SHUFFLING (disc turns; the centre lift rises again and closes the hole)  -> BUILDING (four
    feeders stack the walls; each push head comes home)  -> LIFTING (four lifts up)  -> DICE
    -> WALLS_UP (cycle done; the hand is played)

Before the lifts rise (LIFTING, CLEARING, a manual lift up) every push head must read home: one left
out (a stop or an emergency stop mid-stroke) is driven home first (PARKING, ``FeedStacks(side, 0)``),
so that a wall never rises into it; one that does not come home is a fault (E34/E35).

and FAULT (latched until ``ClearFault``, which re-homes: the lifts down, push heads home, the centre
lift up, and then IDLE: clearing never starts a cycle, the operator does), SAFE_STOP (the microcontroller stopped
every motor: host timeout, emergency stop, link lost, or the operator's ``StopAllRequest``),
REFILL_PAUSE (both lift buttons, 补牌: feeders stopped until the buttons are pressed again),
MANUAL_LIFT (``ManualLift``: the four lifts moved up or down by hand, only from idle or walls up).
The dice button (``DiceButton``) throws the dice again with the walls up.

Indicators (``SetIndicators``; a build without them ignores it): every cycle starts with only the
dealer's seat light on; walls up lights READY with a short beep; a fault or safe-stop lights FAULT
with a long beep, sent right after StopAll.

``refusal(table, event)`` says in one line why an operator event would be ignored in the current
state (the service answers with it instead of silently doing nothing).

Every motion command carries its deadline (from the machine profile); the hardware stops a motor
that misses it and reports MotionDone(DEADLINE). The controller also keeps its own deadline per
phase (``Tick``), for an answer that never comes. Entering FAULT or SAFE_STOP always sends StopAll.

Diagnosis (``controller.diagnosis``) turns what was observed during the phase into a catalogue
fault (``controller.faults``); the observations are kept in ``Observations``.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Iterable, Mapping

from hardware.vocabulary import (BackendLost, BackendReset, ClearSafeStop, Command, CommandFailed, Fault,
                                 FaultCode, FeedStacks, Lift, Light, MotionDone, Outcome, RollDice, Sensor,
                                 SensorChanged, SetGear, SetIndicators, Side, StacksCounted, StartShuffle,
                                 StopAll, StopShuffle)

from . import diagnosis as D
from .dice import Method, WallBreak, wall_break
from .faults import Diagnosis

SIDES = ("E", "S", "W", "N")


class Phase(enum.Enum):
    IDLE = "idle"
    CLEARING = "clearing"        # before re-homing after an interrupted build: lifts up, then down
    HOMING = "homing"
    SHUFFLING = "shuffling"
    BUILDING = "building"
    PARKING = "parking"          # push heads left out (a stop mid-stroke) driven home before lifts rise
    REFILL_PAUSE = "refill-pause"
    LIFTING = "lifting"
    PROBING = "probing"          # a lift missed the top: lower it and time the way down
    DICE = "dice"
    WALLS_UP = "walls-up"
    MANUAL_LIFT = "manual-lift"  # the operator moves the four lifts up or down (from idle or walls up)
    FAULT = "fault"
    SAFE_STOP = "safe-stop"


#: sensors whose edges are counted (pulses), not kept as a level
PULSE_SENSORS = frozenset({Sensor.DISC_PULSE, Sensor.DICE_PULSE, Sensor.FEEDER_MOTION, Sensor.STACK})
MOVING_PHASES = {Phase.CLEARING, Phase.HOMING, Phase.SHUFFLING, Phase.BUILDING, Phase.PARKING, Phase.LIFTING,
                 Phase.PROBING, Phase.DICE, Phase.MANUAL_LIFT}
#: phases from which the lifts may be moved by hand (nothing else moves)
MANUAL_LIFT_FROM = (Phase.IDLE, Phase.WALLS_UP)


# --- controller events ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class StartCycle:
    """Run one cycle. ``dice`` are the values the dice show (drawn by the runtime: electronic
    dice from ``secrets``, or read off motor dice); ``sensors`` the readings at the start
    (``{(Sensor, Side | None): 0 | 1}``)."""

    dice: tuple[int, ...]
    sensors: Mapping


@dataclasses.dataclass(frozen=True)
class Tick:
    """Time passed (the runtime sends one now and then); used for the controller's own deadlines."""


@dataclasses.dataclass(frozen=True)
class ClearFault:
    """The technician cleared the latched fault: re-home."""


@dataclasses.dataclass(frozen=True)
class RefillButtons:
    """Both lift buttons pressed (补牌): pause the build, or resume it."""


@dataclasses.dataclass(frozen=True)
class DiceButton:
    """The dice button: throw the dice again with the walls up (``dice``: the new values, drawn by
    the runtime like StartCycle's). The dice motor spins and the wall break is computed anew."""

    dice: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class ManualLift:
    """Move all four lifts up (``up``) or down, by hand. Accepted only in idle or walls up
    (``refusal`` says why otherwise); each lift carries its deadline, a missed one is a fault."""

    up: bool


@dataclasses.dataclass(frozen=True)
class StopAllRequest:
    """The operator's stop-all (the web page's stop button). Every motor is stopped at once; if
    anything was moving the stop is latched as SAFE_STOP (E73, observed: operator stop) until
    ``ClearFault``, which re-homes. ``source`` names who asked (for the fault's text)."""

    source: str = "operator"


@dataclasses.dataclass(frozen=True)
class Rejected:
    """The hardware refused a command (Reply with a code other than OK), or it got no reply."""

    command: str
    side: str | None
    reason: str


@dataclasses.dataclass(frozen=True)
class LinkQuality:
    """The serial link's error counters since the cycle started (MCU backend only)."""

    frames_rejected: int
    retransmitted: int


# --- settings and the table ---------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Settings:
    """What a cycle needs from the machine profile and the settings.

    Attributes:
        gear: tile count 136/144/152/108.
        stacks: stacks per side for the gear (E, S, W, N).
        shuffle_s: shuffle time before the walls are built (s).
        shuffle_deadline_ms, lift_deadline_ms, dice_spin_ms, dice_deadline_ms: motion deadlines.
        feed_deadline_ms: per side, for its stacks.
        lift_up_s, lift_down_s: nominal lift travel times (s).
        dice_method: how the dice give the wall break.
        dealer: the dealer's side.
        centre_deadline_ms, centre_up_s, centre_down_s: the centre lift's deadline and nominal travel.
        park_deadline_ms: the deadline to bring a push head home (``FeedStacks(side, 0)``).
    """

    gear: int
    stacks: tuple[int, int, int, int]
    shuffle_s: float
    shuffle_deadline_ms: int
    feed_deadline_ms: tuple[int, int, int, int]
    lift_deadline_ms: int
    lift_up_s: float
    lift_down_s: float
    dice_spin_ms: int
    dice_deadline_ms: int
    dice_method: Method = Method.TWO_THROW
    dealer: str = "E"
    centre_deadline_ms: int = 2500
    centre_up_s: float = 1.2
    centre_down_s: float = 1.0
    park_deadline_ms: int = 2800

    @classmethod
    def from_profile(cls, profile, gear: int, dice_method: "Method | str" = Method.TWO_THROW,
                     dealer: str = "E") -> "Settings":
        """Settings for ``gear`` from a ``hardware.Profile``. Raises ProfileError for a gear the
        profile does not have."""
        stacks = profile.stacks(gear)
        t = profile.timing
        spin, dice_deadline = profile.dice_ms()
        return cls(gear, tuple(stacks), t.shuffle_s, profile.shuffle_deadline_ms(),
                   tuple(profile.feed_deadline_ms(n) for n in stacks), profile.lift_deadline_ms(),
                   t.lift_up_s, t.lift_down_s, spin, dice_deadline, Method.parse(dice_method), dealer,
                   profile.centre_deadline_ms(), t.centre_up_s, t.centre_down_s, profile.park_deadline_ms())


@dataclasses.dataclass(frozen=True)
class Table:
    """The controller's whole state (immutable; ``step`` returns a new one).

    Attributes:
        phase: where the cycle is.
        settings: the settings of the running cycle.
        pending_gear: a tile count accepted during a cycle, applied at the next one.
        phase_t: machine time (s) the phase began.
        sensors: the latest reading of every sensor ``{(Sensor, Side | None): 0 | 1}``.
        obs: what was observed in the current cycle (counts, edges, timings).
        trend: per side, the lift-up travel times (s) of recent cycles, oldest first.
        fault: the latched fault, if any: the first one observed, which stopped the motion.
        also: every other fault observed in the same cycle (at the same judging), each with its own
            diagnosis; ``diagnoses`` lists them all, ``fault`` first.
        warnings: diagnoses that did not stop the cycle (late lift, slowing lift, noisy link, dice).
        wall: the wall break of the last dice throw.
        dice: the dice values of this cycle.
        cycles: cycles completed.
        paused_from: the phase a refill pause interrupted.
        manual_from: the phase a manual lift started from (it returns there).
        lifts_up: per side, the lift is known to be at the top (it travelled up and has not come
            down since): a lift that then 'reaches' the bottom at once did not move.
        settle_until: after the last feeder stopped, the time (s) the build is judged at: a tile
            still coasting to a push head arrives in the meantime.
        reroll: the DICE phase is a throw of the dice button (the cycle count does not change).
        park_then: what PARKING leads to: "lifting", "clearing" or "manual-up".
        rehome_only: the homing under way is a re-home after ``ClearFault``: lifts down, push heads
            home, the centre lift up (closed); it ends in IDLE, never in a cycle. The operator
            starts the next cycle.
        raise_first: stacks were built since the walls were last raised; before the next build
            the lifts must go up and down once to drop them into the disc (a set that has not
            been lifted cannot be reshuffled: the technician's answer in 002_4c2a73aa42bc09ab.txt).
    """

    phase: Phase
    settings: Settings
    pending_gear: int | None = None
    phase_t: float = 0.0
    sensors: Mapping = dataclasses.field(default_factory=dict)
    obs: D.Observations = dataclasses.field(default_factory=D.Observations)
    trend: tuple[tuple[float, ...], ...] = ((), (), (), ())
    fault: Diagnosis | None = None
    also: tuple[Diagnosis, ...] = ()
    warnings: tuple[Diagnosis, ...] = ()
    wall: WallBreak | None = None
    dice: tuple[int, ...] = ()
    cycles: int = 0
    paused_from: Phase | None = None
    raise_first: bool = False
    manual_from: Phase | None = None
    lifts_up: tuple = (False, False, False, False)
    settle_until: float | None = None
    reroll: bool = False
    park_then: str | None = None
    rehome_only: bool = False

    @property
    def stacks(self) -> tuple[int, int, int, int]:
        return self.obs.stacks

    @property
    def diagnoses(self) -> tuple[Diagnosis, ...]:
        """Every fault latched in this cycle: ``fault`` first, then ``also`` (empty when none)."""
        return () if self.fault is None else (self.fault,) + self.also

    @property
    def busy(self) -> bool:
        """The machine is in the middle of a cycle (a tile-count change waits for the next one)."""
        return self.phase in MOVING_PHASES or self.phase is Phase.REFILL_PAUSE


def initial(settings: Settings) -> Table:
    """The state at power-on: idle, nothing known about the sensors yet."""
    return Table(Phase.IDLE, settings)


def request_gear(table: Table, settings: Settings) -> tuple[Table, str | None]:
    """Change the tile count. While the machine moves the change waits for the next cycle
    (the technician's answer in 002_4c2a73aa42bc09ab.txt: the gear is changed with the power off,
    never mid-cycle). Returns the new state and a warning text (or None)."""
    if table.busy:
        return dataclasses.replace(table, pending_gear=settings.gear), (
            f"the machine is {table.phase.value}: tile count {settings.gear} will apply from the next cycle")
    return dataclasses.replace(table, settings=settings, pending_gear=None), None


# --- the step function --------------------------------------------------------------------------

def _side(s: Side | None) -> str | None:
    return None if s is None else SIDES[int(s)]


def _enter(table: Table, phase: Phase, now: float, **changes) -> Table:
    return dataclasses.replace(table, phase=phase, phase_t=now, **changes)


#: buzzer times (ms of machine time)
ALARM_MS = 1500
READY_BEEP_MS = 200


def _dealer_light(s: Settings) -> Light:
    return Light.dealer(Side(SIDES.index(s.dealer)))


def _fault(table: Table, diag: Diagnosis, now: float, safe_stop: bool = False) -> tuple[Table, list[Command]]:
    phase = Phase.SAFE_STOP if safe_stop else Phase.FAULT
    alarm = SetIndicators(Light.FAULT | _dealer_light(table.settings), ALARM_MS)
    return _enter(table, phase, now, fault=diag, also=(), reroll=False), [StopAll(), alarm]


def _faults(table: Table, diags: tuple[Diagnosis, ...], now: float) -> tuple[Table, list[Command]]:
    """Latch every fault of ``diags`` (at least one): the first stops the motion, the others are listed
    with it (``Table.also``). ``diags`` empty: the state is unchanged."""
    if not diags:
        return table, []
    t, cmds = _fault(table, diags[0], now)
    return dataclasses.replace(t, also=tuple(diags[1:])), cmds


def _lift_all(up: bool, s: Settings) -> list[Command]:
    return [Lift(Side(i), up, s.lift_deadline_ms) for i in range(4)]


def _centre(up: bool, s: Settings) -> Lift:
    return Lift(None, up, s.centre_deadline_ms)


def _raise(table: Table, now: float, then: str, prefix: list[Command], park: bool = True) -> tuple[Table, list[Command]]:
    """Raise the four lifts for ``then`` ("lifting", "clearing" or "manual-up"), after ``prefix``;
    push heads that read out are first driven home (PARKING; ``park=False`` after it: the device
    completed each parking motion on its own home edge)."""
    s = table.settings
    out = [i for i in range(4) if park and table.sensors.get((Sensor.PUSH_HOME, Side(i))) == 0]
    if out:
        t = _enter(table, Phase.PARKING, now, obs=table.obs.start_parking(out), park_then=then)
        return t, prefix + [FeedStacks(Side(i), 0, s.park_deadline_ms) for i in out]
    phase = {"lifting": Phase.LIFTING, "clearing": Phase.CLEARING, "manual-up": Phase.MANUAL_LIFT}[then]
    obs = table.obs.lifts_commanded(down=False) if then == "lifting" else D.Observations().lifts_commanded(down=False)
    return _enter(table, phase, now, obs=obs, park_then=None), prefix + _lift_all(True, s)


#: seconds after the last feeder stopped before the build is judged (a coasting tile arrives)
SETTLE_S = 0.5


def _start_homing(table: Table, now: float, settings: Settings | None = None,
                  rehome_only: bool = False) -> tuple[Table, list[Command]]:
    """Lower the four lifts (after raising them once when a build was cut short, CLEARING).

    A cycle's homing also lowers the centre lift (the played set drops) and goes on to the shuffle;
    a re-home after ``ClearFault`` (``rehome_only``) raises the centre lift instead (its place at
    rest: the hole closed) and ends in IDLE."""
    s = settings or table.settings
    if table.sensors.get((Sensor.JAM, None)) == 1:
        # a tile still jammed at the disc outlet: nothing may turn until it is taken out
        return _fault(dataclasses.replace(table, settings=s), D.tile_jam(Phase.IDLE.value), now)
    lights = SetIndicators(_dealer_light(s))
    if table.raise_first:
        t = dataclasses.replace(table, settings=s, obs=D.Observations(), fault=None, also=(), wall=None, settle_until=None,
                                rehome_only=rehome_only)
        return _raise(t, now, "clearing", [ClearSafeStop(), lights, SetGear(s.gear)])
    t = _enter(table, Phase.HOMING, now, settings=s, fault=None, also=(), wall=None, settle_until=None, rehome_only=rehome_only)
    return _homing(t, table.lifts_up, [ClearSafeStop(), lights, SetGear(s.gear)])


def _homing(table: Table, were_up: tuple, prefix: list[Command]) -> tuple[Table, list[Command]]:
    """HOMING's commands: the four lifts down; the centre lift down in a cycle, up in a re-home."""
    centre_up = table.rehome_only
    obs = D.Observations().lifts_commanded(down=True, were_up=were_up).centre_commanded(centre_up)
    return dataclasses.replace(table, obs=obs), prefix + _lift_all(False, table.settings) + [
        _centre(centre_up, table.settings)]


def phase_deadline_s(table: Table) -> float:
    """The controller's own limit for the current phase (s): the motion deadlines plus a margin."""
    s = table.settings
    margin = 5.0
    if table.phase is Phase.HOMING:  # the centre lift goes down with the side lifts
        return max(s.lift_deadline_ms, s.centre_deadline_ms) / 1000 + margin
    if table.phase in (Phase.CLEARING, Phase.LIFTING, Phase.PROBING, Phase.MANUAL_LIFT):
        return s.lift_deadline_ms / 1000 + margin
    if table.phase is Phase.SHUFFLING:  # and the centre lift closes the hole
        return max(s.shuffle_s, s.centre_deadline_ms / 1000) + margin
    if table.phase is Phase.BUILDING:
        return max(s.feed_deadline_ms) / 1000 + margin
    if table.phase is Phase.DICE:
        return s.dice_deadline_ms / 1000 + margin
    if table.phase is Phase.PARKING:
        return s.park_deadline_ms / 1000 + margin
    return float("inf")


def refusal(table: Table, event) -> str | None:
    """Why ``step`` would ignore the operator event ``event`` in this state (one line), or None
    when it would act on it. Covers StartCycle, ClearFault, RefillButtons and ManualLift;
    StopAllRequest is never refused. Also DiceButton."""
    ph = table.phase
    latched = ph in (Phase.FAULT, Phase.SAFE_STOP)
    code = f" ({table.fault.code})" if table.fault else ""
    if isinstance(event, StartCycle):
        if latched:
            return f"a fault is latched{code}: clear it first"
        if table.busy:
            return f"the machine is {ph.value}: wait for the cycle to end"
        return None
    if isinstance(event, ClearFault):
        return None if latched else f"there is no fault to clear (the machine is {ph.value})"
    if isinstance(event, RefillButtons):
        return None if ph in (Phase.BUILDING, Phase.REFILL_PAUSE) else \
            f"refill (补牌) pauses a build: the machine is {ph.value}"
    if isinstance(event, DiceButton):
        return None if ph is Phase.WALLS_UP else \
            f"the dice button throws again with the walls up: the machine is {ph.value}"
    if isinstance(event, ManualLift):
        if latched:
            return f"a fault is latched{code}: clear it first"
        if ph not in MANUAL_LIFT_FROM:
            return f"the lifts can be moved by hand only when idle or with the walls up: the machine is {ph.value}"
        return None
    return None


def step(table: Table, event, now: float) -> tuple[Table, list[Command]]:
    """Advance the state machine by one event at machine time ``now`` (s).

    Returns:
        The new state and the commands to send, in order.
    """
    # --- events that count in every phase --------------------------------------------------------
    if isinstance(event, SensorChanged):
        obs = table.obs.sensor(event, table.phase.value)
        if event.sensor is Sensor.JAM and event.value == 1 and table.phase in MOVING_PHASES:
            sensors = {**table.sensors, (Sensor.JAM, None): 1}
            return _fault(dataclasses.replace(table, sensors=sensors, obs=obs), D.tile_jam(table.phase.value), now)
        if event.sensor in PULSE_SENSORS:  # counted in the observations only; their level means nothing
            return (table if obs is table.obs else D.with_changes(table, obs=obs)), []
        sensors = dict(table.sensors)
        sensors[(event.sensor, event.side)] = event.value
        return D.with_changes(table, sensors=sensors, obs=obs), []
    if isinstance(event, StacksCounted):
        return D.with_changes(table, obs=table.obs.stack(_side(event.side))), []
    if isinstance(event, Fault) and event.code is FaultCode.EVENTS_DROPPED:
        return dataclasses.replace(table, obs=table.obs.dropped(event.detail)), []
    if isinstance(event, Fault) and event.code in (FaultCode.HOST_TIMEOUT, FaultCode.ESTOP):
        diag = D.safety_stop(event)
        return _fault(table, diag, now, safe_stop=True)
    if isinstance(event, BackendLost):
        return _fault(table, D.link_lost(event), now, safe_stop=True)
    if isinstance(event, BackendReset):
        warn = table.warnings + (D.mcu_reset(event, table.phase.value),)
        if table.phase in (Phase.FAULT, Phase.SAFE_STOP, Phase.IDLE, Phase.WALLS_UP):
            return dataclasses.replace(table, warnings=warn), []  # a latched fault stays latched
        # mid-cycle the machine may have stopped anywhere: re-home and start the cycle again
        t, cmds = _start_homing(dataclasses.replace(table, warnings=warn), now)
        return t, [StopAll()] + cmds
    if isinstance(event, LinkQuality):
        w = D.link_noise(event)
        return (dataclasses.replace(table, warnings=table.warnings + (w,)) if w else table), []
    if isinstance(event, (Rejected, CommandFailed)) and table.phase in MOVING_PHASES:
        if getattr(event, "command", None) == "ClearSafeStop" and table.sensors.get((Sensor.ESTOP, None)) == 1:
            return _fault(table, D.estop_held(), now, safe_stop=True)
        return _fault(table, D.rejected(event, table.phase.value), now)

    if isinstance(event, StopAllRequest):
        if table.busy:
            return _fault(table, D.operator_stop(event.source), now, safe_stop=True)
        return table, [StopAll()]  # nothing moves: stop anyway, latch nothing

    ph = table.phase
    s = table.settings

    if isinstance(event, ManualLift):
        if refusal(table, event) is not None:
            return table, []
        if event.up:
            return _raise(dataclasses.replace(table, manual_from=ph, obs=D.Observations()), now, "manual-up",
                          [ClearSafeStop()])
        obs = D.Observations().lifts_commanded(down=True)
        t = _enter(table, Phase.MANUAL_LIFT, now, obs=obs, manual_from=ph)
        return t, [ClearSafeStop()] + _lift_all(False, s)

    if isinstance(event, StartCycle):
        if ph in MOVING_PHASES or ph is Phase.REFILL_PAUSE:
            return table, []
        if ph in (Phase.FAULT, Phase.SAFE_STOP):
            return table, []  # latched: ClearFault first
        settings = s
        if table.pending_gear is not None and table.pending_gear != s.gear:
            settings = dataclasses.replace(s, gear=table.pending_gear)
        t = dataclasses.replace(table, sensors=dict(event.sensors) or table.sensors, dice=tuple(event.dice),
                                warnings=(), pending_gear=None)
        return _start_homing(t, now, settings)

    if isinstance(event, ClearFault):
        # clearing never starts a cycle: re-home and wait in IDLE for the operator (issue #16 part 5)
        if ph in (Phase.FAULT, Phase.SAFE_STOP):
            return _start_homing(dataclasses.replace(table, warnings=()), now, rehome_only=True)
        return table, []

    if isinstance(event, Tick):
        if ph is Phase.BUILDING and table.settle_until is not None and now >= table.settle_until:
            return _after_build(table, now)
        if ph in MOVING_PHASES and now - table.phase_t > phase_deadline_s(table):
            return _fault(table, D.no_answer(ph.value, now - table.phase_t), now)
        if ph is Phase.SHUFFLING and now - table.phase_t >= s.shuffle_s and table.obs.centre_done():
            diag = D.after_shuffle(table.obs)
            if diag:
                return _fault(table, diag, now)
            obs = table.obs.start_feeding()
            return _enter(table, Phase.BUILDING, now, obs=obs, raise_first=True), [
                FeedStacks(Side(i), s.stacks[i], s.feed_deadline_ms[i]) for i in range(4)]
        return table, []

    if isinstance(event, DiceButton):
        if ph is not Phase.WALLS_UP:
            return table, []
        t = _enter(table, Phase.DICE, now, dice=tuple(event.dice), reroll=True,
                   obs=dataclasses.replace(table.obs, dice_edges=0))
        return t, [RollDice(s.dice_spin_ms, s.dice_deadline_ms)]

    if isinstance(event, RefillButtons):
        if ph is Phase.BUILDING:
            return _enter(table, Phase.REFILL_PAUSE, now, paused_from=ph), [StopAll()]
        if ph is Phase.REFILL_PAUSE:
            if table.sensors.get((Sensor.JAM, None)) == 1:
                # a tile jammed while paused: the disc must not turn again until it is taken out
                return _fault(table, D.tile_jam(ph.value), now)
            remaining = [max(0, s.stacks[i] - table.obs.stacks[i]) for i in range(4)]
            if not any(remaining):
                # every stack was counted before the pause: nothing to feed, no shuffle to restart;
                # the build is judged at the next Tick, on what the feeders reported (a feed that
                # had ended at its deadline still counts)
                return _enter(table, Phase.BUILDING, now, paused_from=None, settle_until=now), []
            obs = table.obs.start_feeding(resume=True, sides=[i for i in range(4) if remaining[i]])
            cmds: list[Command] = [StartShuffle(s.shuffle_deadline_ms)]
            cmds += [FeedStacks(Side(i), remaining[i], s.feed_deadline_ms[i]) for i in range(4) if remaining[i]]
            # feeders run again: the build is judged once they are done (not at a settle time from before)
            return _enter(table, Phase.BUILDING, now, obs=obs, paused_from=None, settle_until=None), cmds
        return table, []

    if not isinstance(event, MotionDone):
        return table, []

    # --- motions ending ----------------------------------------------------------------------------
    side = _side(event.side)
    lifts_up = table.lifts_up
    if event.command == "Lift" and event.side is not None and event.outcome is Outcome.COMPLETED:
        i = int(event.side)
        up = table.obs.lift_dir[i]
        if up is not None and D.travelled(event.elapsed_ms, s.lift_up_s if up else s.lift_down_s):
            lifts_up = lifts_up[:i] + (bool(up),) + lifts_up[i + 1:]  # it travelled: now known at that end
    obs = table.obs.motion_done(event)
    if event.command == "FeedStacks" and event.outcome is Outcome.DEADLINE and event.side is not None:
        obs = obs.feed_quiet(int(event.side), int(round(now * 1000)))
    table = dataclasses.replace(table, obs=obs, lifts_up=lifts_up)
    if event.outcome is Outcome.SAFE_STOP:
        # the microcontroller cut this motion for a safety stop; its Fault (emergency stop, host
        # timeout) or BackendLost follows and latches SAFE_STOP: do not move on to the next phase first
        return table, []

    if ph is Phase.CLEARING and event.command == "Lift":
        if not obs.all_lifts_done():
            return table, []
        went_up = tuple(o is Outcome.COMPLETED and (ms or 0) > 0 for o, ms in zip(obs.lift_outcome, obs.lift_ms))
        return _homing(_enter(table, Phase.HOMING, now, raise_first=False), went_up, [])

    if ph is Phase.MANUAL_LIFT and event.command == "Lift":
        if not obs.all_lifts_done():
            return table, []
        up = obs.lift_dir[0] is True
        diag = D.after_lift(obs, table.sensors, s) if up else D.after_homing(obs, table.sensors, s)
        late = [SIDES[i] for i in range(4) if obs.lift_outcome[i] is not Outcome.COMPLETED]
        if diag is None and late:
            diag = D.no_answer(f"manual lift {'up' if up else 'down'} (side {', '.join(late)})",
                               s.lift_deadline_ms / 1000)
        if diag:
            return _fault(dataclasses.replace(table, manual_from=None), diag, now)
        back = table.manual_from or Phase.IDLE
        return _enter(table, back, now, manual_from=None, raise_first=table.raise_first and not up), []

    if ph is Phase.HOMING and event.command == "Lift":
        if not obs.all_lifts_done():
            return table, []
        diags = D.homing_faults(obs, table.sensors, s)
        if diags:
            return _faults(dataclasses.replace(table, rehome_only=False), diags, now)
        if table.rehome_only:
            return _enter(table, Phase.IDLE, now, rehome_only=False), []
        t = _enter(table, Phase.SHUFFLING, now, obs=obs.start_shuffle().centre_commanded(True))
        return t, [StartShuffle(s.shuffle_deadline_ms), _centre(True, s)]

    if ph is Phase.SHUFFLING and event.command == "StartShuffle" and event.outcome is Outcome.DEADLINE:
        # the device stopped the disc motor long before the shuffle's deadline: no rotation pulse for
        # its stall window (the device's stall-to-stop rule): judge it now, not at the end of the shuffle time
        diag = D.after_shuffle(obs)
        if diag:
            return _fault(table, diag, now)

    if ph is Phase.BUILDING and event.command == "FeedStacks" and event.outcome is Outcome.DEADLINE \
            and event.side is not None and not obs.events_dropped and obs.stacks[int(event.side)] == 0:
        # a feeder stopped by the device as stalled before it built a stack (no motion pulse: its wire or
        # its push head stuck out; no tile: its wheel) is judged at once: the others are stopped with it,
        # not left to finish their build first (issue #16 section 3). One that stopped part-way through
        # its wall is judged with the others' counts when the build ends (its motor is already off).
        diag = D.feeder_fault(obs, table.sensors, s, int(event.side))
        if diag:
            return _fault(table, diag, now)

    if ph is Phase.FAULT and event.command == "FeedStacks" and event.outcome is Outcome.DEADLINE \
            and event.side is not None and table.fault is not None and not obs.events_dropped \
            and obs.stacks[int(event.side)] == 0:
        # another feeder that stalled by itself in the same moment, before it built a stack: listed with
        # the first fault
        diag = D.feeder_fault(obs, table.sensors, s, int(event.side))
        if diag and all(d.side != diag.side for d in table.diagnoses):
            return dataclasses.replace(table, also=table.also + (diag,)), []
        return table, []

    if ph is Phase.SHUFFLING and event.command == "Lift" and event.side is None:
        diag = D.centre_stroke(obs, table.sensors, s)
        return (_fault(table, diag, now) if diag else (table, []))

    if ph is Phase.BUILDING and event.command == "FeedStacks":
        if not obs.all_feeders_done():
            return table, []
        # judged on a Tick SETTLE_S later (see _after_build)
        return dataclasses.replace(table, settle_until=now + SETTLE_S), [StopShuffle()]

    if ph is Phase.PARKING and event.command == "FeedStacks":
        if not obs.all_feeders_done():
            return table, []
        diag = D.after_parking(obs, table.sensors, s)
        if diag:
            return _fault(dataclasses.replace(table, manual_from=None, park_then=None), diag, now)
        return _raise(table, now, table.park_then or "lifting", [], park=False)

    if ph in (Phase.LIFTING, Phase.PROBING) and event.command == "Lift" and event.outcome is Outcome.DEADLINE \
            and event.side is not None and side not in obs.probing:
        # lower that lift and time the way down: a bar that stopped part-way comes down sooner
        # (the hardware already stopped its motor at the deadline; the other lifts go on, and every
        # other lift that misses the top is lowered and judged too: all of them are reported)
        t = _enter(table, Phase.PROBING, now if ph is Phase.LIFTING else table.phase_t, obs=obs.probe(side))
        return t, [Lift(event.side, False, s.lift_deadline_ms)]

    if ph is Phase.LIFTING and event.command == "Lift":
        if not obs.all_lifts_done():
            return table, []
        diags = D.lift_faults(obs, table.sensors, s)
        if diags:
            return _faults(table, diags, now)
        warns = D.lift_warnings(obs, table.trend, s)
        trend = D.update_trend(table.trend, obs)
        t = _enter(table, Phase.DICE, now, warnings=table.warnings + warns, trend=trend, raise_first=False)
        return t, [RollDice(s.dice_spin_ms, s.dice_deadline_ms)]

    if ph is Phase.PROBING and event.command == "Lift":
        if not obs.probes_done():
            return table, []
        # every lift that missed the top, then any other lift at fault at the top
        return _faults(table, D.probe_faults(obs, table.trend, s) + D.lift_faults(obs, table.sensors, s), now)

    if ph is Phase.DICE and event.command == "RollDice":
        warns = table.warnings
        w = D.after_dice(obs, event)
        if w:
            warns = warns + (w,)
        wall = wall_break(s.dice_method, table.dice, dict(zip(SIDES, s.stacks)), s.dealer)
        cycles = table.cycles + (0 if table.reroll else 1)
        ready = SetIndicators(Light.READY | _dealer_light(s), READY_BEEP_MS)
        return _enter(table, Phase.WALLS_UP, now, warnings=warns, wall=wall, cycles=cycles, reroll=False), [ready]

    return table, []


def _after_build(table: Table, now: float) -> tuple[Table, list[Command]]:
    """The feeders are done and the machine settled: check the build, then raise the walls."""
    s, obs = table.settings, table.obs
    table = dataclasses.replace(table, settle_until=None)
    diags = D.build_faults(obs, table.sensors, s)
    if diags:
        return _faults(table, diags, now)
    warns = table.warnings + ((D.events_dropped(obs.events_dropped),) if obs.events_dropped else ())
    return _raise(dataclasses.replace(table, warnings=warns), now, "lifting", [])


def run_events(table: Table, events: Iterable, now: float) -> tuple[Table, list[Command]]:
    """``step`` over several events at the same time; the commands concatenated."""
    out: list[Command] = []
    for ev in events:
        table, cmds = step(table, ev, now)
        out.extend(cmds)
    return table, out
