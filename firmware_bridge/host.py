"""The host (Raspberry Pi) side of the link.

Two layers, as in the rest of the project (functional core, imperative shell):

* :class:`HostProtocol` is pure: ``feed(bytes, now)``, ``tick(now)``, ``poll(now)`` and
  ``submit(command, now)``, time in seconds passed in. Tests run it against the device
  engine on a virtual clock.
* :class:`HostLink` wraps it with a serial port and one I/O thread, and gives the
  controller blocking calls (``connect``, ``call``) and an event queue.

Link life cycle: ``connect`` sends HELLO (a fresh random session nonce) until HELLO_ACK.
A session then lasts until the device resets (or another session replaces it): silence
never ends it, so that no command is lost or run twice and every outcome is learned.

* When no valid frame has come from the device for the (adaptive) peer timeout, the link
  reports :class:`LinkLost` and goes quiet (no heartbeat, no retransmission: a host that
  cannot hear the sensors must let the device's own window stop the motors). Pending
  commands stay pending: their outcome is unknown until the link returns. The first
  valid frame from the device in the same session restores the link (:class:`Connected`
  again) and the retransmissions deliver what was pending, exactly once.
* When the device's boot counter changes (a heartbeat, a NO_SESSION or a HELLO_ACK) the
  link reports :class:`McuReset` (the machine must be re-homed) and ends every pending
  command with a :class:`CommandFailed` that says what is known of it: ``executed``
  False (never sent: it did not run), True (the device acknowledged it, which it does
  only after running it; the reply was lost) or None (sent, not acknowledged: it may or
  may not have run before the reset). Then it handshakes again.
* The heartbeat periods and the peer timeout follow the line's measured byte error
  rate (:class:`LineEstimate`), so that noise alone practically never (below 1e-6 per
  window) starves the device's safety window or the host's peer timeout.
"""

from __future__ import annotations

import collections
import math
import random
import struct
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from . import catalogue as C
from .errors import (CommandRejected, FrameError, HandshakeError, LinkDown, LinkError,
                     LinkTimeout, PeerReset, TransportError)
from table_vocabulary import Command, CommandError, Reply, ReplyCode, Status, StopReason

from .codec import (DeviceHeartbeat, DeviceInfo, decode_event, device_heartbeat, device_info,
                    pack_command, stop_reason)
from .reliable import ReliableEndpoint
from .wire import (PROTOCOL_VERSION, PROTOCOL_VERSIONS, FLAG_RELIABLE, FrameDecoder,
                   encode_frame, frame_format, frame_formats)


# ------------------------------------------------------------ host-side events
@dataclass(frozen=True)
class Connected:
    """The handshake completed; ``info`` describes the device."""

    info: DeviceInfo


@dataclass(frozen=True)
class McuReset:
    """The microcontroller rebooted (its boot counter changed): re-home the machine."""

    previous_boot: int
    boot: int


@dataclass(frozen=True)
class LinkLost:
    """The device stopped answering; the link is handshaking again."""

    reason: str


@dataclass(frozen=True)
class CommandFailed:
    """A submitted command will get no reply; ``error`` says why and ``executed`` what is
    known of it: False = it did not run; True = the device ran it (its reply was lost);
    None = unknown (the device reset after it was sent and before acknowledging it)."""

    cmd_id: int
    error: LinkError
    executed: bool | None = None


@dataclass(frozen=True)
class LinkStats:
    """Counters of one link (cumulative since it was created)."""

    frames_received: int
    frames_rejected: int          # corrupt, truncated, oversized (all causes)
    crc_errors: int
    sent_new: int
    retransmitted: int
    duplicates_dropped: int
    out_of_order_dropped: int     # ahead of a gap and beyond the reorder buffer
    protocol_errors: int          # valid frames with an unknown type or bad payload
    srtt_ms: float | None
    rto_ms: float


_REPLY_TEXT = {
    ReplyCode.SAFE_STOP: "the device is in safe-stop (reason: {reason}); send ClearSafeStop first",
    ReplyCode.BUSY: "that motor already has a motion running",
    ReplyCode.BAD_ARGUMENT: "field #{detail} is out of range",
    ReplyCode.UNKNOWN: "the device does not know this command",
}


