"""Reliable delivery, handshake, safety and the message catalogue, host engine against the
device engine on a virtual clock through virtual (optionally noisy) UART lines."""

from __future__ import annotations

import random

import pytest

from firmware_bridge import catalogue as C
from firmware_bridge.device import DeviceEngine
from firmware_bridge.errors import FrameError, LinkDown, PeerReset
from firmware_bridge.host import CommandFailed, Connected, HostProtocol, LinkLost, McuReset
from firmware_bridge.machine import FakeMachine
from firmware_bridge.codec import DeviceHeartbeat
from table_vocabulary import (ClearSafeStop, Command, Fault, FaultCode, FeedStacks, GetStatus, Lift,
                              MotionDone, Motor, Outcome, Reply, ReplyCode, RollDice, SelfTestStep,
                              Sensor, SensorChanged, SetGear, Side, StacksCounted, StartShuffle,
                              Status, StopAll, StopReason)
from firmware_bridge.noise import ByteNoise, VirtualLine
from firmware_bridge.reliable import ReliableEndpoint
from firmware_bridge.wire import FLAG_RELIABLE, FrameDecoder, encode_frame

TICK = 0.001  # s, the step of the virtual clock (device tick = 1 ms)


class Rig:
    """Host protocol and device engine wired by two virtual lines on one virtual clock."""

    def __init__(self, noise: float = 0.0, boot: int = 7, seed: int = 1) -> None:
        self.machine = FakeMachine()
        self.executed: list[int] = []
        self.now = 0.0
        self.dev = self._device(boot)
        self.host = HostProtocol(rng=random.Random(seed))
        self.h2d = VirtualLine(noise=ByteNoise(noise, seed + 1) if noise else None)
        self.d2h = VirtualLine(noise=ByteNoise(noise, seed + 2) if noise else None)
        self.events: list = []
        self.host_silent = False

    def _device(self, boot: int) -> DeviceEngine:
        return DeviceEngine(self.machine, boot_counter=boot, now_ms=int(self.now * 1000),
                            on_execute=lambda cmd, t: self.executed.append(cmd))

    def step(self) -> None:
        self.now += TICK
        now = self.now
        if not self.host_silent:
            self.events += self.host.feed(self.d2h.receive(now), now) + self.host.tick(now)
            self.h2d.send(self.host.poll(now), now)
        ms = int(round(now * 1000))
        self.dev.feed(self.h2d.receive(now), ms)
        self.dev.tick(ms)
        self.d2h.send(self.dev.poll(), now)

    def run(self, seconds: float) -> None:
        for _ in range(int(round(seconds / TICK))):
            self.step()

    def run_until(self, cond, limit: float = 5.0) -> None:
        end = self.now + limit
        while not cond():
            assert self.now < end, "condition not reached in virtual time"
            self.step()

    def of(self, cls) -> list:
        return [e for e in self.events if isinstance(e, cls)]

    def connect(self, clear: bool = True) -> None:
        self.host.connect(self.now)
        self.run_until(lambda: self.host.state == "connected")
        if clear:
            self.call(ClearSafeStop())

    def call(self, command):
        cmd_id = self.host.submit(command, self.now)
        self.run_until(lambda: any(getattr(e, "cmd_id", None) == cmd_id
                                   and isinstance(e, (Reply, Status, CommandFailed))
                                   for e in self.events))
        return [e for e in self.events if getattr(e, "cmd_id", None) == cmd_id
                and isinstance(e, (Reply, Status, CommandFailed))][-1]


# ------------------------------------------------------------ reliable delivery
@pytest.mark.parametrize("noise", [0.0, 0.01])
def test_10000_commands_exactly_once_in_order(noise):
    """With 1% of bytes corrupted, dropped or inserted in both directions, 10,000
    commands are executed exactly once and in order, and each gets exactly one reply."""
    rig = Rig(noise=noise)
    rig.connect()
    first = len(rig.executed)
    ids = []
    n = 10_000
    while len(ids) < n or rig.host.pending:
        while len(ids) < n and len(rig.host.pending) < 8:
            ids.append(rig.host.submit(SetGear((136, 144, 152, 108)[len(ids) % 4]), rig.now))
        rig.step()
        assert rig.now < 300, "stalled"
    rig.run(0.2)
    assert rig.executed[first:] == ids
    replies = [e.cmd_id for e in rig.of(Reply)][1:]
    assert sorted(replies) == sorted(ids) and len(set(replies)) == n
    assert all(e.code == ReplyCode.OK for e in rig.of(Reply))
    assert not rig.of(LinkLost) and not rig.of(CommandFailed)
    if noise:
        st = rig.host.stats()
        assert st.frames_rejected > 100 and st.retransmitted > 100  # noise really bit
        assert rig.dev.decoder.errors() > 100


