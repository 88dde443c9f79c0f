"""Waits and shanten (听牌/向听, issue 19 section 2) on the page's scoring view, in Debian's Chromium
on a desktop and on a phone, with no pairing token (the analysis changes and records nothing): a
ready hand shows each wait with its unseen copies and its totals on a discard and self-drawn (a
wait below 8 points marked), its fans on a tap; a 1-shanten hand its shanten and useful tiles; a
14-tile hand its best discards; a bad hand the API's message; a winning hand a kind word. Every
figure is compared with the API's answer (POST /api/waits, /api/shanten) in the same test.
Screenshots (zh and en) are kept in ``tests/service/artifacts/waits-*.png``."""

from __future__ import annotations

import httpx
import pytest
from playwright.sync_api import expect

from service_support import serving
from test_browser import ARTIFACTS, chromium_page

VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
READY = "[EEE,1]23m456m789m55p"  # with seat wind E: 1m makes Pure Straight, 4m and 7m stay below 8
ONE_SHANTEN = "123m456m789m23p5s6s"
FOURTEEN = "123m456m789m23p5s6s1p"
FIFTH_TILE = "11111m456m789m234p"
WINNING = "123m456m789m234p5s5s"

# the page's rows as data: each wait's tile, unseen copies and two scores; each discard's row
WAIT_ROWS = """[...document.querySelectorAll('#an-waits tr.wait')].map((r) => {
  const score = (c) => c.dataset.total === undefined ? null
    : {total: +c.dataset.total, legal: c.dataset.legal === 'true',
       short: c.classList.contains('short') && c.textContent.includes('✗')};  // marked red and with a cross
  return {tile: r.dataset.tile, unseen: parseInt(r.querySelector('.unseen').textContent, 10),
          discard: score(r.querySelector('td.discard')), self_drawn: score(r.querySelector('td.self'))};
})"""
DISCARD_ROWS = """[...document.querySelectorAll('#an-discards tr.discard')].map((r) => ({
  tile: r.dataset.tile, shanten: +r.dataset.shanten, unseen: +r.querySelector('.unseen').textContent,
  useful: [...r.querySelectorAll('td.useful .tile-chip')].map((c) => c.dataset.tile)}))"""


@pytest.fixture
def server(tmp_path):
    with serving(tmp_path, "--no-preload", speed=50.0) as s:
        yield s


def _api(server, path: str, body: dict) -> httpx.Response:
    return httpx.post(server.url + path, json=body, timeout=30)


def _analyse(page, hand: str, seen: str = "") -> None:
    page.fill("#hand", hand)
    page.fill("#seen", seen)
    page.click("#btn-waits")


def _shot(page, name: str) -> None:
    page.locator("#score-view").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def _expected_rows(answer: dict) -> list[dict]:
    def score(s):
        return None if s is None else {"total": s["total"], "legal": s["legal"], "short": not s["legal"]}
    return [{"tile": w["tile"], "unseen": w["unseen"], "discard": score(w["discard"]),
             "self_drawn": score(w["self_drawn"])} for w in answer["waits"]]


