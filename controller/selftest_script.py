"""The self-test's script (issue #16 section 3): its steps as data, and the one runner of a step.

A :class:`Step` is a goal command of :mod:`hardware.vocabulary` with the transitions it should
bring (:class:`Expect`: a sensor goes to a value, a sensor pulses, tiles reach a push head, the
motion is done) and its deadline, all taken from the machine profile by :func:`script`, the
whole self-test in one table, part by part: the disc, the feeders (whose jogs also drive the push
heads and pass tiles by the tile-present sensors), the lifts, the centre lift, the dice.
:class:`StepRunner` runs one step over any ``hardware.TableBackend`` and keeps what it observed
(:class:`Observed`); :mod:`controller.selftest` gives the observations to the part verdicts,
which decide through the judges of :mod:`controller.diagnosis` (the cycle's thresholds).

Faults of the link to the microcontroller (a reset, a dead line, a command without reply) and the
operator's stop are not parts of the table: the runner stops every motor and raises
:class:`SelfTestAborted`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Callable

from hardware.trace import to_json
from hardware.vocabulary import (BackendLost, BackendReset, ClearSafeStop, Command, CommandFailed, Lift,
                                 Motor, MotionDone, Outcome, Reply, ReplyCode, RollDice, SelfTestStep,
                                 Sensor, SensorChanged, Side, StartShuffle, Status, StopShuffle)

from .diagnosis import turned

#: machine seconds allowed on top of a motion's deadline for its report to arrive
REPORT_MARGIN_S = 2.0


class SelfTestAborted(RuntimeError):
    """The self-test could not go on for a reason outside the table's parts (the
    microcontroller restarted, the serial link went down, the operator stopped it). Every motor
    was stopped."""


@dataclass
class Observed:
    """What one step observed: its Reply (None for a motion started without one seen), its
    MotionDone (None if refused), every event seen meanwhile, and ``after``: every sensor read
    when it ended (a ``hardware.interface.SensorSnapshot``; None when the step does not read)."""

    reply: Reply | None
    done: MotionDone | None
    events: list
    after: Any = None

    def changes(self, sensor: Sensor, side: Side | None = None, value: int | None = None) -> int:
        """SensorChanged events of ``sensor`` on ``side`` (with ``value``) in this step."""
        return sum(1 for e in self.events if isinstance(e, SensorChanged) and e.sensor == sensor
                   and e.side == side and (value is None or e.value == value))

    @property
    def refused(self) -> bool:
        return self.reply is not None and self.reply.code != ReplyCode.OK


class Transition(Enum):
    """What kind of change a step expects (:class:`Expect`)."""

    GOES = "goes"  # the sensor changes to a value
    PULSES = "pulses"  # the sensor pulses (controller.diagnosis.turned: at least MIN_PULSES changes)
    TILES = "tiles"  # tiles at the side's push head: TILE_PRESENT edges or a STACK count
    DONE = "done"  # the motion ended COMPLETED


class When(Enum):
    """When a step runs, from an earlier step's observations."""

    MOVED = "moved"  # the earlier step's motor ran (a Lift finding its limit active ends at once, elapsed 0)
    RAN = "ran"  # the earlier step was not refused and ended


@dataclass(frozen=True)
class Expect:
    """A transition a step expects to see: ``what`` (:class:`Transition`) of ``sensor`` on ``side``
    (``value`` for GOES). Whether it was seen goes
    into the step's outcome (``mjtable selftest --json``: ``steps``); the part's verdict is decided
    from the same observations by the judges of :mod:`controller.diagnosis`."""

    what: Transition
    sensor: Sensor | None = None
    side: Side | None = None
    value: int | None = None

    def seen(self, obs: "Observed") -> bool:
        """Whether ``obs`` (a step's observations) shows this transition."""
        if self.what is Transition.DONE:
            return obs.done is not None and obs.done.outcome == Outcome.COMPLETED
        if self.what is Transition.TILES:
            return bool(obs.changes(Sensor.TILE_PRESENT, self.side) or obs.changes(Sensor.STACK, self.side, 1))
        assert self.sensor is not None
        if self.what is Transition.PULSES:
            return turned(obs.changes(self.sensor, self.side))
        return obs.changes(self.sensor, self.side, self.value) > 0

    def describe(self) -> str:
        """``"LIFT_TOP:E -> 1"``, ``"DISC_PULSE pulses"``, ``"tiles at E"``, ``"motion done COMPLETED"``."""
        where = "" if self.side is None else f":{self.side.name}"
        if self.what is Transition.DONE:
            return "motion done COMPLETED"
        if self.what is Transition.TILES:
            return f"tiles at {self.side.name if self.side is not None else '-'}"
        assert self.sensor is not None
        return f"{self.sensor.name}{where} " + ("pulses" if self.what is Transition.PULSES else f"-> {self.value}")


