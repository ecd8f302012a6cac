"""Lineage health: the SLIs as JSON (``GET /api/v1/health/lineage``) and the status page
(``GET /status``), both from the API's latest measure (api.services.health_cache)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse

from api.deps import READ, app_context
from api.errors import RESPONSES
from api.render.status_page import render
from api.schemas import answer
from api.schemas import answers as ours
from api.services.retention import figures
from graph.errors import LineageError
from impact.health.measure import Health
from impact.health.slo import SloError, Verdict
from impact.health.tiers import TiersError

router = APIRouter(tags=["health"], dependencies=[READ], responses=RESPONSES)


@router.get("/api/v1/health/lineage",
            summary="Lineage health: coverage, completeness, freshness, silent jobs, provenance, "
                    "lag, per tier and namespace, with the worst offenders and the SLOs",
            responses=answer(ours.LineageHealth))
def lineage_health(request: Request) -> Any:
    health, verdicts, age, took = _current(request)
    return {**health.json(), "ageSeconds": round(age, 3), "measureSeconds": round(took, 3),
            "slos": [v.json() for v in verdicts]}


@router.get("/status", response_class=HTMLResponse,
            summary="Status page: lineage health as plain HTML (no external assets)")
def status(request: Request) -> HTMLResponse:
    health, verdicts, age, _ = _current(request)
    found = app_context(request)
    try:
        retention: dict[str, Any] | None = figures(found.graph(), found.settings).as_dict()
    except LineageError:
        retention = None  # the rest of the page is still served
    return HTMLResponse(render(health, verdicts, age, retention, found.audit.snapshot()))


def _current(request: Request) -> tuple[Health, list[Verdict], float, float]:
    try:
        return app_context(request).health.current()
    except (TiersError, SloError) as e:  # the server's files, not the request: say which
        raise HTTPException(503, f"lineage health cannot be measured: {e} (LINEAGE_TIERS, "
                                 "LINEAGE_SLOS)") from e
