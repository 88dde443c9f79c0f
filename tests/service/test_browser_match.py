"""A whole match through the page in Debian's Chromium, on a desktop and on a phone: a new match,
the dice, hands scored by hand and by photo (one tile corrected on the photo), a bad hand refused
under the form, a drawn hand, an undo, an edit, the CSV export; the sheet's numbers are checked
against the scoring engine (``scoring.score_hand``) and the match functions (``scoring.match``).
Screenshots of the Chinese page are kept in ``tests/service/artifacts/``."""

from __future__ import annotations

import csv
import io
import re

import pytest
from playwright.sync_api import expect, sync_playwright

from scoring import score_hand
from scoring.match import HandRecord, deal, player_points, standard_points
from service_support import serving, wait_js
from test_browser import ARGS, ARTIFACTS, CHROMIUM, chromium_page

PLAYERS = ["张伟", "李娜", "王芳", "陈静"]
VIEWPORTS = {"desktop": {"width": 1280, "height": 1000}, "phone": {"width": 390, "height": 844}}
LATIN = re.compile(r"[A-Za-z]{2,}")


@pytest.fixture
def server(tmp_path):
    with serving(tmp_path, "--no-preload", speed=50.0) as s:
        yield s


def _win(page, winner: str, discarder: str, hand: str, flowers: int = 0, flags: tuple[str, ...] = ()) -> None:
    page.select_option("#winner", winner)
    page.select_option("#discarder", discarder)
    page.fill("#hand", hand)
    page.fill("#flowers", str(flowers))
    for f in flags:
        page.check(f)
    page.click("#btn-score")


def _expected(hands: list[tuple]) -> tuple[list, list]:
    """The sheet the engine gives: per hand (deal number, winner side, discarder side or None, hand,
    flowers, flags) or (deal number, None) for a draw -> per hand points by player, and totals."""
    rows = []
    for h in hands:
        n, winner = h[0], h[1]
        if winner is None:
            rows.append((deal(n), HandRecord(None)))
            continue
        _, _, discarder, text, flowers, flags = h
        d = deal(n)
        total = score_hand(text, self_drawn=discarder is None, seat_wind=d.seat_winds[winner],
                           prevalent_wind=d.prevalent_wind, flowers=flowers, **flags).total
        rows.append((d, HandRecord(winner, discarder, total)))
    pts = player_points(rows)
    return [[p[0][i] for i in range(4)] for p in pts], [pts[-1][1][i] for i in range(4)]


