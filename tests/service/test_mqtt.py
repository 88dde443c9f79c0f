"""The table reports to an MQTT broker (issue #22): ``[mqtt]`` in table.toml, the event log's
outbox, and the publisher against a real Mosquitto started here (passwords and ACLs on)."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from mqtt_broker import Broker, Cable, Listener  # noqa: E402

from service import config as C  # noqa: E402
from service.errors import ConfigError  # noqa: E402
from service.eventlog import EventLog  # noqa: E402

ACL = """user t1
topic write mjtable/t1/#
topic write homeassistant/#

user t9
topic write mjtable/t9/availability
topic write mjtable/t9/status

user hall
topic read mjtable/#
topic read homeassistant/#
"""
USERS = {"t1": "pw-t1", "t9": "pw-t9", "hall": "pw-hall"}


def _toml(tmp: Path, text: str) -> Path:
    p = tmp / "table.toml"
    p.write_text(text)
    return p


def _cred(tmp: Path, user: str, mode: int = 0o600) -> Path:
    p = tmp / f"{user}.credentials"
    p.write_text(f"{user}:{USERS[user]}\n")
    p.chmod(mode)
    return p


# ---- [mqtt] in table.toml ----
def test_mqtt_is_off_by_default(tmp_path):
    assert C.load(None).mqtt.enabled is False
    assert C.load(_toml(tmp_path, "[service]\nport = 8081\n")).mqtt.enabled is False


def test_mqtt_section_is_read(tmp_path):
    cred = _cred(tmp_path, "t1")
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    cfg = C.load(_toml(tmp_path, f'[mqtt]\nenabled = true\nhost = "hall.local"\ntable_id = "t-07"\n'
                                 f'credentials_file = "{cred}"\nca_file = "{ca}"\nqos = 2\nkeepalive = 20\n')).mqtt
    assert (cfg.enabled, cfg.host, cfg.table_id, cfg.qos, cfg.keepalive) == (True, "hall.local", "t-07", 2, 20)
    assert cfg.broker_port == 8883  # TLS default
    assert C.read_credentials(cfg.credentials_file) == ("t1", "pw-t1")


@pytest.mark.parametrize("body, words", [
    ('enabled = true\n', "table_id is needed"),
    ('table_id = "t/1"\n', "mqtt.table_id must be 1-64 letters"),
    ('table_id = "t1"\nqos = 0\n', "mqtt.qos must be 1 or 2"),
    ('port = 70000\n', "mqtt.port must be 1-65535"),
    ('keepalive = 1\n', "mqtt.keepalive must be 5-600"),
    ('enabled = "yes"\n', "mqtt.enabled has the wrong type"),
    ('broker = "x"\n', "unknown key mqtt.broker"),
    ('ca_file = "/nonexistent/ca.pem"\n', "ca_file: cannot read"),
])
def test_bad_mqtt_settings_name_the_key(tmp_path, body, words):
    with pytest.raises(ConfigError) as e:
        C.load(_toml(tmp_path, "[mqtt]\n" + body))
    assert words in str(e.value)


def test_credentials_file_must_be_0600(tmp_path):
    cred = _cred(tmp_path, "t1", 0o644)
    with pytest.raises(ConfigError) as e:
        C.load(_toml(tmp_path, f'[mqtt]\ntable_id = "t1"\ncredentials_file = "{cred}"\n'))
    assert "mode 0644" in str(e.value) and f"chmod 600 {cred}" in str(e.value)
    cred.chmod(0o600)
    cred.write_text("no colon here\n")
    with pytest.raises(ConfigError, match="user:password"):
        C.load(_toml(tmp_path, f'[mqtt]\ntable_id = "t1"\ncredentials_file = "{cred}"\n'))


def test_bad_mqtt_config_is_one_line_at_the_command_line(tmp_path):
    import subprocess
    cfg = _toml(tmp_path, '[mqtt]\nenabled = true\n')
    r = subprocess.run([sys.executable, "-m", "app", "serve", "--sim", "--config", str(cfg), "--port", "0",
                        "--log", str(tmp_path / "ev.sqlite"), "--token-file", str(tmp_path / "token")],
                       capture_output=True, text=True, timeout=60, cwd=Path(__file__).resolve().parents[2])
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip().count("\n") == 0 and "table_id is needed" in r.stderr


# ---- the outbox ----
def test_outbox_holds_the_published_kinds_until_acknowledged(tmp_path):
    log = EventLog(tmp_path / "ev.sqlite", outbox=("score", "cycle"))
    a = log.append("score", {"hand": "x"})
    log.append("operator", {"action": "cycle"})  # not published: no outbox row
    c = log.append_cycle({"cycle": 1}, {"E": 7.1, "S": None})
    assert [e["id"] for e in log.outbox()] == [a, c] and log.pending() == 2
    log.acknowledge(a)
    assert [e["id"] for e in log.outbox()] == [c]
    assert log.outbox(after=c) == []
    log_id = log.log_id
    log.close()
    again = EventLog(tmp_path / "ev.sqlite", outbox=("score", "cycle"))  # a restart keeps the outbox and the id
    assert [e["id"] for e in again.outbox()] == [c] and again.log_id == log_id and len(log_id) == 32
    again.close()
    with pytest.raises(ValueError, match="unknown"):
        EventLog(tmp_path / "x.sqlite", outbox=("nonsense",))


def test_no_outbox_rows_without_a_publisher(tmp_path):
    log = EventLog(tmp_path / "ev.sqlite")
    log.append("score", {"hand": "x"})
    assert log.pending() == 0
    log.close()


# ---- the publisher against Mosquitto ----
@pytest.fixture
def broker(tmp_path):
    b = Broker(tmp_path / "broker", USERS, ACL)
    yield b
    b.stop()


@pytest.fixture
def listener(broker):
    ls = Listener(broker, "hall", ("mjtable/#", "homeassistant/#"))
    yield ls
    ls.close()


def _publisher(tmp_path, broker, user="t1", port=None, **kw):
    from service.mqtt import EVENT_KINDS, Publisher
    log = EventLog(tmp_path / f"{user}.sqlite", outbox=EVENT_KINDS)
    cfg = C.MqttConfig(enabled=True, host="127.0.0.1", port=port or broker.port, table_id=user,
                       credentials_file=_cred(tmp_path, user), keepalive=5, **kw)
    return log, Publisher(cfg, log)


def _unique(events):
    """What a receiver keeps: the first copy of each event id, in arrival order."""
    seen, out = set(), []
    for e in events:
        if e["id"] not in seen:
            seen.add(e["id"])
            out.append(e)
    return out


def test_availability_status_discovery_and_events(tmp_path, broker, listener):
    log, pub = _publisher(tmp_path, broker)
    pub.start()
    try:
        pub.on_message({"type": "status", "state": "idle", "cycles": 3, "tile_count": 136,
                        "walls": [{"side": "E", "stacks": 17, "expected": 17, "lift": "down", "push_head": "home"}],
                        "fault": {"code": "E21", "name": "lift-short", "side": "W", "meaning": "m", "meaning_zh": "z",
                                  "observed": "long text"}, "warnings": []})
        fault = {"code": "E21", "observed": "the W lift did not reach the top in 9.0 s", "causes": ["a"], "checks": ["b"]}
        ids = [log.append("fault", fault), log.append_cycle({"cycle": 4, "lift_up_s": {"E": 7.2, "S": 7.0, "W": 9.1,
                                                                                         "N": 7.1}}, {"E": 7.2}),
               log.append("score", {"hand": "123m", "total": 12, "rules": "mcr"})]
        log.append("operator", {"action": "cycle"})  # not an event on the broker
        listener.wait(lambda: len(listener.events()) >= 3, what="three events")
        listener.wait(lambda: any(json.loads(p).get("rules") == "mcr" for _, p, _ in listener.of("/status")),
                      what="a status with the rules of the last score")
        assert listener.of("/availability")[0][1] == "online"
        evs = listener.events()
        assert [e["seq"] for e in evs] == ids
        assert [e["kind"] for e in evs] == ["fault", "cycle", "score"]
        assert evs[0]["data"] == fault and evs[0]["id"] == f"{log.log_id}:{ids[0]}" and evs[0]["table"] == "t1"
        topics = [t for t, _, _ in listener.messages if "/event/" in t]
        assert topics == ["mjtable/t1/event/fault", "mjtable/t1/event/cycle", "mjtable/t1/event/score"]
        status = json.loads(listener.of("/status")[-1][1])
        assert status["state"] == "idle" and status["fault_code"] == "E21" and status["cycles"] == 3
        assert status["walls"] == [{"side": "E", "stacks": 17, "expected": 17, "lift": "down"}]
        assert status["lift_up_s"]["W"] == 9.1 and "observed" not in status["fault"]
        conf = [json.loads(p) for t, p, _ in listener.messages if t.startswith("homeassistant/")]
        assert {c["unique_id"] for c in conf} >= {"mjtable_t1_state", "mjtable_t1_fault", "mjtable_t1_cycles",
                                                  "mjtable_t1_lift_up_w", "mjtable_t1_problem"}
        assert all(c["availability_topic"] == "mjtable/t1/availability" for c in conf)
        listener.wait(lambda: log.pending() == 0, what="the outbox emptied by the acknowledgements")
    finally:
        pub.stop()
    listener.wait(lambda: listener.of("/availability")[-1][1] == "offline", what="offline at a clean stop")
    # retained: a subscriber that comes later reads the last availability and status
    late = Listener(broker, "hall", ("mjtable/t1/availability", "mjtable/t1/status"), client_id="late")
    try:
        late.wait(lambda: len(late.messages) >= 2, what="the retained topics")
        assert ("mjtable/t1/availability", "offline", True) in late.messages
        assert any(t.endswith("/status") and r for t, _, r in late.messages)
    finally:
        late.close()
    log.close()


def test_outbox_is_sent_in_order_after_a_broker_outage(tmp_path, broker, listener):
    log, pub = _publisher(tmp_path, broker)
    pub.start()
    try:
        first = [log.append("score", {"n": i}) for i in range(5)]
        listener.wait(lambda: len(listener.events()) >= 5 and log.pending() == 0, what="the first five")
        broker.stop()
        listener.wait(lambda: not pub.state()["connected"], what="the table seeing the broker gone")
        during = [log.append("score", {"n": i}) for i in range(5, 25)]
        time.sleep(0.5)
        assert log.pending() == 20  # nowhere to go: kept
        broker.start()
        after = [log.append("warning", {"code": "W1", "n": i}) for i in range(25, 30)]
        want = first + during + after
        listener.wait(lambda: [e["seq"] for e in _unique(listener.events())] == want, 40,
                      what="every event once, in order")
        listener.wait(lambda: log.pending() == 0, what="the outbox drained")
        assert pub.state()["error"] is None
    finally:
        pub.stop()
        log.close()


#: seconds the table is cut off in the test: more than 1.5 keep-alive periods (5 s), so that the
#: broker gives up on it and publishes its will (the issue's minute, shortened to keep the suite short)
CUT_S = 15


def test_a_table_cut_off_from_the_network_loses_nothing(tmp_path, broker, listener):
    """The cable cut: nothing arrives, nothing is refused; the table's events sent in the silence are
    never acknowledged, so they stay in the outbox and go again when the network is back."""
    cable = Cable(broker.port)
    log, pub = _publisher(tmp_path, broker, port=cable.port)
    pub.start()
    try:
        ids = [log.append("score", {"n": i}) for i in range(3)]
        listener.wait(lambda: log.pending() == 0, what="the first events acknowledged")
        cable.cut()
        t_cut = time.monotonic()
        ids += [log.append("cycle", {"cycle": i}) for i in range(3, 13)]
        listener.wait(lambda: listener.of("/availability")[-1][1] == "offline", 20, what="the will after the cut")
        assert time.monotonic() - t_cut >= 5  # the broker waited for the keep-alive, the cut closed nothing
        time.sleep(max(0.0, CUT_S - (time.monotonic() - t_cut)))
        ids += [log.append("warning", {"code": "E22", "n": i}) for i in range(13, 15)]
        assert log.pending() == 12
        assert [e["seq"] for e in _unique(listener.events())] == ids[:3]
        cable.mend()
        listener.wait(lambda: [e["seq"] for e in _unique(listener.events())] == ids, 60,
                      what="every event once, in order, after the cut")
        listener.wait(lambda: log.pending() == 0, what="the outbox drained")
        listener.wait(lambda: listener.of("/availability")[-1][1] == "online", what="online again")
    finally:
        pub.stop()
        log.close()
        cable.close()


def test_a_table_restarted_during_the_outage_sends_what_is_pending(tmp_path, broker, listener):
    log, pub = _publisher(tmp_path, broker)
    pub.start()
    ids = [log.append("score", {"n": 0})]
    listener.wait(lambda: log.pending() == 0, what="the first event acknowledged")
    broker.stop()
    listener.wait(lambda: not pub.state()["connected"], what="the table seeing the broker gone")
    ids += [log.append("selftest", {"passed": True, "n": i}) for i in range(1, 4)]
    pub.stop()
    log.close()
    broker.start()
    log, pub = _publisher(tmp_path, broker)  # the same log file: a table that was restarted
    assert log.pending() == 3
    pub.start()
    try:
        listener.wait(lambda: [e["seq"] for e in _unique(listener.events())] == ids, 30, what="all four once")
        listener.wait(lambda: log.pending() == 0, what="the outbox drained")
    finally:
        pub.stop()
        log.close()


def test_an_event_the_acl_refuses_stays_in_the_outbox(tmp_path, broker, listener):
    log, pub = _publisher(tmp_path, broker, user="t9", discovery=False)
    pub.start()
    try:
        log.append("score", {"n": 1})
        listener.wait(lambda: "Not authorized" in (pub.state()["error"] or ""), what="the refusal seen")
        assert log.pending() == 1 and listener.events() == []
        assert "ACL" in pub.state()["error"]
    finally:
        pub.stop()
        log.close()


def test_wrong_password_is_reported_and_nothing_is_lost(tmp_path, broker):
    from service.mqtt import EVENT_KINDS, Publisher
    cred = tmp_path / "bad.credentials"
    cred.write_text("t1:wrong\n")
    cred.chmod(0o600)
    log = EventLog(tmp_path / "ev.sqlite", outbox=EVENT_KINDS)
    pub = Publisher(C.MqttConfig(enabled=True, host="127.0.0.1", port=broker.port, table_id="t1",
                                 credentials_file=cred), log)
    pub.start()
    try:
        log.append("score", {"n": 1})
        end = time.monotonic() + 15
        while "refused the connection" not in (pub.state()["error"] or ""):
            assert time.monotonic() < end, pub.state()
            time.sleep(0.05)
        assert log.pending() == 1
    finally:
        pub.stop()
        log.close()


def test_serve_publishes_and_the_broker_sends_the_will_when_it_dies(tmp_path, broker, listener):
    """``mjtable serve --sim`` with [mqtt]: online, the status, a cycle with its lift travel times;
    killed with SIGKILL (no clean stop), the broker publishes its last will: offline."""
    from service_support import Server
    cred = _cred(tmp_path, "t1")
    cfg = _toml(tmp_path, f'[mqtt]\nenabled = true\nhost = "127.0.0.1"\nport = {broker.port}\ntable_id = "t1"\n'
                          f'credentials_file = "{cred}"\nkeepalive = 5\n')
    srv = Server(tmp_path, "--config", str(cfg), "--no-preload", speed=50.0)
    try:
        listener.wait(lambda: ("mjtable/t1/availability", "online", False) in listener.messages, what="online")
        r = httpx.post(srv.url + "/api/cycle", headers={"Authorization": f"Bearer {srv.token}"}, timeout=10)
        assert r.status_code == 200, r.text
        listener.wait(lambda: any(e["kind"] == "cycle" for e in listener.events()), 60, what="the cycle event")
        cyc = next(e for e in listener.events() if e["kind"] == "cycle")
        assert set(cyc["data"]["lift_up_s"]) == {"E", "S", "W", "N"}
        assert all(v is None or 0 < v < 30 for v in cyc["data"]["lift_up_s"].values())
        assert 0 < cyc["data"]["lift_nominal_s"] < cyc["data"]["lift_deadline_s"]
        listener.wait(lambda: any(json.loads(p)["state"] == "walls-up" for _, p, _ in listener.of("/status")),
                      what="the status walls-up")
    finally:
        srv.proc.send_signal(signal.SIGKILL)
        srv.proc.wait(10)
    # the will: after 1.5 keep-alive periods (5 s) without a packet
    listener.wait(lambda: listener.of("/availability")[-1][1] == "offline", 20, what="the last will")
