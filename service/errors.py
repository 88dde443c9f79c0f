"""The service's one exception family."""

from __future__ import annotations


class ServiceError(Exception):
    """A request or a start-up the service cannot carry out.

    Attributes:
        message: one line naming what was wrong and what is allowed.
        status: the HTTP status the API answers with (409 wrong state, 400 bad request,
            404 not available, 413/415 bad upload, 503 busy/unavailable).
        code: a stable machine-readable code, e.g. ``"wrong-state"``.
    """

    def __init__(self, message: str, status: int = 400, code: str = "bad-request") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code


class WrongState(ServiceError):
    """The machine's state does not allow the request now (409)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 409, "wrong-state")


class ConfigError(ServiceError):
    """An invalid table.toml or option (the message names the key)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 400, "bad-config")
