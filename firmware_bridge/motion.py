"""The motion table: run a motor until a sensor edge, a count or a deadline, then stop it.

One piece of code for one job: the device engine (:mod:`firmware_bridge.device`, what the
microcontroller runs) and the Pi's GPIO backend (``hardware.gpio``) both drive their
motors through a :class:`MotionTable`. MicroPython-portable: no threads, no dataclasses,
no exceptions on the hot path, integer milliseconds, ``__slots__`` classes.

A motion is keyed by ``(motor, side)`` (side 0..3, or 0xFF for shuffle and dice); a key
has at most one motion. Goals per command type (catalogue ``T_*``):

* ``T_SHUFFLE_START``: no goal; ends STOPPED (stop command) or DEADLINE.
* ``T_FEED_STACK``: ``target`` stacks; each 0->1 edge of that side's STACK sensor counts
  one (``on_stack`` is called). The feeder motor also drives that side's push (stacking)
  head through its cam, so after the target the motor runs on until the head is back
  home (the 0->1 edge of PUSH_HOME) and the motion COMPLETES there: a head left out
  would block the lift. A head that never reports home ends the motion at its DEADLINE
  with ``progress == target``. ``target`` 0 only parks: the motion starts waiting for the head
  (the caller completes it at once when the head already reads home).
* ``T_LIFT``: COMPLETES on the 0->1 edge of that side's top (direction 1) or bottom
  (direction 0) limit; for the centre lift (MOTOR_CENTRE, side NONE) on CENTRE_TOP /
  CENTRE_BOTTOM.
* ``T_ROLL_DICE`` / ``T_SELF_TEST`` / ``T_SET_INDICATORS`` (the buzzer): run ``target``
  ms then COMPLETE; a self-test counts every sensor change on its side (all sides for
  shuffle, dice and the centre lift) in ``progress``.

**Reversal dead time.** A lift (a side lift or the centre lift: an up and a down relay)
that is started in the direction opposite to its last run within ``REVERSAL_DEAD_MS``
(50 ms) of that run's stop waits until the dead time has passed before its relay closes:
one relay's contacts open (and the motor's back-EMF decays) before the other closes, so
the two are never on together and the motor is not plugged into reverse. The motion
exists, and makes the table busy, from the command on; its ``started`` and deadline count
from the moment the motor is energised (issue #23 section 1; every backend runs this
table: the device engine, the GPIO backend and the simulator).

Every motion has a deadline (ms after its motor was energised); when it passes first, the
motor is stopped and the motion ends with OUTCOME_DEADLINE.

**Stall-to-stop.** A motor that runs without motion is stopped within about a second, not at
the end of its whole deadline (a stalled motor heats): a feeder (T_FEED_STACK, parking
included), the shuffle disc (T_SHUFFLE_START) and the dice (T_ROLL_DICE) each have a motion
sensor (FEEDER_MOTION of the side, DISC_PULSE, DICE_PULSE); when the motor has been energised
for ``STALL_MS[motor]`` without a change of that sensor (since it started, or since the last
change), the motor is stopped and the motion ends with OUTCOME_DEADLINE, as at its deadline
(``elapsed_ms`` tells the two apart). A push head shares its side's feeder drive, so a jammed
head stalls that drive and the same rule stops it. A feed that turns but gets no tiles (a
jammed conveyor wheel, a missing tile at the end of a side's share) is stopped after
``FLOW_STALL_MS`` without a TILE_PRESENT or STACK change on its side (not while parking:
then no tile is expected). The windows hold a few pulse periods of the machine profile
(``hardware.profile`` checks its pulse timings against them) and stay clear of tile arrival
gaps (a tile that arrives face up goes round the disc once more).
 Outcomes are reported through
``on_done(motion, outcome, elapsed_ms)``, after the motor has been stopped.
"""

import sys

from . import catalogue as C

if sys.implementation.name == "micropython":
    # A MicroPython dict does not keep insertion order: motions that end in the same tick
    # (stop_all, a deadline shared) would be reported in another order than on CPython.
    from collections import OrderedDict as _motions_dict
else:
    _motions_dict = dict

#: ms between one relay of a lift opening and the other closing (relay release time plus
#: margin; typical small power relays release in 5-15 ms)
REVERSAL_DEAD_MS = 50
_REVERSIBLE = (C.MOTOR_LIFT, C.MOTOR_CENTRE)
#: ms a motor may run without a change of its motion sensor before it is stopped (stall): more
#: than two full periods of the default pulses (feeder and disc 2 x 0.25 s, dice 2 x 0.10 s) and
#: more than the controller's QUIET_MS (1000: a feed that ends is judged on its last second)
STALL_MS = {C.MOTOR_FEEDER: 1200, C.MOTOR_SHUFFLE: 1200, C.MOTOR_DICE: 500}
#: the motion sensor of each motor in STALL_MS (its side: the motion's side)
MOTION_SENSOR = {C.MOTOR_FEEDER: C.SENSOR_FEEDER_MOTION, C.MOTOR_SHUFFLE: C.SENSOR_DISC_PULSE,
                 C.MOTOR_DICE: C.SENSOR_DICE_PULSE}
