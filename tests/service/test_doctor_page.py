"""The page's installation check (安装检查) in a real browser: ``mjtable serve --sim``'s page asks
GET /api/doctor with the paired token and shows each check with its status and fix, in Chinese
and English."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

from service_support import Server

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path, "--no-preload", speed=10.0)
    yield s
    code, _, err = s.stop()
    assert code == 0, err


def test_the_page_shows_the_doctor_report(server, tmp_path) -> None:
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
