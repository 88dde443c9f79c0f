"""The web page in a real browser: Playwright drives Debian's Chromium (``/usr/bin/chromium``;
``make test`` installs it through tools/system-deps) through the page of ``mjtable serve --sim``: a cycle fills and raises the
walls, an injected fault is diagnosed and cleared, a photo is scored. The screenshot is kept in
``tests/service/artifacts/`` (and under pytest's temporary folder). The installation check
(GET /api/doctor) is shown on the page."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from pathlib import Path
from typing import Iterator

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from app.cli import main
from service_support import ROOT, Server, serving, wait_js

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
ARTIFACTS = ROOT / "tests" / "service" / "artifacts"


@contextlib.contextmanager
def chromium_page(viewport: dict[str, int]) -> Iterator[tuple[Page, list[str]]]:
    """A page of Debian's Chromium at ``viewport`` (px) and the list its uncaught script errors go
    to; the browser is closed when the block ends."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport=viewport)
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            yield page, errors
        finally:
            browser.close()


def diagnosed(trace: Path) -> dict:
    """``mjtable diagnose --trace TRACE --json`` as a technician runs it on a downloaded trace."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["diagnose", "--trace", str(trace), "--json"])
    return json.loads(out.getvalue())


@pytest.fixture
def server(tmp_path):
    with serving(tmp_path, "--no-preload", speed=10.0) as s:
        yield s


def test_the_page_runs_the_table(server, hand_photo, tmp_path) -> None:
    assert Path(CHROMIUM).exists(), "Debian's chromium is needed: apt-get install -y chromium"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(f"{server.url}/#token={server.token}")  # the pairing link of the QR code
            expect(page.locator("#paired")).to_have_class("pill ok")
            expect(page.locator("#conn")).to_have_class("pill ok")
            assert server.token not in page.content()  # the fragment was taken and removed
            page.click("#lang")  # English
            expect(page.locator("#btn-cycle")).to_have_text("Start cycle")

            # a cycle: the walls fill and rise
            page.click("#btn-cycle")
            expect(page.locator("#state")).to_have_attribute("data-state", "building", timeout=15000)
            expect(page.locator('.wall-count[data-side="E"]')).to_contain_text("17/17", timeout=20000)
            expect(page.locator("#state")).to_have_attribute("data-state", "walls-up", timeout=15000)
            for side in "ESWN":
                expect(page.locator(f'.wall.filled[data-side="{side}"]')).to_have_attribute("data-lift", "up")
            expect(page.locator("#dice-text")).to_contain_text("threw")

            # lifting by hand while it shuffles is refused, with the reason
            page.click("#btn-cycle")
            expect(page.locator("#state")).not_to_have_attribute("data-state", "walls-up")
            page.click("#btn-up")
            expect(page.locator("#message")).to_contain_text("only when idle or with the walls up")
            expect(page.locator("#state")).to_have_attribute("data-state", "walls-up", timeout=30000)

            # a fault: a lift that does not reach the top (升牌杆不到位)
            page.click("#btn-down")
            for side in "ESWN":
                expect(page.locator(f'.wall.filled[data-side="{side}"]')).to_have_attribute("data-lift", "down",
                                                                                           timeout=15000)
            expect(page.locator("#state")).to_have_attribute("data-state", "walls-up", timeout=15000)
            page.fill("#fault-spec", "lift-short:W")
            page.click("#btn-inject")
            expect(page.locator("#message")).to_contain_text("lift-short:W")
            page.click("#btn-cycle")
            # 升牌杆不到位 on W: E21 (the lift stops part-way; its earlier, normal travel times are no trend)
            expect(page.locator("#fault-title")).to_have_text(re.compile(r"^E21 \(W\) "), timeout=40000)
            expect(page.locator("#fault-causes li").first).to_be_visible()
            expect(page.locator("#fault-checks li").first).to_be_visible()
            page.click("#lang")
            expect(page.locator("#fault-observed")).to_contain_text("西")  # the diagnosis in Chinese
            page.click("#lang")
            # the fault's trace, for `mjtable diagnose --trace` on a technician's laptop
            with page.expect_download() as dl:
                page.click("#btn-fault-trace")
            assert dl.value.suggested_filename.startswith("fault-")
            replayed = diagnosed(Path(dl.value.path()))
            assert replayed["diagnosis"]["code"] == "E21" and replayed["diagnosis"]["side"] == "W", replayed
            page.click("#btn-clear")
            expect(page.locator("#fault-none")).to_be_visible(timeout=15000)
            # repaired on the page: the technician practises on without a restart
            expect(page.locator("#sim-faults")).to_contain_text("lift-short:W")
            page.click("#btn-repair")
            expect(page.locator("#message")).to_contain_text("lift-short:W")
            expect(page.locator("#sim-faults")).to_have_text(re.compile(r"^(Injected: none|已注入: 无)$"))

            # score a photo: the tiles drawn on it, checked, then the fans and the payments
            page.set_input_files("#photo", str(hand_photo))
            page.select_option("#winner", "E")
            page.click("#btn-score")
            expect(page.locator("#annotated")).to_be_visible(timeout=30000)
            # the annotated photo is a JPEG from its own URL (not base64 in the JSON), loaded by the browser
            expect(page.locator("#annotated")).to_have_attribute("src", re.compile(r"^/api/score/photo/[\w-]+\.jpg$"))
            wait_js(page, "document.getElementById('annotated').naturalWidth > 0")
            page.click("#btn-photo-score")
            expect(page.locator("#fans tbody tr.fan").first).to_be_visible(timeout=30000)
            expect(page.locator("#fans")).to_contain_text("Pure Straight")
            expect(page.locator("#payments")).to_contain_text("winner receives")
            expect(page.locator("#sheet tbody tr")).to_have_count(1)

            # the table from above, play counter-clockwise, this screen's seat at the bottom; no label cut off
            for me, order in (("E", "ESWN"), ("S", "SWNE")):
                page.select_option("#my-seat", me)
                ys = {side: page.locator(f'.lift-label[data-side="{side}"]').bounding_box() for side in "ESWN"}
                bottom, right, top, left = (ys[x] for x in order)
                assert bottom["y"] > right["y"] > top["y"] and right["x"] > bottom["x"] > left["x"], (me, ys)
                svg = page.locator("#table").bounding_box()
                for side, b in ys.items():
                    assert svg["x"] <= b["x"] and b["x"] + b["width"] <= svg["x"] + svg["width"], (side, b, svg)
                    assert svg["y"] <= b["y"] and b["y"] + b["height"] <= svg["y"] + svg["height"], (side, b, svg)
            page.select_option("#my-seat", "E")

            # the self-test: the summary first, then the failed parts with their checks. The set is in the
            # walls (the machine is empty): a feeder's tile flow cannot be judged, its motion sensor can
            # (a jammed wheel here was once blamed on all four feeders, E32)
            page.fill("#fault-spec", "feeder-wire-loose:S")
            page.click("#btn-inject")
            page.click("#btn-selftest")
            expect(page.locator("#selftest-summary")).to_have_text(re.compile(r"^\d+ of \d+ parts passed"), timeout=90000)
            summary = page.locator("#selftest-summary").inner_text()
            ok, n = map(int, re.findall(r"\d+", summary)[:2])
            expect(page.locator("#selftest tr.fail")).to_have_count(n - ok)
            expect(page.locator("#selftest tr.fail")).to_have_count(1)
            expect(page.locator("#selftest tr.fail").first).to_contain_text("E31")
            expect(page.locator("#selftest tr.fail ol li").first).to_be_visible()
            with page.expect_download() as dl:  # the self-test's own trace (docs/trace.md section 8)
                page.click("#btn-selftest-trace")
            assert dl.value.suggested_filename.startswith("selftest-")
            replayed = diagnosed(Path(dl.value.path()))
            assert replayed["run"] == "selftest" and [p["code"] for p in replayed["diagnoses"]] == ["E31"], replayed

            # the event log, filtered by kind
            page.select_option("#log-kind", "selftest")
            expect(page.locator("#log tr")).to_have_count(1)
            page.select_option("#log-kind", "")
            wait_js(page, "document.querySelectorAll('#log tr').length > 3")

            # settings: the rules pick the gear and the dice (Changsha: 108, the sum points, the small die
            # counts); Taiwan 16-tile is played with 144 and flowers, so the score form then asks which flowers
            expect(page.locator("#set-rules")).to_have_value("none")
            page.select_option("#set-rules", "changsha")
            expect(page.locator("#set-tiles")).to_have_value("108")
            expect(page.locator("#set-dice")).to_have_value("sum-smaller")
            page.select_option("#set-rules", "taiwan")  # the seed names no dice method: the table's own
            expect(page.locator("#set-tiles")).to_have_value("144")
            expect(page.locator("#set-dice")).to_have_value("two-throw")
            page.click("#settings-form button[type=submit]")
            expect(page.locator("#settings-note")).not_to_be_empty()
            wait_js(page, "document.querySelector('#log').textContent.includes('rules=taiwan')")
            assert "sum-smaller" not in page.locator("#log").inner_text()
            expect(page.locator("#flower-list")).to_be_visible(timeout=15000)
            expect(page.locator("#flower-list input[type=checkbox]")).to_have_count(8)
            expect(page.locator("#flower-count-label")).to_be_hidden()

            ARTIFACTS.mkdir(exist_ok=True)
            page.evaluate("window.scrollTo(0, 0)")  # the sticky header at the top of the full-page picture
            shot = page.screenshot(path=str(ARTIFACTS / "service_page.png"), full_page=True)
            (tmp_path / "service_page.png").write_bytes(shot)
            assert len(shot) > 10_000
        finally:
            browser.close()


def test_the_page_shows_a_lost_link_and_a_damaged_log(tmp_path) -> None:
    """The table's board absent at start (the serial port missing) and an event log damaged by a
    power cut: the page comes up all the same and says both."""
    log = tmp_path / "events.sqlite"
    log.write_bytes(b"not a database, a card that lost its writes" * 100)
    port = tmp_path / "ttyNOBOARD"
    cfg = tmp_path / "table.toml"
    cfg.write_text(f'[machine]\nbackend = "mcu"\nport = "{port}"\n')
    srv = Server(tmp_path, "--config", str(cfg), "--no-preload", sim=False)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 1000})
                page.goto(f"{srv.url}/")
                page.click("#lang")  # English
                expect(page.locator("#link")).to_have_class("pill bad")
                expect(page.locator("#link-lost")).to_contain_text(str(port))
                expect(page.locator("#fault-title")).to_have_text(re.compile(r"^E62 "))
                expect(page.locator("#log-damaged")).to_contain_text("events.sqlite.damaged-")
            finally:
                browser.close()
    finally:
        code, _, err = srv.stop()
    assert code == 0, err


def test_the_page_shows_the_doctor_report(server, tmp_path) -> None:
    """The installation check (安装检查): refused before pairing; then mjtable doctor's report of
    this machine (not a Pi) with each row's status and fix, in Chinese and English."""
    assert Path(CHROMIUM).exists(), "Debian's chromium is needed: apt-get install -y chromium"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            page.goto(server.url + "/")
            page.click("#btn-doctor")  # not paired: refused with the reason
            expect(page.locator("#message")).to_contain_text("请先用令牌配对")
            page.fill("#token-input", server.token)  # pair through the form
            page.click("#pair-form button")
            expect(page.locator("#paired")).to_have_class("pill ok")
            page.click("#btn-doctor")
            row = page.locator('#doctor tr[data-check="pi-model"]')
            expect(row).to_contain_text("注意")  # WARN: this machine is not a Raspberry Pi
            expect(row).to_contain_text("not a Raspberry Pi")
            expect(row.locator(".doctor-fix")).to_contain_text("请在麻将机的树莓派上运行")
            expect(page.locator("#doctor-summary")).to_contain_text("没有不合格项")
            page.click("#lang")
            expect(row.locator(".doctor-fix")).to_contain_text("Run mjtable doctor on the table's Raspberry Pi")
            expect(page.locator('#doctor tr[data-check="memory"]')).to_contain_text("PASS")
            page.locator("#doctor-view").screenshot(path=str(tmp_path / "doctor.png"))
        finally:
            browser.close()


