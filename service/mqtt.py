"""Reporting to a hall's MQTT broker (issue #22; topics and payloads in ``docs/mqtt.md``).

The table publishes, under ``mjtable/<table_id>/``:

* ``availability``: ``online`` (retained) once connected, ``offline`` (retained) at a clean stop,
  and ``offline`` as the MQTT last will, which the broker publishes when the table goes silent
  (1.5 keep-alive periods) or the connection drops without a DISCONNECT;
* ``status``: the table's state as retained JSON (state, walls, tile count, rules, fault code,
  cycles, the last lift travel times), at most once per ``STATUS_MIN_S`` and on connecting;
* ``event/<kind>``: each event of ``EVENT_KINDS`` as JSON with an event id, not retained.

Events are never lost: the event log (``service.eventlog``) writes each one and its outbox row in
one transaction before anything is sent; the sender thread publishes the outbox in id order with
QoS 1 (or 2), at most ``WINDOW`` unacknowledged at a time, and takes an event out of the outbox
only in ``on_publish``, when the broker has acknowledged that message id. After a broker outage
paho sends its unacknowledged messages again, and the outbox holds every event not yet handed over;
after a restart of the table the whole outbox is sent again. An event may so arrive twice; a
receiver drops it by its ``id`` (``<log_id>:<seq>``).

MQTT 5 is used so that the broker can refuse a publish it does not allow (an ACL): the event
stays in the outbox, the refusal is logged, and the sender tries again after ``REFUSED_RETRY_S``.

Home Assistant discovery (``discovery = true``): retained config topics under
``<discovery_prefix>/sensor|binary_sensor/mjtable_<table_id>/<object>/config``, one device per table.

Control over MQTT is not offered. The table subscribes to one topic only, its own
``mjtable/<table_id>/seating`` (retained, published by the hall): who sits where in the tournament's
current round, information its page shows (``seating``, ``parse_seating``); no message on the broker
starts, stops or changes anything at the table.

Client: paho-mqtt 2.x with ``CallbackAPIVersion.VERSION2``; its network thread runs the callbacks.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any, Callable

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode

from .config import MqttConfig, read_credentials
from .eventlog import EventLog

log = logging.getLogger("mjtable.mqtt")

#: the event kinds a table publishes (and keeps in its outbox until acknowledged)
EVENT_KINDS = ("cycle", "fault", "fault-cleared", "warning", "selftest", "score", "draw", "match")
#: the first topic level
ROOT = "mjtable"
#: unacknowledged events handed to the client at most
WINDOW = 100
#: seconds between two status publications at most once per
STATUS_MIN_S = 1.0
#: seconds before an event the broker refused is offered again
REFUSED_RETRY_S = 30.0
SIDES = ("E", "S", "W", "N")


def make_client(client_id: str, credentials_file=None, ca_file=None) -> paho.Client:
    """A paho 2.x client (``CallbackAPIVersion.VERSION2``, MQTT 5) with the login of a 0600
    credentials file and TLS with ``ca_file`` (either may be None), reconnecting every 1-30 s.
    Shared with the hall's subscriber.

    Raises:
        ConfigError: the credentials file is unreadable, readable by others, or has no ``user:password``.
    """
    c = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=paho.MQTTv5)
    if credentials_file is not None:
        c.username_pw_set(*read_credentials(credentials_file))
    if ca_file is not None:
        c.tls_set(ca_certs=str(ca_file))
    c.reconnect_delay_set(1, 30)
    return c


def topics(table_id: str) -> dict[str, str]:
    """The table's topics: ``availability``, ``status``, ``event`` (a prefix: ``event/<kind>``) and
    ``seating`` (the one the table reads)."""
    base = f"{ROOT}/{table_id}"
    return {"availability": f"{base}/availability", "status": f"{base}/status", "event": f"{base}/event",
            "seating": seating_topic(table_id)}


def seating_topic(table_id: str) -> str:
    """``mjtable/<table_id>/seating``: the hall's retained word on who sits at the table this round."""
    return f"{ROOT}/{table_id}/seating"


