"""The table service (``mjtable serve``): the controller, the camera pipeline and the scorer in one
process, with an HTTP API and a web page (FastAPI on uvicorn), live updates by server-sent events,
an event log in SQLite and a bearer token for every control or write request.

Pieces: ``errors`` (the one exception family), ``config`` (table.toml), ``auth`` (the token file),
``eventlog`` (SQLite, WAL), ``control`` (the control loop thread that owns the machine), ``hub``
(status snapshots to the pages), ``app`` (the FastAPI application), ``systemd`` (sd_notify),
``static/`` (the page: plain HTML, CSS and JavaScript, no build step).
"""

from .errors import ServiceError

__all__ = ["ServiceError"]
