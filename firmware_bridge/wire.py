"""Frame formats: CRC-16 and CRC-32, COBS and the frame encoder/decoder.

This module is shared by the host and the device side. It is written so that it
ports to MicroPython on an RP2040 unchanged apart from imports: no dataclasses, no
typing at run time in the hot path, bounded buffers, plain ints and tuples.

Frames on the wire (see ``docs/protocol.md``). Format 1 (protocol versions 1 and 2, and
HELLO / HELLO_ACK / NO_SESSION / the DEV_HEARTBEAT of a device without a session in every
version)::

    COBS( MAGIC FLAGS SEQ ACK TYPE LEN PAYLOAD[LEN] CRC16_HI CRC16_LO ) 0x00

Format 2 (protocol version 3), the same size on the wire with a 32-bit CRC::

    COBS( MAGIC2|FLAGS SEQ ACK TYPE PAYLOAD[n] CRC32[4, big-endian] ) 0x00

* ``MAGIC2|FLAGS``: 0xA8 with the two flag bits in bits 0-1; the payload length is the
  decoded body's length minus 8. CRC-32 is the one of zlib and Ethernet (ISO-HDLC,
  ``binascii.crc32``), over the bytes before it. A corrupted frame that keeps its
  structure passes a CRC-16 with a chance of about 2^-16 and a CRC-32 with about 2^-32
  (none of 2.3 million corrupted chunks passed either at 10 % byte noise; the margin
  is for hours of a noisy line, not for what a benchmark can show).

* ``MAGIC`` = 0xA1: fixed; frame format 1 (protocol versions 1 and 2 share it).
* ``FLAGS``: bit 0 RELIABLE (SEQ is meaningful and must be acknowledged), bit 1 NAK
  (the sender saw a gap and asks for retransmission from ACK); other bits are 0.
* ``SEQ``: sequence number of a reliable frame, 0..255 (0 in unreliable frames).
* ``ACK``: cumulative acknowledgement, the next SEQ the sender expects from its peer.
* ``TYPE``: message type; ``LEN``: payload length, 0..MAX_PAYLOAD (48).
* ``CRC16``: CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final
  xor), big-endian, over MAGIC..PAYLOAD.

A decoded frame is the tuple ``(flags, seq, ack, type, payload)``.
"""

try:  # host: the C-accelerated/maintained package declared in pyproject
    from cobs import cobs as _cobs_pkg
except ImportError:  # pragma: no cover - MicroPython: use the local implementation
    _cobs_pkg = None

try:  # CPython and MicroPython (MICROPY_PY_BINASCII_CRC32, on in the rp2 port)
    from binascii import crc32 as _crc32
except ImportError:  # pragma: no cover - a build without it
    _crc32 = None

MAGIC = 0xA1
MAGIC2 = 0xA8             # format 2: bits 2-7 of the first byte; bits 0-1 are the flags
# Protocol version (HELLO / HELLO_ACK). Version 2 adds the receiver's reorder buffer and
# the SACK bitmap in ACK frames (selective repeat); version 3 sends the frames of a
# session in format 2 (CRC-32). Every version talks to an older peer.
PROTOCOL_VERSION = 3
PROTOCOL_VERSIONS = (1, 2, 3)
FLAG_RELIABLE = 0x01
FLAG_NAK = 0x02
FLAGS_KNOWN = FLAG_RELIABLE | FLAG_NAK
HEADER_LEN = 6
CRC_LEN = 2
HEADER2_LEN = 4
CRC2_LEN = 4
MAX_PAYLOAD = 48
MIN_FRAME = HEADER_LEN + CRC_LEN
MAX_FRAME = HEADER_LEN + MAX_PAYLOAD + CRC_LEN
# COBS adds one byte per 254 (frames here are < 254 bytes: exactly one), plus the delimiter.
MAX_ENCODED = MAX_FRAME + 1
DELIMITER = 0


def _make_crc_table():
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return table


_CRC_TABLE = _make_crc_table()


def _make_crc32_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xEDB88320 if crc & 1 else crc >> 1
        table.append(crc)
    return table


def crc32_py(data, crc=0):
    """CRC-32/ISO-HDLC (zlib's) in pure Python, for builds without ``binascii.crc32``."""
    global _CRC32_TABLE
    if _CRC32_TABLE is None:
        _CRC32_TABLE = _make_crc32_table()
    table = _CRC32_TABLE
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = (crc >> 8) ^ table[(crc ^ b) & 0xFF]
    return crc ^ 0xFFFFFFFF


_CRC32_TABLE = None           # built at the first use of crc32_py
if _crc32 is None:  # pragma: no cover
    _crc32 = crc32_py


