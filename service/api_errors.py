"""Every error of the API in one shape: ``{"error": {"code", "message", "message_zh"?}}``.

``install(app)`` registers the handlers: the service's own ``ServiceError`` (its code and status;
``Retry-After`` when busy), HTTP errors raised by the framework (404 no such route, 405 wrong
method, 400 a body that cannot be parsed, 401), validation errors (422, naming each field, with
``fields``: ``[{"field", "problem"}]``) and any other exception (500, with no detail leaked).
The page is bilingual: where the service writes the message, ``message_zh`` carries the Chinese.
"""

from __future__ import annotations

import logging
import re

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from .errors import ServiceError
from .guard import error_body

#: status -> (code, Chinese message) of the framework's HTTP errors
_HTTP = {400: ("bad-request", "请求无法解析"), 401: ("unauthorized", "需要控制令牌：请先配对（扫描二维码）"),
         403: ("forbidden", "不允许此操作"), 404: ("not-found", "没有这个地址"),
         405: ("method-not-allowed", "此地址不支持该请求方法"), 413: ("too-large", "请求过大"),
         415: ("unsupported-media-type", "不支持的内容类型")}


def _service_error(request: Request, e: ServiceError) -> JSONResponse:
    retry = getattr(e, "retry_after", None)
    headers = {"Retry-After": str(retry)} if retry is not None else None
    return JSONResponse(error_body(e.code, e.message, getattr(e, "message_zh", None)), status_code=e.status,
                        headers=headers)


def _http_error(request: Request, e: StarletteHTTPException) -> JSONResponse:
    code, zh = _HTTP.get(e.status_code, ("error", "请求出错"))
    message = str(e.detail)
    if e.status_code == 404 and message == "Not Found":
        message = f"no such address: {request.url.path} (the API is under /api/, the page at /)"
    elif e.status_code == 405:
        allow = (e.headers or {}).get("Allow", "")
        message = f"{request.method} is not allowed on {request.url.path}" + (f": use {allow}" if allow else "")
    elif e.status_code == 400 and "parsing the body" in message:
        message = "the request body cannot be parsed: send JSON (or multipart for a photo) as documented"
    return JSONResponse(error_body(code, message, zh), status_code=e.status_code, headers=e.headers)


#: the names pydantic gives the branches of a union in an error's place (``seen.constrained-str``,
#: ``flowers.list[literal[...]]``, ``WinBody.hand`` for a body that is one model or another): not
#: fields, so not named to the user
_BRANCH = re.compile(r"^(constrained-[a-z]+|[a-z-]+\[.*\]|[A-Z][A-Za-z0-9]*)$")
#: where a value came from, not a field (``body``, a ``path`` parameter, a ``query`` parameter)
_SOURCES = ("body", "path", "query")


def _place(x: dict) -> tuple[str, tuple, tuple]:
    """An error's source (``body``, ``path``, ``query``; ``""`` for a place the service gave
    itself), its place without the source and the union branches, and the branches it was in. The
    last part of an unknown key's place is the key the user sent, kept whatever it looks like."""
    loc = list(x.get("loc", ()))
    source = loc.pop(0) if loc and loc[0] in _SOURCES else ""
    keep = len(loc) - 1 if x.get("type") == "extra_forbidden" else len(loc)
    place = tuple(p for i, p in enumerate(loc) if i >= keep or not (isinstance(p, str) and _BRANCH.match(p)))
    branches = tuple(p for i, p in enumerate(loc) if i < keep and isinstance(p, str) and _BRANCH.match(p))
    return source, place, branches


def _is_type(x: dict) -> bool:
    return x.get("type", "").endswith("_type")


