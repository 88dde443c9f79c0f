"""Runs the firmware (firmware/rp2040, built with pinmap.py) on the stand-in machine.

``micropython -X heapsize=160K run_firmware.py`` with the firmware folder and this folder on
the path (hardware/sim/micropython_mcu.py sets that up): the real ``app.App`` and its main loop, on the
stand-in's virtual clock (each ``sleep_ms`` is a lock-step with the machine model). To the
table: once a second (board time) the heap figures, the peak of ``gc.mem_alloc()`` (garbage
included, before the automatic collections) and the live heap after ``gc.collect()``
(``P``); the device engine's state and stop reason whenever they change (``E``); with
FW_COUNT_EXECUTED, every command the engine runs (``K <cmd id> <type>``, benchmarks); while
the table says ``B 1``, sensor events queued whenever the engine has room (benchmarks); with
FW_HEAP_PROFILE, ``H <peak live> <largest pass> <total> <passes> <over>``: the most live
heap seen after a collection, the most one pass allocated, the sum, and the passes that
allocated more than PROFILE_ROOM (bytes; benchmarks/firmware_heap.py).
"""

import gc
import os
import sys

import machine
import pinmap

import app
from firmware_bridge import catalogue as C

os.chdir(os.getenv("FW_FLASH") or ".")     # the flash: bootcount lives here
clock = machine.clock
first = clock.ticks_ms()
a = app.App(machine, pinmap, clock, ms0=clock.since_t0_ms())
table = machine._table
eng = a.engine
peak = 0
live = 0
last = clock.ticks_ms()
said_state = said_reason = -1
if os.getenv("FW_COUNT_EXECUTED"):      # benchmarks: every command the engine runs
    eng.on_execute = lambda cmd_id, mtype: table.send("K %d %d" % (cmd_id, mtype))
toggle = 0
# benchmarks/firmware_heap.py: what a pass allocates is mem_alloc() after it less before it,
# exact when no collection ran in between: the heap is collected before a pass whenever less
# than PROFILE_ROOM is free, so that only a pass allocating more than that could collect
# (then mem_alloc falls: counted in `over`). The live heap is read after those collections.
profile = bool(os.getenv("FW_HEAP_PROFILE"))
PROFILE_ROOM = 48 * 1024
live_peak = pass_max = total = over = 0
while not table.stop:
    if profile:
        if gc.mem_free() < PROFILE_ROOM:
            gc.collect()
            if gc.mem_alloc() > live_peak:
                live_peak = gc.mem_alloc()
        before = gc.mem_alloc()
        a.step()
        d = gc.mem_alloc() - before
        if d < 0:
            over += 1
        else:
            total += d
            if d > pass_max:
                pass_max = d
    else:
        a.step()
    if table.bench:
        # benchmarks (link_bench.py --device micropython): sensor events whenever the engine
        # has room, as link_bench's in-process device (tile present E..N toggling)
        while eng.tx_space() > 0:
            toggle += 1
            eng.sensor_changed(C.SENSOR_TILE_PRESENT, toggle % 4, (toggle // 4) & 1, a.ms)
    used = gc.mem_alloc()
    if used > peak:
        peak = used
    t = clock.ticks_ms()
    if eng.state() != said_state or eng.stop_reason != said_reason:
        said_state, said_reason = eng.state(), eng.stop_reason
        table.send("E %d %d" % (said_state, said_reason))
    if clock.ticks_diff(t, last) >= 1000:
        last = t
        gc.collect()
        live = gc.mem_alloc()
        table.send("P %d %d %d %d" % (peak, live, a.passes, a.boot))
        if profile:
            table.send("H %d %d %d %d %d" % (live_peak, pass_max, total, a.passes, over))
    clock.sleep_ms(1)
a.off()
gc.collect()
table.send("P %d %d %d %d" % (peak, gc.mem_alloc(), a.passes, a.boot))
if profile:
    table.send("H %d %d %d %d %d" % (live_peak, pass_max, total, a.passes, over))
table.send("T %d %d" % (first, clock.ticks_ms()))
table.send("X stopped")
sys.exit(0)
