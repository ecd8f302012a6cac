"""The HTTP API (FastAPI): receiving events, the questions, lookups, Marquez-shaped lineage, ops.

Every read is one named Cypher query in a read transaction with the configured timeout; parameters
are always passed as parameters. Depth and page sizes are clamped; unknown nodes give 404 saying
what was looked for; bad parameters 422 naming the field; Neo4j down gives 503 with Retry-After.
Every error has one shape (``api.errors``). Run it with ``lineage serve``; OpenAPI docs at
``/docs``.
"""

from __future__ import annotations

from fastapi import FastAPI

from api import errors
from api.deps import Services
from api.guard import Guard
from api.logs import RequestContext
from api.paths import EncodedSlashes
from api.routes import (
    docs,
    ingest,
    lookups,
    marquez,
    marquez_catalog,
    marquez_more,
    marquez_writes,
    ops,
    questions,
)
from graph.db import Graph
from graph.settings import Settings, get_settings
from ingest.log import EventLog


def create_app(settings: Settings | None = None, graph: Graph | None = None,
               events: EventLog | None = None) -> FastAPI:
    """The application. ``graph`` and the event log are opened from ``settings`` on first use."""
    found = Services(settings or get_settings(), graph, events)
    app = FastAPI(
        title="lineage-graph",
        version="0.1.0",
        summary="OpenLineage lineage on Neo4j: blast radius, root cause, GDPR reach, lineage graphs.",
        description=__doc__,
        docs_url=None,  # served from the package's files instead (api.routes.docs)
        redoc_url=None,
    )
    app.state.services = found
    app.state.settings = found.settings
    app.state.tokens = found.tokens
    app.add_middleware(Guard, tokens=found.tokens)
    app.add_middleware(RequestContext)  # outside the guard: its refusals carry the id too
    app.add_middleware(EncodedSlashes)  # before routing: a '/' encoded in a name stays in it
    errors.install(app)
    app.router.routes.insert(0, ingest.served)  # one event per request: see api.routes.ingest
    for area in (ops, ingest, questions, lookups, marquez, marquez_catalog, marquez_more,
                 marquez_writes):
        app.include_router(area.router)
    app.include_router(marquez_more.beta)
    docs.install(app)
    return app
