"""The match at the table: players at named seats, hands scored with the match's winds, the score
sheet (``/api/match/...``, an ``APIRouter`` that ``service.app`` includes).

The rules (``scoring.match``, 中国麻将竞赛规则 第五条 terms 3-9): four players at the sides drawn by
lot (定位), four rounds of four hands with the prevalent wind East, South, West, North; the dealer
moves on after every hand, won or drawn (庄家不连庄); seat winds follow the dealer; between rounds
the players change seats after the MCR tournament practice (``scoring.match.SEAT_CHANGES``,
"mcr": each player sits once at every side) unless the match was started with ``"none"``.

Everything is in the event log, nothing is erased: a new match is a ``match`` event
``{"action": "new", "players", "practice"}``; a hand is a ``score`` event (``{"match", "deal", "hand",
"winner", "discarder", "total", ...}``) or a ``draw`` event (``{"match", "deal"}``); an undo, an
edit and a delete are ``match`` events (``{"action": "undo" | "delete", "target"}``, ``{"action":
"edit", "target", ...the hand's new data}``). The sheet is the replay of these events
(``replay``). The seat and prevalent winds of a hand come from its deal, never from the request;
the table's dealer light and the dice follow the next deal (``Settings.dealer``).

The rules a match is scored by (issue #20) are fixed when it starts: the table's setting
(``controller.settings``: ``rules``, MCR when unset) unless ``POST /api/match/new`` names others.
Under MCR a hand is scored by ``scoring.score_hand`` and pays by 第十条; under another system
(``scoring.systems``) by that system, with its own situation options (``options``) and its
payments per seat, which the sheet adds up the same way (session points from 500, match and
standard points). Seat changes and the 16 hands stay the MCR practice for every system.
"""

from __future__ import annotations

import asyncio
import csv
import dataclasses
import io
from typing import Annotated, Any, Awaitable, Callable, Literal

from fastapi import APIRouter, Depends
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

from controller import cycle as CY
from controller.names import SIDES as CONTROLLER_SIDES
from controller import settings as ST
import scoring.systems
from scoring import ScoringError, score_hand
from scoring.match import HANDS_PER_SESSION, SEAT_CHANGES, Deal, HandRecord, deal, player_points, standard_points
from scoring.systems.base import SystemResult, option_view

from .errors import ServiceError

Seat = Literal["E", "S", "W", "N"]
SIDES = CONTROLLER_SIDES
#: the 42 tiles a photo's tile can be corrected to (34 hand tiles, 8 flowers), and a face-down tile
TILE_CHOICES = tuple([f"{n}{s}" for s in "mps" for n in range(1, 10)] + list("ESWNCFP") +
                     [f"{n}f" for n in range(1, 9)] + ["back"])
DEFAULT_PLAYERS = ("A", "B", "C", "D")


def error(message: str, message_zh: str | None, status: int = 422, code: str = "bad-value") -> ServiceError:
    """A ServiceError with its Chinese message (the page shows the one of its language)."""
    e = ServiceError(message, status, code)
    e.message_zh = message_zh
    return e


_FLAGS_ZH = (  # contradictory-flags messages of scoring.score._check_flags, by the words that tell them apart
    (("抢杠和", "self-drawn"), "抢杠和是和别人加杠的牌，不能是自摸"),
    (("抢杠和", "last tile"), "抢杠和不能同时是海底捞月或妙手回春"),
    (("杠上开花", "self-drawn"), "杠上开花必是自摸：放炮者应为空"),
    (("杠上开花", "needs a kong"), "杠上开花需要手中有杠"),
    (("抢杠和", "other three"), "抢杠和：其余三张在被抢的杠里，和牌者手中不能再有这张牌"),
    (("和绝张",), "和绝张：手中另有一张同样的牌，不是绝张"),
)
_CODES_ZH = {
    "syntax": "手牌写法有误", "flower-in-hand": "花牌不写在手牌里：在“花牌”一栏填写",
    "bad-meld": "括号里的牌不是顺子、刻子或杠", "tile-count": "牌数不对：和牌时共 14 张（杠算 3 张）",
    "fifth-tile": "同一种牌超过 4 张", "not-winning": "这手牌不是和牌型",
    "contradictory-flags": "和牌条件互相矛盾", "bad-value": "取值不允许",
    "tile-not-in-set": "这套规则不用这张牌", "unknown-rules": "没有这个规则", "unknown-option": "这套规则没有这个选项",
}


