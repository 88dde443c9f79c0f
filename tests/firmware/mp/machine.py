"""A stand-in for MicroPython's ``machine`` module, for the unix port (tests only).

The firmware (firmware/rp2040) runs unchanged on top of it. The board around the RP2040 is
emulated here: the 74HC595 output chain and the 74HC165 input chain (pin numbers from
``pinmap``), driven through ``Pin.value`` exactly as the real chips are; the table beyond
them is the CPython test process (``firmware/sim.py``: the simulator's machine model),
reached through two pipes of text lines:

* to the table: ``O <hex>`` the latched outputs of the chain each time they change (0 while
  /OE is high), ``P <peak> <live> <passes>`` heap figures, ``X <reason>`` on a reset;
* from the table: ``G <gpio> <level> <ms>`` a GPIO input's level (fires the pin's edge
  interrupt, as a soft IRQ between two calls of the firmware), ``C <hex> <ms>`` the levels of
  the input chain's inputs, each at its time (ms since FW_T0_NS) plus FW_INPUT_DELAY_MS;
  ``Q`` stop.

``UART`` is the pseudo-terminal whose other end the CPython host backend opens (its fd is
inherited, non-blocking). ``WDT`` checks that it is fed within its timeout and resets (the
process exits) when it is not. ``clock`` stands for the ``time`` module's ticks with the
RP2040's period of 2^30 (the unix port's is 2^62); it can start just before the wrap.
Environment: FW_T0_NS, FW_UART_FD, FW_TO_TABLE_FD, FW_FROM_TABLE_FD, FW_TICKS_START_MS,
FW_TICKS_START_US, FW_GPIO (``gpio:level,...`` at power-on), FW_CHAIN (hex).
"""

import os
import select
import sys
import time

import pinmap

PERIOD = 1 << 30
_HALF = PERIOD >> 1
_T0_NS = int(os.getenv("FW_T0_NS") or time.time_ns())
_START_MS = int(os.getenv("FW_TICKS_START_MS") or 0)
_START_US = int(os.getenv("FW_TICKS_START_US") or 0)
_INPUT_DELAY_MS = int(os.getenv("FW_INPUT_DELAY_MS") or 0)
_CHAIN_HOLD_MS = 2   # more than the longest glitch filter of a chain input in the profile


def _fd_file(name, mode):
    fd = os.getenv(name)
    return open(int(fd), mode) if fd else None


class _Table:
    """The chips of the board and the pipes to the table."""

    def __init__(self):
        self.to = _fd_file("FW_TO_TABLE_FD", "wb")
        self.frm = _fd_file("FW_FROM_TABLE_FD", "rb")
        self.poller = select.poll()
        if self.frm is not None:
            self.poller.register(self.frm, select.POLLIN)
        self.buf = b""
        self.levels = {}
        for item in (os.getenv("FW_GPIO") or "").split(","):
            if item:
                g, v = item.split(":")
                self.levels[int(g)] = int(v)
        self.chain_in = int(os.getenv("FW_CHAIN") or "0", 16)
        so, si = pinmap.SHIFT_OUT, pinmap.SHIFT_IN
        self.so_data, self.so_clock, self.so_latch, self.so_oe = so[0], so[1], so[2], so[3]
        self.so_mask = (1 << (8 * so[4])) - 1
        self.si_load, self.si_clock, self.si_data = si[0], si[1], si[2]
        self.sr_out = 0
        self.latched = 0
        self.sent = None
        self.sr_in = 0
        self.pins = {}
        self.pending = []
        self.chain_reads = 2
        self.chain_at = 0
        self.stop = False

    def send(self, line):
        if self.to is not None:
            self.to.write(line.encode() + b"\n")

    def drive(self, gpio, v):
        old = self.levels.get(gpio, 0)
        self.levels[gpio] = v
        rising = v and not old
        if gpio == self.so_clock and rising:
            self.sr_out = ((self.sr_out << 1) | self.levels.get(self.so_data, 0)) & self.so_mask
        elif gpio == self.so_latch and rising:
            self.latched = self.sr_out
        elif gpio == self.si_load and not v:
            self.sr_in = self.chain_in      # /PL low: the inputs are loaded
            self.chain_reads += 1
            if self.chain_reads == 1:
                self.chain_at = clock.real_ms()   # the first read of this level
        elif gpio == self.si_clock and rising:
            self.sr_in >>= 1
        if gpio in (self.so_latch, self.so_oe):
            out = 0 if self.levels.get(self.so_oe, 1) else self.latched
            if out != self.sent:
                self.sent = out
                self.send("O %x" % out)

    def level(self, gpio):
        if gpio == self.si_data:
            return self.sr_in & 1
        return self.levels.get(gpio, 0)

    def service(self):
        """Apply the table's messages; fire the edge interrupts."""
        if self.frm is None:
            return
        # small reads: the stand-in's own allocations come out of the firmware's heap
        while self.poller.poll(0):
            data = self.frm.read(64)
            if not data:
                break
            self.buf += data
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            parts = line.split()
            if parts:
                self.pending.append(parts)
        # each level change carries its time (ms since FW_T0_NS on the table's clock) and
        # is applied FW_INPUT_DELAY_MS later: the table process may hand several over at
        # once, and they must reach the pins as far apart as the machine made them
        now = clock.real_ms()
        while self.pending:
            parts = self.pending[0]
            if parts[0] in (b"G", b"C") and int(parts[-1]) + _INPUT_DELAY_MS > now:
                break
            if parts[0] == b"C" and (self.chain_reads < 2 or now - self.chain_at < _CHAIN_HOLD_MS):
                # a level of the input chain stays until the firmware has read it twice, the
                # last at least _CHAIN_HOLD_MS after the first (its glitch filter confirms a level on a later
                # read): a pulse of 40 ms on the table is some 40 reads long on the board, but
                # this process may have been descheduled for longer than that (the test
                # machine's other work)
                break
            self.pending.pop(0)
            self._apply(parts)

    def _apply(self, parts):
        if parts[0] == b"G":
            g, v = int(parts[1]), int(parts[2])
            old = self.levels.get(g, 0)
            self.levels[g] = v
            p = self.pins.get(g)
            if p is not None and p._handler is not None and v != old and \
                    p._trigger & (Pin.IRQ_RISING if v else Pin.IRQ_FALLING):
                p._handler(p)
        elif parts[0] == b"C":
            self.chain_in = int(parts[1], 16)
            self.chain_reads = 0
        elif parts[0] == b"Q":
            self.stop = True


