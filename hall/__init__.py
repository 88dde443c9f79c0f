"""The hall: every table of a mahjong hall seen in one place (``mjtable hall``, issue #22).

The tables report to an MQTT broker (``service.mqtt``, ``docs/mqtt.md``); the hall subscribes
(``hall.subscriber``), keeps every table's state and history in its own database (SQLite, or PostgreSQL by URL)
(``hall.store``: duplicates dropped by event id), ranks the lifts whose travel is drifting
(``hall.maintenance``) and serves a token-protected page (``hall.app``).

Imports: ``service``'s shared pieces (config reading, token, guard) and ``scoring``; never the
controller or the hardware.
"""

from .errors import HallError

__all__ = ["HallError"]
