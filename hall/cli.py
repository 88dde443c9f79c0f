"""``mjtable hall``: the hall's service (wired in by the ``mjtable`` command line).

    mjtable hall [--config hall.toml] [--host H] [--port P] [--token-file PATH] [--database PATH]

Opens the hall's database and token (made at the first start, mode 0600, printed once with the
pairing link), subscribes to the broker of ``[mqtt]`` (connecting in the background: a broker
that is away is retried, not an error) and serves the page until SIGTERM or Ctrl-C. Errors are
one line and exit code 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import IO, Callable


def add_parser(sub) -> None:
    """Add ``hall`` to the ``mjtable`` sub-command parsers."""
    h = sub.add_parser("hall", help="run the hall: every table's state, faults and maintenance from the MQTT broker",
                       description="Subscribe to the broker the tables report to (docs/mqtt.md), keep every table's "
                       "state and history in a database (SQLite, or PostgreSQL by URL) and serve a token-protected page. Binds to "
                       "127.0.0.1 unless --host says otherwise.")
    h.add_argument("--config", metavar="hall.toml", default=None, help="configuration file ([hall], [mqtt])")
    h.add_argument("--host", default=None, help="address to bind (default 127.0.0.1)")
    h.add_argument("--port", type=int, default=None, help="TCP port (default 8090)")
    h.add_argument("--token-file", default=None, metavar="PATH", help="the hall's token file (made, mode 0600, if missing)")
    h.add_argument("--database", default=None, metavar="PATH|URL",
                   help="the hall's database: a SQLite file, or postgresql://user:password@host:port/dbname")


def cmd_hall(args: argparse.Namespace, out: IO[str] = sys.stdout, err: IO[str] = sys.stderr, *,
             bind: Callable) -> int:
    """Run the hall until SIGTERM / Ctrl-C. ``bind(host, port)`` gives a bound socket or raises
    with one line (the table service's). Returns 0 after a clean stop, 1 with one line on ``err``."""
    from service.errors import ServiceError

    from .errors import HallError
    try:
        return _run(args, out, bind)
    except (HallError, ServiceError) as e:
        print(f"mjtable: {e.message}", file=err)
        return 1
    except Exception as e:  # the bind's own error class (one line)
        if type(e).__name__.endswith("CliError"):
            print(f"mjtable: {e}", file=err)
            return 1
        raise


def _run(args: argparse.Namespace, out: IO[str], bind: Callable) -> int:
    import uvicorn

    from service import auth
    from service.config import apply_server_args
    from service.guard import Limits, default_hosts

    from . import config as HC
    from .app import create_app
    from .store import Store, describe
    from .subscriber import Subscriber

    cfg = HC.load(args.config)
    apply_server_args(cfg, args.host, args.port, args.token_file)
    if args.database is not None:
        cfg.database = HC.database(args.database)
    sock = bind(cfg.host, cfg.port)
    try:
        token, created = auth.load_or_create(cfg.token_file)
        store = Store(cfg.database)
    except BaseException:
        sock.close()
        raise
    sub = Subscriber(cfg.mqtt, store)
    limits = Limits(allowed_hosts=frozenset(cfg.allowed_hosts) if cfg.allowed_hosts else default_hosts(None))
    app = create_app(store, token, sub, fault_days=cfg.fault_days, limits=limits)
    port = sock.getsockname()[1]
    host = "localhost" if cfg.host in ("127.0.0.1", "0.0.0.0", "::", "::1") else cfg.host
    out.write(f"mjtable hall: page at http://{host}:{port}/ (bound to {cfg.host}), broker "
              f"{cfg.mqtt.host}:{cfg.mqtt.broker_port}, database {describe(cfg.database)}, token file {cfg.token_file}\n")
    if created:
        out.write(f"mjtable hall: the hall's token (shown once; again with: cat {cfg.token_file}):\n  {token}\n"
                  f"  open http://{host}:{port}/#token={token}\n")
    out.flush()
    sub.start()
    class _Server(uvicorn.Server):
        def handle_exit(self, sig, frame) -> None:
            super().handle_exit(sig, frame)
            # a stop by signal is a clean stop: exit code 0, not the signal re-raised (as mjtable serve)
            getattr(self, "_captured_signals", []).clear()

    server = _Server(uvicorn.Config(app, host=cfg.host, port=port, log_level="warning", access_log=False,
                                           timeout_graceful_shutdown=3, lifespan="on"))
    try:
        server.run(sockets=[sock])
    finally:
        sub.stop()
        store.close()
    return 0
