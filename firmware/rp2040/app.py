"""The table's firmware: the device side of the protocol on a Raspberry Pi Pico (RP2040).

One loop, no threads (MicroPython)::

    read the link -> engine.feed        bytes from the Pi (USB CDC or the UART)
    inputs.poll   -> engine.sensor_changed   edges from the interrupt ring and the chain
    engine.tick                          host-silence safe stop, deadlines, heartbeat
    engine.poll   -> write the link      frames to the Pi
    feed the watchdog, toggle the motor-power heartbeat

The protocol is :mod:`firmware_bridge` itself (``device``, ``executor``, ``motion``,
``reliable``, ``wire``, ``catalogue``: the same files as the simulator's, compiled with
mpy-cross by ``make firmware``): every motion's deadline, the host-silence stop and the
power-on latch are enforced here on the board.

Time: the engine counts integer ms from boot. ``time.ticks_ms`` wraps (2^30 ms on the
RP2040, about 12.4 days; ``ticks_us`` after 2^30 us, about 18 minutes), so the engine's
clock is advanced by ``ticks_diff`` of consecutive readings and never by subtracting ticks.
The engine's own differences are then plain ints (MicroPython ints do not overflow; past
2^30 ms they become long ints, which costs a little heap, no error).

``App(machine, pinmap, clock)`` takes its modules as arguments: ``main.py`` passes the real
``machine`` and ``time``; the tests pass a stand-in (hardware/sim/mp/machine.py).
"""

import struct

from board import Inputs, Outputs, ShiftIn, ShiftOut
from firmware_bridge.device import DeviceEngine

FIRMWARE = (1, 0, 0)
BOOT_FILE = "bootcount"
CRASH_FILE = "lastcrash.txt"
_FRAMES_PER_PASS = 4     # reliable frames handed to the link per pass (bounded TX)


def next_boot(path=BOOT_FILE, os=None):
    """Read, increment and store the boot counter (u32) in flash; returns the new value.
    Written to a new file then renamed over the old one (littlefs renames atomically), so
    a power cut leaves the old count or the new one, never none."""
    if os is None:
        import os
    n = 0
    try:
        with open(path, "rb") as f:
            raw = f.read(4)
        if len(raw) == 4:
            n = struct.unpack("<I", raw)[0]
    except OSError:
        pass
    n = (n + 1) & 0xFFFFFFFF
    try:
        with open(path + ".new", "wb") as f:
            f.write(struct.pack("<I", n))
        os.rename(path + ".new", path)
    except OSError:
        pass  # a full or read-only flash: the count is not kept, the firmware still runs
    return n


class UsbLink:
    """The USB CDC serial port (the REPL's): non-blocking reads through select.poll,
    Ctrl-C disabled (a 0x03 byte in a frame must not interrupt the firmware)."""

    def __init__(self):
        import micropython
        import select
        import sys
        micropython.kbd_intr(-1)
        self.inp = sys.stdin.buffer
        self.out = sys.stdout.buffer
        self.poller = select.poll()
        self.poller.register(self.inp, select.POLLIN)

    def read(self):
        data = b""
        while len(data) < 64 and self.poller.poll(0):
            data += self.inp.read(1)
        return data

    def write(self, data):
        self.out.write(data)


class UartLink:
    """``machine.UART`` (115200 baud, 8N1, pins from the pin map)."""

    def __init__(self, machine, uart_id, tx, rx, baud):
        Pin = machine.Pin
        self.uart = machine.UART(uart_id, baudrate=baud, tx=Pin(tx), rx=Pin(rx),
                                 rxbuf=512, txbuf=512)

    def read(self):
        n = self.uart.any()
        return self.uart.read(n) if n else b""

    def write(self, data):
        self.uart.write(data)


class App:
    """The firmware. Every output is off before anything else is set up. ``ms0``: the
    engine's clock at boot (0; a test harness aligns it with its own)."""

    def __init__(self, machine, pinmap, clock, link=None, boot=None, ms0=0):
        self.machine = machine
        self.clock = clock
        so = pinmap.SHIFT_OUT
        self.chain = ShiftOut(machine, so[0], so[1], so[2], so[3], so[4],
                              pinmap.OUTPUTS_ACTIVE_HIGH)
        self.chain.all_off()          # every output off, then the chain's outputs enabled
        self.chain.enable()
        self.outputs = Outputs(self.chain, pinmap)
        self.wdt = machine.WDT(timeout=pinmap.WATCHDOG_MS)
        self.boot = next_boot() if boot is None else boot
        if link is None:
            u = pinmap.UART
            link = (UsbLink() if pinmap.LINK == "usb"
                    else UartLink(machine, u[0], u[1], u[2], u[3]))
        self.link = link
        self._t = clock.ticks_ms()
        self.ms = ms0                 # engine time: ms since boot, advanced by ticks_diff
        si = pinmap.SHIFT_IN
        self.inputs = Inputs(machine, pinmap, ShiftIn(machine, si[0], si[1], si[2], si[3]),
                             clock)
        self.engine = DeviceEngine(self.outputs, boot_counter=self.boot, now_ms=self.ms,
                                   firmware=FIRMWARE, profile_id=pinmap.PROFILE_ID,
                                   gear_tiles=pinmap.GEAR,
                                   baudrate=pinmap.UART[3] if pinmap.LINK == "uart" else None)
        for sensor, side, value in self.inputs.initial():   # inputs read at boot
            self.engine.sensor_changed(sensor, side, value, self.ms)
        self.passes = 0
        self._beat = 0

    def now(self):
        t = self.clock.ticks_ms()
        self.ms += self.clock.ticks_diff(t, self._t)
        self._t = t
        return self.ms

    def step(self):
        """One pass of the main loop."""
        eng = self.engine
        now = self.now()
        data = self.link.read()
        if data:
            eng.feed(data, now)
        self.inputs.poll(eng, now, self.clock.ticks_us())
        eng.tick(now)
        out = eng.poll(_FRAMES_PER_PASS)
        if out:
            self.link.write(out)
        self.wdt.feed()
        self.passes += 1
        beat = (now // 50) & 1       # 10 Hz square wave for the motor-power watchdog
        if beat != self._beat:
            self._beat = beat
            self.outputs.heartbeat(beat)

    def off(self):
        """Every output off and the chain disabled (a crash, a reset)."""
        try:
            self.chain.all_off()
        finally:
            self.chain.enable(False)

    def run(self, sleep_ms=1):
        while True:
            self.step()
            if sleep_ms:
                self.clock.sleep_ms(sleep_ms)


def main(machine=None, clock=None, pinmap=None):
    """Run the firmware; on any error every output goes off, the error is kept in
    ``lastcrash.txt`` and the board resets (the host sees a new boot counter)."""
    if machine is None:
        import machine
    if clock is None:
        import time as clock
    if pinmap is None:
        import pinmap
    app = None
    try:
        app = App(machine, pinmap, clock)
        app.run()
    except Exception as exc:  # noqa: BLE001 - the firmware must stop the motors first
        if app is not None:
            app.off()
        try:
            import sys
            with open(CRASH_FILE, "w") as f:
                sys.print_exception(exc, f)
        except Exception:  # noqa: BLE001
            pass
        machine.reset()
