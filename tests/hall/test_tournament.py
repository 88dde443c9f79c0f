"""A tournament of 4 tables and 2 rounds (issue #22): four table services on the simulated machine
(in this process, their real API, event log, outbox and MQTT publisher), a real Mosquitto, and the
hall (its subscriber, database and API). Hands are scored through each table's API; one is undone
and one edited at the table; the broker is restarted mid-tournament and the hall stopped and
started again. The hall's standings are checked against the rules computed here from the hands
(第十条: hand points, 500 base points, standard points 4/2/1/0 with ties sharing; 第十一条: the
ranking), each hand counted once."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
from mqtt_broker import Broker  # noqa: E402
from test_hall import ACL  # noqa: E402

from hall import tournament as T  # noqa: E402
from hall.config import BrokerConfig  # noqa: E402
from hall.errors import HallError  # noqa: E402
from hall.store import Store  # noqa: E402
from hall.subscriber import Subscriber  # noqa: E402

TOKEN = "tournament-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
TABLES = ("t1", "t2", "t3", "t4")
PLAYERS = [f"P{i:02d}" for i in range(1, 17)]
USERS = {**{t: f"pw-{t}" for t in TABLES}, "hall": "pw-hall"}
#: round 1: P01-P04 at t1 ...; round 2: each table gets one player of every round-1 table
SEATING = [(1, t, PLAYERS[4 * i:4 * i + 4]) for i, t in enumerate(TABLES)] + \
          [(2, t, [PLAYERS[i], PLAYERS[4 + i], PLAYERS[8 + i], PLAYERS[12 + i]]) for i, t in enumerate(TABLES)]
HAND_A = "123m456m789m234p5s5s"        # on a discard
HAND_B = "[EEE,1][SSSS,1]55pWWWNNN"     # self-drawn


# ---- the rules, computed here (the oracle) ----
def rule_standings(sessions: list[tuple[list[str], list[tuple[str, str | None, int]]]]) -> list[tuple]:
    """``[(player, standard points, match points)]`` ranked by 第十一条 from each session's players
    (E S W N) and hands ``(winner side, discarder side or None, total)`` (no hand past the East round:
    sides are the starting sides)."""
    std_of: dict[str, list[float]] = {}
    mp_of: dict[str, int] = {}
    for players, hands in sessions:
        pts = {s: 500 for s in "ESWN"}
        for w, d, total in hands:
            for s in "ESWN":
                if s == w:
                    pts[s] += 3 * (8 + total) if d is None else (8 + total) + 16
                elif d is None or s == d:
                    pts[s] -= 8 + total
                else:
                    pts[s] -= 8
        order = sorted("ESWN", key=lambda s: -pts[s])
        value = [4, 2, 1, 0]
        for i, s in enumerate(order):
            tied = [k for k, o in enumerate(order) if pts[o] == pts[s]]
            share = sum(value[k] for k in tied) / len(tied)
            p = players["ESWN".index(s)]
            std_of.setdefault(p, []).append(share)
            mp_of[p] = mp_of.get(p, 0) + pts[s] - 500
    key = {p: (-sum(v), -mp_of[p], tuple(-x for x in sorted(v, reverse=True))) for p, v in std_of.items()}
    return [(p, sum(std_of[p]), mp_of[p]) for p in sorted(std_of, key=lambda p: (key[p], p))]


# ---- the seating ----
def test_seating_csv_and_its_errors():
    text = "\ufeffround,table,E,S,W,N\n" + "".join(f"{r},{t},{','.join(p)}\n" for r, t, p in SEATING)
    seats = T.parse_csv(text)
    assert len(seats) == 8 and seats[4] == T.Seat(2, "t1", ("P01", "P05", "P09", "P13"))
    for bad, words in [("round,table,E,S,W\n", "header"),
                       ("round,table,E,S,W,N\nx,t1,a,b,c,d\n", "line 2: the round must be a number"),
                       ("round,table,E,S,W,N\n1,t1,a,b,c\n", "line 2: 6 fields"),
                       ("round,table,E,S,W,N\n1,t1,a,b,c,d\n1,t2,e,f,g,a\n", "a also sits at table t1"),
                       ("round,table,E,S,W,N\n1,t1,a,b,c,d\n1,t1,e,f,g,h\n", "seated twice"),
                       ("round,table,E,S,W,N\n1,t/1,a,b,c,d\n", "table id"),
                       ("round,table,E,S,W,N\n0,t1,a,b,c,d\n", "from 1")]:
        with pytest.raises(HallError, match=words):
            T.parse_csv(bad)


# ---- the store's tournament, on SQLite and on PostgreSQL ----
def test_store_keeps_the_tournament_its_round_and_the_match_events(database):
    st = Store(database)
    assert st.tournament() == (None, []) and st.current_round() is None
    with pytest.raises(HallError, match="no tournament is registered"):
        st.set_round(1)
    seats = T.check([T.Seat(r, t, tuple(p)) for r, t, p in SEATING])
    st.set_tournament("Hall cup", seats)
    assert st.current_round() == 1
    st.set_round(2)
    with pytest.raises(HallError, match="round 3 is not in the tournament: its rounds are 1, 2"):
        st.set_round(3)
    name, rows = st.tournament()
    assert name == "Hall cup" and rows[4] == (2, "t1", ["P01", "P05", "P09", "P13"]) and len(rows) == 8
    ev = {"id": "L:1", "table": "t1", "log": "L", "seq": 1, "kind": "match", "t": 1796137364.125,
          "data": {"action": "new", "players": ["甲", "B", "C", "D"]}}
    assert st.add_event("t1", ev) and not st.add_event("t1", ev)
    st.add_event("t1", {**ev, "id": "L:2", "seq": 2, "kind": "cycle", "data": {"cycle": 1}})
    st.set_availability("t2", "online")
    st.close()
    st = Store(database)  # what was kept is there after a restart of the hall
    assert st.current_round() == 2 and st.tournament()[0] == "Hall cup" and st.table_ids() == ["t2"]
    assert st.match_events(["t1", "t3"]) == {"t1": [{"log": "L", "seq": 1, "kind": "match", "t": 1796137364.125,
                                                     "data": ev["data"]}], "t3": []}
    st.set_tournament("Spring cup", seats[4:])  # replaces the tournament; its first round is current
    assert st.current_round() == 2 and len(st.tournament()[1]) == 4
    st.close()


def test_a_postgresql_url_that_does_not_work_is_one_line_without_its_password(postgres):
    with pytest.raises(HallError) as e:
        Store(postgres.url("postgres", password="not-the-password"))
    msg = e.value.message
    assert "cannot open the hall's database postgresql://hall:***@127.0.0.1:" in msg and "not-the-password" not in msg
    assert "\n" not in msg and "password authentication failed" in msg


# ---- what each table is told: its seating for the current round ----
def test_seating_messages_tell_each_table_its_round_and_clear_the_others():
    seats = T.check([T.Seat(r, t, tuple(p)) for r, t, p in SEATING if (r, t) != (2, "t4")])  # t4 sits out round 2
    msgs = T.seating_messages("Hall cup", seats, 2, known=["t1", "t9"])
    assert set(msgs) == {"t1", "t2", "t3", "t4", "t9"} and msgs["t9"] is None  # t9: not in the tournament
    assert msgs["t2"] == {"tournament": "Hall cup", "round": 2, "rounds": [1, 2], "table": "t2",
                          "players": ["P02", "P06", "P10", "P14"]}
    assert msgs["t4"]["players"] is None and msgs["t4"]["round"] == 2
    assert T.seating_messages(None, [], None, known=["t1"]) == {"t1": None}


def test_the_table_checks_the_seating_it_reads(tmp_path):
    import json

    sys.path.insert(0, str(TESTS / "service"))
    from service_support import make_client
    client, _, log = make_client(tmp_path)  # a table without [mqtt]: no hall to hear from
    with client:
        assert client.get("/api/seating").json() == {"reporting": False, "seating": None}
    log.close()

    from service.mqtt import parse_seating
    good = {"tournament": "Hall cup", "round": 2, "rounds": [1, 2], "table": "t2", "players": ["a", "b", "c", "d"],
            "t": 1.5}
    assert parse_seating("t2", json.dumps(good).encode()) == good
    assert parse_seating("t2", b"") is None  # cleared: no tournament here
    assert parse_seating("t2", json.dumps({**good, "players": None}).encode())["players"] is None
    for bad, words in [(b"\xff", "not UTF-8 JSON"), (b"[1]", "JSON object"), ({**good, "table": "t3"}, "names table 't3'"),
                       ({**good, "round": 3}, "one of its rounds"), ({**good, "players": ["a", "b", "c"]}, "four names"),
                       ({**good, "tournament": ""}, "tournament must be a name")]:
        with pytest.raises(ValueError, match=words):
            parse_seating("t2", bad if isinstance(bad, bytes) else json.dumps(bad).encode())


# ---- the tournament end to end ----
class Table:
    """One table service in this process (simulated machine), reporting to the broker."""

    def __init__(self, tmp: Path, broker: Broker, tid: str, seed: int) -> None:
        from fastapi.testclient import TestClient

        import hardware
        from controller import cycle as CY
        from service.app import create_app
        from service.config import MqttConfig
        from service.control import Control
        from service.eventlog import EventLog
        from service.hub import Hub
        from service.mqtt import EVENT_KINDS, make_publisher
        from service.scorer import Scorer
        backend = hardware.open_backend("sim", seed=seed)
        self.log = EventLog(tmp / f"{tid}.sqlite", outbox=EVENT_KINDS)
        self.control = Control(backend, CY.Settings.from_profile(backend.profile, 136), self.log, Hub(), speed=0)
        cred = tmp / f"{tid}.cred"
        cred.write_text(f"{tid}:{USERS[tid]}\n")
        cred.chmod(0o600)
        self.pub = make_publisher(MqttConfig(enabled=True, host="127.0.0.1", port=broker.port, table_id=tid,
                                             credentials_file=cred, keepalive=5), self.log, self.control.hub.listen)
        self.client = TestClient(create_app(self.control, self.log, TOKEN, Scorer(None)))
        self.client.__enter__()

    def post(self, path: str, body: dict | None = None, method: str = "post") -> dict:
        r = getattr(self.client, method)(path, headers=AUTH, **({"json": body} if body is not None else {}))
        assert r.status_code == 200, r.text
        return r.json()

    def win(self, winner: str, discarder: str | None) -> tuple[int, int]:
        """Record a win; returns (hand id, total)."""
        hand = HAND_A if discarder else HAND_B
        r = self.post("/api/match/hand", {"hand": hand, "winner": winner, "discarder": discarder})
        return r["recorded"], r["score"]["total"]

    def close(self) -> None:
        self.client.__exit__(None, None, None)
        self.pub.stop()
        self.log.close()


def _wait(cond, timeout: float, what: str):
    end = time.monotonic() + timeout
    while not (v := cond()):
        assert time.monotonic() < end, f"{what}: not within {timeout} s"
        time.sleep(0.1)
    return v


def test_tournament_of_4_tables_and_2_rounds_with_faults(tmp_path):
    from fastapi.testclient import TestClient

    from hall.app import create_app
    broker = Broker(tmp_path / "broker", USERS, ACL)
    store = Store(tmp_path / "hall.sqlite")
    hall_cred = tmp_path / "hall.cred"
    hall_cred.write_text(f"hall:{USERS['hall']}\n")
    hall_cred.chmod(0o600)
    hall_cfg = BrokerConfig(host="127.0.0.1", port=broker.port, credentials_file=hall_cred, keepalive=5)
    sub = Subscriber(hall_cfg, store)
    sub.start()
    tables = {t: Table(tmp_path, broker, t, seed=i) for i, t in enumerate(TABLES)}
    hall = TestClient(create_app(store, TOKEN, sub))
    played: dict[tuple[int, str], list[tuple[str, str | None, int]]] = {}
    try:
        assert sub.subscribed.wait(15)
        csv_text = "round,table,E,S,W,N\n" + "".join(f"{r},{t},{','.join(p)}\n" for r, t, p in SEATING)
        r = hall.post("/api/tournament/csv", params={"name": "Hall cup"}, content=csv_text.encode(), headers=AUTH)
        assert r.status_code == 200 and r.json()["seats"] == 8, r.text
        assert hall.get("/api/tournament").status_code == 401  # the token is needed
        # each table is told its seating for round 1 (retained mjtable/<table_id>/seating from the hall)
        _wait(lambda: all(tables[t].pub.seating and tables[t].pub.seating["players"] == p
                          for r_, t, p in SEATING if r_ == 1), 20, "every table told its round-1 seating")
        assert hall.post("/api/tournament/round", json={"round": 2}).status_code == 401
        r = hall.post("/api/tournament/round", json={"round": 3}, headers=AUTH)
        assert r.status_code == 422 and "its rounds are 1, 2" in r.text
        assert tables["t1"].pub.seating["round"] == 1  # nothing changed

        def play(rnd: int, plan):
            for (r_, t, players) in SEATING:
                if r_ != rnd or t not in plan:
                    continue
                tab = tables[t]
                tab.post("/api/match/new", {"players": players})
                hands = played.setdefault((rnd, t), [])
                for w, d in plan[t]:
                    _, total = tab.win(w, d)
                    hands.append((w, d, total))

        # round 1: at t1 a hand is recorded, then undone at the table; at t2 a hand is edited
        play(1, {"t1": [("E", "S"), ("S", None)], "t2": [("W", "N"), ("N", "E")], "t3": [("E", None)],
                 "t4": [("N", "W"), ("S", "W"), ("E", "S")]})
        tables["t1"].post("/api/match/undo")
        played[(1, "t1")].pop()
        t2_first = tables["t2"].client.get("/api/match").json()["hands"][0]["id"]
        edited = tables["t2"].post(f"/api/match/hands/{t2_first}", {"hand": HAND_B, "winner": "S", "discarder": None},
                                   method="put")
        played[(1, "t2")][0] = ("S", None, edited["score"]["total"] if "score" in edited else
                                next(h["total"] for h in edited["hands"] if h["id"] == t2_first))
        # the broker restarted between the rounds: round 2 starts while it is down
        broker.stop()
        _wait(lambda: not any(t.pub.state()["connected"] for t in tables.values()), 20, "tables see the broker gone")
        play(2, {"t1": [("S", "E")], "t3": [("W", None), ("N", "S")]})
        broker.start()
        # the hall stopped and started again (a new subscriber on the same database and session)
        sub.stop()
        play(2, {"t2": [("E", "W"), ("W", None)], "t4": [("S", "N")]})
        sub = Subscriber(hall_cfg, store)
        sub.start()
        hall = TestClient(create_app(store, TOKEN, sub))
        _wait(lambda: all(t.log.pending() == 0 for t in tables.values()), 60, "every outbox drained")
        want = sum(len(t.log.events_of(T.MATCH_KINDS)) for t in tables.values())
        _wait(lambda: sum(len(v) for v in store.match_events(TABLES).values()) == want, 30,
              "every match event at the hall")

        got = hall.get("/api/tournament", headers=AUTH).json()
        # each session's hands once, edits and undo applied
        for s in got["sessions"]:
            assert s["match"] is not None and s["hands"] == len(played[(s["round"], s["table"])]), s
        sessions = [(p, played[(r, t)]) for r, t, p in SEATING]
        expect = rule_standings(sessions)
        assert [(s["player"], s["standard_points"], s["match_points"]) for s in got["standings"]] == \
            [(p, pytest.approx(sp), mp) for p, sp, mp in expect]
        assert sum(s["standard_points"] for s in got["standings"]) == 8 * 7  # 4+2+1+0 per session
        r1 = rule_standings([(p, played[(r, t)]) for r, t, p in SEATING if r == 1])
        assert [(s["player"], s["match_points"]) for s in got["rounds"]["1"]] == [(p, mp) for p, _, mp in r1]
        csv_text = hall.get("/api/tournament/csv", headers=AUTH).content.decode("utf-8-sig")
        assert csv_text.startswith("overall\r\nrank,player,standard points,match points")
        assert f"1,{expect[0][0]}," in csv_text and "round 2" in csv_text
        assert sub.rejected == 0
        _screenshot(create_app(store, TOKEN, sub), expect[0][0])
    finally:
        for t in tables.values():
            t.close()
        sub.stop()
        store.close()
        broker.stop()


def _screenshot(app, leader: str) -> None:
    """The hall's page with the tournament's standings, in Chromium (phone size): kept in
    tests/hall/artifacts/hall_tournament.png."""
    import shutil
    import threading

    import uvicorn
    from playwright.sync_api import expect, sync_playwright
    sys.path.insert(0, str(TESTS / "service"))
    from service_support import ROOT, free_port
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    th = threading.Thread(target=server.run, daemon=True)
    th.start()
    try:
        _wait(lambda: server.started, 20, "the hall's page served")
        out = ROOT / "tests" / "hall" / "artifacts"
        out.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium") or "/usr/bin/chromium",
                                        args=["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"])
            try:
                errors: list[str] = []
                page = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2)
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.goto(f"http://127.0.0.1:{port}/#token={TOKEN}")
                expect(page.locator("#standings tbody tr")).to_have_count(16, timeout=15000)
                expect(page.locator("#standings tbody tr").first).to_contain_text(leader)
                expect(page.locator("#t-name")).to_have_text("Hall cup")
                page.locator("#tournament").screenshot(path=str(out / "hall_tournament.png"))
                with page.expect_download() as dl:
                    page.click("#t-csv")
                assert dl.value.suggested_filename == "mjtable-standings.csv"
                assert errors == [], errors
            finally:
                browser.close()
    finally:
        server.should_exit = True
        th.join(10)