#: the Chinese of the codes that read otherwise for the waits and shanten analysis (POST /api/waits, /api/shanten)
ANALYSIS_ZH = {"tile-count": "牌数不对：听牌分析要 13 张，向听分析要 13 或 14 张（杠算 3 张）",
               "already-winning": "这手牌已经和了：请按“计分”"}


def scoring_error(e: ScoringError, codes_zh: dict[str, str] | None = None) -> ServiceError:
    """A ScoringError as a 422 ServiceError with the Chinese message (``message_zh``): by its code,
    from ``codes_zh`` (e.g. ``ANALYSIS_ZH``) before the scorer's own table."""
    zh = (codes_zh or {}).get(e.code) or _CODES_ZH.get(e.code, "手牌有误")
    if e.message.startswith("seen tiles"):  # scoring.analysis.parse_seen's tiles, not the hand
        zh = {"syntax": "已见的牌写法有误", "flower-in-hand": "已见的牌里不写花牌"}.get(e.code, zh)
    if e.code == "contradictory-flags":
        zh = next((z for words, z in _FLAGS_ZH if all(w in e.message for w in words)), zh)
    if e.position is not None:
        zh += f"（第 {e.position + 1} 个字符）"
    return error(f"{e.code}: {e.message}", zh + "。", 422, e.code)


# ---- request bodies ----
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NewMatchBody(_Strict):
    players: list[Annotated[str, Field(min_length=1, max_length=24)]] = Field(
        list(DEFAULT_PLAYERS), min_length=4, max_length=4, description="the players at E, S, W, N (定位)")
    practice: Literal["mcr", "none"] = "mcr"
    rules: str | None = Field(None, max_length=32, description="the rule system the match is scored by; none: the "
                              "table's setting (MCR when unset)")


class WinBody(_Strict):
    """A won hand: the winds come from the match's deal, never from the request."""

    hand: str = Field(min_length=2, max_length=120)
    winner: Seat
    discarder: Seat | None = Field(None, description="who discarded the winning tile; none: self-drawn")
    flowers: Annotated[StrictInt, Field(ge=0, le=8)] | list[Literal["1f", "2f", "3f", "4f", "5f", "6f", "7f", "8f"]] \
        = 0
    last_tile: StrictBool = False
    kong_replacement: StrictBool = False
    robbing_kong: StrictBool = False
    fourth_tile: StrictBool = False
    rules: str | None = Field(None, max_length=32, description="none: the match's rules; mcr and mcr-1998 may "
                              "be swapped for one another in an MCR match")
    options: dict[str, Any] | None = Field(None, description="the situation options of the match's rule system "
                                           "beyond the deal's winds and the discarder (see mjtable rules --list)")


class DrawBody(_Strict):
    draw: Literal[True] = True
    note: str = Field("", max_length=200)


class DrawEdit(DrawBody):
    """A recorded hand replaced by a draw: ``draw`` must be given (an empty edit is refused, not
    taken for a draw)."""

    draw: Literal[True]


class Correction(_Strict):
    index: StrictInt = Field(ge=0)
    tile: Literal[TILE_CHOICES]  # type: ignore[valid-type]


class PhotoWinBody(WinBody):
    """A hand scored from a kept photo after the player checked it (``hand`` is read from it)."""

    hand: str | None = None  # type: ignore[assignment]
    photo: str = Field(min_length=1, max_length=40)
    corrections: list[Correction] = Field(default_factory=list, max_length=60)
    confirmed: list[Annotated[StrictInt, Field(ge=0)]] = Field(default_factory=list, max_length=60)
    win: Annotated[StrictInt, Field(ge=0)] | None = Field(None, description="the winning tile's index when it "
                                                                             "was not laid apart")
    flowers: Annotated[StrictInt, Field(ge=0, le=8)] | list[Literal["1f", "2f", "3f", "4f", "5f", "6f", "7f", "8f"]] \
        | None = None


