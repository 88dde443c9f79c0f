"""The service configuration: ``table.toml`` (optional) and the command-line options over it.

    [service]
    host = "127.0.0.1"        # the address to bind: 127.0.0.1 unless told otherwise
    port = 8080
    token_file = "/var/lib/mjtable/token"   # default: <state dir>/token
    log = "/var/lib/mjtable/events.sqlite"  # default: <state dir>/events.sqlite
    max_upload_mb = 8         # largest photo accepted (MB)
    allowed_hosts = ["mjtable.local", "192.168.1.20"]  # names the Host header may carry; default: localhost,
                              # 127.0.0.1, ::1, this machine's name and name.local, its addresses; "*": any
    max_streams = 64          # open live-update streams (GET /api/events) in all
    max_streams_per_client = 4   # ... and per client address
    tls_cert = "/etc/mjtable/cert.pem"   # HTTPS with this certificate chain and key (both or neither)
    tls_key = "/etc/mjtable/key.pem"

    [machine]
    backend = "mcu"           # sim | gpio | mcu
    port = "/dev/serial0"     # the microcontroller's serial device (mcu)
    profile = "default"       # default: the stored setting
    speed = 1.0               # sim: machine seconds per wall second
    seed = 0                  # sim: the simulated machine's seed (default: random)

    [camera]
    image = "table.jpg"       # a picture file used as the camera (tests, a fixed camera dump)
    source = "picamera"       # or a live camera: picamera | usb (vision's capture)
    device = 0               # usb: an index (/dev/video0) or a path, e.g. "/dev/v4l/by-id/usb-...-video-index0"

    [mqtt]                    # reporting to a hall's MQTT broker (docs/mqtt.md); off unless enabled
    enabled = true
    host = "hall.local"       # the broker
    port = 1883               # default 1883, 8883 with ca_file
    table_id = "t07"          # letters, digits, - and _ (1-64): topics mjtable/<table_id>/...
    credentials_file = "/etc/mjtable/mqtt.credentials"  # one line user:password, mode 0600
    ca_file = "/etc/mjtable/hall-ca.pem"  # TLS: the CA that signed the broker's certificate
    qos = 1                   # 1 or 2: events wait in the outbox until the broker acknowledges them
    keepalive = 30            # seconds (5-600); the broker sends the last will after 1.5 of these
    discovery = true          # Home Assistant discovery under discovery_prefix
    discovery_prefix = "homeassistant"

Every error names the key (``ConfigError``).
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
import tomllib
from pathlib import Path
from typing import Any

from controller import settings as ST
from hardware.table_spec import BACKENDS

from .errors import ConfigError

#: the folder of the service's state (token, event log): $MJTABLE_STATE_DIR, else the XDG state dir;
#: shared with the hall (``hall.config``), which may not import the controller itself
state_dir = ST.state_dir
#: a table id: the one topic level under ``mjtable/`` (no ``/``, ``+``, ``#``)
TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclasses.dataclass
class MqttConfig:
    """``[mqtt]``: reporting to a broker (``service.mqtt``). Off (``enabled = False``) by default.

    Attributes: enabled, host, port (TCP; None: 1883, or 8883 with ``ca_file``), table_id (the
    topic level ``mjtable/<table_id>/``), credentials_file (a 0600 file holding ``user:password``;
    None: no login), ca_file (TLS with this CA; None: plain TCP), qos (1 or 2, of the events and the
    retained topics), keepalive (s), discovery (Home Assistant discovery), discovery_prefix.
    """

    enabled: bool = False
    host: str = "localhost"
    port: int | None = None
    table_id: str | None = None
    credentials_file: Path | None = None
    ca_file: Path | None = None
    qos: int = 1
    keepalive: int = 30
    discovery: bool = True
    discovery_prefix: str = "homeassistant"

    @property
    def broker_port(self) -> int:
        return self.port if self.port is not None else (8883 if self.ca_file is not None else 1883)


def apply_server_args(cfg: Any, host: str | None, port: int | None, token_file: str | None) -> None:
    """Override ``cfg.host``, ``cfg.port`` and ``cfg.token_file`` from command-line options (``None``:
    keep the file's value); shared by ``mjtable serve`` and ``mjtable hall``.

    Raises:
        ConfigError: a port outside 0-65535 (0: any free port).
    """
    if host is not None:
        cfg.host = host
    if port is not None:
        if not 0 <= port <= 65535:
            raise ConfigError(f"--port must be 0-65535, got {port}")
        cfg.port = port
    if token_file is not None:
        cfg.token_file = Path(token_file)


def read_credentials(path: Path, where: str = "[mqtt] credentials_file") -> tuple[str, str]:
    """``(user, password)`` from a credentials file: one line ``user:password`` (the password may
    hold ``:``). The file must be a regular file that only its owner can read or write (mode 0600
    or 0400): the broker's password must not be readable by other users of the Pi.

    Raises:
        ConfigError: missing or unreadable file, a group/other permission bit set, no ``user:`` line.
    """
    try:
        st = os.stat(path)
    except OSError as e:
        raise ConfigError(f"{where}: cannot read {path}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{where}: {path} is not a file")
    if st.st_mode & 0o077:
        raise ConfigError(f"{where}: {path} has mode {stat.S_IMODE(st.st_mode):04o}; it holds a password and must "
                          f"be readable by its owner only: chmod 600 {path}")
    try:
        line = path.read_text(encoding="utf-8").strip().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{where}: cannot read {path}: {e}") from None
    user, sep, password = (line[0] if line else "").partition(":")
    if not sep or not user.strip():
        raise ConfigError(f"{where}: {path} must hold one line user:password")
    return user.strip(), password


@dataclasses.dataclass
class ServiceConfig:
    """What ``mjtable serve`` runs with (see the module docstring for the keys).

    Attributes: host, port (TCP), token_file, log (paths), max_upload_bytes, backend, serial_port,
    profile (None: the stored setting), speed (sim machine s per wall s), seed (None: random),
    camera_image (path or None), camera_source ("picamera", "usb" or None), camera_device,
    public_url (the address phones open to pair, e.g. behind a proxy; None: the LAN address).
    allowed_hosts (None: the defaults of ``service.guard.default_hosts``), max_streams,
    max_streams_per_client, tls_cert and tls_key (paths or None), mqtt (``MqttConfig``).
    """

    host: str = "127.0.0.1"
    port: int = 8080
    token_file: Path = dataclasses.field(default_factory=lambda: ST.state_dir() / "token")
    log: Path = dataclasses.field(default_factory=lambda: ST.state_dir() / "events.sqlite")
    max_upload_bytes: int = 8 * 1024 * 1024
    backend: str = "mcu"
    serial_port: str = "/dev/serial0"
    profile: str | None = None
    speed: float = 1.0
    seed: int | None = None
    camera_image: Path | None = None
    camera_source: str | None = None
    camera_device: int | str = 0
    preload_vision: bool = True
    public_url: str | None = None
    allowed_hosts: tuple[str, ...] | None = None
    max_streams: int = 64
    max_streams_per_client: int = 4
    tls_cert: Path | None = None
    tls_key: Path | None = None
    mqtt: MqttConfig = dataclasses.field(default_factory=MqttConfig)

    @property
    def sim(self) -> bool:
        return self.backend == "sim"


_KEYS = {"service": {"host": str, "port": int, "token_file": str, "log": str, "max_upload_mb": (int, float),
                     "public_url": str, "allowed_hosts": list, "max_streams": int, "max_streams_per_client": int,
                     "tls_cert": str, "tls_key": str},
         "machine": {"backend": str, "port": str, "profile": str, "speed": (int, float), "seed": int},
         "camera": {"image": str, "source": str, "device": (int, str), "preload": bool},
         "mqtt": {"enabled": bool, "host": str, "port": int, "table_id": str, "credentials_file": str, "ca_file": str,
                  "qos": int, "keepalive": int, "discovery": bool, "discovery_prefix": str}}


def load(path: str | Path | None) -> ServiceConfig:
    """The configuration from ``path`` (None: the defaults).

    Raises:
        ConfigError: unreadable file, bad TOML, unknown section or key, wrong type or value.
    """
    cfg = ServiceConfig()
    if path is None:
        return cfg
    p = Path(path)
    for section, key, v in read_toml(p, _KEYS):
        _apply(cfg, section, key, v, p)
    check_mqtt(cfg.mqtt, f"config {p}: mqtt")
    return cfg


def read_toml(p: Path, keys: dict[str, dict[str, Any]]) -> list[tuple[str, str, Any]]:
    """``[(section, key, value)]`` of the TOML file ``p``, each section and key one of ``keys``
    (``{section: {key: type or tuple of types}}``) and each value of its type (a bool is not an int).

    Raises:
        ConfigError: unreadable file, bad TOML, unknown section or key, wrong type; naming the key.
    """
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"cannot read config {p}: {e.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"config {p} is not valid TOML: {e}") from None
    out = []
    for section, values in data.items():
        if section not in keys:
            raise ConfigError(f"config {p}: unknown section [{section}]; sections are {', '.join(keys)}")
        if not isinstance(values, dict):
            raise ConfigError(f"config {p}: {section} must be a [section]")
        for key, v in values.items():
            typ = keys[section].get(key)
            if typ is None:
                raise ConfigError(f"config {p}: unknown key {section}.{key}; keys are {', '.join(keys[section])}")
            if not isinstance(v, typ) or (typ is not bool and isinstance(v, bool)):
                raise ConfigError(f"config {p}: {section}.{key} has the wrong type ({type(v).__name__})")
            out.append((section, key, v))
    return out


def check_mqtt(m: MqttConfig, where: str = "[mqtt]") -> None:
    """Check ``[mqtt]`` as a whole: an enabled one needs a table_id; a credentials file must be
    0600 and hold ``user:password``; a CA file must be readable.

    Raises:
        ConfigError: naming the key.
    """
    if m.enabled and m.table_id is None:
        raise ConfigError(f"{where}.table_id is needed when [mqtt] enabled = true: the table's name on the broker, "
                          "letters, digits, - and _ (e.g. \"t07\")")
    if m.credentials_file is not None:
        read_credentials(m.credentials_file, f"{where}.credentials_file")
    if m.ca_file is not None:
        try:
            with open(m.ca_file, "rb") as fh:
                fh.read(1)
        except OSError as e:
            raise ConfigError(f"{where}.ca_file: cannot read {m.ca_file}: {e.strerror}") from None


def check_public_url(v: str, where: str = "--public-url") -> str:
    """``v`` when it is an http(s) address without a fragment, e.g. ``https://table7.hall.example``.
    Raises ConfigError naming ``where``."""
    import urllib.parse
    u = urllib.parse.urlsplit(v)
    if u.scheme not in ("http", "https") or not u.hostname or u.fragment or u.query:
        raise ConfigError(f"{where} must be an http:// or https:// address without ? or #, e.g. "
                          f"http://192.168.1.20:8080, got {v!r}")
    if u.hostname in ("localhost", "0.0.0.0", "::", "::1") or u.hostname.startswith("127."):
        raise ConfigError(f"{where} {v!r} is not an address a phone can open: give the table's LAN address or name")
    return v.rstrip("/")


def _apply(cfg: ServiceConfig, section: str, key: str, v: Any, p: Path) -> None:
    where = f"config {p}: {section}.{key}"
    if section == "service":
        if key == "port" and not 0 <= v <= 65535:
            raise ConfigError(f"{where} must be 0-65535, got {v}")
        if key == "public_url":
            cfg.public_url = check_public_url(v, where)
            return
        if key == "max_upload_mb":
            if not 0 < v <= 64:
                raise ConfigError(f"{where} must be more than 0 and at most 64, got {v}")
            cfg.max_upload_bytes = int(v * 1024 * 1024)
            return
        if key == "allowed_hosts":
            if not v or not all(isinstance(h, str) and h.strip() and not any(c.isspace() for c in h) for h in v):
                raise ConfigError(f'{where} must be a list of host names or addresses, e.g. ["mjtable.local"], '
                                  f'or ["*"] for any; got {v!r}')
            cfg.allowed_hosts = tuple(h.strip().lower() for h in v)
            return
        if key in ("max_streams", "max_streams_per_client") and not 1 <= v <= 1000:
            raise ConfigError(f"{where} must be 1-1000, got {v}")
        setattr(cfg, key, Path(v) if key in ("token_file", "log", "tls_cert", "tls_key") else v)
    elif section == "machine":
        if key == "backend" and v not in BACKENDS:
            raise ConfigError(f"{where} must be one of {', '.join(BACKENDS)}, got {v!r}")
        if key == "speed" and not 0 < v <= 100:
            raise ConfigError(f"{where} must be more than 0 and at most 100, got {v}")
        setattr(cfg, {"port": "serial_port"}.get(key, key), v)
    elif section == "mqtt":
        apply_mqtt(cfg.mqtt, key, v, where)
    else:
        if key == "source" and v not in ("picamera", "usb"):
            raise ConfigError(f"{where} must be picamera or usb, got {v!r}")
        if key == "device" and (v < 0 if isinstance(v, int) else not v.startswith("/dev/")):
            raise ConfigError(f"{where} must be an index >= 0 (/dev/videoN) or a path under /dev/, "
                              f"e.g. /dev/v4l/by-id/usb-...-video-index0; got {v!r}")
        setattr(cfg, {"image": "camera_image", "source": "camera_source", "device": "camera_device",
                      "preload": "preload_vision"}[key], Path(v) if key == "image" else v)


def apply_mqtt(m: Any, key: str, v: Any, where: str) -> None:
    """Check one ``[mqtt]`` value (of the type ``read_toml`` checked) and set it on ``m`` (an
    ``MqttConfig``, or the hall's, which shares the broker keys). Raises ConfigError naming ``where``."""
    if key == "port" and not 1 <= v <= 65535:
        raise ConfigError(f"{where} must be 1-65535, got {v}")
    if key == "host" and (not v.strip() or any(c.isspace() for c in v)):
        raise ConfigError(f"{where} must be the broker's host name or address, got {v!r}")
    if key == "table_id" and not TABLE_ID.fullmatch(v):
        raise ConfigError(f"{where} must be 1-64 letters, digits, - or _ (one MQTT topic level), got {v!r}")
    if key == "qos" and v not in (1, 2):
        raise ConfigError(f"{where} must be 1 or 2 (events are kept until the broker acknowledges them), got {v}")
    if key == "keepalive" and not 5 <= v <= 600:
        raise ConfigError(f"{where} must be 5-600 seconds, got {v}")
    if key == "discovery_prefix" and not re.fullmatch(r"[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)*", v):
        raise ConfigError(f"{where} must be topic levels of letters, digits, - and _, e.g. homeassistant, got {v!r}")
    setattr(m, key, Path(v) if key in ("credentials_file", "ca_file") else v)


def check_tls(cfg: ServiceConfig) -> dict[str, str]:
    """uvicorn's TLS options for ``cfg`` (``{}`` without TLS).

    Raises:
        ConfigError: only one of tls_cert and tls_key given, a file missing or unreadable, or the
            two are not a certificate and its private key; the message names the key.
    """
    if cfg.tls_cert is None and cfg.tls_key is None:
        return {}
    if cfg.tls_cert is None or cfg.tls_key is None:
        given, missing = ("tls_cert", "tls_key") if cfg.tls_key is None else ("tls_key", "tls_cert")
        raise ConfigError(f"[service] {given} needs {missing} as well: give both (HTTPS) or neither (HTTP)")
    for key, path in (("tls_cert", cfg.tls_cert), ("tls_key", cfg.tls_key)):
        try:
            with open(path, "rb") as fh:
                fh.read(1)
        except OSError as e:
            raise ConfigError(f"[service] {key}: cannot read {path}: {e.strerror}") from None
    import ssl
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cfg.tls_cert, cfg.tls_key)
    except (ssl.SSLError, ValueError) as e:
        raise ConfigError(f"[service] tls_cert {cfg.tls_cert} and tls_key {cfg.tls_key} are not a PEM certificate "
                          f"and its private key: {getattr(e, 'reason', None) or e}") from None
    return {"ssl_certfile": str(cfg.tls_cert), "ssl_keyfile": str(cfg.tls_key)}
