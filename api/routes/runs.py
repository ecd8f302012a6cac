"""Runs (Marquez's paths): a job's runs, one run, its facets, and the runs upstream of it.
Marquez's legacy run creation and transitions answer 501: runs come from OpenLineage events."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from api import errors
from api.deps import READ, WRITE, G, MLimit, MOffset
from api.encode import to_json
from api.errors import RESPONSES
from api.paths import MarquezRoute
from impact import marquez_catalog as mc
from impact import marquez_stats as ms

router = APIRouter(prefix="/api/v1", tags=["runs"], route_class=MarquezRoute,
                   responses={**RESPONSES, 404: {"description": "not found"}})


@router.get("/namespaces/{namespace}/jobs/{job}/runs", dependencies=[READ],
            summary="A job's runs (Marquez)")
def job_runs(graph: G, namespace: str, job: str, limit: MLimit, offset: MOffset = 0) -> Any:
    return to_json(mc.job_runs(graph, namespace, job, limit, offset))


@router.post("/namespaces/{namespace}/jobs/{job}/runs", dependencies=[WRITE], status_code=501,
             summary="Marquez's legacy run creation: 501, use POST /api/v1/lineage")
def post_run(namespace: str, job: str) -> Any:
    return errors.legacy_write("run")


@router.get("/jobs/runs/{run_id}", dependencies=[READ], summary="One run (Marquez)")
def run(graph: G, run_id: str) -> Any:
    return to_json(mc.run(graph, run_id))


@router.get("/jobs/runs/{run_id}/facets", dependencies=[READ],
            summary="A run's facets, or its job's (Marquez)")
def run_facets(graph: G, run_id: str, type_: Annotated[str, Query(
        alias="type", pattern="^(?i:run|job)$", description="run or job")]) -> Any:
    return to_json(mc.run_facets(graph, run_id, type_.lower()))


@router.post("/jobs/runs/{run_id}/{transition}", dependencies=[WRITE], status_code=501,
             summary="Marquez's legacy run transitions (start, complete, fail, abort): 501")
def run_transition(run_id: str, transition: str) -> Any:
    return errors.legacy_write(f"run {transition}")


@router.get("/runlineage/upstream", dependencies=[READ],
            summary="A run, the runs that produced the versions it read, and theirs (Marquez)")
def run_lineage(graph: G, run_id: Annotated[str, Query(alias="runId", min_length=1)],
                depth: Annotated[int, Query(ge=0, le=50)] = 20) -> Any:
    return ms.run_upstream(graph, run_id, depth)
