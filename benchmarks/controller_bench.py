"""Controller speed and fault-detection latency.

1. Simulated cycles per second: full clean cycles (home, shuffle, build 136 tiles, lift, dice) run
   by the controller on the simulator and through the GPIO backend on mock pins, next to the rate
   of the real machine (one cycle in the machine time a cycle takes, about 30 s).
2. Fault detection latency: a lift that never reaches the top (fault lift-short). The latency is
   the time from the motion's deadline to the moment its motor is switched off:
   * in virtual time on the simulator and on GPIO mock pins (the deadline check ticks every
     5 ms of machine time);
   * in wall-clock time through the MCU backend at real speed (speed 1): the microcontroller's
     device engine over a pseudo-terminal checks its deadlines every 2 ms.
3. Stall-to-stop: a feeder motor that runs without motion (fault feeder-wire-loose: no motion
   pulse) and one whose wheel is jammed (feeder-jammed: the motor turns, no tile comes). The time
   from the FeedStacks command to the moment its motor is switched off, next to the feed deadline
   it would otherwise run to (the device engine's stall rule, firmware_bridge/motion.py); virtual
   time on sim and gpio, machine time through the MCU backend at speed 1.
4. Stall-to-diagnosis: the machine time from a motion's command to the controller's diagnosis
   when its motor runs without motion (a feeder's loose wire, a push head stuck out, a jammed
   wheel, the disc, the dice): the controller judges a motion the device stopped as stalled at
   once, not when the other feeders finish (issue #16 section 3).

Usage: python benchmarks/controller_bench.py [--cycles N]   (last line: one JSON object)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import hardware  # noqa: E402
from firmware_bridge import catalogue as CAT  # noqa: E402
from hardware.vocabulary import ClearSafeStop, FeedStacks, Lift, MotionDone, Side, StartShuffle, StopAll  # noqa: E402

from controller import cycle as CY  # noqa: E402
from controller.runtime import TableRuntime  # noqa: E402


def cycles_per_second(kind: str, n: int) -> tuple[float, float]:
    """(cycles per wall second, machine seconds per cycle) over n seeds."""
    machine = 0.0
    t0 = time.perf_counter()
    for seed in range(n):
        b = hardware.open_backend(kind, seed=seed)
        rt = TableRuntime(b, CY.Settings.from_profile(b.profile, 136), dice=lambda: (3, 4, 2, 5))
        t = rt.run_cycle()
        assert t.phase is CY.Phase.WALLS_UP, t.fault
        machine += b.now()
        b.close()
    wall = time.perf_counter() - t0
    return n / wall, machine / n


def _watch_motor(model, which: int, side: int, log: list) -> None:
    """Append ``(machine s, wall s, how)`` to ``log`` whenever motor ``(which, side)`` is switched off
    (``how``: "stop", that motor alone, or "stop_all", every motor: a safety stop or a StopAll)."""
    original = model.set_motor

    def set_motor(motor, s, on, direction=1):
        if motor == which and s == side and not on and model.motors.get((motor, s)) is not None:
            log.append((model.now, time.perf_counter(), "stop"))
        return original(motor, s, on, direction)
    model.set_motor = set_motor
    original_all = model.stop_all

    def stop_all():
        if model.motors.get((which, side)) is not None:
            log.append((model.now, time.perf_counter(), "stop_all"))
        return original_all()
    model.stop_all = stop_all


def latency(kind: str, speed: float = 1.0) -> dict:
    """Deadline-to-motor-stop latency for lift-short on side W (virtual ms, and wall ms for mcu)."""
    b = hardware.open_backend(kind, seed=1, faults=["lift-short:W"], speed=speed)
    try:
        log: list = []
        _watch_motor(b.model, CAT.MOTOR_LIFT, 2, log)
        b.submit(ClearSafeStop())
        b.advance(0.1)
        deadline_ms = b.profile.lift_deadline_ms()
        t_sent = b.model.now
        wall_sent = time.perf_counter()
        b.submit(Lift(Side.W, True, deadline_ms))
        b.run_until(lambda e: isinstance(e, MotionDone) and e.side == Side.W, timeout=deadline_ms / 1000 + 5)
        stop_virtual, stop_wall, how = log[0]
        out = {"virtual_ms": round(1000 * (stop_virtual - t_sent) - deadline_ms, 1)}
        if how != "stop":  # not the deadline rule: a safety stop (the host heartbeat missed under load)
            out["stopped_by"] = how
        if kind == "mcu":
            out["wall_ms"] = round(1000 * (stop_wall - wall_sent) - deadline_ms / speed, 1)
        return out
    finally:
        b.close()


def stall_to_stop(kind: str, fault: str) -> dict:
    """Seconds of machine time from FeedStacks(W, 17) to feeder W's motor off under ``fault`` (side W),
    and the feed deadline it would run to otherwise."""
    b = hardware.open_backend(kind, seed=1, faults=[f"{fault}:W"], speed=1.0)
    try:
        log: list = []
        _watch_motor(b.model, CAT.MOTOR_FEEDER, 2, log)
        b.submit(ClearSafeStop())
        b.advance(0.1)
        b.submit(StartShuffle(b.profile.shuffle_deadline_ms()))  # the disc turns: tiles could come
        b.advance(1.0)
        deadline_ms = b.profile.feed_deadline_ms(17)
        t_sent = b.model.now
        b.submit(FeedStacks(Side.W, 17, deadline_ms))
        b.run_until(lambda e: isinstance(e, MotionDone) and e.side == Side.W and e.command == "FeedStacks",
                    timeout=deadline_ms / 1000 + 5)
        b.submit(StopAll())
        b.advance(0.1)
        out = {"stop_s": round(log[0][0] - t_sent, 2), "deadline_s": round(deadline_ms / 1000, 1)}
        if log[0][2] != "stop":  # not the stall or deadline rule: a safety stop (heartbeat missed under load)
            out["stopped_by"] = log[0][2]
        return out
    finally:
        b.close()


def stall_to_diagnosis(fault: str, phase: str) -> float:
    """Machine seconds from entering ``phase`` (its motion commanded) to the controller's diagnosis of
    ``fault`` (a fault latched, or the dice warning), one cycle on the simulator."""
    from controller import cycle as CY
    from controller.runtime import TableRuntime
    b = hardware.open_backend("sim", seed=1, faults=[fault])
    try:
        entered: dict[str, float] = {}
        rt = TableRuntime(b, CY.Settings.from_profile(b.profile, 136), dice=lambda: (3, 4, 2, 5),
                          progress=lambda t: entered.setdefault(t.phase.value, b.now()))
        t = rt.run_cycle()
        assert t.diagnoses or t.warnings, f"{fault}: nothing diagnosed"
        return round(b.now() - entered[phase], 2)
    finally:
        b.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=200, help="cycles per backend for the rate (default 200)")
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {0})
    sim_rate, machine_s = cycles_per_second("sim", args.cycles)
    gpio_rate, _ = cycles_per_second("gpio", max(1, args.cycles // 4))
    real_rate = 1.0 / machine_s
    print(f"simulated cycles per second: sim {sim_rate:.1f}, gpio on mock pins {gpio_rate:.1f}; "
          f"the real machine: {real_rate:.3f} (one cycle in {machine_s:.1f} s of machine time)")
    print(f"speed-up over real time: sim x{sim_rate / real_rate:.0f}, gpio x{gpio_rate / real_rate:.0f}")
    lat = {k: latency(k) for k in ("sim", "gpio")}
    lat["mcu"] = latency("mcu", speed=1.0)
    print(f"fault detection (lift-short W): motor off after the deadline: sim {lat['sim']['virtual_ms']} ms, "
          f"gpio {lat['gpio']['virtual_ms']} ms (virtual); mcu {lat['mcu']['virtual_ms']} ms machine time, "
          f"{lat['mcu']['wall_ms']} ms wall clock")
    stall = {f: {k: stall_to_stop(k, f) for k in ("sim", "gpio", "mcu")}
             for f in ("feeder-wire-loose", "feeder-jammed")}
    for f, by in stall.items():
        print(f"stall-to-stop ({f} W): feeder motor off {by['sim']['stop_s']} s after FeedStacks on sim, "
              f"{by['gpio']['stop_s']} s on gpio, {by['mcu']['stop_s']} s on mcu (machine time); "
              f"its feed deadline: {by['sim']['deadline_s']} s")
    reported = {f: stall_to_diagnosis(f, ph) for f, ph in (
        ("feeder-wire-loose:W", "building"), ("push-head-jammed:W", "building"), ("feeder-jammed:W", "building"),
        ("disc-stall", "shuffling"), ("dice-stuck", "dice"))}
    print("stall-to-diagnosis (sim, machine time from the motion's command to the controller's diagnosis): "
          + ", ".join(f"{f} {v} s" for f, v in reported.items()))
    print(json.dumps({"cycles_per_s": {"sim": round(sim_rate, 1), "gpio": round(gpio_rate, 1),
                                       "real_machine": round(real_rate, 4)},
                      "machine_s_per_cycle": round(machine_s, 2), "latency_ms": lat, "stall_to_stop_s": stall,
                      "stall_to_diagnosis_s": reported}))


if __name__ == "__main__":
    main()
