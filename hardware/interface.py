"""The one interface the controller drives: :class:`TableBackend`.

Three backends implement it and the controller cannot tell them apart: ``sim`` (the
machine model directly), ``gpio`` (gpiozero devices on the Pi's pins; in tests on
gpiozero's MockFactory with the model behind the pins) and ``mcu`` (the table's
microcontroller over :mod:`firmware_bridge`; in tests the model runs the device side
over a pseudo-terminal).

Commands are the goal-level dataclasses of :mod:`firmware_bridge.messages`
(:class:`StartShuffle`, :class:`StopShuffle`, :class:`FeedStacks`, :class:`Lift`,
:class:`RollDice`, :class:`StopAll`, :class:`SetGear`, :class:`GetStatus`,
:class:`SelfTestStep`, :class:`ClearSafeStop`, :class:`SetIndicators`). ``Lift(None, ...)``
moves the centre lift. Times inside them (``deadline_ms``, ``spin_ms``, ``jog_ms``,
``buzzer_ms``) are ms of *machine time*.

Events (what :meth:`TableBackend.events` / ``advance`` / ``run_until`` return) are the
dataclasses of :mod:`firmware_bridge.messages` and :mod:`firmware_bridge.host`:

* :class:`Reply` ``(cmd_id, code, detail)`` - every command but GetStatus gets one;
  :class:`Status` answers GetStatus.
* :class:`SensorChanged` ``(sensor, side, value, t_ms)`` - an input's reading changed
  (after the configured active level; a reversed sensor reads inverted).
* :class:`StacksCounted` ``(cmd_id, side, count, t_ms)`` - one more stack fed.
* :class:`MotionDone` ``(cmd_id, command, side, outcome, elapsed_ms, detail)`` - a motion
  ended: COMPLETED, STOPPED, DEADLINE or SAFE_STOP; ``elapsed_ms`` is the travel time of
  a lift (maintenance trend), ``detail`` the stacks counted / sensor changes.
* :class:`Fault` ``(code, side, cmd_id, detail, t_ms)`` - DEADLINE (with the progress),
  ESTOP, HOST_TIMEOUT, EVENTS_DROPPED.
* MCU backend only: :class:`McuReset`, :class:`LinkLost`, :class:`Connected`,
  :class:`CommandFailed` (the command will get no reply).

``t_ms`` is machine time in ms since the backend opened. The power-on state is
safe-stop (reason POWER_ON) on every backend: send :class:`ClearSafeStop` first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol, runtime_checkable

from firmware_bridge import catalogue as C
from firmware_bridge.host import CommandFailed, Connected, LinkLost, McuReset
from firmware_bridge.messages import (Command, Fault, MotionDone, Reply, Sensor,
                                      SensorChanged, Side, StacksCounted, Status)

from .profile import Profile

Event = Any  # one of the dataclasses listed in the module docstring
EVENT_TYPES = (Reply, Status, SensorChanged, StacksCounted, MotionDone, Fault, McuReset,
               LinkLost, Connected, CommandFailed)

PER_SIDE_SENSORS = tuple(Sensor(s) for s in C.PER_SIDE_SENSORS)
SIDELESS_SENSORS = tuple(Sensor(s) for s in C.SIDELESS_SENSORS)


@dataclass(frozen=True)
class SensorSnapshot:
    """Every sensor reading at machine time ``t`` (s): ``values[(Sensor, Side | None)]``
    is 0 or 1."""

    t: float
    values: dict[tuple[Sensor, Side | None], int]

    def __call__(self, sensor: Sensor, side: Side | None = None) -> int:
        """Reading of ``sensor`` (on ``side`` for per-side sensors)."""
        return self.values[(Sensor(sensor), None if side is None else Side(side))]


def all_sensor_keys() -> list[tuple[Sensor, Side | None]]:
    return ([(s, side) for s in PER_SIDE_SENSORS for side in Side]
            + [(s, None) for s in SIDELESS_SENSORS])


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
        BackendError when the backend is closed or the link is down."""

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

    def close(self) -> None:
        """Stop every motor and release pins / ports. Idempotent."""
