"""The link on a bad line, in virtual time: byte noise up to 10 %, bursts of garbage,
whole frames lost and device resets. Whatever the line does, every command is executed
at most once, the host's outcome of every command is the device's truth (a reply: it
ran; "not run": it did not; "unknown" only when the device reset before acknowledging
it), no reply is delivered twice, and a command reported not run and sent again runs
exactly once in the end."""

from __future__ import annotations

import collections

from hypothesis import given, settings, strategies as st
from test_fb_link import TICK, Rig

from firmware_bridge.host import CommandFailed, LinkLost, McuReset
from firmware_bridge.noise import ByteNoise, VirtualLine
from table_vocabulary import GetStatus, Reply, SetGear, SetIndicators, Status

_COMMANDS = (lambda i: SetGear((136, 144, 152, 108)[i % 4]), lambda i: GetStatus(),
             lambda i: SetIndicators(i % 64, 0))


class Exchange:
    """Drives ``n`` commands through a :class:`Rig` whose lines have ``noise`` (byte
    rate), bursts of ``burst_len`` garbage bytes (``burst_rate`` per byte) and whole
    frames lost (``frame_drop``); the device restarts (a fresh engine, boot counter + 1)
    during every ``reset_every``-th command. At most ``in_flight`` commands are pending.
    A command reported not run is sent again (a new attempt, a new cmd_id).

    After :meth:`run`: ``attempts`` maps cmd_id -> logical command index, ``outcome``
    cmd_id -> "ran" / "not run" / "unknown", ``executed`` the device's executions per
    cmd_id (truth, counted by the engine's ``on_execute``), ``replies`` the number of
    Reply/Status/CommandFailed events per cmd_id.
    """

    def __init__(self, noise: float = 0.0, seed: int = 1, burst_len: int = 0,
                 burst_rate: float = 0.0, frame_drop: float = 0.0,
                 reset_every: int | None = None, in_flight: int = 1) -> None:
        self.rig = rig = Rig(seed=seed)
        for name, s in (("h2d", seed + 1), ("d2h", seed + 2)):
            setattr(rig, name, VirtualLine(noise=ByteNoise(
                noise, s, burst_len=burst_len, burst_rate=burst_rate, frame_drop=frame_drop)))
        self.reset_every = reset_every
        self.in_flight = in_flight
        self.attempts: dict[int, int] = {}
        self.outcome: dict[int, str] = {}
        self.replies: collections.Counter[int] = collections.Counter()
        self.resets = 0

    def _reset_device(self) -> None:
        rig = self.rig
        self.resets += 1
        rig.dev = rig._device(rig.dev.boot_counter + 1)

    def run(self, n: int, limit_s: float = 600.0) -> None:
        rig = self.rig
        rig.host.connect(rig.now)
        todo = collections.deque(range(n))
        reset_at = None
        seen = 0
        while todo or rig.host.pending:
            assert rig.now < limit_s, f"stalled: {len(todo)} to do, {rig.host.pending}"
            while (todo and rig.host.state == "connected"
                   and len(rig.host.pending) < self.in_flight):
                i = todo.popleft()
                cmd_id = rig.host.submit(_COMMANDS[i % 3](i), rig.now)
                self.attempts[cmd_id] = i
                if self.reset_every and len(self.attempts) % self.reset_every == 0:
                    reset_at = rig.now + (cmd_id % 7) * 0.003  # during this command
            if reset_at is not None and rig.now >= reset_at:
                reset_at = None
                self._reset_device()
            rig.step()
            for ev in rig.events[seen:]:
                if isinstance(ev, (Reply, Status, CommandFailed)):
                    self.replies[ev.cmd_id] += 1
                    if isinstance(ev, CommandFailed):
                        self.outcome[ev.cmd_id] = {True: "ran", False: "not run",
                                                   None: "unknown"}[ev.executed]
                        if ev.executed is False:
                            todo.appendleft(self.attempts[ev.cmd_id])
                    else:
                        self.outcome[ev.cmd_id] = "ran"
            seen = len(rig.events)
        rig.run(0.5)

    @property
    def executed(self) -> collections.Counter[int]:
        return collections.Counter(self.rig.executed)

    def check(self, n: int) -> None:
        """Assert exactness (see the module's docstring)."""
        ex = self.executed
        assert set(self.outcome) == set(self.attempts), "a command got no outcome"
        assert all(c == 1 for c in self.replies.values()), "an outcome delivered twice"
        for cmd_id, what in self.outcome.items():
            assert ex[cmd_id] <= 1, f"command {cmd_id} ran {ex[cmd_id]} times"
            if what == "ran":
                assert ex[cmd_id] == 1, f"command {cmd_id} reported run, did not run"
            elif what == "not run":
                assert ex[cmd_id] == 0, f"command {cmd_id} reported not run, ran"
            else:
                assert self.resets, "an unknown outcome without a device reset"
        # every logical command ran exactly once, unless its outcome is unknown
        runs = collections.Counter(self.attempts[c] for c in self.attempts if ex[c])
        unknown = {self.attempts[c] for c, w in self.outcome.items() if w == "unknown"}
        for i in range(n):
            if i not in unknown:
                assert runs[i] == 1, f"logical command {i} ran {runs[i]} times"
        # the device ran the commands of each session in the order they were sent
        ran = [c for c in self.rig.executed if c in self.attempts]
        if not self.resets:
            assert ran == sorted(ran)


