"""Reliable delivery over the frame layer: sequence numbers, cumulative and selective
acks, selective-repeat retransmission with an adaptive timeout, duplicate suppression
and in-order delivery from a bounded reorder buffer (protocol version 2).

Shared by both sides and written to port to MicroPython: no threads, no dataclasses,
time passed in as milliseconds (int or float), every buffer bounded.

Sender: at most ``window`` reliable frames are unacknowledged at once (``window`` <= 127,
so an 8-bit sequence number is never ambiguous). A frame is acknowledged by the
cumulative ACK byte of any frame, or selectively by the SACK bitmap an ACK frame may
carry (``sack``: bit i = frame ACK + 1 + i is held by the peer). Only frames that are
neither acknowledged nor SACKed are ever retransmitted:

* fast retransmit: the line is FIFO, so a frame is lost as soon as a frame transmitted
  after it has been acknowledged (cumulatively or selectively); every transmission gets
  a serial number to tell which went first. A NAK naming the oldest frame also
  retransmits it (if it was sent at least SRTT/2 ago).
* timeout: a frame that has waited RTO since its last transmission is sent again.
  RTO = SRTT + 4 * RTTVAR (RFC 6298, Karn's rule: no sample from a retransmitted frame),
  clamped to [min_rto_ms, max_rto_ms], each sample clipped to twice the floor (smallest)
  of the recent samples plus a slack, and the RTO to four times that floor plus the
  slack (a sample delayed by a lost acknowledgement measures the loss, not the line);
  doubled when an already retransmitted frame times out again *and
  nothing at all has been heard from the peer for* ``silence_ms`` (the peer seems away).
  A serial line has no congestion: while the peer's frames keep arriving, repeated
  losses are noise, and backing off would only stretch every recovery (at 3 % byte noise
  the doubling had driven the RTO to 800 ms and the throughput to a quarter).

After ``max_retries`` retransmissions of the same frame the endpoint fails (``failed``
holds the reason); ``max_retries=None`` never gives up (the device side uses that, so
that a fault queued while the host was away is still delivered when it returns).

Against a version-1 peer (go-back-N receiver: it drops out-of-order frames and never
sends SACK) the same rules degrade to go-back-N: after the gap's retransmission is
acknowledged, the frames sent before it are known lost and are resent.

Receiver: a frame with SEQ == expected is delivered at once; a frame up to
``rx_window - 1`` ahead is kept in the reorder buffer (at most ``rx_window`` frames)
and delivered, in order, by :meth:`pop_ready` once the gap before it is filled. An older
SEQ is a duplicate: dropped (never delivered twice) and re-acknowledged. A gap is
answered with a NAK (once per gap, again after ``nak_holdoff_ms``) and, while frames are
held out of order, with an ACK frame carrying the SACK bitmap (:meth:`sack_payload`).
"""

WINDOW_DEFAULT = 16
RTT_WINDOW = 16            # samples over which the RTT floor is taken
RTT_SLACK_MS = 15          # a sample counts up to 2 * floor + this (ms): round-trip jitter
RTO_FLOOR_FACTOR = 4       # the RTO is at most this * floor + RTT_SLACK_MS
RX_WINDOW_DEFAULT = 16

# in-flight entry fields (lists, not objects: cheap on MicroPython)
_SEQ = 0
_TYPE = 1
_PAYLOAD = 2
_SENT_AT = 3
_RETRIES = 4
_SACKED = 5
_TXNO = 6
_LOST = 7
_TXNO_PREV = 8     # serial number of the transmission before the last one


def _arrived_txno(f, now, floor):
    """Serial number of the transmission of in-flight frame ``f`` that an acknowledgement
    arriving at ``now`` (ms) proves arrived. For a retransmitted frame acknowledged sooner
    than the round-trip floor ``floor`` (ms) after its last transmission, that copy cannot
    have arrived yet: it was the one before (a timeout that was spurious, the peer only
    late). Taking the last copy's number then would mark every frame sent between the two
    copies lost and resend them all (measured: 155 needless retransmissions in 3 s of
    telemetry on a clean line, on a loaded machine)."""
    if f[_RETRIES] and now - f[_SENT_AT] < floor:
        return f[_TXNO_PREV]
    return f[_TXNO]


