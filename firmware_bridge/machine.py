"""The interface between the device-side protocol engine and the motors.

The engine (:class:`firmware_bridge.device.DeviceEngine`) decides *when* motors run;
a :class:`Machine` makes them run. The hardware issue implements it over GPIO/PWM on the
microcontroller, the simulator implements it over its machine model, and tests use
:class:`FakeMachine`. Sensor changes travel the other way: whoever watches the inputs
calls ``DeviceEngine.sensor_changed(sensor, side, value, now_ms)``.

Motor and sensor ids are the ``MOTOR_*`` / ``SENSOR_*`` constants of
:mod:`firmware_bridge.catalogue`; sides are 0..3 for E, S, W, N and 0xFF for none.

MicroPython-portable (the firmware's ``firmware/rp2040/outputs.py`` implements it): no
typing, no annotations at run time.
"""

from . import catalogue as C


class Machine:
    """What the device engine needs from the motors (an interface: a class that has these
    methods is a Machine; it need not inherit). Every method must return quickly (it is
    called from the engine's tick) and must not raise."""

    def start(self, motor, side, direction):
        """Energise ``motor`` on ``side`` (0xFF for shuffle and dice); ``direction`` is 1
        (forward / lift up) or 0 (reverse / lift down)."""

    def stop(self, motor, side):
        """De-energise one motor. Stopping a stopped motor is harmless."""

    def stop_all(self):
        """De-energise every motor at once. Used by the safety rule: must not depend on
        any state the engine keeps."""

    def set_gear(self, tiles):
        """Select the tile-count gear (136, 144, 152 or 108 tiles)."""

    def set_lights(self, mask):
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

    def __init__(self):
        self.running = {}  # (motor, side) -> direction
        self.calls = []    # (method, args...) tuples
        self.gear = 136
        self.lights = 0
        self.stop_all_count = 0

    def start(self, motor, side, direction):
        if motor not in C.MOTORS:
            raise AssertionError("engine started unknown motor %d" % motor)
        self.running[(motor, side)] = direction
        self.calls.append(("start", motor, side, direction))

    def stop(self, motor, side):
        self.running.pop((motor, side), None)
        self.calls.append(("stop", motor, side))

    def stop_all(self):
        self.running.clear()
        self.stop_all_count += 1
        self.calls.append(("stop_all",))

    def set_gear(self, tiles):
        self.gear = tiles
        self.calls.append(("set_gear", tiles))

    def set_lights(self, mask):
        self.lights = mask
        self.calls.append(("set_lights", mask))
