"""The hottest routes, answered below FastAPI's routing: ``POST /api/v1/lineage`` and the questions.

Producers send one event per request, so FastAPI's per-request machinery around the endpoint (its
exception middleware and exit stack, matching the path against every route, solving the
endpoint's parameters) was a good part of the API's CPU per event (measured in
docs/benchmarks.md, "Ingest over HTTP").
This ASGI layer sits inside the request context and the guard, so ids, timing, host and origin
checks are the same; an error the endpoint raises is answered by the application's own exception
handlers, so every answer is the same as through the router. The route stays declared there for
the OpenAPI description and for any path this layer does not take (a trailing slash, another
method).

The questions (``GET`` routes of the question and Marquez-shaped routers) are answered here too,
when their query is plainly valid: each value of the kind the route declares (a string within
its lengths, decimal digits within its bounds, ``true`` or ``false``, one of a Literal's values,
an ISO time for ``asOf``), no parameter given twice. Anything else (a missing or malformed
parameter, ``depth=+3``, ``includeRetired=yes``) goes on to the router, so that FastAPI's own
validation answers it as before, with the same 422. What is parsed here is read from the route's
own signature (:func:`get_routes`), and the route's function is called with it on the same thread
pool, so an answer is the same bytes either way (tests/integration/test_hot_routes.py). What this
saves per question is in docs/benchmarks.md, "Questions below the router".
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import annotated_types
from fastapi import params
from fastapi.routing import APIRoute, APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from api import deps
from api.deps import check_scope
from ingest.times import parse_time

# None: not answered here; the request goes on to the router
Endpoint = Callable[[Request], Awaitable[Response | None]]


class HotRoutes:
    """ASGI middleware: ``routes`` maps (method, path) to an endpoint taking only the request."""

    def __init__(self, app: ASGIApp, routes: Mapping[tuple[str, str], Endpoint]) -> None:
        self.app = app
        self.routes = dict(routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = self.routes.get((scope.get("method", ""), scope.get("path", ""))) \
            if scope["type"] == "http" else None
        if endpoint is None:
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        try:
            response = await endpoint(request)
        except Exception as e:
            handler = _handler(scope, e)
            if handler is None:
                raise  # to the server error middleware, as from the router
            answer = handler(request, e)
            response = await answer if inspect.isawaitable(answer) else answer
        if response is None:  # left to the router (its own exception middleware inside)
            await self.app(scope, receive, send)
            return
        await response(scope, receive, send)


def _handler(scope: Scope, error: Exception) -> Callable[[Request, Exception], Any] | None:
    """The application's handler for ``error``'s class or its nearest base, but for the catch-all
    ``Exception`` one, which the server error middleware outside us applies."""
    handlers: dict[Any, Any] = getattr(scope["app"], "exception_handlers", {})
    for cls in type(error).__mro__:
        if cls in (Exception, BaseException):
            return None
        if cls in handlers:
            found: Callable[[Request, Exception], Any] = handlers[cls]
            return found
    return None


class _Unsure(Exception):
    """A query this layer leaves to the router (FastAPI's validation answers it)."""


_DIGITS = re.compile(r"[0-9]{1,15}")


@dataclass(frozen=True)
class _Param:
    """How one argument of a route's function is found in the request."""

    arg: str
    alias: str  # the query parameter's name; "" for the graph
    kind: Literal["graph", "as_of", "str", "int", "bool", "choice"]
    required: bool
    default: Any = None
    choices: tuple[str, ...] = ()
    min_length: int = 0
    max_length: int | None = None
    ge: int | None = None
    le: int | None = None

    def parse(self, raw: str) -> Any:
        if self.kind == "str":
            if len(raw) < self.min_length or (self.max_length is not None
                                              and len(raw) > self.max_length):
                raise _Unsure
            return raw
        if self.kind == "int":
            if not _DIGITS.fullmatch(raw):
                raise _Unsure
            value = int(raw)
            if (self.ge is not None and value < self.ge) or (self.le is not None and value > self.le):
                raise _Unsure
            return value
        if self.kind == "bool":
            if raw not in ("true", "false"):
                raise _Unsure
            return raw == "true"
        if self.kind == "choice":
            if raw not in self.choices:
                raise _Unsure
            return raw
        try:  # as_of
            return parse_time(raw)
        except ValueError:
            raise _Unsure from None


_PLAIN = {str: "str", int: "int", bool: "bool"}


def _kind(annotation: Any) -> tuple[str, tuple[str, ...], bool] | None:
    """(kind, choices, optional) of a query parameter's type; None if this layer cannot parse it."""
    optional = False
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) != 1:
            return None
        annotation, optional = members[0], True
    if typing.get_origin(annotation) is Literal:
        choices = typing.get_args(annotation)
        if not all(isinstance(c, str) for c in choices):
            return None
        return "choice", tuple(choices), optional
    found = _PLAIN.get(annotation)
    return None if found is None else (found, (), optional)