class ReliableEndpoint:
    """One end of the reliable channel.

    Args:
        window: maximum unacknowledged reliable frames (1..127).
        queue_max: maximum reliable frames queued or in flight (bounded memory).
        initial_rto_ms, min_rto_ms, max_rto_ms: retransmission timeout bounds (ms).
        max_retries: retransmissions of one frame before failing, or None for never.
        nak_holdoff_ms: minimum time between two NAKs for the same gap.
        rx_window: reorder buffer size in frames (1..32; 1 = in-order only, no SACK;
            above 16 only with ``sack_bytes`` 4).
        send_sack: put the SACK bitmap in ACK frames (False towards a version-1 peer).
        silence_ms: the RTO doubles on a repeated timeout only when nothing has been
            heard from the peer for this long (ms).
        byte_ms: time of one byte on the line (ms; 10 / baud * 1000), or None. When
            given, a frame's timer starts when its last byte has left (the bytes written
            before it counted, see :meth:`wrote`), so that waiting behind a window of
            frames on the line is neither taken for a loss nor put in the RTT.
    """

    def __init__(self, window=WINDOW_DEFAULT, queue_max=64, initial_rto_ms=100.0,
                 min_rto_ms=15.0, max_rto_ms=1000.0, max_retries=12, nak_holdoff_ms=50.0,
                 rx_window=RX_WINDOW_DEFAULT, send_sack=True, silence_ms=250.0,
                 byte_ms=None):
        if not 1 <= window <= 127:
            raise ValueError("window must be 1..127, got %r" % (window,))
        if not 1 <= rx_window <= 32:
            raise ValueError("rx_window must be 1..32, got %r" % (rx_window,))
        self.window = window
        self.queue_max = queue_max
        self.initial_rto_ms = initial_rto_ms
        self.min_rto_ms = min_rto_ms
        self.max_rto_ms = max_rto_ms
        self.max_retries = max_retries
        self.nak_holdoff_ms = nak_holdoff_ms
        self.rx_window = rx_window
        self.send_sack = send_sack
        self.sack_bytes = 2        # SACK bitmap width: 2 (16 frames) or 4 (version 3)
        self.silence_ms = silence_ms
        self.byte_ms = byte_ms
        self._wire_at = 0           # time (ms) of the last write counted ...
        self._wire_ahead = 0        # ... and the line time (ms) it still needed then
        # statistics survive reset()
        self.sent_new = 0
        self.retransmitted = 0
        self.fast_retransmits = 0
        self.timeouts = 0
        self.delivered = 0
        self.duplicates = 0
        self.out_of_order = 0       # frames received ahead of a gap (buffered or not)
        self.reordered = 0          # of those, kept in the reorder buffer
        self.naks_sent = 0
        self.naks_received = 0
        self.reset()

    def reset(self):
        """Start a new session: sequence numbers back to 0, queues emptied."""
        self.next_seq = 0          # seq of the next new frame
        self.expected = 0          # next seq we expect from the peer
        self._queue = []           # [mtype, payload] not yet sent
        self._inflight = []        # [seq, mtype, payload, sent_at, retries, sacked, txno, lost]
        self._nlost = 0            # in-flight frames marked for retransmission
        self._txno = 0             # serial number of the last transmission
        self._delivered_txno = -1  # highest serial number known to have arrived
        self._rx = {}              # reorder buffer: seq -> (mtype, payload)
        self._ack_due = False
        self._sack_due = False
        self._nak_due = False
        self._nak_for = -1
        self._nak_at = -1e18
        self.srtt = None
        self.rttvar = 0.0
        self._rtt_recent = []      # the last RTT_WINDOW samples (ms)
        self.rto = self.initial_rto_ms
        self.failed = None
        self.last_heard = None     # time (ms) of the last valid frame from the peer

    # ------------------------------------------------------------------ sending
    def pending(self):
        """Reliable frames queued or unacknowledged."""
        return len(self._queue) + len(self._inflight)

    def space(self):
        """How many more reliable frames can be queued now."""
        return self.queue_max - self.pending()

    def send(self, mtype, payload):
        """Queue a reliable message. Returns False (and queues nothing) when full."""
        if self.pending() >= self.queue_max:
            return False
        self._queue.append([mtype, bytes(payload)])
        return True

    def wrote(self, nbytes, now):
        """``nbytes`` other bytes (control and ACK frames) were written to the line at
        ``now`` (ms); only counted when ``byte_ms`` is set. Returns when they will
        have left (ms; for an int ``now``, the device's, rounded up to a whole ms).

        The line's state is kept relative to ``now``, as small numbers: the RP2040's
        MicroPython floats are 32-bit, and ms since boot plus a fraction of a ms loses
        the fraction after 4.7 hours of uptime (everything under 64 ms after 6 days)."""
        if self.byte_ms is None:
            return now
        ahead = self.backlog_ms(now) + nbytes * self.byte_ms
        self._wire_at = now
        self._wire_ahead = ahead
        if isinstance(now, int):
            whole = int(ahead)
            return now + (whole if whole == ahead else whole + 1)
        return now + ahead

    def backlog_ms(self, now):
        """Time (ms) the line still needs, at ``now``, for the bytes written so far
        (0 when ``byte_ms`` is not set)."""
        if self.byte_ms is None:
            return 0
        return max(0, self._wire_ahead - (now - self._wire_at))

    def unacknowledged(self):
        """``(in_flight, queued)``: the ``(mtype, payload)`` of the reliable frames sent
        and not cumulatively acknowledged (a SACKed frame is held by the peer, not yet
        delivered, so it counts here), and of those not sent yet; oldest first."""
        return ([(f[_TYPE], f[_PAYLOAD]) for f in self._inflight],
                [(q[0], q[1]) for q in self._queue])

    def drop_unsent(self):
        """Forget everything queued or in flight (used when the session is torn down);
        returns the list of (mtype, payload) that were dropped, oldest first."""
        dropped = [(f[1], f[2]) for f in self._inflight] + [(q[0], q[1]) for q in self._queue]
        self._inflight = []
        self._nlost = 0
        self._queue = []
        return dropped

    # ---------------------------------------------------------------- receiving
    def on_frame(self, flags, seq, ack, now, accept=True, msg=None, sack=None):
        """Process the header of a valid incoming frame.

        Args:
            flags, seq, ack: header fields; now: time in ms;
            accept: False to refuse a new in-order reliable frame for lack of room
                (it is not delivered now nor acknowledged; if ``msg`` is given it is
                kept and :meth:`pop_ready` hands it out later);
            msg: the frame's ``(mtype, payload)``, needed to keep a reliable frame that
                arrives ahead of a gap (without it such a frame is dropped, as in v1);
            sack: the SACK bitmap of an ACK frame (int), or None.
        Returns:
            True when the frame's message must be delivered to the application now (a
            new reliable frame in order, or any unreliable frame); False for a duplicate,
            a buffered or dropped out-of-order frame, or a refused one. After a True (or
            at any time) call :meth:`pop_ready` for buffered frames that became in order.
        """
        self.last_heard = now
        self._process_ack(ack, now, flags & 0x02, sack)
        if not flags & 0x01:
            return True
        rx = self._rx
        if seq == self.expected:
            if not accept:
                if msg is not None and seq not in rx:
                    rx[seq] = msg
                return False
            if rx:
                rx.pop(seq, None)
            self.expected = (seq + 1) & 0xFF
            self.delivered += 1
            self._ack_due = True
            self._nak_due = False
            if rx:
                self._sack_due = True
            return True
        ahead = (seq - self.expected) & 0xFF
        if ahead >= 128:
            self.duplicates += 1
            self._ack_due = True
            return False
        self._ack_due = True
        if seq in rx:
            self.duplicates += 1
        else:
            self.out_of_order += 1
            if msg is not None and ahead < self.rx_window:
                rx[seq] = msg
                self.reordered += 1
        if rx:
            self._sack_due = True
        if self._nak_for != self.expected or now - self._nak_at >= self.nak_holdoff_ms:
            self._nak_due = True
            self._nak_for = self.expected
            self._nak_at = now
        return False

    def pop_ready(self):
        """The next buffered message that is now in order, as ``(mtype, payload)``
        (it counts as delivered and will be acknowledged), or None."""
        rx = self._rx
        if not rx:
            return None
        msg = rx.pop(self.expected, None)
        if msg is None:
            return None
        self.expected = (self.expected + 1) & 0xFF
        self.delivered += 1
        self._ack_due = True
        return msg

    def sack_bitmap(self):
        """Bit i set: frame ``expected + 1 + i`` is held in the reorder buffer."""
        bits = 0
        exp = self.expected
        for seq in self._rx:
            i = ((seq - exp) & 0xFF) - 1
            if 0 <= i < 8 * self.sack_bytes:
                bits |= 1 << i
        return bits

    def sack_payload(self):
        """Payload for an ACK frame sent now: b"" or the SACK bitmap, u16 LE (or u32 LE
        when ``sack_bytes`` is 4 and a frame beyond the first 16 is held)."""
        self._sack_due = False
        if not self.send_sack or not self._rx:
            return b""
        bits = self.sack_bitmap()
        if not bits:
            return b""
        if bits >> 16:
            return bytes((bits & 0xFF, (bits >> 8) & 0xFF, (bits >> 16) & 0xFF, bits >> 24))
        return bytes((bits & 0xFF, bits >> 8))

    def _process_ack(self, ack, now, nak, sack):
        inflight = self._inflight
        if not inflight:
            if nak:
                self.naks_received += 1
            return
        newest = None
        floor = min(self._rtt_recent) if self._rtt_recent else 0
        d = (ack - inflight[0][_SEQ]) & 0xFF
        if 0 < d <= len(inflight):
            for f in inflight[:d]:
                self._delivered_txno = max(self._delivered_txno, _arrived_txno(f, now, floor))
                if f[_LOST]:
                    self._nlost -= 1
            newest = inflight[d - 1]
            if newest[_SACKED]:
                newest = None      # sampled (or not) when it was SACKed
            del inflight[:d]
        if sack:
            # bit i: the peer holds seq ack + 1 + i
            for f in inflight:
                i = ((f[_SEQ] - ack) & 0xFF) - 1
                if 0 <= i < 32 and (sack >> i) & 1 and not f[_SACKED]:
                    f[_SACKED] = True
                    if f[_LOST]:
                        f[_LOST] = False
                        self._nlost -= 1
                    self._delivered_txno = max(self._delivered_txno,
                                               _arrived_txno(f, now, floor))
                    if f[_RETRIES] == 0:
                        newest = f
        if newest is not None and newest[_RETRIES] == 0:
            self._sample_rtt(now - newest[_SENT_AT])
        # FIFO line: anything transmitted before a frame that arrived, and not itself
        # acknowledged, was lost
        dtx = self._delivered_txno
        for f in inflight:
            if f[_TXNO] >= dtx:
                break
            if not f[_SACKED] and not f[_LOST]:
                f[_LOST] = True
                self._nlost += 1
                self.fast_retransmits += 1
        if nak:
            self.naks_received += 1
            if inflight and inflight[0][_SEQ] == ack:
                f = inflight[0]
                srtt = self.srtt if self.srtt is not None else self.min_rto_ms
                if not f[_LOST] and not f[_SACKED] and now - f[_SENT_AT] >= srtt * 0.5:
                    f[_LOST] = True
                    self._nlost += 1
                    self.fast_retransmits += 1

    def _sample_rtt(self, rtt):
        if rtt < 0:
            return
        # A sample is taken when the acknowledgement arrives; when the frame that carried
        # it was lost, it arrives one of the peer's retransmissions later, and the sample
        # measures the loss, not the line. Clip each sample to twice the smallest of the
        # last RTT_WINDOW samples plus RTT_SLACK_MS: a real rise of the round trip lifts
        # that floor within RTT_WINDOW samples, a lost acknowledgement does not inflate
        # the RTO (it did to 100 ms at 5 % noise, 350 ms at 10 %).
        recent = self._rtt_recent
        recent.append(rtt)
        if len(recent) > RTT_WINDOW:
            recent.pop(0)
        rtt = min(rtt, 2 * min(recent) + RTT_SLACK_MS)
        if self.srtt is None:
            self.srtt = rtt
            self.rttvar = rtt / 2
        else:
            err = rtt - self.srtt
            self.srtt += err / 8
            self.rttvar += (abs(err) - self.rttvar) / 4
        # ... and the RTO itself to four times that floor plus the slack: on a bad line
        # few samples are clean, and the first ones set SRTT and RTTVAR high
        rto = min(self.srtt + 4 * self.rttvar, RTO_FLOOR_FACTOR * min(recent) + RTT_SLACK_MS)
        self.rto = min(self.max_rto_ms, max(self.min_rto_ms, rto))

    # ------------------------------------------------------------------- output
    def check_timeout(self, now):
        """Check the retransmission timers; call on every tick. Returns the failure
        reason (str) once the retry budget is exhausted, else None."""
        if self.failed is not None:
            return self.failed
        rto = self.rto
        if (self._queue and len(self._inflight) >= self.window and self._rtt_recent
                and now - self.last_heard < self.silence_ms):
            # Blocked: the window is full (of frames the peer holds, mostly, behind a
            # hole) and new frames wait. Nothing else will go on the line, so nothing
            # will reveal a lost retransmission: probe sooner, at twice the RTT floor
            # plus the slack (a spurious probe costs only idle line time).
            rto = min(rto, 2 * min(self._rtt_recent) + RTT_SLACK_MS)
        fired = backoff = False
        for f in self._inflight:
            if f[_SACKED] or f[_LOST] or now - f[_SENT_AT] < rto:
                continue
            if self.max_retries is not None and f[_RETRIES] >= self.max_retries:
                self.failed = ("no acknowledgement after %d retransmissions of frame %d"
                               % (f[_RETRIES], f[_SEQ]))
                return self.failed
            f[_LOST] = True
            self._nlost += 1
            fired = True
            if f[_RETRIES] and now - self.last_heard >= self.silence_ms:
                backoff = True
        if fired:
            self.timeouts += 1
        if backoff:
            # a point-to-point line has no congestion to back off from: only a frame timing
            # out again with the peer silent since it was sent (a peer away, or an RTT above
            # the RTO) doubles the RTO
            self.rto = min(self.max_rto_ms, self.rto * 2)
        return None

    def outgoing(self, now, budget=1 << 30):
        """Reliable frames to put on the wire now, as a list of
        ``(flags, seq, ack, mtype, payload)``; at most ``budget`` frames.

        Retransmissions of lost frames first (oldest first; the rest at the next call if
        the budget cut them short), then new frames while the window allows. Every frame
        carries the current cumulative ACK (and NAK when due).
        """
        out = []
        if self.failed is not None:
            return out
        if self.last_heard is None:
            self.last_heard = now  # the peer's silence counts from our first frame
        inflight = self._inflight
        if self._nlost:
            for f in inflight:
                if len(out) >= budget:
                    break
                if not f[_LOST]:
                    continue
                f[_LOST] = False
                self._nlost -= 1
                self._txno += 1
                f[_TXNO_PREV] = f[_TXNO]
                f[_TXNO] = self._txno
                f[_SENT_AT] = self.wrote(len(f[_PAYLOAD]) + 10, now)
                f[_RETRIES] += 1
                self.retransmitted += 1
                out.append((0x01 | self._take_nak(), f[_SEQ], self.expected, f[_TYPE],
                            f[_PAYLOAD]))
        queue = self._queue
        while queue and len(inflight) < self.window and len(out) < budget:
            mtype, payload = queue.pop(0)
            seq = self.next_seq
            self.next_seq = (seq + 1) & 0xFF
            self._txno += 1
            inflight.append([seq, mtype, payload, self.wrote(len(payload) + 10, now), 0,
                             False, self._txno, False, self._txno])
            self.sent_new += 1
            out.append((0x01 | self._take_nak(), seq, self.expected, mtype, payload))
        if out:
            self._ack_due = False
        return out

    def _take_nak(self):
        if self._nak_due:
            self._nak_due = False
            self.naks_sent += 1
            return 0x02
        return 0

    def ack_needed(self):
        """True when an ACK frame (or NAK) must be sent even if a data frame was sent:
        an acknowledgement is due, or a SACK bitmap must reach the peer."""
        return self._ack_due or self._nak_due or (self._sack_due and self.send_sack)

    def header_for_unreliable(self):
        """(flags, seq, ack) for an unreliable frame sent now; it carries the ACK."""
        self._ack_due = False
        return (self._take_nak(), 0, self.expected)
