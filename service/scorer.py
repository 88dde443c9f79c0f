"""Scoring at the table: a hand string, or a photo (uploaded or from the camera) read by the camera
pipeline (``vision``), then scored (``scoring``); legal wins can be recorded on the session's
score sheet (the event log).

The recognizer (the two ONNX models) is loaded once, in the background at start-up, and used by
one request at a time.
"""

from __future__ import annotations

import base64
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from .errors import ServiceError


class Scorer:
    """The camera pipeline and the scorer.

    Args:
        camera_image: a picture file used as the camera (None: none).
        camera_source: ``"picamera"`` or ``"usb"`` for a live camera (None: none).
        camera_device: the USB camera's index.
    """

    def __init__(self, camera_image: Path | None = None, camera_source: str | None = None,
                 camera_device: int = 0) -> None:
        self.camera_image = camera_image
        self.camera_source = camera_source
        self.camera_device = camera_device
        self._rec = None
        self._lock = threading.Lock()
        self.load_error: str | None = None

    # -- the pipeline --
    def load(self) -> None:
        """Load the recognizer now (idempotent). Errors are kept in ``load_error``."""
        with self._lock:
            self._load()

    def _load(self):
        if self._rec is None:
            from vision import Recognizer, VisionError
            try:
                self._rec = Recognizer()
                self.load_error = None
            except VisionError as e:
                self.load_error = f"{e.code}: {e.message}"
                raise ServiceError(f"the camera pipeline cannot load its models: {e.message}", 503, "vision") from None
        return self._rec

    @property
    def loaded(self) -> bool:
        return self._rec is not None

    def decode(self, data: bytes, filename: str = "upload") -> Any:
        """An uploaded file as an image (HxWx3 BGR). Raises ServiceError 415 when it is not one, 413
        when it is a picture of more than ``vision.capture.MAX_PIXELS`` pixels."""
        from vision import VisionError, read_image
        if not data:
            raise ServiceError(f"{filename} is empty (0 bytes): send a JPEG or PNG photo", 415, "not-an-image")
        fd, tmp = tempfile.mkstemp(prefix="mjtable-photo-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            return read_image(tmp)
        except VisionError as e:
            if e.code == "too-large":  # the message names the temporary file: name the upload instead
                raise ServiceError(e.message.replace(tmp, filename), 413, "too-large") from None
            raise ServiceError(f"{filename} is not an image the camera pipeline can read: send a JPEG or PNG photo",
                               415, "not-an-image") from None
        finally:
            os.unlink(tmp)

    def capture(self) -> Any:
        """A picture from the table's camera. Raises ServiceError 404 when there is no camera."""
        from vision import VisionError, read_image
        try:
            if self.camera_image is not None:
                return read_image(self.camera_image)
            if self.camera_source is not None:
                import vision
                cam = vision.open_camera(vision.CaptureConfig.from_mapping(
                    {"source": self.camera_source, "device": self.camera_device}))
                try:
                    return cam.read()
                finally:
                    cam.close()
        except VisionError as e:
            raise ServiceError(f"camera: {e.message}", 503, "camera") from None
        raise ServiceError("no camera configured: set [camera] image or source in table.toml, or upload a photo",
                           404, "no-camera")

    def recognize(self, image) -> dict[str, Any]:
        """Recognise the tiles: ``{"recognition": {...}, "annotated": data URL of a PNG}``."""
        import cv2

        from vision import VisionError, annotate
        with self._lock:
            rec = self._load()
            try:
                result = rec.recognize(image)
            except VisionError as e:
                raise ServiceError(f"{e.code}: {e.message}", 422, "vision") from None
        ok, png = cv2.imencode(".png", annotate(image, result))
        url = "data:image/png;base64," + base64.b64encode(png.tobytes()).decode() if ok else None
        return {"recognition": result.to_dict(), "annotated": url, "_result": result}


def score(hand: str, opts: dict[str, Any]) -> Any:
    """``scoring.score_hand`` with the request's options. Raises ServiceError 422 on a bad hand."""
    from scoring import score_hand
    return _scoring(score_hand, hand, **opts)


def analyse(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """``"waits"`` (``scoring.analysis.find_waits``) or ``"shanten"`` (``analyse_shanten``) of a request
    body ``{"hand", "seen", options...}``, as JSON data. Raises ServiceError 422 on a bad hand."""
    from scoring.analysis import analyse_shanten, find_waits
    fn = find_waits if kind == "waits" else analyse_shanten
    return _scoring(fn, **body).to_dict()


def _scoring(fn, *args, **kwargs) -> Any:
    from scoring import ScoringError
    try:
        return fn(*args, **kwargs)
    except ScoringError as e:
        raise ServiceError(f"{e.code}: {e.message}", 422, e.code) from None
