"""docs/protocol.md's message catalogue agrees with firmware_bridge.catalogue, the one table the
code is built from (and from which firmware_bridge.codec derives its code maps for the table's
vocabulary), so that the three (the doc, the catalogue, the codec) cannot drift:

* every TYPE row of the doc names a message of the catalogue, under its code, with its payload
  layout and its fields in order, and every message of the catalogue has a row; the control
  rows give the direction;
* the code sets written out in the doc (sides, motors, sensors, states, stop reasons, outcomes,
  fault codes, reply results, lights, gears) are the catalogue's;
* the codec (firmware_bridge.codec) maps every part and code of the vocabulary to the catalogue's
  code of the same name, packs every goal command in its catalogue layout and decodes exactly the
  catalogue's events.
"""

from __future__ import annotations

import dataclasses
import enum
import pathlib
import re
import struct

import pytest

import table_vocabulary as V
from firmware_bridge import catalogue as C
from firmware_bridge import codec as K
from firmware_bridge.wire import PROTOCOL_VERSION

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
ROW = re.compile(r"^\| 0x([0-9A-Fa-f]{2}) \| (\w+) \|(.*)$")
TEXT = DOC.read_text(encoding="utf-8")
#: the catalogue section of the doc, as one line of prose
SECTION = " ".join(TEXT.split("## 4. Message catalogue", 1)[1].split("\n## ", 1)[0].split())
DIRECTIONS = {"H→D": "H>D", "D→H": "D>H", "both": "both"}


def _rows() -> dict[int, tuple[str, list[str]]]:
    rows = {}
    for line in TEXT.splitlines():
        m = ROW.match(line)
        if m:
            rows[int(m.group(1), 16)] = (m.group(2), [c.strip() for c in m.group(3).split(" | ")])
    return rows


def _split_fields(text: str) -> list[str]:
    """The comma-separated items of a payload description, commas inside parentheses kept."""
    items, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return items + [cur.strip()]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", re.sub(r"\([^)]*\)", " ", text.lower())))


def test_catalogue_tables_match_the_code():
    rows = _rows()
    assert set(rows) == set(C.FORMATS), set(rows) ^ set(C.FORMATS)
    for mtype, (name, cells) in rows.items():
        assert getattr(C, "T_" + name, None) == mtype, f"0x{mtype:02X} {name}"
        assert C.NAMES[mtype] == name, f"0x{mtype:02X}: doc {name}, catalogue {C.NAMES[mtype]}"
        fmt = C.FORMATS[mtype]
        cell = next((c for c in cells if "`<" in c or "empty" in c), "")
        layouts = re.findall(r"`(<[^`]*)`", cell)
        if fmt:
            assert layouts and layouts[0] == fmt, f"{name}: doc {layouts[:1]}, code {fmt!r}"
        else:
            assert cell.startswith("empty"), name


def test_every_field_of_the_catalogue_is_documented_in_order():
    """The doc's payload text lists the catalogue's fields, one comma-separated item each, in
    order: each field's words (``deadline_ms`` -> deadline, ms) appear in its item."""
    for mtype, (name, cells) in _rows().items():
        fields = C.FIELDS[mtype]
        assert len(fields) == len(struct.unpack(C.FORMATS[mtype], bytes(struct.calcsize(C.FORMATS[mtype])))), name
        if not fields:
            continue
        cell = next(c for c in cells if "`<" in c)
        text = cell.split("`", 2)[2].split(". ")[0]   # after the layout, up to the first sentence end
        items = _split_fields(text)
        assert len(items) == len(fields), f"{name}: doc lists {items}, catalogue has {fields}"
        for field, item in zip(fields, items):
            need = set(field.lower().split("_")) - {"id"} | ({"cmd"} if field == "cmd_id" else set())
            assert need <= _words(item), f"{name}: field {field} not in the doc's {item!r}"


def test_control_rows_give_the_direction():
    for mtype, (name, cells) in _rows().items():
        if mtype in C.COMMAND_TYPES or mtype in C.EVENT_TYPES:
            continue
        assert DIRECTIONS[cells[0]] == C.MESSAGES[[m[0] for m in C.MESSAGES].index(mtype)][2], name


def _pairs(label: str, stop: str) -> dict[int, str]:
    """``{value: NAME}`` of a doc sentence ``Label: 0 NAME, 1 NAME ...`` (up to ``stop``)."""
    part = SECTION.split(label + ":", 1)[1].split(stop, 1)[0]
    return {int(v): n for v, n in re.findall(r"\b(\d+) ([A-Z_]{2,})\b", part)}


@pytest.mark.parametrize("label, stop, prefix", [
    ("States", ".", "STATE_"), ("Outcomes", ".", "OUTCOME_"), ("Fault codes", "Motors mask", "FAULT_"),
    ("Result", "|", "REPLY_")])
def test_code_sets_written_with_their_names(label, stop, prefix):
    codes = {v: k[len(prefix):] for k, v in vars(C).items() if k.startswith(prefix) and type(v) is int}
    assert _pairs(label, stop) == codes


#: the doc's words for the catalogue's sensor and motor names where they are not the name itself
SAYS = {"ESTOP": "emergency stop", "PUSH_HOME": "push-head home", "CENTRE_TOP": "centre lift top",
        "CENTRE_BOTTOM": "centre lift bottom", "CENTRE": "centre lift"}


