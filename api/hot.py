"""The hottest route, answered below FastAPI's routing: ``POST /api/v1/lineage``.

Producers send one event per request, so FastAPI's per-request machinery around the endpoint (its
exception middleware and exit stack, matching the path against every route, solving the
endpoint's parameters) was a good part of the API's CPU per event: `lineage serve` alone spent
1.32-1.52 ms per one-event request before this layer, 1.02-1.08 ms with it, and acknowledged
561-702 events/s instead of 382-525 (docs/benchmarks.md, "Ingest over HTTP (session 17)").
This ASGI layer sits inside the request
context and the guard, so ids, timing, host and origin checks are the same; an error the
endpoint raises is answered by the application's own exception handlers, so every answer is the
same as through the router. The route stays declared there for the OpenAPI description and for
any path this layer does not take (a trailing slash, another method).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

Endpoint = Callable[[Request], Awaitable[Response]]


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
