"""The thin shell around the state machine: it drives a ``hardware.TableBackend``.

``TableRuntime.run_cycle()`` sends ``StartCycle`` with freshly rolled dice, then loops: let machine
time pass on the backend, feed every event through ``controller.cycle.step``, submit the commands
it returns, report progress, until the cycle ends (walls up), a fault is latched or the link is
lost. Whatever happens (an exception included) every motor is stopped before control returns on
a fault or an error.

The table's own buttons (two lift buttons, the dice button) come in as sensor events;
``controller.buttons.ButtonPanel`` turns them into actions, which the runtime carries out when the
state allows (``cycle.refusal``) and otherwise reports through ``notice``.

Time: the backend's clock (virtual on the simulator and on GPIO mock pins, real time times the
speed-up on the MCU link). ``pace`` (s of wall time per s of machine time) slows a simulated run
down so a person can watch it (``--speed``).

Recording (``trace``, a ``hardware.trace.TraceWriter``): at its boundary with the backend the runtime
writes every event it takes from the backend, every command it sends and its own inputs (ticks, the
start of a cycle with its dice, the operator's events: ``controller.tracing``), each with the machine
time; ``controller.replay`` feeds such a trace back through the same methods (:meth:`take`,
:meth:`tick`, :meth:`start_cycle`, :meth:`feed`) and so the same state machine and diagnosis.
"""

from __future__ import annotations

import dataclasses

import time
from typing import Callable

from hardware.errors import HardwareError
from hardware.vocabulary import (BackendReset, CommandFailed, Connected, Reply, ReplyCode, Sensor, Side,
                                 StopAll)

from . import cycle as CY
from . import tracing as TR
from .buttons import ButtonPanel
from .dice import Method, roll

#: machine time between two looks at the backend (s)
TICK_S = 0.05


