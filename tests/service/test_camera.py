"""The table's camera in the service: opened once at 2-4 MP and kept open between captures, used
by one request at a time, closed after an error and opened afresh at the next capture; a USB
camera named by its /dev/v4l/by-id path (issue #23, section 4). OpenCV's VideoCapture is a
stand-in here (no camera on the test machine)."""

from __future__ import annotations

import sys
import threading
import time

import cv2
import pytest

from service.errors import ServiceError
from service.scorer import CAMERA_SIZE, Scorer
from service_support import ROOT

sys.path.insert(0, str(ROOT / "tests" / "vision"))
from fake_camera import FakeCapture  # noqa: E402

BY_ID = "/dev/v4l/by-id/usb-Sonix_USB_2.0_Camera_SN0001-video-index0"


class Capture(FakeCapture):
    """``FakeCapture`` whose ``fail`` makes the next read fail, and which counts reads that overlap
    (the scorer's lock must prevent them)."""

    fail = False
    overlaps = 0
    _busy = threading.Lock()

    def __init__(self, device, api):
        super().__init__(device, api)
        self.reads = 0

    def read(self):
        if not Capture._busy.acquire(blocking=False):
            Capture.overlaps += 1
            return False, None
        try:
            time.sleep(0.02)
            self.reads += 1
            if Capture.fail:
                Capture.fail = False
                return False, None
            return super().read()
        finally:
            Capture._busy.release()


@pytest.fixture
def fake_cv2(monkeypatch):
    FakeCapture.opened, Capture.fail, Capture.overlaps = [], False, 0
    monkeypatch.setattr(cv2, "VideoCapture", Capture)


def test_the_camera_is_kept_open_at_2_to_4_mp_and_reopened_after_an_error(fake_cv2) -> None:
    sc = Scorer(camera_source="usb", camera_device=BY_ID)
    try:
        w, h = CAMERA_SIZE
        assert 2e6 <= w * h <= 4e6
        frames = [sc.capture() for _ in range(3)]
        assert [f.shape for f in frames] == [(h, w, 3)] * 3
        assert len(FakeCapture.opened) == 1 and FakeCapture.opened[0].device == BY_ID  # one open for three captures
        Capture.fail = True
        with pytest.raises(ServiceError) as e:
            sc.capture()
        assert e.value.status == 503 and BY_ID in e.value.message
        assert FakeCapture.opened[0].released, "closed after the error"
        assert sc.capture().shape == (h, w, 3) and len(FakeCapture.opened) == 2  # opened afresh
    finally:
        sc.close()
    assert FakeCapture.opened[1].released


def test_captures_from_several_requests_take_turns(fake_cv2) -> None:
    sc = Scorer(camera_source="usb", camera_device=0)
    errors: list = []

    def grab() -> None:
        try:
            for _ in range(3):
                sc.capture()
        except ServiceError as e:
            errors.append(e)

    threads = [threading.Thread(target=grab) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sc.close()
    assert errors == [] and Capture.overlaps == 0 and len(FakeCapture.opened) == 1
    # warm-up frames (grab) and 12 reads, one at a time
    assert FakeCapture.opened[0].reads == 12


def test_no_camera_is_404() -> None:
    with pytest.raises(ServiceError) as e:
        Scorer().capture()
    assert e.value.status == 404


def test_the_config_takes_a_device_path(tmp_path) -> None:
    from service import config as C
    from service.errors import ConfigError
    p = tmp_path / "table.toml"
    p.write_text(f'[camera]\nsource = "usb"\ndevice = "{BY_ID}"\n')
    assert C.load(p).camera_device == BY_ID
    p.write_text('[camera]\nsource = "usb"\ndevice = "video0"\n')
    with pytest.raises(ConfigError, match="camera.device must be an index"):
        C.load(p)
