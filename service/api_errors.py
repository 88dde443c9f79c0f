"""Every error of the API in one shape: ``{"error": {"code", "message", "message_zh"?}}``.

``install(app)`` registers the handlers: the service's own ``ServiceError`` (its code and status;
``Retry-After`` when busy), HTTP errors raised by the framework (404 no such route, 405 wrong
method, 400 a body that cannot be parsed, 401), validation errors (422, naming each field, with
``fields``: ``[{"field", "problem"}]``) and any other exception (500, with no detail leaked).
The page is bilingual: where the service writes the message, ``message_zh`` carries the Chinese.
"""

from __future__ import annotations

import logging

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


def _field(loc: tuple | list) -> str:
    return ".".join(str(x) for x in loc if x != "body") or "body"


def _invalid(request: Request, e: RequestValidationError) -> JSONResponse:
    errs = e.errors()
    if any(x.get("type") == "json_invalid" for x in errs):
        x = next(x for x in errs if x.get("type") == "json_invalid")
        where = x.get("ctx", {}).get("error", "")
        return JSONResponse(error_body("bad-json", f"the body is not valid JSON: {where}".rstrip(": "),
                                       "请求内容不是有效的 JSON"), status_code=422)
    fields = [{"field": _field(x.get("loc", ())), "problem": x.get("msg", "")} for x in errs]
    message = "; ".join(f"{f['field']}: {f['problem']}" for f in fields)
    zh = "请求内容有误：" + "、".join(f["field"] for f in fields)
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
