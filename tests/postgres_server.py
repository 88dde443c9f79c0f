"""A real PostgreSQL server for the tests: a new cluster (``initdb``) in a temporary folder, started
with ``pg_ctl`` on a free loopback port (password login, scram-sha-256), stopped and removed by the
test. The Debian package's own cluster and service (port 5432) are never used.

PostgreSQL refuses to run as root: as root the cluster belongs to the ``postgres`` user of the
Debian package (or ``nobody``), and the folder is made for it under the system's temporary folder
(pytest's own is root's, mode 0700).

Imported by name from the hall tests (``sys.path`` gets this folder).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from mqtt_broker import free_port

USER = "hall"
PASSWORD = "pw-hall-db"


def bin_dir() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl`` (on PATH, or Debian's newest
    ``/usr/lib/postgresql/<version>/bin``); None when PostgreSQL is not installed."""
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(dirs[-1]).parent if dirs else None


class PostgresServer:
    """PostgreSQL on ``127.0.0.1:<port>``; ``url(dbname)`` to connect as the superuser ``hall``,
    ``create_database()`` a new empty database. Raises RuntimeError (with the server's log) when
    it cannot start."""

    def __init__(self) -> None:
        bins = bin_dir()
        if bins is None:
            raise RuntimeError("PostgreSQL is not installed: tools/system-deps installs it (apt-get install postgresql)")
        self.bins = bins
        self.port = free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="mjtable-pg-"))
        self.run_as: pwd.struct_passwd | None = None
        if os.geteuid() == 0:
            for name in ("postgres", "nobody"):
                try:
                    self.run_as = pwd.getpwnam(name)
                    break
                except KeyError:
                    continue
            if self.run_as is None:
                raise RuntimeError("running as root and no postgres or nobody user to run PostgreSQL as")
            os.chown(self.folder, self.run_as.pw_uid, self.run_as.pw_gid)
        pwfile = self.folder / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.run_as is not None:
            os.chown(pwfile, self.run_as.pw_uid, self.run_as.pw_gid)
        self.data = self.folder / "data"
        self.log = self.folder / "server.log"
        self._run("initdb", "-D", str(self.data), "-U", USER, f"--pwfile={pwfile}", "--auth=scram-sha-256",
                  "--encoding=UTF8", "--locale=C")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "-o",
                  f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c fsync=off", "start")
        self._n = 0

    def _run(self, tool: str, *args: str) -> None:
        kw = {"user": self.run_as.pw_uid, "group": self.run_as.pw_gid} if self.run_as is not None else {}
        r = subprocess.run([str(self.bins / tool), *args], capture_output=True, text=True, cwd=self.folder,
                           env={**os.environ, "LC_ALL": "C"}, **kw)
        if r.returncode != 0:
            log = self.log.read_text()[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{tool} failed ({r.returncode}): {r.stderr.strip()[-2000:]} {log}")

    def url(self, dbname: str = "postgres", password: str = PASSWORD) -> str:
        return f"postgresql://{USER}:{password}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self) -> str:
        """A new empty database; returns its URL."""
        import psycopg
        self._n += 1
        name = f"hall_test_{self._n}"
        with psycopg.connect(self.url(), autocommit=True) as c:
            c.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        """Stop the server (fast shutdown) and remove its folder."""
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
