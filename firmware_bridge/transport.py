"""Serial transports: pyserial ports and URLs, a pseudo-terminal pair for tests, line
pacing and noise wrappers, and a thread that runs the device engine on a port.

Reading is always ``read(in_waiting or 1)`` with a short port timeout, never
``readline()`` (which does not return while bytes keep trickling in).
"""

from __future__ import annotations

import collections
import fcntl
import os
import select
import termios
import threading
import time
import tty
from typing import Any, Callable

from .errors import TransportError
from .noise import ByteNoise


def open_port(url: str, baudrate: int = 115200, timeout: float = 0.002) -> Any:
    """Open a serial device or pyserial URL.

    Args:
        url: ``/dev/serial0``, ``/dev/ttyAMA0``, ``/dev/ttyACM0``, ``/dev/serial/by-id/...``,
            or a pyserial URL such as ``loop://`` or ``socket://host:port``.
        baudrate: bits per second (115200 by default); timeout: read timeout (s).
    Returns: a ``serial.Serial``-like object.
    Raises: TransportError naming the port and the cause.
    """
    import serial

    try:
        return serial.serial_for_url(url, baudrate=baudrate, timeout=timeout,
                                     write_timeout=2.0)
    except (serial.SerialException, ValueError, OSError) as exc:
        raise TransportError(f"cannot open serial port {url!r} at {baudrate} baud: {exc}") \
            from None


class FdPort:
    """Minimal pyserial-like port over a file descriptor (the master end of a pty).

    Provides ``read(n)`` (waits up to ``timeout`` s for the first byte), ``write``,
    ``in_waiting`` and ``close``.
    """

    def __init__(self, fd: int, timeout: float = 0.002) -> None:
        self.fd = fd
        self.timeout = timeout
        self._closed = False

    @property
    def in_waiting(self) -> int:
        buf = fcntl.ioctl(self.fd, termios.FIONREAD, b"\0\0\0\0")
        return int.from_bytes(buf, "little")

    def read(self, n: int = 1) -> bytes:
        r, _, _ = select.select([self.fd], [], [], self.timeout)
        if not r:
            return b""
        try:
            return os.read(self.fd, max(1, n))
        except OSError as exc:  # EIO when the other end is closed
            raise TransportError(f"pty read failed: {exc}") from None

    def write(self, data: bytes) -> int:
        view = memoryview(data)
        while view:
            _, w, _ = select.select([], [self.fd], [], 1.0)
            if not w:
                raise TransportError("pty write timed out (the other end does not read)")
            n = os.write(self.fd, view)
            view = view[n:]
        return len(data)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self.fd)


def pty_pair(baudrate: int = 115200, timeout: float = 0.002) -> tuple[Any, FdPort]:
    """A pseudo-terminal pair: ``(host_port, device_port)``.

    The host end is the pty's slave opened by pyserial (the same code path as a real
    ``/dev/ttyAMA0``, raw mode set by pyserial); the device end is the master fd. A pty
    does not throttle to ``baudrate``: wrap the ports in :class:`PacedPort` to get a real
    line rate.
    """
    import serial

    master, slave = os.openpty()
    tty.setraw(master)
    name = os.ttyname(slave)
    host = serial.Serial(name, baudrate=baudrate, timeout=timeout)
    os.close(slave)
    return host, FdPort(master, timeout)


