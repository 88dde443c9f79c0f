"""A stand-in for MicroPython's ``machine`` module, for the unix port: the simulated board
(``--device micropython``; never copied to a Pico: ``make firmware`` builds from firmware/rp2040).

The firmware (firmware/rp2040) runs unchanged on top of it. The board around the RP2040 is
emulated here: the 74HC595 output chain and the 74HC165 input chain (pin numbers from
``pinmap``), driven through ``Pin.value`` exactly as the real chips are; the table beyond
them is the CPython test process (``hardware/sim/micropython_mcu.py``: the simulator's machine model),
reached through two pipes of text lines.

Time is virtual and in lock-step with the machine model: :class:`Clock` keeps the board's
time (``vus``, microseconds since the test's time zero FW_T0_NS) and it advances only in
``sleep_ms``, the end of each pass of the firmware's main loop. There the stand-in asks the
table to run the machine up to the new time (``S <vus>``) and applies every input change
the machine made on the way, each at its own time (an edge interrupt sees ``ticks_us`` of
its edge), before the next pass runs. So the firmware and the machine share one clock (steps that the machine has nothing scheduled
for go without a round trip: see ``_Table.step``): a
MicroPython process that the test machine deschedules stops the table with it, and no
polled pulse is missed or stretched. The virtual clock runs at real time's rate (the host end
of the link and its 500 ms rules are real) but stops while the process does not run: a pass
advances it by 1 ms, or by the real time since the last step when the pass took longer, up
to FW_MAX_STEP_US (so that the shortest polled pulse is still read several times); the
time beyond that is lost, never made up by running faster than real time (which would
stretch every round trip to the host as the board sees it). Nor does it
run more than FW_HOST_SLACK_US (120 ms) past the host's last write to the line (``W``): when
the host process is the one descheduled, the board and the machine wait for it instead of
filling the link's queues (the host writes at least every 100 ms while it runs, lost bytes
on a broken line included; at the end the table lifts the bound, so the firmware's own
host-silence rule still acts).

Pipes:

* to the table: ``V <vus>`` the board's time at boot, ``O <hex> <vus>`` the latched outputs
  of the chain each time they change (0 while /OE is high), ``S <vus>`` a step, ``P <peak> <live> <passes> <boot>`` heap figures,
  ``E <state> <stop reason>`` the device engine's, ``X <reason>`` on a reset (the process
  then exits: the table starts it again, as the RP2040 reboots);
* from the table: ``G <gpio> <level> <vus>`` a GPIO input's level (fires the pin's edge
  interrupt, as a soft IRQ between two passes), ``C <hex> <vus>`` the levels of the input
  chain's inputs, ``A <vus>`` the step is done and the machine has nothing scheduled before
  ``vus`` (steps up to then need no answer), ``R <reason>`` reset now (the table's mcu-reset
  fault), ``U <vus> <hex>`` bytes from the host for the UART, ``W <vus>`` the host wrote to
  the line then (lost or not; -1: no more bound), ``B 0|1`` benchmark load
  off/on (run_firmware.py), ``Q`` stop.

``UART``: the table process stands between it and the pseudo-terminal that the CPython
host backend opens (with the line's noise and breaks between them); it receives the host's
bytes at their times and sends at its baud rate, both on the board's clock. ``WDT`` resets (the process exits) when it is fed later than its
timeout on the virtual clock. ``clock`` stands for the ``time`` module's ticks with the
RP2040's period of 2^30 (the unix port's is 2^62); they restart at FW_TICKS_START_MS /
FW_TICKS_START_US at each boot (just before the wrap, to test it).
Environment: FW_T0_NS, FW_START_VUS (the table's time at this boot), FW_MAX_STEP_US, FW_CHAIN_HOLD_US,
FW_HOST_SLACK_US,
FW_UART_FD, FW_TO_TABLE_FD, FW_FROM_TABLE_FD, FW_TICKS_START_MS, FW_TICKS_START_US, FW_GPIO
(``gpio:level,...`` at power-on), FW_CHAIN (hex).
"""