_FALSE_ALARM = 1e-6       # accepted chance that noise alone starves a timeout window
_HOST_HB_BYTES = 16       # HOST_HEARTBEAT on the wire (6-byte payload + 10)
_KEEPALIVE_BYTES = 10     # an empty ACK frame, the device's keepalive
_HELLO_RTT_BYTES = 15 + 33  # HELLO and HELLO_ACK on the wire


def frames_needed(loss: float, risk: float = _FALSE_ALARM) -> int:
    """How many frames, each lost independently with probability ``loss`` (0..1), must be
    sent so that all are lost with probability below ``risk``; at least 1, at most 1000."""
    if loss <= 1e-12:
        return 1
    if loss >= 0.999:
        return 1000
    return max(1, min(1000, math.ceil(math.log(risk) / math.log(loss))))


class LineEstimate:
    """The line's byte error rate, estimated from the frame decoder's counters.

    Every ``period`` s (or once at least 20 frames or chunks were seen) the share ``q`` of
    rejected chunks among all chunks gives a byte error rate ``e = 1 - (1 - q) ** (1 /
    L)``, ``L`` the mean length of the frames accepted (bytes on the wire). The estimate
    ``rate`` rises at once to a worse measurement and decays to a better one with a
    weight of 0.3, so that a burst of noise is believed at once and forgotten slowly.
    An inserted zero byte cuts a frame into two rejected chunks, so ``q`` errs on the
    high side: the timeouts derived from it err on the safe side.
    """

    def __init__(self, period: float = 0.25) -> None:
        self.period = period
        self.rate = 0.0          # byte error rate, 0..1
        self._t: float | None = None
        self._acc = self._rej = self._bytes = 0

    def update(self, decoder: FrameDecoder, now: float) -> None:
        """Take a measurement from ``decoder`` (its cumulative counters); ``now`` in s."""
        if self._t is None:
            self._t, self._acc, self._rej = now, decoder.frames, decoder.errors()
            self._bytes = decoder.frame_bytes
            return
        acc = decoder.frames - self._acc
        rej = decoder.errors() - self._rej
        if now - self._t < self.period or acc + rej < 20:
            return
        length = (decoder.frame_bytes - self._bytes) / acc if acc else 14.0
        q = rej / (acc + rej)
        e = 1.0 - (1.0 - q) ** (1.0 / max(1.0, length)) if q < 1.0 else 0.5
        self.rate = e if e > self.rate else self.rate + 0.3 * (e - self.rate)
        self._t, self._acc, self._rej = now, decoder.frames, decoder.errors()
        self._bytes = decoder.frame_bytes

    def loss(self, nbytes: int) -> float:
        """Probability that a frame of ``nbytes`` bytes on the wire is lost."""
        return 1.0 - (1.0 - self.rate) ** nbytes


