"""The exception family of ``hardware``: catch :class:`HardwareError` for all of them."""

from __future__ import annotations

# The family's base and the goal commands' error live with the vocabulary (a leaf package that
# firmware_bridge's codec imports too); they are the hardware package's all the same.
from table_vocabulary import CommandError, HardwareError


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


__all__ = ["HardwareError", "ProfileError", "FaultSpecError", "BackendError", "HardwareTimeout",
           "BackendLinkError", "CommandError"]
