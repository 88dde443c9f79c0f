"""Live updates: the control thread publishes, every open page (server-sent events) receives.

``publish`` may be called from any thread; subscribers are asyncio queues on the server's loop.
A slow page drops its oldest message (never blocks the control loop). Listeners (``listen``: the
MQTT publisher) get every message too, called on the publishing thread: they must not block.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable

QUEUE = 32


class Hub:
    """Fan-out of messages (JSON-ready dicts with a ``type``) to the subscribed pages."""

    def __init__(self) -> None:
        self.latest: dict[str, Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._subs: set[asyncio.Queue] = set()
        self._lock = threading.Lock()
        self._listeners: list[Callable[[dict[str, Any]], None]] = []
        self.closing = False

    def listen(self, fn: Callable[[dict[str, Any]], None]) -> None:
        """Call ``fn(message)`` for every message published from now on (on the publishing thread;
        ``fn`` must return at once). The latest status, if any, is given to it now."""
        self._listeners.append(fn)
        if self.latest is not None:
            fn(self.latest)

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """The server's event loop (set at start-up)."""
        self._loop = loop

    def publish(self, message: dict[str, Any]) -> None:
        """Send ``message`` to every page; a ``status`` message is also kept as the latest."""
        if message.get("type") == "status":
            self.latest = message
        for fn in self._listeners:
            fn(message)
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._fanout, message)
            except RuntimeError:
                pass  # the loop closed meanwhile

    def _fanout(self, message: dict[str, Any] | None) -> None:
        for q in list(self._subs):
            if q.full():
                q.get_nowait()
            q.put_nowait(message)

    def subscribe(self) -> asyncio.Queue:
        q: asyncio.Queue = asyncio.Queue(QUEUE)
        self._subs.add(q)
        return q

    def unsubscribe(self, q: asyncio.Queue) -> None:
        self._subs.discard(q)

    @property
    def subscribers(self) -> int:
        return len(self._subs)

    def close(self) -> None:
        """End every stream (server shutting down)."""
        self.closing = True
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._fanout, None)
            except RuntimeError:
                pass
