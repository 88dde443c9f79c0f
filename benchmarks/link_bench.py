"""Benchmark of the Pi <-> microcontroller link (firmware_bridge).

Runs the host side (HostLink) against the device side (DeviceEngine in a DeviceRunner
thread) over a pseudo-terminal pair, at 115200 baud.

Pacing: a pty does not throttle, so both ends write through ``PacedPort``: every slice of
at most 16 bytes is handed to the pty only when a real 115200-baud UART (10 bits per
byte: start, 8 data, stop = 11,520 bytes/s) would have finished sending it, counted from
when the line became free. Nothing arrives earlier than on the real line and neither
direction can exceed 11,520 bytes/s. With ``--noise p`` each byte written in either
direction is, with probability p, corrupted, dropped, or preceded by an inserted random
byte (a third each), before pacing.

Measured:
* commands: ``--commands`` SetGear commands sent one after another (each waits for its
  reply); the device counts executions per command id: ``lost`` = sent but never
  executed, ``duplicated`` = executed more than once. Round trip = submit to reply, ms.
* telemetry: for ``--telemetry-seconds`` the device queues sensor-change events (7-byte
  payload, 17 bytes on the wire including COBS overhead and the delimiter) whenever its
  reliable queue has room; ``telemetry_fps`` = events received by the host per second;
  the line-rate limit is 11,520 / 17 = 677.6 frames/s; ``line_rate_fraction`` =
  fps / limit.

The last line of output is one JSON object with the figures.

Usage: python benchmarks/link_bench.py [--noise 0.01] [--commands 2000]
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
from firmware_bridge.errors import LinkError  # noqa: E402
from firmware_bridge.host import HostLink  # noqa: E402
from firmware_bridge.machine import FakeMachine  # noqa: E402
from firmware_bridge.messages import ClearSafeStop, SensorChanged, SetGear  # noqa: E402
from firmware_bridge.noise import ByteNoise  # noqa: E402
from firmware_bridge.transport import DeviceRunner, PacedPort, pty_pair  # noqa: E402
from firmware_bridge.wire import encoded_size  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--noise", type=float, default=0.0,
                    help="probability per byte of corruption/drop/insertion (default 0)")
    ap.add_argument("--commands", type=int, default=2000, help="commands to send")
    ap.add_argument("--telemetry-seconds", type=float, default=3.0)
    ap.add_argument("--baud", type=int, default=115200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    if not 0.0 <= args.noise <= 0.2:
        ap.error(f"--noise must be within 0..0.2, got {args.noise}")

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

    host_raw, dev_raw = pty_pair(args.baud)
    noise_d = ByteNoise(args.noise, args.seed) if args.noise else None
    noise_h = ByteNoise(args.noise, args.seed + 1) if args.noise else None
    dev_port = PacedPort(dev_raw, args.baud, noise=noise_d)
    host_port = PacedPort(host_raw, args.baud, noise=noise_h)
    engine = DeviceEngine(FakeMachine(), boot_counter=1, now_ms=int(time.monotonic() * 1000),
                          on_execute=on_execute)
    runner = DeviceRunner(engine, dev_port, on_tick=on_tick).start()
    link = HostLink(host_port)
    link.start()
    try:
        info = link.connect(timeout=5.0)
        link.call(ClearSafeStop(), timeout=5.0)
        print(f"connected: firmware {info.firmware_version}, boot {info.boot_counter}; "
              f"noise {args.noise}", flush=True)

        # ---- commands, one at a time
        counting[0] = True
        sent: list[int] = []
        rtts: list[float] = []
        failures = 0
        for i in range(args.commands):
            cmd = SetGear(C.GEARS[i % 4])
            t0 = time.perf_counter()
            try:
                pending = link.submit(cmd)
                sent.append(pending.cmd_id)
                pending.result(timeout=5.0)
                rtts.append((time.perf_counter() - t0) * 1000)
            except LinkError as exc:
                failures += 1
                print(f"command {i}: {exc}", file=sys.stderr)
                if not link.connected:
                    link.connect(timeout=5.0)
                    link.call(ClearSafeStop(), timeout=5.0)
        time.sleep(0.3)
        counting[0] = False
        lost = sum(1 for c in sent if executed.get(c, 0) == 0)
        duplicated = sum(1 for c in sent if executed.get(c, 0) > 1)
        rtts.sort()
        median = statistics.median(rtts) if rtts else float("nan")
        p99 = rtts[min(len(rtts) - 1, int(0.99 * len(rtts)))] if rtts else float("nan")
        floor = (encoded_size(4) * 2) * 10 / args.baud * 1000
        print(f"commands: {len(sent)} sent, {lost} lost, {duplicated} duplicated, "
              f"{failures} errors; rtt median {median:.2f} ms, p99 {p99:.2f} ms "
              f"(line time of command + reply alone: {floor:.2f} ms)", flush=True)

        # ---- telemetry
        received = [0]
        window = [0.0, 0.0]

        def listener(ev: object) -> None:
            if isinstance(ev, SensorChanged):
                t = time.perf_counter()
                if window[0] <= t < window[1]:
                    received[0] += 1

        link.add_listener(listener)
        telemetry_on.set()
        time.sleep(0.3)  # reach steady state before counting
        window[0] = time.perf_counter()
        window[1] = window[0] + args.telemetry_seconds
        time.sleep(args.telemetry_seconds + 0.2)
        telemetry_on.clear()
        fps = received[0] / args.telemetry_seconds
        limit = (args.baud / 10) / encoded_size(7)
        print(f"telemetry: {fps:.1f} frames/s of a line-rate limit of {limit:.1f} "
              f"({encoded_size(7)} bytes per frame, {args.baud // 10} bytes/s)", flush=True)
        st = link.stats()
        print(f"host link: {st}", flush=True)
        if noise_d and noise_h:
            print(f"noise injected: host->device {noise_h.corrupted}/{noise_h.dropped}/"
                  f"{noise_h.inserted}, device->host {noise_d.corrupted}/{noise_d.dropped}/"
                  f"{noise_d.inserted} (corrupted/dropped/inserted bytes)", flush=True)
        result = {
            "noise": args.noise,
            "sent": len(sent),
            "lost": lost,
            "duplicated": duplicated,
            "rtt_ms_median": round(median, 3),
            "rtt_ms_p99": round(p99, 3),
            "telemetry_fps": round(fps, 1),
            "line_rate_fraction": round(fps / limit, 3),
        }
        print(json.dumps(result))
        return 0 if lost == 0 and duplicated == 0 else 1
    except LinkError as exc:
        print(f"link_bench: {exc}", file=sys.stderr)
        return 2
    finally:
        link.close()
        runner.stop()
        dev_port.close()


if __name__ == "__main__":
    sys.exit(main())
