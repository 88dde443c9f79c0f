"""The exception family of ``hardware``: catch :class:`HardwareError` for all of them."""

from __future__ import annotations


class HardwareError(Exception):
    """Base class of every error raised by the hardware package."""


class ProfileError(HardwareError, ValueError):
    """A machine profile is unreadable or has a bad value; the message names the key,
    the value found and what is allowed."""


class FaultSpecError(HardwareError, ValueError):
    """A fault specification (``KIND[:SIDE][:NAME=VALUE,...]``) names an unknown kind, side or
    parameter, a parameter outside its range, or a fault that does not apply to the chosen
    backend; the message lists what is allowed."""


class BackendError(HardwareError):
    """A backend could not be opened or used (pin factory, serial port, handshake)."""


class HardwareTimeout(HardwareError, TimeoutError):
    """``run_until`` reached its timeout (machine seconds) before the condition held."""


class BackendLinkError(BackendError):
    """The link to the table's board failed: the serial port could not be opened, the board did
    not answer, or a command could not be sent. The message names the port or the command and
    what was seen."""


class CommandError(HardwareError, ValueError):
    """A goal command was given a field outside what the table allows; the message names the
    field, the value given and what is allowed."""
