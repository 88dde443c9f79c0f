"""The tournament of issue #22 with real processes: a Mosquitto (credentials and ACL on), ``mjtable
hall`` and four ``mjtable serve --sim`` tables, each a child process with its own state folder and
``[mqtt]`` configuration. 4 tables, 2 rounds; every match is started at its table with the seating
the table read from the hall over the broker (``mjtable/<table_id>/seating``, ``GET /api/seating``),
every hand scored through the table's API (``POST /api/match/hand``), one undone and one edited.

The same tournament is played twice on the same processes, hand for hand: once without faults
(players P01-P16), then, registered anew with players Q01-Q16 in the same seats, with the broker
restarted mid-round, the hall killed (SIGKILL) and started again, and a table cut off from the
broker (its connection goes through a relay that goes silent, as a dead switch: ``Cable``) while it
records hands and while the round changes. Then: every match event of every table reaches the hall
exactly once (no hand lost, none counted twice), and the standings of the two runs are identical
(Q for P) and equal to the rules computed here from the hands played (第十条, 第十一条; ``rule_standings``).

The cut lasts ``MJTABLE_HALL_CUT_S`` seconds (default 15; the issue's minute with 60). Why 15 s
exercises the same paths as 60 s: with the tables' keep-alive of 5 s, the broker gives up on the
silent table after 7.5 s (and publishes its will), and the table's client gives up on the broker
within 10 s; from then on the table only retries connections that the relay swallows, and the
events recorded wait in its outbox; nothing else happens until the cable is mended, however long
that is. A 60 s cut was run once by hand (see the closing report of the branch).
"""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
import signal
import sys
import time
from pathlib import Path

import httpx
import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(TESTS / "service"))
from mqtt_broker import MOSQUITTO, Broker, Cable  # noqa: E402
from service_support import Server  # noqa: E402
from test_hall import ACL, ARTIFACTS, Hall, _until, table_config, viewport_pages  # noqa: E402
from test_tournament import HAND_A, HAND_B, SEATING, TABLES, rule_standings  # noqa: E402

pytestmark = pytest.mark.skipif(not os.path.exists(MOSQUITTO), reason="mosquitto is not installed (tools/system-deps)")

USERS = {**{t: f"pw-{t}" for t in TABLES}, "hall": "pw-hall"}
CUT_S = float(os.environ.get("MJTABLE_HALL_CUT_S", "15"))
CUT_TABLE = "t3"
MATCH_KINDS = ("match", "score", "draw")

#: the tournament, step by step: ("new", table, round) starts the table's match with the seating it
#: was told; ("win", table, winner, discarder or None); ("undo", table); ("edit", table) makes the
#: table's first hand a self-drawn HAND_B by S; ("round", n) the organiser sets the round;
#: ("fault", name) a fault of the faulty run at this point
PLAN = [("new", "t1", 1), ("new", "t2", 1), ("new", "t4", 1), ("new", "t3", 1),
        ("win", "t1", "E", "S"), ("win", "t1", "S", None), ("win", "t2", "W", "N"), ("win", "t3", "E", None),
        ("win", "t4", "N", "W"), ("undo", "t1"), ("edit", "t2"),
        ("fault", "broker-down"),
        ("win", "t2", "N", "E"), ("win", "t4", "S", "W"), ("win", "t4", "E", "S"),
        ("fault", "broker-up"), ("fault", "cut"),
        ("win", "t3", "W", "N"), ("win", "t3", "N", None),
        ("round", 2),
        ("new", "t1", 2), ("new", "t2", 2), ("new", "t4", 2),
        ("win", "t1", "S", "E"), ("win", "t2", "E", "W"),
        ("fault", "hall-killed"),
        ("win", "t4", "S", "N"), ("win", "t2", "W", None), ("win", "t1", "N", "S"),
        ("fault", "hall-back"), ("fault", "mend"),
        ("new", "t3", 2), ("win", "t3", "W", None), ("win", "t3", "N", "S")]


