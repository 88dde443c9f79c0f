"""Setting up the table's own camera (issue 21): one use-case for ``mjtable camera calibrate`` and
the table page's calibration step (``POST /api/camera/calibrate``).

``calibrate_camera`` finds the play area and the four seats' zones from a picture of the empty
table and one of a laid-out hand (``vision.table_camera.calibrate``) and draws the result
(``vision.table_camera.draw_view``); ``store_camera`` keeps it in the table's settings (key
``camera``), where ``mjtable score-photo --table-camera`` and ``POST /api/score/capture`` read it.
The two are apart because the service calibrates in its photo worker process and stores on its
control thread (with the other settings' writes); the command line calls one after the other.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from . import settings as ST


@dataclasses.dataclass(frozen=True)
class CameraSetup:
    """A calibration found, not yet stored.

    Attributes:
        camera: the calibration as plain data (``TableCalibration.to_dict``), what ``store_camera`` keeps.
        seat: the seat whose zone holds the laid-out hand (E, S, W, N), or None (outside every zone).
        zones: each seat's layout zone ``[x1, y1, x2, y2]`` in the rectified view's px.
        view: the hand picture rectified with the zones drawn (side x side x 3 BGR uint8).
    """

    camera: dict[str, Any]
    seat: str | None
    zones: dict[str, list[float]]
    view: Any

    def summary(self) -> dict[str, Any]:
        """``{"camera", "seat", "zones"}``: the JSON of ``mjtable camera calibrate --json`` and of the route."""
        return {"camera": self.camera, "seat": self.seat, "zones": self.zones}


def calibrate_camera(empty: Any, hand: Any, recognizer: Any, bottom_seat: str = "E") -> CameraSetup:
    """Calibrate the table's camera (``vision.table_camera.calibrate``) and draw its view.

    Args:
        empty, hand: HxWx3 BGR uint8 pictures from the table's camera, of one size: the empty
            table, then a hand laid out in front of one seat.
        recognizer: the ``vision.Recognizer`` that finds the hand's tiles.
        bottom_seat: the seat at the pictures' bottom side (E, S, W or N).

    Raises:
        VisionError: ``calibration`` (no play area, no tile in the hand picture, pictures of two
            sizes, an unknown seat; with ``message_zh``) or ``bad-image``.
    """
    from vision.table_camera import calibrate, draw_view
    cal, seat = calibrate(empty, hand, recognizer, bottom_seat)
    zones = {k: [round(float(v), 1) for v in z] for k, z in cal.zones().items()}
    return CameraSetup(cal.to_dict(), seat, zones, draw_view(cal, hand, seat))


def store_camera(camera: dict[str, Any], path: Path | None = None) -> Path:
    """Keep the calibration ``camera`` (``CameraSetup.camera``) in the settings, the other settings
    as they are (read leniently: a damaged file does not block calibrating). Returns the file.

    Raises:
        SettingsError: the calibration is not valid (``settings.check_camera``) or the file cannot be written.
    """
    stored = ST.load(path, lenient=True)
    return ST.save(dataclasses.replace(stored, camera=ST.check_camera(camera)), path)
