"""The HTTP guard in front of every route: which Host, Origin and token a request needs.

Without API tokens the API serves loopback clients only (``api.auth``), and a loopback client can
still be a browser tricked by another site:

* DNS rebinding: a page of ``attacker.example`` whose name now resolves to 127.0.0.1 talks to us
  with ``Host: attacker.example:5000``. Only loopback host names are served in this mode
  (``localhost``, ``127.0.0.0/8``, ``[::1]``), 421 otherwise.
* Cross-site writes: a page elsewhere posting to ``http://127.0.0.1:5000``. A request that
  changes something (any method but GET, HEAD, OPTIONS) is refused (403) when its ``Origin`` is
  not a loopback origin (``null`` included: a sandboxed frame or a local file's page), or when
  the browser marks it ``Sec-Fetch-Site: cross-site``.

With tokens (or a proxy that signs users in, named by the access file), a browser cannot send a
bearer token on its own, so neither applies; instead the
metrics and the API's own description (``/metrics``, ``/docs``, ``/redoc``, ``/openapi.json``) need
a read token like every question. ``/health`` and ``/ready`` stay open in both modes.

A pure ASGI middleware: it adds no per-request cost beyond a few header look-ups (FastAPI's
BaseHTTPMiddleware would have cost about a tenth of a one-event request).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from api import errors
from api.auth import BadToken, Tokens, is_loopback, signed_in
from impact.access.grants import Access

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

DESCRIBED = frozenset({"/metrics", "/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def host_of(value: str) -> str:
    """The host name of a Host header or an origin, without port or brackets."""
    netloc = value if "://" in value else f"//{value}"
    try:
        return urlsplit(netloc).hostname or ""
    except ValueError:
        return ""


def header_of(scope: Scope) -> Callable[[str], str | None]:
    """A request header by name (any case), from the ASGI scope."""
    def header(name: str) -> str | None:
        wanted = name.lower().encode("latin-1")
        return next((v.decode("latin-1") for k, v in scope["headers"] if k.lower() == wanted), None)
    return header


def client_host(scope: Scope) -> str | None:
    client = scope.get("client")
    return str(client[0]) if client else None


class Guard:
    def __init__(self, app: App, tokens: Tokens, access: Access | None = None) -> None:
        self.app = app
        self.tokens = tokens
        self.access = access
        # callers are known by their tokens, or by a proxy that signs them in: not loopback-only
        self.authenticated = tokens.enabled or (access is not None and access.signs_in)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self._refusal(scope)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, message, headers = refusal
        body = json.dumps(errors.body(status, message)).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()), *headers]})
        await send({"type": "http.response.body", "body": body})

    def _refusal(self, scope: Scope) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]
                   if k.lower() in (b"host", b"origin", b"sec-fetch-site", b"authorization")}
        path = scope.get("path", "")
        if self.authenticated:
            if path in DESCRIBED:
                return self._reader_refusal(scope, headers.get("authorization", ""))
            return None
        host = headers.get("host")
        if host is not None and not is_loopback(host_of(host)):
            return (421, f"Host {host!r} is not a loopback name: without API tokens only "
                         "localhost, 127.0.0.0/8 and [::1] are served (set LINEAGE_API_TOKENS "
                         "to serve other names)", [])
        if scope.get("method", "GET") not in SAFE_METHODS:
            origin = headers.get("origin")
            if headers.get("sec-fetch-site") == "cross-site" or (
                    # "null": a sandboxed frame, a file:// or data: page, whatever site it is on
                    origin is not None and (origin == "null" or not is_loopback(host_of(origin)))):
                return (403, f"cross-site write refused (Origin {origin!r}): without API tokens "
                             "only pages and clients on this machine may write", [])
        return None

    def _reader_refusal(self, scope: Scope, header: str
                        ) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
        """Why the caller may not read, or None: a read token, else a signed-in caller whose
        grant reads."""
        kind, _, given = header.partition(" ")
        token = given.strip() if kind.lower() == "bearer" and given.strip() else None
        challenge = [(b"www-authenticate", b"Bearer")]
        if token is not None and self.tokens.allows(token, "read"):
            return None
        try:
            signed = signed_in(self.access, client_host(scope), header_of(scope), token)
        except BadToken as e:
            return 401, str(e), challenge
        if signed is not None:
            refusal = signed.refusal("read")
            return None if refusal is None else (403, refusal, [])
        if token is None:
            return 401, "missing bearer token (Authorization: Bearer TOKEN)", challenge
        return 401, "unknown token", challenge