#: ms a feed may turn without a tile passing its side (tile-present or stack change)
FLOW_STALL_MS = 4000
_STALL_TYPES = (C.T_FEED_STACK, C.T_SHUFFLE_START, C.T_ROLL_DICE)


class Motion:
    """One running motion. Times in ms (the owner's clock)."""

    __slots__ = ("cmd", "mtype", "motor", "side", "direction", "target", "progress",
                 "started", "deadline_at", "parking", "waiting", "moved_at", "fed_at")

    def __init__(self, cmd, mtype, motor, side, direction, target, started, deadline_at):
        self.cmd = cmd                  # command id (u16)
        self.mtype = mtype              # catalogue T_* of the command
        self.motor = motor              # MOTOR_*
        self.side = side                # 0..3, or SIDE_NONE
        self.direction = direction      # 1 forward / up, 0 reverse / down
        self.target = target            # stacks (feed), ms (dice, self-test), 0 otherwise
        self.progress = 0               # stacks counted / sensor changes seen
        self.started = started          # ms
        self.deadline_at = deadline_at  # ms
        self.parking = False            # feed: target reached, waiting for the head home
        self.waiting = False            # lift: in its reversal dead time, motor not yet on
        self.moved_at = started         # ms: last change of the motion sensor (or the start)
        self.fed_at = started           # ms: last tile seen by a feed (or the start)


_TIMED = (C.T_ROLL_DICE, C.T_SELF_TEST, C.T_SET_INDICATORS)


def _nothing(*args):
    return None


