"""The one interface the controller drives: :class:`TableBackend`.

Three backends implement it and the controller cannot tell them apart: ``sim`` (the
machine model directly), ``gpio`` (gpiozero devices on the Pi's pins; in tests on
gpiozero's MockFactory with the model behind the pins) and ``mcu`` (the table's
microcontroller over :mod:`firmware_bridge`; in tests the model runs the device side
over a pseudo-terminal).

Commands and events are the table's vocabulary, :mod:`hardware.vocabulary`: goal commands
(StartShuffle, FeedStacks, Lift, RollDice, SelfTestStep, StopAll, SetGear, SetIndicators,
GetStatus, ClearSafeStop) each with its deadline in ms of machine time, and backend-neutral
events (Reply, Status, SensorChanged, StacksCounted, MotionDone, Fault; on a backend with a
link to a board also Connected, BackendReset, BackendLost, CommandFailed). Every backend
speaks exactly these; :mod:`firmware_bridge.codec` packs and unpacks these very classes as the
serial protocol's messages (the one place that knows both), and the MCU backend turns the link's
own events into the neutral ones. (Below the device engine
that sim and gpio run in-process, the simulated machine, the GPIO pin machine and the
profiles' pin maps still address parts by the engine's codes, ``firmware_bridge.catalogue``.)

``t_ms`` is machine time in ms since the backend opened. The power-on state is
safe-stop (reason POWER_ON) on every backend: send :class:`ClearSafeStop` first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol, runtime_checkable

from .profile import Profile
from .vocabulary import (EVENT_TYPES, PER_SIDE_SENSORS, SIDELESS_SENSORS, Command, LinkHealth,
                         Sensor, Side, all_sensor_keys)

Event = Any  # one of vocabulary.EVENT_TYPES


@dataclass(frozen=True)
class SensorSnapshot:
    """Every sensor reading at machine time ``t`` (s): ``values[(Sensor, Side | None)]``
    is 0 or 1."""

    t: float
    values: dict[tuple[Sensor, Side | None], int]

    def __call__(self, sensor: Sensor, side: Side | None = None) -> int:
        """Reading of ``sensor`` (on ``side`` for per-side sensors)."""
        return self.values[(Sensor(sensor), None if side is None else Side(side))]


@runtime_checkable
class TableBackend(Protocol):
    """What the controller's runtime uses. Event-driven: nothing here blocks for a motion.

    Attributes: ``kind`` ("sim", "gpio" or "mcu"), ``profile`` (:class:`Profile`),
    ``fitted`` (the part names of ``hardware.profile.ALL_PARTS`` this build has: a GPIO
    build may leave the indicators, buttons and jam sensor out),
    ``model`` (the simulated machine behind it, or None on real hardware).
    """

    kind: str
    profile: Profile
    fitted: frozenset

    def now(self) -> float:
        """Machine time in seconds since the backend opened (virtual for sim and for
        gpio on mock pins; real x speed for mcu)."""

    def submit(self, command: Command) -> int:
        """Send a command; returns its cmd_id (1..65535). The answer comes later as a
        Reply/Status event with that id (CommandFailed on the MCU link). Raises
        CommandError for something that is not a goal command, BackendError when the backend
        is closed, BackendLinkError when the link is down."""

    def events(self) -> list[Event]:
        """Drain the events that arrived so far (never blocks)."""

    def advance(self, dt: float) -> list[Event]:
        """Let ``dt`` seconds of machine time pass (simulate them, or wait), returning
        the events that arrived."""

    def run_until(self, predicate: Callable[[Event], bool], timeout: float) -> list[Event]:
        """Advance until an event satisfies ``predicate``; returns every event seen, the
        matching one last. Raises HardwareTimeout after ``timeout`` machine seconds."""

    def sensors(self) -> SensorSnapshot:
        """The current readings of every sensor."""

    def stop_all(self) -> None:
        """Stop every motor now (motions end STOPPED), whatever state the backend is in."""

    def health(self) -> LinkHealth | None:
        """The counters of the link to the table's board (MCU backend), None for a backend
        without a link (sim, gpio)."""

    def close(self) -> None:
        """Stop every motor and release pins / ports. Idempotent."""
