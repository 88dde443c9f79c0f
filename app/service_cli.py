"""``mjtable serve``: the table service, and ``mjtable unit``: its systemd unit (wired in by
``app/cli.py``).

    mjtable serve [--sim] [--config table.toml] [--host H] [--port P] [--token-file PATH]
                  [--log PATH] [--speed N] [--seed N] [--fault KIND[:SIDE][:NAME=VALUE,...]] [--camera-image FILE]
    mjtable unit [--config table.toml] [--profile P] [--backend sim|gpio|mcu]

Opens the machine (the simulator with ``--sim``, else the backend of the config: the
microcontroller on ``/dev/serial0`` by default), the event log and the token, prints the token
and its pairing QR code at the first start, then serves the API and the page until SIGTERM or
Ctrl-C. Every motor is stopped when it ends, whatever the reason. Errors are one line
(``ServiceCliError`` and the service's ``ServiceError``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import IO

from hardware.table_spec import BACKENDS


class ServiceCliError(Exception):
    """``mjtable serve`` cannot start (one line for the user)."""


def add_parsers(sub) -> None:
    """Add ``serve`` to the ``mjtable`` sub-command parsers."""
    s = sub.add_parser("serve", help="run the table service: HTTP API, web page, event log",
                       description="Run the controller, the camera pipeline and the scorer in one process with an "
                       "HTTP API and a web page. Binds to 127.0.0.1 unless --host says otherwise.")
    s.add_argument("--sim", action="store_true", help="run on the built-in simulated machine")
    s.add_argument("--config", metavar="table.toml", default=None, help="configuration file ([service], [machine], [camera])")
    s.add_argument("--host", default=None, help="address to bind (default 127.0.0.1; 0.0.0.0 for every interface)")
    s.add_argument("--port", type=int, default=None, help="TCP port (default 8080)")
    s.add_argument("--token-file", default=None, metavar="PATH",
                   help="the control token's file: used if it exists, created (mode 0600) otherwise")
    s.add_argument("--log", default=None, metavar="PATH", help="the SQLite event log (default: state dir/events.sqlite)")
    s.add_argument("--speed", type=float, default=None,
                   help="simulator: machine seconds per wall second (default 1: real time)")
    s.add_argument("--seed", type=int, default=None, help="simulator: the machine's seed (default random)")
    s.add_argument("--fault", action="append", default=[], metavar="KIND[:SIDE][:NAME=VALUE,...]",
                   help="simulator: a fault present from the start (repeatable)")
    s.add_argument("--camera-image", default=None, metavar="FILE", help="a picture file used as the table's camera")
    s.add_argument("--no-preload", action="store_true", help="load the camera pipeline at the first photo, not at start")
    s.add_argument("--public-url", default=None, metavar="URL",
                   help="the address phones open to pair (QR code), e.g. behind a proxy; default: the LAN address "
                   "of the default route when bound to 0.0.0.0")
    tk = sub.add_parser("token", help="show the control token and its pairing QR code again (on the table itself)",
                        description="Read the token file (this machine only: the token is never sent over the "
                        "network) and print the token with the QR code of the pairing address.")
    tsub = tk.add_subparsers(dest="token_command", required=True)
    show = tsub.add_parser("show", help="print the token and the pairing QR code")
    show.add_argument("--config", metavar="table.toml", default=None, help="the service's configuration")
    show.add_argument("--token-file", default=None, metavar="PATH", help="the token file (default: from the config)")
    show.add_argument("--host", default=None, help="the address the service binds (default: from the config)")
    show.add_argument("--port", type=int, default=None, help="the service's TCP port (default: from the config)")
    show.add_argument("--public-url", default=None, metavar="URL", help="the address phones open to pair")
    u = sub.add_parser("unit", help="print the systemd unit of the table service for a configuration",
                       description="Print the whole systemd unit (hardware/pi_safety.render_unit). On the GPIO build "
                       "its ExecStopPost=+ hook drives every motor output off after any exit; the pins come from "
                       "the profile. Install: mjtable unit --config /etc/mjtable/table.toml | "
                       "sudo tee /etc/systemd/system/mjtable.service")
    u.add_argument("--config", metavar="table.toml", default=None,
                   help="the service's configuration: its [machine] backend and profile, and the path ExecStart "
                   "passes (default: the built-in defaults, backend mcu, and /etc/mjtable/table.toml)")
    u.add_argument("--profile", default=None,
                   help="machine profile (default: [machine] profile of the config, else default); set it in "
                   "table.toml so that the service and its unit use the same pin map")
    u.add_argument("--backend", choices=BACKENDS, default=None,
                   help="the backend the unit is for (default: [machine] backend of the config)")


#: connections the kernel holds for the service before it accepts them (asyncio accepts a smaller
#: batch per turn: ``service.connections.connection_cap``)
LISTEN_QUEUE = 1024
#: the configuration file the unit's ExecStart names when ``mjtable unit`` is given none
DEFAULT_CONFIG_PATH = "/etc/mjtable/table.toml"


def cmd_unit(args: argparse.Namespace, out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """Print the systemd unit for ``--config`` (or the defaults) to ``out``. Returns 0, or 1 with a
    one-line message on ``err`` (unreadable config, unknown profile, a path the unit cannot hold)."""
    from hardware import HardwareError, load_profile
    from hardware.pi_safety import render_unit
    from service import config as C
    from service.errors import ServiceError
    try:
        cfg = C.load(args.config)
        profile = load_profile(args.profile or cfg.profile or "default")
        path = str(Path(args.config).resolve()) if args.config else DEFAULT_CONFIG_PATH
        (out or sys.stdout).write(render_unit(profile, args.backend or cfg.backend, config_path=path))
        return 0
    except (ServiceError, HardwareError, ValueError) as e:
        print(f"mjtable: {getattr(e, 'message', None) or e}", file=err or sys.stderr)
        return 1


def _config(args):
    from service import config as C
    from service.errors import ConfigError
    cfg = C.load(args.config)
    if getattr(args, "sim", False):
        cfg.backend = "sim"
    C.apply_server_args(cfg, args.host, args.port, args.token_file)
    if getattr(args, "log", None) is not None:
        cfg.log = Path(args.log)
    if getattr(args, "speed", None) is not None:
        if not 0 < args.speed <= 100:
            raise ConfigError(f"--speed must be more than 0 and at most 100, got {args.speed:g}")
        cfg.speed = args.speed
    if getattr(args, "seed", None) is not None:
        cfg.seed = args.seed
    if getattr(args, "camera_image", None) is not None:
        cfg.camera_image = Path(args.camera_image)
    if getattr(args, "no_preload", False):
        cfg.preload_vision = False
    if args.public_url is not None:
        cfg.public_url = C.check_public_url(args.public_url)
    if getattr(args, "fault", None) and cfg.backend != "sim":
        raise ConfigError("--fault needs --sim: faults are injected into the simulated machine")
    return cfg


def _local_url(cfg, port: int | None = None, tls: bool = False) -> str:
    """The page's address on this machine (what the start line prints; never in a QR code):
    ``port`` the bound one (None: the configured one), ``tls`` for https."""
    host = ("localhost" if cfg.host in ("127.0.0.1", "::1", "0.0.0.0", "::") else
            f"[{cfg.host}]" if ":" in cfg.host else cfg.host)
    return f"{'https' if tls else 'http'}://{host}:{cfg.port if port is None else port}"


def cmd_token(args: argparse.Namespace, out: IO[str] | None = None, err: IO[str] | None = None) -> int:
    """``mjtable token show``: the token and the pairing QR code again, from the token file. Returns
    0, or 1 with one line on ``err`` (no token file yet, unreadable config)."""
    from service import auth
    from service.errors import ServiceError
    try:
        cfg = _config(args)
        token = auth.read(cfg.token_file)
        (out or sys.stdout).write(auth.pairing_text(auth.pairing_url(cfg.host, cfg.port, cfg.public_url), token,
                                                    new=False, local_url=_local_url(cfg)))
        return 0
    except ServiceError as e:
        print(f"mjtable: {e.message}", file=err or sys.stderr)
        return 1


def _open_backend(cfg, faults: list[str]):
    """The table of the service's configuration (``hardware.open_table``) and the stored settings."""
    import hardware
    from controller import settings as ST
    stored = ST.load()
    simulated = cfg.backend == "sim"
    # a real board may be absent at start: a lost link is a fault on the page (E62), reconnected by itself
    spec = hardware.TableSpec(simulated=simulated, backend=cfg.backend, port=cfg.serial_port,
                              profile=cfg.profile or stored.profile, seed=cfg.seed, faults=tuple(faults),
                              reconnect=not simulated and cfg.backend == "mcu")
    return hardware.open_table(spec), stored


