"""Line models for tests, benchmarks and the simulator: byte noise and a virtual UART.

:class:`ByteNoise` corrupts, drops or inserts bytes with a given probability per byte.
:class:`VirtualLine` is one direction of a UART on a virtual clock: bytes arrive after
their transmission time at ``baudrate`` (10 bits per byte: start, 8 data, stop).
"""

from __future__ import annotations

import collections
import random


class ByteNoise:
    """Per-byte line noise.

    Args:
        rate: probability (0..1) that a byte is hit; a hit is, with equal chance, a
            corruption (XOR with a random non-zero value), a drop, or an inserted random
            byte before it.
        seed: seed of the private random generator (reproducible runs).
    Counters: ``corrupted``, ``dropped``, ``inserted``, ``bytes``.
    """

    def __init__(self, rate: float, seed: int = 0) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"noise rate must be within 0..1, got {rate!r}")
        self.rate = rate
        self.rng = random.Random(seed)
        self.corrupted = self.dropped = self.inserted = self.bytes = 0

    def apply(self, data: bytes) -> bytes:
        """Return ``data`` as it arrives through the noisy line."""
        self.bytes += len(data)
        if self.rate <= 0 or not data:
            return data
        rng = self.rng
        out = bytearray()
        for b in data:
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
