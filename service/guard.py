"""The service's guard on the table's network (issue #18 section 4): a pure ASGI middleware that
sees every request before FastAPI reads its body.

In this order, for every HTTP request:

1. ``Host`` must be one of the allowed names (400 ``bad-host``), when a list is given: a page
   served under a name the table does not answer to (DNS rebinding) cannot talk to the API.
2. A route that needs the control token (``Authorization: Bearer <token>``) gets 401 before a
   byte of its body is read; the connection is then closed (the body is never read).
3. Every body is bounded by the bytes actually received, chunked or not: 413 as soon as they pass
   the route's limit (64 KiB for JSON, ``max_upload_mb`` for the photo). A body announced larger
   by its ``Content-Length`` is refused before it is read; the photo route needs the length (411);
   a body that pauses for ``body_idle_s`` gets 408.
4. Event streams (``GET /api/events``) are capped per client address and in all (503 with
   ``Retry-After`` beyond); a stream whose client takes nothing for ``stream_idle_s`` (its socket
   buffers full) is dropped, and any stream ends after ``stream_max_s`` (the page's EventSource
   opens it again by itself).
5. Every answer carries ``Content-Security-Policy``, ``X-Frame-Options: DENY``,
   ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer`` and ``Server-Timing``
   (the milliseconds from the request's arrival to its answer).

Its own refusals are in the API's error shape ``{"error": {"code", "message", "message_zh"}}``.
``service.connections`` keeps the number of open connections under the open-file limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import ipaddress
import json
import logging
import socket
import time
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

from starlette.routing import Match

from . import auth

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

log = logging.getLogger("mjtable.service")

#: the largest JSON body of any route (bytes); the longest real one is a score request of ~400 bytes
MAX_JSON_BODY = 64 * 1024
#: the page's own policy: scripts, styles and data only from the table; photos may be data:/blob:
CSP = ("default-src 'self'; img-src 'self' data: blob:; script-src 'self'; style-src 'self'; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = ((b"content-security-policy", CSP.encode()), (b"x-frame-options", b"DENY"),
                    (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"))
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclasses.dataclass(frozen=True)
class Limits:
    """What the guard allows.

    Attributes:
        allowed_hosts: the names ``Host`` may carry (lower case, without the port); None: any.
        max_body: bytes of any request body (JSON routes).
        large_bodies: path -> bytes, for routes that take more (the photo upload).
        length_required: paths whose body must announce its ``Content-Length`` (411 otherwise).
        stream_paths: the server-sent event routes (GET).
        streams_total, streams_per_client: open event streams in all and per client address.
        stream_idle_s: seconds a stream may wait for its client to take a message (then dropped).
        stream_max_s: seconds a stream lives at most (then ended; EventSource reconnects).
        retry_after_s: ``Retry-After`` of a 503 for a stream beyond the caps.
        body_idle_s: seconds a request body may pause (408 then): a body sent a byte at a time
            would hold its connection busy, out of reach of ``service.connections``' reserve.
    """

    allowed_hosts: frozenset[str] | None = None
    max_body: int = MAX_JSON_BODY
    large_bodies: tuple[tuple[str, int], ...] = ()
    length_required: frozenset[str] = frozenset()
    stream_paths: frozenset[str] = frozenset({"/api/events"})
    streams_total: int = 64
    streams_per_client: int = 4
    stream_idle_s: float = 45.0
    stream_max_s: float = 3600.0
    retry_after_s: int = 5
    body_idle_s: float = 15.0

    def body_limit(self, path: str) -> int:
        """The bytes a request body to ``path`` may have."""
        return dict(self.large_bodies).get(path, self.max_body)


def host_name(value: str) -> str:
    """The name of a ``Host`` header value, lower case, without its port (``[::1]:8080`` -> ``::1``)."""
    v = value.strip().lower()
    if v.startswith("["):
        return v[1:v.find("]")] if "]" in v else v
    if v.count(":") == 1:
        return v.split(":", 1)[0]
    return v


def local_addresses(resolve: bool = True) -> set[str]:
    """This machine's IPv4 and IPv6 addresses (Linux: each interface's IPv4 address by ioctl, the
    IPv6 ones from /proc/net/if_inet6; with ``resolve``, also what the host name resolves to, which
    may ask a name server: not on the server's loop)."""
    out: set[str] = {"127.0.0.1", "::1"}
    try:
        import fcntl
        import struct
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            for _, name in socket.if_nameindex():
                try:
                    packed = fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", name.encode()[:15]))  # SIOCGIFADDR
                    out.add(socket.inet_ntoa(packed[20:24]))
                except OSError:
                    pass  # an interface without an IPv4 address
    except (ImportError, OSError):
        pass
    try:
        with open("/proc/net/if_inet6", encoding="ascii") as fh:
            for line in fh:
                h = line.split()[0]
                out.add(str(ipaddress.IPv6Address(bytes.fromhex(h))))
    except (OSError, ValueError, IndexError):
        pass
    if resolve:
        with contextlib.suppress(OSError):
            out.update(str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None))
    return {a.split("%")[0].lower() for a in out}


