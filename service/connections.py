"""Open files and connections of ``mjtable serve`` (issue #18 section 4): 1,100 open event streams
once exhausted the open-file limit, after which every request, Stop included, timed out and the
accept loop logged a traceback a second.

- ``raise_nofile``: the soft open-file limit raised to the hard one at start (the systemd unit
  sets ``LimitNOFILE=``); ``connection_cap`` keeps a reserve of it for the log, the serial port,
  the camera, the photo worker and one batch of accepted connections (the listen backlog).
- ``Connections``: uvicorn's HTTP protocol with a cap on open connections. A connection beyond
  the cap closes the oldest connection that has no request in progress (an idle keep-alive or
  one that never sent a whole request), or itself when every one is busy, so the accept loop
  never runs out of files and a phone's Stop always finds a place.
- ``AcceptErrorFilter``: asyncio logs a failed ``accept()`` (EMFILE) with a traceback each time;
  this passes one line per interval with the count, without the traceback.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from typing import Any

log = logging.getLogger("mjtable.service")

#: files kept for everything but the connections: the event log (3), the serial port, the camera,
#: the photo worker's pipes, the listening socket, epoll, imports and libraries (about 20 in use)
RESERVE_FILES = 64
#: connections allowed at least, whatever the limit
MIN_CONNECTIONS = 32


def raise_nofile() -> tuple[int, int]:
    """Raise the soft ``RLIMIT_NOFILE`` to the hard limit. Returns (soft, hard) afterwards (the
    soft limit unchanged where the kernel refuses)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard or hard == resource.RLIM_INFINITY and soft < 65536:
        target = hard if hard != resource.RLIM_INFINITY else 65536
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft, hard


def connection_cap(soft: int) -> tuple[int, int]:
    """(connections, backlog) under a soft open-file limit ``soft``.

    asyncio accepts up to ``backlog`` connections at each turn of its loop, and a connection
    reaches the protocol (where it can be closed to make room) two turns later: the cap leaves room
    for three such batches on top of the service's own files (``RESERVE_FILES``, or an eighth of a
    small limit), so the accept loop never runs out of files. At least ``MIN_CONNECTIONS``."""
    own = min(RESERVE_FILES, soft // 8)
    backlog = max(8, min(32, soft // 16))
    return max(MIN_CONNECTIONS, soft - own - 3 * backlog), backlog


def _busy(protocol: Any) -> bool:
    """True while ``protocol`` (a uvicorn HTTP protocol) has a request whose answer is not complete."""
    cycle = getattr(protocol, "cycle", None)
    return cycle is not None and not getattr(cycle, "response_complete", True)


class Connections:
    """The server's open HTTP connections, at most ``limit`` (see the module docstring)."""

    def __init__(self, limit: int, *, log_interval_s: float = 60.0) -> None:
        self.limit = limit
        self.closed_for_room = 0
        self._open: dict[Any, None] = {}  # insertion order: oldest first
        self._log_interval_s = log_interval_s
        self._logged = -float("inf")

    def __len__(self) -> int:
        return len(self._open)

    def protocol(self, base: type[asyncio.Protocol] | None = None) -> type[asyncio.Protocol]:
        """uvicorn's HTTP protocol class (``base``, default its ``auto`` choice) counted here; pass
        it as ``uvicorn.Config(http=...)``."""
        if base is None:
            from uvicorn.protocols.http.auto import AutoHTTPProtocol
            base = AutoHTTPProtocol
        registry = self

        class CappedHTTPProtocol(base):  # type: ignore[valid-type, misc]
            def connection_made(self, transport) -> None:  # type: ignore[override]
                super().connection_made(transport)
                registry.opened(self)

            def connection_lost(self, exc: Exception | None) -> None:
                registry.closed(self)
                super().connection_lost(exc)

        return CappedHTTPProtocol

    def opened(self, protocol: Any) -> None:
        """A connection was accepted: beyond the cap, close the oldest idle one (or this one)."""
        self._open[protocol] = None
        if len(self._open) <= self.limit:
            return
        victim = next((p for p in self._open if p is not protocol and not _busy(p)), protocol)
        self.closed_for_room += 1
        self._open.pop(victim, None)
        transport = getattr(victim, "transport", None)
        if transport is not None:
            transport.abort()
        now = time.monotonic()
        if now - self._logged >= self._log_interval_s:
            self._logged = now
            log.warning("%d connections open (at most %d): closed %s to make room (%d so far)", len(self._open) + 1,
                        self.limit, "an idle one" if victim is not protocol else "the new one", self.closed_for_room)

    def closed(self, protocol: Any) -> None:
        """A connection ended."""
        self._open.pop(protocol, None)

    def abort(self, client: tuple[str, int] | list | None) -> bool:
        """Abort the connection from ``client`` (host, port), e.g. an event stream its client stopped
        reading (a plain close would wait for its full buffers). True when one was found."""
        if client is None:
            return False
        key = tuple(client)[:2]
        for p in list(self._open):
            if tuple(getattr(p, "client", None) or ())[:2] == key:
                transport = getattr(p, "transport", None)
                if transport is not None:
                    transport.abort()
                return True
        return False


class AcceptErrorFilter(logging.Filter):
    """On the ``asyncio`` logger: a failed ``accept()`` (out of files) is logged at most once per
    ``interval_s``, one line with the count since the last, never with its traceback."""

    PREFIX = "socket.accept() out of system resource"

    def __init__(self, interval_s: float = 60.0) -> None:
        super().__init__()
        self.interval_s = interval_s
        self.suppressed = 0
        self._last = -float("inf")

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith(self.PREFIX):
            return True
        now = time.monotonic()
        if now - self._last < self.interval_s:
            self.suppressed += 1
            return False
        exc = record.exc_info[1] if record.exc_info else None
        more = f" ({self.suppressed} more in the last {self.interval_s:.0f} s)" if self.suppressed else ""
        record.msg = f"{self.PREFIX}: {exc or 'no more files'}{more}; connections are refused until files free up"
        record.args = ()
        record.exc_info = None
        record.exc_text = None
        self._last = now
        self.suppressed = 0
        return True


def install_accept_filter(interval_s: float = 60.0) -> AcceptErrorFilter:
    """Add an ``AcceptErrorFilter`` to the ``asyncio`` logger (once); returns it."""
    logger = logging.getLogger("asyncio")
    for f in logger.filters:
        if isinstance(f, AcceptErrorFilter):
            return f
    f = AcceptErrorFilter(interval_s)
    logger.addFilter(f)
    return f
