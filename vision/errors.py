"""The vision package's one exception family."""

from __future__ import annotations


class VisionError(Exception):
    """An image, camera, model or layout that the vision pipeline cannot handle.

    Attributes:
        code: stable machine-readable code, one of ``CODES``.
        message: one-line explanation naming what was wrong and what is allowed.
        message_zh: the same in Chinese where the package writes one (the table page shows it), or None.
    """

    CODES = (
        "unreadable-image",  # a file that is missing, empty or not a decodable image
        "too-large",         # a picture of more pixels than the pipeline decodes (capture.MAX_PIXELS)
        "bad-image",         # an array that is not an HxWx3 BGR uint8 image
        "no-tiles",          # nothing that looks like a tile was found
        "camera",            # a camera that cannot be opened or gives no frame
        "bad-config",        # an invalid capture configuration
        "model",             # a model file that is missing or cannot be loaded
        "layout",            # tiles found but they do not add up to a hand
        "unwritable-output",  # a picture to write (the --annotate one) whose place or format cannot be written
        "calibration",       # the table camera's calibration failed (no play area, no hand, an unknown seat)
    )

    def __init__(self, code: str, message: str, message_zh: str | None = None) -> None:
        if code not in self.CODES:  # programming error inside the package
            raise AssertionError(f"unknown VisionError code {code!r}")
        self.code = code
        self.message = message
        self.message_zh = message_zh
        super().__init__(message)
