"""The serial link between the Pi and the table's microcontroller.

See ``docs/protocol.md`` for the wire format and the message catalogue.
"""
