"""docs/protocol.md's message catalogue agrees with firmware_bridge.catalogue, the one table the
code is built from (and from which firmware_bridge.messages derives its enums), so that the three
copies (the doc, the catalogue, the typed messages) cannot drift:

* every TYPE row of the doc names a message of the catalogue, under its code, with its payload
  layout and its fields in order, and every message of the catalogue has a row; the control
  rows give the direction;
* the code sets written out in the doc (sides, motors, sensors, states, stop reasons, outcomes,
  fault codes, reply results, lights, gears) are the catalogue's;
* the typed messages (firmware_bridge.messages) have exactly the catalogue's codes and layouts.
"""

from __future__ import annotations

import pathlib
import re
import struct

import pytest

from firmware_bridge import catalogue as C
from firmware_bridge import messages as M
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
    reasons = ", ".join(f"{r.value} {r.text}" for r in M.StopReason)
    assert f"Stop reasons: {reasons}." in SECTION
    dealers = "/".join(f"0x{int(M.Light.dealer(s)):02x}" for s in M.Side)
    assert (f"0x{C.LIGHT_READY:02x} ready, 0x{C.LIGHT_FAULT:02x} fault, {dealers} dealer seat E/S/W/N"
            in SECTION)
    assert f"Gears: {', '.join(map(str, C.GEARS))} tiles." in SECTION


def test_the_typed_messages_are_the_catalogue():
    """firmware_bridge.messages: each enum has the catalogue's codes; each command packs to its
    catalogue layout; decode_device_message knows exactly the catalogue's events."""
    for enum, prefix in ((M.Side, "SIDE_"), (M.Motor, "MOTOR_"), (M.Sensor, "SENSOR_"),
                         (M.DeviceState, "STATE_"), (M.StopReason, "STOP_"), (M.ReplyCode, "REPLY_"),
                         (M.Outcome, "OUTCOME_"), (M.FaultCode, "FAULT_")):
        codes = sorted(v for k, v in vars(C).items() if k.startswith(prefix) and type(v) is int
                       and k != "SIDE_NONE")
        assert sorted(int(m) for m in enum) == codes, enum
    assert set(M.COMMAND_NAMES) == set(C.COMMAND_TYPES)
    sample = {M.StartShuffle: (5,), M.FeedStacks: (M.Side.E, 1, 5), M.Lift: (None, True, 5),
              M.RollDice: (1, 5), M.SetGear: (136,), M.SelfTestStep: (0, M.Motor.DICE, None, 1, 5),
              M.SetIndicators: (1, 0)}
    for mtype, cls_name in M.COMMAND_NAMES.items():
        cls = getattr(M, cls_name)
        assert cls.TYPE == mtype
        payload = cls(*sample.get(cls, ())).pack(7)
        assert len(payload) == struct.calcsize(C.FORMATS[mtype]), cls_name
    for mtype in C.FORMATS:
        known = M.decode_device_message(mtype, bytes(struct.calcsize(C.FORMATS[mtype]))) is not None
        assert known == (mtype in C.EVENT_TYPES), C.NAMES[mtype]


def test_protocol_version_in_the_title():
    assert TEXT.splitlines()[0].endswith(f"version {PROTOCOL_VERSION}")