def relevant(errors: list[dict]) -> list[dict]:
    """The errors of a refused request that say what is wrong, each with ``source`` and ``place``
    (``_place``): for a body that may be one model or another (a won hand or a draw), only the
    errors of the model it comes nearest to (the fewest keys it does not know, then the fewest
    places wrong); for a value that may be of one type or another (``seen``: text or a list), a
    type mismatch is left out where the value had a type it may have and fails otherwise there or
    inside it (a list of 200, a list whose item is wrong). A value of no type it may have keeps its
    mismatches (one per type)."""
    placed = []
    for x in errors:
        source, place, branches = _place(x)
        placed.append({**x, "source": source, "place": place, "branches": branches})
    models = {x["branches"][0] for x in placed if x["branches"] and x["branches"][0][:1].isupper()}
    if len(models) > 1:  # a union of models: the nearest one

        def distance(model: str) -> tuple:
            mine = [x for x in placed if x["branches"][:1] == (model,)]
            return (sum(x.get("type") == "extra_forbidden" for x in mine),
                    len({x["place"] for x in mine if x.get("type") != "extra_forbidden"}), model)
        best = min(models, key=distance)
        placed = [x for x in placed if not x["branches"][:1] or x["branches"][0] == best]
    out, seen = [], set()
    for x in placed:
        at = x["place"]
        if _is_type(x) and any(y is not x and y["source"] == x["source"] and y["place"][:len(at)] == at
                               and not (y["place"] == at and _is_type(y)) for y in placed):
            continue
        if (x["source"], at, x.get("msg")) not in seen:
            seen.add((x["source"], at, x.get("msg")))
            out.append(x)
    return out


def _field(place: tuple) -> str:
    return ".".join(str(x) for x in place) or "body"


#: the request bodies' fields as the page names them (the page's form labels)
FIELD_ZH = {"hand": "手牌", "seen": "已见的牌", "flowers": "花牌", "seat_wind": "门风", "prevalent_wind": "圈风",
            "self_drawn": "自摸", "last_tile": "海底/妙手", "kong_replacement": "杠上开花", "robbing_kong": "抢杠和",
            "fourth_tile": "和绝张", "rules": "规则", "options": "选项", "accept_uncertain": "接受未确认的牌",
            "winner": "和牌者", "discarder": "放炮者", "players": "玩家", "practice": "练习", "tile_count": "牌数",
            "dice_method": "骰子方式", "dealer": "庄家", "confirm_below": "确认门槛", "direction": "升降方向",
            "values": "骰子点数", "fault": "故障", "photo": "照片", "corrections": "改正", "confirmed": "已确认",
            "win": "和张", "index": "序号", "tile": "牌", "note": "备注", "draw": "流局", "hand_id": "记录序号",
            "event_id": "事件序号", "limit": "条数", "last": "最近的次数", "kind": "类别"}

#: pydantic's error types (``errors()[i]["type"]``) said in Chinese, after the field's name;
#: ``{name}`` from the error's ``ctx`` (``{zh}``: a Chinese reason the service gave itself)
_PROBLEM_ZH = {"missing": "必须填写", "extra_forbidden": "：不认识这一项", "less_than_equal": "不能大于 {le}",
               "greater_than_equal": "不能小于 {ge}", "less_than": "须小于 {lt}", "greater_than": "须大于 {gt}",
               "string_too_long": "太长（最多 {max_length} 个字）", "string_too_short": "太短",
               "too_long": "太多（最多 {max_length} 项）", "too_short": "太少（至少 {min_length} 项）",
               "int_type": "应为整数", "int_parsing": "应为整数", "int_from_float": "应为整数",
               "float_type": "应为数字", "float_parsing": "应为数字", "bool_type": "应为是或否",
               "bool_parsing": "应为是或否", "string_type": "应为文字", "list_type": "应为列表",
               "dict_type": "应为对象", "model_type": "应为对象", "model_attributes_type": "应为对象",
               "literal_error": "可选：{expected}", "enum": "可选：{expected}", "value_error": "{zh}"}


def _choices(expected: str) -> str:
    """pydantic's ``'up' or 'down'`` as 可选 lists them: ``up、down`` (JSON's true and false)."""
    names = re.findall(r"'([^']*)'|\b(True|False)\b", expected)
    return "、".join(q or b.lower() for q, b in names) or expected


