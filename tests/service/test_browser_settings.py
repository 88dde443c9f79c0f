"""The settings form's flag threshold (issue 21, ``confirm_below``) in a real browser (Debian's
Chromium through Playwright, as tests/service/test_browser.py): shown as stored, saved, named in the
event log, in both languages."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect, sync_playwright

from service_support import serving, wait_js
from test_browser import ARGS, CHROMIUM, chromium_page


@pytest.fixture
def server(tmp_path):
    with serving(tmp_path, "--no-preload", speed=10.0) as s:
        yield s


def test_the_settings_form_sets_the_flag_threshold(server) -> None:
    assert Path(CHROMIUM).exists(), "Debian's chromium is needed: apt-get install -y chromium"
    stored = lambda: httpx.get(server.url + "/api/settings").json()["confirm_below"]  # noqa: E731
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{server.url}/#token={server.token}")
            expect(page.locator("#paired")).to_have_class("pill ok")
            # Chinese first: the default is shown as such, 0.75 says what it buys
            sel = page.locator("#set-confirm")
            expect(sel).to_have_value("0.6")
            expect(sel.locator("option")).to_have_text(["0.6（默认）", "0.7", "0.75（多问：更少错误漏问）", "0.8"])
            expect(page.locator("#settings-form")).to_contain_text("确认门槛")
            page.select_option("#set-confirm", "0.75")
            page.click("#settings-form button[type=submit]")
            expect(page.locator("#settings-note")).to_have_text("已保存")
            assert stored() == 0.75
            wait_js(page, "document.querySelector('#log').textContent.includes('确认门槛=0.75')")
            # English: the same choices in its words, the log line with the key
            page.click("#lang")
            expect(sel).to_have_value("0.75")
            expect(sel.locator("option")).to_have_text(["0.6 (default)", "0.7", "0.75 (ask more: fewer errors go unasked)",
                                                        "0.8"])
            expect(page.locator("#settings-form")).to_contain_text("Confirm below")
            wait_js(page, "document.querySelector('#log').textContent.includes('confirm_below=0.75')")
            # a value set elsewhere (mjtable config set confirm-below 0.65) is shown, not replaced
            r = httpx.put(server.url + "/api/settings", json={"confirm_below": 0.65},
                          headers={"Authorization": f"Bearer {server.token}"})
            assert r.status_code == 200, r.text
            expect(sel).to_have_value("0.65", timeout=10000)  # the settings event makes the page read them again
            expect(sel.locator("option")).to_have_count(5)
            page.select_option("#set-confirm", "0.6")
            page.click("#settings-form button[type=submit]")
            expect(page.locator("#settings-note")).to_have_text("saved")
            assert stored() == 0.6
        finally:
            browser.close()


def test_a_broken_settings_file_is_said_on_the_panel_and_saving_repairs_it(server) -> None:
    # edited by hand while the service runs: the panel shows what could be read and says so
    import json
    path = server.token_file.parent / "state" / "settings.json"  # the server's MJTABLE_STATE_DIR
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"dealer": "W", "confirm_below": "abc"}))
    with chromium_page({"width": 390, "height": 844}) as (page, errors):
        page.goto(f"{server.url}/#token={server.token}")
        expect(page.locator("#paired")).to_have_class("pill ok")
        note = page.locator("#settings-note")
        expect(note).to_contain_text("设置文件有误")
        expect(note).to_contain_text("confirm-below 'abc' is not allowed")
        expect(page.locator("#set-dealer")).to_have_value("W")
        page.click("#settings-form button[type=submit]")
        expect(note).to_have_text("已保存")
        saved = json.loads(path.read_text())
        assert saved["confirm_below"] == 0.6 and saved["dealer"] == "W"
        assert not errors