class HostProtocol:
    """Pure host-side protocol engine (no threads, no I/O). Time ``now`` in seconds.

    Args:
        window: reliable frames in flight (1..127).
        heartbeat_interval: longest period of HOST_HEARTBEAT frames (s); shorter on a
            noisy line (:meth:`heartbeat_period`), and only sent when nothing else was.
        peer_timeout: shortest silence from the device after which the link is reported
            lost (s); longer on a noisy line (:meth:`peer_timeout_now`).
        hello_interval: longest HELLO retransmission period during the handshake (s).
        max_retries: retransmissions of one frame before the link is lost; None (the
            default): never, the link is lost only by silence (a frame that needs many
            retransmissions on a noisy line is not a dead device).
        baudrate: the line's rate (bits/s), to start retransmission timers when a frame
            has left (None: when it is written).
        rng: random source for session nonces (seed it in tests).
    """

    def __init__(self, *, window: int = 16, heartbeat_interval: float = 0.1,
                 peer_timeout: float = 0.5, hello_interval: float = 0.1,
                 max_retries: int | None = None, min_rto: float = 0.015,
                 baudrate: int | None = 115200,
                 rng: random.Random | None = None) -> None:
        self.link = ReliableEndpoint(window=window, queue_max=4 * window,
                                     initial_rto_ms=100.0, min_rto_ms=min_rto * 1000,
                                     max_rto_ms=1000.0, max_retries=max_retries,
                                     byte_ms=10000.0 / baudrate if baudrate else None)
        self.decoder = FrameDecoder()
        self.line = LineEstimate()
        self.heartbeat_interval = heartbeat_interval
        self.peer_timeout = peer_timeout
        self.hello_interval = hello_interval
        self._rng = rng or random.SystemRandom()
        self.state = "disconnected"     # disconnected | handshake | connected
        self.info: DeviceInfo | None = None
        self.boot: int | None = None
        self.nonce = 0
        self.last_heartbeat: DeviceHeartbeat | None = None
        self.protocol_errors = 0
        self._last_rx: float | None = None
        self._last_hello = -1e18
        self._last_hb_tx = -1e18
        self._last_tx = -1e18
        self._ctrl: list[tuple[int, bytes]] = []
        self._held: list[Any] = []   # events for the next tick (from connect)
        self._next_cmd = 1
        self.pending: dict[int, Command] = {}
        #: (cmd_id, (type, payload)) of the commands not yet given to the reliable layer
        self._unsent: collections.deque[tuple[int, tuple[int, bytes]]] = collections.deque()

    # ------------------------------------------------------- adaptive timing
    def heartbeat_period(self) -> float:
        """Longest gap (s) between two frames to the device: enough frames reach it within
        its heartbeat window (from the handshake, 500 ms by default) that noise alone
        starves it with a probability below 1e-6; at most ``heartbeat_interval``, at
        least 5 ms."""
        window = (self.info.heartbeat_window_ms if self.info else 500) / 1000.0
        n = frames_needed(self.line.loss(_HOST_HB_BYTES))
        return min(self.heartbeat_interval, max(0.005, 0.8 * window / n))

    def device_keepalive_ms(self) -> int:
        """Period (ms, 10..100) the device is asked for its keepalive frames (an empty ACK
        when it has sent nothing else), sent in HOST_HEARTBEAT."""
        n = frames_needed(self.line.loss(_KEEPALIVE_BYTES))
        return int(min(100, max(10, 0.8 * self.peer_timeout * 1000 / n)))

    def peer_timeout_now(self) -> float:
        """Silence (s) after which the link is reported lost: ``peer_timeout``, or longer
        when even the keepalives at the shortest period could all be lost (at most 10 s)."""
        n = frames_needed(self.line.loss(_KEEPALIVE_BYTES))
        period = self.device_keepalive_ms() / 1000.0
        return min(10.0, max(self.peer_timeout, (n + 1) * period / 0.8))

    def hello_period(self) -> float:
        """HELLO period (s) during the handshake: ``hello_interval`` on a clean line,
        shorter (down to 10 ms) when a HELLO and its answer are likely to be lost."""
        ok = 1.0 - self.line.loss(_HELLO_RTT_BYTES)
        return max(0.01, min(self.hello_interval, self.hello_interval * ok))

    # ---------------------------------------------------------------- control
    def connect(self, now: float) -> None:
        """Start (or restart) the handshake with a fresh session nonce. Commands still
        pending from a previous session end with CommandFailed (LinkDown), returned by
        the next :meth:`tick`."""
        if self.pending or self._unsent:
            self._end_session(LinkDown("a new session was started"), self._held)
        self.link.reset()
        self.decoder.formats = (1, 2)
        self.nonce = self._rng.randrange(1, 1 << 32)
        self.state = "handshake"
        self._last_hello = -1e18
        self._last_rx = now

    def submit(self, command: Command, now: float) -> int:
        """Queue ``command``; returns its cmd_id (1..65535, wrapping). The reply arrives
        later as a :class:`Reply` (or :class:`Status`) event with that id, or a
        :class:`CommandFailed` if the device resets first. Raises LinkDown when not
        connected (handshaking, or the link is lost), FrameError for something that is not
        a goal command (packed here, not later on the I/O thread)."""
        if self.state != "connected":
            raise LinkDown(f"cannot send {type(command).__name__}: link is {self.state}")
        cmd_id = self._next_cmd
        try:
            message = pack_command(cmd_id, command)
        except CommandError as exc:
            raise FrameError(str(exc)) from None
        self._next_cmd = cmd_id % 0xFFFF + 1
        self.pending[cmd_id] = command
        self._unsent.append((cmd_id, message))
        self._pump()
        return cmd_id

    def _pump(self) -> None:
        while self._unsent and self.link.space() > 0:
            self.link.send(*self._unsent.popleft()[1])

    # ------------------------------------------------------------------ input
    def feed(self, data: bytes, now: float) -> list[Any]:
        """Bytes from the device -> list of events (Reply, Status, SensorChanged,
        StacksCounted, MotionDone, Fault, DeviceHeartbeat, Connected, McuReset,
        LinkLost, CommandFailed). Never raises on bad input."""
        events: list[Any] = []
        if not data:
            return events
        now_ms = now * 1000.0
        for fmt, flags, seq, ack, mtype, payload in self.decoder.feed_frames(data):
            self._last_rx = now
            if mtype == C.T_HELLO_ACK:
                self._on_hello_ack(payload, events)
                continue
            if mtype == C.T_NO_SESSION:
                if len(payload) == 4 and self.state in ("connected", "lost"):
                    (boot,) = struct.unpack(C.FORMATS[C.T_NO_SESSION], payload)
                    if not self._check_boot(boot, events, now):
                        self._restart(LinkDown("the device lost the session; reconnecting"),
                                      events, now)
                continue
            if mtype == C.T_DEV_HEARTBEAT and not self._on_heartbeat(payload, events, now):
                continue
            if fmt != self._tx_format():
                continue  # a control frame of the handshake's format within a session
            if self.state == "lost":
                # the first valid frame of our session: the link is back
                self.state = "connected"
                if self.info is not None:
                    events.append(Connected(self.info))
            if self.state != "connected":
                continue
            sack = None
            if mtype == C.T_ACK and len(payload) in (2, 4):
                sack = int.from_bytes(payload, "little")
            link = self.link
            if (link.on_frame(flags, seq, ack, now_ms, True, (mtype, payload), sack)
                    and flags & FLAG_RELIABLE):
                self._deliver(mtype, payload, events)
            while link._rx:
                msg = link.pop_ready()
                if msg is None:
                    break
                self._deliver(msg[0], msg[1], events)
        self._pump()
        return events

    def _deliver(self, mtype: int, payload: bytes, events: list) -> None:
        ev = decode_event(mtype, payload)
        if ev is None:
            self.protocol_errors += 1
            return
        if isinstance(ev, (Reply, Status)):
            self.pending.pop(ev.cmd_id, None)
        events.append(ev)

    def _on_hello_ack(self, payload: bytes, events: list) -> None:
        if len(payload) != struct.calcsize(C.FORMATS[C.T_HELLO_ACK]):
            self.protocol_errors += 1
            return
        f = struct.unpack(C.FORMATS[C.T_HELLO_ACK], payload)
        if self.state != "handshake" or f[1] != self.nonce:
            return  # a late answer to an earlier HELLO
        if f[0] not in PROTOCOL_VERSIONS:
            self.state = "disconnected"
            events.append(LinkLost(str(HandshakeError(
                f"device speaks protocol version {f[0]}, this host speaks "
                f"{PROTOCOL_VERSION}"))))
            return
        info = device_info(f)
        if self.boot is not None and info.boot_counter != self.boot:
            events.append(McuReset(self.boot, info.boot_counter))
        self.boot = info.boot_counter
        self.info = info
        self.link.reset()
        self.link.send_sack = f[0] >= 2   # a version-1 device ignores it anyway
        # version 3: a 32-frame reorder buffer, named by a 32-bit SACK bitmap
        self.link.sack_bytes = 4 if f[0] >= 3 else 2
        self.link.rx_window = 32 if f[0] >= 3 else 16
        self.decoder.formats = frame_formats(f[0])
        self.state = "connected"
        events.append(Connected(info))

    def _on_heartbeat(self, payload: bytes, events: list, now: float) -> bool:
        """Handle a DEV_HEARTBEAT; True when it belongs to the current session (or no
        session is up), False when it ended the session."""
        if len(payload) != struct.calcsize(C.FORMATS[C.T_DEV_HEARTBEAT]):
            self.protocol_errors += 1
            return False
        f = struct.unpack(C.FORMATS[C.T_DEV_HEARTBEAT], payload)
        hb = device_heartbeat(f)
        self.last_heartbeat = hb
        events.append(hb)
        if self.state in ("connected", "lost"):
            if self._check_boot(hb.boot_counter, events, now):
                return False
            if hb.session != self.nonce:
                self._restart(LinkDown(
                    "the device answered for another session; reconnecting"), events, now)
                return False
        return True

    def _check_boot(self, boot: int, events: list, now: float) -> bool:
        if self.boot is not None and boot != self.boot:
            old = self.boot
            self.boot = boot
            events.append(McuReset(old, boot))
            self._restart(PeerReset(
                f"the microcontroller rebooted (boot counter {old} -> {boot}); "
                "re-home the machine"), events, now)
            return True
        return False

    def _end_session(self, error: LinkError, events: list) -> None:
        """End every pending command with a CommandFailed saying what is known of it:
        never sent -> did not run; acknowledged by the device (it acknowledges a command
        only after running it) -> ran, reply lost; sent, unacknowledged -> unknown."""
        in_flight, queued = self.link.unacknowledged()
        sent_unacked = {p[0] | (p[1] << 8) for _, p in in_flight if len(p) >= 2}
        unsent = {p[0] | (p[1] << 8) for _, p in queued if len(p) >= 2}
        unsent.update(cmd_id for cmd_id, _ in self._unsent)
        self.link.drop_unsent()
        self._unsent.clear()
        for cmd_id in list(self.pending):
            if cmd_id in unsent:
                executed, what = False, "it was not sent, so it did not run"
            elif cmd_id in sent_unacked:
                executed, what = None, "it was sent and not acknowledged: it may have run"
            else:
                executed, what = True, ("the device acknowledged it, so it ran; "
                                        "its reply was lost")
            events.append(CommandFailed(cmd_id, type(error)(f"{error} ({what})"), executed))
        self.pending.clear()

    def _restart(self, error: LinkError, events: list, now: float) -> None:
        self._end_session(error, events)
        self.connect(now)

    # ------------------------------------------------------------------- time
    def tick(self, now: float) -> list[Any]:
        """Advance time: retransmission timer, peer timeout, heartbeat and HELLO timers."""
        events: list[Any] = self._held
        self._held = []
        self.line.update(self.decoder, now)
        if self.state == "connected":
            failure = self.link.check_timeout(now * 1000.0)
            timeout = self.peer_timeout_now()
            silent = self._last_rx is not None and now - self._last_rx >= timeout
            if failure or silent:
                reason = failure or (f"no valid frame from the device for "
                                     f"{(now - self._last_rx) * 1000:.0f} ms")
                # the session stays: pending commands wait for the link to return
                self.state = "lost"
                events.append(LinkLost(reason))
            elif now - max(self._last_hb_tx, self._last_tx) >= self.heartbeat_period():
                self._last_hb_tx = now
                self._ctrl.append((C.T_HOST_HEARTBEAT, struct.pack(
                    C.FORMATS[C.T_HOST_HEARTBEAT], int(now * 1000) & 0xFFFFFFFF,
                    self.device_keepalive_ms())))
        if self.state == "handshake" and now - self._last_hello >= self.hello_period():
            self._last_hello = now
            self._ctrl.append((C.T_HELLO, struct.pack(C.FORMATS[C.T_HELLO], PROTOCOL_VERSION, self.nonce)))
        return events

    def poll(self, now: float) -> bytes:
        """Bytes to write to the device now (b"" if none). Nothing while the link is
        lost: the device's own window then stops the motors."""
        out = []
        fmt = self._tx_format()
        now_ms = now * 1000.0
        link = self.link
        for mtype, payload in self._ctrl:
            flags, seq, ack = link.header_for_unreliable()
            out.append(encode_frame(flags, seq, ack, mtype, payload,
                                    1 if mtype == C.T_HELLO else fmt))
            link.wrote(len(out[-1]), now_ms)
        self._ctrl = []
        if self.state == "connected":
            self._pump()
            for f in link.outgoing(now_ms):
                out.append(encode_frame(*f, fmt))
            if link.ack_needed():
                flags, seq, ack = link.header_for_unreliable()
                out.append(encode_frame(flags, seq, ack, C.T_ACK, link.sack_payload(), fmt))
                link.wrote(len(out[-1]), now_ms)
        if out:
            self._last_tx = now
        return b"".join(out)

    def _tx_format(self) -> int:
        return frame_format(self.info.protocol_version) if (
            self.info is not None and self.state in ("connected", "lost")) else 1

    def stats(self) -> LinkStats:
        d, l = self.decoder, self.link
        return LinkStats(d.frames, d.errors(), d.crc_errors, l.sent_new, l.retransmitted,
                         l.duplicates, l.out_of_order - l.reordered, self.protocol_errors, l.srtt, l.rto)


