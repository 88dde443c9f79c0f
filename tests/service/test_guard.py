"""The service on the table's network (issue #18 section 4): the token before the body, bodies
bounded by the bytes received (chunked or not), capped and dropped event streams, the Host check,
the security headers, strict bodies and one error shape for every error."""

from __future__ import annotations

import asyncio
import json

import pytest

from service_support import AUTH, TOKEN, make_client


def _asgi(app, method: str, path: str, chunks, headers=(), client=("10.0.0.5", 5000), stall: bool = False):
    """Call ``app`` as a server would, the body in ``chunks`` (a chunked upload when no length is
    given; ``stall``: the client stops sending after them). Returns (status, headers, body, chunks
    the app took)."""
    taken = 0
    sent: list[dict] = []
    chunks = list(chunks)

    async def receive():
        nonlocal taken
        if taken < len(chunks):
            taken += 1
            return {"type": "http.request", "body": chunks[taken - 1], "more_body": stall or taken < len(chunks)}
        await asyncio.sleep(3600)

    async def send(msg):
        sent.append(msg)

    scope = {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.4"}, "http_version": "1.1",
             "method": method, "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
             "scheme": "http", "server": ("127.0.0.1", 8080), "client": client,
             "headers": [(b"host", b"127.0.0.1:8080"), *headers]}
    asyncio.run(asyncio.wait_for(app(scope, receive, send), 10))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), body, taken


@pytest.fixture
def app(tmp_path):
    client, _, log = make_client(tmp_path)  # the app, its control loop not started: nothing is reached
    yield client.app
    log.close()


CHUNK = b"x" * 65536


def test_a_write_without_the_token_is_refused_before_its_body_is_read(app) -> None:
    chunked = [(b"content-type", b"application/json"), (b"transfer-encoding", b"chunked")]
    for path in ("/api/cycle", "/api/dice", "/api/score/photo", "/api/settings"):
        status, headers, body, taken = _asgi(app, "PUT" if path == "/api/settings" else "POST", path,
                                             [CHUNK] * 320, chunked)  # 20 MB
        assert status == 401 and taken == 0, path
        assert json.loads(body)["error"]["code"] == "unauthorized" and headers[b"connection"] == b"close"
        assert b"Bearer" in headers[b"www-authenticate"]
    # a wrong token and a wrong scheme as well
    for auth in (b"Bearer wrong-token-0123456789", b"Basic " + TOKEN.encode(), TOKEN.encode()):
        status, _, _, taken = _asgi(app, "POST", "/api/cycle", [CHUNK] * 4, [(b"authorization", auth)])
        assert status == 401 and taken == 0


def test_a_chunked_body_is_bounded_by_the_bytes_received(app) -> None:
    hdrs = [(b"authorization", f"Bearer {TOKEN}".encode()), (b"content-type", b"application/json")]
    status, headers, body, taken = _asgi(app, "POST", "/api/dice", [CHUNK] * 320, hdrs)
    err = json.loads(body)["error"]
    assert status == 413 and err["code"] == "too-large" and "65536" in err["message"] and err["message_zh"]
    assert taken == 2 and headers[b"connection"] == b"close"  # 128 KiB read of the 20 MB, then refused
    # announced too large: refused before reading anything
    status, _, body, taken = _asgi(app, "POST", "/api/dice", [CHUNK] * 2,
                                   [*hdrs, (b"content-length", str(2 * 65536).encode())])
    assert status == 413 and taken == 0
    status, _, _, taken = _asgi(app, "POST", "/api/dice", [b"{}"], [*hdrs, (b"content-length", b"12abc")])
    assert status == 413 and taken == 0


def test_a_body_that_pauses_gets_408(app) -> None:
    import dataclasses
    guard = app.middleware_stack if app.middleware_stack is not None else app.build_middleware_stack()
    app.middleware_stack = guard
    while not hasattr(guard, "limits"):
        guard = guard.app
    guard.limits = dataclasses.replace(guard.limits, body_idle_s=0.3)
    hdrs = [(b"authorization", f"Bearer {TOKEN}".encode()), (b"content-type", b"application/json")]
    status, headers, body, taken = _asgi(app, "POST", "/api/dice", [b'{"values"'], hdrs, stall=True)
    assert status == 408 and json.loads(body)["error"]["code"] == "body-timeout" and taken == 1
    assert headers[b"connection"] == b"close"


def test_the_photo_route_keeps_its_larger_limit(api, hand_photo) -> None:
    c, _, _ = api
    r = c.post("/api/score/photo", headers=AUTH, files={"photo": ("h.png", hand_photo.read_bytes(), "image/png")})
    assert r.status_code == 200 and len(hand_photo.read_bytes()) > 65536
    r = c.post("/api/score", headers=AUTH, json={"hand": "123m456m789m234p5s5s", "x": "y" * 70000})
    assert r.status_code == 413


