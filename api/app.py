"""The HTTP API (FastAPI): receiving events, the questions, lookups, Marquez's resources, ops.

Every read is one named Cypher query in a read transaction with the configured timeout; parameters
are always passed as parameters. Depth and page sizes are clamped; unknown nodes give 404 saying
what was looked for; bad parameters 422 naming the field; Neo4j down gives 503 with Retry-After.
Every error has one shape (``api.errors``). Run it with ``lineage serve``; OpenAPI docs at
``/docs``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from fastapi import FastAPI
from starlette.routing import NoMatchFound

from api import errors
from api.access.guard import AccessGuard
from api.deps import AppContext
from api.guard import Guard
from api.logs import RequestContext
from api.paths import EncodedSlashes
from api.routes import (
    datasets,
    docs,
    erasure,
    gate,
    health,
    jobs,
    lineage,
    lookups,
    namespaces,
    ops,
    policies,
    questions,
    repair,
    runs,
    search,
    sources,
    stats,
    tags,
)
from api.services import background
from graph.db import Graph
from graph.settings import Settings, get_settings
from ingest.log.sqlite import EventLog

ROUTERS = (ops, lineage, questions, repair, erasure, lookups, namespaces, datasets, jobs, runs, sources, tags,
           search, stats, policies, gate, health)
"""The route table, by resource: Marquez's nouns, our questions and lookups, operations."""


def create_app(settings: Settings | None = None, graph: Graph | None = None,
               events: EventLog | None = None, run_in_background: bool = False) -> FastAPI:
    """The application. ``graph`` and the event log are opened from ``settings`` on first use,
    and closed with the app; ``run_in_background``: also start what ``lineage serve`` runs beside
    the API (api.services.background), and stop it with the app."""
    found = AppContext(settings or get_settings(), graph, events)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if run_in_background:
            build_routes(app)
        keeping = background.start(found) if run_in_background else None
        try:
            yield
        finally:
            if keeping is not None:
                keeping.stop.set()
            found.close()

    app = FastAPI(
        title="lineage-graph",
        version="0.1.0",
        summary="OpenLineage lineage on Neo4j: blast radius, root cause, GDPR reach, lineage graphs.",
        description=__doc__,
        docs_url=None,  # served from the package's files instead (api.routes.docs)
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.context = found
    app.state.settings = found.settings
    app.state.tokens = found.tokens
    app.add_middleware(AccessGuard, found=found, described=lambda: app.openapi())
    app.add_middleware(Guard, tokens=found.tokens, access=found.access)
    # outside the guard: its refusals carry the id too, and are counted
    app.add_middleware(RequestContext, stats=found.requests)
    app.add_middleware(EncodedSlashes)  # before routing: a '/' encoded in a name stays in it
    errors.install(app)
    app.router.routes.insert(0, lineage.served)  # one event per request: see api.routes.lineage
    for area in ROUTERS:
        app.include_router(area.router)
    docs.install(app)
    return app


def build_routes(app: FastAPI) -> None:
    """Build every route's request handling now. FastAPI builds a router's (its dependencies, its
    parameters' and answers' models) at the first request that reaches that router, and that
    request waits for it (docs/benchmarks.md, "The first answers after a start"). Asking for the
    path of a name that no route has walks every route."""
    with contextlib.suppress(NoMatchFound):
        app.url_path_for("lineage-graph: no route has this name")