class Tournament:
    """The processes of one run in ``tmp``: broker, hall, four tables (``CUT_TABLE`` behind a relay)."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.tables: dict[str, Server] = {}
        self.hall: Hall | None = None
        self.cable: Cable | None = None
        self.broker = Broker(tmp / "broker", USERS, ACL)
        try:
            cred = tmp / "hall.cred"
            cred.write_text(f"hall:{USERS['hall']}\n")
            cred.chmod(0o600)
            toml = tmp / "hall.toml"
            toml.write_text(f'[mqtt]\nhost = "127.0.0.1"\nport = {self.broker.port}\ncredentials_file = "{cred}"\n'
                            'keepalive = 5\n')
            self.hall = Hall(tmp, toml)
            self.cable = Cable(self.broker.port)

            def table(tid: str) -> Server:
                d = tmp / tid
                d.mkdir()
                port = self.cable.port if tid == CUT_TABLE else self.broker.port
                return Server(d, "--config", str(table_config(tmp, port, tid, USERS[tid])), "--no-preload",
                              ready_timeout=120)  # four starting at once on a busy machine
            with ThreadPoolExecutor(len(TABLES)) as pool:  # the four start side by side
                futures = {tid: pool.submit(table, tid) for tid in TABLES}
                errors = []
                for tid, f in futures.items():
                    try:
                        self.tables[tid] = f.result()
                    except Exception as e:  # noqa: BLE001 - the others are stopped by close() below
                        errors.append(e)
                if errors:
                    raise errors[0]
            self.auth = {t: {"Authorization": f"Bearer {s.token}"} for t, s in self.tables.items()}
            _until(lambda: hall_get(self, "/api/fleet")["broker"]["connected"], 20, "the hall on the broker")
        except BaseException:
            self.close()
            raise

    def post(self, tid: str, path: str, body: dict | None = None, method: str = "post") -> dict:
        r = httpx.request(method.upper(), self.tables[tid].url + path, headers=self.auth[tid], json=body, timeout=20)
        assert r.status_code == 200, r.text
        return r.json()

    def seating(self, tid: str, rnd: int, name: str, timeout: float) -> list[str]:
        """The players the table was told for round ``rnd`` of ``name`` (waits until it has been told)."""
        def told():
            s = httpx.get(self.tables[tid].url + "/api/seating", timeout=5).json()
            assert s["reporting"], s
            here = s["seating"]
            return here if here and (here["tournament"], here["round"]) == (name, rnd) else None
        return _until(told, timeout, f"{tid} told its seating of round {rnd}")["players"]

    def close(self) -> list[int]:
        codes = [s.stop()[0] for s in self.tables.values()]
        if self.hall is not None:
            codes.append(self.hall.stop())
        if self.cable is not None:
            self.cable.close()
        self.broker.stop()
        return codes


def hall_get(run: Tournament, path: str) -> dict:
    assert run.hall is not None
    return run.hall.get(path)


def seating(letter: str) -> list[tuple[int, str, list[str]]]:
    """``SEATING`` with the players named ``<letter>01``-``<letter>16``."""
    return [(r, t, [letter + p[1:] for p in players]) for r, t, players in SEATING]


def play(run: Tournament, name: str, seats: list[tuple[int, str, list[str]]], faults: bool
         ) -> dict[tuple[int, str], list[tuple[str, str | None, int]]]:
    """Register the tournament ``name`` with ``seats`` and play ``PLAN`` (with its faults when
    ``faults``); returns each session's hands (winner side, discarder side or None, total) as the
    table scored them, undone hands out, edits applied."""
    played: dict[tuple[int, str], list[tuple[str, str | None, int]]] = {}
    rnd_of: dict[str, int] = {}
    first_hand: dict[str, int] = {}
    csv_text = "round,table,E,S,W,N\n" + "".join(f"{r},{t},{','.join(p)}\n" for r, t, p in seats)
    r = httpx.post(run.hall.url + "/api/tournament/csv", params={"name": name}, content=csv_text.encode(),
                   headers={"Authorization": f"Bearer {run.hall.token}"}, timeout=10)
    assert r.status_code == 200 and r.json() == {"name": name, "seats": 8, "round": 1}, r.text
    cut_at = None
    for step in PLAN:
        what = step[0]
        if what == "new":
            _, tid, rnd = step
            # the table learns its seating from the hall; after the cut it gets the retained one
            players = run.seating(tid, rnd, name, 90 if tid == CUT_TABLE else 20)
            assert players == next(p for r_, t, p in seats if (r_, t) == (rnd, tid))
            run.post(tid, "/api/match/new", {"players": players})
            rnd_of[tid] = rnd
            played[(rnd, tid)] = []
        elif what == "win":
            _, tid, winner, discarder = step
            r = run.post(tid, "/api/match/hand", {"hand": HAND_A if discarder else HAND_B, "winner": winner,
                                                  "discarder": discarder})
            first_hand.setdefault(tid + str(rnd_of[tid]), r["recorded"])
            played[(rnd_of[tid], tid)].append((winner, discarder, r["score"]["total"]))
        elif what == "undo":
            run.post(step[1], "/api/match/undo")
            played[(rnd_of[step[1]], step[1])].pop()
        elif what == "edit":
            tid = step[1]
            r = run.post(tid, f"/api/match/hands/{first_hand[tid + str(rnd_of[tid])]}",
                         {"hand": HAND_B, "winner": "S", "discarder": None}, method="put")
            played[(rnd_of[tid], tid)][0] = ("S", None, r["score"]["total"])
        elif what == "round":
            r = httpx.post(run.hall.url + "/api/tournament/round", json={"round": step[1]},
                           headers={"Authorization": f"Bearer {run.hall.token}"}, timeout=10)
            assert r.status_code == 200, r.text
        elif faults:
            fault = step[1]
            if fault == "broker-down":
                run.broker.stop()  # SIGTERM: the tables' connections close at once, the hands go to the outboxes
            elif fault == "broker-up":
                run.broker.start()
            elif fault == "cut":
                run.cable.cut()
                cut_at = time.monotonic()
            elif fault == "hall-killed":
                assert run.hall.stop(signal.SIGKILL) == -signal.SIGKILL
            elif fault == "hall-back":
                run.hall.start()
            elif fault == "mend":
                # the broker gave up on the silent table (keep-alive 5 s x 1.5): its will says offline
                _until(lambda: fleet_of(run).get(CUT_TABLE, {}).get("online") is False, 30,
                       f"the hall sees {CUT_TABLE} offline (its last will)")
                time.sleep(max(0.0, CUT_S - (time.monotonic() - cut_at)))
                run.cable.mend()
    return played


def fleet_of(run: Tournament) -> dict[str, dict]:
    try:
        return {t["table"]: t for t in hall_get(run, "/api/fleet")["tables"]}
    except (httpx.HTTPError, AssertionError):
        return {}


def settle(run: Tournament) -> dict:
    """Wait until the hall holds every match event of every table, each once; returns /api/tournament."""
    def table_events(tid: str) -> list[int]:
        out = []
        for kind in MATCH_KINDS:
            out += [e["id"] for e in httpx.get(run.tables[tid].url + "/api/log", params={"kind": kind, "limit": 1000},
                                                timeout=10).json()["events"]]
        return sorted(out)

    want = {tid: table_events(tid) for tid in TABLES}

    def at_hall(tid: str) -> list[int]:
        out = []
        for kind in MATCH_KINDS:
            out += [e["seq"] for e in hall_get(run, f"/api/events?table={tid}&kind={kind}&limit=1000")["events"]]
        return sorted(out)

    _until(lambda: all(at_hall(t) == want[t] for t in TABLES), 120, "every match event of every table at the hall")
    for tid in TABLES:  # exactly once each (the hall's key is the event id; this is the list it serves)
        got = at_hall(tid)
        assert got == want[tid] and len(set(got)) == len(got), (tid, got, want[tid])
    return hall_get(run, "/api/tournament")


def check_standings(got: dict, played: dict, seats: list[tuple[int, str, list[str]]]) -> None:
    """The hall's sessions and standings against the rules, computed here from the hands played."""
    for s in got["sessions"]:
        assert s["match"] is not None and s["hands"] == len(played[(s["round"], s["table"])]), s
    expect = rule_standings([(p, played[(r, t)]) for r, t, p in seats])
    assert [(s["player"], s["standard_points"], s["match_points"]) for s in got["standings"]] == \
        [(p, pytest.approx(sp), mp) for p, sp, mp in expect]
    assert sorted(s["player"] for s in got["standings"]) == sorted({p for _, _, ps in seats for p in ps})
    for rnd in (1, 2):
        per = rule_standings([(p, played[(r, t)]) for r, t, p in seats if r == rnd])
        assert [(s["player"], s["match_points"]) for s in got["rounds"][str(rnd)]] == [(p, mp) for p, _, mp in per]


