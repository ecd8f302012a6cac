"""Lineage: receiving OpenLineage events (``POST /api/v1/lineage``, see :mod:`api.receive`), the
Marquez-shaped lineage graphs (``GET /api/v1/lineage``, ``GET /api/v1/column-lineage``), and the
events received, from the event log (Marquez's ``GET /api/v1/events``).

Producers send one event per request, so ``POST /api/v1/lineage`` is served by :data:`served`, a
plain Starlette route first in the app's table: FastAPI's work around an endpoint (solving its
parameters, its exit stacks) was a measured part of a one-event request's cost
(docs/benchmarks.md, "One event over HTTP"). The FastAPI route on the same function describes it
in the OpenAPI document; the token check is called in the function, not declared."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from starlette.routing import Route

from api import errors
from api.access.guard import GRANT, refused_namespace
from api.deps import READ, AppContext, Depth, G, MLimit, MOffset, Retired, app_context, check_scope
from api.encode import to_json
from api.errors import RESPONSES, BadParam
from api.paths import MarquezRoute
from api.receive import BodyError, Received, body_size, check_media_type, parse, read_body
from api.schemas import answer
from api.schemas import answers as ours
from api.schemas import marquez as mq
from impact.marquez import lineage as lg
from ingest.handoff import loaded_by_worker
from ingest.log.protocol import history
from ingest.log.sqlite import LogError
from ingest.times import parse_time

log = logging.getLogger(__name__)

router = APIRouter(tags=["lineage"], route_class=MarquezRoute)
LOG_APPEND_TIMEOUT_S = 60
_REASONS = {413: "too_large", 415: "unsupported_media_type"}
_AMBIGUOUS: dict[int | str, dict[str, Any]] = {400: {"model": errors.ErrorBody,
                    "description": "a nodeId that names several nodes, with the candidates"}}
_BEFORE, _AFTER = "2030-01-01T00:00:00+00:00", "1970-01-01T00:00:00+00:00"  # Marquez's defaults


@router.post("/api/v1/lineage", status_code=201,
             summary="Receive OpenLineage events: one, a JSON array, or NDJSON",
             responses={201: {"model": ours.Acknowledged,
                              "description": "at least one event accepted (durably logged)"},
                        422: {"model": errors.ErrorBody,
                              "description": "no event accepted: each one was JSON but not a "
                                             "valid event (the reasons in rejected and errors)"},
                        400: {"model": errors.ErrorBody,
                              "description": "nothing JSON: the body, or each event of it"},
                        413: {"model": errors.ErrorBody,
                              "description": "body over the size limit (after gunzip)"},
                        415: {"model": errors.ErrorBody,
                              "description": "not JSON or NDJSON, or an encoding other than gzip"},
                        503: {"model": errors.ErrorBody,
                              "description": "the event log cannot be written now"}})
async def receive(request: Request) -> JSONResponse:
    await check_scope(request, "write")
    found = app_context(request)
    counters = found.counters
    try:
        kind = check_media_type(request.headers.get("content-type"))
        limit = found.settings.max_body_bytes
        async with found.bodies.hold(body_size(request, limit)):
            verdict = parse(await read_body(request, limit), kind, found.settings.log_raw_events)
            rejected_by = {"invalid_event": len(verdict.rejected)} if verdict.rejected else {}
            if not verdict.accepted:
                # as Marquez answers: 422 for events that are JSON but not valid, 400 for what is
                # not JSON at all; each reason also as a sentence in ``errors``
                status = 422 if verdict.invalid else 400
                counters.add(rejected=rejected_by, status=status)
                return errors.answer(status, "no event accepted: each one was invalid (see rejected)",
                                     accepted=0, rejected=verdict.rejected, errors=[
                                         f"event {r['index']}: {reason}"
                                         for r in verdict.rejected for reason in r["reasons"]])
            refused = refused_namespace(request.scope.get(GRANT), written_namespaces(verdict.accepted))
            if refused is not None:
                counters.add(status=403)
                return errors.answer(403, f"the grant {request.scope[GRANT].name!r} may not write "
                                          f"namespace {refused!r}: nothing was accepted")
            return await _append(found, verdict, rejected_by, request)
    except BodyError as e:
        counters.add(rejected={_REASONS.get(e.status, "invalid_body"): 1}, status=e.status)
        return errors.answer(e.status, e.message, headers={"Retry-After": str(errors.RETRY_AFTER_S)}
                             if e.status == 503 else None)


served = Route("/api/v1/lineage", receive, methods=["POST"], include_in_schema=False)


async def _append(found: AppContext, verdict: Received, rejected_by: dict[str, int],
                  request: Request) -> JSONResponse:
    counters = found.counters
    try:
        queued = found.committer().submit(verdict.accepted, verdict.texts)
    except ValueError as e:  # validation lets no such event through: a last guard
        counters.add(rejected={"invalid_event": len(verdict.accepted)}, status=400)
        return errors.answer(400, f"events cannot be stored: {e}")
    retry = {"Retry-After": str(errors.RETRY_AFTER_S)}
    try:
        # shielded: a timeout leaves the append alone (it may still become durable)
        seqs = await asyncio.wait_for(asyncio.shield(queued), LOG_APPEND_TIMEOUT_S)
    except LogError as e:
        log.error("event log append failed: %s", e)
        counters.add(status=503)
        return errors.answer(503, f"the event log cannot be written; nothing was accepted ({e})",
                             headers=retry)
    except TimeoutError:
        log.error("event log append not confirmed within %s s", LOG_APPEND_TIMEOUT_S)
        counters.add(status=503)
        return errors.answer(503, f"the event log did not confirm the write within "
                                  f"{LOG_APPEND_TIMEOUT_S} s; send the events again (an event "
                                  "sent twice is recognised and loaded once)", headers=retry)
    counters.add(accepted=len(seqs), rejected=rejected_by, status=201,
                 unread=sum(len(u["facets"]) for u in verdict.unread))
    waited = {}
    if wait := _wait_loaded(found, request):
        # visible when acknowledged: the worker has loaded them (or the wait ran out: said so)
        waited["loaded"] = await loaded_by_worker(found.log(), seqs[-1], wait)
    return JSONResponse({"accepted": len(seqs), "first_seq": seqs[0], "last_seq": seqs[-1],
                         "rejected": verdict.rejected}
                        | ({"unreadFacets": verdict.unread} if verdict.unread else {}) | waited,
                        status_code=201)


WAIT_HEADER = "lineage-wait"


def _wait_loaded(found: AppContext, request: Request) -> float:
    """Seconds to wait for the worker to load what was just acknowledged: the setting, or 10 s
    when the request asks with ``Lineage-Wait: loaded``; 0 not to wait."""
    asked = (request.headers.get(WAIT_HEADER) or "").strip().lower() == "loaded"
    return found.settings.ingest_wait or (10.0 if asked else 0.0)


def written_namespaces(events: list[dict[str, Any]]) -> set[str]:
    """The namespaces events write: their jobs', their outputs' and a DatasetEvent's dataset's
    (what they read is only named, not written)."""
    found: set[str] = set()
    for event in events:
        for part in (event.get("job"), event.get("dataset"), *(event.get("outputs") or ())):
            if isinstance(part, dict) and isinstance(part.get("namespace"), str):
                found.add(part["namespace"])
    return found


def _answer(ask: Callable[[], Any]) -> Any:
    try:
        return to_json(ask())
    except lg.AmbiguousNodeId as e:
        return errors.answer(400, str(e), candidates=e.candidates)
    except lg.BadNodeId as e:
        raise BadParam("nodeId", str(e)) from e


@router.get("/api/v1/lineage", dependencies=[READ],
            responses={**RESPONSES, **_AMBIGUOUS, **answer(mq.LineageGraph)},
            summary="Marquez-compatible lineage graph around a dataset or job")
def lineage(graph: G, node_id: Annotated[str, Query(
        alias="nodeId", min_length=3, max_length=lg.MAX_NODE_ID,
        description="dataset:NAMESPACE:NAME or job:NAMESPACE:NAME")], depth: Depth = None,
            retired: Retired = False) -> Any:
    return _answer(lambda: lg.lineage(graph, node_id, depth, retired))


@router.get("/api/v1/column-lineage", dependencies=[READ],
            responses={**RESPONSES, **_AMBIGUOUS, **answer(mq.LineageGraph)},
            summary="Marquez-compatible column lineage around a field (or all fields of a dataset)")
def column_lineage(graph: G, node_id: Annotated[str, Query(
        alias="nodeId", min_length=3, max_length=lg.MAX_NODE_ID,
        description="datasetField:NAMESPACE:DATASET:FIELD, dataset:NAMESPACE:NAME or "
                     "job:NAMESPACE:NAME")],
                   depth: Depth = None,
                   with_downstream: Annotated[bool, Query(alias="withDownstream")] = False,
                   retired: Retired = False) -> Any:
    return _answer(lambda: lg.column_lineage(graph, node_id, depth, with_downstream, retired))


def _epoch(field: str, value: str) -> float:
    try:
        return parse_time(value).timestamp()
    except ValueError as e:
        raise BadParam(field, str(e)) from e


SortDirection = Annotated[Literal["asc", "desc", "ASC", "DESC"], Query(alias="sortDirection")]


def _events(request: Request, before: str, after: str, direction: str, limit: int, offset: int,
            namespace: str | None = None) -> dict[str, Any]:
    found, total = history(app_context(request).log(), "listing events by time").between(
        _epoch("after", after), _epoch("before", before), direction.lower() == "desc",
        limit, offset, namespace)
    return {"events": found, "totalCount": total}


@router.get("/api/v1/events/lineage", dependencies=[READ], responses={**RESPONSES, **answer(mq.Events)},
            summary="The OpenLineage events received, from the event log (Marquez)")
def lineage_events(request: Request, limit: MLimit, offset: MOffset = 0, before: str = _BEFORE,
                   after: str = _AFTER, direction: SortDirection = "desc") -> Any:
    return _events(request, before, after, direction, limit, offset)


@router.get("/api/v1/events", dependencies=[READ], responses={**RESPONSES, **answer(mq.Events)},
            summary="The events received (marquez-python's list_events)")
def events(request: Request, limit: MLimit, offset: MOffset = 0) -> Any:
    return _events(request, _BEFORE, _AFTER, "desc", limit, offset)


@router.get("/api/v1/events/{namespace}", dependencies=[READ], responses={**RESPONSES, **answer(mq.Events)},
            summary="The events of one namespace's jobs (marquez-python's list_events)")
def namespace_events(request: Request, namespace: str, limit: MLimit,
                     offset: MOffset = 0) -> Any:
    return _events(request, _BEFORE, _AFTER, "desc", limit, offset, namespace)