# ---- the replay ----
@dataclasses.dataclass
class MatchState:
    """A match replayed from the log: ``hands`` maps the id of each live hand's event to its data."""

    id: int
    players: list[str]
    practice: str
    hands: dict[int, dict[str, Any]]
    rules: str = "mcr"

    @property
    def next_deal(self) -> Deal | None:
        """The deal of the next hand (None after the 16th: the session is over)."""
        n = max((h["deal"] for h in self.hands.values()), default=0) + 1
        return deal(n, self.practice) if n <= HANDS_PER_SESSION else None

    def last_hand(self) -> int | None:
        """The event id of the live hand with the highest deal (what an undo takes back), or None."""
        return max(self.hands, key=lambda k: self.hands[k]["deal"], default=None)


def replay(events: list[dict[str, Any]]) -> MatchState:
    """The current match from the log's ``match``, ``score`` and ``draw`` events (oldest first).
    Before any ``match`` event the match has id 0 and the players A, B, C, D."""
    st = MatchState(0, list(DEFAULT_PLAYERS), "mcr", {}, ST.load(lenient=True).scoring_rules)
    for e in events:
        d = e["data"]
        if e["kind"] == "match":
            action = d.get("action")
            if action == "new":
                st = MatchState(e["id"], list(d["players"]), d.get("practice", "mcr"), {}, d.get("rules", "mcr"))
            elif action in ("undo", "delete"):
                st.hands.pop(d["target"], None)
            elif action == "edit" and d["target"] in st.hands:
                st.hands[d["target"]] = {**{k: v for k, v in d.items() if k not in ("action", "target")},
                                         "edited": e["id"], "kind": d.get("kind", "score")}
        elif d.get("match") == st.id and "deal" in d and (e["kind"] == "draw" or d.get("winner")):
            st.hands[e["id"]] = {**d, "kind": e["kind"]}
    return st


def sheet(st: MatchState) -> dict[str, Any]:
    """The score sheet: per hand its deal, result, each player's hand points and running session
    points; the session points, match points (比赛分 won or lost, 第五条 term 34) and standard
    points (第十条 2 (二)) per player (lists in the players' order)."""
    order = sorted(st.hands, key=lambda k: st.hands[k]["deal"])
    deals = [deal(st.hands[k]["deal"], st.practice) for k in order]
    records = [HandRecord(h.get("winner"), h.get("discarder"), int(h.get("total", 0)), payments=h.get("payments"))
               for h in (st.hands[k] for k in order)]
    rows = player_points(zip(deals, records))
    out_hands = []
    for k, d, rec, (pts, run) in zip(order, deals, records, rows):
        h = st.hands[k]
        out_hands.append({
            "id": k, "deal": d.to_dict(), "kind": h["kind"], "winner": rec.winner, "discarder": rec.discarder,
            "winner_player": d.players[rec.winner] if rec.winner else None,
            "discarder_player": d.players[rec.discarder] if rec.discarder else None,
            "total": rec.total, "unit": h.get("unit", "fan"), "rules": h.get("rules") or "mcr", "hand": h.get("hand"),
            "fans": h.get("fans", []), "flags": h.get("flags", {}), "options": h.get("options", {}),
            "source": h.get("source"), "edited": h.get("edited"), "note": h.get("note", ""),
            "points": [pts[p] for p in range(4)], "running": [run[p] for p in range(4)]})
    totals = [rows[-1][1][p] for p in range(4)] if rows else [500] * 4
    std = standard_points(dict(enumerate(totals))) if rows else {p: 0 for p in range(4)}
    nd = st.next_deal
    system = scoring.systems.get(st.rules)
    return {"match": st.id, "players": st.players, "practice": st.practice, "hands_per_session": HANDS_PER_SESSION,
            "rules": st.rules, "rules_zh": system.name_zh, "rules_en": system.name_en, "unit": system.unit.value,
            "options": [option_view(o) for o in system.options if o.name not in DEAL_OPTIONS],
            "current": ({**nd.to_dict(), "names": {s: st.players[nd.players[s]] for s in SIDES}} if nd else None),
            "finished": nd is None, "hands": out_hands, "totals": totals,
            "match_points": [t - 500 for t in totals], "standard_points": [std[p] for p in range(4)]}