@pytest.mark.parametrize("label, stop, prefix", [("Sensors", "The three", "SENSOR_"),
                                                 ("Motors", "Sensors", "MOTOR_")])
def test_parts_written_with_their_codes(label, stop, prefix):
    part = re.sub(r" \([^)]*\)", "", SECTION.split(label + ":", 1)[1].split(stop, 1)[0]).strip(" .")
    listed = {}
    for item in part.split(", "):
        words, value = re.fullmatch(r"(.+) (\d+)", item).groups()
        listed[int(value)] = words
    codes = {v: k[len(prefix):] for k, v in vars(C).items() if k.startswith(prefix) and type(v) is int}
    assert set(listed) == set(codes), (listed, codes)
    for value, name in codes.items():
        says = SAYS.get(name, name.lower().replace("_", " "))
        assert listed[value].lower() == says, (value, name, listed[value])


def test_sides_stop_reasons_lights_and_gears():
    assert f"Sides: E = {C.SIDE_E}, S = {C.SIDE_S}, W = {C.SIDE_W}, N = {C.SIDE_N}, none = 0x{C.SIDE_NONE:X}" in SECTION
    reasons = ", ".join(f"{code} {reason.text}" for code, reason in sorted(K.STOP_IN.items()))
    assert f"Stop reasons: {reasons}." in SECTION
    dealers = "/".join(f"0x{K.LIGHT_OUT[V.Light.dealer(s)]:02x}" for s in V.Side)
    assert (f"0x{C.LIGHT_READY:02x} ready, 0x{C.LIGHT_FAULT:02x} fault, {dealers} dealer seat E/S/W/N"
            in SECTION)
    assert f"Gears: {', '.join(map(str, C.GEARS))} tiles." in SECTION


def test_the_codec_is_the_catalogue():
    """firmware_bridge.codec: each vocabulary enum maps onto the catalogue's codes of the same
    names, one to one; each goal command packs to its catalogue type and layout; decode_event knows
    exactly the catalogue's events."""
    for (out, into), prefix, rename in (
            ((K.SIDE_OUT, K.SIDE_IN), "SIDE_", {}), ((K.MOTOR_OUT, K.MOTOR_IN), "MOTOR_", {"CENTRE_LIFT": "CENTRE"}),
            ((K.SENSOR_OUT, K.SENSOR_IN), "SENSOR_", {})):
        assert {m: getattr(C, prefix + rename.get(m.name, m.name)) for m in out} == out
        assert {v: k for k, v in out.items()} == into
    for into, prefix in ((K.STATE_IN, "STATE_"), (K.STOP_IN, "STOP_"), (K.REPLY_IN, "REPLY_"),
                         (K.OUTCOME_IN, "OUTCOME_"), (K.FAULT_IN, "FAULT_")):
        codes = {v for k, v in vars(C).items() if k.startswith(prefix) and type(v) is int}
        assert set(into) == codes and all(getattr(C, prefix + m.name) == v for v, m in into.items())
    assert sorted(K.LIGHT_OUT.values()) == [C.LIGHT_READY, C.LIGHT_FAULT] + [C.LIGHT_DEALER_E << i for i in range(4)]
    sample = {V.StartShuffle: (5,), V.FeedStacks: (V.Side.E, 1, 5), V.Lift: (None, True, 5),
              V.RollDice: (1, 5), V.SetGear: (136,), V.SelfTestStep: (0, V.Motor.DICE, None, 1, 5),
              V.SetIndicators: (1, 0)}
    assert set(K.COMMAND_TYPES.values()) == set(C.COMMAND_TYPES)
    for cls in V.COMMANDS:
        mtype, payload = K.pack_command(7, cls(*sample.get(cls, ())))
        assert mtype == K.COMMAND_TYPES[cls] and len(payload) == struct.calcsize(C.FORMATS[mtype]), cls
        assert struct.unpack(C.FORMATS[mtype], payload)[0] == 7
    for mtype in C.FORMATS:
        known = K.decode_event(mtype, bytes(struct.calcsize(C.FORMATS[mtype]))) is not None
        assert known == (mtype in C.EVENT_TYPES), C.NAMES[mtype]


def test_the_codec_refuses_a_vocabulary_that_does_not_match_the_catalogue():
    """The import-time checks: a part missing on one side, a class whose fields do not line up
    with its message."""
    three_sides = enum.IntEnum("Side", {"E": 0, "S": 1, "W": 2})
    with pytest.raises(ImportError, match=r"Side and the catalogue's SIDE_\* differ in \['N'\]"):
        K._by_name(three_sides, "SIDE_", skip=("NONE",))

    @dataclasses.dataclass(frozen=True)
    class Feed:
        side: V.Side
        deadline_ms: int
    with pytest.raises(ImportError, match=r"Feed has the fields \['side', 'deadline_ms'\], its message FEED_STACK"):
        K._line_up(Feed, C.T_FEED_STACK, 1)


def test_protocol_version_in_the_title():
    assert TEXT.splitlines()[0].endswith(f"version {PROTOCOL_VERSION}")
