"""The table camera on the page (issue 21), in a real browser (Chromium through Playwright) over
``mjtable serve --sim --camera-image``: the picture file stands in for the table's camera and
shows a hand laid out at seat S of the synthetic table (``tests/vision/vision_scenes.py``).

The calibration step: a picture that shows no felt is refused with the reason (in Chinese and in
English); then the empty table uploaded and the hand taken by the camera give the view from above
with the seats' zones, stored. Scoring then takes five frames with the camera, votes per tile,
and sets the winner to the seat the hand lay at; the hand goes on the sheet for that seat.
Screenshots of the step (desktop 1280x900 and phone 390x844, Chinese and English) and of the
scoring view are kept in ``tests/service/artifacts/``."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from playwright.sync_api import expect, sync_playwright

from service_support import ROOT, serving, wait_js
from test_browser import ARGS, ARTIFACTS, CHROMIUM

sys.path.insert(0, str(ROOT / "tests" / "vision"))
from vision_scenes import camera, laid_hand_strip, top_view  # noqa: E402

SIZES = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture
def scene(tmp_path) -> dict[str, Path]:
    rng = np.random.default_rng(4)
    files = {"empty": camera(top_view(rng)), "camera": camera(top_view(rng, laid_hand_strip(), "S")),
             "noise": cv2.resize(rng.integers(0, 256, (72, 128, 3), np.uint8), (1280, 720),
                                 interpolation=cv2.INTER_NEAREST)}
    out = {}
    for name, img in files.items():
        out[name] = tmp_path / f"{name}.png"
        cv2.imwrite(str(out[name]), img)
    return out


def shoot(page, name: str, tmp_path: Path, element: str = "camera-view") -> None:
    """A screenshot of the viewport with ``element``'s top just under the sticky header."""
    ARTIFACTS.mkdir(exist_ok=True)
    page.evaluate(f"scrollTo(0, document.getElementById('{element}').getBoundingClientRect().top + scrollY"
                  " - document.querySelector('header').offsetHeight - 8)")
    shot = page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
    (tmp_path / f"{name}.png").write_bytes(shot)
    assert len(shot) > 5_000


def test_calibrate_the_camera_on_the_page_then_score_by_its_frames(tmp_path, scene) -> None:
    assert Path(CHROMIUM).exists(), "Debian's chromium is needed: apt-get install -y chromium"
    with serving(tmp_path, "--no-preload", "--camera-image", str(scene["camera"]), speed=10.0) as server, \
            sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport=SIZES["desktop"])
            page.goto(f"{server.url}/#token={server.token}")
            expect(page.locator("#paired")).to_have_class("pill ok")
            expect(page.locator("#cam-state")).to_have_attribute("data-calibrated", "no")
            expect(page.locator("#cam-state")).to_contain_text("未校准")
            expect(page.locator("#btn-capture")).to_be_visible()  # the service has a camera
            page.click("#calibrate summary")
            expect(page.locator("#btn-calibrate")).to_be_disabled()  # two pictures first

            # a picture without the felt: refused with the reason, in the page's language, nothing stored
            page.set_input_files("#file-empty", str(scene["noise"]))
            expect(page.locator("#prev-empty")).to_have_attribute("data-source", "file")
            page.click("#btn-take-hand")  # the hand from the table's camera, through the service
            expect(page.locator("#prev-hand")).to_have_attribute("data-source", "camera", timeout=60000)
            wait_js(page, "document.getElementById('prev-hand').naturalWidth === 800", 60)
            page.click("#btn-calibrate")
            expect(page.locator("#cam-error")).to_contain_text("没有找到台面", timeout=90000)
            expect(page.locator("#cam-result")).to_be_hidden()
            page.click("#lang")  # English
            page.click("#btn-calibrate")
            expect(page.locator("#cam-error")).to_contain_text("no play area found", timeout=60000)
            expect(page.locator("#cam-state")).to_have_attribute("data-calibrated", "no")

            # the empty table uploaded: calibrated, stored, the view from above with the zones, seat S
            page.set_input_files("#file-empty", str(scene["empty"]))
            page.click("#btn-calibrate")
            expect(page.locator("#cam-result")).to_be_visible(timeout=60000)
            expect(page.locator("#cam-error")).to_be_empty()
            expect(page.locator("#cam-summary")).to_contain_text("seat S")
            expect(page.locator("#cam-state")).to_have_attribute("data-calibrated", "yes")
            expect(page.locator("#cam-state")).to_contain_text("E at the picture's bottom")
            expect(page.locator("#cam-view")).to_have_attribute("src", re.compile(r"^/api/score/photo/[\w-]+\.jpg$"))
            wait_js(page, "document.getElementById('cam-view').naturalWidth > 300")
            shoot(page, "camera_step_desktop_en", tmp_path)
            page.click("#lang")
            expect(page.locator("#cam-summary")).to_contain_text("南座")
            shoot(page, "camera_step_desktop_zh", tmp_path)
            page.set_viewport_size(SIZES["phone"])
            view = page.locator("#cam-view").bounding_box()
            assert view["width"] <= 390 and view["x"] >= 0, view  # no sideways scroll on a phone
            shoot(page, "camera_step_phone_zh", tmp_path)
            shoot(page, "camera_result_phone_zh", tmp_path, "cam-out")
            page.click("#lang")
            shoot(page, "camera_step_phone_en", tmp_path)
            shoot(page, "camera_result_phone_en", tmp_path, "cam-out")
            page.set_viewport_size(SIZES["desktop"])

            # scoring by the table's camera: 5 frames voted, the winner set to the hand's seat
            page.select_option("#winner", "E")
            page.click("#btn-capture")
            expect(page.locator("#annotated")).to_be_visible(timeout=90000)
            expect(page.locator("#photo-status")).to_contain_text("5 frames voted")
            expect(page.locator("#winner")).to_have_value("S")
            expect(page.locator("#seat-note")).to_contain_text("seat S")
            wait_js(page, "document.getElementById('annotated').naturalWidth > 0")
            for i in range(page.locator("#overlay button.tile.doubtful").count()):  # confirm what is flagged
                page.locator("#overlay button.tile.doubtful").first.click()
                page.click("#pick-same")
            shoot(page, "camera_capture_score_en", tmp_path, "score-view")
            page.click("#btn-photo-score")
            expect(page.locator("#fans tbody tr.fan").first).to_be_visible(timeout=30000)
            expect(page.locator("#sheet tbody tr")).to_have_count(1)
            s_name = page.locator('#seats tr[data-side="S"] td.name').inner_text()
            expect(page.locator("#sheet tbody tr td.res")).to_contain_text(s_name)
            expect(page.locator("#seat-note")).to_be_hidden()
        finally:
            browser.close()
