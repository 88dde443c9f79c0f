"""A thin synchronous table driver for the hardware tests (the controller is event-driven)."""

from __future__ import annotations

from hardware.vocabulary import (ClearSafeStop, FeedStacks, Lift, MotionDone, Reply,
                                 SetGear, Side, StartShuffle, Status, StopShuffle)


class Table:
    """A thin synchronous driver for tests (the controller will be event-driven)."""

    def __init__(self, backend) -> None:
        self.b = backend
        self.p = backend.profile
        self.log: list = []

    def call(self, cmd, timeout: float = 5.0):
        i = self.b.submit(cmd)
        evs = self.b.run_until(lambda e: getattr(e, "cmd_id", None) == i
                               and isinstance(e, (Reply, Status)), timeout)
        self.log += evs
        return i, evs[-1]

    def wait_done(self, ids, timeout: float) -> dict:
        ids, got = set(ids), {}

        def pred(e):
            if isinstance(e, MotionDone) and e.cmd_id in ids:
                got[e.cmd_id] = e
            return len(got) == len(ids)

        self.log += self.b.run_until(pred, timeout)
        return got

    def of(self, cls, **match) -> list:
        return [e for e in self.log if isinstance(e, cls)
                and all(getattr(e, k) == v for k, v in match.items())]

    def start(self, gear: int | None = None) -> None:
        assert self.call(ClearSafeStop())[1].code == 0
        if gear is not None:
            assert self.call(SetGear(gear))[1].code == 0

    def build(self, gear: int, shuffle: bool = True) -> dict:
        """Shuffle, then feed all four sides; returns {Side: MotionDone}."""
        self.call(StartShuffle(self.p.shuffle_deadline_ms()))
        if shuffle:
            self.log += self.b.advance(self.p.timing.shuffle_s)
        ids = {}
        for side, n in zip(Side, self.p.stacks(gear)):
            ids[self.call(FeedStacks(side, n, self.p.feed_deadline_ms(n)))[0]] = side
        got = self.wait_done(ids, 60)
        self.call(StopShuffle())
        return {ids[i]: d for i, d in got.items()}

    def centre(self, up: bool, timeout: float = 5.0) -> MotionDone:
        """Move the centre lift; returns its MotionDone."""
        i, r = self.call(Lift(None, up, self.p.centre_deadline_ms()))
        assert r.code == 0, r
        return self.wait_done([i], timeout)[i]
