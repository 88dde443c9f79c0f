"""In-process command execution, shared by the ``sim`` and ``gpio`` backends.

:class:`LocalExecutor` gives a machine driven from the Pi itself the same command
semantics as the microcontroller's :class:`firmware_bridge.device.DeviceEngine`: the
motions run through the same :class:`firmware_bridge.motion.MotionTable`; power-on and
the emergency stop latch a safe-stop that only ClearSafeStop clears; a motor that already
has a motion answers BUSY; a lift already at its limit completes at once; SetGear is
refused BUSY while anything moves. :class:`LocalBackend` adds the event queue, the clock
and time stepping (virtual: the machine model's discrete events and the motion
deadlines, in order; real: a ticker thread).
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any, Callable

from firmware_bridge import catalogue as C
from firmware_bridge.messages import (COMMAND_NAMES, ClearSafeStop, Command, DeviceState,
                                      Fault, FaultCode, FeedStacks, GetStatus, Lift,
                                      MotionDone, Outcome, Reply, ReplyCode, RollDice,
                                      SelfTestStep, Sensor, SensorChanged, SetGear, Side,
                                      StacksCounted, StartShuffle, Status, StopAll,
                                      StopReason, StopShuffle)
from firmware_bridge.motion import MotionTable

from .errors import BackendError, HardwareTimeout
from .interface import Event, all_sensor_keys
from .profile import Profile


def _side(v: int) -> Side | None:
    return None if v == C.SIDE_NONE else Side(v)


class LocalExecutor:
    """Executes commands against a :class:`firmware_bridge.machine.Machine`.

    Args:
        machine: motor outputs (``start``, ``stop``, ``stop_all``, ``set_gear``).
        now_ms: clock in integer ms of machine time.
        emit: called with every event (Reply, Status, SensorChanged, StacksCounted,
            MotionDone, Fault).
        read: ``read(sensor, side) -> 0/1`` current input reading (for STATUS and the
            "lift already at its limit" rule).
        gear: gear at power-on (tiles).
    """

    def __init__(self, machine: Any, now_ms: Callable[[], int], emit: Callable[[Event], None],
                 read: Callable[[int, int], int], gear: int = 136) -> None:
        self.machine = machine
        self.now_ms = now_ms
        self.emit = emit
        self.read = read
        self.gear = gear
        self.stop_reason = C.STOP_POWER_ON
        self.table = MotionTable(machine, self._on_stack, self._on_done)
        self.boot_ms = now_ms()
        machine.stop_all()

    def _on_stack(self, m: Any, now_ms: int) -> None:
        self.emit(StacksCounted(m.cmd, Side(m.side), m.progress, now_ms))

    def _on_done(self, m: Any, outcome: int, elapsed_ms: int) -> None:
        self.emit(MotionDone(m.cmd, COMMAND_NAMES[m.mtype], _side(m.side), Outcome(outcome),
                             elapsed_ms, m.progress))
        if outcome == C.OUTCOME_DEADLINE:
            self.emit(Fault(FaultCode.DEADLINE, _side(m.side), m.cmd, m.progress,
                            self.now_ms()))

    # ------------------------------------------------------------------ inputs
    def on_sensor(self, sensor: int, side: int, value: int) -> None:
        """An input reading changed (already de-duplicated)."""
        now = self.now_ms()
        self.emit(SensorChanged(Sensor(sensor), _side(side), value, now))
        if sensor == C.SENSOR_ESTOP and value:
            self.table.stop_all(C.OUTCOME_SAFE_STOP, now)
            self.stop_reason = C.STOP_ESTOP
            self.emit(Fault(FaultCode.ESTOP, None, 0, 0, now))
            return
        self.table.on_sensor(sensor, side, value, now)

    def tick(self) -> None:
        self.table.tick(self.now_ms())

    def stop_all(self) -> None:
        self.table.stop_all(C.OUTCOME_STOPPED, self.now_ms())

    # ---------------------------------------------------------------- commands
    def execute(self, cmd_id: int, command: Command) -> None:
        """Execute ``command`` (already validated by its dataclass); emits the Reply or
        Status first, then whatever the motion produces."""
        now = self.now_ms()

        def reply(code: int, detail: int = 0) -> None:
            self.emit(Reply(cmd_id, ReplyCode(code), detail))

        def begin(mtype: int, motor: int, side: int, direction: int, target: int,
                  deadline: int) -> None:
            if self.stop_reason != C.STOP_NONE:
                return reply(C.REPLY_SAFE_STOP, self.stop_reason)
            if self.table.busy(motor, side):
                return reply(C.REPLY_BUSY)
            reply(C.REPLY_OK)
            self.table.begin(cmd_id, mtype, motor, side, direction, target, deadline, now)

        if isinstance(command, StartShuffle):
            begin(C.T_SHUFFLE_START, C.MOTOR_SHUFFLE, C.SIDE_NONE, 1, 0, command.deadline_ms)
        elif isinstance(command, StopShuffle):
            reply(C.REPLY_OK)
            self.table.finish((C.MOTOR_SHUFFLE, C.SIDE_NONE), C.OUTCOME_STOPPED, now)
        elif isinstance(command, FeedStacks):
            begin(C.T_FEED_STACK, C.MOTOR_FEEDER, int(command.side), 1, command.stacks,
                  command.deadline_ms)
        elif isinstance(command, Lift):
            side = int(command.side)
            limit = C.SENSOR_LIFT_TOP if command.up else C.SENSOR_LIFT_BOTTOM
            if (self.stop_reason == C.STOP_NONE and not self.table.busy(C.MOTOR_LIFT, side)
                    and self.read(limit, side)):
                reply(C.REPLY_OK)  # already there: done without moving
                self.emit(MotionDone(cmd_id, "Lift", Side(side), Outcome.COMPLETED, 0, 0))
                return
            begin(C.T_LIFT, C.MOTOR_LIFT, side, 1 if command.up else 0, 0,
                  command.deadline_ms)
        elif isinstance(command, RollDice):
            begin(C.T_ROLL_DICE, C.MOTOR_DICE, C.SIDE_NONE, 1, command.spin_ms,
                  command.deadline_ms)
        elif isinstance(command, StopAll):
            self.table.stop_all(C.OUTCOME_STOPPED, now)
            reply(C.REPLY_OK)
        elif isinstance(command, SetGear):
            if self.table.motions:
                return reply(C.REPLY_BUSY)
            self.gear = command.tiles
            self.machine.set_gear(command.tiles)
            reply(C.REPLY_OK)
        elif isinstance(command, GetStatus):
            mask = 0
            for sensor, side in all_sensor_keys():
                s = C.SIDE_NONE if side is None else int(side)
                if self.read(int(sensor), s):
                    mask |= 1 << C.sensor_bit(int(sensor), s)
            state = (C.STATE_SAFE_STOP if self.stop_reason != C.STOP_NONE
                     else C.STATE_BUSY if self.table.motions else C.STATE_IDLE)
            self.emit(Status(cmd_id, DeviceState(state), StopReason(self.stop_reason),
                             self.gear, self.table.motors_mask(), mask, now - self.boot_ms,
                             len(self.table)))
        elif isinstance(command, SelfTestStep):
            side = C.SIDE_NONE if command.side is None else int(command.side)
            begin(C.T_SELF_TEST, int(command.motor), side, 1, command.jog_ms,
                  command.deadline_ms)
        elif isinstance(command, ClearSafeStop):
            if self.read(C.SENSOR_ESTOP, C.SIDE_NONE):
                return reply(C.REPLY_SAFE_STOP, C.STOP_ESTOP)
            self.stop_reason = C.STOP_NONE
            reply(C.REPLY_OK)
        else:
            reply(C.REPLY_UNKNOWN, getattr(command, "TYPE", 0) & 0xFF)


class LocalBackend:
    """Base of the ``sim`` and ``gpio`` backends (see :class:`TableBackend`).

    With a machine ``model`` (virtual clock) time passes only in ``advance`` /
    ``run_until``; without one (real hardware) a ticker thread checks the deadlines
    every ``tick_s`` and ``advance`` sleeps.
    """

    kind = "local"

    def __init__(self, profile: Profile, model: Any | None = None, tick_s: float = 0.005):
        self.profile = profile
        self.model = model
        self.lock = threading.RLock()
        self._events: list[Event] = []
        self._next_id = 1
        self._closed = False
        self._t0 = time.monotonic()
        self._ticker: threading.Thread | None = None
        self._tick_s = tick_s
        self.executor: LocalExecutor | None = None

    # -------------------------------------------------------------- the clock
    def now(self) -> float:
        if self.model is not None:
            return self.model.now
        return time.monotonic() - self._t0

    def now_ms(self) -> int:
        return int(round(self.now() * 1000))

    def _emit(self, ev: Event) -> None:
        self._events.append(ev)

    def _start_ticker(self) -> None:
        def run() -> None:
            while not self._closed:
                with self.lock:
                    if self.executor is not None:
                        self.executor.tick()
                time.sleep(self._tick_s)
        self._ticker = threading.Thread(target=run, name="mjtable-motion-tick", daemon=True)
        self._ticker.start()

    # ------------------------------------------------------------- interface
    def submit(self, command: Command) -> int:
        if self._closed:
            raise BackendError(f"{self.kind} backend is closed")
        if not isinstance(command, Command):
            raise BackendError(f"not a command: {command!r}")
        with self.lock:
            self._sync()
            cmd_id = self._next_id
            self._next_id = cmd_id % 0xFFFF + 1
            assert self.executor is not None
            self.executor.execute(cmd_id, command)
            self._sync()
        return cmd_id

    def events(self) -> list[Event]:
        with self.lock:
            out, self._events = self._events, []
        return out

    def _sync(self) -> None:
        """Hook: bring the simulated machine up to date with the outputs (gpio)."""

    def _step_to(self, t_end: float) -> None:
        model, ex = self.model, self.executor
        assert ex is not None
        while True:
            self._sync()
            nd = ex.table.next_due()
            t_next = min(t_end, model.next_event_time(),
                         math.inf if nd is None else nd / 1000.0)
            model.run_to(max(t_next, model.now))
            ex.tick()
            if t_next >= t_end:
                self._sync()
                return

    def advance(self, dt: float) -> list[Event]:
        if dt < 0:
            raise ValueError(f"dt must be >= 0 s, got {dt!r}")
        if self.model is None:
            time.sleep(dt)
        else:
            with self.lock:
                self._step_to(self.model.now + dt)
        return self.events()

    def run_until(self, predicate: Callable[[Event], bool], timeout: float,
                  step: float = 0.05) -> list[Event]:
        seen: list[Event] = []
        end = self.now() + timeout
        while True:
            batch = self.events()
            for i, ev in enumerate(batch):
                seen.append(ev)
                if predicate(ev):
                    with self.lock:
                        self._events[:0] = batch[i + 1:]  # later events stay queued
                    return seen
            if self.now() >= end:
                raise HardwareTimeout(f"condition not met within {timeout} s of machine time "
                                      f"({len(seen)} events seen)")
            self._advance_one(min(step, end - self.now()))

    def _advance_one(self, dt: float) -> None:
        if self.model is None:
            time.sleep(dt)
        else:
            with self.lock:
                # stop at the first event so that run_until returns at the right moment
                n = len(self._events)
                t_end = self.model.now + dt
                while not len(self._events) > n and self.model.now < t_end:
                    nd = self.executor.table.next_due()
                    nxt = min(t_end, self.model.next_event_time(),
                              math.inf if nd is None else nd / 1000.0)
                    self._step_to(max(nxt, self.model.now))

    def stop_all(self) -> None:
        with self.lock:
            if self.executor is not None:
                self.executor.stop_all()
            self._sync()

    def close(self) -> None:
        if self._closed:
            return
        try:
            self.stop_all()
        finally:
            self._closed = True
            self._release()

    def _release(self) -> None:
        """Hook: release pins."""

    def __enter__(self) -> "LocalBackend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
