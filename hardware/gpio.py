"""The ``gpio`` backend: motors and sensors on the Pi's own pins, through gpiozero.

Devices are built from the profile's pin map (``[gpio]``): an
:class:`gpiozero.OutputDevice` per motor output (lifts have an up and a down output) and
a :class:`gpiozero.DigitalInputDevice` per sensor, with the configured active level and
pull. The pin factory is explicit: ``GPIOZERO_PIN_FACTORY`` if set, else the profile's
``gpio.pin_factory`` (default ``lgpio``, on every Pi: RPi.GPIO 0.7.1 cannot add edge
detection on Pi OS kernels 6.6 and later, raspberrypi/linux#6037, gpiozero#1136;
``rpigpio`` is still accepted, e.g. over the ``rpi-lgpio`` package that provides the
RPi.GPIO module on lgpio; ``mock`` = gpiozero's MockFactory for the board revision
``gpio.mock_revision``).

**Heartbeat** (optional ``gpio.outputs.heartbeat``): an output that feeds a hardware
watchdog (a retriggerable monostable or a charge pump) which enables motor power
(docs/wiring.md). It toggles every ``HEARTBEAT_HALF_PERIOD_S`` while the control loop
feeds it (:meth:`GpioBackend.heartbeat`, also on every ``events()`` / ``advance()`` /
``run_until()``, the calls only the thread driving the machine makes) within the last
``HEARTBEAT_LEASE_S``; a hung loop, a dead ticker or a dead process stops the toggling
and the watchdog drops motor power. ``close()`` leaves it low.

Motions use :class:`firmware_bridge.motion.MotionTable` (the microcontroller's own motion
logic) through :class:`hardware.local.LocalExecutor`; input edges arrive as gpiozero
``when_activated`` / ``when_deactivated`` callbacks. On real pins a ticker thread checks
the deadlines every 5 ms, so no motor outlives its deadline even if the controller
stalls. In tests a simulated machine sits behind MockFactory pins
(:class:`hardware.sim.pins.PinBridge`) and time is virtual.
"""

from __future__ import annotations

import os
from functools import partial
from typing import Any

from firmware_bridge import catalogue as C
from firmware_bridge.codec import SENSOR_CODES

from .errors import BackendError
from .interface import SensorSnapshot
from .local import LocalBackend, LocalExecutor
from .profile import DEFAULT_PIN_FACTORY, LIGHT_BITS, PER_SIDE_INPUTS, SINGLE_INPUTS, Profile

#: s between two edges of the heartbeat output (10 Hz square wave while fed)
HEARTBEAT_HALF_PERIOD_S = 0.05
#: s the heartbeat keeps toggling after the control loop last fed it: longer than the idle
#: loop's longest turn (service.control.IDLE_POLL_S, 0.5 s)
HEARTBEAT_LEASE_S = 1.5


def make_pin_factory(profile: Profile, name: str | None = None) -> Any:
    """The gpiozero pin factory: ``name``, else ``GPIOZERO_PIN_FACTORY``, else the
    profile's ``gpio.pin_factory`` (``lgpio`` when the profile names none). Raises
    BackendError if it cannot be loaded (e.g. lgpio missing off a Pi: install the ``pi``
    extra)."""
    name = (name or os.environ.get("GPIOZERO_PIN_FACTORY") or profile.gpio.pin_factory
            or DEFAULT_PIN_FACTORY)
    try:
        if name == "mock":
            from gpiozero.pins.mock import MockFactory
            return MockFactory(revision=profile.gpio.mock_revision)
        if name == "rpigpio":
            from gpiozero.pins.rpigpio import RPiGPIOFactory
            return RPiGPIOFactory()
        if name == "lgpio":
            from gpiozero.pins.lgpio import LGPIOFactory
            return LGPIOFactory()
        if name == "native":
            from gpiozero.pins.native import NativeFactory
            return NativeFactory()
        if name == "pigpio":
            from gpiozero.pins.pigpio import PiGPIOFactory
            return PiGPIOFactory()
    except Exception as exc:  # ImportError, RuntimeError("not a Pi"), PinFactoryFallback
        raise BackendError(f"cannot load gpiozero pin factory {name!r}: {exc}") from None
    raise BackendError(f"unknown pin factory {name!r}; allowed: lgpio, rpigpio, mock, "
                       "native, pigpio")


class GpioMachine:
    """:class:`firmware_bridge.machine.Machine` over gpiozero output devices."""

    def __init__(self, outputs: dict[str, list[Any]]) -> None:
        self.o = outputs
        self.gear = 0
        #: called with the new gear; the simulator uses it to load the matching tile set
        self.on_gear: Any = None

    def _relays(self, motor: int, side: int) -> tuple[Any, Any] | None:
        """(up, down) relays of a side lift or the centre lift, else None."""
        if motor == C.MOTOR_LIFT:
            return self.o["lift_up"][side], self.o["lift_down"][side]
        if motor == C.MOTOR_CENTRE:
            return self.o["centre_up"][0], self.o["centre_down"][0]
        return None

    def _dev(self, motor: int, side: int) -> Any | None:
        name = {C.MOTOR_SHUFFLE: "shuffle", C.MOTOR_DICE: "dice", C.MOTOR_FEEDER: "feeder",
                C.MOTOR_BUZZER: "buzzer"}[motor]
        devs = self.o.get(name)  # the buzzer may be not fitted
        if devs is None:
            return None
        return devs[0] if len(devs) == 1 else devs[side]

    def start(self, motor: int, side: int, direction: int) -> None:
        relays = self._relays(motor, side)
        if relays is not None:  # never both relays of one lift at once
            relays[0 if direction == 0 else 1].off()
            relays[1 if direction == 0 else 0].on()
            return
        dev = self._dev(motor, side)
        if dev is not None:
            dev.on()

    def stop(self, motor: int, side: int) -> None:
        relays = self._relays(motor, side)
        if relays is not None:
            relays[0].off()
            relays[1].off()
            return
        dev = self._dev(motor, side)
        if dev is not None:
            dev.off()

    def set_lights(self, mask: int) -> None:
        """Lights that are fitted follow ``mask``; the others are ignored."""
        for name, bits in LIGHT_BITS.items():
            for dev, bit in zip(self.o.get(name, ()), bits):
                dev.value = bool(mask & bit)

    def stop_all(self) -> None:
        for name, devs in self.o.items():
            if not name.startswith("light_"):  # the lights are not motors
                for d in devs:
                    d.off()

    def set_gear(self, tiles: int) -> None:
        self.gear = tiles  # the gear is the controller's stack count; no pin
        if self.on_gear is not None:
            self.on_gear(tiles)


