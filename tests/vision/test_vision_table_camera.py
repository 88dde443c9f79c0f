"""The table camera's calibration (``vision.table_camera``) on a synthetic table seen at a known
perspective: the recovered homography is checked against the truth."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision import Recognizer, VisionError
from vision.table_camera import TableCalibration, calibrate, find_play_area, seat_views
from vision_scenes import FELT0, FELT1, SEEN, TRUTH, camera, laid_hand_strip, top_view

@pytest.fixture(scope="module")
def recognizer() -> Recognizer:
    return Recognizer()


@pytest.fixture(scope="module")
def hand_strip() -> np.ndarray:
    return laid_hand_strip()


def test_play_area_and_homography_match_the_truth(recognizer, hand_strip):
    rng = np.random.default_rng(0)
    empty, hand = camera(top_view(rng)), camera(top_view(rng, hand_strip, "E"))
    corners = find_play_area(empty)
    assert np.abs(corners - SEEN).max() < 8, corners  # px, in a 1280x720 picture
    cal, seat = calibrate(empty, hand, recognizer)
    # felt points seen by the camera go, through the recovered homography, to where they lie on the felt
    g = np.stack(np.meshgrid(np.linspace(FELT0, FELT1, 7), np.linspace(FELT0, FELT1, 7)), -1).reshape(-1, 1, 2)
    seen = cv2.perspectiveTransform(g.astype(np.float64), TRUTH.astype(np.float64))
    rect = cv2.perspectiveTransform(seen, np.array(cal.homography)).reshape(-1, 2)
    truth = (g.reshape(-1, 2) - FELT0) * cal.side / (FELT1 - FELT0)
    assert np.abs(rect - truth).max() < 0.01 * cal.side, np.abs(rect - truth).max()
    assert seat == "E"
    # the hand's tiles were laid 64 px tall on a 900 px felt
    assert cal.tile[1] == pytest.approx(64 * cal.side / 900, rel=0.15), cal.tile
    assert cal.zones()["E"][1] == pytest.approx(cal.side - 4 * cal.tile[1])
    assert TableCalibration.from_dict(cal.to_dict()) == TableCalibration.from_dict(cal.to_dict())
    assert TableCalibration.from_dict(cal.to_dict()).side == cal.side


def test_a_hand_at_the_right_side_is_read_turned_and_given_to_seat_s(recognizer, hand_strip):
    rng = np.random.default_rng(1)
    empty = camera(top_view(rng))
    cal, seat = calibrate(empty, camera(top_view(rng, hand_strip, "E")), recognizer)
    picture = camera(top_view(rng, hand_strip, "S"))
    (view,), seat = seat_views(cal, [picture], recognizer.detector)
    assert seat == "S"
    r = recognizer.recognize(view)
    assert r.assembly.hand == "123m456p789sEEEN" + "N", r.assembly
    # read without the calibration, the slanted picture's turned rows make no hand
    assert recognizer.recognize(picture).assembly.hand is None


def test_bottom_seat_names_the_sides():
    cal = TableCalibration(((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)), 100, (100, 100),
                           ((0, 0), (100, 0), (100, 100), (0, 100)), (5.0, 10.0), "W")
    assert cal.seats() == ("W", "N", "E", "S")
    assert cal.seat_of([(50, 95)]) == "W" and cal.seat_of([(95, 50)]) == "N" and cal.seat_of([(50, 50)]) is None
    assert cal.seat_of([(98, 96)]) == "N"  # a corner: the nearer side


@pytest.mark.parametrize("picture, says", [
    ("noise", "out of the picture's"), ("no-felt-middle", "covers"), ("round", "not four-sided")])
def test_no_play_area_is_a_clear_error(picture, says):
    rng = np.random.default_rng(0)
    if picture == "noise":
        img = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
    elif picture == "no-felt-middle":
        img = np.full((480, 640, 3), (60, 140, 50), np.uint8)
        img[150:330, 200:440] = (200, 200, 200)  # a small grey patch in the middle
    else:
        img = np.full((480, 640, 3), (40, 40, 40), np.uint8)
        cv2.circle(img, (320, 240), 200, (60, 140, 50), -1)
    with pytest.raises(VisionError, match=says) as e:
        find_play_area(img)
    assert e.value.code == "calibration" and "\n" not in e.value.message


def test_pictures_of_another_size_are_refused():
    cal = TableCalibration(((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)), 100, (640, 480),
                           ((0, 0), (100, 0), (100, 100), (0, 100)))
    with pytest.raises(VisionError, match="calibrated at 640x480"):
        cal.rectify(np.zeros((720, 1280, 3), np.uint8))
    with pytest.raises(VisionError, match="calibrate again"):
        TableCalibration.from_dict({"homography": [[1, 2]], "side": 3})
