"""Frame format: CRC-16, COBS and the frame encoder/decoder.

This module is shared by the host and the device side. It is written so that it
ports to MicroPython on an RP2040 unchanged apart from imports: no dataclasses, no
typing at run time in the hot path, bounded buffers, plain ints and tuples.

Frame on the wire (see ``docs/protocol.md``)::

    COBS( MAGIC FLAGS SEQ ACK TYPE LEN PAYLOAD[LEN] CRC16_HI CRC16_LO ) 0x00

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

MAGIC = 0xA1
# Protocol version (HELLO / HELLO_ACK). The frame format (MAGIC) is the same in both:
# version 2 adds the receiver's reorder buffer and the SACK bitmap in ACK frames
# (selective repeat); a version-2 endpoint also talks to a version-1 peer.
PROTOCOL_VERSION = 2
PROTOCOL_VERSIONS = (1, 2)
FLAG_RELIABLE = 0x01
FLAG_NAK = 0x02
FLAGS_KNOWN = FLAG_RELIABLE | FLAG_NAK
HEADER_LEN = 6
CRC_LEN = 2
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


def encode_frame(flags, seq, ack, mtype, payload=b""):
    """Build one wire frame, COBS-encoded and terminated by the 0x00 delimiter.

    Args:
        flags: FLAG_* bits (0..3); seq, ack: 0..255; mtype: message type 0..255;
        payload: bytes, at most MAX_PAYLOAD (48) bytes.
    Returns:
        bytes, between MIN_FRAME + 2 and MAX_ENCODED + 1 bytes long.
    Raises:
        ValueError: a field is out of range (the device side cannot import the
        host's exception classes; the host wraps this as FrameError).
    """
    n = len(payload)
    if n > MAX_PAYLOAD:
        raise ValueError("payload of %d bytes exceeds the maximum of %d" % (n, MAX_PAYLOAD))
    if flags & ~FLAGS_KNOWN or not (0 <= seq <= 255 and 0 <= ack <= 255 and 0 <= mtype <= 255):
        raise ValueError("frame header field out of range")
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
    it COBS-decodes, starts with MAGIC, has no unknown flag bits, its LEN equals the
    actual payload length, and the CRC matches. Anything else is dropped and counted;
    the parser resynchronises at the next 0x00.

    Counters (ints): ``frames`` accepted, ``cobs_errors``, ``bad_magic``, ``bad_flags``,
    ``bad_length`` (truncated or LEN inconsistent), ``crc_errors``, ``oversized``
    (more than MAX_ENCODED bytes without a delimiter), ``noise_bytes`` (bytes discarded).
    """

    def __init__(self):
        self._buf = bytearray()
        self._overflow = False
        self.frames = 0
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
        self.frames += 1
        return (body[1], body[2], body[3], body[4], body[6:-2])
