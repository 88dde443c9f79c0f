"""The simulated microcontroller: the machine model runs the device side of the link
(:class:`firmware_bridge.device.DeviceEngine` in a :class:`DeviceRunner`) over a
pseudo-terminal, so the MCU backend is real down to the bytes.

Time: the engine and the host keep real time (the 500 ms heartbeat rule is untouched);
the machine model runs ``speed`` times faster (machine time = real time x speed).
The MCU backend scales the deadlines it sends by 1/speed and the times it receives by
speed, so the controller sees machine time on every backend.
"""

from __future__ import annotations

import struct
import time
from typing import Any

from firmware_bridge import catalogue as C
from firmware_bridge.device import DeviceEngine
from firmware_bridge.noise import ByteNoise
from firmware_bridge.transport import DeviceRunner, PacedPort, pty_pair
from firmware_bridge.wire import encoded_size

from .backend import ModelMachine
from .model import TableModel

_U32 = 0xFFFFFFFF
#: the serial line of a simulated microcontroller (both devices): 115200 baud, 10 bits a byte
LINE_BAUD = 115200
#: the share of the line's byte rate that the machine's sensor events may fill on average. The
#: busiest second of a build carries about 1.4 x the mean (measured on the model: 80-87 events
#: against 63-66 a second), and the rest of the line carries heartbeats, replies and resent
#: frames; at 0.4 the default profile runs at 4x with room (6x dropped a tile-present pulse in a
#: full test run, 8x overflows: EVENTS_DROPPED, E63)
LINK_BUDGET = 0.4


def board_fault_onsets(model: TableModel) -> list[tuple[float, str]]:
    """The model's faults of the board and the line (mcu-reset, link-broken) as
    ``[(machine time of onset s, kind)]`` (the fault's ``at`` parameter, ``hardware.sim.faults``)."""
    return [(f.param("at"), f.kind) for f in model.faults if f.kind in ("mcu-reset", "link-broken")]


def due_onsets(onsets: list[tuple[float, str]], t: float) -> list[str]:
    """Take the onsets due at machine time ``t`` (s) out of ``onsets``; returns their kinds."""
    due = [o for o in onsets if t >= o[0]]
    for o in due:
        onsets.remove(o)
    return [kind for _, kind in due]


def sensor_event_rate(profile: Any) -> float:
    """Mean sensor events per machine second while the four feeders build (the busiest phase),
    from the profile's timing, as the machine model makes them (:class:`hardware.sim.parts.Feeder`,
    ``PushHead``, ``Pulse``): on each side a tile reaches the push head every ``2 x tile_present_s
    + tile_interval_s + face_up_fraction x disc_revolution_s`` on average and makes three changes
    (tile-present on and off, half a stack pulse), the push head's cam two (home, away) a
    ``push_cycle_s`` and the feeder's motion sensor one a ``feeder_pulse_s``; the disc's pulse one
    a ``disc_pulse_s``. Returns events per machine second (about 63 for the default profile)."""
    t = profile.timing
    tile_every = 2 * t.tile_present_s + t.tile_interval_s + t.face_up_fraction * t.disc_revolution_s
    side = 3 / tile_every + 2 / t.push_cycle_s + 1 / t.feeder_pulse_s
    return 4 * side + 1 / t.disc_pulse_s


def link_speed_limit(profile: Any, baud: int = LINE_BAUD) -> float:
    """The largest machine speed-up whose sensor events a simulated microcontroller's serial
    line (``baud``, 10 bits a byte) carries: the speed at which :func:`sensor_event_rate`
    events a second, each one SENSOR frame on the wire, fill :data:`LINK_BUDGET` of it.
    Faster, the device's event queue overflows and drops tile-present pulses (E63). Returns a
    speed (machine s per wall s), 4.3 for the default profile at 115200 baud."""
    frame = encoded_size(struct.calcsize(C.FORMATS[C.T_SENSOR]))
    return LINK_BUDGET * baud / 10 / (sensor_event_rate(profile) * frame)


class LineFault:
    """The line between Pi and MCU as :class:`PacedPort` sees it (its ``noise``):
    optional byte noise, and ``broken`` (everything written is lost)."""

    def __init__(self, noise: ByteNoise | None = None) -> None:
        self.noise = noise
        self.broken = False

    def apply(self, data: bytes) -> bytes:
        if self.broken:
            return b""
        return self.noise.apply(data) if self.noise is not None else data


class SimulatedMcu:
    """Runs ``model`` behind a device engine on the device end of a pty.

    Args:
        model: the machine model; profile_id/gear are reported in the handshake.
        speed: machine-time speed-up (>= 1 in tests; 1 = real time).
        boot: the boot counter of the first boot.
        seed: seed of the line noise.
    ``host_port`` is the pyserial port (paced at 115200 baud) the MCU backend opens.
    """

    def __init__(self, model: TableModel, speed: float = 1.0, boot: int = 1,
                 seed: int = 0) -> None:
        self.model = model
        self.speed = speed
        self.boot = boot
        line = model.fault("link-noise")
        noise = line.param("rate") if line is not None else 0.0
        self.line_h2d = LineFault(ByteNoise(noise, seed + 11) if noise else None)
        self.line_d2h = LineFault(ByteNoise(noise, seed + 12) if noise else None)
        host_raw, self._dev_raw = pty_pair()
        self.host_port = PacedPort(host_raw, noise=self.line_h2d)
        self._dev_port = PacedPort(self._dev_raw, noise=self.line_d2h)
        self.t0 = time.monotonic()
        self.t0_ms = int(self.t0 * 1000) & _U32
        self.resets = 0
        self._onsets = board_fault_onsets(model)
        self.runner = DeviceRunner(self._engine(boot), self._dev_port, on_tick=self._on_tick)
        model.sink = self._sink
        self.runner.start()

    def _engine(self, boot: int) -> DeviceEngine:
        eng = DeviceEngine(ModelMachine(self.model), boot_counter=boot,
                           now_ms=int(time.monotonic() * 1000),
                           profile_id=self.model.profile.profile_id,
                           gear_tiles=self.model.gear)
        for (sensor, side), v in self.model.reading.items():  # inputs read at boot
            if v:
                eng.sensor_changed(sensor, side, v, int(time.monotonic() * 1000))
        return eng

    def model_time(self, now_ms: int) -> float:
        return ((now_ms - self.t0_ms) & _U32) / 1000.0 * self.speed

    def _sink(self, sensor: int, side: int, value: int) -> None:
        ms = int(self.t0_ms + self.model.now / self.speed * 1000)
        self.runner.engine.sensor_changed(sensor, side, value, ms)

    def _on_tick(self, engine: Any, now_ms: int) -> None:
        t = self.model_time(now_ms)
        self.model.run_to(t)
        for kind in due_onsets(self._onsets, t):
            if kind == "mcu-reset":
                self.reset()
            else:
                self.line_h2d.broken = self.line_d2h.broken = True

    def reset(self) -> None:
        """The microcontroller reboots: a fresh engine, boot counter + 1 (call from the
        runner thread, or with ``runner.lock`` held)."""
        self.boot += 1
        self.resets += 1
        self.runner.engine = self._engine(self.boot)

    def close(self, settle_s: float = 1.5) -> None:
        """Stop the device thread. If motors still run (the host could not reach the
        device), keep the device ticking up to ``settle_s`` so that its own safety
        rule stops them, as a real MCU would."""
        end = time.monotonic() + settle_s
        while self.model.motors and time.monotonic() < end:
            time.sleep(0.01)
        self.runner.stop()
        for p in (self.host_port, self._dev_port):
            try:
                p.close()
            except Exception:
                pass
