"""The hall's MQTT subscriber: every table's availability, status and events into the ``Store``.

A persistent session (MQTT 5 ``clean_start`` false, a session expiry of ``SESSION_EXPIRY_S``, QoS 1
subscriptions): on a broker with persistence on, what the tables publish while the hall is away
(restarted, upgraded) is queued by the broker and delivered when it is back. An event delivered
twice (sent again by a table after an outage, or by the broker) is kept once (``Store.add_event``).

Topics (``docs/mqtt.md``): ``mjtable/+/availability``, ``mjtable/+/status``, ``mjtable/+/event/+``.
A message that is not what the document says is counted in ``rejected`` and logged, never kept.

The hall also publishes one thing: each table's seating for the tournament's current round,
retained on ``mjtable/<table_id>/seating`` (``publish_seating``; information for the table's page,
never a command), on every connection and whenever the organiser changes the tournament or its round.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any, Callable

from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from service.config import TABLE_ID
from service.mqtt import ROOT, make_client, seating_topic

from . import tournament as T
from .config import BrokerConfig
from .store import BadPayload, Store

log = logging.getLogger("mjtable.hall")

#: seconds the broker keeps the hall's session (and queues its messages) while the hall is away
SESSION_EXPIRY_S = 7 * 86400
SUBSCRIPTIONS = (f"{ROOT}/+/availability", f"{ROOT}/+/status", f"{ROOT}/+/event/+")


class Subscriber:
    """Subscribes to every table on the broker of ``cfg`` and writes to ``store``.

    ``on_event(table, event, new)``: called (on the MQTT thread) after each event is kept or
    dropped as a duplicate; must return at once. ``state()`` says how the link is.
    """

    def __init__(self, cfg: BrokerConfig, store: Store,
                 on_event: Callable[[str, dict[str, Any], bool], None] | None = None) -> None:
        self.cfg = cfg
        self.store = store
        self.on_event = on_event
        self.connected = threading.Event()
        self.subscribed = threading.Event()
        self.received = 0
        self.rejected = 0
        self.last_error: str | None = None
        c = make_client(cfg.client_id, cfg.credentials_file, cfg.ca_file)
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_subscribe = self._on_subscribe
        c.on_message = self._on_message
        c.on_publish = self._on_publish
        self.client = c

    def start(self) -> None:
        """Connect in the background (retried every 1-30 s) and subscribe."""
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = SESSION_EXPIRY_S
        self.client.connect_async(self.cfg.host, self.cfg.broker_port, keepalive=self.cfg.keepalive,
                                  clean_start=False, properties=props)
        self.client.loop_start()

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def state(self) -> dict[str, Any]:
        return {"connected": self.connected.is_set(), "broker": f"{self.cfg.host}:{self.cfg.broker_port}",
                "received": self.received, "rejected": self.rejected, "duplicates": self.store.duplicates,
                "error": self.last_error}

    def publish_seating(self) -> int:
        """Tell every table its seating for the current round (``hall.tournament.seating_messages``
        from the store): retained, QoS 1, on ``mjtable/<table_id>/seating``; an empty retained
        message clears it for a table not in the tournament. While the broker is away paho keeps
        the messages and they are sent again on connecting anyway. Returns the messages handed over."""
        name, rows = self.store.tournament()
        seating = T.from_rows(rows)
        msgs = T.seating_messages(name, seating, self.store.current_round(), self.store.table_ids())
        for table, body in msgs.items():
            payload = json.dumps({**body, "t": time.time()}, ensure_ascii=False) if body is not None else b""
            self.client.publish(seating_topic(table), payload, qos=1, retain=True)
        return len(msgs)

    # -- paho's callbacks --
    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            self.last_error = f"the broker refused the hall: {reason_code}"
            log.warning("hall: %s", self.last_error)
            return
        self.last_error = None
        self.connected.set()
        client.subscribe([(t, 1) for t in SUBSCRIPTIONS])

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties) -> None:
        bad = [str(rc) for rc in reason_codes if rc.is_failure]
        if bad:
            self.last_error = f"the broker refused the subscriptions: {', '.join(bad)} (check its ACL for {ROOT}/#)"
            log.warning("hall: %s", self.last_error)
        else:
            self.subscribed.set()
        try:
            self.publish_seating()
        except Exception:  # noqa: BLE001 - the seating is sent again at the next change or connection
            log.exception("hall: publishing the seating")

    def _on_publish(self, client, userdata, mid, reason_code, properties) -> None:
        if reason_code.is_failure:
            self.last_error = (f"the broker refused the seating: {reason_code} (its ACL must let the hall write "
                               f"{ROOT}/+/seating)")
            log.warning("hall: %s", self.last_error)

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        self.connected.clear()
        self.subscribed.clear()

    def _on_message(self, client, userdata, msg) -> None:
        self.received += 1
        try:
            self.handle(msg.topic, msg.payload)
        except BadPayload as e:
            self.rejected += 1
            log.warning("hall: %s: %s", msg.topic, e)
        except Exception:  # noqa: BLE001 - one bad message never stops the subscriber
            self.rejected += 1
            log.exception("hall: %s", msg.topic)

    def handle(self, topic: str, payload: bytes) -> None:
        """Keep one message. Raises BadPayload for a topic or payload not of ``docs/mqtt.md``."""
        levels = topic.split("/")
        if len(levels) < 3 or levels[0] != ROOT or not TABLE_ID.fullmatch(levels[1]):
            raise BadPayload(f"not a table's topic: {topic[:120]!r}")
        table, what = levels[1], levels[2]
        if not payload:
            return  # a retained topic cleared
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError:
            raise BadPayload("the payload is not UTF-8") from None
        if what == "availability" and len(levels) == 3:
            self.store.set_availability(table, text)
            return
        try:
            body = json.loads(text)
        except ValueError as e:
            raise BadPayload(f"the payload is not JSON: {e}") from None
        if what == "status" and len(levels) == 3:
            self.store.set_status(table, body)
        elif what == "event" and len(levels) == 4:
            if not isinstance(body, dict) or body.get("kind") != levels[3]:
                raise BadPayload(f"an event on {topic} must be an object of kind {levels[3]!r}")
            new = self.store.add_event(table, body)
            if self.on_event is not None:
                self.on_event(table, body, new)
        else:
            raise BadPayload(f"unknown topic {topic[:120]!r}")