def comparable(t: dict, letter: str) -> dict:
    """The tournament as compared between the runs: players named P.. whatever the run's letter,
    and without the match references (each table's own event ids, other in each run) or the name."""
    def rename(x):
        if isinstance(x, str) and x.startswith(letter) and x[1:].isdigit():
            return "P" + x[1:]
        if isinstance(x, list):
            return [rename(v) for v in x]
        if isinstance(x, dict):
            return {k: rename(v) for k, v in x.items() if k not in ("match", "name")}
        return x
    return rename(t)


def test_tournament_with_real_processes_and_faults_matches_the_run_without(tmp_path):
    t0 = time.monotonic()
    run = Tournament(tmp_path)
    ok = False
    try:
        timings = {"start": time.monotonic() - t0}
        results = {}
        for letter, faults in (("P", False), ("Q", True)):
            t1 = time.monotonic()
            seats = seating(letter)
            name = f"Cup {letter}"
            played = play(run, name, seats, faults)
            got = settle(run)
            assert got["name"] == name and got["round"] == 2
            check_standings(got, played, seats)
            results[faults] = (played, got)
            timings["faults" if faults else "clean"] = time.monotonic() - t1
        fleet = hall_get(run, "/api/fleet")
        assert fleet["broker"]["rejected"] == 0
        (p0, clean), (p1, faulty) = results[False], results[True]
        assert p1 == p0  # the same hands, scored the same at the tables
        # standings overall and per round, and every session's points: identical
        assert comparable(faulty, "Q") == comparable(clean, "P")
        _screenshots(run, CUT_TABLE, seating("Q"), "Cup Q")
        ok = True
    finally:
        codes = run.close()
    if ok:
        assert codes == [0] * len(codes), codes  # every process stopped cleanly (SIGTERM)
    print(f"\nstart {timings['start']:.1f} s, clean run {timings['clean']:.1f} s, run with faults "
          f"{timings['faults']:.1f} s (cut {CUT_S:.0f} s); duplicates dropped by the hall: "
          f"{fleet['broker']['duplicates']}")


