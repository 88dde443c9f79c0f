"""The hall (issue #22): maintenance ranking, its database, its subscriber's checks, hall.toml, and
``mjtable hall`` against a real Mosquitto with ``mjtable serve --sim`` tables reporting to it (a lift
wearing, a lift that does not reach the top), the hall killed and restarted, its page in Chromium."""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(TESTS / "service"))
from mqtt_broker import Broker  # noqa: E402
from service_support import ROOT, Server, free_port  # noqa: E402

from hall import config as HC  # noqa: E402
from hall.maintenance import outlook, ranked  # noqa: E402
from hall.store import BadPayload, Store  # noqa: E402
from hall.subscriber import Subscriber  # noqa: E402
from service.errors import ConfigError  # noqa: E402

#: the ACL of docs/mqtt.md: each table writes its own topics and reads its own seating; the hall
#: reads every table and writes the seatings
ACL = """pattern write mjtable/%u/#
pattern read mjtable/%u/seating
pattern write homeassistant/sensor/mjtable_%u/#
pattern write homeassistant/binary_sensor/mjtable_%u/#

user hall
topic read mjtable/#
topic write mjtable/+/seating
"""
USERS = {"t1": "pw-t1", "t2": "pw-t2", "t3": "pw-t3", "hall": "pw-hall"}
ARTIFACTS = ROOT / "tests" / "hall" / "artifacts"


# ---- the maintenance list ----
def test_a_rising_lift_is_ranked_by_cycles_left():
    rising = [7.0 + 0.05 * i + (0.01 if i % 2 else -0.01) for i in range(20)]  # +50 ms a cycle
    o = outlook(rising, deadline_s=12.0)
    assert o["drifting"] and o["slope_s_per_cycle"] == pytest.approx(0.05, abs=0.003)
    assert o["cycles_left"] == pytest.approx((12.0 - o["now_s"]) / o["slope_s_per_cycle"], rel=0.01)
    flat = [7.0 + (0.2 if i % 3 == 0 else -0.1) for i in range(20)]  # scatter, no trend
    assert not outlook(flat, 12.0)["drifting"]
    assert outlook([7.0, 7.1, 7.2], 12.0) is None  # too few cycles for a line
    faster = [7.0 + 0.2 * i + (0.02 if i % 2 else 0) for i in range(20)]
    past = [13.0 + 0.1 * i + (0.01 if i % 2 else 0) for i in range(10)]  # already past the deadline: 0 left
    lst = ranked([("a", "E", rising, 7.0, 12.0), ("b", "W", faster, 7.0, 12.0), ("c", "N", flat, 7.0, 12.0),
                  ("d", "S", past, 7.0, 12.0), ("e", "S", rising, 7.0, None)])
    assert [(r["table"], r["side"]) for r in lst] == [("d", "S"), ("b", "W"), ("a", "E"), ("e", "S")]
    assert lst[0]["cycles_left"] == 0 and lst[-1]["cycles_left"] is None


# ---- the database ----
def _event(table, seq, kind, data, log="L1", t=None):
    return {"id": f"{log}:{seq}", "table": table, "log": log, "seq": seq, "kind": kind,
            "t": t if t is not None else time.time(), "data": data}


