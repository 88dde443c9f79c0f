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

Every error names the key (``ConfigError``).
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

from controller import settings as ST
from hardware.table_spec import BACKENDS

from .errors import ConfigError


@dataclasses.dataclass
class ServiceConfig:
    """What ``mjtable serve`` runs with (see the module docstring for the keys).

    Attributes: host, port (TCP), token_file, log (paths), max_upload_bytes, backend, serial_port,
    profile (None: the stored setting), speed (sim machine s per wall s), seed (None: random),
    camera_image (path or None), camera_source ("picamera", "usb" or None), camera_device,
    public_url (the address phones open to pair, e.g. behind a proxy; None: the LAN address).
    allowed_hosts (None: the defaults of ``service.guard.default_hosts``), max_streams,
    max_streams_per_client, tls_cert and tls_key (paths or None).
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

    @property
    def sim(self) -> bool:
        return self.backend == "sim"


_KEYS = {"service": {"host": str, "port": int, "token_file": str, "log": str, "max_upload_mb": (int, float),
                     "public_url": str, "allowed_hosts": list, "max_streams": int, "max_streams_per_client": int,
                     "tls_cert": str, "tls_key": str},
         "machine": {"backend": str, "port": str, "profile": str, "speed": (int, float), "seed": int},
         "camera": {"image": str, "source": str, "device": (int, str), "preload": bool}}


def load(path: str | Path | None) -> ServiceConfig:
    """The configuration from ``path`` (None: the defaults).

    Raises:
        ConfigError: unreadable file, bad TOML, unknown section or key, wrong type or value.
    """
    cfg = ServiceConfig()
    if path is None:
        return cfg
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"cannot read config {p}: {e.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"config {p} is not valid TOML: {e}") from None
    for section, values in data.items():
        if section not in _KEYS:
            raise ConfigError(f"config {p}: unknown section [{section}]; sections are {', '.join(_KEYS)}")
        if not isinstance(values, dict):
            raise ConfigError(f"config {p}: {section} must be a [section]")
        for key, v in values.items():
            typ = _KEYS[section].get(key)
            if typ is None:
                raise ConfigError(f"config {p}: unknown key {section}.{key}; keys are {', '.join(_KEYS[section])}")
            if not isinstance(v, typ) or (typ is not bool and isinstance(v, bool)):
                raise ConfigError(f"config {p}: {section}.{key} has the wrong type ({type(v).__name__})")
            _apply(cfg, section, key, v, p)
    return cfg


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
    else:
        if key == "source" and v not in ("picamera", "usb"):
            raise ConfigError(f"{where} must be picamera or usb, got {v!r}")
        if key == "device" and (v < 0 if isinstance(v, int) else not v.startswith("/dev/")):
            raise ConfigError(f"{where} must be an index >= 0 (/dev/videoN) or a path under /dev/, "
                              f"e.g. /dev/v4l/by-id/usb-...-video-index0; got {v!r}")
        setattr(cfg, {"image": "camera_image", "source": "camera_source", "device": "camera_device",
                      "preload": "preload_vision"}[key], Path(v) if key == "image" else v)


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