class MotionTable:
    """The running motions of one machine.

    Args:
        machine: a :class:`firmware_bridge.machine.Machine` (``start``, ``stop``,
            ``stop_all``).
        on_stack: ``fn(motion, now_ms)`` called for every stack counted by a feed.
        on_done: ``fn(motion, outcome, elapsed_ms)`` called once per motion when it ends
            (OUTCOME_COMPLETED, OUTCOME_STOPPED, OUTCOME_DEADLINE or OUTCOME_SAFE_STOP),
            after its motor was stopped.
        home: ``fn(side) -> bool``, the push-head home input of ``side`` now (for parking).
    """

    __slots__ = ("machine", "motions", "on_stack", "on_done", "home", "stopped", "last_ms")

    def __init__(self, machine, on_stack=None, on_done=None, home=None):
        self.machine = machine
        self.motions = _motions_dict()
        self.on_stack = on_stack or _nothing
        self.on_done = on_done or _nothing
        #: ``home(side) -> bool``: the push head of ``side`` reads home now
        self.home = home or _nothing
        #: ``(motor, side) -> (ms, direction)``: when each lift's motor last stopped
        self.stopped = {}
        self.last_ms = 0  # the latest time seen (forget() has no clock of its own)

    def __len__(self):
        return len(self.motions)

    def moving(self):
        """True if a motor other than the buzzer runs (the buzzer is an indicator: it does not
        make the machine busy)."""
        for motor, _ in self.motions:
            if motor != C.MOTOR_BUZZER:
                return True
        return False

    def busy(self, motor, side):
        """True if ``(motor, side)`` has a motion running."""
        return (motor, side) in self.motions

    def begin(self, cmd, mtype, motor, side, direction, target, deadline_ms, now_ms):
        """Start a motion: energise the motor and remember the goal.

        Returns REPLY_OK, or REPLY_BUSY (nothing started) when that motor already has a
        motion, or REPLY_BAD_ARGUMENT when ``deadline_ms`` < 1 (no motor runs without a
        deadline)."""
        key = (motor, side)
        if key in self.motions:
            return C.REPLY_BUSY
        if deadline_ms < 1:
            return C.REPLY_BAD_ARGUMENT
        self.last_ms = now_ms
        wait = self.dead_time_left(motor, side, direction, now_ms)
        start = now_ms + wait
        m = Motion(cmd, mtype, motor, side, direction, target, start, start + deadline_ms)
        m.parking = mtype == C.T_FEED_STACK and target == 0
        self.motions[key] = m
        if wait > 0:
            m.waiting = True  # tick() closes the relay once the dead time has passed
        else:
            self.machine.start(motor, side, direction)
        return C.REPLY_OK

    def dead_time_left(self, motor, side, direction, now_ms):
        """ms that a lift started now in ``direction`` must still wait (0: none): the
        rest of REVERSAL_DEAD_MS after its last run in the other direction stopped."""
        last = self.stopped.get((motor, side))
        if last is None or last[1] == direction:
            return 0
        left = last[0] + REVERSAL_DEAD_MS - now_ms
        return left if left > 0 else 0

    def on_sensor(self, sensor, side, value, now_ms):
        """A sensor changed (already de-duplicated by the caller): count stacks, complete
        lifts on their limit edge, count self-test changes."""
        self.last_ms = now_ms
        for key, m in list(self.motions.items()):
            if key not in self.motions or m.waiting:
                continue
            if sensor == MOTION_SENSOR.get(m.motor) and side == m.side:
                m.moved_at = now_ms
            elif (m.motor == C.MOTOR_FEEDER and side == m.side
                    and (sensor == C.SENSOR_TILE_PRESENT or sensor == C.SENSOR_STACK)):
                m.fed_at = now_ms
            if m.mtype == C.T_SELF_TEST:
                if m.side == C.SIDE_NONE or m.side == side:
                    m.progress += 1
                if (m.parking and sensor == C.SENSOR_PUSH_HOME and side == m.side and value):
                    self.finish(key, C.OUTCOME_COMPLETED, now_ms)
            elif m.motor == C.MOTOR_FEEDER:
                if side != m.side or not value:
                    continue
                if sensor == C.SENSOR_STACK and not m.parking:
                    m.progress += 1
                    self.on_stack(m, now_ms)
                    m.parking = m.progress >= m.target
                elif sensor == C.SENSOR_PUSH_HOME and m.parking:
                    self.finish(key, C.OUTCOME_COMPLETED, now_ms)
            elif m.motor == C.MOTOR_LIFT and side == m.side and value and (
                    (sensor == C.SENSOR_LIFT_TOP and m.direction == 1)
                    or (sensor == C.SENSOR_LIFT_BOTTOM and m.direction == 0)):
                self.finish(key, C.OUTCOME_COMPLETED, now_ms)
            elif m.motor == C.MOTOR_CENTRE and value and (
                    (sensor == C.SENSOR_CENTRE_TOP and m.direction == 1)
                    or (sensor == C.SENSOR_CENTRE_BOTTOM and m.direction == 0)):
                self.finish(key, C.OUTCOME_COMPLETED, now_ms)

    def tick(self, now_ms):
        """Advance time: lifts past their dead time start, timed motions complete,
        overdue motions end with DEADLINE."""
        self.last_ms = now_ms
        for key, m in list(self.motions.items()):
            if m.waiting:
                if now_ms >= m.started:
                    m.waiting = False
                    self.machine.start(m.motor, m.side, m.direction)
                continue
            if m.mtype in _TIMED and not m.parking and now_ms - m.started >= m.target:
                if m.mtype == C.T_SELF_TEST and m.motor == C.MOTOR_FEEDER and not self.home(m.side):
                    m.parking = True  # the jog is over: bring the push head home first
                else:
                    self.finish(key, C.OUTCOME_COMPLETED, now_ms)
            elif now_ms >= m.deadline_at or now_ms >= self._stall_at(m):
                self.finish(key, C.OUTCOME_DEADLINE, now_ms)

    def _stall_at(self, m):
        """When ``m`` stalls (ms) unless its motion sensor or its tiles show progress first."""
        at = m.deadline_at
        if m.mtype in _STALL_TYPES:
            if m.motor in STALL_MS and m.moved_at + STALL_MS[m.motor] < at:
                at = m.moved_at + STALL_MS[m.motor]
            if m.mtype == C.T_FEED_STACK and not m.parking and m.fed_at + FLOW_STALL_MS < at:
                at = m.fed_at + FLOW_STALL_MS
        return at

    def next_due(self):
        """Earliest time (ms) at which ``tick`` has something to do, or None."""
        due = None
        for m in self.motions.values():
            t = m.started if m.waiting else self._stall_at(m)
            if not m.waiting and m.mtype in _TIMED and not m.parking and m.started + m.target < t:
                t = m.started + m.target
            if due is None or t < due:
                due = t
        return due

    def finish(self, key, outcome, now_ms, stop_motor=True):
        """End the motion of ``key`` (a ``(motor, side)`` pair) with ``outcome``."""
        m = self.motions.pop(key, None)
        if m is None:
            return
        self.last_ms = now_ms
        if stop_motor:
            self.machine.stop(key[0], key[1])
        if m.motor in _REVERSIBLE and not m.waiting:
            self.stopped[key] = (now_ms, m.direction)
        elapsed = now_ms - m.started
        self.on_done(m, outcome, elapsed if elapsed > 0 else 0)

    def stop_all(self, outcome, now_ms):
        """Stop every motor at once (``machine.stop_all()``, whatever the table holds),
        then end every motion with ``outcome``."""
        self.machine.stop_all()
        for key in list(self.motions):
            self.finish(key, outcome, now_ms, stop_motor=False)

    def forget(self):
        """Stop every motor and drop the motions without reporting them (a new host
        session: the previous host cannot receive the reports)."""
        for key, m in self.motions.items():
            if m.motor in _REVERSIBLE and not m.waiting:
                self.stopped[key] = (self.last_ms, m.direction)
        self.motions = _motions_dict()
        self.machine.stop_all()

    def motors_mask(self):
        """STATUS motors mask of the running motions (see catalogue.motor_bit)."""
        mask = 0
        for motor, side in self.motions:
            mask |= 1 << C.motor_bit(motor, side)
        return mask
