"""Marquez's sources, tags, search, raw events (from our durable log), run lineage and stats at
Marquez's paths."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfoNotFoundError

from fastapi import APIRouter, Query, Request

from api import errors
from api.deps import READ, G, services
from api.errors import RESPONSES, BadParam
from api.paths import SlashRoute
from api.routes.marquez_catalog import MLimit, MOffset
from graph.errors import NotFound
from impact import marquez_models as mm
from impact import marquez_stats as ms
from ingest.times import parse_time

router = APIRouter(prefix="/api/v1", tags=["marquez"], dependencies=[READ],
                   responses={**RESPONSES, 404: {"description": "not found"}},
                   route_class=SlashRoute)

_BEFORE, _AFTER = "2030-01-01T00:00:00+00:00", "1970-01-01T00:00:00+00:00"  # Marquez's defaults


def _source(r: dict[str, Any]) -> dict[str, Any]:
    url = r["connectionUrl"] or ""
    kind = url.split(":", 1)[0].upper() if ":" in url else "POSTGRESQL"  # Marquez's default type
    return {"type": kind, "name": r["name"], "createdAt": mm.iso(r["createdAt"]),
            "updatedAt": mm.iso(r["updatedAt"]), "connectionUrl": url, "description": None}


@router.get("/sources", summary="Data sources (Marquez)")
def sources(graph: G, limit: MLimit, offset: MOffset = 0) -> Any:
    rows = graph.read("marquez/sources", name=None, skip=offset, limit=limit)
    return {"sources": [_source(r) for r in rows]}


@router.get("/sources/{source}", summary="One data source (Marquez)")
def source(graph: G, source: str) -> Any:
    rows = graph.read("marquez/sources", name=source, skip=0, limit=1)
    if not rows:
        raise NotFound("source", source)
    return _source(rows[0])


@router.get("/tags", summary="Tags (Marquez)")
def tags(graph: G, limit: MLimit, offset: MOffset = 0) -> Any:
    return {"tags": graph.read("marquez/tags", skip=offset, limit=limit)}


@router.get("/search", summary="Datasets and jobs by a fragment of their name (Marquez)")
def search(graph: G, q: Annotated[str, Query(min_length=1, pattern=r"\S")],
           filter_: Annotated[Literal["dataset", "DATASET", "job", "JOB"] | None,
                              Query(alias="filter")] = None,
           sort: Annotated[Literal["name", "NAME", "updated_at", "UPDATE_AT"],
                           Query()] = "name",
           limit: Annotated[int, Query(ge=1, le=1000)] = 10, namespace: str | None = None,
           before: date | None = None, after: date | None = None) -> Any:
    rows = graph.read("marquez/search", q=q, kind=filter_.upper() if filter_ else None,
                      namespace=namespace, after=after, before=before,
                      byName=sort.lower() == "name", limit=limit)
    results = [{**{k: r[k] for k in ("type", "name", "namespace", "nodeId")},
                "updatedAt": mm.iso(r["updatedAt"])} for r in rows]
    return {"totalCount": rows[0]["total"] if rows else 0, "results": results}


def _epoch(field: str, value: str) -> float:
    try:
        return parse_time(value).timestamp()
    except ValueError as e:
        raise BadParam(field, str(e)) from e


SortDirection = Annotated[Literal["asc", "desc", "ASC", "DESC"], Query(alias="sortDirection")]


def _events(request: Request, before: str, after: str, direction: str, limit: int, offset: int,
            namespace: str | None = None) -> dict[str, Any]:
    found, total = services(request).log().between(
        _epoch("after", after), _epoch("before", before), direction.lower() == "desc",
        limit, offset, namespace)
    return {"events": found, "totalCount": total}


@router.get("/events/lineage",
            summary="The OpenLineage events received, from the event log (Marquez)")
def lineage_events(request: Request, limit: MLimit, offset: MOffset = 0, before: str = _BEFORE,
                   after: str = _AFTER, direction: SortDirection = "desc") -> Any:
    return _events(request, before, after, direction, limit, offset)


@router.get("/events", summary="The events received (marquez-python's list_events)")
def events(request: Request, limit: MLimit, offset: MOffset = 0) -> Any:
    return _events(request, _BEFORE, _AFTER, "desc", limit, offset)


@router.get("/events/{namespace}",
            summary="The events of one namespace's jobs (marquez-python's list_events)")
def namespace_events(request: Request, namespace: str, limit: MLimit,
                     offset: MOffset = 0) -> Any:
    return _events(request, _BEFORE, _AFTER, "desc", limit, offset, namespace)


@router.get("/runlineage/upstream",
            summary="A run, the runs that produced the versions it read, and theirs (Marquez)")
def run_lineage(graph: G, run_id: Annotated[str, Query(alias="runId", min_length=1)],
                depth: Annotated[int, Query(ge=0, le=50)] = 20) -> Any:
    return ms.run_upstream(graph, run_id, depth)


Period = Annotated[Literal["DAY", "WEEK"], Query(description="DAY: the last 24 hours by the hour; "
                                                 "WEEK: the last 7 days in timezone")]
Zone = Annotated[str | None, Query(description="An IANA time zone, e.g. Europe/Paris (WEEK)")]


def _windows(period: str, timezone: str | None) -> list[tuple[datetime, datetime]]:
    try:
        return ms.intervals(period, timezone)
    except (ZoneInfoNotFoundError, ValueError) as e:
        raise BadParam("timezone", f"not a time zone: {timezone!r}") from e


@router.get("/stats/lineage-events", summary="Events by type per hour or day (Marquez)")
def stats_events(request: Request, period: Period, timezone: Zone = None) -> Any:
    if period == "WEEK" and not timezone:
        raise BadParam("timezone", "Timezone must be specified for period 'WEEK'")
    return ms.event_stats(services(request).log().types_between, _windows(period, timezone))


@router.get("/stats/{kind}", summary="How many datasets, jobs or sources existed, per hour or "
                                     "day (Marquez)")
def stats_counts(graph: G, kind: Literal["datasets", "jobs", "sources"], period: Period,
                 timezone: Zone = None) -> Any:
    return ms.cumulative(graph, kind, _windows(period, timezone))



beta = APIRouter(prefix="/api/v2beta", tags=["marquez"], dependencies=[READ])


@beta.get("/search/{kind}", status_code=503,
          summary="Marquez's OpenSearch search: 503, as Marquez answers without OpenSearch")
def search_beta(kind: Literal["datasets", "jobs"], q: Annotated[str, Query(min_length=1)]) -> Any:
    return errors.answer(503, "search through OpenSearch is not offered; use GET /api/v1/search, "
                              "as Marquez's web UI does when OpenSearch is off")