def csv_bytes(sh: dict[str, Any]) -> bytes:
    """The sheet as CSV for a tournament organiser: UTF-8 with a byte-order mark (Excel then reads
    the Chinese), one row per hand, then the session points, match points and standard points."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    names = sh["players"]
    w.writerow(["盘 Hand", "圈 Round", "圈风 Prevalent wind", "庄家 Dealer", "和牌 Winner", "放炮 Discarder",
                "番数 Points", "手牌 Tiles"] + [f"{n} 盘分" for n in names])
    for h in sh["hands"]:
        d = h["deal"]
        who = names[h["winner_player"]] if h["winner"] else "荒牌 draw"
        w.writerow([d["number"], d["round"], d["prevalent_wind"], names[d["players"][d["dealer"]]], who,
                    names[h["discarder_player"]] if h["discarder"] else ("自摸 self-drawn" if h["winner"] else ""),
                    h["total"], h["hand"] or ""] + h["points"])
    for label, key in (("局分 Session points", "totals"), ("比赛分 Match points", "match_points"),
                       ("标准分 Standard points", "standard_points")):
        w.writerow([label] + [""] * 7 + sh[key])
    return ("\ufeff" + buf.getvalue()).encode("utf-8")


# ---- scoring a hand with the match's winds ----
#: options of a rule system that the match fills in from the deal and the form's winner/discarder
DEAL_OPTIONS = ("self_drawn", "seat_wind", "prevalent_wind", "discarder")
MCR_RULES = ("mcr", "mcr-1998")


def hand_rules(body: WinBody, match_rules: str) -> str:
    """The rules a hand of a match played by ``match_rules`` is scored by: the match's; in an MCR
    match ``body.rules`` may pick the other MCR text. Raises ServiceError 422 for other rules."""
    if body.rules is None or body.rules == match_rules:
        return match_rules
    if body.rules in MCR_RULES and match_rules in MCR_RULES:
        return body.rules
    m = scoring.systems.get(match_rules)
    raise error(f"this match is scored by {match_rules} ({m.name_en}): a hand cannot be scored by {body.rules!r}; "
                "start a new match for other rules", f"本场比赛按{m.name_zh}计分，不能按 {body.rules} 计一盘：换规则请开始新的比赛")


def score_win(body: WinBody, d: Deal, hand: str, flowers: Any, match_rules: str = "mcr") -> Any:
    """Score ``hand`` for ``body.winner`` with the deal's seat and prevalent winds; the same checks
    as ``mjtable score`` (``scoring.score_hand``: contradictory flags refused with the reason).
    Under another system than MCR (``match_rules``) the hand is scored by ``scoring.systems`` with
    the deal's winds, the discarder's seat wind and ``body.options``; its payments are then per
    side (``side_payments``).
    Raises ServiceError 422 (with ``message_zh``) for a bad hand, a win below 8 points (MCR) or a
    hand that is not a win under the system."""
    if body.discarder == body.winner:
        raise error("the winner cannot have discarded their own winning tile: give another discarder, or none "
                    "for a self-drawn win", "和牌者不能是放炮者：选另一家，自摸则放炮者留空")
    rules = hand_rules(body, match_rules)
    if rules not in MCR_RULES:
        return _score_system(body, d, hand, flowers, rules)
    if body.options:
        raise error(f"options {sorted(body.options)} are for other rule systems: an MCR hand takes the form's flags",
                    "国标麻将不用这些选项：请用表单上的选项")
    try:
        r = score_hand(hand, self_drawn=body.discarder is None, seat_wind=d.seat_winds[body.winner],
                       prevalent_wind=d.prevalent_wind, flowers=flowers, last_tile=body.last_tile,
                       kong_replacement=body.kong_replacement, robbing_kong=body.robbing_kong,
                       fourth_tile=body.fourth_tile, rules=rules)
    except ScoringError as e:
        raise scoring_error(e) from None
    if not r.legal:
        raise error(f"not a legal win: {r.fan_points} points without flowers, the minimum is 8 (起和分): nothing "
                    "recorded", f"不足起和分：不计花牌 {r.fan_points} 分，至少 8 分。未记录", 422, "not-legal")
    return r


def _score_system(body: WinBody, d: Deal, hand: str, flowers: Any, rules: str) -> Any:
    system = scoring.systems.get(rules)
    if flowers not in (0, [], None):
        raise error(f"{system.name_en} does not count flowers apart: " + (
            "write them in the hand (1f-8f)" if system.tile_set.flowers else "it is played without flowers"),
            f"{system.name_zh}不单独填花牌" + ("：写在手牌里（1f-8f）" if system.tile_set.flowers else "：不用花牌"))
    opts: dict[str, Any] = dict(body.options or {})
    given = sorted(k for k in opts if k in DEAL_OPTIONS)
    if given:
        raise error(f"options {given} come from the deal and the form (winner, discarder), not from options",
                    "门风、圈风、自摸和放炮者由比赛和表单决定，不能写在选项里")
    opts.update(self_drawn=body.discarder is None, seat_wind=d.seat_winds[body.winner],
                discarder=d.seat_winds[body.discarder] if body.discarder else None)
    if system.option("prevalent_wind") is not None:
        opts["prevalent_wind"] = d.prevalent_wind
    for flag in ("last_tile", "kong_replacement", "robbing_kong", "fourth_tile"):
        if getattr(body, flag):
            opts[flag] = True  # refused by the system, with the systems that take it, where it has no such option
    try:
        r = scoring.systems.score(rules, hand, opts)
    except scoring.systems.RulesError as e:
        raise error(f"{e.code}: {e}", f"{system.name_zh}：{e}", 422, e.code) from None
    if not r.legal or r.payments is None:
        why = "; ".join(r.notes) or "not a win under these rules"
        why_zh = "；".join(getattr(n, "zh", n) for n in r.notes) or "不是和牌"
        raise error(f"not a win under {system.name_en}: {why}: nothing recorded",
                    f"按{system.name_zh}不是和牌：{why_zh}。未记录", 422, "not-legal")
    return r


def side_payments(r: Any, d: Deal) -> dict[str, int] | None:
    """A system result's payments by seat wind turned into payments by side of the table (the
    match's deal gives each side its seat wind); ``None`` for an MCR result."""
    if not isinstance(r, SystemResult):
        return None
    side_of = {wind: side for side, wind in d.seat_winds.items()}
    return {side_of[w]: int(v) for w, v in r.payments.items()}


