"""A trace of the device side of the protocol, run by CPython and by MicroPython.

``python engine_trace.py REPO`` and ``micropython engine_trace.py REPO`` must print the
same lines (``test_fw_micropython.py`` compares them): frames encoded and decoded in both
formats, then a device engine on a fake clock driven through a session (handshake,
commands, sensor edges, deadlines, STOP_ALL with several motions running, corrupted bytes,
host silence), every byte it sends printed in hex with the motor calls it made.

Written in the subset both run: no f-strings, no typing, ``binascii.hexlify``.
"""

import struct
import sys
from binascii import hexlify

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else ".")

from firmware_bridge import catalogue as C  # noqa: E402
from firmware_bridge.device import DeviceEngine  # noqa: E402
from firmware_bridge.machine import FakeMachine  # noqa: E402
from firmware_bridge.wire import (FLAG_RELIABLE, FrameDecoder, crc16, crc32,  # noqa: E402
                                  encode_frame)


def hx(b):
    return hexlify(bytes(b)).decode()


def show_frames(tag, frames):
    for f in frames:
        print(tag, f[0], f[1], f[2], f[3], f[4], hx(f[5]))


def wire_part():
    print("crc", crc16(b"123456789"), crc32(b"123456789"))
    encoded = []
    for fmt in (1, 2):
        for flags, seq, ack, mtype, payload in (
                (0, 0, 0, C.T_HELLO, struct.pack("<BI", 3, 0x12345678)),
                (FLAG_RELIABLE, 5, 9, C.T_LIFT, struct.pack("<HBBI", 7, 2, 1, 4000)),
                (2, 0, 200, C.T_ACK, b""),
                (FLAG_RELIABLE, 255, 0, C.T_STATUS, bytes(range(1, 24))),
                (FLAG_RELIABLE, 1, 1, C.T_FAULT, b"\x00" * 48)):
            e = encode_frame(flags, seq, ack, mtype, payload, fmt)
            print("enc", fmt, hx(e))
            encoded.append(e)
    stream = b"".join(encoded)
    dec = FrameDecoder()
    for chunk in (stream[:7], stream[7:40], stream[40:]):  # any chunking
        show_frames("dec", dec.feed_frames(chunk))
    bad = bytearray(stream)
    bad[3] ^= 0x40          # corrupt the first frame
    bad[60] = 0             # split a frame
    show_frames("bad", dec.feed_frames(b"\x11\x22" + bytes(bad) + b"\xff" * 80 + b"\x00"))
    print("errors", dec.errors(), dec.crc_errors, dec.cobs_errors, dec.bad_length,
          dec.oversized, dec.noise_bytes)


class Host:
    """A minimal host: builds version-3 frames and acknowledges the device's."""

    def __init__(self):
        self.seq = 0
        self.ack = 0
        self.dec = FrameDecoder()

    def hello(self, nonce):
        return encode_frame(0, 0, 0, C.T_HELLO, struct.pack("<BI", 3, nonce), 1)

    def command(self, mtype, *fields):
        f = encode_frame(FLAG_RELIABLE, self.seq, self.ack, mtype,
                         struct.pack(C.FORMATS[mtype], *fields), 2)
        self.seq = (self.seq + 1) & 0xFF
        return f

    def heartbeat(self, now):
        return encode_frame(0, 0, self.ack, C.T_HOST_HEARTBEAT,
                            struct.pack("<IH", now, 20), 2)

    def read(self, data):
        for f in self.dec.feed_frames(data):
            if f[1] & FLAG_RELIABLE and f[2] == self.ack:
                self.ack = (self.ack + 1) & 0xFF


def engine_part():
    m = FakeMachine()
    executed = []
    t = 1000
    eng = DeviceEngine(m, boot_counter=7, now_ms=t, profile_id=2, gear_tiles=144,
                       on_execute=lambda cmd, mtype: executed.append((cmd, mtype)))
    eng.sensor_changed(C.SENSOR_LIFT_BOTTOM, 0, 1, t)
    eng.sensor_changed(C.SENSOR_PUSH_HOME, 1, 1, t)
    host = Host()
    # (time, bytes from the host) and (time, sensor edge)
    script = {
        1010: [host.hello(0xCAFE)],
        1030: [host.command(C.T_CLEAR_SAFE_STOP, 1)],
        1050: [host.command(C.T_LIFT, 2, 0, 1, 2000),
               host.command(C.T_FEED_STACK, 3, 1, 2, 5000),
               host.command(C.T_SHUFFLE_START, 4, 300),
               host.command(C.T_ROLL_DICE, 5, 200, 1000)],
        1100: [b"\x05\x99garbage\x00"],
        1400: [host.command(C.T_GET_STATUS, 6)],
        1500: [host.command(C.T_LIFT, 7, 0xFF, 1, 800),
               host.command(C.T_FEED_STACK, 8, 2, 1, 3000),
               host.command(C.T_SHUFFLE_START, 9, 9000),
               host.command(C.T_ROLL_DICE, 10, 5000, 6000)],
        1700: [host.command(C.T_STOP_ALL, 11)],
        1800: [host.command(C.T_SET_GEAR, 12, 152),
               host.command(C.T_SET_INDICATORS, 13, 3, 50)],
    }
    edges = {
        1120: [(C.SENSOR_LIFT_BOTTOM, 0, 0), (C.SENSOR_PUSH_HOME, 1, 0)],
        1200: [(C.SENSOR_STACK, 1, 1)],
        1220: [(C.SENSOR_STACK, 1, 0)],
        1260: [(C.SENSOR_STACK, 1, 1)],
        1300: [(C.SENSOR_PUSH_HOME, 1, 1)],
        1350: [(C.SENSOR_LIFT_TOP, 0, 1)],
        1600: [(C.SENSOR_DISC_PULSE, 0xFF, 1)],
    }
    while t < 3000:
        t += 10
        for data in script.get(t, ()):
            eng.feed(data, t)
        if t % 40 == 0 and t < 2200:
            eng.feed(host.heartbeat(t), t)   # then silence: the host-timeout stop
        for sensor, side, value in edges.get(t, ()):
            eng.sensor_changed(sensor, side, value, t)
        eng.tick(t)
        out = eng.poll()
        if out:
            host.read(out)
            print("tx", t, hx(out))
    print("state", eng.state(), eng.stop_reason, len(eng.table), eng.core.gear)
    print("executed", executed)
    print("calls", m.calls)


wire_part()
engine_part()
print("done")