def _goes(sensor: Sensor, side: Side | None, value: int) -> Expect:
    return Expect(Transition.GOES, sensor, side, value)


def _pulses(sensor: Sensor, side: Side | None = None) -> Expect:
    return Expect(Transition.PULSES, sensor, side)


_DONE = Expect(Transition.DONE)


@dataclass(frozen=True)
class Step:
    """One step of the self-test's script: a goal command of :mod:`hardware.vocabulary`, the
    transitions it should bring and its deadline.

    Attributes:
        name: unique in the script ("lift E up").
        command: the goal command, its own deadline taken from the machine profile.
        deadline_s: machine seconds: a motion's own deadline (the runner waits
            :data:`REPORT_MARGIN_S` more for its MotionDone), or how long a call waits for its Reply.
        expect: the transitions expected (:class:`Expect`).
        motion: True: wait for the MotionDone; False: a call answered by a Reply.
        watch_s: after the Reply of a call, watch the machine this long (the disc's pulses).
        when: ``(earlier step, When)``: run only if the earlier step moved or ran; None: always.
        read_after: read every sensor when the step ends (``Observed.after``).
    """

    name: str
    command: Command
    deadline_s: float
    expect: tuple[Expect, ...] = ()
    motion: bool = True
    watch_s: float = 0.0
    when: tuple[str, When] | None = None
    read_after: bool = True


def _moved(obs: "Observed | None") -> bool:
    return obs is not None and obs.done is not None and not (obs.done.elapsed_ms == 0
                                                             and obs.done.outcome == Outcome.COMPLETED)


def _ran(obs: "Observed | None") -> bool:
    return obs is not None and not obs.refused and obs.done is not None


_CONDITIONS: dict[When, Callable[["Observed | None"], bool]] = {When.MOVED: _moved, When.RAN: _ran}

#: how long a call (ClearSafeStop, StartShuffle, StopShuffle) waits for its Reply, machine s
CALL_TIMEOUT_S = 5.0


def script(profile: Any) -> tuple[Step, ...]:
    """The self-test's script, in the order it runs; every command and deadline from ``profile``
    (a :class:`hardware.Profile`: ``timing`` in seconds, deadlines via its ``*_deadline_ms``).
    The safety inputs, the lift limits, the tile-present and push-home sensors and the jam sensor
    are also read at rest, before the first step (``backend.sensors()``)."""
    t = profile.timing
    jog_ms = profile.feed_deadline_ms(1)  # a sound feeder pushes one stack within this
    window_s = 4 * t.disc_pulse_s  # the disc must pulse within four pulse half-periods
    # the disc turns on through the four feeder jogs (tiles reach the push heads)
    shuffle_ms = min(int(1000 * (window_s + 4 * (jog_ms / 1000 + REPORT_MARGIN_S) + 5.0)),
                     profile.shuffle_deadline_ms())
    lift_ms, centre_ms = profile.lift_deadline_ms(), profile.centre_deadline_ms()
    spin_ms, dice_ms = profile.dice_ms()
    S = Sensor
    return (
        Step("clear", ClearSafeStop(), CALL_TIMEOUT_S, motion=False, read_after=False),
        # shuffle disc: started, watched for its pulses; stopped after the feeder jogs or at a jam
        Step("disc", StartShuffle(shuffle_ms), CALL_TIMEOUT_S, (_pulses(S.DISC_PULSE),), motion=False,
             watch_s=window_s, read_after=False),
        # feeders, push heads, tile-present sensors: one jog per side (the feeder turns the head's cam)
        *(Step(f"feeder {s.name}", SelfTestStep(10 + k, Motor.FEEDER, s, jog_ms, jog_ms + 1000),
               (jog_ms + 1000) / 1000,
               (_pulses(S.FEEDER_MOTION, s), Expect(Transition.TILES, side=s), _pulses(S.PUSH_HOME, s), _DONE))
          for k, s in enumerate(Side)),
        Step("disc stop", StopShuffle(), CALL_TIMEOUT_S, motion=False, read_after=False),
        # lifts, one side at a time: up, then down again if the motor ran
        *(step for s in Side for step in (
            Step(f"lift {s.name} up", Lift(s, True, lift_ms), t.lift_deadline_s,
                 (_goes(S.LIFT_BOTTOM, s, 0), _goes(S.LIFT_TOP, s, 1), _DONE)),
            Step(f"lift {s.name} down", Lift(s, False, lift_ms), t.lift_deadline_s,
                 (_goes(S.LIFT_TOP, s, 0), _goes(S.LIFT_BOTTOM, s, 1), _DONE), when=(f"lift {s.name} up", When.MOVED)))),
        # centre lift: down (the hole opens, the played set drops), up again whatever the down did
        Step("centre down", Lift(None, False, centre_ms), centre_ms / 1000,
             (_goes(S.CENTRE_TOP, None, 0), _goes(S.CENTRE_BOTTOM, None, 1), _DONE)),
        Step("centre up", Lift(None, True, centre_ms), centre_ms / 1000,
             (_goes(S.CENTRE_BOTTOM, None, 0), _goes(S.CENTRE_TOP, None, 1), _DONE), when=("centre down", When.RAN)),
        # dice: one spin
        Step("dice", RollDice(spin_ms, dice_ms), dice_ms / 1000, (_pulses(S.DICE_PULSE), _DONE), read_after=False),
    )


