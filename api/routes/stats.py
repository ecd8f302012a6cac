"""Statistics (Marquez's paths): events by type, and datasets, jobs or sources that existed, per
hour or day."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfoNotFoundError

from fastapi import APIRouter, Query, Request

from api.deps import READ, G, app_context
from api.errors import RESPONSES, BadParam
from api.paths import MarquezRoute
from api.schemas import answer
from api.schemas import marquez as mq
from impact.marquez import stats as ms
from ingest.log.protocol import history

router = APIRouter(route_class=MarquezRoute, prefix="/api/v1/stats", tags=["stats"], dependencies=[READ],
                   responses=RESPONSES)

Period = Annotated[Literal["DAY", "WEEK"], Query(description="DAY: the last 24 hours by the hour; "
                                                 "WEEK: the last 7 days in timezone")]
Zone = Annotated[str | None, Query(description="An IANA time zone, e.g. Europe/Paris (WEEK)")]


def _windows(period: str, timezone: str | None) -> list[tuple[datetime, datetime]]:
    try:
        return ms.intervals(period, timezone)
    except (ZoneInfoNotFoundError, ValueError) as e:
        raise BadParam("timezone", f"not a time zone: {timezone!r}") from e


@router.get("/lineage-events", summary="Events by type per hour or day (Marquez)",
            responses=answer(list[mq.EventCount]))
def stats_events(request: Request, period: Period, timezone: Zone = None) -> Any:
    if period == "WEEK" and not timezone:
        raise BadParam("timezone", "Timezone must be specified for period 'WEEK'")
    events = history(app_context(request).log(), "counting events by time")
    return ms.event_stats(events.types_between, _windows(period, timezone))


@router.get("/{kind}", summary="How many datasets, jobs or sources existed, per hour or "
                               "day (Marquez)",
            responses=answer(list[mq.Count]))
def stats_counts(graph: G, kind: Literal["datasets", "jobs", "sources"], period: Period,
                 timezone: Zone = None) -> Any:
    return ms.cumulative(graph, kind, _windows(period, timezone))
