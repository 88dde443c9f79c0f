"""``mjtable doctor``: check the Raspberry Pi the table runs on (wired in by ``app/cli.py``).

    mjtable doctor [--root DIR] [--config table.toml] [--json]

Prints each check (:mod:`service.doctor`) with PASS, WARN, FAIL or SKIP, what was seen and the fix
in English and Chinese. Exit code 0 when no check FAILs, 1 otherwise; a root folder that does not
exist or an unreadable table.toml is one line on standard error and exit code 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import IO


def add_parsers(sub) -> None:
    """Add ``doctor`` to the ``mjtable`` sub-command parsers."""
    d = sub.add_parser("doctor", help="check the Raspberry Pi the table runs on: PASS/WARN/FAIL and the fix",
                       description="Check the Pi for the table: model and 64-bit OS, kernel and pin driver, groups, "
                       "config.txt (UART, strict_gpiod, boot pin states), the serial port and the board's handshake, "
                       "the camera and the numpy/picamera2 pairing, the state folder, the token file, memory, disk, "
                       "the systemd unit. Exit code 1 when a check fails.")
    d.add_argument("--root", default="/", metavar="DIR",
                   help="the / of the system to check (default /; e.g. a mounted SD card). Other than /, the live "
                   "probes (handshake, camera, imports) are skipped")
    d.add_argument("--config", default=None, metavar="table.toml",
                   help="the table's configuration (default: the unit's --config, else /etc/mjtable/table.toml)")
    d.add_argument("--json", action="store_true", help="print the report as JSON")


def cmd_doctor(args: argparse.Namespace, out: IO[str] = sys.stdout) -> int:
    """Run the checks and print them. Returns 0 when none FAILs, 1 otherwise.

    Raises:
        service.doctor.DoctorError: a missing root folder, an unreadable config (one line).
    """
    from service import doctor

    report = doctor.run(args.root, args.config)
    out.write((doctor.to_json(report) if args.json else doctor.format_report(report)) + "\n")
    return 0 if report.ok else 1
