"""Capture: image files and folders, configuration, and the camera classes' failure paths."""

from __future__ import annotations

import sys
import types

import cv2
import numpy as np
import pytest

from vision import (CaptureConfig, FileSource, PiCamera, UsbCamera, VisionError, decode_image, iter_images, open_camera,
                    read_image)
from vision.capture import check_image
from fake_camera import FakeCapture


def test_read_image_roundtrip(tmp_path):
    img = np.zeros((40, 60, 3), np.uint8)
    img[:, :30] = (255, 0, 0)
    p = tmp_path / "a.png"
    cv2.imwrite(str(p), img)
    got = read_image(p)
    assert got.shape == (40, 60, 3) and got.dtype == np.uint8
    assert tuple(got[0, 0]) == (255, 0, 0)


def test_grey_image_is_converted(tmp_path):
    p = tmp_path / "g.png"
    cv2.imwrite(str(p), np.full((32, 32), 128, np.uint8))
    assert read_image(p).shape == (32, 32, 3)


@pytest.mark.parametrize("content, what", [(None, "no such file"), (b"", "empty"), (b"not a picture at all", "decode")])
def test_unreadable_files(tmp_path, content, what):
    p = tmp_path / "x.jpg"
    if content is not None:
        p.write_bytes(content)
    with pytest.raises(VisionError) as e:
        read_image(p)
    assert e.value.code == "unreadable-image" and what in e.value.message


@pytest.mark.parametrize("size", [(10_000, 6_000), (20_000, 10_000)])
def test_a_picture_too_large_is_refused_before_it_is_decoded(tmp_path, monkeypatch, size):
    from PIL import Image
    p = tmp_path / "huge.png"
    Image.new("1", size).save(p)  # a few kB on disk that would unpack to 180-600 MB
    assert p.stat().st_size < 200_000

    def no_decode(*a, **k):
        raise AssertionError("decoded")
    monkeypatch.setattr(cv2, "imdecode", no_decode)
    with pytest.raises(VisionError) as e:
        read_image(p)
    # 60 MP is named; 200 MP is over Pillow's own guard (twice Image.MAX_IMAGE_PIXELS)
    what = "10000x6000 pixels (60.0 megapixels)" if size[0] == 10_000 else \
        f"over {2 * Image.MAX_IMAGE_PIXELS / 1e6:.0f} megapixels"
    assert e.value.code == "too-large" and what in e.value.message and "up to 50.3 megapixels" in e.value.message


def test_a_50_megapixel_phone_photo_is_read_and_the_limit_is_exact(tmp_path, monkeypatch):
    from vision import capture
    assert capture.MAX_PIXELS == 8192 * 6144  # the full frame of a 50 MP phone camera
    monkeypatch.setattr(capture, "MAX_PIXELS", 40 * 30)
    p = tmp_path / "a.jpg"
    cv2.imwrite(str(p), np.full((30, 40, 3), 200, np.uint8))
    assert read_image(p).shape == (30, 40, 3)
    monkeypatch.setattr(capture, "MAX_PIXELS", 40 * 30 - 1)
    with pytest.raises(VisionError, match="40x30 pixels"):
        read_image(p)


def test_a_file_too_large_is_refused_before_it_is_read(tmp_path, monkeypatch):
    from vision import capture
    p = tmp_path / "tail.jpg"
    cv2.imwrite(str(p), np.full((30, 40, 3), 200, np.uint8))
    with open(p, "ab") as fh:  # a small picture with a long tail (sparse: no disk used)
        fh.truncate(capture.MAX_FILE_BYTES + 1)

    def no_read(*a, **k):
        raise AssertionError("read")
    monkeypatch.setattr(type(p), "read_bytes", no_read)
    with pytest.raises(VisionError) as e:
        read_image(p)
    assert e.value.code == "too-large" and "302 MB" in e.value.message


