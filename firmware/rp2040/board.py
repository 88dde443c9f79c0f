"""The table's wiring as the RP2040 sees it: the output chain, the input chain and the
inputs with their own GPIO (MicroPython; the pin map is ``pinmap.py``, generated from the
machine profile's ``[mcu]`` section by ``make firmware``).

* :class:`ShiftOut`: a chain of 74HC595 (SER, SRCLK, RCLK, /OE). Every motor driver input
  and indicator is one bit. /OE has a pull-up on the board, so the outputs stay off from
  power-on until :meth:`ShiftOut.enable` (called once the chain holds all zeros) and again
  from the moment the RP2040 resets (its GPIOs float: the pull-up wins).
* :class:`ShiftIn`: a chain of 74HC165 (/PL, CLK, QH), read every pass of the main loop.
* :class:`Outputs`: the :class:`firmware_bridge.machine.Machine` of the firmware.
* :class:`Inputs`: edge interrupts on the GPIO inputs (a ring buffer of
  ``(input, level, ticks_us)`` filled by the interrupt handler, without allocating), the
  chain inputs polled, a glitch filter per input, changes reported to the device engine
  with the time of the edge. Every time difference goes through ``ticks_diff``.

No allocation on the interrupt path; integer arithmetic only.
"""

from firmware_bridge import catalogue as C

_PULLS = {"up": "PULL_UP", "down": "PULL_DOWN"}
RING = 64          # edges held between two passes of the main loop (a pass is about 1 ms)


class ShiftOut:
    """``chips`` 74HC595 in a chain; bit 0 is QA of the chip wired to the RP2040."""

    def __init__(self, machine, data, clock, latch, enable, chips, active_high=True):
        Pin = machine.Pin
        # /OE first, high (outputs off) whatever the board's pull-up does
        self.oe = Pin(enable, Pin.OUT, value=1)
        self.data = Pin(data, Pin.OUT, value=0)
        self.clock = Pin(clock, Pin.OUT, value=0)
        self.latch = Pin(latch, Pin.OUT, value=0)
        self.nbits = 8 * chips
        self.invert = 0 if active_high else (1 << self.nbits) - 1
        self.state = 0
        self.written = -1

    def set(self, bit, on):
        if bit is None:
            return
        if on:
            self.state |= 1 << bit
        else:
            self.state &= ~(1 << bit)

    def write(self):
        """Shift the state out and latch it (the last bit shifted lands in bit 0)."""
        if self.state == self.written:
            return
        v = self.state ^ self.invert
        data, clock = self.data, self.clock
        for i in range(self.nbits - 1, -1, -1):
            data.value((v >> i) & 1)
            clock.value(1)
            clock.value(0)
        self.latch.value(1)
        self.latch.value(0)
        self.written = self.state

    def enable(self, on=True):
        """Drive /OE: low lets the latched outputs through, high turns every one off."""
        self.oe.value(0 if on else 1)

    def all_off(self):
        """Every output off now: the chain cleared, whatever was written before."""
        self.state = 0
        self.written = -1
        self.write()


class ShiftIn:
    """``chips`` 74HC165 in a chain; bit 0 is the first bit read (input H of the chip
    whose QH goes to the RP2040), then G..A, then the next chip."""

    def __init__(self, machine, load, clock, data, chips):
        Pin = machine.Pin
        self.load = Pin(load, Pin.OUT, value=1)
        self.clock = Pin(clock, Pin.OUT, value=0)
        self.data = Pin(data, Pin.IN)
        self.nbits = 8 * chips

    def read(self):
        self.load.value(0)   # /PL low: the inputs are copied into the register
        self.load.value(1)
        v = 0
        data, clock = self.data, self.clock
        for i in range(self.nbits):
            v |= data.value() << i
            clock.value(1)
            clock.value(0)
        return v


class Outputs:
    """The firmware's Machine: motors and indicators as bits of the output chain."""

    def __init__(self, chain, pinmap):
        self.chain = chain
        self.pm = pinmap
        motor_bits = list(pinmap.FEEDER + pinmap.LIFT_UP + pinmap.LIFT_DOWN)
        for b in (pinmap.SHUFFLE, pinmap.DICE, pinmap.CENTRE_UP, pinmap.CENTRE_DOWN,
                  pinmap.BUZZER):
            if b is not None:
                motor_bits.append(b)
        mask = 0
        for b in motor_bits:
            mask |= 1 << b
        self.motor_mask = mask
        self.gear = pinmap.GEAR

    def _bits(self, motor, side, direction):
        """(bit to switch on, bit to keep off) of a motor; None where there is none."""
        pm = self.pm
        if motor == C.MOTOR_LIFT:
            up, down = pm.LIFT_UP[side], pm.LIFT_DOWN[side]
            return (up, down) if direction else (down, up)
        if motor == C.MOTOR_CENTRE:
            return ((pm.CENTRE_UP, pm.CENTRE_DOWN) if direction
                    else (pm.CENTRE_DOWN, pm.CENTRE_UP))
        if motor == C.MOTOR_FEEDER:
            return pm.FEEDER[side], None
        if motor == C.MOTOR_SHUFFLE:
            return pm.SHUFFLE, None
        if motor == C.MOTOR_DICE:
            return pm.DICE, None
        if motor == C.MOTOR_BUZZER:
            return pm.BUZZER, None
        return None, None

    def start(self, motor, side, direction):
        on, off = self._bits(motor, side, direction)
        self.chain.set(off, False)   # the other relay of a lift opens first
        self.chain.set(on, True)
        self.chain.write()

    def stop(self, motor, side):
        on, off = self._bits(motor, side, 1)
        self.chain.set(on, False)
        self.chain.set(off, False)
        self.chain.write()

    def stop_all(self):
        self.chain.state &= ~self.motor_mask
        self.chain.written = -1      # write even if the state seems unchanged
        self.chain.write()

    def set_gear(self, tiles):
        # the gear is a switch on the table's panel (set with the power off): nothing to drive
        self.gear = tiles

    def set_lights(self, mask):
        for bit, light in self.pm.LIGHTS:
            self.chain.set(bit, mask & light)
        self.chain.write()

    def heartbeat(self, on):
        """The motor-power watchdog's input (a bit of the chain), toggled by the main loop."""
        if self.pm.HEARTBEAT is not None:
            self.chain.set(self.pm.HEARTBEAT, on)
            self.chain.write()