class PacedPort:
    """Write-side pacing to an honest line rate, for ports that do not throttle (pty,
    ``loop://``, ``socket://``).

    The line has its own clock, as a UART has: a write is timed when it is made, each
    byte leaving 10 bits / ``baudrate`` after the previous one (start, 8 data, stop) or
    at once if the line is idle, whether or not the process that wrote it runs then (a
    kernel tty buffer or a UART's interrupt-driven ring keeps sending while the writer
    is descheduled). A pacing thread hands each slice of at most ``slice_bytes`` to the
    underlying port no earlier than the moment the slice's last bit has left the line.
    Bytes therefore never arrive earlier than on the real line, and over any stretch of
    line time no more than ``baudrate / 10`` bytes per second pass; a late pacing thread
    delivers late (pessimistic for latency) but does not idle the line.
    ``out_waiting`` gives the bytes written whose last bit has not left the line yet (a
    UART's TX FIFO fill).
    """

    def __init__(self, port: Any, baudrate: int = 115200, slice_bytes: int = 16,
                 noise: ByteNoise | None = None) -> None:
        self.port = port
        self.byte_time = 10.0 / baudrate
        self.slice_bytes = slice_bytes
        self.noise = noise
        self._q: collections.deque[tuple[float, bytes]] = collections.deque()
        self._line_free = 0.0     # perf_counter time when the line has sent all written
        self._cv = threading.Condition()
        self._stop = False
        self.bytes_written = 0
        self._thread = threading.Thread(target=self._run, name="paced-port", daemon=True)
        self._thread.start()

    # pass-through of the reading side
    @property
    def in_waiting(self) -> int:
        return self.port.in_waiting

    @property
    def timeout(self) -> float:
        return self.port.timeout

    @timeout.setter
    def timeout(self, value: float) -> None:
        self.port.timeout = value

    def read(self, n: int = 1) -> bytes:
        return self.port.read(n)

    @property
    def out_waiting(self) -> int:
        return max(0, int((self._line_free - time.perf_counter()) / self.byte_time + 0.999))

    def write(self, data: bytes) -> int:
        if self.noise is not None:
            data = self.noise.apply(data)
        with self._cv:
            due = max(self._line_free, time.perf_counter())
            for i in range(0, len(data), self.slice_bytes):
                piece = data[i:i + self.slice_bytes]
                due += len(piece) * self.byte_time
                self._q.append((due, piece))
            self._line_free = due
            self._cv.notify()
        return len(data)

    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._q and not self._stop:
                    self._cv.wait()
                if self._stop:
                    return
                due, piece = self._q.popleft()
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            try:
                self.port.write(piece)
            except Exception:
                return
            self.bytes_written += len(piece)

    def close(self) -> None:
        with self._cv:
            self._stop = True
            self._cv.notify()
        self._thread.join(timeout=1)
        self.port.close()


class DeviceRunner:
    """Runs a :class:`~firmware_bridge.device.DeviceEngine` on a port in a thread: the
    device end of a pty in tests and benchmarks, and the simulator's microcontroller.

    The loop is the firmware's: ``read(in_waiting or 1)`` -> ``feed`` -> ``tick`` ->
    ``poll`` -> ``write``. When the port has ``out_waiting`` (a :class:`PacedPort`), at
    most ``fifo_frames`` reliable frames are taken from the engine while the queue is
    below ``fifo_bytes``, as a UART with a small TX FIFO would.

    Args:
        engine: the device engine; port: pyserial-like port;
        clock: seconds (monotonic); ms = int(clock() * 1000) is given to the engine;
        on_tick: optional ``fn(engine, now_ms)`` called every loop (e.g. to inject
            sensor changes), under the runner's lock.
    """

    def __init__(self, engine: Any, port: Any, clock: Callable[[], float] = time.monotonic,
                 tick_interval: float = 0.001, on_tick: Callable[[Any, int], None] | None = None,
                 fifo_bytes: int = 64, fifo_frames: int = 2) -> None:
        self.engine = engine
        self.port = port
        self.clock = clock
        self.on_tick = on_tick
        self.fifo_bytes = fifo_bytes
        self.fifo_frames = fifo_frames
        self.lock = threading.Lock()
        self.error: BaseException | None = None
        self.read_errors = 0
        self.tick_interval = tick_interval
        self._stop = threading.Event()
        try:
            port.timeout = tick_interval
        except Exception:
            pass
        self._thread = threading.Thread(target=self._run, name="device-runner", daemon=True)

    def start(self) -> "DeviceRunner":
        self._thread.start()
        return self

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    def sensor_changed(self, sensor: int, side: int, value: int) -> bool:
        """Thread-safe :meth:`DeviceEngine.sensor_changed` at the current time."""
        with self.lock:
            return self.engine.sensor_changed(sensor, side, value, self.now_ms())

    def _run(self) -> None:
        port = self.port
        paced = hasattr(port, "out_waiting") and isinstance(port, PacedPort)
        try:
            while not self._stop.is_set():
                try:
                    data = port.read(port.in_waiting or 1)
                except Exception as exc:
                    # The host end vanished (pty closed, cable pulled): the device keeps
                    # ticking, so that its host-timeout safety rule still fires.
                    self.read_errors += 1
                    self.error = exc
                    data = b""
                    time.sleep(self.tick_interval)
                with self.lock:
                    now = self.now_ms()
                    eng = self.engine
                    eng.feed(data, now)
                    eng.tick(now)
                    if self.on_tick is not None:
                        self.on_tick(eng, now)
                    if paced:
                        out = eng.poll(self.fifo_frames if port.out_waiting < self.fifo_bytes
                                       else 0)
                    else:
                        out = eng.poll()
                if out:
                    try:
                        port.write(out)
                    except Exception as exc:
                        self.error = exc
        except Exception as exc:  # reported to whoever owns the runner
            if not self._stop.is_set():
                self.error = exc

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
