"""Photos are read in a worker process, so that a photo never stalls the control loop or the link.

One worker process (``spawn``: nothing of the service's threads or serial port is inherited)
loads the camera pipeline's models once, at start-up or at the first photo. It decodes an upload
from the bytes in memory (nothing is written to the SD card) at most about 12 MP
(``vision.decode_image``: a larger JPEG is decoded at 1/2, 1/4 or 1/8 by libjpeg, never whole),
recognises the tiles and returns the recognition with the annotated picture as a small JPEG (long
side ``ANNOTATED_LONG_SIDE`` px). The service keeps the last ``KEEP_ANNOTATED`` of these JPEGs in
memory only, served at ``/api/score/photo/{id}.jpg``.

One photo is read at a time; up to ``MAX_WAITING`` more wait their turn; beyond that a request is
refused at once (``Busy``, answered 503 with ``Retry-After``). Before issue #23 an 8192x6144
upload was decoded whole in the service process (516 MB peak) and came back as 58 MB of base64 PNG
in the JSON, whose encoding held the GIL for 109 ms.
"""

from __future__ import annotations

import collections
import concurrent.futures
import multiprocessing
import secrets
import threading
from typing import Any

from .errors import ServiceError

#: pixels of the long side of the annotated JPEG (each tile's label stays readable)
ANNOTATED_LONG_SIDE = 1600
JPEG_QUALITY = 85
#: pixels of the long side of a camera picture's preview (the calibration step shows it)
PREVIEW_LONG_SIDE = 800
#: annotated pictures kept in memory for their URL
KEEP_ANNOTATED = 8
#: photos that may wait while one is read; more are refused with 503 and Retry-After
MAX_WAITING = 2
#: seconds a refused client is told to wait
RETRY_AFTER_S = 5
#: seconds one photo may take in the worker (the models' first load included)
JOB_TIMEOUT_S = 120.0


class Busy(ServiceError):
    """Too many photos are being read: try again after ``retry_after`` seconds (503)."""

    def __init__(self, retry_after: int = RETRY_AFTER_S) -> None:
        super().__init__(f"{MAX_WAITING + 1} photos are being read already: try again in {retry_after} s",
                         503, "busy")
        self.retry_after = retry_after


# ---- the worker process's side ----
_REC: Any = None
_LOAD_ERROR: str | None = None


def _init_worker() -> None:
    """Load the models once per worker process (errors kept for the jobs to report)."""
    global _REC, _LOAD_ERROR
    from vision import Recognizer, VisionError
    try:
        _REC = Recognizer()
    except VisionError as e:
        _LOAD_ERROR = e.message


def _ping() -> str | None:
    """Nothing: a job that makes the worker start (and load the models); returns the load error."""
    return _LOAD_ERROR