@pytest.mark.parametrize("make", ["pfm", "jpeg-unknown-marker", "damaged-header"])
def test_a_file_whose_header_pillow_cannot_read_is_refused(tmp_path, make):
    # OpenCV could decode the first two, but their size cannot be checked before decoding (a run-
    # length HDR file or such a JPEG can unpack to gigabytes); a format reader failing on a
    # damaged header is a clear refusal, not a traceback
    if make == "pfm":
        p = tmp_path / "a.pfm"
        cv2.imwrite(str(p), np.full((30, 40, 3), 0.5, np.float32))
    elif make == "jpeg-unknown-marker":
        ok, buf = cv2.imencode(".jpg", np.full((30, 40, 3), 100, np.uint8))
        data = buf.tobytes()
        p = tmp_path / "a.jpg"
        p.write_bytes(data[:2] + b"\xff\x01" + data[2:])  # TEM, a marker without data, after SOI
        assert cv2.imdecode(np.frombuffer(p.read_bytes(), np.uint8), cv2.IMREAD_COLOR) is not None
    else:
        p = tmp_path / "a.dds"
        p.write_bytes(b"DDS " + b"\x7c\x00\x00\x00" + bytes(120))
    with pytest.raises(VisionError) as e:
        read_image(p)
    assert e.value.code == "unreadable-image" and "can be decoded" in e.value.message


def test_folder_is_not_an_image(tmp_path):
    with pytest.raises(VisionError, match="folder"):
        read_image(tmp_path)


def test_iter_images_reads_a_folder_in_name_order(tmp_path):
    for name, v in (("b.png", 2), ("a.png", 1), ("notes.txt", 0)):
        if name.endswith(".png"):
            cv2.imwrite(str(tmp_path / name), np.full((20, 20, 3), v, np.uint8))
        else:
            (tmp_path / name).write_text("hello")
    got = [(p.name, int(img[0, 0, 0])) for p, img in iter_images(tmp_path)]
    assert got == [("a.png", 1), ("b.png", 2)]
    src = FileSource(tmp_path)
    assert int(src.read()[0, 0, 0]) == 1 and int(src.read()[0, 0, 0]) == 2
    with pytest.raises(VisionError, match="no more images"):
        src.read()


def test_empty_folder(tmp_path):
    with pytest.raises(VisionError, match="no image files"):
        list(iter_images(tmp_path))


def test_check_image_rejects_non_pictures():
    for bad in (np.zeros((20, 20), np.uint8), np.zeros((20, 20, 3), np.float32), np.zeros((5, 5, 3), np.uint8), "x"):
        with pytest.raises(VisionError) as e:
            check_image(bad)
        assert e.value.code == "bad-image"


def test_config_validation(tmp_path):
    assert CaptureConfig().source == "usb"
    with pytest.raises(VisionError, match="camera.source"):
        CaptureConfig(source="webcam")
    with pytest.raises(VisionError, match="camera.device"):
        CaptureConfig(device=-1)
    with pytest.raises(VisionError, match="camera.path"):
        CaptureConfig(source="file")
    with pytest.raises(VisionError, match="unknown key.*camera.fps"):
        CaptureConfig.from_mapping({"fps": 30})
    t = tmp_path / "mjtable.toml"
    t.write_text('[camera]\nsource = "picamera"\nwidth = 2028\nheight = 1520\n')
    c = CaptureConfig.from_toml(t)
    assert (c.source, c.width, c.height) == ("picamera", 2028, 1520)
    t.write_text('[camera\n')
    with pytest.raises(VisionError, match="not valid TOML"):
        CaptureConfig.from_toml(t)


def test_usb_camera_that_is_not_there():
    with pytest.raises(VisionError) as e:
        UsbCamera(device=63, warmup_frames=0)
    assert e.value.code == "camera" and "/dev/video63" in e.value.message


def test_picamera_without_picamera2(monkeypatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)  # import fails as on a machine without it
    with pytest.raises(VisionError, match="picamera2 is not installed"):
        PiCamera()


def test_picamera_with_a_stand_in_picamera2(monkeypatch):
    calls = []

    class FakePicamera2:
        def create_still_configuration(self, main):
            calls.append(("config", main))
            return {"main": main}

        def configure(self, cfg):
            calls.append(("configure", cfg))

        def start(self):
            calls.append(("start",))

        def capture_array(self):
            return np.full((48, 64, 4), 7, np.uint8)  # XRGB-style 4-channel frame

        def stop(self):
            calls.append(("stop",))

        def close(self):
            calls.append(("close",))

    monkeypatch.setitem(sys.modules, "picamera2", types.SimpleNamespace(Picamera2=FakePicamera2))
    cam = open_camera(CaptureConfig(source="picamera", width=64, height=48, warmup_frames=2))
    frame = cam.read()
    cam.close()
    assert frame.shape == (48, 64, 3) and frame.dtype == np.uint8
    assert ("config", {"format": "RGB888", "size": (64, 48)}) in calls
    assert calls[-2:] == [("stop",), ("close",)]


