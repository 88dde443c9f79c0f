"""Line models for tests, benchmarks and the simulator: byte noise and a virtual UART.

:class:`ByteNoise` corrupts, drops or inserts bytes with a given probability per byte.
:class:`VirtualLine` is one direction of a UART on a virtual clock: bytes arrive after
their transmission time at ``baudrate`` (10 bits per byte: start, 8 data, stop).
"""

from __future__ import annotations

import collections
import random


class ByteNoise:
    """Line noise: per-byte hits, bursts of garbage and whole frames lost.

    Args:
        rate: probability (0..1) that a byte is hit; a hit is, with equal chance, a
            corruption (XOR with a random non-zero value), a drop, or an inserted random
            byte before it.
        seed: seed of the private random generator (reproducible runs).
        burst_len: length (bytes) of a burst of random garbage (0: no bursts);
        burst_rate: probability per byte that a burst replaces the bytes from there on
            (``burst_len`` of them; a burst may swallow delimiters and join frames).
        frame_drop: probability (0..1) that a whole frame (the bytes up to and including
            its 0x00 delimiter, as written) is lost.
    Counters: ``corrupted``, ``dropped``, ``inserted``, ``bursts``, ``frames_dropped``,
    ``bytes``.
    """

    def __init__(self, rate: float, seed: int = 0, burst_len: int = 0,
                 burst_rate: float = 0.0, frame_drop: float = 0.0) -> None:
        for name, v in (("noise rate", rate), ("burst rate", burst_rate),
                        ("frame drop", frame_drop)):
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be within 0..1, got {v!r}")
        if burst_len < 0:
            raise ValueError(f"burst length must be >= 0, got {burst_len!r}")
        self.rate = rate
        self.burst_len = burst_len
        self.burst_rate = burst_rate if burst_len else 0.0
        self.frame_drop = frame_drop
        self.rng = random.Random(seed)
        self.corrupted = self.dropped = self.inserted = self.bytes = 0
        self.bursts = self.frames_dropped = 0
        self._in_burst = 0          # garbage bytes still to write
        self._dropping = False      # inside a frame that is lost whole
        self._frame_start = True

    def apply(self, data: bytes) -> bytes:
        """Return ``data`` as it arrives through the noisy line."""
        self.bytes += len(data)
        if not data or (self.rate <= 0 and not self.burst_rate and not self.frame_drop):
            return data
        rng = self.rng
        out = bytearray()
        for b in data:
            if self._frame_start and self.frame_drop:
                self._dropping = rng.random() < self.frame_drop
                self.frames_dropped += self._dropping
            self._frame_start = b == 0
            if self._dropping:
                continue
            if self._in_burst or (self.burst_rate and rng.random() < self.burst_rate):
                if not self._in_burst:
                    self.bursts += 1
                    self._in_burst = self.burst_len
                self._in_burst -= 1
                out.append(rng.randint(0, 255))
                continue
            r = rng.random()
            if r >= self.rate:
                out.append(b)
                continue
            kind = int(3 * r / self.rate)
            if kind == 0:
                out.append(b ^ rng.randint(1, 255))
                self.corrupted += 1
            elif kind == 1:
                self.dropped += 1
            else:
                out.append(rng.randint(0, 255))
                out.append(b)
                self.inserted += 1
        return bytes(out)


class VirtualLine:
    """One direction of a serial line on a virtual clock (time in seconds).

    ``send(data, now)`` puts bytes on the line; ``receive(now)`` returns the bytes whose
    last bit has arrived by ``now``. Bytes are serialised at ``baudrate`` / 10 bytes per
    second, so the line-rate limit is honest; ``noise`` (optional) is applied on entry.
    """

    def __init__(self, baudrate: int = 115200, noise: ByteNoise | None = None) -> None:
        self.byte_time = 10.0 / baudrate
        self.noise = noise
        self._free_at = 0.0
        self._q: collections.deque[tuple[float, bytes]] = collections.deque()
        self.bytes_sent = 0

    def send(self, data: bytes, now: float) -> None:
        if not data:
            return
        if self.noise is not None:
            data = self.noise.apply(data)
        start = max(self._free_at, now)
        # deliver in slices of up to 16 bytes so the receiver sees a stream, not blocks
        for i in range(0, len(data), 16):
            piece = data[i:i + 16]
            start += len(piece) * self.byte_time
            self._q.append((start, piece))
        self._free_at = start
        self.bytes_sent += len(data)

    def receive(self, now: float) -> bytes:
        out = []
        q = self._q
        while q and q[0][0] <= now:
            out.append(q.popleft()[1])
        return b"".join(out)

    def busy_until(self) -> float:
        return self._free_at
