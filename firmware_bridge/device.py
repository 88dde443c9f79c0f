"""The device side of the protocol: the engine the microcontroller runs.

The simulator runs this same code on a virtual clock, and it is written so that it can be
ported to MicroPython on an RP2040 without redesign: no threads, no dataclasses, no
exceptions escaping into the main loop, integer milliseconds, bounded queues. The
firmware's main loop is::

    engine = DeviceEngine(machine, boot_counter=flash.increment_boot(), now_ms=ticks_ms())
    while True:
        engine.feed(uart.read(uart.any()), ticks_ms())   # bytes from the host
        engine.tick(ticks_ms())                           # safety, deadlines, heartbeat
        uart.write(engine.poll())                         # bytes to the host
        # and from the input interrupt queue:
        #   engine.sensor_changed(sensor, side, value, ticks_ms())

(On MicroPython, replace the ``now - then`` differences with ``time.ticks_diff``.)

Safety rules enforced here, independent of the host:

* Host timeout: when no valid frame has arrived from the host for
  ``heartbeat_window_ms`` (default 500), the next ``tick`` calls ``machine.stop_all()``,
  ends every motion with outcome SAFE_STOP, latches the safe-stop state with reason
  HOST_TIMEOUT and queues a FAULT(HOST_TIMEOUT) for the host. Only CLEAR_SAFE_STOP
  clears the latch; motion commands are refused while it is set.
* Power-on: the engine starts latched with reason POWER_ON, so that nothing moves after a
  reset until the host has noticed the reset (boot counter) and cleared it.
* Emergency stop input: stops everything and latches ESTOP; cannot be cleared while the
  input is still active.
* Deadlines: every motion command carries a deadline (ms, relative to its execution);
  when it passes before the goal is reached the motor is stopped, MOTION_DONE reports
  DEADLINE and a FAULT(DEADLINE) is queued.
"""

import struct

from . import catalogue as C
from .motion import MotionTable
from .reliable import ReliableEndpoint
from .wire import PROTOCOL_VERSION, FLAG_RELIABLE, FrameDecoder, encode_frame

_U32 = 0xFFFFFFFF
_EVENT_RESERVE = 8      # queue slots kept free for replies, motion-done and faults
_ACCEPT_MIN_SPACE = 4   # below this, new commands are not acknowledged (flow control)
_CTRL_MAX = 4           # pending control frames kept (bounded)


