"""Errors as JSON: the error body, the exception handlers and the request size limit.

mnemolayer's errors are mapped here, at the HTTP boundary, to a status and a body
``{"error": {"type", "message", "field"}}`` (the table is in :mod:`mnemolayer.server`).
FastAPI's own request-validation errors get the same shape, with ``field`` written the
way the library writes it (``messages[0].content``).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mnemolayer.errors import (
    EmbeddingModelMismatchError,
    MnemolayerError,
    NotFoundError,
    ScopeRequiredError,
    StoreBusyError,
    UsageError,
    ValidationError,
)

__all__ = [
    "DETAIL_ERROR_RESPONSES",
    "ERROR_RESPONSES",
    "ApiError",
    "BodyLimit",
    "DetailErrorBody",
    "ErrorBody",
    "ErrorInfo",
    "SafeJSONResponse",
    "describe",
    "install_handlers",
]

log = logging.getLogger("mnemolayer.server")


class FieldError(BaseModel):
    """One problem of a request: the field (``None`` for the whole body) and why."""

    model_config = ConfigDict(extra="forbid")

    field: str | None = None
    message: str


class ErrorDetail(BaseModel):
    """What went wrong: a stable ``type``, a message for people, the offending ``field``;
    request-validation errors list every problem in ``errors``."""

    model_config = ConfigDict(extra="forbid")

    type: str
    message: str
    field: str | None = None
    errors: list[FieldError] | None = None


class ErrorBody(BaseModel):
    """The body of every 4xx and 5xx response."""

    model_config = ConfigDict(extra="forbid")

    error: ErrorDetail


class DetailErrorBody(ErrorBody):
    """The error body on routes whose clients read a ``detail`` string (Mem0's): the
    ``error`` object and ``detail``, its message (after ``field: `` when it has one)."""

    detail: str


def _declare(*codes: int, model: type[BaseModel] = ErrorBody) -> dict[int | str, dict[str, Any]]:
    what = {
        400: "The request was rejected.",
        401: "Missing, unknown or revoked API key.",
        403: "The key may not touch this user, or is not an admin key.",
        404: "No such resource in this tenant.",
        409: "The tenant's store was built with another embedding model.",
        413: "The request body is larger than the server accepts.",
        422: "Invalid input; `field` names it.",
        500: "The store or the model failed.",
        503: "The store stayed busy past its retry budget.",
    }
    return {code: {"model": model, "description": what[code]} for code in codes}


#: The error responses every ``/v1`` route declares in the OpenAPI schema.
ERROR_RESPONSES = _declare(400, 401, 403, 404, 409, 413, 422, 500, 503)
#: The same, with :class:`DetailErrorBody`, for the routes under ``detail_prefixes``.
DETAIL_ERROR_RESPONSES = _declare(
    400, 401, 403, 404, 409, 413, 422, 500, 503, model=DetailErrorBody
)


class SafeJSONResponse(JSONResponse):
    """JSON that always encodes: text that is not valid UTF-8 (a lone surrogate) is
    escaped as ``\\uXXXX`` instead of failing the response."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, ensure_ascii=True, allow_nan=False).encode("ascii")


@dataclass(frozen=True)
class ErrorInfo:
    """How an error is reported: HTTP status, ``type``, message, offending field."""

    status: int
    type: str
    message: str
    field: str | None = None


class ApiError(Exception):
    """An HTTP error raised by the server itself (auth, admin checks)."""

    def __init__(self, status: int, type_: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.type = type_
        self.message = message
        self.field = field


class PayloadTooLarge(StarletteHTTPException):
    """Raised while reading a body past the limit; an HTTPException so that FastAPI's
    body parsing passes it through instead of calling it a parse error."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body is larger than {limit} bytes")


def error_response(
    status: int,
    type_: str,
    message: str,
    field: str | None = None,
    errors: Sequence[FieldError] | None = None,
    headers: Mapping[str, str] | None = None,
) -> SafeJSONResponse:
    """A JSON error response."""
    detail = ErrorDetail(
        type=type_, message=message, field=field, errors=list(errors) if errors else None
    )
    return SafeJSONResponse(
        ErrorBody(error=detail).model_dump(mode="json", exclude_none=True),
        status_code=status,
        headers=dict(headers) if headers else None,
    )


_FIELD_PREFIX = re.compile(r"^([A-Za-z_][\w.\[\]]*): ")


def _split_field(message: str) -> tuple[str | None, str]:
    """``"memory_id: no memory 'x'"`` → ``("memory_id", "no memory 'x'")``."""
    m = _FIELD_PREFIX.match(message)
    return (m.group(1), message[m.end() :]) if m else (None, message)


def describe(exc: MnemolayerError) -> ErrorInfo:
    """The HTTP status, error type, message and field for one of mnemolayer's errors.

    Runtime errors are logged with their traceback here and described only vaguely to
    the caller (paths and SQL stay in the server log).
    """
    if isinstance(exc, ValidationError):
        return ErrorInfo(422, "validation_error", exc.message, exc.field)
    field, message = _split_field(str(exc))
    if isinstance(exc, ScopeRequiredError):
        return ErrorInfo(422, "scope_required", message, field or "user_id")
    if isinstance(exc, NotFoundError):
        return ErrorInfo(404, "not_found", message, field)
    if isinstance(exc, UsageError):
        return ErrorInfo(400, "usage_error", message, field)
    if isinstance(exc, EmbeddingModelMismatchError):
        return ErrorInfo(
            409,
            "embedding_mismatch",
            f"this tenant's store was embedded with {exc.stored}; the server runs "
            f"{exc.configured} (reindex the store or serve it with its model)",
        )
    log.error("request failed: %s", exc, exc_info=exc)
    if isinstance(exc, StoreBusyError):
        return ErrorInfo(503, "store_busy", "the store is busy; retry shortly")
    return ErrorInfo(500, "store_error", "the store or the model failed; see the server log")


def _loc_field(loc: Sequence[Any]) -> str | None:
    """``("body", "messages", 0, "content")`` → ``"messages[0].content"``."""
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header", "cookie"):
        parts = parts[1:]
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif isinstance(p, str) and not p.startswith(("function-", "union[")):
            out += f".{p}" if out else p
    return out or None


_BODY_SHAPE = "must be a JSON object, sent with Content-Type: application/json"


def _request_validation(exc: RequestValidationError) -> dict[str, Any]:
    problems: list[FieldError] = []
    for err in exc.errors():
        loc = err.get("loc", ())
        if err.get("type") == "json_invalid":
            why = err.get("ctx", {}).get("error", "not valid JSON")
            problems.append(FieldError(field="body", message=f"invalid JSON: {why}"))
            continue
        if tuple(loc) == ("body",):  # the body as a whole: an array, null, not JSON
            problems.append(FieldError(field="body", message=_BODY_SHAPE))
            continue
        problems.append(FieldError(field=_loc_field(loc), message=str(err.get("msg", "invalid"))))
    first = problems[0] if problems else FieldError(message="invalid request")
    return {"status": 422, "type_": "validation_error", "message": first.message,
            "field": first.field, "errors": problems}  # fmt: skip


_HTTP_TYPES = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large"}


def install_handlers(app: FastAPI, *, detail_prefixes: tuple[str, ...] = ()) -> None:
    """Register the JSON error handlers on ``app``.

    Args:
        detail_prefixes: paths under which the body also carries the message as a
            top-level ``detail`` string, the shape other clients read (Mem0's
            ``MemoryClient`` on the routes of :mod:`mnemolayer.server.rest.mem0`).
    """

    def respond(request: Request, *args: Any, **kwargs: Any) -> SafeJSONResponse:
        response = error_response(*args, **kwargs)
        if detail_prefixes and request.url.path.startswith(detail_prefixes):
            body = json.loads(bytes(response.body))
            error = body["error"]
            field = error.get("field")
            body["detail"] = f"{field}: {error['message']}" if field else error["message"]
            response = SafeJSONResponse(
                body, status_code=response.status_code, headers=kwargs.get("headers")
            )
        return response

    async def on_mnemolayer(request: Request, exc: Exception) -> SafeJSONResponse:
        assert isinstance(exc, MnemolayerError)
        info = describe(exc)
        headers = {"Retry-After": "1"} if info.status == 503 else None
        return respond(request, info.status, info.type, info.message, info.field, headers=headers)

    async def on_api_error(request: Request, exc: Exception) -> SafeJSONResponse:
        assert isinstance(exc, ApiError)
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return respond(request, exc.status, exc.type, exc.message, exc.field, headers=headers)

    async def on_validation(request: Request, exc: Exception) -> SafeJSONResponse:
        assert isinstance(exc, RequestValidationError)
        return respond(request, **_request_validation(exc))

    async def on_http(request: Request, exc: Exception) -> SafeJSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        type_ = _HTTP_TYPES.get(exc.status_code, "http_error")
        detail = str(exc.detail)
        field = "body" if exc.status_code == 413 else None
        if exc.status_code == 400 and detail == "There was an error parsing the body":
            # FastAPI's answer to a body it could not decode (not UTF-8, say): say so.
            field, detail = "body", "the body could not be read as UTF-8 JSON"
        return respond(request, exc.status_code, type_, detail, field, headers=exc.headers)

    async def on_crash(request: Request, exc: Exception) -> SafeJSONResponse:
        log.error("unexpected error", exc_info=exc)
        return respond(request, 500, "internal_error", "internal server error; see the server log")

    app.add_exception_handler(MnemolayerError, on_mnemolayer)
    app.add_exception_handler(ApiError, on_api_error)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_crash)


class BodyLimit:
    """ASGI middleware: a request body over ``max_bytes`` gets 413 (JSON).

    A declared ``Content-Length`` over the limit is refused before reading anything; a
    chunked body is counted as it arrives and refused once it passes the limit.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > self.max_bytes:
                    await self._refuse(scope, receive, send)
                    return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise PayloadTooLarge(self.max_bytes)
            return message

        await self.app(scope, counted, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(
            413,
            "payload_too_large",
            f"request body is larger than {self.max_bytes} bytes",
            field="body",
            headers={"Connection": "close"},
        )
        await response(scope, receive, send)
