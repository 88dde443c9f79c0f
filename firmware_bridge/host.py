"""The host (Raspberry Pi) side of the link.

Two layers, as in the rest of the project (functional core, imperative shell):

* :class:`HostProtocol` is pure: ``feed(bytes, now)``, ``tick(now)``, ``poll(now)`` and
  ``submit(command, now)``, time in seconds passed in. Tests run it against the device
  engine on a virtual clock.
* :class:`HostLink` wraps it with a serial port and one I/O thread, and gives the
  controller blocking calls (``connect``, ``call``) and an event queue.

Link life cycle: ``connect`` sends HELLO (a fresh random session nonce) every
``hello_interval`` until HELLO_ACK. When the peer stops answering (retransmissions
exhausted, or no frame for ``peer_timeout``) the link reports :class:`LinkLost`, fails
the pending commands with :class:`LinkTimeout` and goes back to handshaking by itself.
When the device's boot counter changes (seen in a heartbeat, a NO_SESSION or a new
HELLO_ACK) the link reports :class:`McuReset` (the machine must be re-homed), fails the
pending commands with :class:`PeerReset` and handshakes again.
"""

from __future__ import annotations

import collections
import random
import struct
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from . import catalogue as C
from .errors import (CommandRejected, FrameError, HandshakeError, LinkDown, LinkError,
                     LinkTimeout, PeerReset, TransportError)
from .messages import (Command, DeviceHeartbeat, DeviceInfo, DeviceState,
                       Reply, ReplyCode, Status, StopReason, decode_device_message, _enum)
from .reliable import ReliableEndpoint
from .wire import PROTOCOL_VERSION, PROTOCOL_VERSIONS, FLAG_RELIABLE, FrameDecoder, encode_frame


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
    """A submitted command will get no reply; ``error`` says why."""

    cmd_id: int
    error: LinkError


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


