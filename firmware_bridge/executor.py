"""The table's command rules: one piece of code for the microcontroller and the Pi.

:class:`CommandCore` executes the catalogue's commands (raw ``(type, payload)``) against a
:class:`firmware_bridge.machine.Machine` through a :class:`firmware_bridge.motion.MotionTable`
and reports what happens as device messages ``(type, payload)`` through ``emit``. The device
engine (:mod:`firmware_bridge.device`) sends those over the link; the Pi's own backends
(``hardware.local``: simulator and GPIO) decode them into the same event dataclasses the host
gets from the link. MicroPython-portable: ints, ``struct``, no exceptions on the hot path.

Rules (``docs/protocol.md``, section "Commands"):

* Power-on and the emergency stop latch a safe-stop (``stop_reason``); motion commands are
  refused SAFE_STOP until CLEAR_SAFE_STOP, which is refused while the stop is pressed.
  SET_INDICATORS is accepted in safe-stop: an alarm must sound while the motors are stopped.
* A motor that already has a motion answers BUSY; a lift (side or centre) already at the
  limit it is sent to completes at once with elapsed 0, without moving; so does FEED_STACK
  with 0 stacks (park the push head) when the head already reads home.
* SET_GEAR is refused BUSY while a motor runs (the buzzer does not count; the gear is changed with the machine at
  rest: the technician's answer in ``shared/seeds/002_4c2a73aa42bc09ab.txt``).
* The reply goes out before the motion's first event.
"""

import struct

from . import catalogue as C
from .motion import MotionTable

# payload layouts, from the catalogue's one table
_F_SENSOR = C.FORMATS[C.T_SENSOR]
_F_FAULT = C.FORMATS[C.T_FAULT]
_F_REPLY = C.FORMATS[C.T_REPLY]
_F_STACKS = C.FORMATS[C.T_STACKS]
_F_MOTION_DONE = C.FORMATS[C.T_MOTION_DONE]
_U32 = 0xFFFFFFFF
_U64 = 0xFFFFFFFFFFFFFFFF


