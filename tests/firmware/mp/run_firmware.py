"""Runs the firmware (firmware/rp2040, built with pinmap.py) on the stand-in machine.

``micropython -X heapsize=160K run_firmware.py`` with the firmware folder and this folder on
the path (firmware/sim.py sets that up): the real ``app.App`` and its main loop; once a
second the heap figures go to the table: the peak of ``gc.mem_alloc()`` (garbage included,
before the automatic collections) and the live heap after ``gc.collect()``.
"""

import gc
import os
import sys

import machine
import pinmap

import app

os.chdir(os.getenv("FW_FLASH") or ".")     # the flash: bootcount lives here
clock = machine.clock
first = clock.ticks_ms()
a = app.App(machine, pinmap, clock, ms0=clock.real_ms())
table = machine._table
peak = 0
live = 0
last = clock.ticks_ms()
while not table.stop:
    a.step()
    used = gc.mem_alloc()
    if used > peak:
        peak = used
    t = clock.ticks_ms()
    if clock.ticks_diff(t, last) >= 1000:
        last = t
        gc.collect()
        live = gc.mem_alloc()
        table.send("P %d %d %d %d" % (peak, live, a.passes, a.boot))
    clock.sleep_ms(1)
a.off()
gc.collect()
table.send("P %d %d %d %d" % (peak, gc.mem_alloc(), a.passes, a.boot))
table.send("T %d %d" % (first, clock.ticks_ms()))
table.send("X stopped")
sys.exit(0)
