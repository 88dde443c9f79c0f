"""The hall's page and API (FastAPI), guarded by the table service's pieces.

Every ``/api`` route needs ``Authorization: Bearer <token>`` (the hall's token, made at the first
start like the table's, ``service.auth``): a hall's data is for its staff. The page (``/``) and its
files are public; the page keeps the token from its pairing link ``#token=...`` in the browser's
storage. ``service.guard.Guard`` sees every request first (Host check, token before body, bounded
bodies, security headers with the CSP that forbids inline styles and scripts).

Routes (all GET, JSON):

* ``/api/fleet``: ``{"t", "broker": Subscriber.state(), "tables": Store.fleet()}``;
* ``/api/faults?days=N`` (1-365, default the config's): ``{"days", "faults": Store.faults()}``;
* ``/api/maintenance``: ``{"lifts": Store.maintenance()}`` (``hall.maintenance``);
* ``/api/events?table=&kind=&limit=``: ``{"events": Store.events()}``;
* ``/api/auth``: 204 when the token is right;
* ``/api/tournament``: the tournament (``hall.tournament``): name, seating, each session's points,
  the standings overall and per round; ``/api/tournament/csv``: the standings as CSV;
* ``POST /api/tournament`` (JSON ``{"name", "seating": [{"round", "table", "players": [E, S, W, N]}]}``)
  and ``POST /api/tournament/csv?name=`` (a CSV body ``round,table,E,S,W,N``): register the tournament
  (replacing the one before; its first round becomes the current one); 422 naming the line or seat
  that is wrong;
* ``POST /api/tournament/round`` (JSON ``{"round": n}``): the round being played now; 422 for a
  round the tournament does not have.

After each of these POSTs (and on every connection to the broker) the hall tells each table its
seating for the current round, retained on ``mjtable/<table_id>/seating`` (``Subscriber.publish_seating``).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import FileResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles

from service import api_errors, auth
from service.guard import Guard, Limits

from . import tournament as T
from .errors import HallError
from .store import Store

STATIC = Path(__file__).parent / "static"


class SeatBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    round: int = Field(ge=1, le=1000)
    table: str = Field(min_length=1, max_length=64)
    players: list[str] = Field(min_length=4, max_length=4, description="the players at E, S, W, N")


class TournamentBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    name: str = Field(min_length=1, max_length=100)
    seating: list[SeatBody] = Field(min_length=1, max_length=5000)


class RoundBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    round: int = Field(ge=1, le=1000)


def _refused(e: HallError) -> HTTPException:
    return HTTPException(422, e.message)


def create_app(store: Store, token: str, subscriber: Any = None, *, fault_days: int = 7,
               limits: Limits | None = None) -> FastAPI:
    """The hall's application over ``store``; ``subscriber`` (``hall.subscriber.Subscriber`` or
    None) is only read for its ``state()``."""
    app = FastAPI(title="mjtable hall", version="0.1.0",
                  description="Every table of the hall: state, faults, maintenance (issue #22).")
    bearer = HTTPBearer(auto_error=False)

    def require_token(cred: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        if cred is None or not auth.check(cred.credentials, token):
            raise HTTPException(401, "the hall's token is needed: send Authorization: Bearer <token>",
                                headers={"WWW-Authenticate": "Bearer"})

    app.add_middleware(Guard, router=app.router, token=token, limits=limits or Limits(),
                       needs_token=lambda route: any(d.call is require_token for d in
                                                     getattr(getattr(route, "dependant", None), "dependencies", ())))
    api_errors.install(app)
    Auth = [Depends(require_token)]

    @app.get("/api/auth", dependencies=Auth, status_code=204)
    async def check_auth() -> Response:
        return Response(status_code=204)

    @app.get("/api/fleet", dependencies=Auth)
    async def fleet() -> dict:
        tables = await asyncio.to_thread(store.fleet)
        return {"t": time.time(), "broker": subscriber.state() if subscriber is not None else None, "tables": tables}

    @app.get("/api/faults", dependencies=Auth)
    async def faults(days: int = Query(fault_days, ge=1, le=365)) -> dict:
        return {"days": days, "faults": await asyncio.to_thread(store.faults, days)}

    @app.get("/api/maintenance", dependencies=Auth)
    async def maintenance() -> dict:
        return {"lifts": await asyncio.to_thread(store.maintenance)}

    @app.get("/api/events", dependencies=Auth)
    async def events(table: str | None = Query(None, max_length=64), kind: str | None = Query(None, max_length=32),
                     limit: int = Query(100, ge=1, le=1000)) -> dict:
        return {"events": await asyncio.to_thread(store.events, table, kind, limit)}

    def register(name: str, seating: list[T.Seat]) -> dict:
        try:
            checked = T.check(seating)
        except HallError as e:
            raise _refused(e) from None
        store.set_tournament(name, checked)
        tell_tables()
        return {"name": name, "seats": len(checked), "round": store.current_round()}

    def tell_tables() -> None:
        if subscriber is not None:
            subscriber.publish_seating()

    @app.post("/api/tournament", dependencies=Auth)
    async def new_tournament(body: TournamentBody) -> dict:
        return await asyncio.to_thread(register, body.name, [T.Seat(s.round, s.table, tuple(s.players))
                                                             for s in body.seating])

    @app.post("/api/tournament/csv", dependencies=Auth)
    async def new_tournament_csv(request: Request, name: str = Query(min_length=1, max_length=100)) -> dict:
        try:
            seating = T.parse_csv((await request.body()).decode("utf-8"))
        except UnicodeDecodeError:
            raise HTTPException(422, "the seating CSV must be UTF-8") from None
        except HallError as e:
            raise _refused(e) from None
        return await asyncio.to_thread(register, name, seating)

    def set_round(n: int) -> dict:
        try:
            store.set_round(n)
        except HallError as e:
            raise _refused(e) from None
        tell_tables()
        return {"round": n}

    @app.post("/api/tournament/round", dependencies=Auth)
    async def new_round(body: RoundBody) -> dict:
        return await asyncio.to_thread(set_round, body.round)

    def tournament_now() -> dict:
        name, rows = store.tournament()
        seating = T.from_rows(rows)
        sess = T.sessions(seating, store.match_events({s.table for s in seating}))
        rounds = sorted({s.round for s in seating})
        return {"name": name, "round": store.current_round(), "sessions": sess, "standings": T.standings(sess),
                "rounds": {str(n): T.standings(sess, only_round=n) for n in rounds}}

    @app.get("/api/tournament", dependencies=Auth)
    async def get_tournament() -> dict:
        return await asyncio.to_thread(tournament_now)

    @app.get("/api/tournament/csv", dependencies=Auth)
    async def get_tournament_csv() -> Response:
        t = await asyncio.to_thread(tournament_now)
        return Response(T.csv_bytes(t["sessions"]), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": 'attachment; filename="mjtable-standings.csv"'})

    @app.get("/", include_in_schema=False)
    async def index():
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