def win_data(st: MatchState, d: Deal, body: WinBody, hand: str, r: Any, source: str) -> dict[str, Any]:
    """The logged data of a won hand (``payments`` per side and ``unit`` for another rule system)."""
    system = isinstance(r, SystemResult)
    return {"match": st.id, "deal": d.number, "hand": hand, "winner": body.winner, "discarder": body.discarder,
            "total": r.total, "source": source, "rules": hand_rules(body, st.rules),
            "unit": r.unit.value if system else "fan", "payments": side_payments(r, d),
            "options": body.options or {},
            "seat_wind": d.seat_winds[body.winner], "prevalent_wind": d.prevalent_wind,
            "flags": {"self_drawn": body.discarder is None, "flowers": body.flowers, "last_tile": body.last_tile,
                      "kong_replacement": body.kong_replacement, "robbing_kong": body.robbing_kong,
                      "fourth_tile": body.fourth_tile},
            "fans": [f.to_dict() for f in (r.elements if system else r.fans)]}


def keep_photo(log: Any, scorer: Any, key: str) -> str | None:
    """Save the annotated JPEG of a scored photo beside the event log (``photos/<id>.jpg``, a few
    hundred kB) so that the logged corrections can be checked against it later. Returns its path,
    or None when it is no longer in memory or cannot be written (the hand is recorded all the same)."""
    jpeg = scorer.photos.annotated(key)
    if jpeg is None:
        return None
    path = log.path.parent / "photos" / f"{key}.jpg"
    try:
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(jpeg)
    except OSError:
        return None
    return str(path)