def default_hosts(public_url: str | None = None) -> frozenset[str]:
    """The names ``Host`` may carry by default: localhost, 127.0.0.1, ::1, this machine's name and
    name.local, its addresses, and the host of ``public_url`` (the address printed for pairing)."""
    name = socket.gethostname().lower()
    hosts = {"localhost", name, name.split(".")[0] + ".local", *local_addresses()}
    if public_url:
        from urllib.parse import urlsplit
        if urlsplit(public_url).hostname:
            hosts.add(urlsplit(public_url).hostname.lower())
    return frozenset(hosts)


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


def error_body(code: str, message: str, message_zh: str | None, **extra: Any) -> dict[str, Any]:
    """The API's error shape: ``{"error": {"code", "message", "message_zh", ...extra}}`` (no
    ``message_zh`` where there is no Chinese text)."""
    body: dict[str, Any] = {"code": code, "message": message, **extra}
    if message_zh:
        body["message_zh"] = message_zh
    return {"error": body}


async def send_error(send: Send, status: int, code: str, message: str, message_zh: str,
                     headers: Iterable[tuple[bytes, bytes]] = (), close: bool = False) -> None:
    """Answer with the error shape (JSON, the security headers); ``close``: the connection is closed
    after it (its body was not read)."""
    body = json.dumps(error_body(code, message, message_zh), ensure_ascii=False).encode()
    hs = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
          *SECURITY_HEADERS, *headers]
    if close:
        hs.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": hs})
    await send({"type": "http.response.body", "body": body})


class _BodyTooLarge(Exception):
    """Raised into the app when a body passes its limit after the 413 has been sent."""


class _StreamIdle(Exception):
    """Raised into an event stream whose client took nothing for ``stream_idle_s``."""


