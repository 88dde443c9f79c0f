"""Framing: CRC, COBS, encoder/decoder, and bad input (property tests)."""

from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st

from firmware_bridge import wire
from firmware_bridge.wire import FrameDecoder, encode_frame


def test_crc_check_values():
    assert wire.crc16(b"123456789") == 0x29B1
    assert wire.crc32(b"123456789") == 0xCBF43926
    assert wire.crc32_py(b"123456789") == 0xCBF43926  # the fallback without binascii


@given(st.binary(max_size=253))
def test_local_cobs_matches_package_and_round_trips(data):
    from cobs import cobs

    enc = wire.cobs_encode_py(data)
    assert enc == cobs.encode(data)
    assert b"\x00" not in enc
    assert wire.cobs_decode_py(enc) == data


frames_st = st.tuples(
    st.sampled_from([0, wire.FLAG_RELIABLE, wire.FLAG_NAK, wire.FLAG_RELIABLE | wire.FLAG_NAK]),
    st.integers(0, 255),
    st.integers(0, 255),
    st.integers(0, 255),
    st.binary(max_size=wire.MAX_PAYLOAD),
)


@given(st.lists(frames_st, max_size=8), st.sampled_from([1, 2]))
def test_round_trip_any_split(frames, fmt):
    stream = b"".join(encode_frame(*f, fmt) for f in frames)
    dec = FrameDecoder()
    got = []
    rng = random.Random(len(stream))
    i = 0
    while i < len(stream):
        step = rng.randint(1, 7)
        got += dec.feed(stream[i : i + step])
        i += step
    assert got == [(f[0], f[1], f[2], f[3], f[4]) for f in frames]
    assert dec.errors() == 0
    assert all(len(encode_frame(*f, fmt)) == wire.encoded_size(len(f[4])) for f in frames)


# Random bytes never yield a frame. A chunk between two 0x00 bytes is accepted only if it
# COBS-decodes AND its first byte is MAGIC (1/256) AND its flag byte has no unknown bits
# (1/64) AND LEN equals the real payload length (about 1/50 for a given size) AND the
# CRC-16 matches (1/65536). For one random chunk that is about 1e-11, and inputs here are at
# most 512 bytes (a few dozen chunks at most), so the property holds with overwhelming
# probability for every example hypothesis generates; a failure would indicate a real
# structural hole, not bad luck. CRC alone (1/65536 per chunk) would not be enough.
@settings(max_examples=400)
@given(st.lists(st.binary(max_size=512), max_size=4))
def test_random_bytes_never_yield_a_frame_nor_crash(chunks):
    dec = FrameDecoder()
    for c in chunks:
        assert dec.feed(c) == []


@given(frames_st, st.data(), st.sampled_from([1, 2]))
def test_single_byte_corruption_is_caught(frame, data, fmt):
    good = encode_frame(*frame, fmt)
    i = data.draw(st.integers(0, len(good) - 2))  # not the delimiter
    x = data.draw(st.integers(1, 255))
    bad = bytearray(good)
    bad[i] ^= x
    dec = FrameDecoder()
    got = dec.feed(bytes(bad)) + dec.feed(encode_frame(*frame, fmt))
    # the corrupted frame is dropped (CRC-16 and CRC-32 catch every error within a burst
    # of 16 / 32 bits); the next good frame still comes through: instant resynchronisation
    assert got[-1] == frame
    assert len(got) == 1


def test_truncated_oversized_and_garbage_are_counted_and_resync():
    dec = FrameDecoder()
    good = encode_frame(wire.FLAG_RELIABLE, 5, 3, 0x10, b"abc")
    assert dec.feed(good[:6] + b"\x00") == []  # truncated
    assert dec.bad_length + dec.cobs_errors + dec.crc_errors == 1
    assert dec.feed(b"\xff" * 1000) == []  # oversized, no delimiter
    assert dec.oversized == 1
    assert dec.feed(b"\x00" + good) == [(1, 5, 3, 0x10, b"abc")]
    assert dec.feed(memoryview(good)) == [(1, 5, 3, 0x10, b"abc")]


def test_structural_checks():
    import struct

    def raw(body: bytes) -> bytes:
        crc = wire.crc16(body)
        return wire.cobs_encode_py(body + struct.pack(">H", crc)) + b"\x00"

    dec = FrameDecoder()
    assert dec.feed(raw(bytes([0xA2, 0, 0, 0, 1, 0]))) == []
    assert dec.bad_magic == 1
    assert dec.feed(raw(bytes([0xA1, 0x80, 0, 0, 1, 0]))) == []
    assert dec.bad_flags == 1
    assert dec.feed(raw(bytes([0xA1, 0, 0, 0, 1, 3, 1, 2]))) == []
    assert dec.bad_length == 1
    assert dec.feed(raw(bytes([0xA1, 0, 0, 0, 1, 2, 1, 2]))) == [(0, 0, 0, 1, b"\x01\x02")]


def test_encode_rejects_bad_fields():
    import pytest

    with pytest.raises(ValueError, match="exceeds the maximum"):
        encode_frame(0, 0, 0, 1, b"x" * 49)
    with pytest.raises(ValueError):
        encode_frame(0, 256, 0, 1)


def test_a_session_accepts_only_its_format_and_the_handshake():
    """In a version-3 session (format 2) a format-1 frame passes only when it is an
    unreliable handshake, NO_SESSION or DEV_HEARTBEAT frame; in a version-2 session a
    format-2 frame never passes."""
    v3 = FrameDecoder(formats=wire.frame_formats(3))
    assert v3.feed(encode_frame(0, 0, 0, 0x01, b"\x03abcd", 1)) == [(0, 0, 0, 0x01, b"\x03abcd")]
    assert v3.feed(encode_frame(0, 0, 0, 0x06, b"x" * 17, 1)) != []
    assert v3.feed(encode_frame(wire.FLAG_RELIABLE, 5, 0, 0x16, b"\x01\x00\x88\x00", 1)) == []
    assert v3.feed(encode_frame(0, 0, 7, 0x03, b"", 1)) == []  # an ACK would move state
    assert v3.bad_magic == 2
    assert v3.feed_frames(encode_frame(1, 5, 0, 0x16, b"ab", 2)) == [(2, 1, 5, 0, 0x16, b"ab")]
    v2 = FrameDecoder(formats=wire.frame_formats(2))
    assert v2.feed(encode_frame(1, 5, 0, 0x16, b"ab", 2)) == [] and v2.bad_magic == 1
