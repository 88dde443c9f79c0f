"""The serial link between the Pi and the table's microcontroller.

Host side: :class:`HostLink` (threaded, blocking calls) over :class:`HostProtocol`
(pure engine). Device side: :class:`DeviceEngine` driving a :class:`Machine`.
See ``docs/protocol.md`` for the wire format and the message catalogue.
"""

import sys

from .device import DeviceEngine

if sys.implementation.name != "micropython":
    # The host side (threads, dataclasses, pyserial) and the codec of the table's vocabulary
    # (table_vocabulary: the goal commands and events are packed and unpacked as they are). Under
    # MicroPython (firmware/rp2040) the package holds only the device side: wire, reliable,
    # catalogue, motion, executor, device, machine.
    from .errors import (CommandRejected, FrameError, HandshakeError, LinkDown,
                         LinkError, LinkTimeout, PeerReset, TransportError)
    from .host import (CommandFailed, Connected, HostLink, HostProtocol, LinkLost, LinkStats,
                       McuReset, PendingCommand)
    from .machine import FakeMachine, Machine
    from .codec import DeviceHeartbeat, DeviceInfo, decode_event, pack_command
    from .transport import DeviceRunner, PacedPort, open_port, pty_pair

    __all__ = [name for name in dir() if not name.startswith("_") and name != "sys"]
