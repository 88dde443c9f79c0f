"""The HTTP API and the web page (FastAPI). ``create_app`` wires a running ``Control``.

Reading (status, faults, settings, score sheet, trends, log, live events) needs no token; every
control or write request needs ``Authorization: Bearer <token>`` (401 otherwise, nothing changed).
Bodies are validated by pydantic in strict mode (422 with the field and what is allowed); a
refused request answers ``{"error": {"code", "message"}}`` (``service.api_errors``: every error,
404, 405 and 500 included). ``service.guard`` sees each request first: Host check, token before
body, bodies bounded by the bytes received, capped event streams, security headers.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import threading
from pathlib import Path
from typing import Annotated, Any, Callable, Literal

from fastapi import Depends, FastAPI, File, Form, HTTPException, Query, Request, UploadFile
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.formparsers import MultiPartParser

from controller import settings as ST
from controller.dice import Method
from controller.faults import CATALOGUE, code_sheet, lookup
from scoring import PROFILES, ScoringError, WinContext

from . import api_errors, auth
from .connections import Connections
from .control import Control
from .errors import ServiceError
from .eventlog import EventLog
from .guard import Guard, Limits
from .match_api import apply_stored, error, make_router
from .scorer import Scorer, analyse, score, score_system
from .scorer import score_photo as read_and_score_photo

STATIC = Path(__file__).parent / "static"
Seat = Literal["E", "S", "W", "N"]
#: seconds a request waits for the control loop (the self-test runs longer on real hardware)
CALL_TIMEOUT_S = 30.0
SELFTEST_TIMEOUT_S = 300.0
#: seconds between two keep-alive comments on an idle event stream
KEEPALIVE_S = 15.0
#: seconds between two beats of the HTTP loop's liveness (the watchdog pings while it beats)
HTTP_BEAT_S = 1.0
#: the photo upload: the one route with a large body (``max_upload_bytes``), which must give its length
PHOTO_PATH = "/api/score/photo"
#: the capture route: several frames of one hand (uploaded as multipart, or taken by the table's camera)
CAPTURE_PATH = "/api/score/capture"
#: the table camera's calibration: two pictures (uploaded, or named as taken by the camera)
CALIBRATE_PATH = "/api/camera/calibrate"
#: frames a capture votes over (``vision.voting.FRAMES``, which the service process does not import)
CAPTURE_FRAMES = (3, 5)


class _Strict(BaseModel):
    """A request body: unknown keys refused, and no coercion (``"136"`` is not 136, ``true`` is not 1)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class LiftBody(_Strict):
    direction: Literal["up", "down"]


class DiceBody(_Strict):
    values: list[Annotated[int, Field(ge=1, le=6)]] | None = Field(
        None, description="the values shown by motor dice (4 for two-throw, 2 for one-throw); none: electronic dice")


class SettingsBody(_Strict):
    rules: str | None = Field(None, max_length=32, description="a rule system (GET /api/settings: rules_choices), or none: "
                              "sets the tile count and dice method it is played with")
    tile_count: int | None = None
    dice_method: Literal[tuple(m.value for m in Method)] | None = None  # type: ignore[valid-type]
    dealer: Seat | None = None
    confirm_below: float | None = Field(None, description="the flag threshold, "
                                        f"{ST.CONFIRM_BELOW_RANGE[0]}-{ST.CONFIRM_BELOW_RANGE[1]}: tiles read from a "
                                        "photo below this confidence are listed for the player to confirm "
                                        f"(default {ST.CONFIRM_BELOW}; checked by controller.settings.check_confirm_below)")


class FaultBody(_Strict):
    fault: str = Field(min_length=1, max_length=128,
                       description="KIND[:SIDE][:NAME=VALUE,...], e.g. lift-short:W or lift-short:W:reach=0.92")


#: The win options in a score body, documented in the API's schema; their values are checked by
#: ``scoring.WinContext.from_options`` (the names, checks and messages of ``mjtable score``).
_WIN_OPTIONS_SCHEMA = {"properties": {k: {"default": v, "description": "win option (scoring.WinContext.OPTIONS)"}
                                      for k, v in WinContext.OPTIONS.items()}}


#: what a win option's value may be, in Chinese (``service.api_errors.problems_zh``; the English
#: is ``WinContext.from_options``'s own message); the options not listed are true or false
_OPTION_ZH = {"flowers": "应为 0 到 8 的整数，或花牌的列表（1f-8f，每张一次）", "seat_wind": "可选：E、S、W、N",
              "prevalent_wind": "可选：E、S、W、N"}