def parse_seating(table_id: str, payload: bytes) -> dict[str, Any] | None:
    """The seating the hall published for ``table_id`` (``docs/mqtt.md``): ``{"tournament", "round",
    "rounds", "table", "players", "t"}`` with ``players`` the four names at E, S, W, N or None (the
    table sits out the round); None for an empty payload (no tournament at this table).

    Raises:
        ValueError: not UTF-8 JSON of that shape, or for another table (names what is wrong).
    """
    if not payload:
        return None
    try:
        body = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ValueError("the seating is not UTF-8 JSON") from None
    if not isinstance(body, dict):
        raise ValueError("the seating must be a JSON object")
    if body.get("table") != table_id:
        raise ValueError(f"the seating names table {str(body.get('table'))[:64]!r}, not {table_id!r}")
    name, rnd, rounds, players = body.get("tournament"), body.get("round"), body.get("rounds"), body.get("players")
    if not isinstance(name, str) or not 1 <= len(name) <= 100:
        raise ValueError("the seating's tournament must be a name of 1-100 characters")
    if not isinstance(rounds, list) or not all(isinstance(r, int) and r >= 1 for r in rounds) or rnd not in rounds:
        raise ValueError("the seating's round must be one of its rounds (numbers from 1)")
    if players is not None and (not isinstance(players, list) or len(players) != 4 or
                                not all(isinstance(p, str) and 1 <= len(p) <= 24 for p in players)):
        raise ValueError("the seating's players must be four names (1-24 characters) at E, S, W, N, or null")
    t = body.get("t")
    return {"tournament": name, "round": rnd, "rounds": rounds, "table": table_id, "players": players,
            "t": t if isinstance(t, (int, float)) else None}


def event_payload(table_id: str, log_id: str, ev: dict[str, Any]) -> dict[str, Any]:
    """The JSON of one event: ``{"id": "<log_id>:<seq>", "table", "log", "seq", "kind", "t", "data"}``
    (``t`` Unix seconds, ``data`` the event log's data as it is)."""
    return {"id": f"{log_id}:{ev['id']}", "table": table_id, "log": log_id, "seq": ev["id"], "kind": ev["kind"],
            "t": ev["t"], "data": ev["data"]}


def status_payload(table_id: str, snap: dict[str, Any], lift_up_s: dict[str, float | None],
                   rules: str | None, pending: int) -> dict[str, Any]:
    """The retained status from a control snapshot (``service.control.Control.snapshot``)."""
    fault = snap.get("fault")
    return {"table": table_id, "t": time.time(), "state": snap.get("state"), "state_zh": snap.get("state_zh"),
            "busy": snap.get("busy"),
            "walls": [{k: w.get(k) for k in ("side", "stacks", "expected", "lift")} for w in snap.get("walls", [])],
            "tile_count": snap.get("tile_count"), "dice_method": snap.get("dice_method"), "dealer": snap.get("dealer"),
            "rules": rules, "fault_code": fault["code"] if fault else None,
            "fault": ({k: fault.get(k) for k in ("code", "name", "side", "meaning", "meaning_zh")} if fault else None),
            "warnings": [w.get("code") for w in snap.get("warnings", [])], "cycles": snap.get("cycles"),
            "link_ok": snap.get("link_ok"), "lift_up_s": lift_up_s, "pending_events": pending}


