"""Runs ``mjtable`` commands one after another in one process (tests/firmware/test_fw_matrix.py).

Each line on standard input is a JSON list of arguments (``["diagnose", "--sim", ...]``); for
each, the command runs in this process (``app.cli.main``) and one JSON line goes to standard
output: ``{"argv": [...], "code": exit code, "out": its output, "err": its error output,
"seconds": wall time}``. One process for several cases pays Python's start and the imports
(about 0.8 s of CPU) once, not once per case.
"""

import io
import json
import sys
import time
from contextlib import redirect_stderr, redirect_stdout

from app.cli import main


def run(argv: list[str]) -> dict:
    out, err = io.StringIO(), io.StringIO()
    start = time.monotonic()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as e:       # argparse refusals
            code = e.code
        except BaseException as e:    # noqa: BLE001  (reported to the test, which fails on it)
            code, err = -1, io.StringIO(f"{type(e).__name__}: {e}")
    return {"argv": argv, "code": code, "out": out.getvalue(), "err": err.getvalue(),
            "seconds": round(time.monotonic() - start, 2)}


if __name__ == "__main__":
    reply = sys.stdout
    for line in sys.stdin:
        if line.strip():
            reply.write(json.dumps(run(json.loads(line))) + "\n")
            reply.flush()