def test_store_keeps_each_event_once_and_answers_the_views(database):
    st = Store(database)
    now = time.time()
    assert st.add_event("t1", _event("t1", 1, "fault", {"code": "E21", "side": "W", "meaning": "short"}, t=now - 60))
    assert not st.add_event("t1", _event("t1", 1, "fault", {"code": "E21"}))  # the same id again
    assert st.add_event("t2", _event("t2", 1, "fault", {"code": "E31"}, t=now - 30))  # the same id at another table: kept
    assert st.add_event("t1", _event("t1", 2, "fault", {"code": "E11"}, t=time.time() - 9 * 86400))  # too old
    assert st.duplicates == 1 and st.count() == 3
    for i in range(10):
        st.add_event("t1", _event("t1", 10 + i, "cycle", {"lift_up_s": {"E": 7.0, "S": 7.0, "W": 7.0 + 0.1 * i,
                                                                     "N": None},
                                                        "lift_nominal_s": 7.0, "lift_deadline_s": 10.5}))
    st.set_availability("t1", "online")
    st.set_status("t1", {"state": "fault", "fault_code": "E21", "cycles": 10})
    st.set_availability("t2", "offline")
    fleet = {t["table"]: t for t in st.fleet()}
    assert fleet["t1"]["online"] and fleet["t1"]["fault_code"] == "E21" and fleet["t1"]["events"] == 12
    assert not fleet["t2"]["online"] and fleet["t2"]["state"] is None
    assert [f["code"] for f in st.faults(days=7)] == ["E31", "E21"]  # newest first, the 9-day-old one left out
    assert {f["code"] for f in st.faults(days=10)} == {"E21", "E31", "E11"}
    m = st.maintenance()
    assert [(r["table"], r["side"]) for r in m] == [("t1", "W")]
    assert m[0]["cycles_left"] == pytest.approx((10.5 - 7.9) / 0.1, rel=0.02)
    with pytest.raises(BadPayload):
        st.add_event("t1", {"id": "x"})
    with pytest.raises(BadPayload):
        st.add_event("t1", _event("t9", 1, "score", {}))  # names another table than its topic's
    with pytest.raises(BadPayload):
        st.set_availability("t1", "maybe")
    st.close()


def test_subscriber_refuses_what_docs_mqtt_does_not_describe(database):
    st = Store(database)
    sub = Subscriber(HC.BrokerConfig(), st)
    sub.handle("mjtable/t1/availability", b"online")
    sub.handle("mjtable/t1/event/score", json.dumps(_event("t1", 1, "score", {"total": 8})).encode())
    for topic, payload in [("mjtable/t1/event/score", b"{not json"), ("mjtable/t1/event/cycle",
                           json.dumps(_event("t1", 2, "score", {})).encode()), ("mjtable/a+b/status", b"{}"),
                           ("mjtable/t1/status", b'{"no": "state"}'), ("mjtable/t1/other", b"{}"),
                           ("mjtable/t1/availability", b"\xff")]:
        with pytest.raises(BadPayload):
            sub.handle(topic, payload)
    assert st.count() == 1
    st.close()


def test_hall_toml(tmp_path):
    cred = tmp_path / "hall.cred"
    cred.write_text("hall:pw\n")
    cred.chmod(0o600)
    p = tmp_path / "hall.toml"
    p.write_text(f'[hall]\nport = 8091\nfault_days = 3\ndatabase = "{tmp_path}/h.sqlite"\n'
                 f'[mqtt]\nhost = "broker.local"\nport = 1884\ncredentials_file = "{cred}"\nclient_id = "hall-2"\n')
    cfg = HC.load(p)
    assert (cfg.port, cfg.fault_days, cfg.mqtt.host, cfg.mqtt.broker_port, cfg.mqtt.client_id) == \
        (8091, 3, "broker.local", 1884, "hall-2")
    p.write_text('[hall]\ndatabase = "postgresql://hall:secret@db.local:5433/hall"\n')
    assert HC.load(p).database == "postgresql://hall:secret@db.local:5433/hall"  # a URL stays text
    for body, words in [('[hall]\ndatabase = "mysql://h/db"\n', "mysql:// databases are not supported"),
                        ('[hall]\nfault_days = 0\n', "hall.fault_days must be 1-365"),
                        ('[mqtt]\nqos = 1\n', "unknown key mqtt.qos"),
                        ('[mqtt]\nport = 0\n', "mqtt.port must be 1-65535")]:
        p.write_text(body)
        with pytest.raises(ConfigError, match=words):
            HC.load(p)
    cred.chmod(0o640)
    p.write_text(f'[mqtt]\ncredentials_file = "{cred}"\n')
    with pytest.raises(ConfigError, match="chmod 600"):
        HC.load(p)