def test_the_page_names_an_unread_area_apart_from_a_missing_tile(server, hand_photo) -> None:
    # issue 21: a gap of kind "unread" (vision.assemble.unread_areas: tiles there were not read) is
    # drawn dashed with its own wording in both languages, counted apart from the layout's gaps
    assert Path(CHROMIUM).exists(), "Debian's chromium is needed: apt-get install -y chromium"
    tiles = [{"tile": n, "box": [100 + 50 * i, 400, 145 + 50 * i, 460], "confidence": 0.99, "sideways": False}
             for i, n in enumerate(["1m", "2m", "3m"])]
    reading = {"photo": "p1", "annotated": "/api/score/photo/p1.jpg", "problem": None,
               "recognition": {"tiles": tiles, "uncertain": [], "image_size": [800, 600], "hand": None,
                               "gaps": [{"box": [250, 400, 295, 460], "kind": "row-gap"},
                                        {"box": [300, 50, 500, 250], "kind": "unread"}]}}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.route(re.compile(r".*/api/score/photo$"), lambda route: route.fulfill(
                status=200, content_type="application/json", body=json.dumps(reading)))
            page.goto(f"{server.url}/#token={server.token}")
            expect(page.locator("#paired")).to_have_class("pill ok")
            page.click("#lang")  # English
            expect(page.locator("#btn-cycle")).to_have_text("Start cycle")
            page.set_input_files("#photo", str(hand_photo))
            page.click("#btn-score")
            expect(page.locator("#overlay div.gap")).to_have_count(2, timeout=30000)
            unread = page.locator("#overlay div.gap.unread")
            expect(unread).to_have_count(1)
            expect(unread).to_have_attribute("title", "tiles here were not read: check the photo")
            expect(page.locator("#overlay div.gap:not(.unread)")).to_have_attribute("title", "a tile seems to be missing here")
            expect(page.locator("#photo-status")).to_contain_text("a tile seems to be missing at 1 place(s)")
            expect(page.locator("#photo-status")).to_contain_text("tiles were not read at 1 place(s) (dashed): check the photo")
            box = unread.bounding_box()
            inner = page.locator("#photo-inner").bounding_box()
            assert abs(box["width"] / inner["width"] - 200 / 800) < 0.02, (box, inner)  # placed like the tiles
            page.click("#lang")  # Chinese: the page is drawn again in it
            expect(page.locator("#overlay div.gap.unread")).to_have_attribute("title", "此处有牌未能识别，请查看照片")
            expect(page.locator("#photo-status")).to_contain_text("有 1 处有牌未能识别")
        finally:
            browser.close()
