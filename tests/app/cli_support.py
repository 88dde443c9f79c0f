"""Running ``mjtable`` in-process in the command-line tests."""

from __future__ import annotations

import sys

import pytest

from app.cli import main


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    """``mjtable ARGV``: its exit code, standard output and standard error."""
    with pytest.raises(SystemExit) as e:
        sys.exit(main(argv))
    out, err = capsys.readouterr()
    return e.value.code, out, err