def _where_zh(x: dict) -> str:
    """The place of error ``x`` by the page's names; an unknown key as the user sent it."""
    place = x["place"]
    sent = place[-1:] if x.get("type") == "extra_forbidden" else ()
    names = [f"第 {p + 1} 项" if isinstance(p, int) else FIELD_ZH.get(p, str(p)) for p in place[:len(place) - len(sent)]]
    return "的".join(names + [str(p) for p in sent]) or "请求"


def problems_zh(errors: list[dict]) -> str:
    """The errors of ``relevant`` in Chinese, one clause per field: the field by the page's name
    for it (``FIELD_ZH``; a list item by its number), then the problem (``_PROBLEM_ZH``), or the
    field alone for a kind of error not listed there. A value of no type it may have is said once
    (已见的牌应为文字或列表)."""
    said: dict[str, list[str]] = {}
    for x in errors:
        ctx = dict(x.get("ctx") or {})
        if "expected" in ctx:
            ctx["expected"] = _choices(str(ctx["expected"]))
        try:
            problem = _PROBLEM_ZH.get(x.get("type", ""), "").format(**ctx)
        except (KeyError, IndexError, ValueError):
            problem = ""
        if not x["place"] and x.get("type") == "missing":
            problem = "为空（应为 JSON 对象）"  # no body at all: 请求内容有误：请求为空
        found = said.setdefault(_where_zh(x), [])
        if problem not in found:
            found.append(problem)
    out = []
    for where, found in said.items():
        types = [p[2:] for p in found if p.startswith("应为")]  # 应为文字 / 应为列表 -> 应为文字或列表
        rest = [p for p in found if p and not p.startswith("应为")]
        out.append(where + "；".join((["应为" + "或".join(types)] if types else []) + rest))
    return "；".join(out)


def _english(errors: list[dict]) -> list[dict]:
    """``fields`` of the error body: one entry per field; a value of no type it may have says them
    together ("Input should be a valid string or a valid list")."""
    fields: dict[str, list[str]] = {}
    for x in errors:
        fields.setdefault(_field(x["place"]), []).append(x.get("msg", ""))
    lead = "Input should be "
    return [{"field": f, "problem": lead + " or ".join(m[len(lead):] for m in msgs)
             if len(msgs) > 1 and all(m.startswith(lead) for m in msgs) else "; ".join(msgs)}
            for f, msgs in fields.items()]


def _invalid(request: Request, e: RequestValidationError) -> JSONResponse:
    errs = e.errors()
    if any(x.get("type") == "json_invalid" for x in errs):
        x = next(x for x in errs if x.get("type") == "json_invalid")
        where = x.get("ctx", {}).get("error", "")
        return JSONResponse(error_body("bad-json", f"the body is not valid JSON: {where}".rstrip(": "),
                                       "请求内容不是有效的 JSON"), status_code=422)
    errs = relevant(errs)
    fields = _english(errs)
    message = "; ".join(f"{f['field']}: {f['problem']}" for f in fields)
    zh = "请求内容有误：" + problems_zh(errs)
    return JSONResponse(error_body("bad-value", message, zh, fields=fields), status_code=422)


def _internal(request: Request, e: Exception) -> JSONResponse:
    logging.getLogger("mjtable.service").error("%s %s failed: %r", request.method, request.url.path, e)
    return JSONResponse(error_body("internal", "the service failed on this request (it keeps running): see its log",
                                   "服务处理此请求时出错（服务仍在运行）：请查看日志"), status_code=500)


def install(app: FastAPI) -> None:
    """Register the error handlers on ``app`` (see the module docstring)."""
    app.add_exception_handler(ServiceError, _service_error)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, _http_error)  # type: ignore[arg-type]
    app.add_exception_handler(RequestValidationError, _invalid)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _internal)
