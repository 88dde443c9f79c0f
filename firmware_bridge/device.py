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
from .executor import CommandCore
from .reliable import ReliableEndpoint
from .wire import (PROTOCOL_VERSION, FLAG_RELIABLE, FrameDecoder, encode_frame, frame_format,
                   frame_formats)

_U32 = 0xFFFFFFFF
_EVENT_RESERVE = 16     # queue slots kept free for replies, motion-done and faults: all
                        # 12 motions ending at once, their faults and a reply
_ACCEPT_MIN_SPACE = 4   # below this, new commands are not acknowledged (flow control)
_CTRL_MAX = 4           # pending control frames kept (bounded)
_KEEPALIVE_MIN_MS = 10  # shortest keepalive period a host may ask for (HOST_HEARTBEAT)
TX_LOOKAHEAD_MS = 6     # reliable frames are handed to the UART while the line has less
                        # than this left to send (about 4 telemetry frames)


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
        baudrate: the UART's rate (bits/s): retransmission timers start when a frame
            has left the line (None: when it is handed to the UART), and :meth:`poll`
            hands out a reliable frame only while the line has less than
            ``tx_lookahead_ms`` of bytes left to send.
        tx_lookahead_ms: see ``baudrate`` (ms). A deep TX ring filled at once makes a
            retransmission or a reply wait behind it: the firmware's 512-byte ring full
            of telemetry is 44 ms a round. It must exceed the longest pass of the main
            loop, or the line idles. In virtual time (1 ms passes, a UART that drains
            by itself; mean of 5 seeds) 6 ms gives 0.82 / 0.34 of line rate at 1 % / 5 %
            noise, 20 ms 0.80 / 0.32, no limit 0.79 / 0.31. Through the firmware under
            the MicroPython unix port (link_bench, 300 commands, runs interleaved at
            load 8-9), 6 ms against no limit: 3 % 0.49, 0.45 against 0.37, 0.39; 5 %
            0.29, 0.23 against 0.29, 0.30 (that bench swings with the PC's load: at
            load 13-15, 3 % gave 0.18 with 6 ms).
    """

    def __init__(self, machine, boot_counter, now_ms=0, firmware=(1, 0, 0), profile_id=1,
                 gear_tiles=136, heartbeat_window_ms=500, heartbeat_interval_ms=100,
                 tx_queue_max=56, on_execute=None, baudrate=115200,
                 tx_lookahead_ms=TX_LOOKAHEAD_MS):
        self.machine = machine
        self.boot_counter = boot_counter & _U32
        self.firmware = firmware
        self.profile_id = profile_id
        self.heartbeat_window_ms = heartbeat_window_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.on_execute = on_execute
        self.decoder = FrameDecoder()
        self.link = ReliableEndpoint(queue_max=tx_queue_max, max_retries=None,
                                     initial_rto_ms=100, min_rto_ms=15, max_rto_ms=1000,
                                     byte_ms=10000 / baudrate if baudrate else None)
        self.tx_lookahead_ms = tx_lookahead_ms
        self.now = now_ms
        self.boot_ms = now_ms
        self.session = 0
        self.version = 0           # protocol version of the session
        self.keepalive_ms = heartbeat_interval_ms  # asked by the host (HOST_HEARTBEAT)
        self._last_tx = now_ms
        self.last_rx = None        # time of the last valid frame from the host
        self.host_silent = False
        self._last_hb = None
        self._last_no_session = None
        self._ctrl = []
        self.events_dropped = 0
        self._drop_reported = 0
        #: the command rules (shared with the Pi's own backends: hardware.local)
        self.core = CommandCore(machine, self._event, now_ms, gear_tiles)

    @property
    def stop_reason(self):
        return self.core.stop_reason

    @property
    def table(self):
        return self.core.table

    # ------------------------------------------------------------ introspection
    def state(self):
        """STATE_SAFE_STOP, STATE_BUSY or STATE_IDLE."""
        return self.core.state()

    def tx_space(self):
        """Sensor events that can be queued now without being dropped."""
        return max(0, self.link.space() - _EVENT_RESERVE)

    # ------------------------------------------------------------------- input
    def feed(self, data, now_ms):
        """Feed bytes received from the host (any chunking). Never raises on bad input."""
        self.now = now_ms
        if not data:
            return
        for fmt, flags, seq, ack, mtype, payload in self.decoder.feed_frames(data):
            self.last_rx = now_ms
            self.host_silent = False
            if mtype == C.T_HELLO:
                self._on_hello(payload)
                continue
            if self.session == 0:
                if flags & FLAG_RELIABLE and (self._last_no_session is None
                                              or now_ms - self._last_no_session >= 50):
                    self._last_no_session = now_ms
                    self._control(C.T_NO_SESSION, struct.pack(C.FORMATS[C.T_NO_SESSION], self.boot_counter))
                continue
            if fmt != frame_format(self.version):
                continue  # a control frame of the old format within a session
            if mtype == C.T_HOST_HEARTBEAT and len(payload) >= 6:
                # version 3: the keepalive period the host asks for (0 = the default)
                ask = payload[4] | (payload[5] << 8)
                self.keepalive_ms = (self.heartbeat_interval_ms if ask == 0 else
                                     max(_KEEPALIVE_MIN_MS,
                                         min(self.heartbeat_interval_ms, ask)))
            link = self.link
            accept = link.space() >= _ACCEPT_MIN_SPACE
            sack = None
            if mtype == C.T_ACK and len(payload) in (2, 4):
                sack = int.from_bytes(payload, "little")
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
        proto, nonce = struct.unpack(C.FORMATS[C.T_HELLO], payload)
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
            self.keepalive_ms = self.heartbeat_interval_ms
        self.version = version
        self.decoder.formats = frame_formats(version)
        self.link.send_sack = version >= 2
        # version 3: the host holds 32 frames out of order (32-bit SACK bitmap), so up to
        # 32 may be in flight; the device's own reorder buffer stays 16 frames
        self.link.sack_bytes = 4 if version >= 3 else 2
        self.link.window = 32 if version >= 3 else 16
        fw = self.firmware
        self._control(C.T_HELLO_ACK, struct.pack(
            C.FORMATS[C.T_HELLO_ACK], version, nonce, fw[0], fw[1], fw[2],
            self.profile_id, self.core.gear, self.boot_counter, self.heartbeat_window_ms,
            self.stop_reason))

    def sensor_changed(self, sensor, side, value, now_ms):
        """Report an input change (from the interrupt queue or the simulator).

        Args: sensor: SENSOR_* id; side: 0..3 (0xFF for sideless sensors);
            value: 0 or 1; now_ms: time of the change (the event's MCU timestamp).
        Returns True if the SENSOR event was queued for the host, False if the queue was
        full (the drop is counted and reported as FAULT(EVENTS_DROPPED)) or the value did
        not change.
        """
        return self.core.sensor_changed(sensor, side, value, now_ms)

    # -------------------------------------------------------------------- tick
    def tick(self, now_ms):
        """Advance time: host-timeout safety rule, motion deadlines, heartbeat,
        retransmissions. Call at least every 10 ms."""
        self.now = now_ms
        if (self.last_rx is not None and not self.host_silent
                and now_ms - self.last_rx >= self.heartbeat_window_ms):
            self.host_silent = True
            self._safe_stop(C.STOP_HOST_TIMEOUT, C.FAULT_HOST_TIMEOUT, now_ms - self.last_rx)
        self.core.tick(now_ms)
        if self.session:
            self._drain_ready()
        self.link.check_timeout(now_ms)
        if self.session and now_ms - self._last_tx >= self.keepalive_ms:
            # keepalive: an empty ACK frame when nothing else was sent for the period the
            # host asked for (short on a noisy line, so that its peer timeout holds)
            self.link._ack_due = True
        if self._last_hb is None or now_ms - self._last_hb >= self.heartbeat_interval_ms:
            self._last_hb = now_ms
            self._control(C.T_DEV_HEARTBEAT, struct.pack(
                C.FORMATS[C.T_DEV_HEARTBEAT], (now_ms - self.boot_ms) & _U32,
                self.boot_counter, self.state(), self.stop_reason, len(self.table),
                min(self.decoder.errors(), 0xFFFF), self.session))
        if self.events_dropped != self._drop_reported and self.link.space() > 0:
            n = self.events_dropped - self._drop_reported
            self._drop_reported = self.events_dropped
            self._event(C.T_FAULT, struct.pack(C.FORMATS[C.T_FAULT], C.FAULT_EVENTS_DROPPED, C.SIDE_NONE,
                                               0, n & _U32, now_ms & _U32), True)

    # ------------------------------------------------------------------ output
    def poll(self, max_frames=1 << 30):
        """Bytes to send to the host now: pending control frames, then at most
        ``max_frames`` reliable frames, and (with a ``baudrate``) only while the line has
        less than ``tx_lookahead_ms`` left to send, so that a retransmission, a reply or
        an acknowledgement never waits behind a deep TX ring; b"" when there is nothing
        to send."""
        out = []
        fmt = frame_format(self.version) if self.session else 1
        if self._ctrl:
            for mtype, payload in self._ctrl:
                flags, seq, ack = self.link.header_for_unreliable()
                # the handshake answer and NO_SESSION stay in format 1: any host reads them
                out.append(encode_frame(flags, seq, ack, mtype, payload,
                                        1 if mtype in (C.T_HELLO_ACK, C.T_NO_SESSION)
                                        else fmt))
                self.link.wrote(len(out[-1]), self.now)
            self._ctrl = []
        if self.session:
            link = self.link
            while max_frames > 0 and link.backlog_ms(self.now) < self.tx_lookahead_ms:
                frames = link.outgoing(self.now, 1)
                if not frames:
                    break
                out.append(encode_frame(*frames[0], fmt))
                max_frames -= 1
            if self.link.ack_needed():
                flags, seq, ack = self.link.header_for_unreliable()
                out.append(encode_frame(flags, seq, ack, C.T_ACK, self.link.sack_payload(),
                                        fmt))
                self.link.wrote(len(out[-1]), self.now)
        if out:
            self._last_tx = self.now
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

    def _safe_stop(self, reason, fault, detail):
        self.core.safe_stop(reason, fault, detail)

    def _execute(self, mtype, payload):
        fmt = C.FORMATS.get(mtype)
        if (self.on_execute is not None and mtype in C.COMMAND_TYPES
                and len(payload) == struct.calcsize(fmt)):
            self.on_execute(payload[0] | (payload[1] << 8), mtype)
        self.core.execute(mtype, payload, self.now)
