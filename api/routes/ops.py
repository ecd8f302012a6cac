"""Operations: liveness, readiness, Prometheus metrics."""

from __future__ import annotations

import logging
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from api.deps import AppContext, app_context
from api.metrics import render
from api.schemas import answer
from api.schemas import answers as ours
from api.services.retention import Figures, figures
from graph.errors import LineageError
from impact.health.measure import Health
from impact.health.slo import Verdict
from impact.policy.rules import read_policies
from impact.policy.violations import open_counts

log = logging.getLogger(__name__)

router = APIRouter(tags=["ops"])


@router.get("/health", summary="Alive (the process answers; lineage health is /api/v1/health/lineage)",
            responses=answer(ours.Alive))
async def alive() -> dict[str, str]:
    # async: answered on the event loop at once, never queued behind busy worker threads
    # (the path is Marquez's and the load balancers'; the word means liveness only here)
    return {"status": "ok"}


@router.get("/ready", summary="Ready: the log is writable and Neo4j answers (and whether Neo4j "
                              "is warmed yet, which readiness does not wait for)",
            responses=answer(ours.Ready))
def ready(request: Request) -> JSONResponse:
    found = app_context(request)
    checks = {"log": found.log().writable()}
    try:
        found.graph().driver.verify_connectivity()
        checks["neo4j"] = True
    except Exception:
        checks["neo4j"] = False
    ok = all(checks.values())
    return JSONResponse({"ready": ok, "checks": checks, "warmed": found.warmed.is_set()},
                        status_code=200 if ok else 503)


@router.get("/metrics", summary="Prometheus metrics", response_class=PlainTextResponse)
def metrics(request: Request) -> PlainTextResponse:
    found = app_context(request)
    return PlainTextResponse(render(found.counters, found.log(), _violations(found),
                                    found.requests, _health(found), _retention(found),
                                    _erasures(found), found.audit.snapshot()),
                             media_type="text/plain; version=0.0.4")


def _erasures(found: AppContext) -> dict[str, int] | None:
    """The erasure requests by state; None when Neo4j does not answer."""
    from impact.erasure.evidence import request_states

    try:
        return request_states(found.graph())
    except LineageError as e:
        log.warning("/metrics without the erasure requests: %s", e)
        return None


def _retention(found: AppContext) -> Figures | None:
    """The store's, the archive's and the last retention run's figures; None when Neo4j does
    not answer (the other metrics are still served)."""
    try:
        return figures(found.graph(), found.settings)
    except LineageError as e:
        log.warning("/metrics without the retention figures: %s", e)
        return None


def _health(found: AppContext) -> tuple[Health, list[Verdict], float, float] | None:
    """The latest measure of lineage health, never made by the scrape (the next one starts on a
    thread of its own when it is due); None before the first one."""
    try:
        return found.health.latest()
    except LineageError as e:
        log.warning("/metrics without lineage health: %s", e)
        return None


def _violations(found: AppContext) -> list[tuple[str, str, int]] | None:
    """The open violations per rule and severity, with every rule of the policy file (0 when
    none is open); None without a policy file, or when Neo4j does not answer (the other metrics
    are still served)."""
    if found.settings.policies is None:
        return None
    try:
        rules = read_policies(Path(found.settings.policies)).rules
        counted = {(rule, severity): n for rule, severity, n in open_counts(found.graph())}
    except LineageError as e:
        log.warning("/metrics without the policy violations: %s", e)
        return None
    return [(r.id, r.severity, counted.get((r.id, r.severity), 0)) for r in rules]
