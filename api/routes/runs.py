"""Runs (Marquez's paths): a job's runs, one run, its facets, and the runs upstream of it.
Marquez's legacy run creation and transitions become the OpenLineage RunEvents they mean."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request

from api.deps import READ, WRITE, G, MLimit, MOffset, app_context
from api.encode import to_json
from api.errors import RESPONSES
from api.paths import MarquezRoute
from api.schemas import answer
from api.schemas import marquez as mq
from api.services import marquez_writes as writes
from api.services.marquez_writes import RunMeta
from impact.marquez import catalog as mc
from impact.marquez import stats as ms

router = APIRouter(prefix="/api/v1", tags=["runs"], route_class=MarquezRoute,
                   responses={**RESPONSES, 404: {"description": "not found"}})


@router.get("/namespaces/{namespace}/jobs/{job}/runs", dependencies=[READ],
            summary="A job's runs (Marquez)",
            responses=answer(mq.Runs))
def job_runs(graph: G, namespace: str, job: str, limit: MLimit, offset: MOffset = 0) -> Any:
    return to_json(mc.job_runs(graph, namespace, job, limit, offset))


@router.post("/namespaces/{namespace}/jobs/{job}/runs", dependencies=[WRITE], status_code=201,
             summary="Create a run of a job (Marquez's legacy write: a RunEvent of type OTHER)",
            responses=answer(mq.Run, 201))
def post_run(request: Request, graph: G, namespace: str, job: str,
             meta: RunMeta | None = None) -> Any:
    return to_json(writes.post_run(app_context(request), graph, namespace, job, meta or RunMeta()))


@router.get("/jobs/runs/{run_id}", dependencies=[READ], summary="One run (Marquez)",
            responses=answer(mq.Run))
def run(graph: G, run_id: str) -> Any:
    return to_json(mc.run(graph, run_id))


@router.get("/jobs/runs/{run_id}/facets", dependencies=[READ],
            summary="A run's facets, or its job's (Marquez)",
            responses=answer(mq.RunFacets))
def run_facets(graph: G, run_id: str, type_: Annotated[str, Query(
        alias="type", pattern="^(?i:run|job)$", description="run or job")]) -> Any:
    return to_json(mc.run_facets(graph, run_id, type_.lower()))


@router.post("/jobs/runs/{run_id}/{transition}", dependencies=[WRITE],
             summary="Mark a run started, completed, failed or aborted (Marquez's legacy write: "
                     "the RunEvent START, COMPLETE, FAIL or ABORT)",
            responses=answer(mq.Run))
def run_transition(request: Request, graph: G, run_id: str,
                   transition: Literal["start", "complete", "fail", "abort"],
                   at: Annotated[datetime | None, Query(
                       description="when (ISO 8601); now by default")] = None) -> Any:
    return to_json(writes.transition(app_context(request), graph, run_id, transition, at))


@router.get("/runlineage/upstream", dependencies=[READ],
            summary="A run, the runs that produced the versions it read, and theirs (Marquez)",
            responses=answer(mq.UpstreamRuns))
def run_lineage(graph: G, run_id: Annotated[str, Query(alias="runId", min_length=1)],
                depth: Annotated[int, Query(ge=0, le=50)] = 20) -> Any:
    return ms.run_upstream(graph, run_id, depth)