@settings(max_examples=12, deadline=None)
@given(noise=st.sampled_from([0.0, 0.01, 0.03, 0.05, 0.10]), seed=st.integers(0, 10_000),
       burst_len=st.sampled_from([0, 4, 16, 60]), frame_drop=st.sampled_from([0.0, 0.05, 0.2]),
       in_flight=st.sampled_from([1, 4]))
def test_exact_on_a_noisy_line(noise, seed, burst_len, frame_drop, in_flight):
    ex = Exchange(noise, seed, burst_len=burst_len, burst_rate=0.002, frame_drop=frame_drop,
                  in_flight=in_flight)
    ex.run(40)
    ex.check(40)
    assert not ex.resets and "unknown" not in ex.outcome.values()


@settings(max_examples=8, deadline=None)
@given(noise=st.sampled_from([0.0, 0.03, 0.05, 0.10]), seed=st.integers(0, 10_000),
       reset_every=st.integers(3, 12), in_flight=st.sampled_from([1, 4]))
def test_exact_with_device_resets(noise, seed, reset_every, in_flight):
    ex = Exchange(noise, seed, reset_every=reset_every, in_flight=in_flight)
    ex.run(30)
    ex.check(30)
    assert ex.resets and len(ex.rig.of(McuReset)) == ex.resets


def test_five_percent_noise_is_exact_and_never_loses_the_link():
    """At 5 % byte noise both ways, 300 commands: exact, and the adaptive heartbeat keeps
    both timeouts: no LinkLost, the device never stops for host silence."""
    ex = Exchange(0.05, seed=11, in_flight=2)
    ex.run(300)
    ex.check(300)
    assert not ex.rig.of(LinkLost) and not ex.rig.dev.host_silent
    assert all(w == "ran" for w in ex.outcome.values())
    assert ex.rig.host.line.rate > 0.02  # the noise was measured


def test_a_dead_line_stops_the_device_and_the_host_learns_the_outcome_afterwards():
    """The line dies both ways while commands are pending: the device stops by itself,
    the host reports the link lost; when the line returns, every command's true outcome
    arrives, none twice."""
    ex = Exchange(0.02, seed=5, in_flight=4)
    rig = ex.rig
    rig.connect()
    ids = [rig.host.submit(SetGear(144), rig.now) for _ in range(4)]
    rig.step()
    rig.step()
    good = rig.h2d, rig.d2h
    rig.h2d = VirtualLine(noise=ByteNoise(1.0, 1))
    rig.d2h = VirtualLine(noise=ByteNoise(1.0, 2))
    rig.run(3.0)
    assert rig.of(LinkLost) and rig.dev.host_silent
    rig.h2d, rig.d2h = good
    rig.run_until(lambda: not rig.host.pending, 30)
    rig.run(0.2)
    ex_count = collections.Counter(rig.executed)
    replies = [e for e in rig.of(Reply) if e.cmd_id in ids]
    assert sorted(r.cmd_id for r in replies) == ids  # one reply each
    assert all(ex_count[i] == 1 for i in ids) and not rig.of(CommandFailed)
    assert rig.now > 3.0 + TICK
