"""Names with '/' in a path segment: Marquez's clients send ``postgres://db:5432`` as
``postgres%3A%2F%2Fdb%3A5432``, one segment, as Marquez (Jersey) reads it.

ASGI servers decode ``%2F`` before routing, so the name would split into several segments.
:class:`EncodedSlashes` rebuilds the path from the raw one, keeping a decoded '/' inside a segment
as a private-use character; :class:`SlashRoute` turns it back into '/' in the path parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import unquote

from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.types import ASGIApp, Receive, Scope, Send

SLASH = "\ue000"  # a private-use character: no producer's name holds it (the API refuses it)


def rebuild(raw_path: bytes) -> str | None:
    """The path with each segment decoded and every '/' inside a segment kept as SLASH; None
    when the raw path has no encoded '/' (the server's own decoding is then right)."""
    if b"%2f" not in raw_path.lower():
        return None
    text = raw_path.decode("latin-1")
    return "/".join(unquote(segment).replace("/", SLASH) for segment in text.split("/"))


class EncodedSlashes:
    """ASGI middleware: routes a path whose segments hold an encoded '/' as one segment each."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("raw_path"):
            raw = scope["raw_path"].split(b"?", 1)[0]
            path = rebuild(raw)
            if path is not None:
                scope = {**scope, "path": path}
        await self.app(scope, receive, send)


class SlashRoute(APIRoute):
    """A route whose path parameters get back the '/' that :class:`EncodedSlashes` kept."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def restore(request: Request) -> Response:
            params = request.scope.get("path_params") or {}
            request.scope["path_params"] = {
                k: v.replace(SLASH, "/") if isinstance(v, str) else v for k, v in params.items()}
            return await handler(request)

        return restore


class MarquezRoute(SlashRoute):
    """A route on one of Marquez's paths: its parameter errors are answered in Marquez's shape
    (400, ``errors`` as sentences; :mod:`api.errors`)."""

    marquez = True


def on_marquez_path(request: Request) -> bool:
    """Whether the request was routed to one of Marquez's paths."""
    return bool(getattr(request.scope.get("route"), "marquez", False))

