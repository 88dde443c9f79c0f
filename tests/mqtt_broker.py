"""A real Mosquitto broker for the tests: started on a free loopback port with a generated
configuration (no anonymous clients, a password file made by ``mosquitto_passwd``, an ACL file),
stopped by the test. The Debian package's own service is never used: its port (1883) and its
configuration are left alone, running or not.

Imported by name from the MQTT tests (``sys.path`` gets this folder).
"""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
MOSQUITTO_PASSWD = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """Mosquitto on ``127.0.0.1:<port>`` in ``folder``.

    Args:
        folder: where the configuration, password file, ACL, persistence and log go.
        users: ``{name: password}``.
        acl: the ACL file's text (``user NAME`` / ``topic read|write|readwrite TOPIC`` lines).
        persistence: keep sessions and queued messages across ``restart`` (as a hall's broker should).
    """

    def __init__(self, folder: Path, users: dict[str, str], acl: str, persistence: bool = True) -> None:
        if not os.path.exists(MOSQUITTO):
            raise RuntimeError("mosquitto is not installed: tools/system-deps installs it (apt-get install mosquitto)")
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.users = dict(users)
        passwd = self.folder / "passwd"
        passwd.write_text("")
        passwd.chmod(0o600)
        for name, pw in users.items():
            subprocess.run([MOSQUITTO_PASSWD, "-b", str(passwd), name, pw], check=True, capture_output=True)
        (self.folder / "acl").write_text(acl)
        (self.folder / "acl").chmod(0o600)
        lines = [f"listener {self.port} 127.0.0.1", "allow_anonymous false", f"password_file {passwd}",
                 f"acl_file {self.folder / 'acl'}", f"persistence {'true' if persistence else 'false'}",
                 f"persistence_location {self.folder}/", "log_dest stderr", "log_type error", "log_type warning"]
        if os.geteuid() == 0:
            lines.append(f"user {getpass.getuser()}")  # do not drop to the mosquitto user: the files are ours
        self.conf = self.folder / "mosquitto.conf"
        self.conf.write_text("\n".join(lines) + "\n")
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self, timeout: float = 10.0) -> None:
        """Start it (again, on the same port) and wait until it accepts connections."""
        self.proc = subprocess.Popen([MOSQUITTO, "-c", str(self.conf)], stdout=subprocess.DEVNULL,
                                     stderr=open(self.folder / "mosquitto.log", "ab"))
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto ended at start: {(self.folder / 'mosquitto.log').read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not listen within %s s" % timeout)

    def stop(self) -> None:
        """SIGTERM (it saves its persistence file), then wait."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def restart(self, down_s: float = 0.0) -> None:
        self.stop()
        time.sleep(down_s)
        self.start()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class Listener:
    """A subscriber (paho 2.x) recording what arrives: ``messages`` ``[(topic, payload str, retain)]``.

    A persistent session (``clean_start`` false, QoS 1 subscriptions) as the hall's: messages
    published while it is away from a broker that keeps sessions reach it when it is back.
    """

    def __init__(self, broker: Broker, user: str, topics: tuple[str, ...] = ("mjtable/#",),
                 client_id: str = "test-listener") -> None:
        import threading

        import paho.mqtt.client as paho
        from paho.mqtt.enums import CallbackAPIVersion
        self.messages: list[tuple[str, str, bool]] = []
        self._lock = threading.Lock()
        self.connected = threading.Event()
        self.subscribed = threading.Event()
        c = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=paho.MQTTv5)
        c.username_pw_set(user, broker.users[user])
        c.reconnect_delay_set(0.1, 0.5)

        def on_connect(client, userdata, flags, rc, props):
            if not rc.is_failure:
                self.connected.set()
                client.subscribe([(t, 1) for t in topics])

        def on_subscribe(client, userdata, mid, rcs, props):
            self.subscribed.set()

        def on_disconnect(client, userdata, flags, rc, props):
            self.connected.clear()

        def on_message(client, userdata, msg):
            with self._lock:
                self.messages.append((msg.topic, msg.payload.decode(), bool(msg.retain)))

        c.on_connect, c.on_subscribe, c.on_message, c.on_disconnect = on_connect, on_subscribe, on_message, on_disconnect
        c.connect_async("127.0.0.1", broker.port, keepalive=10, clean_start=False,
                        properties=_session_properties())
        c.loop_start()
        self.client = c
        if not self.subscribed.wait(10):
            raise RuntimeError("the listener did not subscribe within 10 s")

    def of(self, suffix: str) -> list[tuple[str, str, bool]]:
        with self._lock:
            return [m for m in self.messages if m[0].endswith(suffix)]

    def events(self) -> list[dict]:
        import json
        with self._lock:
            return [json.loads(p) for t, p, _ in self.messages if "/event/" in t]

    def wait(self, cond, timeout: float = 20.0, what: str = "the condition") -> None:
        end = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > end:
                raise AssertionError(f"{what} not met within {timeout} s; got {self.messages[-10:]}")
            time.sleep(0.05)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _session_properties():
    """MQTT 5: the session outlives the connection (an hour), so the broker queues for it."""
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties
    p = Properties(PacketTypes.CONNECT)
    p.SessionExpiryInterval = 3600
    return p


class Cable:
    """A TCP relay between clients and ``127.0.0.1:<target_port>`` that can be cut like a network
    cable: ``cut()`` makes every connection silent (bytes are swallowed both ways, nothing is closed,
    new connections are accepted and swallowed too), as when a switch loses power; ``mend()`` closes
    the silent connections (their peers would have timed them out) and relays new ones again."""

    def __init__(self, target_port: int) -> None:
        import threading
        self.target = target_port
        self.port = free_port()
        self._srv = socket.socket()
        self._srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._srv.bind(("127.0.0.1", self.port))
        self._srv.listen(16)
        self._cut = threading.Event()
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import threading
        while not self._closed:
            try:
                c, _ = self._srv.accept()
            except OSError:
                return
            try:
                up = socket.create_connection(("127.0.0.1", self.target), timeout=5)
            except OSError:
                c.close()
                continue
            up.settimeout(None)
            with self._lock:
                self._conns += [c, up]
            silent = self._cut.is_set()
            for a, b in ((c, up), (up, c)):
                threading.Thread(target=self._pump, args=(a, b, silent), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, silent: bool) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if silent or self._cut.is_set():
                    silent = True  # once cut, this connection stays dead
                    continue
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.close()
            except OSError:
                pass

    def cut(self) -> None:
        self._cut.set()

    def mend(self) -> None:
        with self._lock:
            conns, self._conns = self._conns, []
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
                s.close()
            except OSError:
                pass
        self._cut.clear()

    def close(self) -> None:
        self._closed = True
        self._srv.close()
        self.mend()