# =========================================================== threaded shell
class PendingCommand:
    """Handle of a submitted command; ``result(timeout)`` waits for its reply."""

    def __init__(self, cmd_id: int, command: Command) -> None:
        self.cmd_id = cmd_id
        self.command = command
        self._done = threading.Event()
        self._value: Reply | Status | None = None
        self._error: LinkError | None = None
        #: after a failure: False = did not run, True = ran (reply lost), None = unknown
        self.executed: bool | None = None

    def _set(self, value: Any = None, error: LinkError | None = None,
             executed: bool | None = None) -> None:
        self._value, self._error = value, error
        self.executed = True if value is not None else executed
        self._done.set()

    def done(self) -> bool:
        return self._done.is_set()

    def result(self, timeout: float | None = None) -> Reply | Status:
        """Wait for the reply (seconds). Returns the :class:`Reply` (code OK) or the
        :class:`Status`. Raises LinkTimeout (no reply in time: the command is still
        pending and may run later; the link delivers its outcome when it comes),
        CommandRejected (device refused it), PeerReset or LinkDown (the session ended;
        :attr:`executed` then says whether it ran: True, False or None = unknown)."""
        if not self._done.wait(timeout):
            raise LinkTimeout(f"no reply to {self.command!r} (command {self.cmd_id}) within "
                              f"{timeout} s")
        if self._error is not None:
            raise self._error
        v = self._value
        if isinstance(v, Reply) and v.code != ReplyCode.OK:
            text = _REPLY_TEXT.get(v.code, "refused (code {code})")
            reason = stop_reason(v.detail)
            reason = reason.text if isinstance(reason, StopReason) else reason
            raise CommandRejected(
                f"device refused {type(self.command).__name__} (command {self.cmd_id}): "
                + text.format(reason=reason, detail=v.detail, code=int(v.code)),
                v.code, self.cmd_id)
        assert v is not None
        return v


