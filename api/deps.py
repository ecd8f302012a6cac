"""What the routes depend on: the services of one app (settings, tokens, the graph, the event log),
the token check, and the parameter types the routes share.

The graph and the log are opened on first use, so that an app can be built (and its description
served) without Neo4j or a log on disk.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Query, Request

from api.access.audit import AuditLog
from api.access.hidden import HiddenCache, opaque_salt
from api.auth import BadToken, Tokens, is_loopback, parse_tokens, signed_in
from api.errors import BadParam
from api.metrics import Counters
from api.receive import BodyBudget
from api.request_stats import RequestStats
from api.services.health_cache import HealthCache
from graph.db import Graph, open_graph
from graph.settings import Settings
from impact.access.grants import Access, read_access
from ingest import commands
from ingest.log.group_commit import GroupCommitter
from ingest.log.protocol import WORKER
from ingest.log.sqlite import Checked, EventLog, open_event_log
from ingest.times import parse_time

BODY_BUDGET_FACTOR = 4
"""Bodies of the largest size one API process takes in at once (api.receive.BodyBudget)."""


class AppContext:
    """One app's settings, connections and counters: what its routes share (``app_context``)."""

    def __init__(self, settings: Settings, graph: Graph | None = None,
                 events: EventLog | None = None) -> None:
        self.settings = settings
        self.access: Access | None = read_access(settings.access) if settings.access else None
        self.tokens: Tokens = parse_tokens(settings.api_tokens, self.access)
        self.hidden = HiddenCache(self.access or Access((), ()),
                                  lambda: opaque_salt(settings), self.graph,
                                  lambda: self.log().position(WORKER))
        self.audit = AuditLog(settings.audit_dir or settings.state_dir / "audit")
        self.counters = Counters()
        self.requests = RequestStats()
        self.health = HealthCache(self.graph, self.log, settings.health_interval, settings.tiers,
                                  settings.slos)
        self.bodies = BodyBudget(BODY_BUDGET_FACTOR * settings.max_body_bytes)
        self._graph, self._log = graph, events
        self._owned: list[Graph | EventLog] = []  # what this app opened: it closes them
        self._committer: GroupCommitter | None = None
        self._lock = threading.Lock()  # sync routes run on several threads
        # set once Neo4j is warmed (api.services.background), or at once when nothing warms it
        self.warmed = threading.Event()

    def graph(self) -> Graph:
        with self._lock:
            if self._graph is None:
                # a short retry time: a client gets its 503 promptly while Neo4j is away
                self._graph = open_graph(self.settings, retry_time=2.0,
                                         readers=self.settings.api_max_questions)
                self._owned.append(self._graph)
            return self._graph

    def log(self) -> EventLog:
        with self._lock:
            if self._log is None:
                self._log = open_event_log(self.settings)
                self._owned.append(self._log)
            return self._log

    def command(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]] | None:
        """Log a metadata command and return once it is applied (ingest.commands.submit)."""
        return commands.submit(self.graph(), self.log(), name, params, self.settings.command_wait)

    def committer(self) -> GroupCommitter:
        events = self.log()
        with self._lock:
            if self._committer is None:
                self._committer = GroupCommitter(
                    events, checked=Checked.VALIDATED if self.settings.log_raw_events
                    else Checked.SCRUBBED)
            return self._committer


    def close(self) -> None:
        """Close the connections this app opened (not those it was given)."""
        with self._lock:
            committer, self._committer = self._committer, None
            owned, self._owned = self._owned, []
            self._graph = None if self._graph in owned else self._graph
            self._log = None if self._log in owned else self._log
        if committer is not None:
            committer.close()
        for connection in owned:
            connection.close()


def app_context(request: Request) -> AppContext:
    found: AppContext = request.app.state.context
    return found


# The dependencies below are ``async`` although they never wait: FastAPI runs a plain ``def``
# dependency on its thread pool, one hop per dependency per request, on top of the route's own.


async def graph(request: Request) -> Graph:
    return app_context(request).graph()