class ScoreOptions(BaseModel):
    """The options of a scored hand or photo: ``rules``, ``options`` (another rule system's) and
    ``accept_uncertain`` (photos) are read here; every other key is a win option
    (``scoring.WinContext.OPTIONS``: ``self_drawn``, ``seat_wind``, ``prevalent_wind``, ``flowers``,
    ``last_tile``, ``kong_replacement``, ``robbing_kong``, ``fourth_tile``), checked by ``win_options``
    through ``WinContext.from_options``, as the command line's flags and batch keys are: an unknown key
    is refused there with the list of allowed ones."""

    model_config = ConfigDict(extra="allow", strict=True, json_schema_extra=_WIN_OPTIONS_SCHEMA)
    rules: str = Field("mcr", max_length=32, description="rule system: mcr, mcr-1998 or another of `mjtable rules --list`")
    options: dict[str, Any] | None = Field(None, description="situation options of a rule system other than MCR "
                                           "(e.g. {\"riichi\": true, \"dora\": \"3m\"}); see `mjtable rules --list`")
    accept_uncertain: bool = False

    def win_options(self, where: str = "body") -> dict[str, Any]:
        """The keys given besides the model's fields: the win options, each checked by
        ``WinContext.from_options`` (the check and the message of ``mjtable score``).

        Raises:
            RequestValidationError: a key that is not a win option, or a value it does not take (422
                naming each field as ``where.key``, in the API's error shape).
        """
        given = dict(self.model_extra or {})
        errors = []
        for key, value in given.items():
            try:
                WinContext.from_options({key: value}, other_keys=tuple(type(self).model_fields))
            except ScoringError as e:
                known = key in WinContext.OPTIONS  # else a key the body does not take, named as sent
                errors.append({"loc": (where, key), "msg": e.message, "type": "value_error" if known else "extra_forbidden",
                               "ctx": {"zh": _OPTION_ZH.get(key, "应为是或否（true/false）")} if known else {}})
        if errors:
            raise RequestValidationError(errors)
        return given


class ScoreBody(ScoreOptions):
    hand: str = Field(min_length=2, max_length=120)


#: The tiles seen elsewhere, as ``mjtable waits --seen`` takes them (a string of tiles) or as a
#: ``--batch`` line may give them (a list of tile strings): ``scoring.analysis.parse_seen``
Seen = Annotated[str, Field(max_length=400)] | Annotated[list[Annotated[str, Field(max_length=40)]], Field(max_length=136)]


class WaitsBody(_Strict):
    """``POST /api/waits``: a 13-tile hand, the tiles seen elsewhere and the win options of a score."""
    hand: str = Field(min_length=2, max_length=120)
    seen: Seen = Field("", description="tiles visible elsewhere: a string, e.g. 5s5s1pE, or a list, e.g. [\"5s\", \"1p\"]")
    seat_wind: Seat = "E"
    prevalent_wind: Seat = "E"
    flowers: int = Field(0, ge=0, le=8)
    last_tile: bool = False
    kong_replacement: bool = False
    robbing_kong: bool = False
    rules: Literal["mcr", "mcr-1998"] = "mcr"


class ShantenBody(_Strict):
    """``POST /api/shanten``: a 13- or 14-tile hand and the tiles seen elsewhere."""
    hand: str = Field(min_length=2, max_length=120)
    seen: Seen = Field("", description="tiles visible elsewhere: a string, e.g. 5s5s1pE, or a list, e.g. [\"5s\", \"1p\"]")



