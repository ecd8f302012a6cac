"""Operations: liveness, readiness, Prometheus metrics."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, PlainTextResponse

from api.deps import services
from api.metrics import render

router = APIRouter(tags=["ops"])


@router.get("/health", summary="Alive")
async def health() -> dict[str, str]:
    # async: answered on the event loop at once, never queued behind busy worker threads
    return {"status": "ok"}


@router.get("/ready", summary="Ready: the log is writable and Neo4j answers")
def ready(request: Request) -> JSONResponse:
    found = services(request)
    checks = {"log": found.log().writable()}
    try:
        found.graph().driver.verify_connectivity()
        checks["neo4j"] = True
    except Exception:
        checks["neo4j"] = False
    ok = all(checks.values())
    return JSONResponse({"ready": ok, "checks": checks}, status_code=200 if ok else 503)


@router.get("/metrics", summary="Prometheus metrics", response_class=PlainTextResponse)
def metrics(request: Request) -> PlainTextResponse:
    found = services(request)
    return PlainTextResponse(render(found.counters, found.log()),
                             media_type="text/plain; version=0.0.4")
