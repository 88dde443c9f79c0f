"""Scoring at the table: a hand string, or a photo (uploaded or from the camera) read by the camera
pipeline (``vision``) in a worker process (``service.photos``), then scored (``scoring``); legal
wins can be recorded on the session's score sheet (the event log).

The table's camera is opened at the first capture and kept open between captures at 2-4 MP
(``CAMERA_SIZE``), used by one request at a time (a lock), and closed after an error so that the
next capture opens it afresh.
"""

from __future__ import annotations

import collections
import secrets
import threading
from pathlib import Path
from typing import Any

from .errors import ServiceError
from .photos import PhotoReader

#: the live camera's frame size (px): 3 MP, the binned full-field mode of the Pi camera module 3
#: (4608x2592 sensor); enough to read tiles, a quarter of the sensor's pixels to move and decode
CAMERA_SIZE = (2304, 1296)
#: pictures taken for the camera's calibration kept in memory (a frame of CAMERA_SIZE is 9 MB)
KEEP_TAKEN = 4


class Scorer:
    """The camera, the photo reader and the scorer.

    Args:
        camera_image: a picture file used as the camera (None: none).
        camera_source: ``"picamera"`` or ``"usb"`` for a live camera (None: none).
        camera_device: the USB camera: an index N (``/dev/videoN``) or a device path
            (``/dev/video0``, ``/dev/v4l/by-id/usb-...-video-index0``, stable across re-plugging).
    """

    def __init__(self, camera_image: Path | None = None, camera_source: str | None = None,
                 camera_device: int | str = 0) -> None:
        self.camera_image = camera_image
        self.camera_source = camera_source
        self.camera_device = camera_device
        self.photos = PhotoReader()
        self._cam: Any = None
        self._cam_lock = threading.Lock()
        self._taken: collections.OrderedDict[str, tuple[bytes | None, Any]] = collections.OrderedDict()

    @property
    def has_camera(self) -> bool:
        """A table camera is configured (a live one, or a picture file standing in for it)."""
        return self.camera_image is not None or self.camera_source is not None

    # -- the pipeline --
    def load(self) -> None:
        """Start the photo reader and load its models now (idempotent). Raises ServiceError 503."""
        self.photos.load()

    @property
    def loaded(self) -> bool:
        return self.photos.loaded

    @property
    def load_error(self) -> str | None:
        return self.photos.load_error

    def read_upload(self, data: bytes, filename: str = "the upload", rules: str = "mcr",
                    min_confidence: float | None = None) -> dict[str, Any]:
        """Recognise the tiles of an uploaded picture (bytes in memory), the hand assembled for the
        rule system ``rules`` (``vision.assemble``: its hand size and flowers), the tiles read below
        ``min_confidence`` (the table's ``confirm-below``; None: the pipeline's default) listed:
        ``{"recognition": {...}, "annotated": URL of the annotated JPEG}``.
        Raises ServiceError: 413 (over ``vision.capture.MAX_PIXELS``), 415 (not an image), 503."""
        if not data:
            raise ServiceError(f"{filename} is empty (0 bytes): send a JPEG or PNG photo", 415, "not-an-image")
        return self.photos.read(data=data, name=filename, rules=rules, min_confidence=min_confidence)

    def read_camera(self, frames: int = 1, calibration: dict | None = None, rules: str = "mcr",
                    min_confidence: float | None = None) -> dict[str, Any]:
        """As ``read_upload``, from the table's camera: one picture, or ``frames`` (3-5) frames in a
        row read as one (voted per tile, ``PhotoReader.read_frames``); ``calibration``: the
        camera's stored view (``controller.settings.StoredSettings.camera``): read in it, the seat
        reported; ``rules``: the rule system whose hand is assembled; ``min_confidence``: the flag
        threshold. Raises ServiceError 404 with no camera, 503 when the camera fails (it is closed
        then, and opened afresh next time)."""
        if self.camera_image is not None:
            data = self._file_bytes(self.camera_image)
            return self.photos.read_frames([data] * frames, [None] * frames, [str(self.camera_image)] * frames,
                                           calibration, rules, min_confidence)
        images = [self.capture() for _ in range(frames)]
        return self.photos.read_frames([None] * frames, images, [f"the camera's frame {i + 1}" for i in range(frames)],
                                       calibration, rules, min_confidence)

    def take_picture(self) -> dict[str, Any]:
        """One picture from the table's camera, kept in memory (the last ``KEEP_TAKEN``) for the
        calibration step (``picture``): ``{"picture": key, "preview": URL of a small JPEG, "size":
        [w, h] px}``. Raises ServiceError 404 with no camera, 503 as ``capture``."""
        if self.camera_image is not None:
            data, image = self._file_bytes(self.camera_image), None
        else:
            data, image = None, self.capture()
        shown = self.photos.preview(data, image)
        key = secrets.token_urlsafe(9)
        with self._cam_lock:
            self._taken[key] = (data, image)
            while len(self._taken) > KEEP_TAKEN:
                self._taken.popitem(last=False)
        url = f"/api/score/photo/{shown['jpeg']}.jpg" if shown["jpeg"] is not None else None
        return {"picture": key, "preview": url, "size": shown["size"]}

    def picture(self, key: str) -> tuple[bytes | None, Any]:
        """A picture ``take_picture`` kept: (file bytes or None, frame or None). Raises ServiceError
        404 when it is not kept (any more)."""
        with self._cam_lock:
            got = self._taken.get(key)
        if got is None:
            raise ServiceError(f"no camera picture {key!r} is kept (only the last {KEEP_TAKEN} are): take it again",
                               404, "not-found")
        return got

    @staticmethod
    def _file_bytes(path: Path) -> bytes:
        try:
            return Path(path).read_bytes()
        except OSError as e:
            raise ServiceError(f"camera image {path}: {e.strerror}", 503, "camera") from None

    def capture(self) -> Any:
        """A frame (HxWx3 BGR) from the live camera, kept open between captures."""
        from vision import CaptureConfig, VisionError, open_camera
        if self.camera_source is None:
            raise ServiceError("no camera configured: set [camera] image or source in table.toml, or upload a "
                               "photo", 404, "no-camera")
        with self._cam_lock:
            try:
                if self._cam is None:
                    w, h = CAMERA_SIZE
                    self._cam = open_camera(CaptureConfig.from_mapping(
                        {"source": self.camera_source, "device": self.camera_device, "width": w, "height": h}))
                return self._cam.read()
            except VisionError as e:
                self._close_camera()
                raise ServiceError(f"camera: {e.message}", 503, "camera") from None

    def _close_camera(self) -> None:
        cam, self._cam = self._cam, None
        if cam is not None:
            cam.close()

    def close(self) -> None:
        """Close the camera and stop the photo reader."""
        with self._cam_lock:
            self._close_camera()
        self.photos.close()