def discovery(cfg: MqttConfig) -> list[tuple[str, dict[str, Any]]]:
    """Home Assistant MQTT discovery: ``[(config topic, config)]``, one device per table with its
    state, fault code, cycle count and the four lifts' last travel times, and a problem sensor."""
    tid = cfg.table_id
    t = topics(tid)
    node = f"mjtable_{tid}"
    device = {"identifiers": [node], "name": f"Mahjong table {tid}", "manufacturer": "mjtable",
              "model": "automatic mahjong table"}
    common = {"state_topic": t["status"], "availability_topic": t["availability"], "payload_available": "online",
              "payload_not_available": "offline", "device": device}
    sensors = [("state", "State", "{{ value_json.state }}", {}),
               ("fault", "Fault", "{{ value_json.fault_code or 'none' }}", {}),
               ("cycles", "Cycles", "{{ value_json.cycles }}", {"state_class": "total_increasing"})]
    sensors += [(f"lift_up_{s.lower()}", f"Lift {s} travel", f"{{{{ value_json.lift_up_s.{s} }}}}",
                 {"unit_of_measurement": "s", "device_class": "duration", "state_class": "measurement"})
                for s in SIDES]
    out = [(f"{cfg.discovery_prefix}/sensor/{node}/{obj}/config",
            {"name": name, "unique_id": f"{node}_{obj}", "object_id": f"{node}_{obj}", "value_template": tpl,
             **extra, **common}) for obj, name, tpl, extra in sensors]
    out.append((f"{cfg.discovery_prefix}/binary_sensor/{node}/problem/config",
                {"name": "Problem", "unique_id": f"{node}_problem", "object_id": f"{node}_problem",
                 "device_class": "problem", "value_template": "{{ 'ON' if value_json.fault_code else 'OFF' }}",
                 **common}))
    return out


