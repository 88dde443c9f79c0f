"""The interface between the device-side protocol engine and the motors.

The engine (:class:`firmware_bridge.device.DeviceEngine`) decides *when* motors run;
a :class:`Machine` makes them run. The hardware issue implements it over GPIO/PWM on the
microcontroller, the simulator implements it over its machine model, and tests use
:class:`FakeMachine`. Sensor changes travel the other way: whoever watches the inputs
calls ``DeviceEngine.sensor_changed(sensor, side, value, now_ms)``.

Motor and sensor ids are the ``MOTOR_*`` / ``SENSOR_*`` constants of
:mod:`firmware_bridge.catalogue`; sides are 0..3 for E, S, W, N and 0xFF for none.
"""

from __future__ import annotations

from typing import Protocol

from . import catalogue as C


class Machine(Protocol):
    """What the device engine needs from the motors. Every method must return quickly
    (it is called from the engine's tick) and must not raise."""

    def start(self, motor: int, side: int, direction: int) -> None:
        """Energise ``motor`` on ``side`` (0xFF for shuffle and dice); ``direction`` is 1
        (forward / lift up) or 0 (reverse / lift down)."""

    def stop(self, motor: int, side: int) -> None:
        """De-energise one motor. Stopping a stopped motor is harmless."""

    def stop_all(self) -> None:
        """De-energise every motor at once. Used by the safety rule: must not depend on
        any state the engine keeps."""

    def set_gear(self, tiles: int) -> None:
        """Select the tile-count gear (136, 144, 152 or 108 tiles)."""

    def set_lights(self, mask: int) -> None:
        """Switch the lights: ``mask`` of ``catalogue.LIGHT_*`` (the others off). A build
        without lights ignores it."""


class FakeMachine:
    """In-memory :class:`Machine` for tests: records every call and which motors run.

    Attributes:
        running: dict ``(motor, side) -> direction`` of energised motors.
        calls: list of ``(method, args...)`` tuples in call order.
        gear: last gear set.
        lights: last lights mask set.
        stop_all_count: how many times ``stop_all`` was called.
    """

    def __init__(self) -> None:
        self.running: dict[tuple[int, int], int] = {}
        self.calls: list[tuple] = []
        self.gear = 136
        self.lights = 0
        self.stop_all_count = 0

    def start(self, motor: int, side: int, direction: int) -> None:
        if motor not in C.MOTORS:
            raise AssertionError(f"engine started unknown motor {motor}")
        self.running[(motor, side)] = direction
        self.calls.append(("start", motor, side, direction))

    def stop(self, motor: int, side: int) -> None:
        self.running.pop((motor, side), None)
        self.calls.append(("stop", motor, side))

    def stop_all(self) -> None:
        self.running.clear()
        self.stop_all_count += 1
        self.calls.append(("stop_all",))

    def set_gear(self, tiles: int) -> None:
        self.gear = tiles
        self.calls.append(("set_gear", tiles))

    def set_lights(self, mask: int) -> None:
        self.lights = mask
        self.calls.append(("set_lights", mask))
