"""Getting pictures: image files and folders, a USB camera (OpenCV ``VideoCapture`` over V4L2)
and a Raspberry Pi camera module (picamera2 ``capture_array()``; OpenCV cannot open CSI cameras).

Every frame is an HxWx3 BGR uint8 array.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import os
import tomllib
import warnings
from pathlib import Path
from typing import Any, Iterator, Mapping, Protocol

#: The largest picture ``read_image`` decodes, in pixels (width x height): the full frame of a
#: 50-megapixel phone camera, 8192 x 6144 (50.3 MP), above an 8K frame (33 MP). Decoding takes
#: about 6.3 bytes per pixel at its peak (a 16000 x 12000 JPEG: 1.2 GB and 2.7 s here), so a larger
#: picture, or a small file that unpacks to a huge one, could exhaust a Raspberry Pi's memory: it
#: is refused from the file's header (Pillow), before decoding. As a second guard, OpenCV's own
#: limit (``OPENCV_IO_MAX_IMAGE_PIXELS``, read once when cv2 is first imported; 1 gigapixel by
#: default) is set to it when this module is the first to import cv2 and the variable is unset.
MAX_PIXELS = 8192 * 6144
#: The largest picture file ``read_image`` reads, in bytes: such a picture stored uncompressed at
#: 16 bits per channel (302 MB). A larger file is refused before it is read (a small picture with a
#: long tail would otherwise be read whole into memory: 2 GB for one QA made).
MAX_FILE_BYTES = 6 * MAX_PIXELS
#: ``decode_image`` with ``reduce=True`` decodes a larger picture at 1/2, 1/4 or 1/8 of its size,
#: the least reduction that brings it to at most this many pixels (12 MP: a 50 MP phone frame at
#: 1/2 and 1/4 of its area, 4096x3072). Plenty for reading tiles; the service decodes uploads so.
DECODE_PIXELS = 12_000_000
os.environ.setdefault("OPENCV_IO_MAX_IMAGE_PIXELS", str(MAX_PIXELS))

import cv2  # noqa: E402  (after the limit above)
import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402  (the headers' sizes)

from .errors import VisionError  # noqa: E402

#: OpenCV's decode flag per reduction (JPEG: libjpeg's DCT scaling, the full picture is never in
#: memory; other formats: decoded whole, then shrunk)
_REDUCED = {1: cv2.IMREAD_COLOR, 2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4,
            8: cv2.IMREAD_REDUCED_COLOR_8}

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")
SOURCES = ("usb", "picamera", "file")


def check_image(image: Any) -> np.ndarray:
    """Return ``image`` if it is an HxWx3 BGR uint8 array of at least 16x16 pixels.

    Raises:
        VisionError: ``bad-image`` naming what is wrong.
    """
    if not isinstance(image, np.ndarray):
        raise VisionError("bad-image", f"an image must be a numpy array, got {type(image).__name__}")
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise VisionError("bad-image", f"an image must be HxWx3 BGR uint8, got shape {image.shape} {image.dtype}")
    if image.shape[0] < 16 or image.shape[1] < 16:
        raise VisionError("bad-image", f"an image of {image.shape[1]}x{image.shape[0]} pixels is too small")
    return image


def read_image(path: str | Path) -> np.ndarray:
    """Read an image file as HxWx3 BGR uint8 (grey and RGBA images are converted).

    Raises:
        VisionError: ``unreadable-image`` for a missing, empty or undecodable file (or one whose
            header Pillow cannot read); ``too-large`` for a picture of more than ``MAX_PIXELS``
            pixels or a file of more than ``MAX_FILE_BYTES``, refused before it is read.
    """
    p = Path(path)
    if not p.exists():
        raise VisionError("unreadable-image", f"{p}: no such file")
    if p.is_dir():
        raise VisionError("unreadable-image", f"{p} is a folder, not an image file")
    try:
        size = p.stat().st_size
        if size == 0:
            raise VisionError("unreadable-image", f"{p} is empty (0 bytes)")
        if size > MAX_FILE_BYTES:
            raise VisionError("too-large", f"{p} is a file of {size / 1e6:.0f} MB; mjtable reads picture files of "
                                           f"up to {MAX_FILE_BYTES / 1e6:.0f} MB")
        _check_size(p)  # before the file is read whole
        data = p.read_bytes()
    except OSError as e:
        raise VisionError("unreadable-image", f"{p}: {e.strerror}") from None
    return _decode(data, str(p), 1)


def reduction(width: int, height: int, max_pixels: int = DECODE_PIXELS) -> int:
    """The least of 1, 2, 4, 8 that brings a ``width`` x ``height`` picture to at most
    ``max_pixels`` pixels when each side is divided by it (8 when none does)."""
    for f in (1, 2, 4):
        if (width // f) * (height // f) <= max_pixels:
            return f
    return 8


def decode_image(data: bytes, name: str = "the upload", reduce: bool = True) -> tuple[np.ndarray, int]:
    """Decode a picture held in memory (an upload: nothing is written to disk).

    Args:
        data: the file's bytes (JPEG, PNG, BMP, WebP, TIFF).
        name: how messages name it.
        reduce: decode a picture of more than ``DECODE_PIXELS`` at 1/2, 1/4 or 1/8 of its size
            (``reduction``); a JPEG is then never decoded whole (an 8192x6144 JPEG peaks at about
            a quarter of its full decode).
    Returns: ``(image HxWx3 BGR uint8, factor)``: the picture's pixel ``(x, y)`` is
        ``(x * factor, y * factor)`` in the file.
    Raises:
        VisionError: ``too-large`` for a picture of more than ``MAX_PIXELS`` or bytes over
            ``MAX_FILE_BYTES`` (refused from the header, before decoding); ``unreadable-image``
            for empty bytes or bytes that are not a picture.
    """
    if not data:
        raise VisionError("unreadable-image", f"{name} is empty (0 bytes)")
    if len(data) > MAX_FILE_BYTES:
        raise VisionError("too-large", f"{name} is a file of {len(data) / 1e6:.0f} MB; mjtable reads picture files "
                                       f"of up to {MAX_FILE_BYTES / 1e6:.0f} MB")
    w, h = _check_size(io.BytesIO(data), name)
    f = reduction(w, h) if reduce else 1
    return _decode(data, name, f), f


def _decode(data: bytes, name: str, factor: int) -> np.ndarray:
    try:
        img = cv2.imdecode(np.frombuffer(data, np.uint8), _REDUCED[factor])
    except cv2.error:  # OpenCV's own size limit, or a decoder's failure
        img = None
    if img is None:
        raise VisionError("unreadable-image", f"{name} is not an image OpenCV can decode (JPEG, PNG, BMP, WebP, TIFF)")
    return check_image(img)


def _check_size(p: Path | io.BytesIO, name: str | None = None) -> tuple[int, int]:
    """Check the picture in file ``p`` (or in memory) by its header only (Pillow opens lazily);
    returns its ``(width, height)``. ``name`` names it in messages (default: the path).

    Raises:
        VisionError: ``too-large`` for more than ``MAX_PIXELS`` pixels; ``unreadable-image`` when
            Pillow cannot identify or parse the header. A file only OpenCV could decode is refused
            too, since its size could not be checked first (a JPEG with a marker Pillow does not
            know, a run-length HDR file: each can unpack to gigabytes).
    """
    name = name or str(p)

    def too_large(what: str) -> VisionError:
        return VisionError("too-large", f"{name} is {what}; mjtable reads pictures of up to "
                                        f"{MAX_PIXELS / 1e6:.1f} megapixels (8192x6144): shrink it first")
    pil_log = logging.getLogger("PIL")
    level = pil_log.level
    try:
        pil_log.setLevel(logging.CRITICAL)  # a damaged header is reported below, not logged
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Pillow's DecompressionBombWarning, corrupt EXIF
            with Image.open(p) as im:
                w, h = im.size
    except Image.DecompressionBombError:  # Pillow's own guard: over twice its limit
        raise too_large(f"over {2 * Image.MAX_IMAGE_PIXELS / 1e6:.0f} megapixels") from None
    except OSError as e:
        if e.errno is not None:  # the file itself (permissions, a vanished file): the caller says so
            raise
        raise VisionError("unreadable-image", f"{name} is not a picture that can be decoded (JPEG, PNG, BMP, "
                                              "WebP, TIFF)") from None
    except Exception as e:  # noqa: BLE001  (a format reader may raise anything on a damaged header)
        raise VisionError("unreadable-image", f"{name} is not a picture that can be decoded (JPEG, PNG, BMP, "
                                              f"WebP, TIFF): {type(e).__name__}") from None
    finally:
        pil_log.setLevel(level)
    if w * h > MAX_PIXELS:
        raise too_large(f"{w}x{h} pixels ({w * h / 1e6:.1f} megapixels)")
    return w, h


def iter_images(path: str | Path) -> Iterator[tuple[Path, np.ndarray]]:
    """``(path, image)`` for an image file, or for each image file of a folder in name order.

    Raises:
        VisionError: ``unreadable-image`` for a missing path, a folder without images, or an image
            that cannot be read.
    """
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.suffix.lower() in IMAGE_SUFFIXES)
        if not files:
            raise VisionError("unreadable-image", f"{p}: no image files ({', '.join(IMAGE_SUFFIXES)})")
        for f in files:
            yield f, read_image(f)
    else:
        yield p, read_image(p)


@dataclasses.dataclass(frozen=True)
class CaptureConfig:
    """Where pictures come from (the ``[camera]`` table of the configuration).

    Attributes:
        source: ``usb`` (OpenCV/V4L2), ``picamera`` (picamera2) or ``file``.
        device: the USB camera: an index N (``/dev/videoN``) or a device path under ``/dev/``
            (``/dev/video2``, ``/dev/v4l/by-id/usb-<maker>_<model>-video-index0``, which names the
            same camera whichever port it is plugged into); ignored otherwise.
        path: image file or folder for ``file``.
        width, height: requested frame size in pixels (0 = the camera's default).
        warmup_frames: frames dropped after opening (exposure settles), 0-100.
    """

    source: str = "usb"
    device: int | str = 0
    path: str = ""
    width: int = 0
    height: int = 0
    warmup_frames: int = 5

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise VisionError("bad-config", f"camera.source = {self.source!r}: use one of {', '.join(SOURCES)}")
        if isinstance(self.device, str):
            if not self.device.startswith("/dev/") or len(self.device) > 255:
                raise VisionError("bad-config", f"camera.device = {self.device!r}: give an index (0 for /dev/video0) "
                                  "or a path under /dev/, e.g. /dev/v4l/by-id/usb-...-video-index0")
        for key in ("width", "height", "warmup_frames") + (("device",) if not isinstance(self.device, str) else ()):
            v = getattr(self, key)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise VisionError("bad-config", f"camera.{key} = {v!r}: must be a whole number >= 0")
        if self.warmup_frames > 100:
            raise VisionError("bad-config", f"camera.warmup_frames = {self.warmup_frames}: at most 100")
        if self.source == "file" and not self.path:
            raise VisionError("bad-config", "camera.path is required when camera.source = 'file'")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> "CaptureConfig":
        """From a ``[camera]`` table; unknown keys are an error naming the allowed ones."""
        allowed = [f.name for f in dataclasses.fields(cls)]
        unknown = [k for k in data if k not in allowed]
        if unknown:
            raise VisionError("bad-config", f"unknown key(s) camera.{', camera.'.join(unknown)}; allowed: "
                              f"{', '.join(allowed)}")
        for k in ("source", "path"):
            if k in data and not isinstance(data[k], str):
                raise VisionError("bad-config", f"camera.{k} = {data[k]!r}: must be a string")
        return cls(**dict(data))

    @classmethod
    def from_toml(cls, path: str | Path) -> "CaptureConfig":
        """From the ``[camera]`` table of a TOML file (defaults when the table is absent)."""
        try:
            with open(path, "rb") as fh:
                data = tomllib.load(fh)
        except OSError as e:
            raise VisionError("bad-config", f"cannot read {path}: {e.strerror}") from None
        except tomllib.TOMLDecodeError as e:
            raise VisionError("bad-config", f"{path} is not valid TOML: {e}") from None
        table = data.get("camera", {})
        if not isinstance(table, dict):
            raise VisionError("bad-config", "camera must be a table ([camera])")
        return cls.from_mapping(table)


class Camera(Protocol):
    def read(self) -> np.ndarray: ...
    def close(self) -> None: ...


class UsbCamera:
    """A USB camera through OpenCV's ``VideoCapture`` (V4L2 backend on Linux).

    Args:
        device: an index N (``/dev/videoN``) or a device path (``/dev/v4l/by-id/...``).
        width, height: the frame size asked for (``CAP_PROP_FRAME_WIDTH/HEIGHT``; the camera
            gives its nearest mode), 0: its default.
        warmup_frames: frames dropped after opening (exposure settles).
    """

    def __init__(self, device: int | str = 0, width: int = 0, height: int = 0, warmup_frames: int = 5) -> None:
        self.name = device if isinstance(device, str) else f"/dev/video{device}"
        self.cap = cv2.VideoCapture(device, cv2.CAP_V4L2)
        if not self.cap.isOpened():
            self.cap.release()
            raise VisionError("camera", f"cannot open USB camera {self.name}: is it plugged in, "
                              "and is the user in the 'video' group?")
        if width:
            self.cap.set(cv2.CAP_PROP_FRAME_WIDTH, width)
        if height:
            self.cap.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        for _ in range(warmup_frames):
            self.cap.grab()
        self.device = device

    def read(self) -> np.ndarray:
        """One frame, HxWx3 BGR uint8. Raises VisionError ``camera`` when none comes."""
        ok, frame = self.cap.read()
        if not ok or frame is None:
            raise VisionError("camera", f"USB camera {self.name} gave no frame")
        return check_image(frame)

    def close(self) -> None:
        self.cap.release()


class PiCamera:
    """A Raspberry Pi camera module through picamera2 (libcamera); frames as ``RGB888``,
    which picamera2 delivers in OpenCV's B, G, R byte order."""

    def __init__(self, width: int = 0, height: int = 0, warmup_frames: int = 5) -> None:
        try:
            from picamera2 import Picamera2  # type: ignore[import-not-found]
        except ModuleNotFoundError as e:
            if e.name not in ("picamera2", None):
                raise VisionError("camera", _picamera2_broken(e)) from None
            raise VisionError("camera", "picamera2 is not installed: on Raspberry Pi OS run "
                              "`sudo apt install python3-picamera2` (or choose camera.source = 'usb')") from None
        except Exception as e:  # noqa: BLE001 - a broken install fails in its own dependencies' code
            raise VisionError("camera", _picamera2_broken(e)) from None
        try:
            self.cam = Picamera2()
            # picamera2's "RGB888" arrays hold each pixel as [B, G, R] (libcamera names the word, not
            # the bytes): OpenCV's order. "BGR888" would give R, G, B.
            main: dict = {"format": "RGB888"}
            if width and height:
                main["size"] = (width, height)
            self.cam.configure(self.cam.create_still_configuration(main=main))
            self.cam.start()
        except Exception as e:  # noqa: BLE001 - picamera2 raises many kinds
            raise VisionError("camera", f"cannot start the Pi camera: {e}") from None
        for _ in range(warmup_frames):
            self.cam.capture_array()

    def read(self) -> np.ndarray:
        """One frame, HxWx3 BGR uint8 (an alpha channel, if any, dropped)."""
        try:
            frame = self.cam.capture_array()
        except Exception as e:  # noqa: BLE001
            raise VisionError("camera", f"the Pi camera gave no frame: {e}") from None
        if frame.ndim == 3 and frame.shape[2] == 4:
            frame = np.ascontiguousarray(frame[:, :, :3])
        return check_image(frame)

    def close(self) -> None:
        try:
            self.cam.stop()
            self.cam.close()
        except Exception:  # noqa: BLE001
            pass


def _picamera2_broken(e: BaseException) -> str:
    """One line for a picamera2 that is installed but does not import. Most often: apt's picamera2
    (and its simplejpeg, built for numpy 1.x) under a numpy 2 from pip, in a venv made with
    ``--system-site-packages`` ("numpy.dtype size changed"; raspberrypi/picamera2#1088, #1211)."""
    text = str(e).strip().splitlines()[0][:160] if str(e).strip() else ""
    head = f"picamera2 does not import ({type(e).__name__}: {text})"
    if "numpy" in text or "dtype" in text:
        return (f"{head}: apt's picamera2 is built for apt's numpy 1.x and a numpy 2 from pip in the venv "
                "shadows it; run `.venv/bin/pip install 'numpy<2'` (or use camera.source = 'usb')")
    return (f"{head}: reinstall it with `sudo apt install --reinstall python3-picamera2` and make the venv with "
            "--system-site-packages (or use camera.source = 'usb')")


class FileSource:
    """Images from a file or folder, in name order, as a camera that runs out."""

    def __init__(self, path: str | Path) -> None:
        self._it = iter_images(path)
        self.path = Path(path)
        if not self.path.exists():
            raise VisionError("unreadable-image", f"{self.path}: no such file or folder")

    def read(self) -> np.ndarray:
        try:
            return next(self._it)[1]
        except StopIteration:
            raise VisionError("camera", f"no more images in {self.path}") from None

    def close(self) -> None:
        pass


def open_camera(config: CaptureConfig) -> Camera:
    """Open the source that ``config.source`` names. Raises VisionError ``camera`` when it cannot."""
    if config.source == "usb":
        return UsbCamera(config.device, config.width, config.height, config.warmup_frames)
    if config.source == "picamera" and isinstance(config.device, str):
        raise VisionError("bad-config", "camera.device names a USB camera: with camera.source = 'picamera' leave it out")
    if config.source == "picamera":
        return PiCamera(config.width, config.height, config.warmup_frames)
    return FileSource(config.path)
