"""The scoring package's one exception family.

Every error carries a stable ``code`` (for programs and the batch JSON output) and a message that
names what was wrong and what is allowed. Parsing errors also carry the 0-based ``position`` in the
hand string.
"""

from __future__ import annotations


class ScoringError(ValueError):
    """A hand, win context or rule option that cannot be scored.

    Attributes:
        code: stable machine-readable code, one of ``CODES``.
        message: one-line human explanation (English, with the Chinese term where useful).
        position: 0-based character offset in the hand string for notation errors, else ``None``.
    """

    CODES = (
        "syntax",               # malformed hand string (position given)
        "flower-in-hand",       # a flower written among the hand tiles
        "bad-meld",             # a bracketed group that is not a chow, pung or kong
        "tile-count",           # not 14 tiles (kongs counting as 3)
        "fifth-tile",           # more than four copies of one tile
        "not-winning",          # the tiles do not form a winning hand
        "contradictory-flags",  # win conditions that cannot all hold
        "bad-value",            # an option outside its allowed values
        "already-winning",      # a complete hand given where a hand still waiting is expected
    )

    def __init__(self, code: str, message: str, position: int | None = None) -> None:
        if code not in self.CODES:  # programming error inside the package
            raise AssertionError(f"unknown ScoringError code {code!r}")
        self.code = code
        self.message = message
        self.position = position
        super().__init__(message)

    def to_dict(self) -> dict:
        """The error as ``{"code", "message"}`` (plus ``"position"`` when known), for JSON output."""
        d: dict = {"code": self.code, "message": self.message}
        if self.position is not None:
            d["position"] = self.position
        return d
