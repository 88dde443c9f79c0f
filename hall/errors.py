"""The hall's exception family: one line for the user (the CLI prints ``message``)."""

from __future__ import annotations


class HallError(Exception):
    """The hall cannot do what was asked (bad configuration, database, broker settings)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