class Publisher:
    """Publishes one table's availability, status and events (see the module docstring).

    Args:
        cfg: the ``[mqtt]`` configuration (``enabled`` and ``table_id`` set).
        events: the table's event log, opened with ``outbox=EVENT_KINDS``.
        client_id: the MQTT client id (default ``mjtable-<table_id>``).

    Use: ``start()``, feed ``on_message`` with the hub's messages (``Hub.listen``), ``stop()``.
    ``seating``: the latest seating from the hall (``parse_seating``), None before any;
    ``on_seating(seating)`` is called (on paho's thread; must return at once) when it changes.
    Nothing here blocks the control loop: the client's network thread and the sender thread do the work.

    Raises (constructor):
        ConfigError: the credentials file is unreadable or not 0600.
    """

    def __init__(self, cfg: MqttConfig, events: EventLog, client_id: str | None = None,
                 on_seating: Callable[[dict[str, Any] | None], None] | None = None) -> None:
        if not cfg.table_id:
            raise ValueError("the publisher needs [mqtt] table_id")
        missing = set(EVENT_KINDS) - events.outbox_kinds
        if missing:
            raise ValueError(f"the event log keeps no outbox for {sorted(missing)}: open it with outbox=EVENT_KINDS")
        self.cfg = cfg
        self.events = events
        self.topics = topics(cfg.table_id)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._connected = False
        self._inflight: dict[int, int | None] = {}   # mid -> event id (None: status, availability, discovery)
        self._early: dict[int, Any] = {}      # mid -> reason code, acknowledged before publish() returned
        self._cursor = 0                      # the highest event id handed to the client
        self._refused_until = 0.0
        self._snap: dict[str, Any] | None = None
        self._status_dirty = True
        self._status_t = 0.0
        self._retained_sent = False
        last = events.events("cycle", 1)
        self._lift = dict(last[0]["data"].get("lift_up_s") or {}) if last else {s: None for s in SIDES}
        score = events.events("score", 1)
        self._rules = score[0]["data"].get("rules", "mcr") if score else None
        self.last_error: str | None = None
        self.acked = 0
        self.seating: dict[str, Any] | None = None
        self.on_seating = on_seating
        c = make_client(client_id or f"mjtable-{cfg.table_id}", cfg.credentials_file, cfg.ca_file)
        c.will_set(self.topics["availability"], "offline", qos=cfg.qos, retain=True)
        c.max_inflight_messages_set(WINDOW)
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_publish = self._on_publish
        c.on_message = self._on_seating
        c.on_subscribe = self._on_subscribe
        self.client = c
        self._thread = threading.Thread(target=self._run, name="mjtable-mqtt", daemon=True)
        events.on_outbox = lambda _eid: self._wake.set()

    # -- life --
    def start(self) -> None:
        """Connect in the background (retried every 1-30 s while the broker is away) and start sending."""
        self.client.connect_async(self.cfg.host, self.cfg.broker_port, keepalive=self.cfg.keepalive)
        self.client.loop_start()
        self._thread.start()

    def stop(self, timeout: float = 3.0) -> None:
        """Publish ``offline`` (retained), disconnect, end the threads. Events not yet acknowledged
        stay in the outbox for the next start. Idempotent."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        if self._connected:
            try:
                info = self.client.publish(self.topics["availability"], "offline", qos=self.cfg.qos, retain=True)
                info.wait_for_publish(timeout)
            except (RuntimeError, ValueError):
                pass
        self.client.disconnect()
        self.client.loop_stop()
        self.events.on_outbox = None

    def state(self) -> dict[str, Any]:
        """``{"connected", "pending", "inflight", "acked", "error"}``: the link to the broker now."""
        with self._lock:
            inflight = sum(1 for e in self._inflight.values() if e is not None)
        return {"connected": self._connected, "pending": self.events.pending(), "inflight": inflight,
                "acked": self.acked, "error": self.last_error}

    # -- the table's side --
    def on_message(self, message: dict[str, Any]) -> None:
        """A hub message (any thread; returns at once): a status is kept for the next publication."""
        if message.get("type") == "status":
            self._snap = message
            self._status_dirty = True
            self._wake.set()

    # -- paho's callbacks (its network thread) --
    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            self.last_error = f"the broker refused the connection: {reason_code}"
            log.warning("mqtt: %s", self.last_error)
            return
        self._connected = True
        self.last_error = None
        self._retained_sent = False
        self._status_dirty = True
        log.info("mqtt: connected to %s:%d as %s", self.cfg.host, self.cfg.broker_port, self.cfg.table_id)
        client.subscribe(self.topics["seating"], qos=1)  # the only subscription: information, never control
        self._wake.set()

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties) -> None:
        if any(rc.is_failure for rc in reason_codes):
            log.warning("mqtt: the broker refused the seating subscription: %s (its ACL must let %s read %s)",
                        ", ".join(str(rc) for rc in reason_codes), self.cfg.table_id, self.topics["seating"])

    def _on_seating(self, client, userdata, msg) -> None:
        if msg.topic != self.topics["seating"]:
            return
        try:
            seating = parse_seating(self.cfg.table_id, msg.payload)
        except ValueError as e:
            log.warning("mqtt: %s: %s", msg.topic, e)
            return
        self.seating = seating
        if self.on_seating is not None:
            self.on_seating(seating)

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        if self._connected and not self._stopping.is_set():
            self.last_error = f"disconnected from the broker: {reason_code}"
            log.warning("mqtt: %s", self.last_error)
        self._connected = False

    def _on_publish(self, client, userdata, mid, reason_code, properties) -> None:
        with self._lock:
            if mid not in self._inflight:
                self._early[mid] = reason_code
                return
            eid = self._inflight.pop(mid)
        if eid is None:
            if reason_code.is_failure:
                self.last_error = f"the broker refused a status publication: {reason_code}"
                log.warning("mqtt: %s", self.last_error)
            return
        self._settle(eid, reason_code)

    def _settle(self, eid: int, reason_code) -> None:
        if reason_code.is_failure:
            with self._lock:  # sent again (in order from it) after a pause
                self._cursor = min(self._cursor, eid - 1)
                self._refused_until = time.monotonic() + REFUSED_RETRY_S
            self.last_error = f"the broker refused event {eid}: {reason_code} (check its ACL for {self.topics['event']}/#)"
            log.warning("mqtt: %s", self.last_error)
            return
        self.events.acknowledge(eid)
        self.acked += 1
        self._wake.set()  # room in the window for the next events

    # -- the sender thread --
    def _run(self) -> None:
        wait = STATUS_MIN_S
        while not self._stopping.is_set():
            self._wake.wait(wait)
            self._wake.clear()
            wait = STATUS_MIN_S
            if self._stopping.is_set() or not self._connected:
                continue
            try:
                if not self._retained_sent:
                    self._send_retained()
                wait = self._send_status()
                self._send_events()
            except Exception:  # noqa: BLE001 - the sender goes on; the events stay in the outbox
                log.exception("mqtt sender")

    def _publish(self, topic: str, body: Any, retain: bool, eid: int | None = None) -> bool:
        """Hand one message to the client and note its message id (``eid``: the event it carries).
        False when the client refused it (then nothing is noted)."""
        text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
        info = self.client.publish(topic, text, qos=self.cfg.qos, retain=retain)
        if info.rc not in (MQTTErrorCode.MQTT_ERR_SUCCESS, MQTTErrorCode.MQTT_ERR_NO_CONN):
            log.warning("mqtt: publishing to %s: %s", topic, paho.error_string(info.rc))
            return False
        # NO_CONN: paho keeps a QoS 1/2 message and sends it on reconnecting
        with self._lock:
            if eid is not None:
                self._cursor = max(self._cursor, eid)
            early = self._early.pop(info.mid, None)
            if early is None:
                self._inflight[info.mid] = eid
        if early is not None and eid is not None:
            self._settle(eid, early)
        return True

    def _send_retained(self) -> None:
        self._publish(self.topics["availability"], "online", retain=True)
        if self.cfg.discovery:
            for topic, conf in discovery(self.cfg):
                self._publish(topic, conf, retain=True)
        self._retained_sent = True

    def _send_status(self) -> float:
        """Publish the status if it changed and the last one is ``STATUS_MIN_S`` old. Returns the
        seconds the sender may sleep (less when a changed status waits for its turn)."""
        now = time.monotonic()
        if self._snap is None or not self._status_dirty:
            return STATUS_MIN_S
        if now - self._status_t < STATUS_MIN_S:
            return max(0.01, STATUS_MIN_S - (now - self._status_t))
        self._status_dirty = False
        self._status_t = now
        body = status_payload(self.cfg.table_id, self._snap, self._lift, self._rules, self.events.pending())
        self._publish(self.topics["status"], body, retain=True)
        return STATUS_MIN_S

    def _send_events(self) -> None:
        if time.monotonic() < self._refused_until:
            return
        with self._lock:
            room = WINDOW - sum(1 for e in self._inflight.values() if e is not None)
            after = self._cursor
        if room <= 0:
            return
        for ev in self.events.outbox(after=after, limit=room):
            if not self._connected:
                return
            body = event_payload(self.cfg.table_id, self.events.log_id, ev)
            if not self._publish(f"{self.topics['event']}/{ev['kind']}", body, retain=False, eid=ev["id"]):
                return
            self._note(ev)

    def _note(self, ev: dict[str, Any]) -> None:
        """What the status shows from the events: the last lift travel times, the rules played."""
        if ev["kind"] == "cycle" and isinstance(ev["data"].get("lift_up_s"), dict):
            self._lift = dict(ev["data"]["lift_up_s"])
            self._status_dirty = True
        elif ev["kind"] == "score" and ev["data"].get("rules"):
            self._rules = ev["data"]["rules"]
            self._status_dirty = True


def make_publisher(cfg: MqttConfig, events: EventLog, subscribe: Callable[[Callable], None],
                   on_seating: Callable[[dict[str, Any] | None], None] | None = None) -> Publisher:
    """A started publisher fed by ``subscribe`` (``Hub.listen``); ``on_seating`` as ``Publisher``'s."""
    pub = Publisher(cfg, events, on_seating=on_seating)
    subscribe(pub.on_message)
    pub.start()
    return pub
