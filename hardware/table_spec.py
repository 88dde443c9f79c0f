"""One way to open a table: :class:`TableSpec` says which table, :func:`open_table` opens it.

The command line (``mjtable cycle``, ``selftest``, ``diagnose``, ``serve``, ``demo``) and the
service's checks (``mjtable doctor``'s handshake) all open their table here, so a simulated
machine, the GPIO pins and the microcontroller are chosen, checked and built the same way
everywhere::

    >>> from hardware import TableSpec, open_table
    >>> backend = open_table(TableSpec(backend="gpio", seed=3, faults=("lift-short:W",)))  # doctest: +SKIP
    >>> backend = open_table(TableSpec(simulated=False, backend="mcu", port="/dev/ttyACM0"))  # doctest: +SKIP

A spec is checked when it is made: a bad one raises :class:`BackendError` naming the field, the
value and what is allowed, before anything is opened.
"""

from __future__ import annotations

import dataclasses
import math
import random

from .errors import BackendError
from .interface import TableBackend
from .profile import Profile, load_profile

#: The backends: ``sim`` (the machine model directly), ``gpio`` (gpiozero pins), ``mcu`` (the
#: table's microcontroller over a serial link).
BACKENDS = ("sim", "gpio", "mcu")
#: The device end of a simulated ``mcu`` table: the device engine in this process (``python``) or
#: the firmware (firmware/rp2040) under the MicroPython unix port (``micropython``).
DEVICES = ("python", "micropython")
#: Machine seconds per wall second of a simulated microcontroller (the other backends run on a
#: virtual clock and take no speed).
SPEED_RANGE = (1.0, 50.0)


@dataclasses.dataclass(frozen=True)
class TableSpec:
    """Which table to open.

    Attributes:
        simulated: True: the built-in machine model behind the backend code (``sim``: the model
            directly; ``gpio``: gpiozero mock pins wired to the model, virtual clock; ``mcu``: the
            host link over a pseudo-terminal to a simulated microcontroller, real time). False:
            the real table (``gpio``: the Pi's pins; ``mcu``: the serial ``port``).
        backend: one of :data:`BACKENDS`; ``sim`` only when ``simulated``.
        port: serial device of a real ``mcu`` table (``/dev/serial0``, ``/dev/ttyACM0``, ...).
        profile: machine profile: a :class:`Profile`, a name in hardware/profiles or a .toml path.
        seed: seed of the simulated machine (deterministic for a seed); None: a random one.
        faults: faults injected into the simulated machine, ``KIND[:SIDE]`` strings or
            :class:`hardware.FaultSpec` (``mjtable faults --list``); simulated tables only.
        speed: machine seconds per wall second of a simulated ``mcu`` table, within
            :data:`SPEED_RANGE`; 1.0 elsewhere.
        device: the device end of a simulated ``mcu`` table, one of :data:`DEVICES`.
        reconnect: a real ``mcu`` table only: start without the board (the link down, one
            LinkLost event) and connect whenever it answers, with a back-off (``mjtable serve``).
            False: the board must answer the handshake at once.

    Raises:
        BackendError: a field outside what is allowed (the message names it and the allowed values).
    """

    simulated: bool = True
    backend: str = "sim"
    port: str = "/dev/serial0"
    profile: Profile | str = "default"
    seed: int | None = None
    faults: tuple = ()
    speed: float = 1.0
    device: str = "python"
    reconnect: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.simulated, bool):
            raise BackendError(f"simulated must be true or false, got {self.simulated!r}")
        if self.backend not in BACKENDS:
            raise BackendError(f"backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        if self.device not in DEVICES:
            raise BackendError(f"device must be one of {', '.join(DEVICES)}, got {self.device!r}")
        if not isinstance(self.port, str) or not self.port.strip():
            raise BackendError(f"port must be a serial device path such as /dev/serial0, got {self.port!r}")
        if not isinstance(self.profile, (Profile, str)) or (isinstance(self.profile, str) and not self.profile.strip()):
            raise BackendError(f"profile must be a profile name, a .toml path or a Profile, got {self.profile!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise BackendError(f"seed must be a whole number (or none: random), got {self.seed!r}")
        if isinstance(self.faults, str):
            raise BackendError(f"faults must be a list of KIND[:SIDE] strings, got the string {self.faults!r}")
        object.__setattr__(self, "faults", tuple(self.faults))
        lo, hi = SPEED_RANGE
        if isinstance(self.speed, bool) or not isinstance(self.speed, (int, float)) or math.isnan(self.speed) \
                or not lo <= self.speed <= hi:
            raise BackendError(f"speed must be {lo:g}..{hi:g} machine seconds per wall second, got {self.speed!r}")
        if not isinstance(self.reconnect, bool):
            raise BackendError(f"reconnect must be true or false, got {self.reconnect!r}")
        sim_mcu = self.simulated and self.backend == "mcu"
        if not self.simulated:
            if self.backend == "sim":
                raise BackendError("backend sim is the simulated machine: a real table's backend is gpio or mcu")
            if self.faults:
                raise BackendError("faults are injected into the simulated machine only, not into a real table")
        if self.speed != 1.0 and not sim_mcu:
            raise BackendError(f"speed applies to a simulated mcu table only (the {self.backend} backend "
                               f"{'runs on a virtual clock' if self.simulated else 'runs in real time'}), got {self.speed!r}")
        if self.device != "python" and not sim_mcu:
            raise BackendError(f"device {self.device} is the device end of a simulated mcu table only")
        if self.reconnect and (self.simulated or self.backend != "mcu"):
            raise BackendError("reconnect applies to a real mcu table only (its serial board)")


def open_table(spec: TableSpec) -> TableBackend:
    """Open the table ``spec`` names.

    Returns:
        The backend, connected (a real mcu table with ``reconnect``: started, link maybe down).
        Simulated: ``backend.model`` is the machine model.
    Raises:
        BackendError: pins, serial port or pseudo-terminal unavailable, no handshake answer.
        ProfileError: the profile cannot be loaded.
        FaultSpecError: an unknown fault, or one that does not apply to the backend.
    """
    from . import open_backend, open_gpio, open_mcu

    if not isinstance(spec, TableSpec):
        raise BackendError(f"open_table takes a TableSpec, got {type(spec).__name__}")
    if spec.simulated:
        seed = spec.seed if spec.seed is not None else random.SystemRandom().randrange(1 << 30)
        return open_backend(spec.backend, profile=spec.profile, seed=seed, faults=spec.faults,
                            speed=spec.speed, device=spec.device)
    prof = spec.profile if isinstance(spec.profile, Profile) else load_profile(spec.profile)
    if spec.backend == "gpio":
        return open_gpio(prof)
    return open_mcu(spec.port, prof, wait=not spec.reconnect)
