"""docs/protocol.md's message catalogue agrees with firmware_bridge.catalogue: every TYPE
row names a message the code has, under that code, with the code's payload layout, and
every message of the code has a row."""

from __future__ import annotations

import pathlib
import re

from firmware_bridge import catalogue as C
from firmware_bridge.wire import PROTOCOL_VERSION

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
ROW = re.compile(r"^\| 0x([0-9A-Fa-f]{2}) \| (\w+) \|(.*)$")


def test_catalogue_tables_match_the_code():
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            rows[int(m.group(1), 16)] = (m.group(2), m.group(3))
    assert set(rows) == set(C.FORMATS), set(rows) ^ set(C.FORMATS)
    for mtype, (name, rest) in rows.items():
        assert getattr(C, "T_" + name, None) == mtype, f"0x{mtype:02X} {name}"
        fmt = C.FORMATS[mtype]
        layouts = re.findall(r"`(<[^`]*)`", rest)
        if fmt:
            assert layouts and layouts[0] == fmt, f"{name}: doc {layouts[:1]}, code {fmt!r}"
        else:
            assert "empty" in rest, name


def test_protocol_version_in_the_title():
    assert DOC.read_text(encoding="utf-8").splitlines()[0].endswith(
        f"version {PROTOCOL_VERSION}")