class Guard:
    """The ASGI middleware (see the module docstring).

    Args:
        app: the application below (FastAPI's exception middleware and router).
        router: the app's router: its routes say which need the token.
        token: the control token.
        needs_token: route -> True when it needs the token (FastAPI routes with the auth dependency).
        limits: the limits.
        connections: the server's open connections (``service.connections.Connections``), used to
            abort the socket of a dropped stream; None under a test client.
    """

    def __init__(self, app: Callable, *, router: Any, token: str, needs_token: Callable[[Any], bool],
                 limits: Limits = Limits(), connections: Any = None) -> None:
        self.app = app
        self.router = router
        self.token = token
        self.needs_token = needs_token
        self.limits = limits
        self.connections = connections
        self.streams: dict[str, int] = {}
        self._token_routes: dict[int, bool] = {}
        self._addresses: set[str] = set()
        self._addresses_t = -float("inf")

    @property
    def open_streams(self) -> int:
        """Event streams open now, all clients."""
        return sum(self.streams.values())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        send = self._with_headers(send, time.perf_counter())
        headers = dict(scope.get("headers", ()))
        lim = self.limits
        if lim.allowed_hosts is not None and "*" not in lim.allowed_hosts:
            name = host_name(headers.get(b"host", b"").decode("latin-1"))[:100]
            if name not in lim.allowed_hosts and not self._own_address(name):
                return await send_error(
                    send, 400, "bad-host", f"this table does not answer to the name {name or '(none)'!r}: "
                    "open it by its address, or add the name to [service] allowed_hosts",
                    f"本机不接受主机名 {name or '(无)'!r}：请用本机地址打开，或把该名称加入 [service] allowed_hosts", close=True)
        path, method = scope["path"], scope["method"]
        if self._route_needs_token(scope) and not self._token_ok(headers.get(b"authorization")):
            return await send_error(
                send, 401, "unauthorized", "a control token is needed: send Authorization: Bearer <token>",
                "需要控制令牌：请先配对（扫描二维码）", headers=[(b"www-authenticate", b"Bearer")],
                close=method in _BODY_METHODS)
        limit = lim.body_limit(path)
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > limit):
            return await send_error(
                send, 413, "too-large", f"the request is {length.decode('latin-1')} bytes: at most {limit} bytes "
                "are accepted", f"请求过大：最多接受 {limit} 字节", close=True)
        if length is None and method in _BODY_METHODS and path in lim.length_required:
            return await send_error(
                send, 411, "length-required", "send the photo with a Content-Length header (not chunked)",
                "上传照片需带 Content-Length（不可分块传输）", close=True)
        if method == "GET" and path in lim.stream_paths:
            return await self._stream(scope, receive, send)
        await self._bounded(scope, receive, send, limit)

    def _own_address(self, name: str) -> bool:
        """True when ``name`` is an address of this machine now (a new DHCP lease after the start);
        looked up again at most every 10 s."""
        if not _is_ip(name):
            return False
        now = time.monotonic()
        if now - self._addresses_t > 10.0:
            self._addresses, self._addresses_t = local_addresses(resolve=False), now
        return name in self._addresses

    # ---- token ----
    def _route_needs_token(self, scope: Scope) -> bool:
        for route in self.router.routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                key = id(route)
                if key not in self._token_routes:
                    self._token_routes[key] = bool(self.needs_token(route))
                return self._token_routes[key]
        return False

    def _token_ok(self, header: bytes | None) -> bool:
        if header is None:
            return False
        scheme, _, value = header.decode("latin-1").partition(" ")
        return scheme.lower() == "bearer" and auth.check(value.strip(), self.token)

    # ---- bodies ----
    async def _bounded(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        """Run the app with the body counted as it arrives: past ``limit`` the client gets 413 at
        once, the app sees the client gone and whatever it answers is dropped."""
        got = 0
        refused = done = started = False

        async def refuse(status: int, code: str, message: str, message_zh: str) -> Message:
            nonlocal refused
            refused = True
            if not started:
                await send_error(send, status, code, message, message_zh, close=True)
            return {"type": "http.disconnect"}

        async def counted() -> Message:
            nonlocal got, done
            if refused:
                return {"type": "http.disconnect"}
            if done:
                return await receive()
            try:
                async with asyncio.timeout(self.limits.body_idle_s):
                    msg = await receive()
            except TimeoutError:
                return await refuse(408, "body-timeout", f"the request body paused for {self.limits.body_idle_s:.0f} s: "
                                    "send it whole", "请求内容传输超时")
            if msg["type"] == "http.request":
                got += len(msg.get("body", b""))
                done = not msg.get("more_body", False)
                if got > limit:
                    return await refuse(413, "too-large", f"the request body passed {limit} bytes: at most {limit} "
                                        "bytes are accepted", f"请求过大：最多接受 {limit} 字节")
            return msg

        async def gated(msg: Message) -> None:
            nonlocal started
            if refused:
                return
            if msg["type"] == "http.response.start":
                started = True
            await send(msg)

        try:
            await self.app(scope, counted, gated)
        except Exception:
            if not refused:
                raise

    # ---- event streams ----
    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        lim = self.limits
        client = (scope.get("client") or ("?", 0))[0]
        mine = self.streams.get(client, 0)
        if mine >= lim.streams_per_client or self.open_streams >= lim.streams_total:
            which = (f"{mine} event streams are open from {client} (at most {lim.streams_per_client})"
                     if mine >= lim.streams_per_client else
                     f"{self.open_streams} event streams are open (at most {lim.streams_total})")
            return await send_error(send, 503, "too-many-streams", f"{which}: close a page or try again later",
                                    "实时连接过多：请关闭其他页面或稍后再试",
                                    headers=[(b"retry-after", str(lim.retry_after_s).encode())], close=True)
        self.streams[client] = mine + 1
        idle = False
        started = finished = False

        async def timed(msg: Message) -> None:
            nonlocal idle, started, finished
            try:
                async with asyncio.timeout(lim.stream_idle_s):
                    await send(msg)
            except TimeoutError:
                idle = True
                raise _StreamIdle(f"the client took nothing for {lim.stream_idle_s:.0f} s") from None
            started = True
            finished = msg["type"] == "http.response.body" and not msg.get("more_body", False)

        # asyncio.timeout, not wait_for: on Python 3.11 wait_for drops a cancellation that arrives as
        # its awaitable finishes (a page closed while a message went out), and the stream then runs on
        try:
            async with asyncio.timeout(lim.stream_max_s):
                await self.app(scope, receive, timed)
        except TimeoutError:  # lived its time: end it cleanly, the page opens a new one
            if started and not finished:
                with contextlib.suppress(OSError, TimeoutError, RuntimeError):
                    async with asyncio.timeout(lim.stream_idle_s):
                        await send({"type": "http.response.body", "body": b"", "more_body": False})
        except Exception:
            if not idle:
                raise
        finally:
            left = self.streams.get(client, 1) - 1
            if left > 0:
                self.streams[client] = left
            else:
                self.streams.pop(client, None)
        if idle and self.connections is not None:
            self.connections.abort(scope.get("client"))

    # ---- headers ----
    @staticmethod
    def _with_headers(send: Send, t0: float) -> Send:
        """``send`` adding the security headers and ``Server-Timing: app;dur=<ms>`` (the time from
        the request's arrival here to its answer; service_bench.py --abuse reports it)."""
        async def send_with_headers(msg: Message) -> None:
            if msg["type"] == "http.response.start":
                have = {k.lower() for k, _ in msg.get("headers", ())}
                extra = [(k, v) for k, v in SECURITY_HEADERS if k not in have]
                extra.append((b"server-timing", b"app;dur=%.1f" % ((time.perf_counter() - t0) * 1000)))
                msg = {**msg, "headers": [*msg.get("headers", ()), *extra]}
            await send(msg)
        return send_with_headers

