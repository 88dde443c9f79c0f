"""Machine profiles: pin map, active levels, nominal timings and tile-count gears.

Profiles are TOML files (stdlib ``tomllib``); ``hardware/profiles/default.toml`` is the
four-port table. :func:`load_profile` checks every value and raises :class:`ProfileError`
naming the key, e.g. ``timing.lift_up_s must be a positive number, got -1``.

Tile-count gears (档位, seed 002: "打136个牌 ... 面板的反面有一张档位表 ... 一定先关掉电再调档位"):
136 tiles = 17 stacks a side, 144 = 18, 152 = 19, 108 = 14, 13, 14, 13.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from firmware_bridge import catalogue as C
from firmware_bridge.motion import STALL_MS

from .errors import ProfileError
from .pi_safety import output_on_at_reset, reset_pull

PROFILE_DIR = Path(__file__).with_name("profiles")

TIMING_KEYS = (
    "shuffle_s", "shuffle_deadline_s", "tile_interval_s", "disc_revolution_s",
    "tile_present_s", "push_s", "feed_stack_s", "feed_margin", "feed_grace_s", "lift_up_s",
    "lift_down_s", "lift_deadline_s", "dice_spin_s", "dice_deadline_s", "disc_pulse_s",
    "feeder_pulse_s", "dice_pulse_s", "push_cycle_s", "centre_up_s", "centre_down_s",
    "centre_deadline_s")
#: keys that described a fault's severity, not the table: now parameters of the fault
#: (hardware.sim.faults); a profile that still has one gets an error naming the new form
MOVED_TO_FAULTS = {"late_lift_factor": "lift-late:SIDE:factor=", "short_lift_reach": "lift-short:SIDE:reach=",
                   "capacitor_wear": "lift-slow:SIDE:wear=", "jam_after_s": "tile-jam:after="}
FRACTION_KEYS = ("face_up_fraction",)

#: per-side outputs and inputs of the GPIO pin map, and the side-less ones
PER_SIDE_OUTPUTS = ("feeder", "lift_up", "lift_down", "light_dealer")
SINGLE_OUTPUTS = ("shuffle", "dice", "centre_up", "centre_down", "buzzer", "light_ready",
                  "light_fault", "heartbeat")
PER_SIDE_INPUTS = {"lift_top": C.SENSOR_LIFT_TOP, "lift_bottom": C.SENSOR_LIFT_BOTTOM,
                   "stack": C.SENSOR_STACK, "tile_present": C.SENSOR_TILE_PRESENT,
                   "feeder_motion": C.SENSOR_FEEDER_MOTION, "push_home": C.SENSOR_PUSH_HOME}
SINGLE_INPUTS = {"disc_pulse": C.SENSOR_DISC_PULSE, "dice_pulse": C.SENSOR_DICE_PULSE,
                 "lid": C.SENSOR_LID, "estop": C.SENSOR_ESTOP,
                 "centre_top": C.SENSOR_CENTRE_TOP, "centre_bottom": C.SENSOR_CENTRE_BOTTOM,
                 "jam": C.SENSOR_JAM, "lift_button_a": C.SENSOR_LIFT_BUTTON_A,
                 "lift_button_b": C.SENSOR_LIFT_BUTTON_B, "dice_button": C.SENSOR_DICE_BUTTON}
#: parts a GPIO build may leave unwired ("not fitted"): the indicators and operator inputs.
#: A build without them runs the cycle; the buttons then never press and the jam sensor
#: never reports (a jammed tile shows as a stalled disc).
#: ``heartbeat`` feeds the hardware watchdog that enables motor power (docs/wiring.md);
#: ``lid``: a build may wire the lid switch in series with the emergency stop instead.
OPTIONAL_GPIO = ("buzzer", "light_ready", "light_fault", "light_dealer", "heartbeat", "jam",
                 "lift_button_a", "lift_button_b", "dice_button", "lid")
#: the light outputs of the pin map and the SetIndicators bits they show (one bit per pin)
LIGHT_BITS = {"light_ready": (C.LIGHT_READY,), "light_fault": (C.LIGHT_FAULT,),
              "light_dealer": tuple(C.LIGHT_DEALER_E << i for i in range(4))}
#: every part name of a full machine (what the sim and MCU builds have fitted)
ALL_PARTS = frozenset(PER_SIDE_OUTPUTS + SINGLE_OUTPUTS) | frozenset(PER_SIDE_INPUTS) \
    | frozenset(SINGLE_INPUTS)
PIN_FACTORIES = ("lgpio", "rpigpio", "mock", "native", "pigpio")
#: the pin factory when the profile names none: lgpio works on every Pi (RPi.GPIO 0.7.1
#: cannot add edge detection on Pi OS kernels 6.6 and later: raspberrypi/linux#6037,
#: gpiozero#1136)
DEFAULT_PIN_FACTORY = "lgpio"
#: glitch filter (ms) of an input whose profile entry has no ``bounce_ms``: the stack and
#: tile-present sensors sit on long wires beside the motors (issue #23 section 2)
DEFAULT_BOUNCE_MS = {"stack": 1, "tile_present": 1}
#: the shortest real pulse of an input (a Timing field): its glitch filter must be shorter
PULSE_TIMING = {"stack": "push_s", "tile_present": "tile_present_s",
                "disc_pulse": "disc_pulse_s", "feeder_motion": "feeder_pulse_s",
                "dice_pulse": "dice_pulse_s"}


@dataclass(frozen=True)
class Timing:
    """Nominal timings in seconds of machine time (see default.toml for each meaning)."""

    shuffle_s: float
    shuffle_deadline_s: float
    tile_interval_s: float
    face_up_fraction: float
    disc_revolution_s: float
    tile_present_s: float
    push_s: float
    feed_stack_s: float
    feed_margin: float
    feed_grace_s: float
    lift_up_s: float
    lift_down_s: float
    lift_deadline_s: float
    dice_spin_s: float
    dice_deadline_s: float
    disc_pulse_s: float
    feeder_pulse_s: float
    dice_pulse_s: float
    push_cycle_s: float
    centre_up_s: float
    centre_down_s: float
    centre_deadline_s: float


@dataclass(frozen=True)
class InputPin:
    """One input: BCM pin, active level (True = high means on), pull resistor
    (``"up"``, ``"down"`` or ``"none"``: an external resistor) and the glitch filter in ms
    (``bounce_ms``; 0: none; gpiozero's ``bounce_time``: under the lgpio factory a level
    must hold this long before it is reported; :data:`DEFAULT_BOUNCE_MS` where the
    profile gives none)."""

    pin: int
    active_high: bool
    pull: str
    bounce_ms: int = 0


@dataclass(frozen=True)
class GpioMap:
    """Pin map of the GPIO backend. ``outputs[name]`` is a tuple of BCM pins (one, or
    four for E, S, W, N); ``inputs[name]`` a tuple of :class:`InputPin`. A name of
    ``OPTIONAL_GPIO`` that is absent is not fitted on this build."""

    board: str
    mock_revision: str
    pin_factory: str
    outputs_active_high: bool
    outputs: dict[str, tuple[int, ...]]
    inputs: dict[str, tuple[InputPin, ...]]


#: GPIOs a Raspberry Pi Pico brings out (23-25 and 29 are the board's own: SMPS mode, VBUS
#: sense, LED, VSYS/3)
PICO_GPIOS = tuple(range(0, 23)) + (26, 27, 28)
MCU_LINKS = ("usb", "uart")
#: RP2040 UART pin pairs: uart id -> ((tx pins), (rx pins))
RP2040_UART_PINS = {0: ((0, 12, 16, 28), (1, 13, 17)), 1: ((4, 8, 20), (5, 9, 21))}


@dataclass(frozen=True)
class McuInput:
    """One input of the microcontroller: on a GPIO of its own (``gpio``: edge interrupt,
    timestamped) or a bit of the 74HC165 chain (``bit``: polled every loop); active
    level, pull (GPIO only) and glitch filter (ms)."""

    gpio: int | None
    bit: int | None
    active_high: bool
    pull: str
    bounce_ms: int


@dataclass(frozen=True)
class McuMap:
    """Pin map of the RP2040 firmware (``[mcu]``): the link, the output chain (74HC595:
    every motor driver input and indicator is a bit of it, off while its /OE is pulled
    high), the input chain (74HC165) and the inputs. ``outputs[name]`` is a tuple of
    chain bits (one, or four for E, S, W, N); ``inputs[name]`` a tuple of McuInput."""

    board: str
    link: str
    uart: tuple[int, int, int, int]          # id, tx, rx, baud
    watchdog_ms: int
    shift_out: tuple[int, int, int, int, int]  # data, clock, latch, enable (/OE), chips
    outputs_active_high: bool
    shift_in: tuple[int, int, int, int]      # load (/PL), clock, data (Q7), chips
    outputs: dict[str, tuple[int, ...]]
    inputs: dict[str, tuple[McuInput, ...]]


@dataclass(frozen=True)
class Profile:
    """A machine profile. ``gears[tiles]`` = stacks per side (E, S, W, N)."""

    name: str
    profile_id: int
    tiles: int
    timing: Timing
    gears: dict[int, tuple[int, int, int, int]]
    gpio: GpioMap
    source: str
    #: the RP2040 firmware's pin map (``[mcu]``), None when the profile has none
    mcu: McuMap | None = None

    def stacks(self, gear: int) -> tuple[int, int, int, int]:
        """Stacks per side for ``gear`` (tiles). Raises ProfileError for an unknown gear."""
        try:
            return self.gears[gear]
        except KeyError:
            raise ProfileError(f"gear {gear!r} is not in profile {self.name!r}; gears: "
                               f"{', '.join(map(str, self.gears))}") from None

    # deadlines the controller gives its motion commands (ms of machine time)
    def feed_deadline_ms(self, stacks: int) -> int:
        """Deadline of FeedStacks for ``stacks`` stacks: stacks x feed_stack_s x
        feed_margin + feed_grace_s, in ms."""
        t = self.timing
        return int(1000 * (stacks * t.feed_stack_s * t.feed_margin + t.feed_grace_s))

    def lift_deadline_ms(self) -> int:
        return int(1000 * self.timing.lift_deadline_s)

    def dice_ms(self) -> tuple[int, int]:
        """(spin_ms, deadline_ms) for RollDice."""
        return int(1000 * self.timing.dice_spin_s), int(1000 * self.timing.dice_deadline_s)

    def shuffle_deadline_ms(self) -> int:
        return int(1000 * self.timing.shuffle_deadline_s)

    def centre_deadline_ms(self) -> int:
        return int(1000 * self.timing.centre_deadline_s)

    def park_deadline_ms(self) -> int:
        """Deadline of FeedStacks(side, 0), bringing a push head home: two cam turns
        (2 x push_cycle_s) plus feed_grace_s, in ms."""
        t = self.timing
        return int(1000 * (2 * t.push_cycle_s + t.feed_grace_s))


def _num(d: dict, key: str, path: str, positive: bool = True) -> float:
    v = d.get(key)
    full = f"{path}.{key}"
    if v is None:
        raise ProfileError(f"{full} is missing")
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
            or (positive and v <= 0):
        raise ProfileError(f"{full} must be a positive number, got {v!r}")
    return float(v)


def _int(v: Any, full: str, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise ProfileError(f"{full} must be an integer {lo}..{hi}, got {v!r}")
    return v


def _table(d: dict, key: str, path: str = "") -> dict:
    full = f"{path}.{key}" if path else key
    v = d.get(key)
    if not isinstance(v, dict):
        raise ProfileError(f"[{full}] table is missing" if v is None
                           else f"{full} must be a table, got {v!r}")
    return v


def _unknown(d: dict, allowed, path: str) -> None:
    extra = sorted(set(d) - set(allowed))
    if extra:
        raise ProfileError(f"{path}.{extra[0]} is not a known key; allowed: "
                           f"{', '.join(allowed)}")


def _pins(v: Any, full: str, count: int) -> tuple[int, ...]:
    if count == 1:
        return (_int(v, full, 0, 53),)
    if not isinstance(v, list) or len(v) != 4:
        raise ProfileError(f"{full} must be a list of 4 pins (E, S, W, N), got {v!r}")
    return tuple(_int(p, f"{full}[{i}]", 0, 53) for i, p in enumerate(v))


def parse_profile(data: dict, source: str = "<dict>") -> Profile:
    """Validate a profile already read from TOML. Raises ProfileError naming the key."""
    m = _table(data, "machine")
    name = m.get("name")
    if not isinstance(name, str) or not name:
        raise ProfileError(f"machine.name must be a non-empty string, got {name!r}")
    pid = _int(m.get("profile_id"), "machine.profile_id", 0, 0xFFFF)
    tiles = m.get("tiles")
    if tiles not in C.GEARS:
        raise ProfileError(f"machine.tiles must be one of {', '.join(map(str, C.GEARS))}, "
                           f"got {tiles!r}")
    t = _table(data, "timing")
    for key, form in MOVED_TO_FAULTS.items():
        if key in t:
            raise ProfileError(f"timing.{key} is no longer a profile key (a profile describes the "
                               f"table, not a test): give it as a parameter of the fault, "
                               f"--fault {form}{t[key]!r}")
    _unknown(t, TIMING_KEYS + FRACTION_KEYS, "timing")
    values = {k: _num(t, k, "timing") for k in TIMING_KEYS}
    f = t.get("face_up_fraction")
    if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 <= f < 1:
        raise ProfileError(f"timing.face_up_fraction must be a number 0 <= x < 1, got {f!r}")
    values["face_up_fraction"] = float(f)
    for k, limit in (("lift_up_s", "lift_deadline_s"), ("lift_down_s", "lift_deadline_s"),
                     ("centre_up_s", "centre_deadline_s"),
                     ("centre_down_s", "centre_deadline_s")):
        if values[k] >= values[limit]:
            raise ProfileError(f"timing.{k} must be below timing.{limit} "
                               f"({values[limit]}), got {values[k]!r}")
    if values["push_cycle_s"] >= values["feed_stack_s"]:
        raise ProfileError("timing.push_cycle_s must be below timing.feed_stack_s (a push head "
                           f"turns at least once per stack), got {values['push_cycle_s']!r}")
    if values["dice_spin_s"] > values["dice_deadline_s"]:
        raise ProfileError("timing.dice_spin_s must not exceed timing.dice_deadline_s, got "
                           f"{values['dice_spin_s']!r}")
    for key, motor in (("feeder_pulse_s", C.MOTOR_FEEDER), ("disc_pulse_s", C.MOTOR_SHUFFLE),
                       ("dice_pulse_s", C.MOTOR_DICE)):
        # the device stops a motor whose motion sensor is quiet this long (stall-to-stop): two full
        # pulse periods must fit in it, else a turning motor would be taken for a stalled one
        window_s = STALL_MS[motor] / 1000
        if 4 * values[key] > window_s:
            raise ProfileError(f"timing.{key} must be at most {window_s / 4:g} s (two full pulse periods "
                               f"within the device's {window_s:g} s stall window), got {values[key]!r}")
    timing = Timing(**values)
    g = _table(data, "gears")
    gears: dict[int, tuple[int, int, int, int]] = {}
    for key, v in g.items():
        full = f"gears.{key}"
        if not key.isdigit() or int(key) not in C.GEARS:
            raise ProfileError(f"{full}: gear must be one of "
                               f"{', '.join(map(str, C.GEARS))}, got {key!r}")
        if not isinstance(v, list) or len(v) != 4:
            raise ProfileError(f"{full} must be a list of 4 stack counts (E, S, W, N), got {v!r}")
        stacks = tuple(_int(s, f"{full}[{i}]", 1, 40) for i, s in enumerate(v))
        if 2 * sum(stacks) != int(key):
            raise ProfileError(f"{full} must hold {key} tiles (2 per stack), got "
                               f"{2 * sum(stacks)} in {list(stacks)}")
        gears[int(key)] = stacks  # type: ignore[assignment]
    if tiles not in gears:
        raise ProfileError(f"gears.{tiles} is missing (machine.tiles = {tiles})")
    gp = _table(data, "gpio")
    _unknown(gp, ("board", "mock_revision", "pin_factory", "outputs_active_high", "outputs",
                  "inputs"), "gpio")
    factory = gp.get("pin_factory", DEFAULT_PIN_FACTORY)
    if factory not in PIN_FACTORIES:
        raise ProfileError(f"gpio.pin_factory must be one of {', '.join(PIN_FACTORIES)}, "
                           f"got {factory!r}")
    rev = gp.get("mock_revision")
    try:
        int(str(rev), 16)
    except ValueError:
        raise ProfileError(f"gpio.mock_revision must be a hex board revision, got {rev!r}") \
            from None
    oah = gp.get("outputs_active_high")
    if not isinstance(oah, bool):
        raise ProfileError(f"gpio.outputs_active_high must be true or false, got {oah!r}")
    outs_t = _table(gp, "outputs", "gpio")
    _unknown(outs_t, SINGLE_OUTPUTS + PER_SIDE_OUTPUTS, "gpio.outputs")
    outputs: dict[str, tuple[int, ...]] = {}
    for k in SINGLE_OUTPUTS + PER_SIDE_OUTPUTS:
        if k in OPTIONAL_GPIO and k not in outs_t:
            continue
        outputs[k] = _pins(outs_t.get(k), f"gpio.outputs.{k}", 1 if k in SINGLE_OUTPUTS else 4)
    ins_t = _table(gp, "inputs", "gpio")
    _unknown(ins_t, tuple(PER_SIDE_INPUTS) + tuple(SINGLE_INPUTS), "gpio.inputs")
    inputs: dict[str, tuple[InputPin, ...]] = {}
    for k in tuple(PER_SIDE_INPUTS) + tuple(SINGLE_INPUTS):
        full = f"gpio.inputs.{k}"
        if k in OPTIONAL_GPIO and k not in ins_t:
            continue
        spec = _table(ins_t, k, "gpio.inputs")
        per_side = k in PER_SIDE_INPUTS
        _unknown(spec, ("pins" if per_side else "pin", "active", "pull", "bounce_ms"), full)
        active_high, pull, bounce = _input_levels(spec, full, k, values)
        pins = _pins(spec.get("pins" if per_side else "pin"),
                     f"{full}.{'pins' if per_side else 'pin'}", 4 if per_side else 1)
        inputs[k] = tuple(InputPin(p, active_high, pull, bounce) for p in pins)
    seen: dict[int, str] = {}
    for k, pins in outputs.items():
        for i, p in enumerate(pins):
            key = f"gpio.outputs.{k}" + (f"[{i}]" if len(pins) > 1 else "")
            _claim(seen, p, key)
            if output_on_at_reset(p, oah):
                raise ProfileError(
                    f"{key}: GPIO{p} is pulled {reset_pull(p)} from power-on until the "
                    f"service starts, which switches an active-{'high' if oah else 'low'} "
                    "output on; use a GPIO pulled "
                    f"{'down' if oah else 'up'} at reset (pulled up: 0-8, 34-36, 46-53; "
                    "hardware/pi_safety.py)")
    for k, ips in inputs.items():
        for i, ip in enumerate(ips):
            _claim(seen, ip.pin, f"gpio.inputs.{k}" + (f"[{i}]" if len(ips) > 1 else ""))
    gpio = GpioMap(str(gp.get("board", "")), str(rev), factory, oah, outputs, inputs)
    mcu = _parse_mcu(data["mcu"], values) if "mcu" in data else None
    return Profile(name, pid, tiles, timing, gears, gpio, source, mcu)


def _input_levels(spec: dict, full: str, k: str, timing: dict[str, float]) -> tuple[bool, str, int]:
    """(active high, pull, glitch filter ms) of input ``k``'s entry, of ``[gpio.inputs]`` or
    ``[mcu.inputs]``."""
    bounce = _int(spec.get("bounce_ms", DEFAULT_BOUNCE_MS.get(k, 0)), f"{full}.bounce_ms", 0, 1000)
    if k in PULSE_TIMING and bounce >= 1000 * timing[PULSE_TIMING[k]]:
        raise ProfileError(f"{full}.bounce_ms must be shorter than the sensor's pulse "
                           f"(timing.{PULSE_TIMING[k]} = {timing[PULSE_TIMING[k]]} s), "
                           f"got {bounce}: the filter would swallow every pulse")
    active = spec.get("active")
    if active not in ("high", "low"):
        raise ProfileError(f"{full}.active must be \"high\" or \"low\", got {active!r}")
    pull = spec.get("pull", "none")
    if pull not in ("up", "down", "none"):
        raise ProfileError(f"{full}.pull must be \"up\", \"down\" or \"none\", got {pull!r}")
    # gpiozero derives the active level from an internal pull: up = active low
    if (pull == "up" and active == "high") or (pull == "down" and active == "low"):
        raise ProfileError(f"{full}: pull \"{pull}\" with active \"{active}\" reads the "
                           "idle input as on; use pull = \"none\" (external resistor) or "
                           "the opposite active level")
    return active == "high", pull, bounce


def _gpio(v: Any, full: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v not in PICO_GPIOS:
        raise ProfileError(f"{full} must be a GPIO the Pico brings out (0-22, 26-28), got {v!r}")
    return v


def _parse_mcu(m: Any, timing: dict[str, float]) -> McuMap:
    """``[mcu]``: validated like ``[gpio]`` (every part, no pin used twice, pulls against
    active levels, glitch filters shorter than the pulses)."""
    if not isinstance(m, dict):
        raise ProfileError(f"mcu must be a table, got {m!r}")
    _unknown(m, ("board", "link", "uart", "watchdog_ms", "shift_out", "shift_in",
                 "outputs", "inputs"), "mcu")
    board = m.get("board", "pico")
    if board != "pico":
        raise ProfileError(f"mcu.board must be \"pico\" (Raspberry Pi Pico, RP2040), got {board!r}")
    link = m.get("link", "usb")
    if link not in MCU_LINKS:
        raise ProfileError(f"mcu.link must be one of {', '.join(MCU_LINKS)}, got {link!r}")
    u = _table(m, "uart", "mcu")
    _unknown(u, ("id", "tx", "rx", "baud"), "mcu.uart")
    uid = _int(u.get("id"), "mcu.uart.id", 0, 1)
    tx, rx = _gpio(u.get("tx"), "mcu.uart.tx"), _gpio(u.get("rx"), "mcu.uart.rx")
    if tx not in RP2040_UART_PINS[uid][0] or rx not in RP2040_UART_PINS[uid][1]:
        raise ProfileError(f"mcu.uart: UART{uid} has TX on GPIO "
                           f"{', '.join(map(str, RP2040_UART_PINS[uid][0]))} and RX on GPIO "
                           f"{', '.join(map(str, RP2040_UART_PINS[uid][1]))}, got tx {tx}, rx {rx}")
    baud = _int(u.get("baud", 115200), "mcu.uart.baud", 9600, 1_000_000)
    wdt = _int(m.get("watchdog_ms", 1000), "mcu.watchdog_ms", 100, 8388)  # RP2040: 8.3 s at most
    so = _table(m, "shift_out", "mcu")
    _unknown(so, ("data", "clock", "latch", "enable", "chips", "outputs_active_high"),
             "mcu.shift_out")
    shift_out = tuple(_gpio(so.get(k), f"mcu.shift_out.{k}")
                      for k in ("data", "clock", "latch", "enable")) + (
        _int(so.get("chips"), "mcu.shift_out.chips", 1, 8),)
    oah = so.get("outputs_active_high")
    if not isinstance(oah, bool):
        raise ProfileError(f"mcu.shift_out.outputs_active_high must be true or false, got {oah!r}")
    si = _table(m, "shift_in", "mcu")
    _unknown(si, ("load", "clock", "data", "chips"), "mcu.shift_in")
    shift_in = tuple(_gpio(si.get(k), f"mcu.shift_in.{k}") for k in ("load", "clock", "data")) \
        + (_int(si.get("chips"), "mcu.shift_in.chips", 1, 8),)
    seen: dict[int, str] = {}
    for k, p in zip(("data", "clock", "latch", "enable"), shift_out):
        _claim(seen, p, f"mcu.shift_out.{k}")
    for k, p in zip(("load", "clock", "data"), shift_in):
        _claim(seen, p, f"mcu.shift_in.{k}")
    if link == "uart":
        _claim(seen, tx, "mcu.uart.tx")
        _claim(seen, rx, "mcu.uart.rx")
    outs_t = _table(m, "outputs", "mcu")
    _unknown(outs_t, SINGLE_OUTPUTS + PER_SIDE_OUTPUTS, "mcu.outputs")
    outputs: dict[str, tuple[int, ...]] = {}
    bits: dict[int, str] = {}
    n_out = 8 * shift_out[4]
    for k in SINGLE_OUTPUTS + PER_SIDE_OUTPUTS:
        if k == "heartbeat" and k not in outs_t:
            continue  # the board's own watchdog (machine.WDT) replaces the Pi's heartbeat
        v = outs_t.get(k)
        one = k in SINGLE_OUTPUTS
        if one and isinstance(v, list) or not one and not isinstance(v, list):
            raise ProfileError(f"mcu.outputs.{k} must be " + (
                "one bit of the output chain" if one else "a list of 4 bits (E, S, W, N)")
                + f", got {v!r}")
        vs = [v] if one else v
        if len(vs) != (1 if one else 4):
            raise ProfileError(f"mcu.outputs.{k} must be a list of 4 bits (E, S, W, N), got {v!r}")
        out = []
        for i, b in enumerate(vs):
            key = f"mcu.outputs.{k}" + ("" if one else f"[{i}]")
            b = _int(b, key, 0, n_out - 1)
            if b in bits:
                raise ProfileError(f"{key}: chain bit {b} is already used by {bits[b]}")
            bits[b] = key
            out.append(b)
        outputs[k] = tuple(out)
    ins_t = _table(m, "inputs", "mcu")
    _unknown(ins_t, tuple(PER_SIDE_INPUTS) + tuple(SINGLE_INPUTS), "mcu.inputs")
    inputs: dict[str, tuple[McuInput, ...]] = {}
    in_bits: dict[int, str] = {}
    n_in = 8 * shift_in[3]
    for k in tuple(PER_SIDE_INPUTS) + tuple(SINGLE_INPUTS):
        full = f"mcu.inputs.{k}"
        spec = _table(ins_t, k, "mcu.inputs")
        per_side = k in PER_SIDE_INPUTS
        where = [w for w in (("gpios", "bits") if per_side else ("gpio", "bit")) if w in spec]
        if len(where) != 1:
            raise ProfileError(f"{full} needs exactly one of "
                               + (" gpios / bits" if per_side else " gpio / bit")
                               + " (a GPIO of its own, or a bit of the input chain)")
        _unknown(spec, (where[0], "active", "pull", "bounce_ms"), full)
        active_high, pull, bounce = _input_levels(spec, full, k, timing)
        on_chain = where[0] in ("bits", "bit")
        if on_chain and pull != "none":
            raise ProfileError(f"{full}.pull: a bit of the input chain has no internal pull "
                               "(fit a resistor at the 74HC165 input)")
        raw = spec[where[0]]
        vs = raw if per_side else [raw]
        if not isinstance(vs, list) or len(vs) != (4 if per_side else 1):
            raise ProfileError(f"{full}.{where[0]} must be a list of 4 (E, S, W, N), got {raw!r}")
        pins = []
        for i, v in enumerate(vs):
            key = f"{full}.{where[0]}" + (f"[{i}]" if per_side else "")
            if on_chain:
                b = _int(v, key, 0, n_in - 1)
                if b in in_bits:
                    raise ProfileError(f"{key}: input chain bit {b} is already used by {in_bits[b]}")
                in_bits[b] = key
                pins.append(McuInput(None, b, active_high, pull, bounce))
            else:
                _claim(seen, _gpio(v, key), key)
                pins.append(McuInput(v, None, active_high, pull, bounce))
        inputs[k] = tuple(pins)
    return McuMap(board, link, (uid, tx, rx, baud), wdt, shift_out, oah,  # type: ignore[arg-type]
                  shift_in, outputs, inputs)  # type: ignore[arg-type]


def _claim(seen: dict[int, str], pin: int, key: str) -> None:
    if pin in seen:
        raise ProfileError(f"{key}: GPIO{pin} is already used by {seen[pin]}")
    seen[pin] = key


def load_profile(name_or_path: str | Path = "default") -> Profile:
    """Load and validate a profile: a name in ``hardware/profiles`` (``"default"``) or a
    path to a ``.toml`` file. Raises ProfileError (unreadable file, bad TOML, bad value)."""
    p = Path(name_or_path)
    if p.suffix != ".toml":
        p = PROFILE_DIR / f"{name_or_path}.toml"
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        known = sorted(x.stem for x in PROFILE_DIR.glob("*.toml"))
        raise ProfileError(f"profile {str(name_or_path)!r} not found ({p}); known profiles: "
                           f"{', '.join(known)}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"profile {p}: not valid TOML: {exc}") from None
    return parse_profile(data, str(p))