class DeviceEngine:
    """Protocol engine of the microcontroller.

    Args:
        machine: a :class:`firmware_bridge.machine.Machine`.
        boot_counter: number of boots, kept in flash by the firmware (u32); the host
            compares it across sessions to tell a reset from a glitch.
        now_ms: current time in ms.
        firmware: (major, minor, patch) reported in the handshake.
        profile_id: machine profile id (u16), reported in the handshake.
        gear_tiles: current tile-count gear (136, 144, 152 or 108).
        heartbeat_window_ms: host silence after which every motor is stopped.
        heartbeat_interval_ms: period of the device's DEV_HEARTBEAT frames.
        tx_queue_max: reliable frames queued towards the host (bounded memory).
        on_execute: optional callable ``(cmd_id, type)`` called once per executed
            command (tests and benchmarks count executions with it).
    """

    def __init__(self, machine, boot_counter, now_ms=0, firmware=(1, 0, 0), profile_id=1,
                 gear_tiles=136, heartbeat_window_ms=500, heartbeat_interval_ms=100,
                 tx_queue_max=40, on_execute=None):
        self.machine = machine
        self.boot_counter = boot_counter & _U32
        self.firmware = firmware
        self.profile_id = profile_id
        self.gear = gear_tiles
        self.heartbeat_window_ms = heartbeat_window_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.on_execute = on_execute
        self.decoder = FrameDecoder()
        self.link = ReliableEndpoint(queue_max=tx_queue_max, max_retries=None,
                                     initial_rto_ms=100, min_rto_ms=15, max_rto_ms=1000)
        self.now = now_ms
        self.boot_ms = now_ms
        self.session = 0
        self.stop_reason = C.STOP_POWER_ON
        self.last_rx = None        # time of the last valid frame from the host
        self.host_silent = False
        self._last_hb = None
        self._last_no_session = None
        self._ctrl = []
        self.table = MotionTable(machine, self._on_stack, self._on_done)
        self.sensors = 0           # bit mask, see catalogue.sensor_bit
        self.events_dropped = 0
        self._drop_reported = 0
        self.machine.stop_all()

    # ------------------------------------------------------------ introspection
    def state(self):
        """STATE_SAFE_STOP, STATE_BUSY or STATE_IDLE."""
        if self.stop_reason != C.STOP_NONE:
            return C.STATE_SAFE_STOP
        return C.STATE_BUSY if self.table.motions else C.STATE_IDLE

    def tx_space(self):
        """Sensor events that can be queued now without being dropped."""
        return max(0, self.link.space() - _EVENT_RESERVE)

    # ------------------------------------------------------------------- input
    def feed(self, data, now_ms):
        """Feed bytes received from the host (any chunking). Never raises on bad input."""
        self.now = now_ms
        if not data:
            return
        for flags, seq, ack, mtype, payload in self.decoder.feed(data):
            self.last_rx = now_ms
            self.host_silent = False
            if mtype == C.T_HELLO:
                self._on_hello(payload)
                continue
            if self.session == 0:
                if flags & FLAG_RELIABLE and (self._last_no_session is None
                                              or now_ms - self._last_no_session >= 50):
                    self._last_no_session = now_ms
                    self._control(C.T_NO_SESSION, struct.pack("<I", self.boot_counter))
                continue
            link = self.link
            accept = link.space() >= _ACCEPT_MIN_SPACE
            sack = None
            if mtype == C.T_ACK and len(payload) == 2:
                sack = payload[0] | (payload[1] << 8)
            if (link.on_frame(flags, seq, ack, now_ms, accept, (mtype, payload), sack)
                    and flags & FLAG_RELIABLE):
                self._execute(mtype, payload)
            self._drain_ready()

    def _drain_ready(self):
        # commands held in the reorder buffer that are now in order, while there is room
        # for their replies (the same flow control as for a command arriving in order)
        link = self.link
        while link._rx and link.space() >= _ACCEPT_MIN_SPACE:
            msg = link.pop_ready()
            if msg is None:
                return
            self._execute(msg[0], msg[1])

    def _on_hello(self, payload):
        if len(payload) != 5:
            return
        proto, nonce = struct.unpack("<BI", payload)
        if nonce == 0:
            return
        # answer with the highest version both speak; SACK only towards version >= 2
        version = PROTOCOL_VERSION if proto >= PROTOCOL_VERSION else max(1, proto)
        if nonce != self.session:
            # A new host session: whatever the previous host started is stopped silently
            # (that host is gone and cannot receive the reports).
            if self.table.motions:
                self.table.forget()
            self.session = nonce
            self.link.reset()
        self.link.send_sack = version >= 2
        fw = self.firmware
        self._control(C.T_HELLO_ACK, struct.pack(
            C.FORMATS[C.T_HELLO_ACK], version, nonce, fw[0], fw[1], fw[2],
            self.profile_id, self.gear, self.boot_counter, self.heartbeat_window_ms,
            self.stop_reason))

    def sensor_changed(self, sensor, side, value, now_ms):
        """Report an input change (from the interrupt queue or the simulator).

        Args: sensor: SENSOR_* id; side: 0..3 (0xFF for lid and emergency stop);
            value: 0 or 1; now_ms: time of the change (the event's MCU timestamp).
        Returns True if the SENSOR event was queued for the host, False if the queue was
        full (the drop is counted and reported as FAULT(EVENTS_DROPPED)) or the value did
        not change.
        """
        bit = 1 << C.sensor_bit(sensor, side)
        old = 1 if self.sensors & bit else 0
        value = 1 if value else 0
        if old == value:
            return False
        self.sensors = (self.sensors | bit) if value else (self.sensors & ~bit)
        queued = self._event(C.T_SENSOR, struct.pack("<BBBI", sensor, side, value,
                                                      now_ms & _U32), False)
        if sensor == C.SENSOR_ESTOP and value:
            self._safe_stop(C.STOP_ESTOP, C.FAULT_ESTOP, 0)
            return queued
        self.table.on_sensor(sensor, side, value, now_ms)
        return queued

    # -------------------------------------------------------------------- tick
    def tick(self, now_ms):
        """Advance time: host-timeout safety rule, motion deadlines, heartbeat,
        retransmissions. Call at least every 10 ms."""
        self.now = now_ms
        if (self.last_rx is not None and not self.host_silent
                and now_ms - self.last_rx >= self.heartbeat_window_ms):
            self.host_silent = True
            self._safe_stop(C.STOP_HOST_TIMEOUT, C.FAULT_HOST_TIMEOUT, now_ms - self.last_rx)
        self.table.tick(now_ms)
        if self.session:
            self._drain_ready()
        self.link.check_timeout(now_ms)
        if self._last_hb is None or now_ms - self._last_hb >= self.heartbeat_interval_ms:
            self._last_hb = now_ms
            self._control(C.T_DEV_HEARTBEAT, struct.pack(
                C.FORMATS[C.T_DEV_HEARTBEAT], (now_ms - self.boot_ms) & _U32,
                self.boot_counter, self.state(), self.stop_reason, len(self.table),
                min(self.decoder.errors(), 0xFFFF), self.session))
        if self.events_dropped != self._drop_reported and self.link.space() > 0:
            n = self.events_dropped - self._drop_reported
            self._drop_reported = self.events_dropped
            self._event(C.T_FAULT, struct.pack("<BBHII", C.FAULT_EVENTS_DROPPED, C.SIDE_NONE,
                                               0, n & _U32, now_ms & _U32), True)

    # ------------------------------------------------------------------ output
    def poll(self, max_frames=1 << 30):
        """Bytes to send to the host now: pending control frames, then at most
        ``max_frames`` reliable frames (a firmware with a small UART FIFO asks for a few
        at a time, so that retransmission timers start when a frame really leaves);
        b"" when there is nothing to send."""
        out = []
        if self._ctrl:
            for mtype, payload in self._ctrl:
                flags, seq, ack = self.link.header_for_unreliable()
                out.append(encode_frame(flags, seq, ack, mtype, payload))
            self._ctrl = []
        if self.session:
            for f in self.link.outgoing(self.now, max_frames):
                out.append(encode_frame(*f))
            if self.link.ack_needed():
                flags, seq, ack = self.link.header_for_unreliable()
                out.append(encode_frame(flags, seq, ack, C.T_ACK, self.link.sack_payload()))
        return b"".join(out)

    # --------------------------------------------------------------- internals
    def _control(self, mtype, payload):
        if len(self._ctrl) >= _CTRL_MAX:
            self._ctrl.pop(0)
        self._ctrl.append((mtype, payload))

    def _event(self, mtype, payload, essential):
        if self.session == 0:
            return False
        if (essential and self.link.space() > 0) or self.link.space() > _EVENT_RESERVE:
            return self.link.send(mtype, payload)
        self.events_dropped += 1
        return False

    def _reply(self, cmd, code, detail=0):
        self.link.send(C.T_REPLY, struct.pack("<HBB", cmd, code, detail))

    def _safe_stop(self, reason, fault, detail):
        self.table.stop_all(C.OUTCOME_SAFE_STOP, self.now)
        if self.stop_reason == C.STOP_NONE or reason == C.STOP_ESTOP:
            self.stop_reason = reason
        self._event(C.T_FAULT, struct.pack("<BBHII", fault, C.SIDE_NONE, 0, detail & _U32,
                                           self.now & _U32), True)

    def _on_stack(self, m, now_ms):
        self._event(C.T_STACKS, struct.pack("<HBBI", m.cmd, m.side, m.progress & 0xFF,
                                             now_ms & _U32), True)

    def _on_done(self, m, outcome, elapsed_ms):
        self._event(C.T_MOTION_DONE, struct.pack("<HBBBII", m.cmd, m.mtype, m.side, outcome,
                                                  elapsed_ms & _U32, m.progress & _U32), True)
        if outcome == C.OUTCOME_DEADLINE:
            self._event(C.T_FAULT, struct.pack("<BBHII", C.FAULT_DEADLINE, m.side, m.cmd,
                                               m.progress & _U32, self.now & _U32), True)

    def _begin(self, cmd, mtype, motor, side, direction, target, deadline_ms):
        if self.stop_reason != C.STOP_NONE:
            self._reply(cmd, C.REPLY_SAFE_STOP, self.stop_reason)
            return
        if self.table.busy(motor, side):
            self._reply(cmd, C.REPLY_BUSY, 0)
            return
        # the reply goes first, so the host sees OK before the motion's first event
        self._reply(cmd, C.REPLY_OK, 0)
        self.table.begin(cmd, mtype, motor, side, direction, target, deadline_ms, self.now)

    def _execute(self, mtype, payload):
        fmt = C.FORMATS.get(mtype)
        cmd = payload[0] | (payload[1] << 8) if len(payload) >= 2 else 0
        if mtype not in C.COMMAND_TYPES or len(payload) != struct.calcsize(fmt):
            self._reply(cmd, C.REPLY_UNKNOWN, mtype)
            return
        if self.on_execute is not None:
            self.on_execute(cmd, mtype)
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
            if not 1 <= f[2] <= 40:
                return self._reply(cmd, bad, 2)
            if f[3] == 0:
                return self._reply(cmd, bad, 3)
            self._begin(cmd, mtype, C.MOTOR_FEEDER, f[1], 1, f[2], f[3])
        elif mtype == C.T_LIFT:
            side, up, deadline = f[1], f[2], f[3]
            if side not in C.SIDES:
                return self._reply(cmd, bad, 1)
            if up not in (0, 1):
                return self._reply(cmd, bad, 2)
            if deadline == 0:
                return self._reply(cmd, bad, 3)
            limit = C.SENSOR_LIFT_TOP if up else C.SENSOR_LIFT_BOTTOM
            if (self.stop_reason == C.STOP_NONE and not self.table.busy(C.MOTOR_LIFT, side)
                    and self.sensors & (1 << C.sensor_bit(limit, side))):
                self._reply(cmd, C.REPLY_OK, 0)   # already there: done without moving
                self._event(C.T_MOTION_DONE, struct.pack("<HBBBII", cmd, mtype, side,
                                                          C.OUTCOME_COMPLETED, 0, 0), True)
                return
            self._begin(cmd, mtype, C.MOTOR_LIFT, side, up, 0, deadline)
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
            if self.table.motions:
                return self._reply(cmd, C.REPLY_BUSY, 0)
            self.gear = f[1]
            self.machine.set_gear(f[1])
            self._reply(cmd, C.REPLY_OK, 0)
        elif mtype == C.T_GET_STATUS:
            mask = self.table.motors_mask()
            self.link.send(C.T_STATUS, struct.pack(
                C.FORMATS[C.T_STATUS], cmd, self.state(), self.stop_reason, self.gear, mask,
                self.sensors & _U32, (self.now - self.boot_ms) & _U32, len(self.table)))
        elif mtype == C.T_SELF_TEST:
            _, step, motor, side, jog, deadline = f
            if motor not in C.MOTORS:
                return self._reply(cmd, bad, 2)
            per_side = motor in (C.MOTOR_FEEDER, C.MOTOR_LIFT)
            if (per_side and side not in C.SIDES) or (not per_side and side != C.SIDE_NONE):
                return self._reply(cmd, bad, 3)
            if jog == 0 or deadline < jog:
                return self._reply(cmd, bad, 4)
            self._begin(cmd, mtype, motor, side, 1, jog, deadline)
        elif mtype == C.T_CLEAR_SAFE_STOP:
            if self.sensors & (1 << C.sensor_bit(C.SENSOR_ESTOP, C.SIDE_NONE)):
                return self._reply(cmd, C.REPLY_SAFE_STOP, C.STOP_ESTOP)
            self.stop_reason = C.STOP_NONE
            self._reply(cmd, C.REPLY_OK, 0)