def _param(p: inspect.Parameter) -> _Param | None:
    annotation, meta = p.annotation, []
    if typing.get_origin(annotation) is typing.Annotated:
        annotation, *meta = typing.get_args(annotation)
    required = p.default is inspect.Parameter.empty
    default = None if required else p.default
    for m in meta:
        if isinstance(m, params.Depends):
            if m.dependency is deps.graph:
                return _Param(p.name, "", "graph", False)
            if m.dependency is deps.as_of:  # under the query name that dependency declares
                declared = _param(next(iter(inspect.signature(
                    deps.as_of, eval_str=True).parameters.values())))
                return None if declared is None else _Param(p.name, declared.alias, "as_of", False)
            return None
    query = next((m for m in meta if isinstance(m, params.Query)), None)
    if meta and query is None:
        return None  # a header, a body, a path parameter...
    kind = _kind(annotation)
    if kind is None:
        return None
    name, choices, optional = kind
    bounds: dict[str, Any] = {}
    for c in (query.metadata if query is not None else ()):
        if isinstance(c, annotated_types.MinLen):
            bounds["min_length"] = c.min_length
        elif isinstance(c, annotated_types.MaxLen):
            bounds["max_length"] = c.max_length
        elif isinstance(c, annotated_types.Ge):
            bounds["ge"] = c.ge
        elif isinstance(c, annotated_types.Le):
            bounds["le"] = c.le
        else:
            return None  # a constraint this layer does not check
    if required and optional:
        return None
    alias = (query.alias if query is not None else None) or p.name
    return _Param(p.name, alias, name, required, default, choices, **bounds)  # type: ignore[arg-type]


def answer_below(route: APIRoute) -> Endpoint | None:
    """An endpoint answering ``route`` from its query alone, or None when the route declares
    something this layer does not parse (then the router keeps it)."""
    found_scopes = [getattr(d.dependency, "scope", None) for d in route.dependencies]
    scopes = [s for s in found_scopes if isinstance(s, str)]
    if len(scopes) != len(found_scopes) or route.dependant.path_params \
            or route.path_format != route.path:
        return None
    signature = inspect.signature(route.endpoint, eval_str=True)
    found = [_param(p) for p in signature.parameters.values()]
    if None in found:
        return None
    wanted = [p for p in found if p is not None]
    by_alias = {p.alias: p for p in wanted if p.alias}
    call = route.endpoint
    asynchronous = inspect.iscoroutinefunction(call)

    async def endpoint(request: Request) -> Response | None:
        given: dict[str, str] = {}
        for key, value in request.query_params.multi_items():
            if key in by_alias:
                if key in given:
                    return None  # FastAPI's choice between them is its own
                given[key] = value
        kwargs: dict[str, Any] = {}
        try:
            for p in wanted:
                if p.kind == "graph":
                    continue
                raw = given.get(p.alias)
                if raw is None:
                    if p.required:
                        return None
                    kwargs[p.arg] = p.default
                else:
                    kwargs[p.arg] = p.parse(raw)
        except _Unsure:
            return None
        for scope in scopes:
            await check_scope(request, scope)
        for p in wanted:
            if p.kind == "graph":
                kwargs[p.arg] = deps.services(request).graph()
        answer = await call(**kwargs) if asynchronous else await run_in_threadpool(call, **kwargs)
        if not isinstance(answer, Response):  # a bug: a 500, and the test of every route fails
            raise TypeError(f"{route.path} returned a {type(answer).__name__}; api.hot answers "
                            "only routes that return finished responses")
        return answer

    return endpoint


def get_routes(routers: Iterable[APIRouter]) -> dict[tuple[str, str], Endpoint]:
    """The GET routes of ``routers`` this layer can answer, by (method, path)."""
    found: dict[tuple[str, str], Endpoint] = {}
    for router in routers:
        for route in router.routes:
            if isinstance(route, APIRoute) and route.methods == {"GET"}:
                endpoint = answer_below(route)
                if endpoint is not None:
                    found[("GET", route.path)] = endpoint
    return found