def make_router(*, control: Any, log: Any, scorer: Any, auth: Any,
                run: Callable[[Callable[[], Any]], Awaitable[Any]],
                apply_settings: Callable[[dict[str, Any], str], dict[str, Any]]) -> APIRouter:
    """The ``/api/match`` routes. ``run`` calls a function on the control thread; ``apply_settings``
    (changes, source) saves and applies settings there (see ``service.app``)."""
    router = APIRouter(prefix="/api/match")
    Auth = Depends(auth)
    lock = asyncio.Lock()  # one change of the match at a time: each sees the state the last one left

    def state() -> MatchState:
        return replay(log.events_of(("match", "score", "draw"), after=log.last_id("match", action="new")))

    async def follow_dealer(st: MatchState) -> None:
        """The table's dealer light and the dice follow the match's next deal."""
        nd = st.next_deal
        if nd is not None:
            await run(lambda: apply_settings({"dealer": nd.dealer}, "match"))

    async def changed(result: dict[str, Any]) -> dict[str, Any]:
        st = await asyncio.to_thread(state)
        await follow_dealer(st)
        control.hub.publish({"type": "event", "kind": "score"})
        return {**result, "sheet": sheet(st)}

    def current_deal(st: MatchState) -> Deal:
        nd = st.next_deal
        if nd is None:
            raise error(f"the session is over: its {HANDS_PER_SESSION} hands are recorded; start a new match",
                        f"本局 {HANDS_PER_SESSION} 盘已打完：请开始新的比赛", 409, "match-over")
        return nd

    def target(st: MatchState, hand_id: int) -> dict[str, Any]:
        if hand_id not in st.hands:
            raise error(f"hand {hand_id} is not a hand of the current match (already deleted, or of another match)",
                        f"第 {hand_id} 号记录不是本场比赛的一盘（已删除，或属于别的比赛）", 404, "no-such-hand")
        return st.hands[hand_id]

    @router.get("")
    async def get_match() -> dict:
        """The match: players, the next deal (round, hand, dealer, each side's seat wind and player),
        the score sheet with match and standard points."""
        return sheet(await asyncio.to_thread(state))

    @router.get("/csv")
    async def get_csv() -> Response:
        """The score sheet as CSV (UTF-8 with BOM), for a tournament organiser's spreadsheet."""
        sh = sheet(await asyncio.to_thread(state))
        return Response(csv_bytes(sh), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="mjtable-match-{sh["match"]}.csv"'})

    @router.post("/new", dependencies=[Auth])
    async def new_match(body: NewMatchBody) -> dict:
        """Start a new match: the players at E, S, W, N (定位), the seat-change practice."""
        async with lock:
            rules = body.rules or (await asyncio.to_thread(ST.load, None, True)).scoring_rules
            try:
                scoring.systems.get(rules)
            except scoring.systems.RulesError as e:
                raise error(str(e), f"没有这种规则：{rules}") from None
            eid = await asyncio.to_thread(log.append, "match", {"action": "new", "players": body.players,
                                                                "practice": body.practice, "rules": rules})
            return await changed({"match": eid})

    @router.post("/hand", dependencies=[Auth])
    async def record_win(body: WinBody) -> dict:
        """Score and record a won hand with the next deal's winds: the fans with their sets, the
        total, the payments, the new running totals (``sheet``). 422 for a bad hand or below 8."""
        async with lock:
            st = await asyncio.to_thread(state)
            d = current_deal(st)
            r = await asyncio.to_thread(score_win, body, d, body.hand, body.flowers, st.rules)
            eid = await asyncio.to_thread(log.append, "score", win_data(st, d, body, body.hand, r, "hand"))
            return await changed({"recorded": eid, "deal": d.to_dict(), "score": r.to_dict()})

    @router.post("/photo", dependencies=[Auth])
    async def record_photo(body: PhotoWinBody) -> dict:
        """Score a kept photo's hand once the player has checked it: every uncertain tile confirmed
        or corrected (``confirmed``, ``corrections``), the winning tile marked (``win``) when it was
        not laid apart. The corrections are logged with the photo's id and reading."""
        reading = scorer.photos.reading(body.photo)
        if reading is None:
            raise error("no such photo (only the last few are kept): take or upload it again",
                        "找不到这张照片（只保留最近几张）：请重新拍照或上传", 404, "not-found")
        tiles = [dict(t) for t in reading["tiles"]]
        bad = [i for i in [c.index for c in body.corrections] + body.confirmed + [body.win]
               if i is not None and i >= len(tiles)]
        if bad:
            raise error(f"tile index {bad[0]} is not in the photo: it has tiles 0-{len(tiles) - 1}",
                        f"照片里没有第 {bad[0]} 张牌（共 {len(tiles)} 张）")
        fixed = {c.index: c.tile for c in body.corrections}
        checked = set(body.confirmed) | set(fixed)
        doubtful = [(i, t) for i, t in enumerate(tiles) if i not in checked and any(
            u["box"] == t["box"] for u in reading["uncertain"])]
        if doubtful:
            i, t = doubtful[0]
            raise error(f"{len(doubtful)} tile(s) not read surely must be confirmed or corrected first: "
                        f"tile {i} read as {t['tile']} ({t['confidence']:.2f})",
                        f"有 {len(doubtful)} 张牌识别不确定，请先确认或改正：第 {i + 1} 张识别为 {t['tile']}",
                        422, "uncertain")
        for i in checked:
            tiles[i] = {**tiles[i], "tile": fixed.get(i, tiles[i]["tile"]), "confidence": 1.0}
        async with lock:
            st = await asyncio.to_thread(state)
            d = current_deal(st)
            a = await asyncio.to_thread(scorer.photos.assemble, tiles, body.win, st.rules)
            if a["hand"] is None:
                raise error("the tiles do not add up to a hand: " + "; ".join(a["problems"]),
                            "这些牌组不成一手和牌：请检查并改正照片上的牌，或标出和牌张", 422, "not-a-hand")
            # MCR counts the photo's flowers apart; another system's are in the hand read (Taiwan, Fuzhou)
            # or not played (a flower is then a problem of the assembly)
            photo_flowers = list(a["flowers"]) if st.rules in MCR_RULES else 0
            flowers = body.flowers if body.flowers is not None else photo_flowers
            scored = body.model_copy(update={"flowers": flowers})
            r = await asyncio.to_thread(score_win, scored, d, a["hand"], flowers, st.rules)
            data = win_data(st, d, scored, a["hand"], r, "photo")
            data["photo"] = {"id": body.photo, "tiles": [t["tile"] for t in reading["tiles"]],
                             "corrections": [{"index": i, "from": reading["tiles"][i]["tile"], "to": t}
                                             for i, t in sorted(fixed.items())],
                             "confirmed": sorted(set(body.confirmed)), "win": body.win,
                             "file": await asyncio.to_thread(keep_photo, log, scorer, body.photo)}
            eid = await asyncio.to_thread(log.append, "score", data)
            return await changed({"recorded": eid, "deal": d.to_dict(), "score": r.to_dict(), "assembly": a})

    @router.post("/draw", dependencies=[Auth])
    async def record_draw(body: DrawBody) -> dict:
        """A drawn hand (荒牌): no points move; the dealer moves on all the same (庄家不连庄)."""
        async with lock:
            st = await asyncio.to_thread(state)
            d = current_deal(st)
            eid = await asyncio.to_thread(log.append, "draw", {"match": st.id, "deal": d.number, "winner": None,
                                                               "total": 0, "note": body.note})
            return await changed({"recorded": eid, "deal": d.to_dict()})

    @router.post("/undo", dependencies=[Auth])
    async def undo() -> dict:
        """Take back the last hand (a new ``match`` event; the hand stays in the log)."""
        async with lock:
            st = await asyncio.to_thread(state)
            last = st.last_hand()
            if last is None:
                raise error("no hand to undo in this match", "本场比赛还没有可撤销的一盘", 409, "nothing-to-undo")
            eid = await asyncio.to_thread(log.append, "match", {"action": "undo", "target": last})
            return await changed({"undone": last, "event": eid})

    @router.delete("/hands/{hand_id}", dependencies=[Auth])
    async def delete_hand(hand_id: int) -> dict:
        """Strike a hand from the sheet (a new ``match`` event; the others keep their deals)."""
        async with lock:
            target(await asyncio.to_thread(state), hand_id)
            eid = await asyncio.to_thread(log.append, "match", {"action": "delete", "target": hand_id})
            return await changed({"deleted": hand_id, "event": eid})

    @router.put("/hands/{hand_id}", dependencies=[Auth])
    async def edit_hand(hand_id: int, body: WinBody | DrawEdit) -> dict:
        """Replace a recorded hand (a win, or a draw) keeping its deal: a win is scored again with
        that deal's winds. A new ``match`` event; the old data stays in the log."""
        async with lock:
            st = await asyncio.to_thread(state)
            old = target(st, hand_id)
            d = deal(old["deal"], st.practice)
            if isinstance(body, DrawBody):
                data: dict[str, Any] = {"kind": "draw", "match": st.id, "deal": d.number, "winner": None,
                                        "total": 0, "note": body.note}
                result: dict[str, Any] = {}
            else:
                r = await asyncio.to_thread(score_win, body, d, body.hand, body.flowers, st.rules)
                data = {"kind": "score", **win_data(st, d, body, body.hand, r, "edit")}
                result = {"score": r.to_dict()}
            eid = await asyncio.to_thread(log.append, "match", {"action": "edit", "target": hand_id, **data})
            return await changed({"edited": hand_id, "event": eid, "deal": d.to_dict(), **result})

    return router


def apply_stored(control: Any, log: Any, changes: dict[str, Any], source: str = "page") -> dict[str, Any]:
    """Validate, save and apply setting changes (rules, tile_count, dice_method, dealer, confirm_below)
    on the control thread; logged as a ``settings`` event (``source``: page, match). Returns the
    settings and a note when they apply from the next cycle (``confirm_below`` applies to the next
    photo, read at each request). A settings file that cannot be read whole is read leniently and
    written whole again (a repair, as ``mjtable config set`` does). Raises ServiceError 422 naming the
    value and what is allowed."""
    st = ST.load(lenient=True)
    allowed = tuple(control.backend.profile.gears)
    if "tile_count" in changes and changes["tile_count"] not in allowed:
        raise error(f"tile_count {changes['tile_count']} is not supported: allowed are {', '.join(map(str, allowed))}",
                    f"不支持 {changes['tile_count']} 张：可选 {'、'.join(map(str, allowed))}")
    new_st = st
    # the rules first: they set the tile count and dice method that the other changes then check against
    for key, v in sorted(changes.items(), key=lambda kv: kv[0] != "rules"):
        try:
            new_st = ST.validate(key.replace("_", "-"), str(v), new_st) if key != "tile_count" else \
                dataclasses.replace(new_st, tile_count=v)
        except ST.SettingsError as e:
            raise error(str(e), e.message_zh) from None  # no message_zh: the page says the code's word
    system = ST.rule_system(new_st.rules) if new_st.rules else None
    problem = system and system.gear_problem(new_st.tile_count)
    if problem:
        raise error(f"tile_count {new_st.tile_count} does not fit the table's rules: {problem} (change the rules "
                    "first, or set rules none)",
                    f"{new_st.tile_count} 张不符合本桌的规则（{system.name_zh} 用 {system.gear} 张）：请先改规则，或不设规则")
    current = control.rt.table.settings
    if new_st == st and (current.dealer, current.dice_method.value) == (st.dealer, st.dice_method) \
            and source == "match":
        return {"rules": st.rules, "tile_count": st.tile_count, "dice_method": st.dice_method, "dealer": st.dealer,
                "confirm_below": st.confirm_below, "note": None}
    ST.save(new_st)
    note = None
    if set(changes) != {"confirm_below"}:  # the flag threshold alone is no concern of the machine's cycle
        new = CY.Settings.from_profile(control.backend.profile, new_st.tile_count, new_st.dice_method, new_st.dealer)
        note = control.apply_settings(new)
    log.append("settings", {"changes": changes, "pending": note is not None, "source": source})
    control.hub.publish({"type": "event", "kind": "settings"})
    return {"rules": new_st.rules, "tile_count": new_st.tile_count, "dice_method": new_st.dice_method,
            "dealer": new_st.dealer, "confirm_below": new_st.confirm_below, "note": note}


__all__ = ["SEAT_CHANGES", "TILE_CHOICES", "MatchState", "apply_stored", "csv_bytes", "make_router", "replay",
           "scoring_error", "ANALYSIS_ZH", "sheet"]