def create_app(control: Control, log: EventLog, token: str, scorer: Scorer, *,
               max_upload_bytes: int = 8 * 1024 * 1024, start_control: bool = True,
               preload_vision: bool = False, limits: Limits | None = None,
               connections: Connections | None = None,
               seating: Callable[[], dict[str, Any] | None] | None = None) -> FastAPI:
    """The application over a ``Control`` (started at start-up when ``start_control``, stopped at
    shutdown: every motor stopped, the backend closed). ``limits``: the guard's (``service.guard``;
    the photo route's body limit is set from ``max_upload_bytes``); ``connections``: the server's
    open connections (``service.connections``), None under a test client; ``seating``: the hall's
    latest seating for this table (``service.mqtt.Publisher.seating``), None without a broker."""
    hub = control.hub

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        hub.bind(asyncio.get_running_loop())
        if start_control and not control.alive:
            control.start()
        if preload_vision:
            threading.Thread(target=_preload, name="mjtable-vision-load", daemon=True).start()
        beats = asyncio.create_task(_beat_http())
        try:
            yield
        finally:
            beats.cancel()
            control.liveness.forget("http")
            hub.close()
            await asyncio.get_running_loop().run_in_executor(None, control.stop)
            await asyncio.get_running_loop().run_in_executor(None, scorer.close)

    async def _beat_http() -> None:
        """The HTTP server's loop turns: part of the watchdog's liveness (service.liveness)."""
        while True:
            control.liveness.beat("http")
            await asyncio.sleep(HTTP_BEAT_S)

    def _preload() -> None:
        try:
            scorer.load()
        except ServiceError as e:  # the service runs on; photo scoring answers 503 with this message
            if e.code != "stopping":
                logging.getLogger("mjtable.service").warning("%s", e.message)

    app = FastAPI(title="mjtable", version="0.1.0", lifespan=lifespan,
                  description="The automatic mahjong table (自动麻将机): control, diagnosis, scoring.")
    app.state.scorer = scorer
    limits = dataclasses.replace(limits or Limits(), large_bodies=(
        (PHOTO_PATH, max_upload_bytes + 64 * 1024), (CAPTURE_PATH, CAPTURE_FRAMES[1] * (max_upload_bytes + 64 * 1024)),
        (CALIBRATE_PATH, 2 * (max_upload_bytes + 64 * 1024))),
        length_required=frozenset({PHOTO_PATH, CAPTURE_PATH, CALIBRATE_PATH}))
    app.add_middleware(Guard, router=app.router, token=token, limits=limits, connections=connections,
                       needs_token=lambda route: any(d.call is require_token for d in
                                                     getattr(getattr(route, "dependant", None), "dependencies", ())))
    app.state.limits = limits
    api_errors.install(app)
    # an upload (at most the limit above) stays in memory: Starlette spools a file part to a temporary
    # file on disk beyond spool_max_size (1 MB by default), on a Pi the SD card
    MultiPartParser.spool_max_size = max(MultiPartParser.spool_max_size, max_upload_bytes + 64 * 1024)
    bearer = HTTPBearer(auto_error=False)

    def require_token(cred: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        if cred is None:
            raise HTTPException(401, "a control token is needed: send Authorization: Bearer <token>",
                                headers={"WWW-Authenticate": "Bearer"})
        if not auth.check(cred.credentials, token):
            raise HTTPException(401, "wrong token", headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})

    Auth = Depends(require_token)

    async def run(fn, timeout: float = CALL_TIMEOUT_S):
        if not control.alive:
            raise ServiceError("the control loop is not running", 503, "stopped")
        try:
            return await asyncio.wait_for(asyncio.wrap_future(control.call(fn)), timeout)
        except TimeoutError:
            raise ServiceError(f"the machine did not answer within {timeout:.0f} s", 503, "timeout") from None

    # ---- status and live updates ----
    @app.get("/api/status")
    async def status() -> dict:
        """The table: state, walls (stacks per side, lift), tile-count gear, tiles in play, dice, fault."""
        if hub.latest is not None:
            return {k: v for k, v in hub.latest.items() if k != "type"}
        return await run(control.snapshot)

    @app.get("/api/events")
    async def events(request: Request):
        """Server-sent events: ``status`` (the same object as /api/status) on every change, ``event``
        (kind: cycle, fault, fault-cleared, selftest, score, settings) when the log grows."""
        q = hub.subscribe()

        async def stream():
            try:
                if hub.latest is not None:
                    yield f"event: status\ndata: {json.dumps(hub.latest, ensure_ascii=False)}\n\n"
                while not hub.closing:
                    try:
                        async with asyncio.timeout(KEEPALIVE_S):  # not wait_for: it can drop a cancellation (3.11)
                            msg = await q.get()
                    except TimeoutError:
                        yield ": keep-alive\n\n"
                        continue
                    if msg is None:
                        break
                    yield f"event: {msg['type']}\ndata: {json.dumps(msg, ensure_ascii=False)}\n\n"
            finally:
                hub.unsubscribe(q)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.get("/api/seating")
    async def get_seating() -> dict:
        """Who sits where in the tournament's current round, as the hall said on the broker
        (``docs/mqtt.md``): ``{"reporting": bool, "seating": {"tournament", "round", "rounds",
        "table", "players": [E, S, W, N] | null, "t"} | null}``; live as the ``seating`` event of
        /api/events. ``reporting`` false: no ``[mqtt]``, so no hall to hear from."""
        return {"reporting": seating is not None, "seating": seating() if seating is not None else None}

    @app.get("/api/auth", status_code=204, dependencies=[Auth])
    async def check_token() -> None:
        """204 when the presented token is right (the page checks a pairing with it)."""

    # ---- control ----
    @app.post("/api/cycle", dependencies=[Auth])
    async def cycle() -> dict:
        """Start a cycle: home, shuffle, build, lift, dice. 409 while moving or with a fault latched."""
        return await run(control.start_cycle)

    @app.post("/api/lift", dependencies=[Auth])
    async def lift(body: LiftBody) -> dict:
        """Move the four lifts up or down by hand: only when idle or with the walls up (409 otherwise)."""
        return await run(lambda: control.lift(body.direction == "up"))

    @app.post("/api/refill", dependencies=[Auth])
    async def refill() -> dict:
        """Refill (补牌): pause a build, or resume it (409 otherwise)."""
        return await run(control.refill)

    @app.post("/api/stop", dependencies=[Auth])
    async def stop() -> dict:
        """Stop every motor now; latched as E73 when anything moved (clear it to re-home). A running
        self-test is told first (it holds the control thread) and aborts at its next event."""
        control.request_stop()
        return await run(control.stop_all)

    @app.post("/api/dice", dependencies=[Auth])
    async def dice(body: DiceBody) -> dict:
        """Roll the dice (electronic, or the values of motor dice) and give the wall break."""
        values = tuple(body.values) if body.values is not None else None
        return await run(lambda: control.roll_dice(values))

    # ---- settings ----
    @app.get("/api/settings")
    async def get_settings() -> dict:
        """The stored settings and their choices. A settings file that cannot be read whole is not a
        failure of the request: the readable settings (defaults elsewhere) with ``problem`` saying
        what is wrong in it; a PUT writes a whole file again (as ``mjtable config set`` does)."""
        problem = None
        try:
            st = await asyncio.to_thread(ST.load)
        except ST.SettingsError as e:
            problem, st = str(e), await asyncio.to_thread(ST.load, None, True)
        allowed = list(control.backend.profile.gears)
        return {"problem": problem, "tile_count": st.tile_count, "dice_method": st.dice_method, "dealer": st.dealer,
                "profile": st.profile, "allowed_tile_counts": allowed, "rules": st.rules,
                "scoring_rules": st.scoring_rules, "rules_choices": ST.rules_choices(allowed),
                "confirm_below": st.confirm_below, "confirm_below_default": ST.CONFIRM_BELOW,
                "confirm_below_range": list(ST.CONFIRM_BELOW_RANGE)}

    @app.put("/api/settings", dependencies=[Auth])
    async def put_settings(body: SettingsBody) -> dict:
        """Change the rules, tile count, dice method, dealer or flag threshold (``confirm_below``): saved,
        used from the next cycle (now when idle; the threshold from the next photo). The rules set the
        tile count and dice method they are played with; a tile count that does not fit the rules, or
        a threshold outside its range, is refused (422) with the reason."""
        changes = body.model_dump(exclude_none=True)
        if not changes:
            raise error("nothing to change: give rules, tile_count, dice_method, dealer or confirm_below",
                        "没有要改的设置：请给出规则、牌数、骰子方式、庄家或确认门槛")

        def apply():
            return apply_stored(control, log, changes, "page")
        return await run(apply)

    # ---- faults, self-test ----
    @app.get("/api/faults")
    async def faults(limit: Annotated[int, Query(ge=1, le=500)] = 20) -> dict:
        """The current fault with its diagnosis, the warnings, recent faults from the log, the catalogue."""
        snap = hub.latest or await run(control.snapshot)
        recent = await asyncio.to_thread(log.events, "fault", limit)
        return {"current": snap.get("fault"), "warnings": snap.get("warnings", []), "state": snap.get("state"),
                "recent": recent,
                "catalogue": [{"code": f.code, "name": f.name, "meaning": f.meaning_en, "meaning_zh": f.meaning_zh}
                              for f in CATALOGUE],
                "injectable": control.sim}

    @app.get("/api/faults/codes/{code}")
    async def fault_code(code: str) -> dict:
        """One fault code in full: meaning, causes, checks, parts, connectors and the safety note, in
        English and Chinese (``controller.faults.code_sheet``). 404 for a code that does not exist."""
        try:
            return code_sheet(lookup(code))
        except KeyError as exc:
            raise ServiceError(exc.args[0], 404, "no-such-code") from None

    @app.get("/api/faults/{event_id}/trace", dependencies=[Auth])
    async def fault_trace(event_id: Annotated[int, PathParam(ge=1, le=2**63 - 1)]) -> Response:  # sqlite's INTEGER
        """The trace saved with fault ``event_id`` of the log (``/api/faults``' ``recent[].id``): the last
        cycles before it as JSON lines (docs/trace.md), for ``mjtable diagnose --trace``; for a self-test's
        id (``GET /api/selftest``'s ``id``) the self-test's trace. 404 when the log has no trace for that
        id (neither, or logged before traces were kept)."""
        text = await asyncio.to_thread(log.trace, event_id)
        if text is None:
            raise ServiceError(f"no trace is kept for event {event_id}: give the id of a fault in /api/faults", 404,
                               "no-trace")
        return Response(text, media_type="application/x-ndjson",
                        headers={"Content-Disposition": f'attachment; filename="fault-{event_id}.jsonl"'})

    @app.post("/api/faults/clear", dependencies=[Auth])
    async def clear_fault() -> dict:
        """Clear the latched fault: the machine re-homes. 409 when there is none."""
        return await run(control.clear_fault)

    @app.post("/api/sim/fault", dependencies=[Auth])
    async def inject(body: FaultBody) -> dict:
        """Inject a fault into the simulated machine, ``KIND[:SIDE][:NAME=VALUE,...]``, at any moment
        (404 on a real machine, 422 for a bad spec or parameter)."""
        return {"injected": await run(lambda: control.inject(body.fault))}

    @app.delete("/api/sim/fault", dependencies=[Auth])
    async def repair(fault: Annotated[str, Query(min_length=1, max_length=128)]) -> dict:
        """Repair injected faults, ``?fault=KIND[:SIDE]`` (its parameters aside) or ``?fault=all``: the part
        works again from now. Returns ``{"repaired": [specs], "faults": [specs still injected]}``; 409 when no
        such fault is injected, 422 for a bad spec, 404 on a real machine."""
        return await run(lambda: control.repair(fault))

    @app.get("/api/sim/fault")
    async def sim_faults() -> dict:
        """The faults injected now and every kind with its parameters (defaults, ranges): ``{"faults": [spec],
        "kinds": [{"kind", "sides", "backends", "params"}]}``; 404 on a real machine."""
        return await run(control.sim_faults)

    @app.post("/api/selftest", dependencies=[Auth])
    async def selftest() -> dict:
        """Technician self-test: every actuator and sensor in turn (409 while the machine moves)."""
        return await run(control.run_selftest, SELFTEST_TIMEOUT_S)

    @app.get("/api/selftest")
    async def last_selftest() -> dict:
        """The last self-test's report, its time and ``id``: its event id, whose trace (docs/trace.md
        section 8) is ``GET /api/faults/{id}/trace``."""
        rows = await asyncio.to_thread(log.events, "selftest", 1)
        return {"report": rows[0]["data"] if rows else None, "t": rows[0]["t"] if rows else None,
                "id": rows[0]["id"] if rows else None}

    # ---- scoring (a calculator: a hand of the match is recorded through /api/match) ----
    def _finish(result, hand: str, source: str) -> dict:
        log.append("score", {"hand": hand, "total": result.total, "legal": result.legal, "source": source})
        return {"score": result.to_dict()}

    @app.post("/api/score", dependencies=[Auth])
    async def score_hand(body: ScoreBody) -> dict:
        """Score a hand string with the winds given: a calculator, nothing goes on the score sheet (a hand
        of the match is scored with the match's winds by ``POST /api/match/hand``). ``rules`` and
        ``options`` score it by another rule system (``scoring.systems``)."""
        if body.rules not in PROFILES or body.options:
            result = await asyncio.to_thread(score_system, body.rules, body.hand,
                                             {**body.win_options(), **(body.options or {})})
            return {"score": result.to_dict()}
        result = await asyncio.to_thread(score, body.hand, {**body.win_options(), "rules": body.rules})
        return await asyncio.to_thread(_finish, result, body.hand, "hand")

    # ---- waits and shanten (听牌, 向听): analysis only, nothing recorded, so no token needed ----
    @app.post("/api/waits")
    async def waits(body: WaitsBody) -> dict:
        """The tiles a 13-tile hand waits on, each scored on a discard and self-drawn (as ``mjtable waits --json``)."""
        return await asyncio.to_thread(analyse, "waits", body.model_dump())

    @app.post("/api/shanten")
    async def shanten(body: ShantenBody) -> dict:
        """Shanten by shape; useful tiles, or each discard of a 14-tile hand (as ``mjtable shanten --json``)."""
        return await asyncio.to_thread(analyse, "shanten", body.model_dump())

    def _photo_options(o: ScoreOptions, where: str) -> dict[str, Any]:
        """The options of a photo (checked by ``score_photo`` before it is read: 422 naming the option):
        MCR's are the win options; another rule system takes the win options it shares and its own
        ``options``, as ``POST /api/score`` does."""
        if o.options and o.rules in PROFILES:
            field = "options" if where == "body" else f"{where}.options"
            raise ServiceError(f"{field}: an MCR photo takes the win options as keys of its own; options are "
                               "those of another rule system (rules)", 422, "bad-value")
        return {**o.win_options(where), **(o.options or {}), "rules": o.rules, "accept_uncertain": o.accept_uncertain}

    def _photo(read, options: dict[str, Any], source: str, name: str) -> dict:
        """Read and score a photo (``controller.table_scoring.score_photo``, as ``mjtable score-photo``):
        ``{**what read returned, "score", "problem"}``; a scored hand goes on the log."""
        answer: dict[str, Any] = {}

        def recognition() -> dict:
            answer.update(read())
            return answer["recognition"]  # plain data from the worker process (vision is not imported here)

        outcome = read_and_score_photo(recognition, options, name)
        answer.update(score=None, problem=outcome.problem)
        if outcome.result is not None:
            answer.update(_finish(outcome.result, outcome.recognition["hand"], source))
        return answer

    @app.post("/api/score/photo", dependencies=[Auth])
    async def score_photo(photo: Annotated[UploadFile, File(description="JPEG or PNG of the revealed hand")],
                          options: Annotated[str, Form(max_length=2000)] = "{}") -> dict:
        """Recognise the hand in an uploaded photo, score it; ``annotated`` is the URL of the photo with
        the tiles drawn (a JPEG, kept for the last few photos). The tiles read below the table's
        ``confirm_below`` setting, as it is at this request, are listed in ``uncertain``. 503 with
        Retry-After when busy."""
        opts = _options_form(options)
        data = await photo.read(max_upload_bytes + 1)
        if len(data) > max_upload_bytes:
            raise ServiceError(f"the photo is larger than {max_upload_bytes} bytes", 413, "too-large")
        name = photo.filename or "the upload"
        threshold = (await asyncio.to_thread(ST.load, None, True)).confirm_below
        return await asyncio.to_thread(_photo, lambda: scorer.read_upload(data, name, opts["rules"], threshold), opts,
                                       "photo", name)

    def _options_form(options: str) -> dict[str, Any]:
        """The ``options`` form field of a photo upload (JSON), checked (422 naming ``options.KEY``)."""
        try:
            o = ScoreOptions.model_validate_json(options)
        except ValidationError as e:
            raise RequestValidationError([{**x, "loc": ("options",) + tuple(x.get("loc", ()))} for x in e.errors()])
        return _photo_options(o, "options")

    @app.post(CAPTURE_PATH, dependencies=[Auth], openapi_extra={"requestBody": {"content": {
        "application/json": {"schema": {"type": "object", "description": "ScoreOptions and frames (1, or 3-5, "
                                        "default 5): the table's camera takes the frames"}},
        "multipart/form-data": {"schema": {"type": "object", "properties": {
            "frames": {"type": "array", "items": {"type": "string", "format": "binary"},
                       "description": "3-5 JPEG or PNG frames of the same hand from the table's camera"},
            "options": {"type": "string", "description": "JSON ScoreOptions"}}}}}}})
    async def score_capture(request: Request) -> dict:
        """Several frames of the same hand, read as one: each tile voted across the frames
        (``vision.voting``); a tile whose reading changes between frames, or that some frames miss,
        is listed in ``uncertain``. Answers as /api/score/photo, the recognition's tiles with
        ``votes`` ({label: frames}) and ``changed``, and ``frames`` and ``dropped`` (places seen in
        too few frames, also shown as gaps of kind ``some-frames``).

        Multipart (``frames``: 3-5 files, ``options``: JSON): uploaded frames. JSON (the options and
        ``frames``: 1, or 3-5, default 5): taken by the table's camera (404 with no camera). When
        the camera is calibrated (``mjtable camera calibrate``: settings ``camera``), the frames are
        read in its view from above, turned to the hand's seat, and ``recognition.seat`` says
        which seat laid the hand out (null: none). The flag threshold is the table's ``confirm_below``
        setting at this request."""
        low, high = CAPTURE_FRAMES
        stored = await asyncio.to_thread(ST.load, None, True)
        calibration, threshold = stored.camera, stored.confirm_below
        if request.headers.get("content-type", "").startswith("multipart/form-data"):
            async with request.form(max_files=high + 1, max_fields=4) as form:
                opts = _options_form(str(form.get("options", "{}")))
                files = [f for f in form.getlist("frames") if not isinstance(f, str)]
                if not low <= len(files) <= high:
                    raise ServiceError(f"frames: send {low} to {high} pictures of the same hand, not {len(files)}",
                                       422, "bad-value")
                datas, names = [], []
                for f in files:
                    data = await f.read(max_upload_bytes + 1)
                    if len(data) > max_upload_bytes:
                        raise ServiceError(f"frame {f.filename or len(datas) + 1} is larger than {max_upload_bytes} "
                                           "bytes", 413, "too-large")
                    if not data:
                        raise ServiceError(f"frame {f.filename or len(datas) + 1} is empty (0 bytes): send JPEG or "
                                           "PNG frames", 415, "not-an-image")
                    datas.append(data)
                    names.append(f.filename or f"frame {len(names) + 1}")
            return await asyncio.to_thread(
                _photo, lambda: scorer.photos.read_frames(datas, [None] * len(datas), names, calibration,
                                                          opts["rules"], threshold),
                opts, "photo", ", ".join(names))
        try:
            raw = await request.json()
        except ValueError:
            raise ServiceError("the body must be JSON (the options, and frames: 1 or 3-5) or multipart with 3-5 "
                               "frames", 422, "bad-value") from None
        if not isinstance(raw, dict):
            raise ServiceError("the body must be a JSON object of options", 422, "bad-value")
        count = raw.pop("frames", high)
        if isinstance(count, bool) or not isinstance(count, int) or not (count == 1 or low <= count <= high):
            raise ServiceError(f"frames: 1, or {low} to {high} frames from the camera, not {count!r}", 422, "bad-value")
        try:
            body = ScoreOptions.model_validate(raw)
        except ValidationError as e:
            raise RequestValidationError([{**x, "loc": ("body",) + tuple(x.get("loc", ()))} for x in e.errors()])
        opts = _photo_options(body, "body")
        return await asyncio.to_thread(_photo, lambda: scorer.read_camera(count, calibration, opts["rules"], threshold),
                                       opts, "camera", "the camera's picture")

    @app.get("/api/score/photo/{key}.jpg")
    async def annotated_photo(key: str) -> Response:
        """The photo of a recent /api/score/photo or /api/score/capture with its tiles drawn (JPEG,
        long side 1600 px); 404 once it is no longer kept (the last 8 are)."""
        jpeg = scorer.photos.annotated(key)
        if jpeg is None:
            raise ServiceError("no such annotated photo (only the last few are kept): score the photo again", 404,
                               "not-found")
        return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"})

    # ---- the table's own camera: the page's calibration step (issue 21) ----
    @app.get("/api/camera")
    async def camera_state() -> dict:
        """``{"available": bool, "calibration": stored (settings ``camera``) or null}``: whether the
        service has a table camera (``[camera]`` in table.toml, or ``--camera-image``) and how its
        view is calibrated; with both, the page scores by ``POST /api/score/capture``."""
        stored = await asyncio.to_thread(ST.load, None, True)
        return {"available": scorer.has_camera, "calibration": stored.camera}

    @app.post("/api/camera/picture", dependencies=[Auth])
    async def camera_picture() -> dict:
        """Take one picture with the table's camera for the calibration step, kept in memory (the
        last 4): ``{"picture": key (give it to /api/camera/calibrate as empty or hand), "preview":
        URL of a small JPEG, "size": [w, h] px}``. 404 with no camera, 503 when it fails."""
        return await asyncio.to_thread(scorer.take_picture)

    @app.post(CALIBRATE_PATH, dependencies=[Auth], openapi_extra={"requestBody": {"content": {
        "multipart/form-data": {"schema": {"type": "object", "properties": {
            "empty": {"type": "string", "format": "binary", "description": "the empty table (a file, or the key of "
                      "a picture from POST /api/camera/picture)"},
            "hand": {"type": "string", "format": "binary", "description": "a hand laid out in front of one seat "
                     "(a file, or a picture's key)"},
            "bottom_seat": {"type": "string", "enum": ["E", "S", "W", "N"], "default": "E"}},
            "required": ["empty", "hand"]}}}}})
    async def camera_calibrate(request: Request) -> dict:
        """Calibrate the table's camera as ``mjtable camera calibrate`` does (one use-case,
        ``controller.camera_setup``): the play area, the transform to a square view from above,
        the tile size and the four seats' zones, stored in the settings (``camera``). Multipart:
        ``empty`` and ``hand``, each an uploaded JPEG/PNG or the key of a picture the camera took
        (``POST /api/camera/picture``), of one size; ``bottom_seat`` (E, S, W, N: the seat at the
        pictures' bottom side). Answers ``{"camera", "seat" (where the hand lay, or null), "zones"
        ({seat: [x1, y1, x2, y2]} px of the view), "view" (URL of the hand picture from above with
        the zones drawn), "settings" (the file)}``; 422 ``calibration`` (no play area found, no
        tile in the hand picture, pictures of two sizes) with ``message_zh``, nothing stored."""
        if not request.headers.get("content-type", "").startswith("multipart/form-data"):
            raise ServiceError("send multipart/form-data: empty and hand (files, or keys of pictures taken by "
                               "POST /api/camera/picture) and bottom_seat", 422, "bad-value")
        datas: list[bytes | None] = []
        images: list[Any] = []
        names: list[str] = []
        async with request.form(max_files=3, max_fields=4) as form:
            bottom = str(form.get("bottom_seat", "E"))
            if bottom not in ("E", "S", "W", "N"):
                raise ServiceError(f"bottom_seat {bottom[:8]!r}: allowed are E, S, W, N", 422, "bad-value")
            for field in ("empty", "hand"):
                part = form.get(field)
                if part is None or part == "":
                    what = "the empty table" if field == "empty" else "a hand laid out in front of one seat"
                    raise ServiceError(f"{field}: send the picture of {what} (a file, or the key of a picture taken "
                                       "by POST /api/camera/picture)", 422, "bad-value")
                if isinstance(part, str):
                    data, image = scorer.picture(part)
                    name = f"the camera's {field} picture"
                else:
                    data, image = await part.read(max_upload_bytes + 1), None
                    name = part.filename or field
                    if len(data) > max_upload_bytes:
                        raise ServiceError(f"{name} is larger than {max_upload_bytes} bytes", 413, "too-large")
                    if not data:
                        raise ServiceError(f"{name} is empty (0 bytes): send a JPEG or PNG picture", 415,
                                           "not-an-image")
                datas.append(data)
                images.append(image)
                names.append(name)
        setup = await asyncio.to_thread(scorer.photos.calibrate, datas, images, names, bottom)

        def store() -> str:
            from controller.camera_setup import store_camera
            try:
                path = store_camera(setup["camera"])
            except ST.SettingsError as e:
                raise ServiceError(str(e), 503, "settings") from None
            log.append("settings", {"changes": {"camera": "calibrated"}, "pending": False, "source": "page",
                                    "seat": setup["seat"]})
            hub.publish({"type": "event", "kind": "settings"})
            return str(path)

        path = await run(store)
        view = f"/api/score/photo/{setup['jpeg']}.jpg" if setup["jpeg"] is not None else None
        return {"camera": setup["camera"], "seat": setup["seat"], "zones": setup["zones"], "view": view,
                "settings": path}

    # ---- the match and its score sheet (service.match_api), trends, log ----
    app.include_router(make_router(control=control, log=log, scorer=scorer, auth=require_token, run=run,
                                   apply_settings=lambda changes, source: apply_stored(control, log, changes, source)))

    @app.get("/api/doctor", dependencies=[Auth])
    def doctor_report() -> dict:
        """``mjtable doctor``'s report of the Pi this service runs on (service.doctor): each check
        with PASS/WARN/FAIL/SKIP, what was seen and the fix (en/zh). Token: it shows system details."""
        from . import doctor
        return doctor.for_service(control, scorer).to_dict()

    @app.get("/api/trends")
    async def trends(last: Annotated[int, Query(ge=2, le=1000)] = 50) -> dict:
        """Maintenance trends from the log: lift travel times per side, cycles, faults by code."""
        return await asyncio.to_thread(log.trends, last)

    @app.get("/api/log")
    async def events_log(kind: str | None = None, limit: Annotated[int, Query(ge=1, le=1000)] = 50) -> dict:
        from .eventlog import KINDS
        if kind is not None and kind not in KINDS:
            raise ServiceError(f"unknown kind {kind!r}: one of {', '.join(KINDS)}", 422, "bad-value")
        return {"events": await asyncio.to_thread(log.events, kind, limit)}

    # ---- the page ----
    @app.get("/", include_in_schema=False)
    async def index():
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