_table = _Table()


class Pin:
    IN = 0
    OUT = 1
    OPEN_DRAIN = 2
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_FALLING = 4
    IRQ_RISING = 8

    def __init__(self, id, mode=-1, pull=-1, value=None):
        self.id = id
        self.mode = mode
        self.pull = pull
        self._handler = None
        self._trigger = 0
        _table.pins[id] = self
        if mode == Pin.IN and pull == Pin.PULL_UP and id not in _table.levels:
            _table.levels[id] = 1
        if value is not None:
            self.value(value)

    def value(self, v=None):
        if v is None:
            return _table.level(self.id)
        _table.drive(self.id, 1 if v else 0)

    def irq(self, handler=None, trigger=IRQ_FALLING | IRQ_RISING, hard=False):
        self._handler = handler
        self._trigger = trigger


class UART:
    """``any()`` is the number of bytes received and not yet read (the RP2040's ring
    buffer, ``rxbuf`` bytes: bytes beyond it are lost, as on the chip)."""

    def __init__(self, id, baudrate=115200, tx=None, rx=None, rxbuf=256, txbuf=256, **kw):
        self.f = _fd_file("FW_UART_FD", "r+b")
        self.poller = select.poll()
        self.poller.register(self.f, select.POLLIN)
        self.rxbuf = rxbuf
        self.rx = b""
        self.overruns = 0

    def any(self):
        _table.service()
        if self.poller.poll(0):
            try:
                data = self.f.read(self.rxbuf)
            except OSError:      # EIO: the host closed its end (a cable unplugged): silence
                data = None
            if data:
                room = self.rxbuf - len(self.rx)
                self.overruns += max(0, len(data) - room)
                self.rx += data[:room]
        return len(self.rx)

    def read(self, n=-1):
        self.any()
        if n < 0:
            n = len(self.rx)
        data, self.rx = self.rx[:n], self.rx[n:]
        return data or None

    def write(self, data):
        view = memoryview(data)
        while len(view):
            try:
                n = self.f.write(view)
            except OSError:      # the host closed its end: the bytes are lost on the line
                return len(data)
            if n:
                view = view[n:]
            else:
                time.sleep_ms(1)     # the pty is full: the host reads it
        return len(data)


class WDT:
    def __init__(self, id=0, timeout=5000):
        self.timeout = timeout
        self.fed = clock.real_ms()

    def feed(self):
        now = clock.real_ms()
        if now - self.fed > self.timeout:
            reset("watchdog: not fed for %d ms" % (now - self.fed))
        self.fed = now


def reset(reason="machine.reset()"):
    _table.send("X " + reason)
    sys.exit(4)


class Clock:
    """``time``'s ticks with the RP2040's period (2^30), from a start offset."""

    def ticks_ms(self):
        _table.service()
        return (_START_MS + (time.time_ns() - _T0_NS) // 1000000) % PERIOD

    def ticks_us(self):
        return (_START_US + (time.time_ns() - _T0_NS) // 1000) % PERIOD

    def ticks_diff(self, a, b):
        return ((a - b + _HALF) % PERIOD) - _HALF

    def ticks_add(self, a, d):
        return (a + d) % PERIOD

    def sleep_ms(self, ms):
        time.sleep_ms(ms)

    def real_ms(self):
        """ms since the test's time zero (FW_T0_NS), to align the engine's clock."""
        return (time.time_ns() - _T0_NS) // 1000000


clock = Clock()
