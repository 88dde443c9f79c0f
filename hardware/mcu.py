"""The ``mcu`` backend: the table's microcontroller over :mod:`firmware_bridge`.

Commands go through :class:`firmware_bridge.host.HostLink` (reliable frames, heartbeat,
reset detection), whose codec (:mod:`firmware_bridge.codec`) packs the goal commands and unpacks
the device's replies and events as the table's own (:mod:`hardware.vocabulary`). The link's own
events are turned here into the neutral ones (:func:`link_event`: McuReset -> BackendReset,
LinkLost -> BackendLost, CommandFailed, Connected); the link object stays inside, and
:meth:`McuBackend.health` gives its counters. With a
simulated microcontroller (:class:`hardware.sim.mcu_device.SimulatedMcu`) the machine
runs ``speed`` times faster than real time and this backend converts: deadlines sent are
divided by ``speed``, elapsed times and timestamps received are multiplied by it, so the
controller sees machine time, as on the other backends.

A board that is absent, unpowered or unplugged is a lost link, not an error that ends the
program: with an ``opener`` (:func:`hardware.open_mcu` with ``wait=False``, as ``mjtable serve``
uses it) the backend starts without its board, reports :class:`BackendLost` once (the controller
latches E62 and the page shows it) and reconnects by itself: a port that is missing or failed
is opened again with a growing back-off (:data:`RETRY_FIRST_S` doubling to :data:`RETRY_MAX_S`),
and an open port whose board does not answer is handshaken by the link itself (HELLO every
0.1 s). ``link_status()`` says where it stands.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable

from firmware_bridge import host as H
from firmware_bridge.errors import LinkError, PeerReset
from firmware_bridge.host import HostLink, PendingCommand

from .errors import BackendError, BackendLinkError, CommandError, HardwareTimeout
from .interface import Event, SensorSnapshot
from .profile import ALL_PARTS, Profile
from .vocabulary import (BackendLost, BackendReset, Command, CommandFailed, Connected, Fault,
                         FaultCode, FeedStacks, GetStatus, Lift, LinkHealth, MotionDone, RollDice,
                         SelfTestStep, SensorChanged, SetIndicators, StacksCounted, StartShuffle,
                         Status, StopAll, all_sensor_keys)

_U32 = 0xFFFFFFFF
_SENSOR_KEYS = tuple(all_sensor_keys())
#: seconds before the first new try at opening a missing or failed serial port; doubled after
#: each failure up to RETRY_MAX_S
RETRY_FIRST_S = 1.0
RETRY_MAX_S = 30.0


class McuBackend:
    """:class:`~hardware.interface.TableBackend` over a :class:`HostLink`.

    Args:
        profile: machine profile.
        link: a started HostLink (``HostLink.open("/dev/serial0")`` on the Pi).
        speed: machine-time speed-up of a simulated device (1 on real hardware).
        device_t0_ms: the device's ms clock at machine time 0 (simulated device only;
            None: timestamps are passed through as the MCU's own ms clock).
        device: the simulated microcontroller, closed with the backend (or None).
        model: the machine model behind it (tests), or None.
        opener: ``() -> HostLink`` (started) that opens the port again, for reconnecting
            after a missing or failed port (None: no reconnecting; ``link`` must be given).
        port_name: the port's name for messages (``/dev/serial0``).
    """

    kind = "mcu"
    fitted = ALL_PARTS  # the microcontroller board wires every part

    def __init__(self, profile: Profile, link: HostLink | None, speed: float = 1.0,
                 device_t0_ms: int | None = None, device: Any = None,
                 model: Any = None, opener: Callable[[], HostLink] | None = None,
                 port_name: str = "") -> None:
        self.profile = profile
        self._link = link
        self.port_name = port_name
        self._opener = opener
        self._down: str | None = None if link is not None else "not opened yet"
        self._retry_at = 0.0
        self._backoff = RETRY_FIRST_S
        self.reconnects = 0
        #: after a reconnection: the id of the GetStatus that reads the board afresh, "read" once
        #: its reply came (cleared when the events before it were taken), else None
        self._resync: int | str | None = None
        self.speed = float(speed)
        self.device = device
        self.model = model
        #: the clock of machine time: a simulated device may keep its own (``device.clock()``,
        #: monotonic seconds: the MicroPython firmware's board time, which stops while its
        #: process does not run), else real time
        self._clock: Callable[[], float] = getattr(device, "clock", time.monotonic)
        self._t0 = self._clock()
        self._dev_t0 = device_t0_ms
        self._pending: dict[int, PendingCommand] = {}
        self._events: list[Event] = []
        self._mirror: dict = {}
        self._closed = False

    # ------------------------------------------------------------------ setup
    def connect(self, timeout: float = 3.0) -> None:
        """Handshake and read every sensor once (GetStatus). Raises BackendLinkError."""
        try:
            self._link.connect(timeout)
            st = self._link.call(GetStatus(), timeout)
        except LinkError as exc:
            raise BackendLinkError(f"microcontroller not reachable: {exc}") from None
        self._mirror.update(st.readings)

    def start(self, timeout: float = 3.0) -> None:
        """Open the port and shake hands, without raising: a port that cannot be opened or a
        board that does not answer within ``timeout`` s is reported as one :class:`BackendLost`
        event (E62) and retried in the background (needs ``opener``)."""
        if self._link is None:
            self._reopen()
        if self._link is None:
            return
        try:
            self.connect(timeout)
        except BackendError as exc:
            self._link.begin_connect()  # keeps handshaking: the board may be switched on later
            self._lost(str(exc))

    def link_status(self) -> dict[str, Any]:
        """Where the link stands: ``{"connected": bool, "state": "connected" | "handshake" |
        "no-port", "detail": why it is down (None when connected), "port", "reconnects"}``.
        The link's queued events are taken in first (kept for ``events()``), so the counts agree."""
        if not self._closed:
            self._collect()
        link = self._link
        if link is None or link.io_error is not None:
            state = "no-port"
        else:
            state = "connected" if link.connected and self._resync is None else "handshake"
        detail = None if state == "connected" else (
            self._down or ("reading the board's status" if link is not None and link.connected
                           else "waiting for the board's answer"))
        return {"connected": state == "connected", "state": state, "detail": detail,
                "port": self.port_name, "reconnects": self.reconnects}

    def health(self) -> LinkHealth:
        """The link's counters now (:class:`~hardware.vocabulary.LinkHealth`; zero before a port
        was opened): frames received and rejected, CRC errors, retransmissions, round-trip time,
        whether it is connected, its port and the board's firmware version."""
        link = self._link
        s = link.stats() if link is not None else H.LinkStats(0, 0, 0, 0, 0, 0, 0, 0, None, 0.0)
        info = None if link is None else link.device_info
        return LinkHealth(link is not None and link.connected and self._down is None,
                          self.port_name or _port_of(link) or "", self.reconnects, s.frames_received,
                          s.frames_rejected, s.crc_errors, s.sent_new, s.retransmitted,
                          s.duplicates_dropped, s.out_of_order_dropped, s.protocol_errors, s.srtt_ms,
                          s.rto_ms, "" if info is None else _version(info))

    def _lost(self, reason: str) -> None:
        """The link is down for ``reason``: tell the controller once (BackendLost -> E62)."""
        if self._down is None or self._down == "not opened yet":
            self._events.append(BackendLost(reason))
        self._down = reason

    def _reopen(self) -> None:
        """Open the port again (after the back-off); a failure doubles the back-off."""
        if self._opener is None or time.monotonic() < self._retry_at:
            return
        try:
            link = self._opener()
        except LinkError as exc:
            self._retry_at = time.monotonic() + self._backoff
            self._lost(f"{exc}; trying again in {self._backoff:.0f} s")
            self._backoff = min(RETRY_MAX_S, self._backoff * 2)
            return
        self._link = link
        self._backoff = RETRY_FIRST_S
        link.begin_connect()

    def _supervise(self) -> None:
        """Notice a port that failed (unplugged USB adapter) and open it again."""
        link = self._link
        if link is not None and link.io_error is not None:
            self._lost(f"serial port {self.port_name or ''} failed: {link.io_error}".replace("  ", " "))
            self._pending.clear()
            link.close()
            self._link = None
        if self._link is None and not self._closed:
            self._reopen()

    # ----------------------------------------------------------------- clock
    def now(self) -> float:
        return (self._clock() - self._t0) * self.speed

    def _ms_out(self, ms: int) -> int:
        return max(1, int(round(ms / self.speed)))

    def _t(self, t_ms: int) -> int:
        if self._dev_t0 is None:
            return t_ms
        return int(((t_ms - self._dev_t0) & _U32) * self.speed)

    def _scale(self, c: Command) -> Command:
        if self.speed == 1.0:
            return c
        if isinstance(c, (StartShuffle, FeedStacks, Lift)):
            return dataclasses.replace(c, deadline_ms=self._ms_out(c.deadline_ms))
        if isinstance(c, RollDice):
            return dataclasses.replace(c, spin_ms=self._ms_out(c.spin_ms),
                                       deadline_ms=self._ms_out(c.deadline_ms))
        if isinstance(c, SelfTestStep):
            return dataclasses.replace(c, jog_ms=self._ms_out(c.jog_ms),
                                       deadline_ms=self._ms_out(c.deadline_ms))
        if isinstance(c, SetIndicators) and c.buzzer_ms:
            return dataclasses.replace(c, buzzer_ms=self._ms_out(c.buzzer_ms))
        return c

    def _convert(self, ev: Event) -> Event:
        if isinstance(ev, SensorChanged):
            self._mirror[(ev.sensor, ev.side)] = ev.value
            return dataclasses.replace(ev, t_ms=self._t(ev.t_ms))
        if isinstance(ev, (StacksCounted, Fault)):
            return dataclasses.replace(ev, t_ms=self._t(ev.t_ms))
        if isinstance(ev, MotionDone):
            return dataclasses.replace(ev, elapsed_ms=int(ev.elapsed_ms * self.speed))
        return ev

    # ------------------------------------------------------------- interface
    def submit(self, command: Command) -> int:
        if self._closed:
            raise BackendError("mcu backend is closed")
        if not isinstance(command, Command):
            raise CommandError(f"not a table command: {command!r}")
        if self._link is None:
            raise BackendLinkError(f"cannot send {type(command).__name__}: the microcontroller is not "
                                   f"connected ({self._down})")
        try:
            call = self._link.submit(self._scale(command))
        except LinkError as exc:
            raise BackendLinkError(f"cannot send {type(command).__name__}: {exc}") from None
        self._pending[call.cmd_id] = call
        return call.cmd_id

    def _collect(self) -> None:
        for cmd_id, call in list(self._pending.items()):
            if call.done():
                del self._pending[cmd_id]
                if call._error is not None:
                    self._events.append(link_event(H.CommandFailed(cmd_id, call._error, call.executed)))
                else:
                    v = call._value
                    if isinstance(v, Status):
                        self._mirror.update(v.readings)
                        if cmd_id == self._resync:
                            self._resync = "read"
                    self._events.append(v)
        self._supervise()
        while self._link is not None:
            ev = self._link.get_event(timeout=0)
            if ev is None:
                break
            ev = link_event(ev)
            if isinstance(ev, Connected):
                if self._down is not None:
                    self.reconnects += 1
                self._down = None
                try:  # read every sensor afresh: they may have changed while the link was down
                    call = self._link.submit(GetStatus())
                    self._pending[call.cmd_id] = call
                    self._resync = call.cmd_id
                except LinkError:
                    pass
            elif (isinstance(ev, Fault) and ev.code is FaultCode.HOST_TIMEOUT and self._resync is not None):
                # the board's own safe stop during the outage, queued until the link came back: the
                # lost link (E62) already says that the board stopped every motor by itself, so it is
                # not a second fault to clear (the device delivers it before the status reply)
                continue
            elif isinstance(ev, BackendLost):
                self._down = ev.reason
            self._events.append(self._convert(ev))
        if self._resync == "read":
            self._resync = None  # every event the board sent before its status has been taken

    def events(self) -> list[Event]:
        self._collect()
        out, self._events = self._events, []
        return out

    def advance(self, dt: float) -> list[Event]:
        if self._clock is time.monotonic:
            time.sleep(max(0.0, dt) / self.speed)
        else:
            end = self._clock() + max(0.0, dt) / self.speed
            while self._clock() < end:
                time.sleep(0.002)
        return self.events()

    def run_until(self, predicate: Callable[[Event], bool], timeout: float) -> list[Event]:
        seen: list[Event] = []
        end = self._clock() + timeout / self.speed
        while True:
            self._collect()
            batch, self._events = self._events, []
            for i, ev in enumerate(batch):
                seen.append(ev)
                if predicate(ev):
                    self._events[:0] = batch[i + 1:]
                    return seen
            if self._clock() >= end:
                raise HardwareTimeout(f"condition not met within {timeout} s of machine time "
                                      f"({len(seen)} events seen)")
            time.sleep(0.002)

    def sensors(self) -> SensorSnapshot:
        self._collect()
        return SensorSnapshot(self.now(), {key: self._mirror.get(key, 0) for key in _SENSOR_KEYS})

    def stop_all(self, timeout: float = 1.0) -> None:
        """StopAll, waiting up to ``timeout`` s (real) for the reply. When the link is
        down the microcontroller stops every motor by itself (heartbeat rule)."""
        if self._link is None:
            return
        try:
            self._link.call(StopAll(), timeout)
        except LinkError:
            pass

    def close(self) -> None:
        if self._closed:
            return
        try:
            self.stop_all()
        finally:
            self._closed = True
            if self._link is not None:
                self._link.close()
            if self.device is not None:
                self.device.close()

    def __enter__(self) -> "McuBackend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _port_of(link: Any) -> str | None:
    """The device name of a HostLink's serial port (pyserial's ``port`` attribute, through
    wrappers), None when it has none."""
    obj = getattr(link, "port", None)
    for _ in range(3):
        if isinstance(obj, str):
            return obj
        obj = getattr(obj, "port", None)
    return None


def _version(info: Any) -> str:
    """The board's firmware version as ``"1.4.2"`` (from the handshake's DeviceInfo)."""
    return ".".join(map(str, info.firmware_version))


def link_event(ev: Any) -> Any:
    """The table's event for what the link's queue gives: the link's own events become the neutral
    ones (Connected, McuReset -> BackendReset, LinkLost -> BackendLost, CommandFailed, with
    ``reset`` when the board restarted); the device's events (already the vocabulary's, unpacked by
    :mod:`firmware_bridge.codec`) pass as they are."""
    if isinstance(ev, H.Connected):
        return Connected(_version(ev.info), ev.info.boot_counter, ev.info.gear_tiles)
    if isinstance(ev, H.McuReset):
        return BackendReset(ev.previous_boot, ev.boot)
    if isinstance(ev, H.LinkLost):
        return BackendLost(ev.reason)
    if isinstance(ev, H.CommandFailed):
        return CommandFailed(ev.cmd_id, str(ev.error), ev.executed, isinstance(ev.error, PeerReset))
    return ev