def _frames_job(datas: list[bytes | None], images: list[Any], names: list[str],
                camera: dict | None = None, rules: str = "mcr", min_confidence: float | None = None) -> dict[str, Any]:
    """Decode (``datas[i]``, an upload) or take ``images[i]`` (a camera frame) per frame, recognise
    (the hand assembled for the rule system ``rules``, ``vision.assemble``; the tiles read below
    ``min_confidence``, the table's ``confirm-below`` setting, listed in ``uncertain``: this job's
    threshold only, the worker's recognizer is not changed; None: ``vision.assemble.MIN_CONFIDENCE``), annotate. One picture
    is read as it is; 3-5 frames of one hand are read as one (``vision.voting.capture_hand``:
    voted per tile; the recognition then has per tile ``votes``, ``seen`` and ``changed``, and
    ``frames`` and ``dropped``). ``names[i]``: the frame's name for the messages; ``camera``: the
    table camera's calibration (``vision.table_camera.TableCalibration.to_dict``): the frames are
    then read in its view, turned to the hand's seat, and the recognition has ``seat``.

    Returns ``{"ok": True, "recognition": Recognition.to_dict() with the boxes in the pixels of the
    picture annotated (the reference frame of the vote, or its view), "factor": decode reduction,
    "jpeg": bytes}`` or ``{"ok": False, "status", "code", "message"}``: plain values only, so that
    exceptions do not cross the process boundary and the service process never imports vision
    (OpenCV, numpy) to unpickle them.
    """
    from vision import VisionError, annotate, decode_image
    from vision.voting import capture_hand
    if _REC is None:
        return {"ok": False, "status": 503, "code": "vision",
                "message": f"the camera pipeline cannot load its models: {_LOAD_ERROR}"}
    factors = []
    try:
        frames = []
        for data, image, name in zip(datas, images, names):
            factor = 1
            if data is not None:
                image, factor = decode_image(data, name)
            frames.append(image)
            factors.append(factor)
        seat = None
        if camera is not None:
            from vision.table_camera import TableCalibration, seat_views
            frames, seat = seat_views(TableCalibration.from_dict(camera), frames, _REC.detector)
            factors = [1] * len(frames)  # the view's own pixels
        if len(frames) == 1:
            result = _REC.recognize(frames[0], rules, min_confidence)
            rec, picture, factor = result.to_dict(), frames[0], factors[0]
        else:
            if len(set(factors)) > 1:
                raise VisionError("bad-image", "the frames of a capture must be pictures of one size "
                                  f"(decoded at 1/{max(factors)} and 1/{min(factors)})")
            capture = capture_hand(_REC, frames, rules=rules, min_confidence=min_confidence)
            result, rec = capture.recognition, capture.to_dict()
            picture, factor = frames[capture.reference], factors[capture.reference]
    except VisionError as e:
        return _error(e, names[min(len(factors), len(names) - 1)])  # the frame being decoded
    del frames
    for t in rec["tiles"] + rec["uncertain"] + rec["gaps"] + rec.get("dropped", []):
        t["box"] = [v * factor for v in t["box"]]
    rec["image_size"] = [picture.shape[1] * factor, picture.shape[0] * factor]
    if camera is not None:
        rec["seat"] = seat
    out = annotate(picture, result, gaps=False)  # the page draws the gaps over the picture
    del picture
    if camera is not None:  # a view of the whole table: the part around the hand is what the player checks
        out = _around_hand(out, rec)
    return {"ok": True, "recognition": rec, "factor": factor, "jpeg": _jpeg(out)}


def _around_hand(out: Any, rec: dict[str, Any]) -> Any:
    """The part of ``out`` (the annotated view of the whole table) around the hand: the extent of
    every box of ``rec`` and one tile height (the median box height) round it. The boxes of ``rec``
    are moved into it, ``rec["image_size"]`` set to its size and ``rec["crop"]`` to where it lies
    in the view ``[x1, y1, x2, y2]`` px. No box: ``out`` as it is."""
    import numpy as np
    found = rec["tiles"] + rec["uncertain"] + rec["gaps"] + rec.get("dropped", [])
    if not found:
        return out
    b = np.array([t["box"] for t in found], dtype=np.float64)
    m = float(np.median(b[:, 3] - b[:, 1]))
    H, W = out.shape[:2]
    x1, y1 = max(0, int(b[:, 0].min() - m)), max(0, int(b[:, 1].min() - m))
    x2, y2 = min(W, int(np.ceil(b[:, 2].max() + m))), min(H, int(np.ceil(b[:, 3].max() + m)))
    for t in found:
        t["box"] = [t["box"][0] - x1, t["box"][1] - y1, t["box"][2] - x1, t["box"][3] - y1]
    rec["image_size"] = [x2 - x1, y2 - y1]
    rec["crop"] = [x1, y1, x2, y2]
    return out[y1:y2, x1:x2]


def _jpeg(image: Any, long_side: int = ANNOTATED_LONG_SIDE) -> bytes | None:
    """``image`` (HxWx3 BGR) as a JPEG of at most ``long_side`` px on its long side (None when it cannot be encoded)."""
    import cv2
    h, w = image.shape[:2]
    s = long_side / max(h, w)
    if s < 1:
        image = cv2.resize(image, (round(w * s), round(h * s)), interpolation=cv2.INTER_AREA)
    ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    return jpeg.tobytes() if ok else None