class Inputs:
    """Every input of the pin map, reported to ``engine.sensor_changed`` as it changes."""

    def __init__(self, machine, pinmap, chain, clock):
        Pin = machine.Pin
        self.clock = clock
        self.chain = chain
        n = len(pinmap.INPUTS)
        self.sensor = bytearray(n)
        self.side = bytearray(n)
        self.active = bytearray(n)
        self.bounce_us = [0] * n
        self.raw = bytearray(n)          # the last electrical level seen
        self.raw_us = [0] * n            # ticks_us of that edge
        self.value = bytearray(n)        # the last value reported (0/1)
        self.pins = [None] * n
        self.chain_bits = []             # (input index, chain bit)
        # the interrupt ring: written by the handler, read by poll()
        self.ring_i = bytearray(RING)
        self.ring_v = bytearray(RING)
        self.ring_t = [0] * RING          # a list of small ints: stored without allocating
        self.head = 0
        self.tail = 0
        self.overruns = 0
        for i, (sensor, side, gpio, bit, active_high, pull, bounce_ms) in enumerate(pinmap.INPUTS):
            self.sensor[i] = sensor
            self.side[i] = side
            self.active[i] = 1 if active_high else 0
            self.bounce_us[i] = bounce_ms * 1000
            if gpio is not None:
                p = Pin(gpio, Pin.IN, getattr(Pin, _PULLS[pull]) if pull in _PULLS else None)
                self.pins[i] = p
            else:
                self.chain_bits.append((i, bit))
        now = clock.ticks_us()
        levels = chain.read() if self.chain_bits else 0
        for i in range(n):
            p = self.pins[i]
            self.raw[i] = p.value() if p is not None else 0
            self.raw_us[i] = now
        for i, bit in self.chain_bits:
            self.raw[i] = (levels >> bit) & 1
        for i in range(n):
            self.value[i] = 1 if self.raw[i] == self.active[i] else 0
        for i in range(n):
            p = self.pins[i]
            if p is not None:
                p.irq(handler=self._handler(i), trigger=Pin.IRQ_RISING | Pin.IRQ_FALLING)

    def _handler(self, i):
        ticks_us = self.clock.ticks_us

        def edge(pin):
            h = self.head
            nxt = (h + 1) % RING
            if nxt == self.tail:
                self.overruns += 1   # the main loop fell behind: poll() reads the level
                return
            self.ring_i[h] = i
            self.ring_v[h] = pin.value()
            self.ring_t[h] = ticks_us()
            self.head = nxt
        return edge

    def initial(self):
        """``(sensor, side, value)`` of every input that reads on at boot."""
        return [(self.sensor[i], self.side[i], 1) for i in range(len(self.value))
                if self.value[i]]

    def poll(self, engine, now_ms, now_us):
        """Report the changes since the last call (edges in order, then the chain)."""
        diff = self.clock.ticks_diff
        while self.tail != self.head:
            t = self.tail
            self._level(engine, self.ring_i[t], self.ring_v[t], self.ring_t[t], now_ms, now_us)
            self.tail = (t + 1) % RING
        if self.overruns:
            # edges were lost: read the GPIO inputs' levels as they are now
            self.overruns = 0
            for i in range(len(self.pins)):
                p = self.pins[i]
                if p is not None:
                    self._level(engine, i, p.value(), now_us, now_ms, now_us)
        if self.chain_bits:
            levels = self.chain.read()
            for i, bit in self.chain_bits:
                v = (levels >> bit) & 1
                if v != self.raw[i]:
                    self._level(engine, i, v, now_us, now_ms, now_us)
        # glitch filters: a change is reported once it has held bounce_ms, with its edge time
        for i in range(len(self.value)):
            b = self.bounce_us[i]
            if b and (1 if self.raw[i] == self.active[i] else 0) != self.value[i] \
                    and diff(now_us, self.raw_us[i]) >= b:
                self._report(engine, i, self.raw_us[i], now_ms, now_us)

    def _level(self, engine, i, level, t_us, now_ms, now_us):
        self.raw[i] = level
        self.raw_us[i] = t_us
        if not self.bounce_us[i] and (1 if level == self.active[i] else 0) != self.value[i]:
            self._report(engine, i, t_us, now_ms, now_us)

    def _report(self, engine, i, t_us, now_ms, now_us):
        self.value[i] ^= 1
        ago = self.clock.ticks_diff(now_us, t_us) // 1000
        engine.sensor_changed(self.sensor[i], self.side[i], self.value[i],
                              now_ms - (ago if ago > 0 else 0))