def cmd_serve(args: argparse.Namespace, out: IO[str] = sys.stdout, err: IO[str] = sys.stderr) -> int:
    """Run the service until SIGTERM / Ctrl-C. Returns the exit code: 0 after a clean stop, 1 with a
    one-line message on ``err`` when it cannot start."""
    from hardware import HardwareError
    from service.errors import ServiceError

    from controller.settings import SettingsError
    try:
        return _serve(args, out)
    except (ServiceCliError, ServiceError, HardwareError, SettingsError) as e:
        print(f"mjtable: {getattr(e, 'message', None) or e}", file=err)
        return 1


def _serve(args: argparse.Namespace, out: IO[str]) -> int:
    import uvicorn

    from controller import cycle as CY
    from service import auth, systemd
    from service.app import create_app
    from service.control import Control
    from service.eventlog import EventLog
    from service.hub import Hub
    from service.scorer import Scorer

    from service import config as C
    from service.connections import Connections, connection_cap, install_accept_filter, raise_nofile
    from service.guard import Limits, default_hosts

    cfg = _config(args)
    tls = C.check_tls(cfg)
    sock = _bind(cfg.host, cfg.port)  # a port in use is one line, before anything is opened or logged
    try:
        token, created = auth.load_or_create(cfg.token_file)
    except BaseException:
        sock.close()
        raise
    if cfg.mqtt.enabled:  # reporting to a broker: the events to publish wait in the log's outbox
        from service.mqtt import EVENT_KINDS
    log = EventLog(cfg.log, outbox=EVENT_KINDS if cfg.mqtt.enabled else ())
    try:
        backend, stored = _open_backend(cfg, args.fault)
    except BaseException:
        sock.close()
        log.close()
        raise
    try:
        gears = tuple(backend.profile.gears)
        if stored.tile_count not in gears:
            raise ServiceCliError(f"the stored tile count {stored.tile_count} is not a gear of the profile: "
                                  f"allowed are {', '.join(map(str, gears))} (mjtable config set tile-count N)")
        settings = CY.Settings.from_profile(backend.profile, stored.tile_count, stored.dice_method, stored.dealer)
        hub = Hub()
        control = Control(backend, settings, log, hub, speed=cfg.speed)
        publisher = None
        if cfg.mqtt.enabled:
            from service.mqtt import make_publisher
            # the hall's seating for this table: to the open pages at once (the stream's "seating" event)
            publisher = make_publisher(cfg.mqtt, log, hub.listen,
                                       on_seating=lambda s: hub.publish({"type": "seating", "seating": s}))
    except BaseException:
        sock.close()
        backend.close()
        log.close()
        raise
    soft, _ = raise_nofile()
    cap, backlog = connection_cap(soft)
    connections = Connections(cap)
    install_accept_filter()
    public_url = getattr(cfg, "public_url", None)
    limits = Limits(allowed_hosts=frozenset(cfg.allowed_hosts) if cfg.allowed_hosts else default_hosts(public_url),
                    streams_total=cfg.max_streams, streams_per_client=cfg.max_streams_per_client)
    scorer = Scorer(cfg.camera_image, cfg.camera_source, cfg.camera_device)
    app = create_app(control, log, token, scorer, max_upload_bytes=cfg.max_upload_bytes,
                     preload_vision=cfg.preload_vision, limits=limits, connections=connections,
                     seating=(lambda: publisher.seating) if publisher is not None else None)
    port = sock.getsockname()[1]
    url = _local_url(cfg, port, bool(tls))
    log.append("start", {"backend": backend.kind, "host": cfg.host, "port": cfg.port})
    out.write(f"mjtable serve: {backend.kind} machine, page at {url}/ (bound to {cfg.host}), "
              f"event log {cfg.log}, token file {cfg.token_file}\n")
    if publisher is not None:
        out.write(f"mjtable serve: reporting to the MQTT broker {cfg.mqtt.host}:{cfg.mqtt.broker_port} as "
                  f"mjtable/{cfg.mqtt.table_id}/ ({log.pending()} events waiting)\n")
    if created:
        out.write(auth.pairing_text(auth.pairing_url(cfg.host, port, cfg.public_url, tls=bool(tls)), token, local_url=url))
    out.flush()

    class _Server(uvicorn.Server):
        def handle_exit(self, sig, frame) -> None:  # SIGTERM / Ctrl-C: end the event streams at once
            systemd.notify("STOPPING=1")
            control.request_stop()  # a running self-test stops its motors and aborts now
            hub.close()
            super().handle_exit(sig, frame)
            # a stop by signal is a clean stop here: the exit code is 0, not the signal re-raised
            getattr(self, "_captured_signals", []).clear()

        async def startup(self, sockets=None) -> None:
            await super().startup(sockets)
            for s in sockets or ():  # asyncio takes `backlog` per turn; the kernel's queue may be longer
                s.listen(LISTEN_QUEUE)
            if self.started:
                systemd.notify("READY=1")

    server = _Server(uvicorn.Config(app, host=cfg.host, port=port, log_level="warning", access_log=False,
                                    timeout_graceful_shutdown=3, lifespan="on", http=connections.protocol(),
                                    backlog=backlog, **tls))
    try:
        server.run(sockets=[sock])
    finally:
        control.stop()  # no motor left running, whatever ended the server
        if not control.alive:
            log.append("stop", {"backend": backend.kind})
        if publisher is not None:
            publisher.stop()  # "offline" retained; what the broker has not acknowledged stays in the outbox
        log.close()
    if not server.started:
        raise ServiceCliError(f"could not serve on {cfg.host}:{port}")
    return 0


def _bind(host: str, port: int):
    """A socket bound to ``host``:``port`` (not listening yet: the server does that).

    Raises:
        ServiceCliError: one line naming the port and what to do: in use, a privileged port, or
            an address this machine does not have.
    """
    import errno
    import socket
    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                          flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as e:
        raise ServiceCliError(f"cannot serve on {host!r}: {e.strerror}; give an address of this machine "
                              "with --host or [service] host") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise ServiceCliError(f"port {port} on {host} is already in use (another mjtable serve?): stop it, or "
                                  "pick another port with --port N or [service] port") from None
        if e.errno == errno.EACCES:
            raise ServiceCliError(f"port {port} on {host} needs privileges: pick a port of 1024 or above with "
                                  "--port N or [service] port") from None
        raise ServiceCliError(f"cannot serve on {host} port {port}: {e.strerror}; give an address of this machine "
                              "with --host or [service] host") from None
    return sock