def _error(e: Any, name: str) -> dict[str, Any]:
    """A VisionError as a job's plain answer ``{"ok": False, "status", "code", "message", "message_zh"}``."""
    status, code = {"too-large": (413, "too-large"), "unreadable-image": (415, "not-an-image")}.get(
        e.code, (422, "calibration" if e.code == "calibration" else "vision"))
    message = e.message if e.code != "unreadable-image" else (
        f"{name} is not an image the camera pipeline can read: send a JPEG or PNG photo")
    return {"ok": False, "status": status, "code": code, "message": message,
            "message_zh": getattr(e, "message_zh", None)}


def _preview_job(data: bytes | None, image: Any, name: str) -> dict[str, Any]:
    """A picture taken by the table's camera (``data``: a file's bytes, or ``image``: a frame) as a
    small JPEG to show (long side ``PREVIEW_LONG_SIDE`` px): ``{"ok": True, "jpeg", "size": [w, h]}``,
    or ``{"ok": False, ...}`` as ``_frames_job``."""
    from vision import VisionError, decode_image
    try:
        if data is not None:
            image, factor = decode_image(data, name)
        else:
            factor = 1
    except VisionError as e:
        return _error(e, name)
    return {"ok": True, "jpeg": _jpeg(image, PREVIEW_LONG_SIDE),
            "size": [image.shape[1] * factor, image.shape[0] * factor]}


def _calibrate_job(datas: list[bytes | None], images: list[Any], names: list[str],
                   bottom_seat: str) -> dict[str, Any]:
    """Calibrate the table's camera from the empty table's picture and the laid-out hand's
    (``datas[i]``: upload bytes, or ``images[i]``: a camera frame; ``names``: theirs for the
    messages), by ``controller.camera_setup.calibrate_camera``, the use-case of ``mjtable camera
    calibrate``. Returns ``{"ok": True, "setup": CameraSetup.summary(), "jpeg": the drawn view}`` or
    ``{"ok": False, "status", "code", "message", "message_zh"}`` (422 ``calibration``: no play
    area, no tile, ...). Nothing is stored here: the service stores on its control thread."""
    from controller.camera_setup import calibrate_camera
    from vision import VisionError, decode_image
    if _REC is None:
        return {"ok": False, "status": 503, "code": "vision",
                "message": f"the camera pipeline cannot load its models: {_LOAD_ERROR}"}
    pictures: list[Any] = []
    try:
        for data, image, name in zip(datas, images, names):
            pictures.append(decode_image(data, name)[0] if data is not None else image)
        setup = calibrate_camera(pictures[0], pictures[1], _REC, bottom_seat)
    except VisionError as e:
        return _error(e, names[min(len(pictures), len(names) - 1)])
    return {"ok": True, "setup": setup.summary(), "jpeg": _jpeg(setup.view)}


def _assemble_job(tiles: list[dict[str, Any]], win: int | None, rules: str = "mcr") -> dict[str, Any]:
    """Assemble tiles the player has confirmed or corrected (``vision.assemble``) into a hand of the
    rule system ``rules`` (its hand size and flowers).

    ``tiles``: ``[{"tile", "box", "confidence", "sideways"}]`` in the picture's pixels. ``win``: the
    index of the tile the player marked as the winning one when it was not laid apart: it is read
    as if it lay apart (moved right of its row by two tile widths). Returns ``{"ok": True,
    "assembly": {"hand", "melds", "concealed", "winning_tile", "flowers", "uncertain", "problems",
    "notes"}}``, plain values."""
    from vision import DetectedTile, assemble
    found = [DetectedTile(t["tile"], tuple(float(v) for v in t["box"]), float(t["confidence"]), bool(t["sideways"]))
             for t in tiles]
    if win is not None:
        w = found[win]
        x1, y1, x2, y2 = w.box
        height, width = y2 - y1, x2 - x1
        row = [t for t in found if abs(t.centre[1] - w.centre[1]) < 0.6 * height and t is not w]
        right = max([t.box[2] for t in row] + [x2])
        left = right + 2 * min(width, height)
        found[win] = DetectedTile(w.tile, (left, y1, left + width, y2), w.confidence, w.sideways)
    a = assemble(found, rules=rules)
    return {"ok": True, "assembly": {
        "hand": a.hand, "melds": list(a.melds), "concealed": list(a.concealed), "winning_tile": a.win_tile,
        "flowers": list(a.flowers), "uncertain": [t.to_dict() for t in a.uncertain], "problems": list(a.problems),
        "notes": list(a.notes)}}