def test_duplicate_is_not_delivered_twice_and_is_reacked():
    rx = ReliableEndpoint()
    assert rx.on_frame(FLAG_RELIABLE, 0, 0, 0.0) is True
    assert rx.on_frame(FLAG_RELIABLE, 0, 0, 1.0) is False  # retransmission
    assert rx.duplicates == 1 and rx.ack_needed()
    assert rx.on_frame(FLAG_RELIABLE, 2, 0, 2.0) is False  # gap: frame 1 lost
    assert rx.out_of_order == 1
    flags, _, ack = rx.header_for_unreliable()
    assert ack == 1 and flags & 0x02  # NAK asks for frame 1


def test_sequence_numbers_wrap():
    tx, rx = ReliableEndpoint(window=16), ReliableEndpoint(window=16)
    got = []
    for i in range(600):
        assert tx.send(0x10, bytes([i & 0xFF]))
        for flags, seq, ack, t, p in tx.outgoing(float(i)):
            if rx.on_frame(flags, seq, ack, float(i)):
                got.append(p[0])
        tx.on_frame(0, 0, rx.header_for_unreliable()[2], float(i))
    assert got == [i & 0xFF for i in range(600)]


def test_peer_silent_reports_link_lost_and_the_command_completes_when_it_returns():
    """A silent device makes the link lost, not the command failed: the session stays,
    the host goes quiet (so that the device's window stops the motors), and when the
    device is heard again the pending command gets its one true reply."""
    rig = Rig()
    rig.connect()
    rig.d2h = VirtualLine(noise=ByteNoise(1.0, 3))  # the device's transmitter dies
    cmd = rig.host.submit(SetGear(144), rig.now)
    rig.run(1.5)
    assert rig.of(LinkLost) and "no valid frame from the device" in rig.of(LinkLost)[0].reason
    assert not rig.of(CommandFailed) and cmd in rig.host.pending
    assert rig.host.state == "lost" and rig.host.poll(rig.now) == b""  # quiet
    with pytest.raises(LinkDown):
        rig.host.submit(GetStatus(), rig.now)
    assert rig.executed.count(cmd) == 1  # it reached the device, only the answers were lost
    assert rig.dev.stop_reason == C.STOP_HOST_TIMEOUT  # the device stopped by itself
    rig.d2h = VirtualLine()  # the line is repaired
    rig.run_until(lambda: rig.host.state == "connected")
    rig.run_until(lambda: not rig.host.pending)
    assert [r.code for r in rig.of(Reply) if r.cmd_id == cmd] == [ReplyCode.OK]
    assert rig.executed.count(cmd) == 1 and not rig.of(CommandFailed)
    rig.run_until(lambda: rig.of(Fault))  # queued after the reply, delivered after it
    faults = [f.code for f in rig.of(Fault)]
    assert faults == [FaultCode.HOST_TIMEOUT]  # the host learns what happened meanwhile


# ------------------------------------------------------------------ handshake
def test_handshake_reports_versions_and_boot_counter():
    rig = Rig(boot=41)
    rig.connect(clear=False)
    info = rig.of(Connected)[0].info
    assert info.protocol_version == 3 and info.firmware_version == (1, 0, 0)
    assert info.boot_counter == 41 and info.gear_tiles == 136
    assert info.heartbeat_window_ms == 500 and info.stop_reason == StopReason.POWER_ON
    r = rig.call(FeedStacks(Side.E, 3, 1000))
    assert r.code == ReplyCode.SAFE_STOP  # nothing moves after power-on until cleared
    assert rig.call(ClearSafeStop()).code == ReplyCode.OK
    assert rig.call(FeedStacks(Side.E, 3, 1000)).code == ReplyCode.OK


def test_mcu_reset_mid_session_is_detected_and_reported():
    rig = Rig(boot=7)
    rig.connect()
    assert rig.call(StartShuffle(5000)).code == ReplyCode.OK
    assert rig.machine.running
    # the microcontroller resets: fresh engine, boot counter incremented by its firmware
    rig.dev = rig._device(8)
    assert not rig.machine.running  # a fresh engine starts with every motor off
    cmd = rig.host.submit(GetStatus(), rig.now)
    rig.run_until(lambda: rig.of(McuReset) and rig.host.state == "connected")
    assert rig.of(McuReset)[0] == McuReset(previous_boot=7, boot=8)
    failed = [e for e in rig.of(CommandFailed) if e.cmd_id == cmd]
    assert failed and isinstance(failed[0].error, PeerReset)
    assert "boot counter 7 -> 8" in str(failed[0].error)
    assert rig.host.info.boot_counter == 8