# ---- the hall against a real broker and real tables ----
class Hall:
    """``mjtable hall`` in a child process."""

    def __init__(self, tmp: Path, config: Path, port: int | None = None) -> None:
        self.tmp, self.config = tmp, config
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.start()

    def start(self) -> None:
        env = {**os.environ, "MJTABLE_STATE_DIR": str(self.tmp / "hall-state"), "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen([sys.executable, "-m", "app", "hall", "--config", str(self.config),
                                      "--port", str(self.port), "--token-file", str(self.tmp / "hall-token"),
                                      "--database", str(self.tmp / "hall.sqlite")],
                                     cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        end = time.monotonic() + 60
        try:
            while True:
                assert self.proc.poll() is None, self.proc.stderr.read()
                try:
                    if httpx.get(self.url + "/", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                assert time.monotonic() < end, "the hall did not start"
                time.sleep(0.1)
        except BaseException:  # not left running behind the failed test
            self.proc.kill()
            self.proc.wait(20)
            raise
        self.token = (self.tmp / "hall-token").read_text().strip()

    def get(self, path: str) -> dict:
        r = httpx.get(self.url + path, headers={"Authorization": f"Bearer {self.token}"}, timeout=10)
        assert r.status_code == 200, r.text
        return r.json()

    def stop(self, sig=signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        self.proc.wait(20)
        return self.proc.returncode


def _until(cond, timeout: float, what: str):
    end = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        assert time.monotonic() < end, f"{what}: not within {timeout} s"
        time.sleep(0.2)


def table_config(tmp: Path, port: int, tid: str, password: str) -> Path:
    """The table's table.toml: [mqtt] to the broker on 127.0.0.1:``port`` as user ``tid``."""
    cred = tmp / f"{tid}.cred"
    cred.write_text(f"{tid}:{password}\n")
    cred.chmod(0o600)
    p = tmp / f"{tid}.toml"
    p.write_text(f'[mqtt]\nenabled = true\nhost = "127.0.0.1"\nport = {port}\ntable_id = "{tid}"\n'
                 f'credentials_file = "{cred}"\nkeepalive = 5\n')
    return p


def _cycle(srv: Server, auth: dict, states=("walls-up", "fault")) -> str:
    assert httpx.post(srv.url + "/api/cycle", headers=auth, timeout=10).status_code == 200
    return _until(lambda: (s := httpx.get(srv.url + "/api/status", timeout=5).json()["state"]) in states and s,
                  60, "the cycle's end")


def test_hall_sees_the_tables_through_the_broker(tmp_path):
    broker = Broker(tmp_path / "broker", USERS, ACL)
    tables: list[Server] = []
    hall = None
    ok = False
    try:
        hall_cred = tmp_path / "hall.cred"
        hall_cred.write_text(f"hall:{USERS['hall']}\n")
        hall_cred.chmod(0o600)
        hall_toml = tmp_path / "hall.toml"
        hall_toml.write_text(f'[mqtt]\nhost = "127.0.0.1"\nport = {broker.port}\ncredentials_file = "{hall_cred}"\n')
        hall = Hall(tmp_path, hall_toml)
        assert httpx.get(hall.url + "/api/fleet", timeout=5).status_code == 401  # the token is needed
        assert httpx.get(hall.url + "/api/fleet", headers={"Authorization": "Bearer nope"}, timeout=5).status_code == 401
        _until(lambda: hall.get("/api/fleet")["broker"]["connected"], 20, "the hall on the broker")

        # t1: a lift whose motor capacitor is failing (travel grows each cycle; wear 0.02 per stroke,
        # not the default 0.2, which reaches the deadline at the fourth cycle: too soon for a trend);
        # t2: a lift that does not reach the top (升牌杆不到位)
        for tid, fault in (("t1", "lift-slow:W:wear=0.02"), ("t2", "lift-short:E")):
            d = tmp_path / tid
            d.mkdir()
            tables.append(Server(d, "--config", str(table_config(tmp_path, broker.port, tid, USERS[tid])), "--no-preload",
                                 "--fault", fault, speed=50.0))
        t1, t2 = tables
        auth1, auth2 = ({"Authorization": f"Bearer {s.token}"} for s in tables)
        assert _cycle(t2, auth2) == "fault"
        fleet = _until(lambda: (f := hall.get("/api/fleet")) and len(f["tables"]) == 2 and f, 30, "two tables")
        faults = _until(lambda: hall.get("/api/faults")["faults"], 30, "t2's fault at the hall")
        assert faults[0]["table"] == "t2" and faults[0]["code"] and faults[0]["side"] == "E" and faults[0]["observed"]
        _until(lambda: {t["table"]: t["fault_code"] for t in hall.get("/api/fleet")["tables"]}.get("t2")
               == faults[0]["code"], 10, "t2's status with its fault")

        # the hall is killed while t1 runs cycles: its session on the broker keeps them
        for _ in range(3):
            assert _cycle(t1, auth1) == "walls-up"
        hall.stop(signal.SIGKILL)
        for _ in range(5):
            assert _cycle(t1, auth1) == "walls-up"
        hall.start()
        want = httpx.get(t1.url + "/api/log", params={"kind": "cycle", "limit": 100}, timeout=5).json()["events"]
        assert len(want) == 8
        got = _until(lambda: (e := hall.get("/api/events?table=t1&kind=cycle&limit=100")["events"])
                     and len(e) == 8 and e, 30, "every cycle of t1 at the hall after its restart")
        assert sorted(e["seq"] for e in got) == sorted(e["id"] for e in want)  # each once
        maint = _until(lambda: hall.get("/api/maintenance")["lifts"], 10, "t1's W lift in the maintenance list")
        assert (maint[0]["table"], maint[0]["side"]) == ("t1", "W") and maint[0]["cycles_left"] > 0
        assert all((m["table"], m["side"]) != ("t1", "E") for m in maint)
        _screenshots(hall)
        ok = True
    finally:
        codes = [s.stop() for s in tables] + ([(hall.stop(), "", "hall")] if hall is not None else [])
        broker.stop()
    if ok:  # a clean stop of every process (not checked when the test failed before: that error is the one)
        assert [c[0] for c in codes] == [0] * len(codes), codes


#: the screenshots' two sizes: (name, viewport, device scale factor)
VIEWPORTS = (("desktop", {"width": 1280, "height": 900}, 1), ("phone", {"width": 390, "height": 844}, 2))


def viewport_pages(p):
    """Debian's Chromium, headless, under Playwright ``p`` (never ``playwright install``'s browser):
    yields ``(size, page)`` for each of ``VIEWPORTS``, closing each page after its turn and the
    browser at the end (use it under ``contextlib.closing``)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                                      "--no-first-run"])
    try:
        for size, viewport, scale in VIEWPORTS:
            page = browser.new_page(viewport=viewport, device_scale_factor=scale)
            try:
                yield size, page
            finally:
                page.close()
    finally:
        browser.close()


def _screenshots(hall: Hall) -> None:
    """The page in Chromium, desktop and phone: the two tables, t2's fault, t1's lift in the list."""
    from playwright.sync_api import expect, sync_playwright
    with sync_playwright() as p, contextlib.closing(viewport_pages(p)) as pages:
        errors: list[str] = []
        for name, page in pages:
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(f"{hall.url}/#token={hall.token}")
            expect(page.locator("#tables .card")).to_have_count(2, timeout=15000)
            expect(page.locator("#tables .card.fault")).to_have_count(1)
            expect(page.locator("#faults tbody tr").first).to_contain_text("t2")
            expect(page.locator("#maintenance tbody tr").first).to_contain_text("t1")
            assert hall.token not in page.url
            assert page.evaluate("document.querySelectorAll('[style]').length") == 0
            page.screenshot(path=str(ARTIFACTS / f"hall_{name}.png"), full_page=True)
            if name == "desktop":  # a tournament registered on the page: a bad line named, then a good one
                assert errors == [], errors
                page.click("#t-register summary")
                page.fill("#t-form-name", "Spring cup")
                page.fill("#t-form-csv", "round,table,E,S,W,N\n1,t1,Ann,Bo,Cai,Dev\n1,t2,Eli,Fay,Gus,Ann\n")
                page.click("#t-form button[type=submit]")
                expect(page.locator("#message")).to_contain_text("Ann also sits at table t1")
                errors.clear()  # the browser logs the refused request (422): expected here
                page.fill("#t-form-csv", "round,table,E,S,W,N\n1,t1,Ann,Bo,Cai,Dev\n1,t2,Eli,Fay,Gus,Hao\n")
                page.click("#t-form button[type=submit]")
                expect(page.locator("#t-name")).to_have_text("Spring cup")
                expect(page.locator("#t-progress")).to_contain_text("2 sessions: 0 started")
                expect(page.locator("#t-round")).to_have_value("1")  # the round being played: the first
        assert errors == [], errors  # nothing refused by the CSP, no script error