def crc32(data):
    """CRC-32/ISO-HDLC of ``data`` (bytes-like), as zlib computes it; an int.

    Check value: ``crc32(b"123456789") == 0xCBF43926``.
    """
    return _crc32(bytes(data)) & 0xFFFFFFFF


def frame_format(version):
    """The frame format (1 or 2) of a session of protocol ``version``."""
    return 2 if version >= 3 else 1


def frame_formats(version):
    """The frame formats accepted in a session of protocol ``version`` (a tuple)."""
    return (2,) if version >= 3 else (1,)


def crc16(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE of ``data`` (bytes-like); returns an int 0..65535.

    Check value: ``crc16(b"123456789") == 0x29B1``.
    """
    table = _CRC_TABLE
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ b) & 0xFF]
    return crc


def cobs_encode_py(data):
    """Consistent Overhead Byte Stuffing encode (pure Python; output has no 0x00)."""
    out = bytearray(b"\x00")
    code_pos = 0
    code = 1
    for b in data:
        if b == 0:
            out[code_pos] = code
            code_pos = len(out)
            out.append(0)
            code = 1
        else:
            out.append(b)
            code += 1
            if code == 0xFF:
                out[code_pos] = code
                code_pos = len(out)
                out.append(0)
                code = 1
    out[code_pos] = code
    return bytes(out)


def cobs_decode_py(data):
    """COBS decode (pure Python). Raises ``ValueError`` on a malformed block."""
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise ValueError("zero byte inside COBS block")
        i += 1
        end = i + code - 1
        if end > n:
            raise ValueError("COBS block truncated")
        chunk = data[i:end]
        if 0 in chunk:
            raise ValueError("zero byte inside COBS block")
        out += chunk
        i = end
        if code < 0xFF and i < n:
            out.append(0)
    return bytes(out)


if _cobs_pkg is not None:
    _cobs_encode = _cobs_pkg.encode

    def _cobs_decode(data):
        try:
            return _cobs_pkg.decode(bytes(data))
        except _cobs_pkg.DecodeError as exc:
            raise ValueError(str(exc)) from None
else:  # pragma: no cover
    _cobs_encode = cobs_encode_py
    _cobs_decode = cobs_decode_py


def encode_frame(flags, seq, ack, mtype, payload=b"", fmt=1):
    """Build one wire frame, COBS-encoded and terminated by the 0x00 delimiter.

    Args:
        flags: FLAG_* bits (0..3); seq, ack: 0..255; mtype: message type 0..255;
        payload: bytes, at most MAX_PAYLOAD (48) bytes; fmt: frame format, 1 (CRC-16)
        or 2 (CRC-32, protocol version 3).
    Returns:
        bytes, between MIN_FRAME + 2 and MAX_ENCODED + 1 bytes long (both formats
        have the same size).
    Raises:
        ValueError: a field is out of range (the device side cannot import the
        host's exception classes; the host wraps this as FrameError).
    """
    n = len(payload)
    if n > MAX_PAYLOAD:
        raise ValueError("payload of %d bytes exceeds the maximum of %d" % (n, MAX_PAYLOAD))
    if flags & ~FLAGS_KNOWN or not (0 <= seq <= 255 and 0 <= ack <= 255 and 0 <= mtype <= 255):
        raise ValueError("frame header field out of range")
    if fmt == 2:
        body = bytearray((MAGIC2 | flags, seq, ack, mtype))
        body += payload
        crc = crc32(body)
        body += bytes((crc >> 24, (crc >> 16) & 0xFF, (crc >> 8) & 0xFF, crc & 0xFF))
        return _cobs_encode(bytes(body)) + b"\x00"
    body = bytearray((MAGIC, flags, seq, ack, mtype, n))
    body += payload
    crc = crc16(body)
    body.append(crc >> 8)
    body.append(crc & 0xFF)
    return _cobs_encode(bytes(body)) + b"\x00"


def encoded_size(payload_len):
    """Bytes on the wire for a frame with ``payload_len`` payload bytes (COBS + delimiter)."""
    return HEADER_LEN + payload_len + CRC_LEN + 1 + 1


class FrameDecoder:
    """Incremental frame parser: bytes in, validated frames out.

    Holds at most MAX_ENCODED bytes. A chunk between delimiters is accepted only when
    it COBS-decodes and, in format 1, starts with MAGIC, has no unknown flag bits, its
    LEN equals the actual payload length, and the CRC-16 matches; in format 2, its first
    byte is MAGIC2 with flags, its length is 8..56 and the CRC-32 matches. Anything else
    is dropped and counted; the parser resynchronises at the next 0x00.

    ``formats``: the frame formats accepted (a session of version 3: (2,)); a frame of
    format 1 outside them is still accepted when its TYPE is in ``control_types`` (an
    unreliable frame that any peer must read: the handshake, NO_SESSION and the
    heartbeat of a device without a session); the caller sees its format in
    :meth:`feed_frames`. Anything else is counted in ``bad_magic``.

    Counters (ints): ``frames`` accepted, ``frame_bytes`` (their bytes on the wire),
    ``cobs_errors``, ``bad_magic``, ``bad_flags``, ``bad_length`` (truncated or LEN
    inconsistent), ``crc_errors``, ``oversized`` (more than MAX_ENCODED bytes without a
    delimiter), ``noise_bytes`` (bytes discarded).
    """

    def __init__(self, formats=(1, 2), control_types=(0x01, 0x02, 0x04, 0x06)):
        self._buf = bytearray()
        self._overflow = False
        self.formats = formats
        self.control_types = control_types
        self.frames = 0
        self.frame_bytes = 0
        self.cobs_errors = 0
        self.bad_magic = 0
        self.bad_flags = 0
        self.bad_length = 0
        self.crc_errors = 0
        self.oversized = 0
        self.noise_bytes = 0

    def errors(self):
        """Total number of rejected chunks."""
        return (self.cobs_errors + self.bad_magic + self.bad_flags + self.bad_length
                + self.crc_errors + self.oversized)

    def feed(self, data):
        """Parse ``data`` (bytes-like); returns a list of frame tuples
        ``(flags, seq, ack, type, payload)``, possibly empty. Never raises on bad input."""
        return [f[1:] for f in self.feed_frames(data)]

    def feed_frames(self, data):
        """As :meth:`feed`, with the frame format first: ``(format, flags, seq, ack,
        type, payload)``."""
        if not isinstance(data, (bytes, bytearray)):
            data = bytes(data)
        out = []
        buf = self._buf
        start = 0
        n = len(data)
        while start < n:
            end = data.find(b"\x00", start)
            if end < 0:
                piece = data[start:]
                if self._overflow:
                    self.noise_bytes += len(piece)
                elif len(buf) + len(piece) > MAX_ENCODED:
                    self.oversized += 1
                    self.noise_bytes += len(buf) + len(piece)
                    buf[:] = b""
                    self._overflow = True
                else:
                    buf += piece
                break
            piece = data[start:end]
            start = end + 1
            if self._overflow:
                self.noise_bytes += len(piece)
                self._overflow = False
                continue
            if len(buf) + len(piece) > MAX_ENCODED:
                self.oversized += 1
                self.noise_bytes += len(buf) + len(piece)
                buf[:] = b""
                continue
            buf += piece
            if buf:
                frame = self._parse(bytes(buf))
                if frame is not None:
                    out.append(frame)
                buf[:] = b""
        return out

    def _parse(self, chunk):
        try:
            body = _cobs_decode(chunk)
        except ValueError:
            self.cobs_errors += 1
            self.noise_bytes += len(chunk)
            return None
        if body and (body[0] & 0xFC) == MAGIC2:
            return self._parse2(chunk, body)
        if len(body) < MIN_FRAME:
            self.bad_length += 1
            self.noise_bytes += len(chunk)
            return None
        if body[0] != MAGIC:
            self.bad_magic += 1
            self.noise_bytes += len(chunk)
            return None
        if body[1] & ~FLAGS_KNOWN:
            self.bad_flags += 1
            self.noise_bytes += len(chunk)
            return None
        length = body[5]
        if length > MAX_PAYLOAD or len(body) != HEADER_LEN + length + CRC_LEN:
            self.bad_length += 1
            self.noise_bytes += len(chunk)
            return None
        if crc16(body[:-2]) != ((body[-2] << 8) | body[-1]):
            self.crc_errors += 1
            self.noise_bytes += len(chunk)
            return None
        if 1 not in self.formats and (body[1] & FLAG_RELIABLE
                                      or body[4] not in self.control_types):
            self.bad_magic += 1
            self.noise_bytes += len(chunk)
            return None
        self.frames += 1
        self.frame_bytes += len(chunk) + 1
        return (1, body[1], body[2], body[3], body[4], body[6:-2])

    def _parse2(self, chunk, body):
        n = len(body)
        if n < HEADER2_LEN + CRC2_LEN or n > HEADER2_LEN + MAX_PAYLOAD + CRC2_LEN:
            self.bad_length += 1
            self.noise_bytes += len(chunk)
            return None
        if crc32(body[:-4]) != ((body[-4] << 24) | (body[-3] << 16) | (body[-2] << 8)
                                | body[-1]):
            self.crc_errors += 1
            self.noise_bytes += len(chunk)
            return None
        if 2 not in self.formats:
            self.bad_magic += 1
            self.noise_bytes += len(chunk)
            return None
        self.frames += 1
        self.frame_bytes += len(chunk) + 1
        return (2, body[0] & FLAGS_KNOWN, body[1], body[2], body[3], body[4:-4])
