"""The table as hardware: one interface (:class:`TableBackend`), three backends.

Open a table with ``open_table(TableSpec(...))`` (:mod:`hardware.table_spec`): simulated or real,
sim, gpio or mcu, port, profile, seed, faults, speed. The functions below are what it builds on.

``open_backend("sim" | "gpio" | "mcu", profile=..., seed=..., faults=[...], speed=...)``
builds the simulated machine and, for gpio and mcu, the real backend code wired to it:

* ``sim``: the machine model directly, virtual clock (fastest).
* ``gpio``: gpiozero devices on MockFactory pins with the model behind the pins,
  virtual clock. On a Pi use :func:`open_gpio` (real pins, real clock).
* ``mcu``: HostLink over a pseudo-terminal to the device engine running the model
  (real time; machine ``speed`` times faster). On a Pi use :func:`open_mcu`.

The table's vocabulary (sides, motors, sensors, lights, goal commands with their deadlines,
backend-neutral events) is :mod:`hardware.vocabulary` (written in the leaf package
:mod:`table_vocabulary`), exported here; every backend speaks it (:mod:`hardware.interface`), and
the codec of :mod:`firmware_bridge` (:mod:`firmware_bridge.codec`) packs and unpacks these very
classes on the serial protocol. :mod:`hardware.sim.faults` lists the injectable
faults.
"""

from __future__ import annotations

from typing import Iterable

from . import vocabulary
from .errors import (BackendError, BackendLinkError, CommandError, FaultSpecError, HardwareError,
                     HardwareTimeout, ProfileError)
from .interface import SensorSnapshot, TableBackend
from .vocabulary import *  # noqa: F401,F403  (the table's vocabulary: parts, commands, events)
from .vocabulary import EVENT_TYPES
from .profile import Profile, load_profile
from .sim.faults import INJECTABLE, FaultSpec, parse_fault
from .table_spec import BACKENDS, DEVICES, SPEED_RANGE, TableSpec, open_table

KINDS = BACKENDS


def open_backend(kind: str, profile: Profile | str = "default", seed: int = 0,
                 faults: Iterable[FaultSpec | str] = (), speed: float = 1.0,
                 boot: int = 1, device: str = "python") -> TableBackend:
    """A backend of ``kind`` over a simulated machine.

    Args:
        kind: "sim", "gpio" or "mcu".
        profile: a Profile, a profile name in hardware/profiles, or a .toml path.
        seed: seed of the machine model (deterministic for a seed).
        faults: ``KIND[:SIDE][:NAME=VALUE,...]`` strings or FaultSpec (see hardware.sim.faults.INJECTABLE).
        speed: mcu only: machine time runs ``speed`` x real time (1..50); the simulated 115200-baud
            line carries the machine's sensor events up to ``hardware.sim.mcu_device.link_speed_limit``
            (4.3 for the default profile): faster, the device drops some (E63).
        boot: mcu only: the simulated microcontroller's first boot counter.
        device: mcu only: "python" (the device engine in this process) or "micropython"
            (the firmware, firmware/rp2040, under the MicroPython unix port:
            hardware/sim/micropython_mcu.py).
    Returns: the backend; ``backend.model`` is the simulated machine.
    Raises: BackendError (unknown kind, pins, pty), ProfileError, FaultSpecError (unknown
    fault, or a fault that does not apply to ``kind``).
    """
    from .sim.model import TableModel

    if kind not in KINDS:
        raise BackendError(f"backend must be one of {', '.join(KINDS)}, got {kind!r}")
    prof = profile if isinstance(profile, Profile) else load_profile(profile)
    specs = [parse_fault(f, kind) for f in faults]
    model = TableModel(prof, seed=seed, faults=specs)
    if kind == "sim":
        from .sim.backend import SimBackend
        return SimBackend(prof, model)
    if kind == "gpio":
        from .gpio import GpioBackend, make_pin_factory
        from .sim.pins import PinBridge
        factory = make_pin_factory(prof, "mock")
        backend = GpioBackend(prof, factory, model)
        backend.bridge = PinBridge(model, factory, prof.gpio)
        backend.machine.on_gear = model.set_gear  # the operator loads the matching set
        backend.events()  # the initial input levels are state, not changes
        return backend
    lo, hi = SPEED_RANGE
    if not lo <= speed <= hi:
        raise BackendError(f"speed must be {lo:g}..{hi:g}, got {speed!r}")
    from firmware_bridge.host import HostLink

    from .mcu import McuBackend
    if device == "micropython":
        from hardware.sim.micropython_mcu import MicroPythonMcu
        dev = MicroPythonMcu(model, speed=speed, boot=boot, seed=seed)
    elif device == "python":
        from .sim.mcu_device import SimulatedMcu
        dev = SimulatedMcu(model, speed=speed, boot=boot, seed=seed)
    else:
        raise BackendError(f"device must be python or micropython, got {device!r}")
    device = dev
    # the link's timers on the device's clock where it keeps one (the MicroPython firmware's
    # board time stops while its process does not run: hardware/sim/micropython_mcu.py)
    link = HostLink(device.host_port, **({"clock": device.clock} if hasattr(device, "clock") else {}))
    link.start()
    backend = McuBackend(prof, link, speed=speed, device_t0_ms=device.t0_ms, device=device,
                         model=model)
    backend._t0 = device.t0
    if hasattr(device, "operator"):
        device.operator(backend)   # the firmware's table: the gear dial follows SetGear
    try:
        backend.connect()
    except BaseException:
        backend.close()
        raise
    backend.events()
    return backend


def open_gpio(profile: Profile | str = "default", pin_factory: str | None = None):
    """The GPIO backend on the Pi's real pins (real clock, deadline ticker thread)."""
    from .gpio import GpioBackend, make_pin_factory

    prof = profile if isinstance(profile, Profile) else load_profile(profile)
    return GpioBackend(prof, make_pin_factory(prof, pin_factory))


def open_mcu(port: str = "/dev/serial0", profile: Profile | str = "default",
             baudrate: int = 115200, *, wait: bool = True):
    """The MCU backend on a real serial port (``/dev/serial0``, ``/dev/ttyACM0`` ...).

    Args:
        wait: True (one-shot commands): the board must answer now, else BackendError naming
            the port. False (the service): never raises for an absent board; the backend
            starts with the link down (one BackendLost event: E62), opens the port again with
            a back-off and shakes hands when the board answers (``backend.link_status()``).
    Raises: BackendLinkError (wait=True: port missing or no handshake answer within 3 s).
    """
    from firmware_bridge.errors import LinkError
    from firmware_bridge.host import HostLink

    from .mcu import McuBackend

    prof = profile if isinstance(profile, Profile) else load_profile(profile)
    if not wait:
        backend = McuBackend(prof, None, opener=lambda: HostLink.open(port, baudrate), port_name=port)
        backend.start()
        return backend
    try:
        link = HostLink.open(port, baudrate)
    except LinkError as exc:
        raise BackendLinkError(str(exc)) from None
    backend = McuBackend(prof, link, port_name=port)
    try:
        backend.connect()
    except BaseException:
        backend.close()
        raise
    return backend


__all__ = ["open_table", "TableSpec", "open_backend", "open_gpio", "open_mcu", "KINDS", "TableBackend", "SensorSnapshot",
           "EVENT_TYPES", "Profile", "load_profile", "INJECTABLE", "FaultSpec", "parse_fault",
           "HardwareError", "ProfileError", "FaultSpecError", "BackendError", "BackendLinkError",
           "CommandError", "HardwareTimeout", *vocabulary.__all__]