def test_glitch_is_not_a_reset():
    rig = Rig(boot=7)
    rig.connect()
    rig.d2h = VirtualLine(noise=ByteNoise(1.0, 3))  # 0.3 s of garbage, then clean again
    rig.run(0.3)
    rig.d2h = VirtualLine()
    assert rig.call(GetStatus()).state is not None
    assert not rig.of(McuReset)


# --------------------------------------------------------------------- safety
def test_host_silence_stops_motors_within_window_plus_one_tick():
    rig = Rig()
    rig.connect()
    assert rig.call(StartShuffle(60_000)).code == ReplyCode.OK
    assert rig.call(FeedStacks(Side.S, 10, 60_000)).code == ReplyCode.OK
    assert len(rig.machine.running) == 2
    rig.run(0.05)
    rig.host_silent = True
    rig.run(0.02)  # flush what the host had already put on the line
    last_rx = rig.dev.last_rx
    while rig.machine.running:
        rig.step()
    stopped_at = rig.now * 1000
    assert stopped_at - last_rx <= 500 + 1 + 1e-6  # window + one 1 ms tick
    assert stopped_at - last_rx >= 500
    assert rig.dev.stop_reason == C.STOP_HOST_TIMEOUT
    rig.run(1.0)
    rig.host_silent = False  # the host returns (same session)
    rig.run_until(lambda: rig.of(Fault))
    fault = rig.of(Fault)[0]
    assert fault.code == FaultCode.HOST_TIMEOUT and str(fault).startswith("host timeout")
    done = [e for e in rig.of(MotionDone) if e.outcome == Outcome.SAFE_STOP]
    assert {d.command for d in done} == {"StartShuffle", "FeedStacks"}
    hb = [e for e in rig.events if isinstance(e, DeviceHeartbeat)][-1]
    assert hb.stop_reason == StopReason.HOST_TIMEOUT
    r = rig.call(StartShuffle(1000))
    assert r.code == ReplyCode.SAFE_STOP and r.detail == C.STOP_HOST_TIMEOUT
    assert rig.call(ClearSafeStop()).code == ReplyCode.OK
    assert rig.call(StartShuffle(1000)).code == ReplyCode.OK


def test_estop_latches_and_cannot_be_cleared_while_pressed():
    rig = Rig()
    rig.connect()
    rig.call(StartShuffle(10_000))
    rig.dev.sensor_changed(C.SENSOR_ESTOP, C.SIDE_NONE, 1, int(rig.now * 1000))
    assert not rig.machine.running
    assert rig.call(ClearSafeStop()).code == ReplyCode.SAFE_STOP
    rig.dev.sensor_changed(C.SENSOR_ESTOP, C.SIDE_NONE, 0, int(rig.now * 1000))
    assert rig.call(ClearSafeStop()).code == ReplyCode.OK
    assert any(f.code == FaultCode.ESTOP for f in rig.of(Fault))


# ------------------------------------------------------------------- catalogue
def test_feed_stacks_counts_and_completes():
    rig = Rig()
    rig.connect()
    r = rig.call(FeedStacks(Side.W, 3, 5000))
    assert r.code == ReplyCode.OK
    assert rig.machine.running == {(C.MOTOR_FEEDER, C.SIDE_W): 1}
    for i in range(3):
        ms = int(rig.now * 1000)
        rig.dev.sensor_changed(C.SENSOR_STACK, C.SIDE_W, 1, ms)
        rig.dev.sensor_changed(C.SENSOR_STACK, C.SIDE_W, 0, ms + 1)
        rig.run(0.02)
    ms = int(rig.now * 1000)
    rig.dev.sensor_changed(C.SENSOR_PUSH_HOME, C.SIDE_W, 1, ms)  # the head back home
    rig.run_until(lambda: rig.of(MotionDone))
    assert [s.count for s in rig.of(StacksCounted)] == [1, 2, 3]
    assert all(s.side == Side.W for s in rig.of(StacksCounted))
    done = rig.of(MotionDone)[0]
    assert (done.command, done.side, done.outcome, done.detail) == ("FeedStacks", Side.W,
                                                                     Outcome.COMPLETED, 3)
    sensors = rig.of(SensorChanged)
    assert len(sensors) == 7 and sensors[0].t_ms <= sensors[-1].t_ms
    assert not rig.machine.running