class HostLink:
    """The link as the controller uses it: a serial port, one I/O thread, blocking calls.

    Args:
        port: an open pyserial-like port (``read``, ``write``, ``in_waiting``); its read
            timeout should be short (the I/O thread sets it to ``tick_interval``).
        clock: monotonic clock in seconds (injected).
        tick_interval: I/O thread's maximum sleep (s).
        event_queue_max: events kept for ``get_event`` (oldest dropped beyond that).
        **protocol: passed to :class:`HostProtocol`.

    Usage::

        with HostLink.open("/dev/serial0") as link:
            info = link.connect()
            link.call(ClearSafeStop())
            link.call(FeedStacks(Side.E, 17, deadline_ms=8000))
            ev = link.get_event(timeout=1.0)
    """

    def __init__(self, port: Any, *, clock: Callable[[], float] = time.monotonic,
                 tick_interval: float = 0.002, event_queue_max: int = 10000,
                 **protocol: Any) -> None:
        self.port = port
        self.clock = clock
        self.protocol = HostProtocol(**protocol)
        self.tick_interval = tick_interval
        self._lock = threading.RLock()
        self._events: collections.deque[Any] = collections.deque(maxlen=event_queue_max)
        self._event_cv = threading.Condition()
        self._calls: dict[int, PendingCommand] = {}
        self._listeners: list[Callable[[Any], None]] = []
        self._connected = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.io_error: BaseException | None = None
        try:
            port.timeout = tick_interval
        except Exception:  # some pyserial-like objects have a fixed timeout
            pass

    @classmethod
    def open(cls, url: str, baudrate: int = 115200, **kwargs: Any) -> "HostLink":
        """Open a device path (``/dev/serial0``, ``/dev/ttyAMA0``, ``/dev/serial/by-id/...``)
        or a pyserial URL (``loop://``, ``socket://host:port``) and start the I/O thread.
        Raises TransportError if the port cannot be opened."""
        from .transport import open_port

        link = cls(open_port(url, baudrate), **kwargs)
        link.start()
        return link

    def start(self) -> None:
        """Start the I/O thread (idempotent)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="mjtable-link", daemon=True)
            self._thread.start()

    def close(self) -> None:
        """Stop the I/O thread and close the port; pending commands fail with LinkDown."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        with self._lock:
            for call in self._calls.values():
                call._set(error=LinkDown("link closed"))
            self._calls.clear()
        try:
            self.port.close()
        except Exception:
            pass

    def __enter__(self) -> "HostLink":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------- public API
    def connect(self, timeout: float = 2.0) -> DeviceInfo:
        """Handshake; returns the :class:`DeviceInfo`. Raises LinkTimeout if the device
        does not answer within ``timeout`` seconds, HandshakeError on a version mismatch."""
        self.begin_connect()
        if not self._connected.wait(timeout):
            raise LinkTimeout(f"no handshake answer from the device within {timeout} s "
                              "(check the cable, the port and that the firmware runs)")
        info = self.protocol.info
        if info is None or info.protocol_version not in PROTOCOL_VERSIONS:
            raise HandshakeError("handshake failed: protocol version mismatch")
        return info

    def begin_connect(self) -> None:
        """Start the handshake and return at once: the I/O thread sends HELLO every
        ``hello_interval`` until the device answers, then queues :class:`Connected`."""
        self.start()
        with self._lock:
            self._connected.clear()
            self.protocol.connect(self.clock())
            self._service(b"")

    @property
    def device_info(self) -> DeviceInfo | None:
        return self.protocol.info

    @property
    def connected(self) -> bool:
        return self.protocol.state == "connected"

    def submit(self, command: Command) -> PendingCommand:
        """Send ``command`` without waiting; returns a :class:`PendingCommand`.
        Raises LinkDown if the link is not connected."""
        self._check_io()
        with self._lock:
            cmd_id = self.protocol.submit(command, self.clock())
            call = PendingCommand(cmd_id, command)
            self._calls[cmd_id] = call
            self._write(self.protocol.poll(self.clock()))
        return call

    def call(self, command: Command, timeout: float = 2.0) -> Reply | Status:
        """Send ``command`` and wait up to ``timeout`` s for its reply (see
        :meth:`PendingCommand.result` for the errors raised)."""
        return self.submit(command).result(timeout)

    def get_event(self, timeout: float | None = None) -> Any:
        """Next device event (SensorChanged, StacksCounted, MotionDone, Fault,
        McuReset, LinkLost, Connected; heartbeats are not queued), or None after
        ``timeout`` seconds."""
        with self._event_cv:
            if not self._events:
                self._event_cv.wait(timeout)
            return self._events.popleft() if self._events else None

    def add_listener(self, fn: Callable[[Any], None]) -> None:
        """Call ``fn(event)`` from the I/O thread for every event (keep it short)."""
        self._listeners.append(fn)

    def stats(self) -> LinkStats:
        with self._lock:
            return self.protocol.stats()

    # -------------------------------------------------------------- internals
    def _check_io(self) -> None:
        if self.io_error is not None:
            raise TransportError(f"serial port failed: {self.io_error}")

    def _write(self, data: bytes) -> None:
        if data:
            self.port.write(data)

    def _service(self, data: bytes) -> None:
        now = self.clock()
        events = self.protocol.feed(data, now) if data else []
        events += self.protocol.tick(now)
        self._write(self.protocol.poll(now))
        for ev in events:
            self._dispatch(ev)

    def _dispatch(self, ev: Any) -> None:
        if isinstance(ev, (Reply, Status)):
            call = self._calls.pop(ev.cmd_id, None)
            if call is not None:
                call._set(ev)
            return
        if isinstance(ev, CommandFailed):
            call = self._calls.pop(ev.cmd_id, None)
            if call is not None:
                call._set(error=ev.error, executed=ev.executed)
            return
        if isinstance(ev, Connected):
            self._connected.set()
        for fn in self._listeners:
            fn(ev)
        if isinstance(ev, DeviceHeartbeat):
            return
        with self._event_cv:
            self._events.append(ev)
            self._event_cv.notify_all()

    def _run(self) -> None:
        port = self.port
        while not self._stop.is_set():
            try:
                data = port.read(port.in_waiting or 1)
            except Exception as exc:  # port unplugged: report, keep the thread quiet
                self.io_error = exc
                with self._lock:
                    for call in self._calls.values():
                        call._set(error=TransportError(f"serial port failed: {exc}"))
                    self._calls.clear()
                return
            with self._lock:
                try:
                    self._service(data)
                except Exception as exc:
                    self.io_error = exc
                    return
