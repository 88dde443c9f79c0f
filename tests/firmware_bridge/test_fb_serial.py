"""The link over real pyserial code paths: a pseudo-terminal pair and ``loop://``."""

from __future__ import annotations

import time

import pytest

from firmware_bridge import catalogue as C
from firmware_bridge.device import DeviceEngine
from firmware_bridge.errors import CommandRejected, LinkTimeout, TransportError
from firmware_bridge.host import HostLink
from firmware_bridge.machine import FakeMachine
from firmware_bridge.transport import DeviceRunner, PacedPort, open_port, pty_pair
from table_vocabulary import (ClearSafeStop, FeedStacks, GetStatus, MotionDone, Outcome, Side,
                              StacksCounted, StartShuffle, Status)


@pytest.fixture
def pty_link():
    host_raw, dev_raw = pty_pair()
    machine = FakeMachine()
    engine = DeviceEngine(machine, boot_counter=5, now_ms=int(time.monotonic() * 1000))
    runner = DeviceRunner(engine, PacedPort(dev_raw)).start()
    link = HostLink(PacedPort(host_raw))
    link.start()
    yield link, runner, machine
    link.close()
    runner.stop()
    dev_raw.close()


def test_over_pty_handshake_commands_and_events(pty_link):
    link, runner, machine = pty_link
    info = link.connect(timeout=2.0)
    assert info.boot_counter == 5
    with pytest.raises(CommandRejected, match="safe-stop \\(reason: power on\\)"):
        link.call(StartShuffle(1000))
    link.call(ClearSafeStop())
    link.call(FeedStacks(Side.E, 2, 2000))
    assert machine.running == {(C.MOTOR_FEEDER, C.SIDE_E): 1}
    for v in (1, 0, 1):
        runner.sensor_changed(C.SENSOR_STACK, C.SIDE_E, v)
    runner.sensor_changed(C.SENSOR_PUSH_HOME, C.SIDE_E, 1)  # the push head back home
    events = []
    deadline = time.monotonic() + 2
    while not any(isinstance(e, MotionDone) for e in events) and time.monotonic() < deadline:
        ev = link.get_event(timeout=0.1)
        if ev is not None:
            events.append(ev)
    assert [e.count for e in events if isinstance(e, StacksCounted)] == [1, 2]
    done = [e for e in events if isinstance(e, MotionDone)][0]
    assert done.outcome == Outcome.COMPLETED and not machine.running
    assert isinstance(link.call(GetStatus()), Status)
    assert link.stats().frames_rejected == 0


def test_host_gone_stops_device_over_pty(pty_link):
    link, runner, machine = pty_link
    link.connect()
    link.call(ClearSafeStop())
    link.call(StartShuffle(60_000))
    assert machine.running
    link.close()  # the host goes quiet
    t0 = time.monotonic()
    while machine.running and time.monotonic() - t0 < 2:
        time.sleep(0.01)
    assert not machine.running
    assert 0.4 < time.monotonic() - t0 < 0.8
    assert runner.engine.stop_reason == C.STOP_HOST_TIMEOUT


def test_loop_url_without_device_times_out_cleanly():
    link = HostLink(open_port("loop://"))  # our own bytes come back: no device answers
    with link:
        with pytest.raises(LinkTimeout, match="no handshake answer"):
            link.connect(timeout=0.3)


def test_bad_port_is_a_clear_error():
    with pytest.raises(TransportError, match="cannot open serial port '/dev/nonexistent-mj'"):
        open_port("/dev/nonexistent-mj")


def test_paced_port_line_keeps_its_clock_while_the_writer_stalls_and_never_runs_early():
    """A UART keeps sending what is buffered while the CPU does other work: the paced
    line's clock runs from the write, not from when its pacing thread gets to a slice. A
    pacing thread held up (here: the port under it blocks) delivers late, but the line is
    not idled by it (``out_waiting`` falls with line time), and no slice reaches the port
    before its last bit would have left a real 115200-baud line."""
    import threading

    class Port:
        def __init__(self) -> None:
            self.release = threading.Event()
            self.got: list[tuple[float, int]] = []

        def write(self, data: bytes) -> int:
            self.release.wait(5)
            self.got.append((time.perf_counter(), len(data)))
            return len(data)

        def close(self) -> None:
            pass

    port = Port()
    paced = PacedPort(port, 115200)
    t0 = time.perf_counter()
    paced.write(bytes(1152))                 # 100 ms of line
    assert 1000 <= paced.out_waiting <= 1152
    time.sleep(0.15)
    assert paced.out_waiting == 0 and port.got == []   # sent on the line, none delivered
    port.release.set()
    end = time.monotonic() + 5
    while sum(n for _, n in port.got) < 1152 and time.monotonic() < end:
        time.sleep(0.01)
    sent = 0
    for at, n in port.got:
        sent += n
        assert at >= t0 + sent * 10 / 115200
    assert sent == 1152
    paced.close()