def test_deadline_missed_stops_motor_and_reports_fault():
    rig = Rig()
    rig.connect()
    r = rig.call(Lift(Side.N, True, 300))
    start = rig.now
    assert rig.machine.running == {(C.MOTOR_LIFT, C.SIDE_N): 1}
    rig.run_until(lambda: not rig.machine.running)
    assert rig.now - start == pytest.approx(0.3, abs=0.02)
    rig.run_until(lambda: rig.of(Fault))
    f = rig.of(Fault)[0]
    assert (f.code, f.side, f.cmd_id) == (FaultCode.DEADLINE, Side.N, r.cmd_id)
    assert rig.of(MotionDone)[0].outcome == Outcome.DEADLINE


def test_lift_completes_on_limit_and_busy_is_refused():
    rig = Rig()
    rig.connect()
    assert rig.call(Lift(Side.E, True, 2000)).code == ReplyCode.OK
    assert rig.call(Lift(Side.E, False, 2000)).code == ReplyCode.BUSY
    assert rig.call(SetGear(144)).code == ReplyCode.BUSY
    rig.dev.sensor_changed(C.SENSOR_LIFT_TOP, C.SIDE_E, 1, int(rig.now * 1000))
    rig.run_until(lambda: rig.of(MotionDone))
    assert rig.of(MotionDone)[0].outcome == Outcome.COMPLETED
    # already at the top: completes at once without starting the motor
    n = len(rig.machine.calls)
    assert rig.call(Lift(Side.E, True, 2000)).code == ReplyCode.OK
    assert all(c[0] != "start" for c in rig.machine.calls[n:])


def test_dice_selftest_stop_status_and_gear():
    rig = Rig()
    rig.connect()
    assert rig.call(RollDice(200, 1000)).code == ReplyCode.OK
    rig.run_until(lambda: rig.of(MotionDone))
    assert rig.of(MotionDone)[0].elapsed_ms == pytest.approx(200, abs=2)
    assert rig.call(SelfTestStep(1, Motor.FEEDER, Side.S, 100, 500)).code == ReplyCode.OK
    rig.dev.sensor_changed(C.SENSOR_TILE_PRESENT, C.SIDE_S, 1, int(rig.now * 1000))
    rig.run_until(lambda: len(rig.of(MotionDone)) == 2)
    assert rig.of(MotionDone)[1].detail == 1
    rig.call(StartShuffle(10_000))
    st = rig.call(GetStatus())
    assert isinstance(st, Status) and st.running == {(Motor.SHUFFLE, None)} and st.active_motions == 1
    assert {key for key, v in st.readings.items() if v} == {(Sensor.TILE_PRESENT, Side.S)}
    assert rig.call(StopAll()).code == ReplyCode.OK
    assert not rig.machine.running
    assert rig.call(SetGear(152)).code == ReplyCode.OK and rig.machine.gear == 152


def test_device_refuses_malformed_commands_without_crashing():
    rig = Rig()
    rig.connect()
    link = rig.dev.link
    # a well-framed reliable frame whose payload is wrong for its type, then unknown type
    for mtype, payload in ((C.T_FEED_STACK, b"\x05\x00\x09"), (0x7E, b"\x06\x00")):
        seq = rig.host.link.next_seq
        rig.host.link.next_seq = (seq + 1) & 0xFF
        rig.dev.feed(encode_frame(FLAG_RELIABLE, seq, link.expected, mtype, payload, 2),
                     int(rig.now * 1000))
    out = rig.dev.poll()
    frames = [f for f in FrameDecoder().feed(out) if f[3] == C.T_REPLY]
    assert [f[4][2] for f in frames] == [C.REPLY_UNKNOWN, C.REPLY_UNKNOWN]
    assert rig.call(GetStatus()).cmd_id  # the link carries on



def test_something_that_is_not_a_goal_command_is_refused_at_submit():
    """The codec packs at submit (not later on the I/O thread): a non-command raises FrameError
    naming the goal commands, uses no cmd_id, and the link carries on."""
    rig = Rig()
    rig.connect()
    before = rig.host._next_cmd
    for bad in ("StopAll", Command(), (C.T_STOP_ALL, b"\x01\x00")):
        with pytest.raises(FrameError, match=r"not a table command: .* \(allowed: StartShuffle, "):
            rig.host.submit(bad, rig.now)
    assert rig.host._next_cmd == before and not rig.host.pending
    assert rig.call(GetStatus()).cmd_id == before