@pytest.mark.parametrize("view", ["desktop", "phone"])
def test_a_whole_match_through_the_page(server, hand_photo, view) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            ctx = browser.new_context(viewport=VIEWPORTS[view], accept_downloads=True)
            page = ctx.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{server.url}/#token={server.token}")
            expect(page.locator("#paired")).to_have_class("pill ok")
            assert "#" not in page.url  # the fragment is taken and removed from the address bar
            page.click("#lang")  # English
            expect(page.locator("#btn-score")).to_have_text("Score")

            # a new match: the players at E, S, W, N
            page.click("#new-match summary")
            for side, name in zip("ESWN", PLAYERS):
                page.fill(f"#p-{side}", name)
            page.click("#btn-new-match")
            expect(page.locator("#round")).to_have_text("E round")
            expect(page.locator("#hand-no")).to_contain_text("hand 1 (1 of 16)")
            expect(page.locator("#dealer")).to_have_text("E 张伟")
            expect(page.locator('#seats tr[data-side="S"] .wind')).to_have_text("S")

            # a cycle, then the dice: thrown by the dealer of the match; the break drawn on the table
            page.click("#btn-cycle")
            expect(page.locator("#state")).to_have_attribute("data-state", "walls-up", timeout=30000)
            expect(page.locator("#trend circle")).to_have_count(4)  # the lift times of the cycle
            page.click("#btn-dice")
            expect(page.locator("#dice-text")).to_contain_text("E threw")
            expect(page.locator("#break")).to_have_count(1)

            hands: list[tuple] = []
            # hand 1, by hand: E wins on S's discard
            _win(page, "E", "S", "123m456m789m234p5s5s")
            expect(page.locator("#fans tbody tr.fan").first).to_be_visible()
            expect(page.locator("#fans")).to_contain_text("All Chows")
            expect(page.locator("#payments")).to_contain_text("winner receives")
            expect(page.locator("#payments")).to_contain_text("new session points")
            hands.append((1, "E", "S", "123m456m789m234p5s5s", 0, {}))
            expect(page.locator("#hand-no")).to_contain_text("hand 2")
            expect(page.locator("#dealer")).to_have_text("S 李娜")  # the dealer moved on
            # the dice follow the match's dealer
            page.click("#btn-dice")
            expect(page.locator("#dice-text")).to_contain_text("S threw")

            # a bad hand: the reason under the form, the previous result cleared, nothing recorded
            _win(page, "N", "", "11111m234m567m888m")
            expect(page.locator("#score-error")).to_contain_text("fifth-tile")
            expect(page.locator("#result")).to_be_hidden()
            # contradictory flags: refused with the reason, as by the command line
            _win(page, "N", "E", "123m456m789m234p5s5s", flags=("#f-kong",))
            expect(page.locator("#score-error")).to_contain_text("self-drawn")
            page.uncheck("#f-kong")

            # hand 2, by photo: S (the dealer) self-drawn; one tile corrected (9m -> 6m) on the photo
            page.select_option("#winner", "S")
            page.select_option("#discarder", "")
            page.fill("#hand", "")
            page.set_input_files("#photo", str(hand_photo))
            page.click("#btn-score")
            expect(page.locator("#photo-check")).to_be_visible(timeout=60000)
            wait_js(page, "document.getElementById('annotated').naturalWidth > 0")
            tile = page.locator('#overlay button.tile[data-tile="9m"]')
            box = tile.bounding_box()
            assert box and box["width"] >= 40  # a finger's width, its name readable
            tile.click()
            expect(page.locator("#picker")).to_be_visible()
            page.click('#picker-tiles button[data-tile="6m"]')
            expect(page.locator('#overlay button.tile.corrected')).to_have_count(1)
            if view == "phone":
                page.screenshot(path=str(ARTIFACTS / f"match_photo_{view}.png"))
            page.click("#btn-photo-score")
            expect(page.locator("#photo-check")).to_be_hidden(timeout=30000)
            expect(page.locator("#score-hand")).to_contain_text("123456678mEEENN")
            hands.append((2, "S", None, "123456678mEEENN", 0, {}))

            # hand 3: drawn (the dealer moves on all the same)
            page.click("#btn-draw")
            expect(page.locator("#sheet tbody tr")).to_have_count(3)
            hands.append((3, None))
            expect(page.locator("#dealer")).to_have_text("N 陈静")

            # hand 4: N self-drawn, two flowers, on the last tile
            _win(page, "N", "", "[EEE,1]123m456m789m5s5s", flowers=2, flags=("#f-last",))
            expect(page.locator("#sheet tbody tr")).to_have_count(4)
            hands.append((4, "N", None, "[EEE,1]123m456m789m5s5s", 2, {"last_tile": True}))
            expect(page.locator("#round")).to_have_text("S round")  # the South round: seats changed
            expect(page.locator("#dealer")).to_have_text("E 李娜")

            # hand 5 recorded wrongly, undone, recorded again
            _win(page, "W", "N", "123m456m789m234p5s5s")
            expect(page.locator("#sheet tbody tr")).to_have_count(5)
            page.click("#btn-undo")
            expect(page.locator("#sheet tbody tr")).to_have_count(4)
            _win(page, "W", "E", "123m456m789m234p5s5s")
            expect(page.locator("#sheet tbody tr")).to_have_count(5)
            hands.append((5, "W", "E", "123m456m789m234p5s5s", 0, {}))

            # hand 6, then hand 1 edited: E won self-drawn after all
            _win(page, "S", "W", "[EEE,1]123m456m789m5s5s")
            hands.append((6, "S", "W", "[EEE,1]123m456m789m5s5s", 0, {}))
            expect(page.locator("#sheet tbody tr")).to_have_count(6)
            page.locator('#sheet tbody tr[data-deal="1"] button.edit').click()
            expect(page.locator("#editing")).to_be_visible()
            page.select_option("#discarder", "")
            page.click("#btn-score")
            expect(page.locator("#editing")).to_be_hidden()
            hands[0] = (1, "E", None, "123m456m789m234p5s5s", 0, {})

            # the sheet against the engine
            want_pts, want_totals = _expected(hands)
            rows = page.locator("#sheet tbody tr")
            expect(rows).to_have_count(6)
            for i, want in enumerate(want_pts):
                cells = rows.nth(i).locator("td.pts")
                got = [int(cells.nth(k).inner_text().split()[0]) for k in range(4)]
                assert got == want, (i + 1, got, want)
            totals = page.locator("#sheet-totals td").all_inner_texts()[0:4]
            assert [int(x) for x in totals] == want_totals
            std = standard_points(dict(enumerate(want_totals)))
            assert [float(x) for x in page.locator("#sheet-standard td").all_inner_texts()[0:4]] == [std[i] for i in range(4)]

            # the CSV export
            with page.expect_download() as dl:
                page.click("#csv")
            data = open(dl.value.path(), "rb").read()
            assert data.startswith(b"\xef\xbb\xbf")
            table = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
            assert table[0][-4:] == [f"{n} 盘分" for n in PLAYERS]
            assert [[int(x) for x in r[-4:]] for r in table[1:7]] == want_pts
            assert [int(x) for x in table[-3][-4:]] == want_totals

            # Stop all stays on screen at the bottom of the page
            page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
            stop = page.locator("#btn-stop").bounding_box()
            assert stop and 0 <= stop["y"] and stop["y"] + stop["height"] <= VIEWPORTS[view]["height"]

            # the Chinese page: the match, the form and the sheet with no English
            page.click("#lang")
            expect(page.locator("#round")).to_have_text("南风圈")
            _win(page, "N", "", "11111m234m567m888m")
            expect(page.locator("#score-error")).to_contain_text("超过 4 张")
            for sel in ("#match-view", "#score-view", "#sheet-view", "#table-view", "#settings-view", "#maint-view"):
                text = page.locator(sel).inner_text()
                leaks = [w for w in LATIN.findall(text) if w not in ("CSV", "mjtable")]
                assert not leaks, (sel, leaks)
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=str(ARTIFACTS / f"match_{view}.png"), full_page=True)
            assert not errors, errors
        finally:
            browser.close()


