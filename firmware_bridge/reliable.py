"""Reliable delivery over the frame layer: sequence numbers, cumulative acks,
go-back-N retransmission with an adaptive timeout, NAK fast retransmit, duplicate
suppression and in-order delivery.

Shared by both sides and written to port to MicroPython: no threads, no dataclasses,
time passed in as milliseconds (int or float), every buffer bounded.

Sender: at most ``window`` reliable frames are unacknowledged at once (``window`` <= 127,
so an 8-bit sequence number is never ambiguous). The oldest unacknowledged frame is
retransmitted, together with every frame after it, when its retransmission timeout
(RTO) expires or when the peer sends a NAK for it. RTO = SRTT + 4 * RTTVAR (RFC 6298,
Karn's rule: no sample from a retransmitted frame), clamped to [min_rto_ms, max_rto_ms],
doubled on every timeout. After ``max_retries`` retransmissions of the same frame the
endpoint fails (``failed`` holds the reason); ``max_retries=None`` never gives up (the
device side uses that, so that a fault queued while the host was away is still
delivered when it returns).

Receiver: accepts only SEQ == expected (in order). An older SEQ is a duplicate: dropped
(never delivered twice) and re-acknowledged. A newer SEQ means a frame was lost: dropped
and answered with a NAK, once per gap.
"""

WINDOW_DEFAULT = 16