import os
import select
import sys
import time
from binascii import unhexlify

import pinmap

PERIOD = 1 << 30
_HALF = PERIOD >> 1
_T0_NS = int(os.getenv("FW_T0_NS") or time.time_ns())
_START_MS = int(os.getenv("FW_TICKS_START_MS") or 0)
_START_US = int(os.getenv("FW_TICKS_START_US") or 0)
_MAX_STEP_US = int(os.getenv("FW_MAX_STEP_US") or 1000)
_WAIT_MS = 30000     # no answer to a step for this long (real): the table is gone
#: us that a changed level of the input chain stays after the firmware first read it (the
#: longest glitch filter of a pulse input of the chain, from hardware/sim/micropython_mcu.py)
_CHAIN_HOLD_US = int(os.getenv("FW_CHAIN_HOLD_US") or 1000)
#: us the board's clock may run past the host's last sign of life (``W``)
_HOST_SLACK_US = int(os.getenv("FW_HOST_SLACK_US") or 120000)


def _fd_file(name, mode):
    fd = os.getenv(name)
    return open(int(fd), mode) if fd else None


def _real_us():
    return (time.time_ns() - _T0_NS) // 1000


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
        self.chain_q = []         # levels of the input chain waiting for the one before
        self.unseen = 0           # bits changed and not read (/PL) since
        self.seen_from = [0] * (8 * pinmap.SHIFT_IN[3])   # us of a bit's first read
        self.last_read = 0
        so, si = pinmap.SHIFT_OUT, pinmap.SHIFT_IN
        self.so_data, self.so_clock, self.so_latch, self.so_oe = so[0], so[1], so[2], so[3]
        self.so_mask = (1 << (8 * so[4])) - 1
        self.si_load, self.si_clock, self.si_data = si[0], si[1], si[2]
        self.sr_out = 0
        self.latched = 0
        self.sent = None
        self.sr_in = 0
        self.pins = {}
        self.stop = False
        self.bench = False        # benchmarks: run_firmware.py loads the link (``B 1``)
        self.rx_q = []            # (us, bytes) from the host, delivered to the UART at that time
        self.horizon = 0          # the table's machine has nothing scheduled before this (us)
        self.host_until = None    # the clock waits here for the host (None: no bound)
        self.send("V %d" % clock.boot_vus)

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
            self.last_read = clock.vus
            if self.unseen:
                b, d = 0, self.unseen
                while d:
                    if d & 1:
                        self.seen_from[b] = clock.vus
                    d >>= 1
                    b += 1
                self.unseen = 0
        elif gpio == self.si_clock and rising:
            self.sr_in >>= 1
        if gpio in (self.so_latch, self.so_oe):
            out = 0 if self.levels.get(self.so_oe, 1) else self.latched
            if out != self.sent:
                self.sent = out
                self.send("O %x %d" % (out, clock.vus))
                self.horizon = 0          # the machine may act at once: step with it

    def level(self, gpio):
        if gpio == self.si_data:
            return self.sr_in & 1
        return self.levels.get(gpio, 0)

    def step(self, vus):
        """The machine runs to ``vus``; its input changes are applied at their times.

        A full step asks the table (``S``) and waits for its answer (``A <horizon>``): the
        machine has nothing scheduled before ``horizon``, so later steps up to it only read
        what the table has sent meanwhile (host bytes, a test's changes), without a round
        trip, until the firmware changes an output (the machine may then act at once)."""
        if self.frm is None:       # no table: the board alone
            clock.vus = vus
            return
        while self.host_until is not None and vus > self.host_until and not self.stop:
            # the host has not been heard of for a while: its process is not running (a
            # loaded PC); the board and the machine wait for it
            if not self.poller.poll(_WAIT_MS):
                reset("no sign of the host for %d s" % (_WAIT_MS // 1000))
            data = self.frm.read(256)
            if not data:
                self.stop = True
                return
            self.buf += data
            self._lines(clock.vus)
        for u in _uarts:
            u._drain(vus)
        if vus <= self.horizon:
            while self.poller.poll(0) and not self.stop:
                data = self.frm.read(256)
                if not data:
                    self.stop = True
                    return
                self.buf += data
                self._lines(vus)
        else:
            self.send("S %d" % vus)
            self.horizon = 0
            while not self.horizon and not self.stop:
                if not self.poller.poll(_WAIT_MS):
                    reset("the table did not answer a step for %d s" % (_WAIT_MS // 1000))
                # small reads: the stand-in's own allocations come out of the firmware's heap
                data = self.frm.read(256)
                if not data:           # the table has gone: stop
                    self.stop = True
                    return
                self.buf += data
                self._lines(vus)
        clock.vus = vus
        self._chain()
        q = self.rx_q
        while q and q[0][0] <= vus:
            data = q.pop(0)[1]
            for u in _uarts:
                u._received(data)

    def _lines(self, vus):
        """Apply the table's complete lines in ``buf`` (a step to ``vus`` is under way)."""
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            parts = line.split()
            if not parts:
                continue
            op = parts[0]
            if op == b"A":
                self.horizon = int(parts[1])
            elif op == b"G" or op == b"C":
                t = int(parts[-1])
                if t > clock.vus:
                    clock.vus = t if t < vus else vus
                if op == b"G":
                    self._edge(int(parts[1]), int(parts[2]))
                else:
                    self.chain_q.append(int(parts[1], 16))
                    self._chain()
            elif op == b"W":
                t = int(parts[1])
                self.host_until = None if t < 0 else t + _HOST_SLACK_US
            elif op == b"U":
                self.rx_q.append((int(parts[1]), unhexlify(parts[2])))
            elif op == b"B":
                self.bench = parts[1] == b"1"
            elif op == b"R":
                reset(line[2:].decode())
            elif op == b"Q":
                self.stop = True

    def _chain(self):
        """Apply the waiting levels of the input chain, in order, each once every bit it
        changes has been read for _CHAIN_HOLD_US since it last changed. The machine model
        makes some changes no polled input can see (a tile leaves the tile-present sensor
        and the next arrives at the same instant: a gap of zero length; a real sensor sees a
        tile's length of gap); held this way they reach the firmware in order, at most a
        couple of passes late, instead of being lost between two reads."""
        q = self.chain_q
        while q:
            diff = q[0] ^ self.chain_in
            b, d = 0, diff
            while d:
                if d & 1 and ((self.unseen >> b) & 1
                              or self.last_read - self.seen_from[b] < _CHAIN_HOLD_US):
                    return
                d >>= 1
                b += 1
            self.chain_in = q.pop(0)
            self.unseen |= diff

    def _edge(self, g, v):
        old = self.levels.get(g, 0)
        self.levels[g] = v
        p = self.pins.get(g)
        if p is not None and p._handler is not None and v != old and \
                p._trigger & (Pin.IRQ_RISING if v else Pin.IRQ_FALLING):
            p._handler(p)


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
    """The board's UART. Received bytes come from the table process (``U <us> <hex>``: what
    the host wrote, through the line's noise, at the real time it arrived) and reach the
    ring buffer when the board's clock passes that time, so that a firmware that ran late
    sees the host's frames as far apart as they were sent. ``any()`` is the number of bytes
    received and not yet read (the RP2040's ring, ``rxbuf`` bytes: bytes beyond it are lost,
    as on the chip). ``write`` queues into the ``txbuf`` ring and the bytes leave at
    ``baudrate`` (10 bits a byte) on the board's clock, each step, on the socket FW_UART_FD
    (the table process puts the line between it and the host); a write that does not fit
    waits for room, as on the chip (the clock runs on while it waits)."""

    def __init__(self, id, baudrate=115200, tx=None, rx=None, rxbuf=256, txbuf=256, **kw):
        self.f = _fd_file("FW_UART_FD", "r+b")
        self.rxbuf = rxbuf
        self.rx = b""
        self.overruns = 0
        self.txbuf = txbuf
        self.tx = bytearray()
        self.byte_ns = 10 * 1000000000 // baudrate
        self.tx_ns = 0               # when the line finished its last byte (board ns)
        _uarts.append(self)

    def _received(self, data):
        room = self.rxbuf - len(self.rx)
        if len(data) > room:
            self.overruns += len(data) - room
            data = data[:room]
        self.rx += data

    def any(self):
        return len(self.rx)

    def read(self, n=-1):
        if n < 0:
            n = len(self.rx)
        data, self.rx = self.rx[:n], self.rx[n:]
        return data or None

    def write(self, data):
        while len(self.tx) + len(data) > self.txbuf and len(self.tx):
            clock.sleep_ms(1)        # the ring is full: the write waits for the line
        if not self.tx:
            now = clock.vus * 1000
            if self.tx_ns < now:
                self.tx_ns = now
        self.tx.extend(data)
        return len(data)

    def _drain(self, vus):
        """Put on the line the bytes it has finished sending by ``vus``."""
        q = self.tx
        if not q:
            return
        n = (vus * 1000 - self.tx_ns) // self.byte_ns
        if n <= 0:
            return
        if n > len(q):
            n = len(q)
        try:
            self.f.write(memoryview(q)[:n])
        except OSError:      # the table's end is gone: the bytes are lost on the line
            pass
        self.tx_ns += n * self.byte_ns
        q[:n] = b""


_uarts = []


class WDT:
    def __init__(self, id=0, timeout=5000):
        self.timeout = timeout
        self.fed = clock.since_t0_ms()

    def feed(self):
        now = clock.since_t0_ms()
        if now - self.fed > self.timeout:
            reset("watchdog: not fed for %d ms" % (now - self.fed))
        self.fed = now


def reset(reason="machine.reset()"):
    """The RP2040 resets: its GPIOs float (the /OE pull-up turns every output off), the
    table is told why and the process exits (the table boots the firmware again)."""
    _table.send("O 0")
    _table.send("X " + reason)
    sys.exit(4)


class Clock:
    """``time``'s ticks with the RP2040's period (2^30) on the virtual clock ``vus``."""

    def __init__(self):
        start = int(os.getenv("FW_START_VUS") or 0)
        now = _real_us()
        # power-on: real time; a reboot goes on from the table's time (the time the PC took
        # to start the process again is not the board's)
        self.vus = start if start else now
        self.boot_vus = self.vus
        self.step_real = now      # real us (since FW_T0_NS) of the last step

    def ticks_ms(self):
        return (_START_MS + (self.vus - self.boot_vus) // 1000) % PERIOD

    def ticks_us(self):
        return (_START_US + self.vus - self.boot_vus) % PERIOD

    def ticks_diff(self, a, b):
        return ((a - b + _HALF) % PERIOD) - _HALF

    def ticks_add(self, a, d):
        return (a + d) % PERIOD

    def sleep_ms(self, ms):
        """Advance the board's time by ``ms``, or by the real time since the last step when
        that is longer, up to FW_MAX_STEP_US: never faster than real time, and a process
        that was not running loses that time (the clock stops while it does not run).
        Waits for real time when early, then steps the machine."""
        vus = self.vus + ms * 1000
        late = _real_us() - self.step_real - ms * 1000
        if late > 0:
            extra = _MAX_STEP_US - ms * 1000
            if extra > 0:
                vus += late if late < extra else extra
        elif late < 0:
            time.sleep_us(-late)
        self.step_real = _real_us()
        _table.step(vus)

    def since_t0_ms(self):
        """ms since the test's time zero (FW_T0_NS) on the virtual clock: the engine's."""
        return self.vus // 1000


clock = Clock()
_table = _Table()