def test_open_camera_file_source(tmp_path):
    cv2.imwrite(str(tmp_path / "one.jpg"), np.full((30, 30, 3), 100, np.uint8))
    cam = open_camera(CaptureConfig(source="file", path=str(tmp_path / "one.jpg")))
    assert cam.read().shape == (30, 30, 3)


@pytest.mark.parametrize("error", [ValueError("numpy.dtype size changed, may indicate binary incompatibility. "
                                              "Expected 96 from C header, got 88 from PyObject"),
                                   RuntimeError("libcamera: no such thing")])
def test_a_picamera2_that_does_not_import_is_one_line(monkeypatch, error):
    """apt's picamera2 under pip's numpy 2 fails inside its import with a ValueError
    (picamera2#1088): any exception of the import is one line naming the likely cause and fix."""
    broken = types.ModuleType("picamera2")

    def fail(name):
        raise error
    broken.__getattr__ = fail  # `from picamera2 import Picamera2` raises as the real broken import does
    monkeypatch.setitem(sys.modules, "picamera2", broken)
    with pytest.raises(VisionError) as e:
        PiCamera()
    msg = e.value.message
    assert e.value.code == "camera" and "\n" not in msg and msg.startswith("picamera2 does not import")
    assert type(error).__name__ in msg
    assert ("numpy<2" in msg) == isinstance(error, ValueError)


def test_a_usb_camera_named_by_its_by_id_path(monkeypatch):
    monkeypatch.setattr(cv2, "VideoCapture", FakeCapture)
    FakeCapture.opened = []
    path = "/dev/v4l/by-id/usb-Sonix_USB_2.0_Camera-video-index0"
    cam = open_camera(CaptureConfig(source="usb", device=path, width=2048, height=1536, warmup_frames=1))
    assert cam.read().shape == (1536, 2048, 3)
    cap = FakeCapture.opened[0]
    assert cap.device == path and cap.api == cv2.CAP_V4L2
    cam.close()
    assert cap.released
    with pytest.raises(VisionError) as e:
        UsbCamera("/dev/v4l/by-id/usb-missing", warmup_frames=0)
    assert "/dev/v4l/by-id/usb-missing" in e.value.message
    with pytest.raises(VisionError, match="path under /dev/"):
        CaptureConfig(source="usb", device="video0")


@pytest.mark.parametrize("suffix", [".jpg", ".png"])
def test_decode_image_reduces_a_large_picture_at_decode(suffix):
    img = np.zeros((4000, 5000, 3), np.uint8)
    img[:, 2500:] = (0, 0, 255)
    ok, data = cv2.imencode(suffix, img)
    got, factor = decode_image(data.tobytes(), "big" + suffix)
    assert factor == 2 and got.shape == (2000, 2500, 3)  # 20 MP -> 5 MP, under the 12 MP cap
    assert got[10, 2000, 2] > 240 and got[10, 1000, 2] < 15  # the right half red, at half the size
    full, f1 = decode_image(data.tobytes(), "big" + suffix, reduce=False)
    assert f1 == 1 and full.shape == (4000, 5000, 3)
    small, f = decode_image(cv2.imencode(suffix, img[:3000, :4000])[1].tobytes())
    assert f == 1 and small.shape == (3000, 4000, 3)  # 12 MP exactly: decoded whole


def test_decode_image_refuses_from_the_header():
    from PIL import Image
    import io
    buf = io.BytesIO()
    Image.new("1", (10_000, 6_000)).save(buf, format="PNG")
    with pytest.raises(VisionError) as e:
        decode_image(buf.getvalue(), "bomb.png")
    assert e.value.code == "too-large" and e.value.message.startswith("bomb.png is 10000x6000")
    with pytest.raises(VisionError, match="empty"):
        decode_image(b"", "x.png")
