"""The exception family of ``firmware_bridge``.

Every error the link raises derives from :class:`LinkError`, so a caller (the
controller, the CLI) can catch one class and print a one-line message.
"""

from __future__ import annotations


class LinkError(Exception):
    """Base class of every error raised by the firmware bridge."""


class FrameError(LinkError):
    """A frame could not be built (payload too long, field out of range)."""


class LinkTimeout(LinkError, TimeoutError):
    """The peer did not answer in time (handshake, reply, or retransmissions exhausted)."""


class LinkDown(LinkError):
    """The link is not connected (never opened, closed, or the peer was lost)."""


class PeerReset(LinkError):
    """The microcontroller rebooted (its boot counter changed) while a command was pending.

    Commands that were in flight when the reset was detected may or may not have been
    executed before the reset; the machine must be re-homed.
    """


class HandshakeError(LinkError):
    """The peer answered the handshake with an incompatible protocol version."""


class CommandRejected(LinkError):
    """The microcontroller received the command and refused it.

    Attributes:
        code: the :class:`~table_vocabulary.ReplyCode` sent by the device.
        cmd_id: the command's id.
    """

    def __init__(self, message: str, code: object, cmd_id: int) -> None:
        super().__init__(message)
        self.code = code
        self.cmd_id = cmd_id


class TransportError(LinkError):
    """The serial port could not be opened, read or written."""