# ---- the service's side ----
class PhotoReader:
    """The worker process, the queue bound and the annotated pictures (thread-safe).

    ``read(data=..., name=...)`` or ``read(image=...)`` -> ``{"recognition": dict (as
    ``vision.Recognition.to_dict()``), "annotated": URL or None}``. Raises ServiceError: 413 too large, 415 not an image,
    422 recognition failed, 503 models missing, worker died or ``Busy``.
    """

    def __init__(self) -> None:
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(MAX_WAITING + 1)
        self._jpegs: collections.OrderedDict[str, bytes] = collections.OrderedDict()
        self._readings: dict[str, dict[str, Any]] = {}
        self.load_error: str | None = None
        self.loaded = False
        self._closed = False

    def _executor(self) -> concurrent.futures.ProcessPoolExecutor:
        with self._lock:
            if self._closed:
                raise ServiceError("the service is stopping", 503, "stopping")
            if self._pool is None:
                self._pool = concurrent.futures.ProcessPoolExecutor(
                    max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_init_worker)
            return self._pool

    def load(self) -> None:
        """Start the worker and load the models now (idempotent; the error kept in ``load_error``).
        Raises ServiceError 503 when the models cannot be loaded."""
        err = self._submit(_ping)
        self.load_error = err
        self.loaded = err is None
        if err is not None:
            raise ServiceError(f"the camera pipeline cannot load its models: {err}", 503, "vision")

    def _submit(self, fn, *args) -> Any:
        pool = self._executor()
        try:
            return pool.submit(fn, *args).result(JOB_TIMEOUT_S)
        except concurrent.futures.process.BrokenProcessPool:
            if self._closed:
                raise ServiceError("the service is stopping", 503, "stopping") from None
            with self._lock:  # the worker died (out of memory?): a new one for the next photo
                if self._pool is pool:
                    self._pool = None
            pool.shutdown(wait=False, cancel_futures=True)
            raise ServiceError("the photo reader stopped (out of memory?): try again, or with a smaller photo",
                               503, "vision") from None
        except concurrent.futures.TimeoutError:
            raise ServiceError(f"reading the photo took more than {JOB_TIMEOUT_S:.0f} s", 503, "vision") from None

    def read(self, data: bytes | None = None, image: Any = None, name: str = "the upload",
             rules: str = "mcr", min_confidence: float | None = None) -> dict[str, Any]:
        return self.read_frames([data], [image], [name], None, rules, min_confidence)

    def read_frames(self, datas: list[bytes | None], images: list[Any], names: list[str],
                    camera: dict | None = None, rules: str = "mcr", min_confidence: float | None = None) -> dict[str, Any]:
        """As ``read``, for one picture or 3-5 frames of one hand (``_frames_job``: voted per tile):
        ``datas[i]`` (upload bytes) or ``images[i]`` (a camera frame) and ``names[i]`` per frame;
        ``camera``: the table camera's calibration (read in its view, the seat reported);
        ``rules``: the rule system whose hand is assembled (its size, tile set and flowers);
        ``min_confidence``: the flag threshold of this photo (the table's ``confirm-below``; None:
        the pipeline's default), passed with the job, so that a setting changed meanwhile never
        changes a photo already being read."""
        r = self._job(_frames_job, datas, images, names, camera, rules, min_confidence)
        key = self._keep(r["jpeg"], r["recognition"])
        url = f"/api/score/photo/{key}.jpg" if key is not None else None
        return {"recognition": r["recognition"], "annotated": url, "photo": key}

    def preview(self, data: bytes | None = None, image: Any = None, name: str = "the camera's picture") -> dict[str, Any]:
        """A small JPEG of a picture taken by the table's camera (``_preview_job``), kept like the
        annotated photos: ``{"jpeg": key or None, "size": [w, h] px of the picture}``. Raises as ``read``."""
        r = self._job(_preview_job, data, image, name)
        return {"jpeg": self._keep(r["jpeg"]), "size": r["size"]}

    def calibrate(self, datas: list[bytes | None], images: list[Any], names: list[str],
                  bottom_seat: str = "E") -> dict[str, Any]:
        """The table camera's calibration from [empty table, laid-out hand] (``_calibrate_job``:
        ``controller.camera_setup.calibrate_camera``), not stored: ``{**CameraSetup.summary(),
        "jpeg": key of the drawn view or None}``. Raises ServiceError 422 ``calibration`` (with
        ``message_zh``), 413, 415, 503 as ``read``."""
        r = self._job(_calibrate_job, datas, images, names, bottom_seat)
        return {**r["setup"], "jpeg": self._keep(r["jpeg"])}

    def _job(self, fn, *args) -> dict[str, Any]:
        """Run a picture job in the worker, one at a time with ``MAX_WAITING`` waiting (``Busy``
        beyond); its ``{"ok": False}`` answer raised as a ServiceError (with ``message_zh``)."""
        if not self._slots.acquire(blocking=False):
            raise Busy()
        try:
            r = self._submit(fn, *args)
        finally:
            self._slots.release()
        if not r["ok"]:
            e = ServiceError(r["message"], r["status"], r["code"])
            if r.get("message_zh"):
                e.message_zh = r["message_zh"]
            raise e
        self.loaded = True
        return r

    def _keep(self, jpeg: bytes | None, reading: dict[str, Any] | None = None) -> str | None:
        """Keep ``jpeg`` (and the recognition it shows) in memory under a new key, the last
        ``KEEP_ANNOTATED`` kept; None for no picture."""
        if jpeg is None:
            return None
        key = secrets.token_urlsafe(9)
        with self._lock:
            self._jpegs[key] = jpeg
            if reading is not None:
                self._readings[key] = reading
            while len(self._jpegs) > KEEP_ANNOTATED:
                self._readings.pop(self._jpegs.popitem(last=False)[0], None)
        return key

    def reading(self, key: str) -> dict[str, Any] | None:
        """The recognition of the kept photo ``key`` (None when unknown or no longer kept)."""
        with self._lock:
            return self._readings.get(key)

    def assemble(self, tiles: list[dict[str, Any]], win: int | None = None, rules: str = "mcr") -> dict[str, Any]:
        """Assemble confirmed or corrected tiles into a hand of ``rules`` in the worker (``_assemble_job``).
        Raises ServiceError 503 like ``read``."""
        if not self._slots.acquire(blocking=False):
            raise Busy()
        try:
            return self._submit(_assemble_job, tiles, win, rules)["assembly"]
        finally:
            self._slots.release()

    def annotated(self, key: str) -> bytes | None:
        """The annotated JPEG of ``key`` (None when unknown or no longer kept)."""
        with self._lock:
            return self._jpegs.get(key)

    def close(self) -> None:
        """Stop the worker process (a photo being read is abandoned)."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            # a worker busy loading the models or reading a photo is ended, not waited for (the
            # executor has no public way to end its workers before Python 3.14's terminate_workers)
            for proc in list(getattr(pool, "_processes", {}).values()):
                proc.terminate()
            pool.shutdown(wait=True, cancel_futures=True)
