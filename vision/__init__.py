"""Camera pipeline: from a picture of the revealed tiles to a hand in scoring notation.

    >>> from vision import read_image, recognize
    >>> r = recognize(read_image("table.jpg"))          # doctest: +SKIP
    >>> r.assembly.hand, [t.tile for t in r.assembly.uncertain]  # doctest: +SKIP
    ('[123m,1]55789m12789s3s', [])

Pieces: ``capture`` (files, USB camera via OpenCV/V4L2, Pi camera via picamera2), ``models`` (a
detector and a 44-label classifier, ONNX, run on the CPU by onnxruntime or OpenCV's DNN module), ``assemble``
(rows, groups, melds, the winning tile laid apart), ``pipeline`` (all together, annotation).
Training: ``python -m vision.train`` (``make train``). May import ``scoring`` (tiles and notation
only), OpenCV, NumPy, onnxruntime and SciPy.
"""

from .assemble import MIN_CONFIDENCE, Assembly, DetectedTile, assemble, rows_and_groups
from .capture import (CaptureConfig, FileSource, PiCamera, UsbCamera, check_image, decode_image, iter_images,
                      open_camera, read_image)
from .errors import VisionError
from .models import TileClassifier, TileDetector
from .pipeline import Recognition, Recognizer, annotate, check_output_path, recognize, write_annotated
from .tiles import LABELS

__all__ = [
    "Assembly", "CaptureConfig", "DetectedTile", "FileSource", "LABELS", "MIN_CONFIDENCE", "PiCamera",
    "Recognition", "Recognizer", "TileClassifier", "TileDetector", "UsbCamera", "VisionError", "annotate",
    "assemble", "check_image", "iter_images", "open_camera", "read_image", "recognize", "rows_and_groups",
    "write_annotated",
    "check_output_path", "decode_image",
]