class _Streams:
    """A stand-in app below the guard: every request is an endless event stream."""

    def __init__(self) -> None:
        self.open = 0

    async def __call__(self, scope, receive, send) -> None:
        self.open += 1
        try:
            await send({"type": "http.response.start", "status": 200, "headers": []})
            while True:
                await send({"type": "http.response.body", "body": b": keep-alive\n\n", "more_body": True})
                await asyncio.sleep(0.01)
        finally:
            self.open -= 1


def _guard(**limits):
    from service.guard import Guard, Limits

    class NoRoutes:
        routes: list = []

    inner = _Streams()
    return Guard(inner, router=NoRoutes(), token=TOKEN, needs_token=lambda r: False, limits=Limits(**limits)), inner


def _stream_scope(client):
    return {"type": "http", "method": "GET", "path": "/api/events", "headers": [], "client": (client, 1234)}


def test_event_streams_are_capped_per_client_and_in_all() -> None:
    guard, inner = _guard(streams_per_client=2, streams_total=3, retry_after_s=7)

    async def main():
        stop = asyncio.Event()
        outs: dict[int, list] = {}

        def opener(i, client):
            outs[i] = []

            async def send(m):
                outs[i].append(m)

            async def receive():
                await stop.wait()
                return {"type": "http.disconnect"}
            return asyncio.create_task(guard(_stream_scope(client), receive, send))

        tasks = [opener(0, "10.0.0.1"), opener(1, "10.0.0.1")]
        await asyncio.sleep(0.05)
        third = opener(2, "10.0.0.1")  # over the per-client cap
        await asyncio.wait_for(third, 1)
        tasks.append(opener(3, "10.0.0.2"))
        await asyncio.sleep(0.05)
        fifth = opener(4, "10.0.0.3")  # over the cap in all
        await asyncio.wait_for(fifth, 1)
        assert guard.open_streams == 3 and inner.open == 3 and guard.streams == {"10.0.0.1": 2, "10.0.0.2": 1}
        for i, words in ((2, "from 10.0.0.1 (at most 2)"), (4, "3 event streams are open (at most 3)")):
            start = outs[i][0]
            assert start["status"] == 503 and (b"retry-after", b"7") in start["headers"]
            err = json.loads(outs[i][1]["body"])["error"]
            assert err["code"] == "too-many-streams" and words in err["message"] and err["message_zh"]
        tasks[0].cancel()  # a page closed: its place is free again
        await asyncio.wait_for(asyncio.gather(tasks[0], return_exceptions=True), 5)  # never a stream left running
        assert guard.streams == {"10.0.0.1": 1, "10.0.0.2": 1}
        tasks.append(opener(5, "10.0.0.3"))
        await asyncio.sleep(0.05)
        assert outs[5][0]["status"] == 200 and guard.open_streams == 3
        for t in tasks[1:]:
            t.cancel()
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 5)
        assert guard.open_streams == 0 and guard.streams == {}

    asyncio.run(main())


def test_a_stream_whose_client_reads_nothing_is_dropped_and_any_stream_ends_in_time() -> None:
    guard, inner = _guard(stream_idle_s=0.2, stream_max_s=0.5)

    class Connections:
        aborted: list = []

        def abort(self, client):
            self.aborted.append(client)

    guard.connections = Connections()

    async def never_reads(m):  # a client that stopped reading: its socket buffers full
        if m["type"] == "http.response.body":
            await asyncio.sleep(3600)

    async def receive():
        await asyncio.sleep(3600)

    async def main():
        t0 = asyncio.get_running_loop().time()
        await asyncio.wait_for(guard(_stream_scope("10.0.0.9"), receive, never_reads), 2)
        assert 0.15 < asyncio.get_running_loop().time() - t0 < 0.5
        assert guard.open_streams == 0 and inner.open == 0 and Connections.aborted == [("10.0.0.9", 1234)]
        got: list = []

        async def reads(m):
            got.append(m)

        t0 = asyncio.get_running_loop().time()
        await asyncio.wait_for(guard(_stream_scope("10.0.0.9"), receive, reads), 2)
        assert 0.45 < asyncio.get_running_loop().time() - t0 < 1.0
        assert got[-1] == {"type": "http.response.body", "body": b"", "more_body": False}  # ended cleanly
        assert guard.open_streams == 0

    asyncio.run(main())