def test_a_malformed_token_fragment_does_not_kill_the_page(server) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORTS["phone"])
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(f"{server.url}/#token=%zz")
            expect(page.locator("#conn")).to_have_class("pill ok")
            expect(page.locator("#paired")).to_have_class("pill")
            assert "#" not in page.url and not errors
            page.goto(f"{server.url}/#xtoken={server.token}")  # not an exact #token= fragment: not taken
            expect(page.locator("#paired")).to_have_class("pill")
        finally:
            browser.close()


@pytest.mark.parametrize("view", ["desktop", "phone"])
def test_a_changsha_match_through_the_page(server, view) -> None:
    """The table set to Changsha in the settings form: a new match is scored by Changsha; the form
    shows Changsha's own options instead of MCR's flowers and flags; the result lists its elements
    and the payments by side, which the sheet adds up (checked against ``scoring.systems``)."""
    import scoring.systems
    with chromium_page(VIEWPORTS[view]) as (page, errors):
        page.goto(f"{server.url}/#token={server.token}")
        expect(page.locator("#paired")).to_have_class("pill ok")
        page.select_option("#set-rules", "changsha")
        expect(page.locator("#set-tiles")).to_have_value("108")
        page.click("#settings-form button[type=submit]")
        expect(page.locator("#settings-note")).not_to_be_empty()
        page.click("#new-match summary")
        for side, name in zip("ESWN", PLAYERS):
            page.fill(f"#p-{side}", name)
        page.click("#btn-new-match")
        expect(page.locator("#match-rules")).to_have_text("长沙麻将")
        expect(page.locator("#mcr-flags")).to_be_hidden()
        expect(page.locator("#mcr-flowers")).to_be_hidden()
        expect(page.locator("#btn-waits")).to_be_hidden()  # the waits are scored by MCR
        expect(page.locator("#seen-row")).to_be_hidden()
        expect(page.locator("#opt-birds")).to_be_visible()
        expect(page.locator("#opt-dealer_bonus")).to_be_checked()
        # the Chinese page shows the system's options in Chinese: labels, choice values, tooltips
        options_text = page.locator("#sys-options").inner_text()
        assert "中鸟翻倍" in options_text and "从和牌者数" in options_text
        assert not LATIN.search(options_text), options_text
        tips = page.eval_on_selector_all("#sys-options label", "els => els.map((e) => e.title)")
        assert tips and all(re.search("[\u4e00-\u9fff]", tip) and not LATIN.search(tip) for tip in tips), tips

        # the dealer (E) wins a small hand on W's discard, two birds turned: 5p and 9s
        page.select_option("#winner", "E")
        page.select_option("#discarder", "W")
        page.fill("#hand", "123m456m789m234p5s5s")
        page.fill("#opt-birds", "5p9s")
        page.click("#btn-score")
        expect(page.locator("#fans tbody tr.fan").first).to_be_visible()
        expect(page.locator("#score-total")).to_contain_text("分")
        expect(page.locator("#payments")).to_contain_text("收付")
        # the result's notes in Chinese too (scoring.systems.base.Note): where the birds landed
        expect(page.locator("#score-total")).to_contain_text("鸟 5p9s 落在东、东（从东数起）")
        assert not LATIN.search(page.locator("#score-total").inner_text())
        page.locator("#score-form").screenshot(path=str(ARTIFACTS / f"match_changsha_form_{view}.png"))
        want = scoring.systems.score("changsha", "123m456m789m234p5s5s",
                                     {"discarder": "W", "seat_wind": "E", "birds": "5p9s"})
        row = page.locator("#sheet tbody tr").first
        for i, side in enumerate("ESWN"):  # hand 1: players A-D sit at E-N, seat winds = sides
            v = want.payments[side]
            expect(row.locator(f'td.pts[data-player="{i}"]')).to_contain_text(f"+{v}" if v > 0 else str(v))
        assert want.payments["W"] < 0 < want.payments["E"]
        expect(page.locator("#opt-birds")).to_have_value("")  # the form is reset to the system's defaults
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(ARTIFACTS / f"match_changsha_{view}.png"), full_page=True)
        assert not errors, errors
