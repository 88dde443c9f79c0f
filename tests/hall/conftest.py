"""The hall's database for the store tests: each test that takes ``database`` runs twice, on a
SQLite file and on a real PostgreSQL server (``tests/postgres_server.py``: a new cluster started for
the session on a free port, one new database per test). The PostgreSQL runs are skipped, with the
reason, only where PostgreSQL or psycopg is not installed (``tools/system-deps`` installs the
former, the ``dev`` extra the latter)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@pytest.fixture(scope="session")
def postgres():
    from postgres_server import PostgresServer, bin_dir
    if bin_dir() is None:
        pytest.skip("PostgreSQL is not installed: tools/system-deps installs it (apt-get install postgresql)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed: pip install -e '.[dev]' (or the postgres extra)")
    server = PostgresServer()
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path):
    """The hall's database argument: a SQLite path, or the URL of a new PostgreSQL database."""
    if request.param == "sqlite":
        return tmp_path / "hall.sqlite"
    return request.getfixturevalue("postgres").create_database()
