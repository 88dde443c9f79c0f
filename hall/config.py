"""The hall's configuration: ``hall.toml`` (optional) and the command line over it.

    [hall]
    host = "127.0.0.1"        # the page's address to bind: 127.0.0.1 unless told otherwise
    port = 8090
    token_file = "/var/lib/mjtable/hall-token"     # default: <state dir>/hall-token (made, mode 0600)
    database = "/var/lib/mjtable/hall.sqlite"      # default: <state dir>/hall.sqlite; or a PostgreSQL
                              # URL "postgresql://user:password@host:5432/dbname" (the postgres extra)
    fault_days = 7            # the page's faults of the last N days (1-365)
    allowed_hosts = ["hall.local"]   # names the Host header may carry (as the table's [service])

    [mqtt]                    # the broker the tables report to (docs/mqtt.md)
    host = "localhost"
    port = 1883               # default 1883, 8883 with ca_file
    credentials_file = "/etc/mjtable/hall.credentials"   # one line user:password, mode 0600
    ca_file = "/etc/mjtable/hall-ca.pem"
    keepalive = 30
    client_id = "mjtable-hall"   # the hall's persistent session on the broker

The broker keys are checked by the table's own code (``service.config.apply_mqtt``). A URL as
``database`` other than ``postgresql://`` (or ``postgres://``) is refused with a message.
Every error names the key (``service.errors.ConfigError``).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from service import config as SC
from service.errors import ConfigError

from .store import PG_URL

_KEYS = {"hall": {"host": str, "port": int, "token_file": str, "database": str, "fault_days": int,
                  "allowed_hosts": list},
         "mqtt": {"host": str, "port": int, "credentials_file": str, "ca_file": str, "keepalive": int,
                  "client_id": str}}


def _state_dir() -> Path:
    return SC.state_dir()


@dataclasses.dataclass
class BrokerConfig:
    """The hall's broker: host, port (None: 1883, or 8883 with ca_file), credentials_file (0600
    ``user:password``), ca_file, keepalive (s), client_id (its persistent session)."""

    host: str = "localhost"
    port: int | None = None
    credentials_file: Path | None = None
    ca_file: Path | None = None
    keepalive: int = 30
    client_id: str = "mjtable-hall"

    @property
    def broker_port(self) -> int:
        return self.port if self.port is not None else (8883 if self.ca_file is not None else 1883)


@dataclasses.dataclass
class HallConfig:
    """What ``mjtable hall`` runs with (see the module docstring)."""

    host: str = "127.0.0.1"
    port: int = 8090
    token_file: Path = dataclasses.field(default_factory=lambda: _state_dir() / "hall-token")
    database: Path | str = dataclasses.field(default_factory=lambda: _state_dir() / "hall.sqlite")
    fault_days: int = 7
    allowed_hosts: tuple[str, ...] | None = None
    mqtt: BrokerConfig = dataclasses.field(default_factory=BrokerConfig)


def database(value: str, where: str = "--database") -> Path | str:
    """A SQLite file's path, or a PostgreSQL URL (``postgresql://`` or ``postgres://``) kept as text.

    Raises:
        ConfigError: another kind of URL, or an empty value (names ``where`` and what is allowed).
    """
    if PG_URL.match(value):
        return value
    if "://" in value or not value.strip():
        raise ConfigError(f"{where}: {value.split('://')[0]}:// databases are not supported: give the path of a "
                          "SQLite file or a postgresql://user:password@host:port/dbname URL")
    return Path(value)


def load(path: str | Path | None) -> HallConfig:
    """The configuration from ``path`` (None: the defaults).

    Raises:
        ConfigError: unreadable file, bad TOML, unknown section or key, wrong type or value, a
            credentials file readable by others.
    """
    cfg = HallConfig()
    if path is None:
        return cfg
    p = Path(path)
    for section, key, v in SC.read_toml(p, _KEYS):
        where = f"config {p}: {section}.{key}"
        if section == "mqtt":
            if key == "client_id":
                if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", v):
                    raise ConfigError(f"{where} must be 1-64 letters, digits, - or _, got {v!r}")
                cfg.mqtt.client_id = v
            else:
                SC.apply_mqtt(cfg.mqtt, key, v, where)
            continue
        if key == "port" and not 0 <= v <= 65535:
            raise ConfigError(f"{where} must be 0-65535, got {v}")
        if key == "fault_days" and not 1 <= v <= 365:
            raise ConfigError(f"{where} must be 1-365 days, got {v}")
        if key == "database":
            cfg.database = database(v, where)
            continue
        if key == "allowed_hosts":
            if not v or not all(isinstance(h, str) and h.strip() for h in v):
                raise ConfigError(f'{where} must be a list of host names or addresses, e.g. ["hall.local"]')
            cfg.allowed_hosts = tuple(h.strip().lower() for h in v)
            continue
        setattr(cfg, key, Path(v) if key == "token_file" else v)
    if cfg.mqtt.credentials_file is not None:
        SC.read_credentials(cfg.mqtt.credentials_file, f"config {p}: mqtt.credentials_file")
    return cfg