class GpioBackend(LocalBackend):
    """:class:`~hardware.interface.TableBackend` on gpiozero devices.

    Args:
        profile: machine profile (pin map, active levels).
        pin_factory: a gpiozero pin factory (see :func:`make_pin_factory`).
        model: the simulated machine behind mock pins (virtual clock), or None on real
            pins (real clock, ticker thread).
    Raises BackendError if a pin cannot be claimed.
    """

    kind = "gpio"

    def __init__(self, profile: Profile, pin_factory: Any, model: Any | None = None) -> None:
        super().__init__(profile, model)
        from gpiozero import DigitalInputDevice, OutputDevice

        self.pin_factory = pin_factory
        self.bridge: Any = None
        self._heartbeat: Any = None
        self._devices: list[Any] = []
        g = profile.gpio
        try:
            outputs = {name: [self._add(OutputDevice(p, active_high=g.outputs_active_high,
                                                     initial_value=False,
                                                     pin_factory=pin_factory))
                              for p in pins]
                       for name, pins in g.outputs.items()}
            self.inputs: dict[tuple[int, int], Any] = {}
            for name, ips in g.inputs.items():
                sensor = PER_SIDE_INPUTS.get(name, SINGLE_INPUTS.get(name))
                for i, ip in enumerate(ips):
                    side = i if name in PER_SIDE_INPUTS else C.SIDE_NONE
                    pull_up = {"up": True, "down": False, "none": None}[ip.pull]
                    dev = self._add(DigitalInputDevice(
                        ip.pin, pull_up=pull_up,
                        active_state=ip.active_high if pull_up is None else None,
                        bounce_time=ip.bounce_ms / 1000 if ip.bounce_ms else None,
                        pin_factory=pin_factory))
                    dev.when_activated = partial(self._input, sensor, side, 1)
                    dev.when_deactivated = partial(self._input, sensor, side, 0)
                    self.inputs[(sensor, side)] = dev
        except BackendError:
            raise
        except Exception as exc:
            self._release()
            raise BackendError(f"cannot set up the GPIO pins of profile {profile.name!r}: "
                               f"{exc}") from None
        #: the motor-power watchdog's feed, apart from the motors (stop_all leaves it alone)
        hb = outputs.pop("heartbeat", None)
        self._heartbeat = hb[0] if hb else None
        self._hb_until = -1.0   # now() until which the heartbeat toggles
        self._hb_last = -1.0    # now() of its last edge
        self.heartbeat_edges = 0
        self.machine = GpioMachine(outputs)
        self.executor = LocalExecutor(self.machine, self.now_ms, self._emit, self._read,
                                      gear=profile.tiles)
        if model is None:
            self._start_ticker()

    def heartbeat(self) -> None:
        """The control loop is healthy: keep the heartbeat output toggling for the next
        ``HEARTBEAT_LEASE_S`` (a no-op on a build without one)."""
        if self._heartbeat is not None and not self._closed:
            self._hb_until = self.now() + HEARTBEAT_LEASE_S

    def _on_tick(self) -> None:
        hb = self._heartbeat
        if hb is None or self._closed:
            return
        now = self.now()
        if now >= self._hb_until:
            hb.off()  # not fed: stop (low), the watchdog times out
        elif now - self._hb_last >= HEARTBEAT_HALF_PERIOD_S:
            hb.toggle()
            self._hb_last = now
            self.heartbeat_edges += 1

    def events(self) -> list:
        self.heartbeat()
        return super().events()

    def advance(self, dt: float) -> list:
        self.heartbeat()
        return super().advance(dt)

    def _add(self, dev: Any) -> Any:
        self._devices.append(dev)
        return dev

    @property
    def fitted(self) -> frozenset[str]:
        """The profile's GPIO names wired on this build (see ``profile.OPTIONAL_GPIO``)."""
        return frozenset(self.profile.gpio.outputs) | frozenset(self.profile.gpio.inputs)

    def _read(self, sensor: int, side: int) -> int:
        dev = self.inputs.get((sensor, side))
        return 0 if dev is None else int(dev.value)  # not fitted: never on

    def _input(self, sensor: int, side: int, value: int) -> None:
        with self.lock:
            if self.executor is not None and not self._closed:
                self.executor.on_sensor(sensor, side, value)

    def _sync(self) -> None:
        if self.bridge is not None:
            self.bridge.sync()

    def sensors(self) -> SensorSnapshot:
        with self.lock:
            return SensorSnapshot(self.now(), {key: self._read(*code)
                                               for key, code in SENSOR_CODES.items()})

    def _release(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.off()  # motor power off before the pins are let go
        if self.executor is not None:
            self.machine.stop_all()
        self._sync()
        for d in reversed(self._devices):
            try:
                d.close()
            except Exception:
                pass
        self._devices = []