def score(hand: str, options: dict[str, Any]) -> Any:
    """Score ``hand`` with a request's options by name (``controller.table_scoring.score_from_options``:
    the win options of ``scoring.WinContext.OPTIONS`` and ``rules``, as ``mjtable score``). Raises
    ServiceError 422 on a bad hand or option, with the command line's message."""
    from controller.table_scoring import score_from_options
    return _scoring(score_from_options, hand, options)


def score_photo(read, options: dict[str, Any], name: str) -> Any:
    """Read a photo (``read``: the recognition as plain data) and score it with a request's options
    (``controller.table_scoring.score_photo``, as ``mjtable score-photo``). Returns its ``PhotoScore``.
    Raises ServiceError 422 on a bad option (before the photo is read), and ``read``'s errors."""
    from controller.table_scoring import score_photo as use_case
    return _scoring(use_case, read, options, name)


def analyse(kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """``"waits"`` (``scoring.analysis.find_waits``) or ``"shanten"`` (``analyse_shanten``) of a request
    body ``{"hand", "seen", options...}``, as JSON data. Raises ServiceError 422 on a bad hand, its
    code the ScoringError's (``tile-count``, ``already-winning``, ``fifth-tile``...), with
    ``message_zh`` for the page (``match_api.scoring_error``)."""
    from scoring import ScoringError
    from scoring.analysis import analyse_shanten, find_waits

    from .match_api import ANALYSIS_ZH, scoring_error
    fn = find_waits if kind == "waits" else analyse_shanten
    try:
        return fn(**body).to_dict()
    except ScoringError as e:
        raise scoring_error(e, ANALYSIS_ZH) from None


def _scoring(fn, *args, **kwargs) -> Any:
    """``fn(*args, **kwargs)``; a ScoringError as the 422 of ``match_api.scoring_error`` (its code,
    "code: message", and ``message_zh`` for the page)."""
    from scoring import ScoringError

    from .match_api import scoring_error
    try:
        return fn(*args, **kwargs)
    except ScoringError as e:
        raise scoring_error(e) from None


def score_system(rules: str, hand: str, opts: dict[str, Any]) -> Any:
    """``scoring.systems.score`` (any registered rule system). Raises ServiceError 422 on a bad hand or option."""
    from scoring import systems
    opts = {k: v for k, v in opts.items() if k != "rules"}
    return _scoring(systems.score, rules, hand, opts)