def test_the_host_header_must_be_an_allowed_name(tmp_path) -> None:
    from fastapi.testclient import TestClient

    from service.guard import Limits
    import hardware
    from controller import cycle as CY
    from service.app import create_app
    from service.control import Control
    from service.eventlog import EventLog
    from service.hub import Hub
    from service.scorer import Scorer

    backend = hardware.open_backend("sim", seed=1)
    log = EventLog(tmp_path / "e.sqlite")
    control = Control(backend, CY.Settings.from_profile(backend.profile, 136), log, Hub(), speed=0.0)
    app = create_app(control, log, TOKEN, Scorer(None),
                     limits=Limits(allowed_hosts=frozenset({"mjtable.local", "localhost"})))
    with TestClient(app, base_url="http://mjtable.local:8080") as c:
        assert c.get("/api/status").status_code == 200
        assert c.get("/api/status", headers={"Host": "localhost"}).status_code == 200
        assert c.get("/api/status", headers={"Host": "127.0.0.1:8080"}).status_code == 200  # an own address
        for host in ("evil.example", "mjtable.local.evil.example:8080", "8.8.8.8", ""):
            r = c.post("/api/cycle", headers={**AUTH, "Host": host})
            assert r.status_code == 400, host
            err = r.json()["error"]
            assert err["code"] == "bad-host" and "allowed_hosts" in err["message"] and err["message_zh"]
        assert log.count("operator") == 0
    log.close()


def test_security_headers_on_every_answer(api) -> None:
    c, _, _ = api
    for r in (c.get("/"), c.get("/api/status"), c.get("/static/app.js"), c.get("/nope"),
              c.post("/api/cycle"), c.delete("/api/status")):
        h = r.headers
        assert h["x-frame-options"] == "DENY" and h["x-content-type-options"] == "nosniff"
        assert h["referrer-policy"] == "no-referrer"
        csp = h["content-security-policy"]
        assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp and "img-src 'self' data: blob:" in csp
        assert "unsafe-inline" not in csp


def test_the_page_has_no_inline_script_or_style() -> None:
    """The CSP allows scripts and styles from the table's own files only."""
    import re

    from service.app import STATIC
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    assert all("src=" in tag for tag in re.findall(r"<script[^>]*>", html))
    assert not re.search(r"<style|\son[a-z]+\s*=|style\s*=|javascript:", html, re.I)
    # nor markup that the script writes (innerHTML): the CSP would drop its style attributes
    js = (STATIC / "app.js").read_text(encoding="utf-8")
    assert not re.search(r"<[a-z][^<>]*\s(style|on[a-z]+)\s*=", js, re.I)


@pytest.mark.parametrize("method,path,body,field,zh", [
    ("post", "/api/dice", {"values": [True, 1, 2, 3]}, "values.0", "骰子点数的第 1 项应为整数"),
    ("put", "/api/settings", {"tile_count": "136"}, "tile_count", "牌数应为整数"),
    ("put", "/api/settings", {"tile_count": 136.0}, "tile_count", "牌数应为整数"),
    ("post", "/api/score", {"hand": "123m456m789m234p5s5s", "self_drawn": 1}, "self_drawn", "自摸应为是或否（true/false）"),
    ("post", "/api/score", {"hand": "123m456m789m234p5s5s", "flowers": "2"}, "flowers",
     "花牌应为 0 到 8 的整数，或花牌的列表（1f-8f，每张一次）"),
])
def test_bodies_are_strict(api, method, path, body, field, zh) -> None:
    c, _, log = api
    n = len(log.events(limit=1000))
    r = getattr(c, method)(path, headers=AUTH, json=body)
    assert r.status_code == 422, r.text
    err = r.json()["error"]
    assert err["code"] == "bad-value" and err["message"].startswith(field) and err["message_zh"] == "请求内容有误：" + zh
    assert err["fields"][0]["field"] == field and "detail" not in r.json()
    assert len(log.events(limit=1000)) == n


def test_every_error_has_the_error_shape(api, monkeypatch) -> None:
    c, _, log = api
    cases = [(c.get("/nope"), 404, "not-found"), (c.get("/api/nope"), 404, "not-found"),
             (c.delete("/api/status"), 405, "method-not-allowed"), (c.get("/api/cycle"), 405, "method-not-allowed"),
             (c.post("/api/dice", headers={**AUTH, "Content-Type": "application/json"}, content=b'{"values": [1,'),
              422, "bad-json"),
             (c.post("/api/dice", headers=AUTH, json=[1, 2]), 422, "bad-value"),
             (c.get("/api/log", params={"limit": "many"}), 422, "bad-value"),
             (c.get("/api/faults/codes/E99"), 404, "no-such-code")]
    for r, status, code in cases:
        assert r.status_code == status, r.text
        body = r.json()
        assert set(body) == {"error"} and body["error"]["code"] == code and body["error"]["message"], r.text
    assert "use GET" in cases[2][0].json()["error"]["message"] and cases[2][0].headers["allow"] == "GET"

    def broken(*a, **k):
        raise RuntimeError("disk on fire at /secret/path")

    monkeypatch.setattr(log, "trends", broken)
    from fastapi.testclient import TestClient
    with TestClient(c.app, raise_server_exceptions=False) as c2:
        r = c2.get("/api/trends")
    assert r.status_code == 500 and r.json()["error"]["code"] == "internal" and "secret" not in r.text
    assert r.json()["error"]["message_zh"]