class TableRuntime:
    """Runs the cycle state machine against one backend.

    Args:
        backend: a ``hardware.TableBackend``.
        settings: the cycle settings (``cycle.Settings.from_profile``).
        progress: called with the state after every change of phase or stack count.
        dice: ``() -> values`` for each cycle (default: electronic dice from ``secrets``; four
            values for the two-throw method, two for one-throw).
        pace: wall seconds per machine second (0: as fast as possible).
        on_button: ``(action) -> None`` for a button action (``"cycle"``, ``"refill"``, ``"dice"``);
            default: :meth:`button`.
        notice: called with a one-line text when a button press is refused (and why).
        trace: a ``hardware.trace.TraceWriter`` to record to (None: no recording).
    """

    def __init__(self, backend, settings: CY.Settings, *, progress: Callable[[CY.Table], None] | None = None,
                 dice: Callable[[], tuple[int, ...]] | None = None, pace: float = 0.0,
                 on_button: Callable[[str], None] | None = None,
                 notice: Callable[[str], None] | None = None, trace=None) -> None:
        self.backend = backend
        self.trace = trace
        self.table = CY.initial(settings)
        self.read_positions()
        self.progress = progress
        self.dice = dice or (lambda: roll(4 if settings.dice_method is Method.TWO_THROW else 2))
        self.pace = pace
        self._commands: dict[int, object] = {}
        self._held_reset: BackendReset | None = None
        self._link_base = self._link_counters()
        self.panel = ButtonPanel()
        self.on_button = on_button or self.button
        self.notice = notice or (lambda text: None)

    def read_positions(self) -> None:
        """Take every level sensor's reading from the backend at once (lift limits, push heads,
        centre lift, lid, emergency stop ...), so that after a restart the positions are known
        without waiting for a sensor to change (issue #16 part 5). The MCU backend has read them
        from the device at connect (GetStatus); pulse sensors are left out (their level means
        nothing)."""
        snap = self.backend.sensors()
        self._note("read_positions", readings=TR.readings_to_json(snap.values))
        levels = {k: v for k, v in snap.values.items() if k[0] not in CY.PULSE_SENSORS}
        self.table = dataclasses.replace(self.table, sensors={**levels, **self.table.sensors})

    def resync(self) -> None:
        """Take every reading afresh from the backend, replacing what the state machine knew (after the
        link was down, after a self-test that read the machine's events itself)."""
        values = dict(self.backend.sensors().values)
        self._note("readings", readings=TR.readings_to_json(values))
        self.table = dataclasses.replace(self.table, sensors=values)

    # -- the loop --
    def _note(self, op: str, **fields) -> None:
        if self.trace is not None:
            self.trace.note(self.backend.now(), op, **fields)

    def _submit(self, commands) -> None:
        for c in commands:
            try:
                cmd_id = self.backend.submit(c)
                self._commands[cmd_id] = c
                if self.trace is not None:
                    self.trace.command(self.backend.now(), c, cmd_id)
            except HardwareError as e:
                if self.trace is not None:
                    self.trace.command(self.backend.now(), c, None, error=str(e))
                if isinstance(c, StopAll):
                    continue  # link down: the microcontroller stops its motors itself within its heartbeat window
                side = getattr(c, "side", None)
                self.feed(CY.Rejected(type(c).__name__, None if side is None else CY.SIDES[int(side)],
                                      f"not sent: {e}"))

    def _stop_all(self) -> None:
        self._note("stop_all")
        try:
            self.backend.stop_all()
        except HardwareError:
            pass  # link down: the microcontroller's own safety rule stops the motors

    def _translate(self, ev):
        """Hardware Reply with a refusal -> ``Rejected`` (the state machine knows commands, not ids).

        Commands the link gave up on because the microcontroller restarted are dropped: the
        BackendReset event that comes with them makes the state machine re-home.
        """
        if isinstance(ev, BackendReset):
            # hold it until the link has shaken hands again: commands sent before would be refused
            self._commands.clear()
            self._held_reset = ev
            return None
        if isinstance(ev, Connected):
            held, self._held_reset = self._held_reset, None
            return held
        if isinstance(ev, CommandFailed):
            cmd = self._commands.pop(ev.cmd_id, None)
            if cmd is None or ev.reset:
                return None
            side = getattr(cmd, "side", None)
            return CY.Rejected(type(cmd).__name__, None if side is None else CY.SIDES[int(side)],
                               f"no answer ({ev.reason})")
        if isinstance(ev, Reply):
            cmd = self._commands.pop(ev.cmd_id, None)
            if ev.code is ReplyCode.OK or cmd is None:
                return None
            side = getattr(cmd, "side", None)
            return CY.Rejected(type(cmd).__name__, None if side is None else CY.SIDES[int(side)],
                               f"{ev.code.name.lower()} (detail {ev.detail})")
        return ev

    def feed(self, event) -> None:
        """Pass one event through the state machine and send what it commands; a button event
        then triggers its action. A controller event (the operator's) is recorded to the trace."""
        if self.trace is not None:
            op = TR.op_of(event)
            if op is not None:
                self._note(op[0], **op[1])
        self._step(event)

    def _step(self, event) -> None:
        before = (self.table.phase, self.table.obs.stacks)
        self.table, cmds = CY.step(self.table, event, self.backend.now())
        self._submit(cmds)
        if self.progress and (self.table.phase, self.table.obs.stacks) != before:
            self.progress(self.table)
        action = self.panel.event(event)
        if action is not None:
            self.on_button(action)

    def button(self, action: str) -> None:
        """Carry out a button action if the state allows it, else ``notice`` why not."""
        if action == "cycle":
            event = CY.StartCycle((), {})
        elif action == "refill":
            event = CY.RefillButtons()
        else:
            event = CY.DiceButton(())
        reason = CY.refusal(self.table, event)
        if reason is not None:
            self.notice(f"{action} button: {reason}")
        elif action == "cycle":
            self.start_cycle()
        elif action == "dice":
            self.feed(CY.DiceButton(tuple(self.dice())))
        else:
            self.feed(event)

    def _link_counters(self) -> tuple[int, int] | None:
        health = getattr(self.backend, "health", None)
        st = health() if health is not None else None
        if st is None:
            return None
        return st.frames_rejected, st.retransmitted

    def start_cycle(self) -> None:
        """Send ``StartCycle`` with freshly rolled dice and the current sensor readings."""
        dice, readings = tuple(self.dice()), dict(self.backend.sensors().values)
        self._note("start_cycle", dice=list(dice), readings=TR.readings_to_json(readings),
                   carry=TR.carry_of(self.table))
        self._step(CY.StartCycle(dice, readings))

    def take(self, ev) -> None:
        """One event from the backend: recorded, translated (a refused command's Reply becomes
        ``Rejected`` ...) and fed to the state machine."""
        if self.trace is not None:
            self.trace.event(self.backend.now(), ev)
        ev = self._translate(ev)
        if ev is not None:
            self._step(ev)

    def tick(self) -> None:
        """The runtime's look at the machine: a ``Tick`` (the controller's own deadlines). Recorded
        only while the machine moves: at rest a Tick changes nothing (``cycle.step``)."""
        if self.table.phase in CY.MOVING_PHASES:
            self._note("tick")
        self._step(CY.Tick())

    def pump(self, dt: float = TICK_S) -> None:
        """Let ``dt`` seconds of machine time pass and process what happened (one loop turn of a
        service); paced to wall time when ``pace`` is set."""
        wall = time.monotonic()
        for ev in self.backend.advance(dt):
            self.take(ev)
        self.tick()
        if self.pace:
            time.sleep(max(0.0, dt * self.pace - (time.monotonic() - wall)))

    def run_cycle(self, timeout_s: float = 600.0) -> CY.Table:
        """Run one cycle to walls up (or to a latched fault / safe-stop). Returns the final state.

        ``timeout_s`` is machine time; the state machine's own phase deadlines come first.
        """
        t0 = self.backend.now()
        try:
            self.start_cycle()
            if self.table.phase in (CY.Phase.FAULT, CY.Phase.SAFE_STOP):
                return self.table  # latched from before: clear it first
            while self.table.phase in CY.MOVING_PHASES:
                self.pump()
                if self.backend.now() - t0 > timeout_s:
                    self.feed(CY.Rejected("cycle", None, f"no end after {timeout_s:.0f} s"))
            base, now = self._link_base, self._link_counters()
            if base is not None and now is not None:
                self.feed(CY.LinkQuality(now[0] - base[0], now[1] - base[1]))
                self._link_base = now
            return self.table
        except BaseException as e:
            self._stop_all()
            # tell the state machine: it must not believe the cycle is still running
            self.table, _ = CY.step(self.table, CY.StopAllRequest(f"runtime ({type(e).__name__})"), self.backend.now())
            raise
        finally:
            if self.table.phase in (CY.Phase.FAULT, CY.Phase.SAFE_STOP):
                self._stop_all()

    def clear_fault(self) -> None:
        """The technician cleared the fault: re-home (and clear the walls if a build was cut short),
        then wait in IDLE; the next cycle starts only when asked."""
        self.feed(CY.ClearFault())
        while self.table.phase in CY.MOVING_PHASES:
            self.pump()


def lift_states(table: CY.Table, sensors) -> list[str]:
    """Per side E, S, W, N: "up", "down", "moving" or "?" from the limit sensors."""
    out = []
    for i in range(4):
        top = sensors.get((Sensor.LIFT_TOP, Side(i)))
        bottom = sensors.get((Sensor.LIFT_BOTTOM, Side(i)))
        out.append("up" if top == 1 and bottom == 0 else "down" if bottom == 1 and top == 0 else
                   "moving" if top == 0 and bottom == 0 else "?")
    return out


def centre_state(sensors) -> str:
    """The centre lift: "up" (hole closed), "down", "moving" or "?" from its limit sensors."""
    top, bottom = sensors.get((Sensor.CENTRE_TOP, None)), sensors.get((Sensor.CENTRE_BOTTOM, None))
    return ("up" if top == 1 and bottom == 0 else "down" if bottom == 1 and top == 0 else
            "moving" if top == 0 and bottom == 0 else "?")


def push_heads(sensors) -> list[str]:
    """Per side E, S, W, N: the push head "home", "out" or "?" (not read yet)."""
    v = [sensors.get((Sensor.PUSH_HOME, Side(i))) for i in range(4)]
    return ["home" if x == 1 else "out" if x == 0 else "?" for x in v]