class HostProtocol:
    """Pure host-side protocol engine (no threads, no I/O). Time ``now`` in seconds.

    Args:
        window: reliable frames in flight (1..127).
        heartbeat_interval: period of HOST_HEARTBEAT frames (s).
        peer_timeout: silence from the device after which the link is lost (s).
        hello_interval: HELLO retransmission period during the handshake (s).
        max_retries: retransmissions of one frame before the link is lost.
        rng: random source for session nonces (seed it in tests).
    """

    def __init__(self, *, window: int = 16, heartbeat_interval: float = 0.1,
                 peer_timeout: float = 0.5, hello_interval: float = 0.1,
                 max_retries: int = 12, min_rto: float = 0.015,
                 rng: random.Random | None = None) -> None:
        self.link = ReliableEndpoint(window=window, queue_max=4 * window,
                                     initial_rto_ms=100.0, min_rto_ms=min_rto * 1000,
                                     max_rto_ms=1000.0, max_retries=max_retries)
        self.decoder = FrameDecoder()
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
        self._ctrl: list[tuple[int, bytes]] = []
        self._next_cmd = 1
        self.pending: dict[int, Command] = {}
        self._unsent: collections.deque[tuple[int, Command]] = collections.deque()

    # ---------------------------------------------------------------- control
    def connect(self, now: float) -> None:
        """Start (or restart) the handshake with a fresh session nonce."""
        self.nonce = self._rng.randrange(1, 1 << 32)
        self.state = "handshake"
        self._last_hello = -1e18
        self._last_rx = now

    def submit(self, command: Command, now: float) -> int:
        """Queue ``command``; returns its cmd_id (1..65535, wrapping). The reply arrives
        later as a :class:`Reply` (or :class:`Status`) event with that id, or a
        :class:`CommandFailed`. Raises LinkDown when not connected."""
        if self.state != "connected":
            raise LinkDown(f"cannot send {type(command).__name__}: link is {self.state}")
        if not isinstance(command, Command):
            raise FrameError(f"not a command: {command!r}")
        cmd_id = self._next_cmd
        self._next_cmd = cmd_id % 0xFFFF + 1
        self.pending[cmd_id] = command
        self._unsent.append((cmd_id, command))
        self._pump()
        return cmd_id

    def _pump(self) -> None:
        while self._unsent and self.link.space() > 0:
            cmd_id, command = self._unsent.popleft()
            self.link.send(command.TYPE, command.pack(cmd_id))

    # ------------------------------------------------------------------ input
    def feed(self, data: bytes, now: float) -> list[Any]:
        """Bytes from the device -> list of events (Reply, Status, SensorChanged,
        StacksCounted, MotionDone, Fault, DeviceHeartbeat, Connected, McuReset,
        LinkLost, CommandFailed). Never raises on bad input."""
        events: list[Any] = []
        if not data:
            return events
        now_ms = now * 1000.0
        for flags, seq, ack, mtype, payload in self.decoder.feed(data):
            self._last_rx = now
            if mtype == C.T_HELLO_ACK:
                self._on_hello_ack(payload, events)
            elif mtype == C.T_DEV_HEARTBEAT:
                self._on_heartbeat(payload, events, now)
                if self.state == "connected":
                    self.link.on_frame(flags, seq, ack, now_ms)
            elif mtype == C.T_NO_SESSION:
                if len(payload) == 4 and self.state == "connected":
                    (boot,) = struct.unpack("<I", payload)
                    if not self._check_boot(boot, events, now):
                        self._restart("device reports no session", LinkDown(
                            "the device lost the session; reconnecting"), events, now)
            elif self.state == "connected":
                sack = None
                if mtype == C.T_ACK and len(payload) == 2:
                    sack = payload[0] | (payload[1] << 8)
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
        ev = decode_device_message(mtype, payload)
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
        info = DeviceInfo(f[0], (f[2], f[3], f[4]), f[5], f[6], f[7], f[8],
                          _enum(StopReason, f[9]))
        if self.boot is not None and info.boot_counter != self.boot:
            events.append(McuReset(self.boot, info.boot_counter))
        self.boot = info.boot_counter
        self.info = info
        self.link.reset()
        self.link.send_sack = f[0] >= 2   # a version-1 device ignores it anyway
        self.state = "connected"
        events.append(Connected(info))

    def _on_heartbeat(self, payload: bytes, events: list, now: float) -> None:
        if len(payload) != struct.calcsize(C.FORMATS[C.T_DEV_HEARTBEAT]):
            self.protocol_errors += 1
            return
        f = struct.unpack(C.FORMATS[C.T_DEV_HEARTBEAT], payload)
        hb = DeviceHeartbeat(f[0], f[1], _enum(DeviceState, f[2]), _enum(StopReason, f[3]),
                             f[4], f[5], f[6])
        self.last_heartbeat = hb
        events.append(hb)
        if self.state == "connected":
            if self._check_boot(hb.boot_counter, events, now):
                return
            if hb.session != self.nonce:
                self._restart("device is in another session", LinkDown(
                    "the device answered for another session; reconnecting"), events, now)

    def _check_boot(self, boot: int, events: list, now: float) -> bool:
        if self.boot is not None and boot != self.boot:
            old = self.boot
            self.boot = boot
            events.append(McuReset(old, boot))
            self._restart("microcontroller reset", PeerReset(
                f"the microcontroller rebooted (boot counter {old} -> {boot}); "
                "the command may not have been executed, re-home the machine"), events, now)
            return True
        return False

    def _restart(self, reason: str, error: LinkError, events: list, now: float,
                 lost: bool = False) -> None:
        self.link.drop_unsent()
        self._unsent.clear()
        for cmd_id in list(self.pending):
            events.append(CommandFailed(cmd_id, error))
        self.pending.clear()
        if lost:
            events.append(LinkLost(reason))
        self.link.reset()
        self.connect(now)

    # ------------------------------------------------------------------- time
    def tick(self, now: float) -> list[Any]:
        """Advance time: retransmission timer, peer timeout, heartbeat and HELLO timers."""
        events: list[Any] = []
        if self.state == "connected":
            failure = self.link.check_timeout(now * 1000.0)
            silent = self._last_rx is not None and now - self._last_rx >= self.peer_timeout
            if failure or silent:
                reason = failure or (f"no valid frame from the device for "
                                     f"{(now - self._last_rx) * 1000:.0f} ms")
                self._restart(reason, LinkTimeout(f"device not answering: {reason}"),
                              events, now, lost=True)
            elif now - self._last_hb_tx >= self.heartbeat_interval:
                self._last_hb_tx = now
                self._ctrl.append((C.T_HOST_HEARTBEAT,
                                   struct.pack("<I", int(now * 1000) & 0xFFFFFFFF)))
        if self.state == "handshake" and now - self._last_hello >= self.hello_interval:
            self._last_hello = now
            self._ctrl.append((C.T_HELLO, struct.pack("<BI", PROTOCOL_VERSION, self.nonce)))
        return events

    def poll(self, now: float) -> bytes:
        """Bytes to write to the device now (b"" if none)."""
        out = []
        for mtype, payload in self._ctrl:
            flags, seq, ack = self.link.header_for_unreliable()
            out.append(encode_frame(flags, seq, ack, mtype, payload))
        self._ctrl = []
        if self.state == "connected":
            self._pump()
            for f in self.link.outgoing(now * 1000.0):
                out.append(encode_frame(*f))
            if self.link.ack_needed():
                flags, seq, ack = self.link.header_for_unreliable()
                out.append(encode_frame(flags, seq, ack, C.T_ACK, self.link.sack_payload()))
        return b"".join(out)

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

    def _set(self, value: Any = None, error: LinkError | None = None) -> None:
        self._value, self._error = value, error
        self._done.set()

    def done(self) -> bool:
        return self._done.is_set()

    def result(self, timeout: float | None = None) -> Reply | Status:
        """Wait for the reply (seconds). Returns the :class:`Reply` (code OK) or the
        :class:`Status`. Raises LinkTimeout (no reply in time; the command may still be
        executed later), CommandRejected (device refused it), PeerReset, LinkDown."""
        if not self._done.wait(timeout):
            raise LinkTimeout(f"no reply to {self.command!r} (command {self.cmd_id}) within "
                              f"{timeout} s")
        if self._error is not None:
            raise self._error
        v = self._value
        if isinstance(v, Reply) and v.code != ReplyCode.OK:
            text = _REPLY_TEXT.get(v.code, "refused (code {code})")
            reason = _enum(StopReason, v.detail)
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
                call._set(error=ev.error)
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