@dataclass(frozen=True)
class StepOutcome:
    """A step that ran and what came of it (``mjtable selftest --json``: ``steps``)."""

    step: Step
    obs: "Observed"

    def to_dict(self) -> dict:
        """``{"step", "command" (docs/trace.md form), "deadline_s", "result", "elapsed_s", "expect":
        [{"transition", "seen"}]}``; ``result``: the MotionDone's outcome, ``REFUSED:CODE``, ``OK``
        (a call answered), ``NO_REPORT``."""
        o, d = self.obs, self.obs.done
        if o.refused:
            assert o.reply is not None
            result = f"REFUSED:{o.reply.code.name}"
        elif d is not None:
            result = d.outcome.name
        else:
            result = "OK" if not self.step.motion and o.reply is not None else "NO_REPORT"
        return {"step": self.step.name, "command": to_json(self.step.command), "deadline_s": self.step.deadline_s,
                "result": result, "elapsed_s": None if d is None else d.elapsed_ms / 1000,
                "expect": [{"transition": e.describe(), "seen": e.seen(o)} for e in self.step.expect]}


class StepRunner:
    """The one step runner: :meth:`run` sends a step's command, waits for its Reply (a call) or its
    MotionDone (a motion, up to its deadline plus :data:`REPORT_MARGIN_S`), watches on for
    ``watch_s``, reads the sensors if asked, and keeps the :class:`Observed` (``seen``) and the
    :class:`StepOutcome` (``log``). ``cancel`` is asked at every event waited on.
    Raises SelfTestAborted on a link fault or ``cancel`` (every motor stopped first on ``cancel``)."""

    def __init__(self, backend: Any, steps: tuple[Step, ...], cancel: Callable[[], bool] | None = None) -> None:
        self.b = backend
        self.cancel = cancel or (lambda: False)
        self.steps = {s.name: s for s in steps}
        self.seen: dict[str, Observed] = {}
        self.log: list[StepOutcome] = []

    def _check(self, events: list) -> None:
        if self.cancel():
            self.b.stop_all()
            raise SelfTestAborted("stopped by the operator: every motor was stopped")
        for ev in events:
            if isinstance(ev, BackendReset):
                raise SelfTestAborted(f"the microcontroller restarted (boot {ev.previous_boot} -> "
                                      f"{ev.boot}) during the self-test; run it again")
            if isinstance(ev, BackendLost):
                raise SelfTestAborted(f"the serial link to the microcontroller was lost during "
                                      f"the self-test ({ev.reason})")
            if isinstance(ev, CommandFailed):
                raise SelfTestAborted(f"command {ev.cmd_id} got no reply: {ev.reason}")

    def run(self, name: str) -> Observed | None:
        """Run step ``name``; None when its ``when`` condition did not hold (skipped)."""
        step = self.steps[name]
        if step.when is not None and not _CONDITIONS[step.when[1]](self.seen.get(step.when[0])):
            return None
        i = self.b.submit(step.command)
        reply: list[Reply] = []

        def answered(e: Any) -> bool:
            if isinstance(e, (BackendReset, BackendLost)) or self.cancel() or (
                    isinstance(e, CommandFailed) and e.cmd_id == i):
                return True
            if not step.motion:
                return isinstance(e, (Reply, Status)) and e.cmd_id == i
            if isinstance(e, Reply) and e.cmd_id == i:
                reply.append(e)
                return e.code != ReplyCode.OK  # refused: no MotionDone comes
            return isinstance(e, MotionDone) and e.cmd_id == i

        evs = self.b.run_until(answered, step.deadline_s + (REPORT_MARGIN_S if step.motion else 0.0))
        self._check(evs)
        last = evs[-1]
        if step.motion:
            obs = Observed(reply[0] if reply else None, last if isinstance(last, MotionDone) else None, evs)
        else:
            obs = Observed(last if isinstance(last, Reply) else None, None, evs)
        if step.watch_s and not obs.refused:
            more = self.b.advance(step.watch_s)
            self._check(more)
            obs.events = evs + more
        if step.read_after:
            obs.after = self.b.sensors()
        self.seen[name] = obs
        self.log.append(StepOutcome(step, obs))
        return obs


__all__ = ["REPORT_MARGIN_S", "CALL_TIMEOUT_S", "SelfTestAborted", "Observed", "Transition", "When", "Expect", "Step", "script",
           "StepOutcome", "StepRunner"]