class ReliableEndpoint:
    """One end of the reliable channel.

    Args:
        window: maximum unacknowledged reliable frames (1..127).
        queue_max: maximum reliable frames queued or in flight (bounded memory).
        initial_rto_ms, min_rto_ms, max_rto_ms: retransmission timeout bounds (ms).
        max_retries: retransmissions of one frame before failing, or None for never.
        nak_holdoff_ms: minimum time between two NAKs for the same gap.
    """

    def __init__(self, window=WINDOW_DEFAULT, queue_max=64, initial_rto_ms=100.0,
                 min_rto_ms=15.0, max_rto_ms=1000.0, max_retries=12, nak_holdoff_ms=50.0):
        if not 1 <= window <= 127:
            raise ValueError("window must be 1..127, got %r" % (window,))
        self.window = window
        self.queue_max = queue_max
        self.initial_rto_ms = initial_rto_ms
        self.min_rto_ms = min_rto_ms
        self.max_rto_ms = max_rto_ms
        self.max_retries = max_retries
        self.nak_holdoff_ms = nak_holdoff_ms
        # statistics survive reset()
        self.sent_new = 0
        self.retransmitted = 0
        self.delivered = 0
        self.duplicates = 0
        self.out_of_order = 0
        self.naks_sent = 0
        self.naks_received = 0
        self.reset()

    def reset(self):
        """Start a new session: sequence numbers back to 0, queues emptied."""
        self.next_seq = 0          # seq of the next new frame
        self.expected = 0          # next seq we expect from the peer
        self._queue = []           # [mtype, payload] not yet sent
        self._inflight = []        # [seq, mtype, payload, sent_at, retries]
        self._retx_all = False     # retransmit the whole window at next output
        self._retx_next = None     # index in _inflight of the next frame to retransmit
        self._ack_due = False
        self._nak_due = False
        self._nak_for = -1
        self._nak_at = -1e18
        self.srtt = None
        self.rttvar = 0.0
        self.rto = self.initial_rto_ms
        self.failed = None

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

    def drop_unsent(self):
        """Forget everything queued or in flight (used when the session is torn down);
        returns the list of (mtype, payload) that were dropped, oldest first."""
        dropped = [(f[1], f[2]) for f in self._inflight] + [(q[0], q[1]) for q in self._queue]
        self._inflight = []
        self._queue = []
        return dropped

    # ---------------------------------------------------------------- receiving
    def on_frame(self, flags, seq, ack, now, accept=True):
        """Process the header of a valid incoming frame.

        Args:
            flags, seq, ack: header fields; now: time in ms;
            accept: False to refuse a new in-order reliable frame for lack of room
                (it is neither delivered nor acknowledged, so the peer retransmits it).
        Returns:
            True when the frame's message must be delivered to the application (a new
            reliable frame in order, or any unreliable frame); False for a duplicate, an
            out-of-order frame, or a refused one.
        """
        self._process_ack(ack, now, flags & 0x02)
        if not flags & 0x01:
            return True
        if seq == self.expected:
            if not accept:
                return False
            self.expected = (self.expected + 1) & 0xFF
            self.delivered += 1
            self._ack_due = True
            self._nak_due = False
            return True
        if ((self.expected - seq) & 0xFF) <= 128:
            self.duplicates += 1
            self._ack_due = True
            return False
        self.out_of_order += 1
        self._ack_due = True
        if self._nak_for != self.expected or now - self._nak_at >= self.nak_holdoff_ms:
            self._nak_due = True
            self._nak_for = self.expected
            self._nak_at = now
        return False

    def _process_ack(self, ack, now, nak):
        inflight = self._inflight
        if inflight:
            d = (ack - inflight[0][0]) & 0xFF
            if 0 < d <= len(inflight):
                newest = inflight[d - 1]
                if newest[4] == 0:
                    self._sample_rtt(now - newest[3])
                del inflight[:d]
                if self._retx_next is not None:
                    self._retx_next = max(0, self._retx_next - d)
        if nak:
            self.naks_received += 1
            if inflight and inflight[0][0] == ack:
                srtt = self.srtt if self.srtt is not None else self.min_rto_ms
                if now - inflight[0][3] >= srtt * 0.5:
                    self._retx_all = True

    def _sample_rtt(self, rtt):
        if rtt < 0:
            return
        if self.srtt is None:
            self.srtt = rtt
            self.rttvar = rtt / 2
        else:
            err = rtt - self.srtt
            self.srtt += err / 8
            self.rttvar += (abs(err) - self.rttvar) / 4
        rto = self.srtt + 4 * self.rttvar
        self.rto = min(self.max_rto_ms, max(self.min_rto_ms, rto))

    # ------------------------------------------------------------------- output
    def check_timeout(self, now):
        """Check the retransmission timer; call on every tick. Returns the failure
        reason (str) once the retry budget is exhausted, else None."""
        if self.failed is not None:
            return self.failed
        inflight = self._inflight
        if inflight and now - inflight[0][3] >= self.rto:
            if self.max_retries is not None and inflight[0][4] >= self.max_retries:
                self.failed = ("no acknowledgement after %d retransmissions of frame %d"
                               % (inflight[0][4], inflight[0][0]))
                return self.failed
            self._retx_all = True
            self.rto = min(self.max_rto_ms, self.rto * 2)
        return None

    def outgoing(self, now, budget=1 << 30):
        """Reliable frames to put on the wire now, as a list of
        ``(flags, seq, ack, mtype, payload)``; at most ``budget`` frames.

        Retransmissions first (resumed at the next call if the budget cut them short),
        then new frames while the window allows. Every frame
        carries the current cumulative ACK (and NAK when due).
        """
        out = []
        if self.failed is not None:
            return out
        inflight = self._inflight
        if self._retx_all:
            self._retx_all = False
            self._retx_next = 0
        while self._retx_next is not None and len(out) < budget:
            if self._retx_next >= len(inflight):
                self._retx_next = None
                break
            f = inflight[self._retx_next]
            self._retx_next += 1
            f[3] = now
            f[4] += 1
            self.retransmitted += 1
            out.append((0x01 | self._take_nak(), f[0], self.expected, f[1], f[2]))
        if self._retx_next is not None:
            if out:
                self._ack_due = False
            return out
        queue = self._queue
        while queue and len(inflight) < self.window and len(out) < budget:
            mtype, payload = queue.pop(0)
            seq = self.next_seq
            self.next_seq = (seq + 1) & 0xFF
            inflight.append([seq, mtype, payload, now, 0])
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
        """True when an ACK (or NAK) must be sent even if there is no data frame."""
        return self._ack_due or self._nak_due

    def header_for_unreliable(self):
        """(flags, seq, ack) for an unreliable frame sent now; it carries the ACK."""
        self._ack_due = False
        return (self._take_nak(), 0, self.expected)
