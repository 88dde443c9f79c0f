"""The simulated machine behind gpiozero's MockFactory pins.

The :class:`PinBridge` reads the mock *output* pins (motor drivers) into the machine
model and drives the mock *input* pins from the model's sensor readings, at the
electrical level the profile configures (active low inputs are driven low when on).
So the real GPIO backend code - gpiozero devices, active levels, pulls, edge callbacks -
runs against the simulated machine.
"""

from __future__ import annotations

from typing import Any, Callable

from firmware_bridge import catalogue as C

from ..profile import LIGHT_BITS, PER_SIDE_INPUTS, SINGLE_INPUTS, GpioMap
from .model import TableModel


class PinBridge:
    """Wires ``model`` to the pins of ``factory`` (a gpiozero MockFactory) per ``gpio``.

    Create it after the GPIO backend has claimed the pins (inputs must be inputs)."""

    def __init__(self, model: TableModel, factory: Any, gpio: GpioMap) -> None:
        self.model = model
        self.active_high = gpio.outputs_active_high
        self.out: list[tuple[Any, str, int]] = []
        for name, pins in gpio.outputs.items():
            for i, p in enumerate(pins):
                self.out.append((factory.pin(f"GPIO{p}"), name, i))
        self.inp: dict[tuple[int, int], tuple[Any, bool]] = {}
        for name, ips in gpio.inputs.items():
            sensor = PER_SIDE_INPUTS.get(name, SINGLE_INPUTS.get(name))
            for i, ip in enumerate(ips):
                side = i if name in PER_SIDE_INPUTS else C.SIDE_NONE
                self.inp[(sensor, side)] = (factory.pin(f"GPIO{ip.pin}"), ip.active_high)
        model.sink = self.drive
        model.after_event = self.sync
        for (sensor, side), v in model.reading.items():
            if (sensor, side) in self.inp:
                self.drive(sensor, side, v)

    def drive(self, sensor: int, side: int, value: int) -> None:
        """Set the electrical level of an input pin for a sensor reading (0/1)."""
        entry = self.inp.get((sensor, side))
        if entry is None:
            return
        pin, active_high = entry
        if bool(value) == active_high:
            pin.drive_high()
        else:
            pin.drive_low()

    def sync(self) -> None:
        """Read the motor output pins into the model."""
        on: dict[tuple[str, int], bool] = {}
        for pin, name, i in self.out:
            on[(name, i)] = bool(pin.state) == self.active_high
        drive_model(self.model, lambda name, i=0: on.get((name, i), False))


def drive_model(m: TableModel, on: Callable[..., bool]) -> None:
    """Switch the model's motors and lights from the driver inputs: ``on(name, i=0)`` tells
    whether output ``name`` (a profile output name; ``i``: its side, or 0) is on. Also used by
    the firmware's table (hardware/sim/micropython_mcu.py)."""
    m.set_motor(C.MOTOR_SHUFFLE, C.SIDE_NONE, on("shuffle"))
    m.set_motor(C.MOTOR_DICE, C.SIDE_NONE, on("dice"))
    m.set_motor(C.MOTOR_BUZZER, C.SIDE_NONE, on("buzzer"))
    lights = 0
    for name, bits in LIGHT_BITS.items():
        for i, bit in enumerate(bits):
            lights |= bit if on(name, i) else 0
    m.set_lights(lights)
    lifts = [(C.MOTOR_LIFT, s, "lift_up", "lift_down", s) for s in C.SIDES]
    lifts.append((C.MOTOR_CENTRE, C.SIDE_NONE, "centre_up", "centre_down", 0))
    for s in C.SIDES:
        m.set_motor(C.MOTOR_FEEDER, s, on("feeder", s))
    for motor, side, up_name, down_name, i in lifts:
        up, down = on(up_name, i), on(down_name, i)
        if up and not down:
            m.set_motor(motor, side, True, 1)
        elif down and not up:
            m.set_motor(motor, side, True, 0)
        else:  # off, or both relays closed (the motor does not turn)
            m.set_motor(motor, side, False)
