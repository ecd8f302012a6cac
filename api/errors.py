"""Every error the HTTP API answers, in one shape, from one place.

Each error body is ``{"error": SHORT, "detail": SENTENCE, "status": CODE, "code": CODE, "message":
SENTENCE}`` (``code`` and ``message`` are Marquez's names for the same, which its clients read) plus,
where they apply,
``errors`` (each invalid field: ``loc`` such as ``["query", "asOf"]``, ``msg``, ``type``; on Marquez's
paths a parameter error is a 400 whose ``errors`` are sentences, as Marquez answers), ``kind``
and ``key`` (what was not found). The mapping from domain errors (:mod:`graph.errors`, the
questions' input errors) to statuses is :func:`install`; FastAPI's own validation errors and
``HTTPException`` are answered in the same shape.

The API's own errors, each a :class:`graph.errors.LineageError`:

::

    TokenConfigError     (api.auth) LINEAGE_API_TOKENS is malformed
    BadToken             (api.auth) a signed bearer token (a JWT) that does not verify (401)
    BodyError            (api.receive) a request body cannot be taken (413, 415, 400, 503)
    BadParam             (api.errors) a request parameter the question refuses (422)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from api.paths import on_marquez_path
from graph.errors import (
    DatabaseUnavailable,
    LineageError,
    NotFound,
    QueryError,
    QueryTimeout,
    ServerError,
)
from ingest.log.protocol import NotOffered

log = logging.getLogger(__name__)

RETRY_AFTER_S = 5
SHORT = {400: "bad request", 401: "unauthorized", 403: "forbidden", 404: "not found",
         405: "method not allowed", 408: "request timeout", 413: "too large",
         415: "unsupported media type", 421: "misdirected request", 422: "invalid request",
         431: "request head too large", 500: "internal error", 501: "not implemented",
         503: "unavailable",
         504: "query timed out"}


class FieldError(BaseModel):
    loc: list[str | int]
    msg: str
    type: str


class ErrorBody(BaseModel):
    """The body of every error answer."""

    error: str
    detail: str
    status: int
    code: int
    message: str
    errors: list[FieldError] | list[str] | None = None  # sentences on Marquez's paths
    kind: str | None = None
    key: str | None = None
    didYouMean: list[dict[str, str]] | None = None  # noqa: N815 (the API's camelCase)
    candidates: list[str] | None = None


RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody, "description": SHORT[code]} for code in (401, 403, 422, 503, 504)}
"""The error answers every read operation may give, for the API description."""


class BadParam(LineageError):
    """A parameter that FastAPI's types let through but the question refuses (422)."""

    def __init__(self, field: str, message: str, where: str = "query") -> None:
        super().__init__(message)
        self.field, self.message, self.where = field, message, where


def body(status: int, detail: str, **extra: Any) -> dict[str, Any]:
    """An error body: the short name of the status, the sentence, and any extra fields."""
    return {"error": SHORT.get(status, "error"), "detail": detail, "status": status,
            "code": status, "message": detail, **{k: v for k, v in extra.items() if v is not None}}


def answer(status: int, detail: str, headers: Mapping[str, str] | None = None,
           **extra: Any) -> JSONResponse:
    return JSONResponse(body(status, detail, **extra), status_code=status, headers=headers)


def _field_errors(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"loc": [str(p) if not isinstance(p, int) else p for p in e.get("loc", ())],
             "msg": str(e.get("msg", "")), "type": str(e.get("type", "value_error"))}
            for e in errors]


def _invalid(request: Request, errors: list[dict[str, Any]]) -> JSONResponse:
    """422 with each invalid field; on Marquez's paths, 400 with ``errors`` as sentences, the
    shape of Marquez's answer to a parameter it refuses (Dropwizard's validation errors)."""
    detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors)
    if on_marquez_path(request):
        said = [f"{' '.join(map(str, e['loc']))} {e['msg']}" for e in errors]
        return answer(400, detail or "invalid request", errors=said or ["invalid request"])
    return answer(422, detail or "invalid request", errors=errors)


def _closest(request: Request, e: NotFound) -> list[dict[str, str]]:
    """Datasets or jobs (any namespace), or a dataset's columns (``dataset.column``), named like
    the one not found (impact.discover.closest); none if that fails."""
    from impact.discover import closest

    if e.kind not in ("dataset", "job", "column") or e.name is None:
        return []
    try:
        close = closest(request.app.state.context.graph(), e)
    except LineageError:
        return []
    return [{"namespace": f.namespace, "name": f.name} for f in close]


def unexpected(e: Exception) -> JSONResponse:
    """A bug's answer: logged with its traceback (call it while handling ``e``), a 500 naming only
    the exception's class."""
    log.exception("unhandled error")
    return answer(500, type(e).__name__)


def install(app: FastAPI) -> None:
    """Register the handlers that turn errors into answers of the one shape."""

    @app.exception_handler(RequestValidationError)
    def invalid(request: Request, e: RequestValidationError) -> JSONResponse:
        return _invalid(request, _field_errors(list(e.errors())))

    @app.exception_handler(BadParam)
    def bad_param(request: Request, e: BadParam) -> JSONResponse:
        return _invalid(request, [{"loc": [e.where, e.field], "msg": e.message,
                                   "type": "value_error"}])

    @app.exception_handler(HTTPException)
    def http_error(_: Request, e: HTTPException) -> JSONResponse:
        return answer(e.status_code, str(e.detail), headers=e.headers)

    @app.exception_handler(NotFound)
    def not_found(request: Request, e: NotFound) -> JSONResponse:
        return answer(404, str(e), kind=e.kind, key=e.key, didYouMean=_closest(request, e))

    @app.exception_handler(DatabaseUnavailable)
    def unavailable(_: Request, e: DatabaseUnavailable) -> JSONResponse:
        log.warning("Neo4j unavailable: %s", e)
        return answer(503, f"Neo4j is not answering; retry in {RETRY_AFTER_S} s",
                      headers={"Retry-After": str(RETRY_AFTER_S)})

    @app.exception_handler(ServerError)
    def no_server(_: Request, e: ServerError) -> JSONResponse:
        log.warning("Neo4j not provisioned: %s", e)
        return answer(503, str(e), headers={"Retry-After": str(RETRY_AFTER_S)})

    @app.exception_handler(NotOffered)
    def not_offered(_: Request, e: NotOffered) -> JSONResponse:
        return answer(501, str(e))

    @app.exception_handler(QueryTimeout)
    def timeout(_: Request, e: QueryTimeout) -> JSONResponse:
        return answer(504, str(e))

    @app.exception_handler(QueryError)
    def query_error(_: Request, e: QueryError) -> JSONResponse:
        log.error("query failed: %s", e)
        return answer(500, f"query {e.query} failed; see the server log")

    @app.exception_handler(Exception)
    def internal(_: Request, e: Exception) -> JSONResponse:
        return unexpected(e)