def _screenshots(run: Tournament, tid: str, seats: list[tuple[int, str, list[str]]], name: str) -> None:
    """The cut table's page after the tournament: round 2 of the tournament and its four players,
    the match started with them (desktop and phone, in Chromium; tests/hall/artifacts/)."""
    from playwright.sync_api import expect, sync_playwright
    players = next(p for r, t, p in seats if (r, t) == (2, tid))
    srv = run.tables[tid]
    with sync_playwright() as p, contextlib.closing(viewport_pages(p)) as pages:
        errors: list[str] = []
        for size, page in pages:
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
            page.add_init_script("localStorage.setItem('mjtable.lang', 'en')")
            page.goto(f"{srv.url}/#token={srv.token}")
            expect(page.locator("#tourney")).to_be_visible(timeout=15000)
            expect(page.locator("#t-name")).to_have_text(name)
            expect(page.locator("#t-round")).to_have_text("round 2 of 2")
            expect(page.locator("#t-seats tbody tr")).to_have_count(4)
            for side, who in zip("ESWN", players):
                expect(page.locator(f"#t-seats tr[data-side={side}] .name")).to_have_text(who)
            expect(page.locator("#t-note")).to_have_text("the match at the table is this round's seating")
            expect(page.locator("#btn-t-start")).to_be_hidden()
            assert page.evaluate("document.querySelectorAll('[style]').length") == 0
            page.locator("#match-view").screenshot(path=str(ARTIFACTS / f"table_seating_{size}.png"))
            if size != "phone":
                continue
            # on the last page: the organiser sets round 1 again; the open page shows it at once (the
            # stream's seating event), says the match is not that seating, and its button starts one
            r = httpx.post(run.hall.url + "/api/tournament/round", json={"round": 1},
                           headers={"Authorization": f"Bearer {run.hall.token}"}, timeout=10)
            assert r.status_code == 200, r.text
            expect(page.locator("#t-round")).to_have_text("round 1 of 2", timeout=20000)
            expect(page.locator("#t-note")).to_have_text("the match at the table is not this round's seating")
            page.locator("#match-view").screenshot(path=str(ARTIFACTS / "table_seating_other_round.png"))
            page.click("#btn-t-start")
            first = next(p for r_, t, p in seats if (r_, t) == (1, tid))
            expect(page.locator("#seats tr[data-side=E] .name")).to_have_text(first[0])
            expect(page.locator("#t-note")).to_have_text("the match at the table is this round's seating")
            expect(page.locator("#btn-t-start")).to_be_hidden()
        assert errors == [], errors  # no script error, no request refused
