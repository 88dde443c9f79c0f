"""The service configuration: ``table.toml`` (optional) and the command-line options over it.

    [service]
    host = "127.0.0.1"        # the address to bind: 127.0.0.1 unless told otherwise
    port = 8080
    token_file = "/var/lib/mjtable/token"   # default: <state dir>/token
    log = "/var/lib/mjtable/events.sqlite"  # default: <state dir>/events.sqlite
    max_upload_mb = 8         # largest photo accepted (MB)

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

from .errors import ConfigError

BACKENDS = ("sim", "gpio", "mcu")


@dataclasses.dataclass
class ServiceConfig:
    """What ``mjtable serve`` runs with (see the module docstring for the keys).

    Attributes: host, port (TCP), token_file, log (paths), max_upload_bytes, backend, serial_port,
    profile (None: the stored setting), speed (sim machine s per wall s), seed (None: random),
    camera_image (path or None), camera_source ("picamera", "usb" or None), camera_device,
    public_url (the address phones open to pair, e.g. behind a proxy; None: the LAN address).
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

    @property
    def sim(self) -> bool:
        return self.backend == "sim"


_KEYS = {"service": {"host": str, "port": int, "token_file": str, "log": str, "max_upload_mb": (int, float),
                     "public_url": str},
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
        setattr(cfg, key, Path(v) if key in ("token_file", "log") else v)
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