class CommandCore:
    """Executes commands; keeps the safe-stop latch, the gear, the lights and the inputs.

    Args:
        machine: motor outputs (``start``, ``stop``, ``stop_all``, ``set_gear``,
            ``set_lights``).
        emit: ``emit(mtype, payload, essential) -> bool``: a device message to report
            (essential: replies, motion ends and faults, which must not be dropped).
        now_ms: current time (ms).
        gear: tile-count gear at power-on.
        sensors: input readings at power-on, as a STATUS sensors mask.
    Attributes: ``stop_reason`` (STOP_*), ``gear``, ``lights`` (LIGHT_* mask),
        ``sensors`` (mask, see ``catalogue.sensor_bit``), ``table`` (the MotionTable).
    """

    def __init__(self, machine, emit, now_ms=0, gear=136, sensors=0):
        self.machine = machine
        self.emit = emit
        self.now = now_ms
        self.boot_ms = now_ms
        self.gear = gear
        self.lights = 0
        self.sensors = sensors
        self.stop_reason = C.STOP_POWER_ON
        self.table = MotionTable(machine, self._on_stack, self._on_done,
                                 lambda side: self.reading(C.SENSOR_PUSH_HOME, side) == 1)
        machine.stop_all()

    # ------------------------------------------------------------ introspection
    def state(self):
        """STATE_SAFE_STOP, STATE_BUSY or STATE_IDLE."""
        if self.stop_reason != C.STOP_NONE:
            return C.STATE_SAFE_STOP
        return C.STATE_BUSY if self.table.moving() else C.STATE_IDLE

    def reading(self, sensor, side):
        """The last reading (0/1) of ``sensor`` on ``side`` (SIDE_NONE for sideless)."""
        return (self.sensors >> C.sensor_bit(sensor, side)) & 1

    # -------------------------------------------------------------------- inputs
    def sensor_changed(self, sensor, side, value, now_ms):
        """An input changed. Returns the ``emit`` result of the SENSOR event, False when
        the value did not change. The emergency stop latches a safe-stop."""
        self.now = now_ms
        bit = 1 << C.sensor_bit(sensor, side)
        value = 1 if value else 0
        if (1 if self.sensors & bit else 0) == value:
            return False
        self.sensors = (self.sensors | bit) if value else (self.sensors & ~bit & _U64)
        queued = self.emit(C.T_SENSOR, struct.pack(_F_SENSOR, sensor, side, value,
                                                    now_ms & _U32), False)
        if sensor == C.SENSOR_ESTOP and value:
            self.safe_stop(C.STOP_ESTOP, C.FAULT_ESTOP, 0)
            return queued
        self.table.on_sensor(sensor, side, value, now_ms)
        return queued

    def tick(self, now_ms):
        """Deadlines and timed motions (dice, self-test, buzzer)."""
        self.now = now_ms
        self.table.tick(now_ms)

    def safe_stop(self, reason, fault, detail):
        """Stop every motor (motions end SAFE_STOP), latch ``reason`` (an emergency stop
        overrides another reason) and report FAULT ``fault``."""
        self.table.stop_all(C.OUTCOME_SAFE_STOP, self.now)
        if self.stop_reason == C.STOP_NONE or reason == C.STOP_ESTOP:
            self.stop_reason = reason
        self.emit(C.T_FAULT, struct.pack(_F_FAULT, fault, C.SIDE_NONE, 0, detail & _U32,
                                         self.now & _U32), True)

    # ------------------------------------------------------------------- events
    def _reply(self, cmd, code, detail=0):
        self.emit(C.T_REPLY, struct.pack(_F_REPLY, cmd, code, detail), True)

    def _on_stack(self, m, now_ms):
        self.emit(C.T_STACKS, struct.pack(_F_STACKS, m.cmd, m.side, m.progress & 0xFF,
                                           now_ms & _U32), True)

    def _on_done(self, m, outcome, elapsed_ms):
        self.emit(C.T_MOTION_DONE, struct.pack(_F_MOTION_DONE, m.cmd, m.mtype, m.side, outcome,
                                                elapsed_ms & _U32, m.progress & _U32), True)
        if outcome == C.OUTCOME_DEADLINE:
            self.emit(C.T_FAULT, struct.pack(_F_FAULT, C.FAULT_DEADLINE, m.side, m.cmd,
                                             m.progress & _U32, self.now & _U32), True)

    def _begin(self, cmd, mtype, motor, side, direction, target, deadline_ms):
        if self.stop_reason != C.STOP_NONE:
            return self._reply(cmd, C.REPLY_SAFE_STOP, self.stop_reason)
        if self.table.busy(motor, side):
            return self._reply(cmd, C.REPLY_BUSY, 0)
        self._reply(cmd, C.REPLY_OK, 0)
        self.table.begin(cmd, mtype, motor, side, direction, target, deadline_ms, self.now)

    # ----------------------------------------------------------------- commands
    def execute(self, mtype, payload, now_ms):
        """Execute one command message (``payload`` starts with the cmd id). Bad input is
        answered REPLY_UNKNOWN (type or length) or REPLY_BAD_ARGUMENT (detail = the
        1-based number of the field after the cmd id); never raises."""
        self.now = now_ms
        fmt = C.FORMATS.get(mtype)
        cmd = payload[0] | (payload[1] << 8) if len(payload) >= 2 else 0
        if mtype not in C.COMMAND_TYPES or len(payload) != struct.calcsize(fmt):
            return self._reply(cmd, C.REPLY_UNKNOWN, mtype & 0xFF)
        f = struct.unpack(fmt, payload)
        bad = C.REPLY_BAD_ARGUMENT
        if mtype == C.T_SHUFFLE_START:
            if f[1] == 0:
                return self._reply(cmd, bad, 1)
            self._begin(cmd, mtype, C.MOTOR_SHUFFLE, C.SIDE_NONE, 1, 0, f[1])
        elif mtype == C.T_SHUFFLE_STOP:
            self._reply(cmd, C.REPLY_OK, 0)
            self.table.finish((C.MOTOR_SHUFFLE, C.SIDE_NONE), C.OUTCOME_STOPPED, self.now)
        elif mtype == C.T_FEED_STACK:
            if f[1] not in C.SIDES:
                return self._reply(cmd, bad, 1)
            if f[2] > 40:
                return self._reply(cmd, bad, 2)
            if f[3] == 0:
                return self._reply(cmd, bad, 3)
            if (f[2] == 0 and self.stop_reason == C.STOP_NONE
                    and not self.table.busy(C.MOTOR_FEEDER, f[1])
                    and self.reading(C.SENSOR_PUSH_HOME, f[1])):
                return self._at_once(cmd, mtype, f[1])  # park: the head is already home
            self._begin(cmd, mtype, C.MOTOR_FEEDER, f[1], 1, f[2], f[3])
        elif mtype == C.T_LIFT:
            self._lift(cmd, f[1], f[2], f[3])
        elif mtype == C.T_ROLL_DICE:
            if f[1] == 0:
                return self._reply(cmd, bad, 1)
            if f[2] < f[1]:
                return self._reply(cmd, bad, 2)
            self._begin(cmd, mtype, C.MOTOR_DICE, C.SIDE_NONE, 1, f[1], f[2])
        elif mtype == C.T_STOP_ALL:
            self.table.stop_all(C.OUTCOME_STOPPED, self.now)
            self._reply(cmd, C.REPLY_OK, 0)
        elif mtype == C.T_SET_GEAR:
            if f[1] not in C.GEARS:
                return self._reply(cmd, bad, 1)
            if self.table.moving():
                return self._reply(cmd, C.REPLY_BUSY, 0)
            self.gear = f[1]
            self.machine.set_gear(f[1])
            self._reply(cmd, C.REPLY_OK, 0)
        elif mtype == C.T_GET_STATUS:
            self.emit(C.T_STATUS, struct.pack(
                C.FORMATS[C.T_STATUS], cmd, self.state(), self.stop_reason, self.gear,
                self.table.motors_mask(), self.sensors & _U64,
                (self.now - self.boot_ms) & _U32, len(self.table)), True)
        elif mtype == C.T_SELF_TEST:
            _, step, motor, side, jog, deadline = f
            if motor not in C.MOTORS or motor == C.MOTOR_BUZZER:
                return self._reply(cmd, bad, 2)
            per_side = motor in (C.MOTOR_FEEDER, C.MOTOR_LIFT)
            if (per_side and side not in C.SIDES) or (not per_side and side != C.SIDE_NONE):
                return self._reply(cmd, bad, 3)
            if jog == 0 or deadline < jog:
                return self._reply(cmd, bad, 4)
            self._begin(cmd, mtype, motor, side, 1, jog, deadline)
        elif mtype == C.T_CLEAR_SAFE_STOP:
            if self.reading(C.SENSOR_ESTOP, C.SIDE_NONE):
                return self._reply(cmd, C.REPLY_SAFE_STOP, C.STOP_ESTOP)
            self.stop_reason = C.STOP_NONE
            self._reply(cmd, C.REPLY_OK, 0)
        elif mtype == C.T_SET_INDICATORS:
            lights, buzzer_ms = f[1], f[2]
            if lights & ~C.LIGHTS_ALL:
                return self._reply(cmd, bad, 1)
            self.lights = lights
            self.machine.set_lights(lights)
            self._reply(cmd, C.REPLY_OK, 0)
            key = (C.MOTOR_BUZZER, C.SIDE_NONE)
            self.table.finish(key, C.OUTCOME_STOPPED, self.now)  # a new sound replaces it
            if buzzer_ms:
                self.table.begin(cmd, mtype, C.MOTOR_BUZZER, C.SIDE_NONE, 1, buzzer_ms,
                                 buzzer_ms + 1, self.now)

    def _lift(self, cmd, side, up, deadline):
        bad = C.REPLY_BAD_ARGUMENT
        if side not in C.SIDES and side != C.SIDE_NONE:
            return self._reply(cmd, bad, 1)
        if up not in (0, 1):
            return self._reply(cmd, bad, 2)
        if deadline == 0:
            return self._reply(cmd, bad, 3)
        if side == C.SIDE_NONE:
            motor = C.MOTOR_CENTRE
            limit = C.SENSOR_CENTRE_TOP if up else C.SENSOR_CENTRE_BOTTOM
        else:
            motor = C.MOTOR_LIFT
            limit = C.SENSOR_LIFT_TOP if up else C.SENSOR_LIFT_BOTTOM
        if (self.stop_reason == C.STOP_NONE and not self.table.busy(motor, side)
                and self.reading(limit, side)):
            return self._at_once(cmd, C.T_LIFT, side)  # already there: done without moving
        self._begin(cmd, C.T_LIFT, motor, side, up, 0, deadline)

    def _at_once(self, cmd, mtype, side):
        """A motion whose goal is already reached: OK, then COMPLETED with elapsed 0."""
        self._reply(cmd, C.REPLY_OK, 0)
        self.emit(C.T_MOTION_DONE, struct.pack(_F_MOTION_DONE, cmd, mtype, side,
                                                C.OUTCOME_COMPLETED, 0, 0), True)