async def check_scope(request: Request, scope: str) -> None:
    """Refuse the request unless its token has ``scope``, or an identity provider signed in a
    caller whose grant has it (or, without tokens or sign-ins, it is loopback)."""
    found = app_context(request)
    tokens = found.tokens
    host = request.client.host if request.client else None
    kind, _, given = request.headers.get("authorization", "").partition(" ")
    token = given.strip() if kind.lower() == "bearer" and given.strip() else None
    known = tokens.scope_of(token) if token is not None else None  # compared once a request
    if known is None:
        try:
            signed = signed_in(found.access, host, request.headers.get, token)
        except BadToken as e:
            raise HTTPException(401, str(e), headers={"WWW-Authenticate": "Bearer"}) from e
        if signed is not None:
            refusal = signed.refusal(scope)
            if refusal is not None:
                raise HTTPException(403, refusal)
            return
    if not tokens.enabled and not (found.access is not None and found.access.signs_in):
        if not is_loopback(host):
            raise HTTPException(403, "no API tokens are configured, so only loopback clients "
                                     "are served; set LINEAGE_API_TOKENS")
        return
    if token is None:
        raise HTTPException(401, "missing bearer token (Authorization: Bearer TOKEN)",
                            headers={"WWW-Authenticate": "Bearer"})
    if known is None:
        raise HTTPException(401, "unknown token", headers={"WWW-Authenticate": "Bearer"})
    if known not in (scope, "write"):  # a write token may also read
        raise HTTPException(403, f"this token lacks the {scope} scope")


def require(scope: str) -> Callable[[Request], Awaitable[None]]:
    # async, so that FastAPI runs it on the event loop instead of a thread-pool hop per request
    async def check(request: Request) -> None:
        await check_scope(request, scope)
    return check


READ = Depends(require("read"))
WRITE = Depends(require("write"))


def time_query(name: str, description: str) -> Callable[..., Awaitable[datetime | None]]:
    """A query parameter that is an ISO time (a 422 naming it when it is not one)."""

    # the Query as a default, not in Annotated: this module's annotations are read as strings
    # later, where ``name`` is not in scope
    async def read(value: str | None = Query(None, alias=name, description=description)
                   ) -> datetime | None:
        if value is None:
            return None
        try:
            return parse_time(value)
        except ValueError as e:
            raise BadParam(name, f"not an ISO 8601 time: {e}") from e
    return read


as_of = time_query("asOf", "ISO time: the lineage current then (first seen by then, not yet "
                           "retired).")


async def page_limit(request: Request, limit: Annotated[int, Query(
        ge=1, description="Page size (clamped to the configured maximum).")] = 50) -> int:
    return min(limit, app_context(request).settings.api_max_page)


G = Annotated[Graph, Depends(graph)]
AsOf = Annotated[datetime | None, Depends(as_of)]
Retired = Annotated[bool, Query(alias="includeRetired", description=(
    "Also walk retired lineage (edges the job's latest completed run no longer states), marked "
    "RETIRED with their last run."))]
Limit = Annotated[int, Depends(page_limit)]
Depth = Annotated[int | None, Query(ge=1, description="Hops to follow; default 20, clamped to 50.")]
Ns = Annotated[str, Query(min_length=1, description="Namespace, e.g. postgres://db:5432")]
Name = Annotated[str, Query(min_length=1, description="Dataset or job name")]
Offset = Annotated[int, Query(ge=0, le=2_000_000_000, description="Rows to skip.")]


async def marquez_limit(request: Request, limit: Annotated[int, Query(
        ge=0, description="Page size (Marquez's default 100; clamped to the configured "
                          "maximum).")] = 100) -> int:
    return min(limit, app_context(request).settings.api_max_page)


MLimit = Annotated[int, Depends(marquez_limit)]
"""A page size on Marquez's paths: Marquez's default, our maximum."""
MOffset = Annotated[int, Query(ge=0, le=2_000_000_000, description="Rows to skip.")]