def _no_overflow(page) -> None:
    """Nothing wider than the screen: the page does not scroll sideways, nor does the analysis."""
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth"), \
        page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert page.evaluate("(() => { const a = document.getElementById('analysis'); "
                         "return a.scrollWidth <= a.clientWidth + 1; })()")


@pytest.mark.parametrize("view", ["desktop", "phone"])
def test_waits_and_shanten_on_the_scoring_view(server, view) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    deal = httpx.get(server.url + "/api/match").json()["current"]
    with chromium_page(VIEWPORTS[view]) as (page, errors):
        page.goto(server.url)  # not paired: the analysis needs no token
        expect(page.locator("#paired")).not_to_have_class("pill ok")
        expect(page.locator("#winner option")).to_have_count(4)
        expect(page.locator("#btn-waits")).to_have_text("听牌 · 向听")

        # a ready hand, one 1m seen elsewhere: each wait with the API's unseen copies and totals
        page.select_option("#winner", "E")
        _analyse(page, READY, "1m")
        body = {"hand": READY, "seen": "1m", "seat_wind": deal["seat_winds"]["E"],
                "prevalent_wind": deal["prevalent_wind"]}
        want = _api(server, "/api/waits", body).json()
        assert [w["tile"] for w in want["waits"] if not w["discard"]["legal"]] == ["4m", "7m"], want
        expect(page.locator("#an-waits tr.wait")).to_have_count(len(want["waits"]))
        assert page.evaluate(WAIT_ROWS) == _expected_rows(want)
        unseen = sum(w["unseen"] for w in want["waits"])
        expect(page.locator("#an-ready")).to_have_text(f"听牌：听 {len(want['waits'])} 种，未见 {unseen} 张")
        expect(page.locator("#an-below8")).to_contain_text("不够八番起和")
        expect(page.locator('#an-waits tr.wait[data-tile="4m"]')).to_have_class("wait cannot")
        expect(page.locator('#an-waits tr.wait[data-tile="4m"] .tag-short')).to_have_text("不能和")
        expect(page.locator('#an-waits tr.wait[data-tile="1m"]')).to_have_class("wait")
        expect(page.locator('#an-waits tr.wait[data-tile="1m"] .tile-chip')).to_have_text("一万")
        # the fans of a wait on a tap, as the API counts them
        fans = page.locator('#an-waits tr.wait-fans[data-i="0"]')
        expect(fans).to_be_hidden()
        page.click('#an-waits tr.wait[data-tile="1m"]')
        expect(fans).to_be_visible()
        for f in want["waits"][0]["discard"]["fans"]:
            expect(fans).to_contain_text(f"{f['name_zh']} {f['points']}")
        expect(page.locator("#score-error")).to_have_text("")
        _no_overflow(page)
        _shot(page, f"waits-{view}-zh-ready")
        page.click("#lang")  # English: drawn again, the tapped row still open
        expect(page.locator("#an-ready")).to_have_text(f"Ready: waits on {len(want['waits'])} tiles, {unseen} unseen")
        expect(fans).to_contain_text(want["waits"][0]["discard"]["fans"][0]["name_en"])
        expect(page.locator("#an-below8")).to_contain_text("may not win on it")
        _no_overflow(page)
        _shot(page, f"waits-{view}-en-ready")

        # another winner: the analysis shown goes (the form changed); the winner's seat wind is sent
        page.select_option("#winner", "S")
        expect(page.locator("#analysis")).to_be_hidden()
        page.click("#btn-waits")
        want_s = _api(server, "/api/waits", {**body, "seat_wind": deal["seat_winds"]["S"]}).json()
        expect(page.locator('#an-waits tr.wait[data-tile="1m"] td.discard')).to_have_attribute(
            "data-total", str(want_s["waits"][0]["discard"]["total"]))
        assert page.evaluate(WAIT_ROWS) == _expected_rows(want_s)
        assert want_s["waits"][0]["discard"]["total"] != want["waits"][0]["discard"]["total"]

        # flowers raise a short wait's total, not the points the minimum is counted on: both shown
        page.select_option("#winner", "E")
        page.fill("#flowers", "8")
        page.click("#btn-waits")
        want_f = _api(server, "/api/waits", {**body, "flowers": 8}).json()
        w4 = next(w for w in want_f["waits"] if w["tile"] == "4m")["discard"]
        assert not w4["legal"] and w4["total"] >= 8 > w4["fan_points"], w4
        cell = page.locator('#an-waits tr.wait[data-tile="4m"] td.discard')
        expect(cell).to_have_attribute("data-total", str(w4["total"]))
        expect(cell).to_contain_text(f"{w4['fan_points']} w/o flowers")
        # a flower count out of range is refused with the server's reason, not quietly changed to 8
        page.fill("#flowers", "9")
        page.click("#btn-waits")
        expect(page.locator("#score-error")).to_contain_text("flowers")
        expect(page.locator("#analysis")).to_be_hidden()
        page.click("#lang")  # in Chinese: the field by its label on the page, and what is wrong
        page.click("#btn-waits")
        expect(page.locator("#score-error")).to_have_text("请求内容有误：花牌不能大于 8")
        _shot(page, f"waits-{view}-zh-flowers9")
        page.click("#lang")  # English again
        page.fill("#flowers", "0")

        # 1-shanten: the shanten number and the useful tiles (POST /api/shanten)
        _analyse(page, ONE_SHANTEN)
        sh = _api(server, "/api/shanten", {"hand": ONE_SHANTEN}).json()
        assert sh["shanten"] == 1
        expect(page.locator("#an-shanten")).to_have_attribute("data-shanten", "1")
        expect(page.locator("#an-shanten")).to_have_text("1-shanten (1 tile from ready)")
        assert page.evaluate("[...document.querySelectorAll('#an-useful .tile-chip')].map((c) => c.dataset.tile)") \
            == sh["useful"]
        expect(page.locator("#an-useful")).to_contain_text(f"{len(sh['useful'])} kinds, {sh['unseen']} unseen")

        # 14 tiles: the best discards first, the rest behind "more"
        _analyse(page, FOURTEEN)
        d14 = _api(server, "/api/shanten", {"hand": FOURTEEN}).json()["discards"]
        assert len(d14) > 5
        expect(page.locator("#an-discards tr.discard")).to_have_count(5)
        assert page.evaluate(DISCARD_ROWS) == [{k: d[k] for k in ("tile", "shanten", "unseen", "useful")}
                                               for d in d14[:5]]
        expect(page.locator("#an-discards-head")).to_have_text("14 tiles: at best ready after a discard")
        expect(page.locator("#an-more")).to_have_text(f"more ({len(d14) - 5} other discards)")
        _no_overflow(page)
        _shot(page, f"waits-{view}-en-discards")
        page.click("#an-more")
        expect(page.locator("#an-discards tr.discard")).to_have_count(len(d14))
        assert [r["tile"] for r in page.evaluate(DISCARD_ROWS)] == [d["tile"] for d in d14]
        _no_overflow(page)
        page.click("#an-more")  # fewer
        expect(page.locator("#an-discards tr.discard")).to_have_count(5)
        page.click("#lang")  # Chinese
        expect(page.locator("#an-discards-head")).to_have_text("14 张：打出一张后最好听牌")
        expect(page.locator("#an-more")).to_have_text(f"更多（还有 {len(d14) - 5} 种打法）")
        _no_overflow(page)
        _shot(page, f"waits-{view}-zh-discards")

        # a bad hand: the API's message under the form, in the page's language; no analysis left
        _analyse(page, FIFTH_TILE)
        err = _api(server, "/api/waits", {"hand": FIFTH_TILE}).json()["error"]
        assert err["code"] == "fifth-tile"
        expect(page.locator("#score-error")).to_have_text(err["message_zh"])
        expect(page.locator("#analysis")).to_be_hidden()
        page.click("#lang")  # English
        page.click("#btn-waits")
        expect(page.locator("#score-error")).to_have_text(err["message"])

        # a hand that already wins: said kindly, not as an error
        _analyse(page, WINNING)
        assert _api(server, "/api/waits", {"hand": WINNING}).json()["error"]["code"] == "already-winning"
        expect(page.locator("#an-wins")).to_have_text("This hand already wins: press Score.")
        expect(page.locator("#score-error")).to_have_text("")
        assert errors == []
        # nothing recorded: the score sheet is empty
        assert httpx.get(server.url + "/api/match").json()["hands"] == []
