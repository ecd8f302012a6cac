"""Jobs (Marquez's paths): list (all, or one namespace's), read, versions, soft-delete, tags.
Marquez's legacy job write becomes the OpenLineage JobEvent it means."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request

from api.deps import READ, WRITE, G, MLimit, MOffset, app_context
from api.encode import to_json
from api.errors import RESPONSES
from api.paths import MarquezRoute
from api.schemas import answer
from api.schemas import marquez as mq
from api.services import marquez_writes as writes
from api.services.marquez_writes import JobMeta
from graph.db import Graph
from impact.marquez import catalog as mc
from impact.marquez import versions as mv
from ingest import commands

router = APIRouter(prefix="/api/v1", tags=["jobs"], route_class=MarquezRoute,
                   responses={**RESPONSES, 404: {"description": "not found"}})

RunStates = Annotated[list[Literal["NEW", "RUNNING", "COMPLETED", "FAILED", "ABORTED"]] | None, Query(
    alias="lastRunStates", description="Keep jobs whose latest run is in these states")]


@router.get("/jobs", dependencies=[READ], summary="Jobs of every namespace (Marquez)",
            responses=answer(mq.Jobs))
def all_jobs(graph: G, limit: MLimit, offset: MOffset = 0,
             last_run_states: RunStates = None) -> Any:
    return to_json(mc.jobs(graph, None, limit, offset, last_run_states))


@router.get("/namespaces/{namespace}/jobs", dependencies=[READ],
            summary="Jobs of a namespace (Marquez)",
            responses=answer(mq.Jobs))
def jobs(graph: G, namespace: str, limit: MLimit, offset: MOffset = 0,
         last_run_states: RunStates = None) -> Any:
    return to_json(mc.jobs(graph, namespace, limit, offset, last_run_states))


@router.get("/namespaces/{namespace}/jobs/{job}", dependencies=[READ],
            summary="One job (Marquez)",
            responses=answer(mq.Job))
def job(graph: G, namespace: str, job: str) -> Any:
    return to_json(mc.job(graph, namespace, job))


@router.get("/namespaces/{namespace}/jobs/{job}/versions", dependencies=[READ],
            summary="A job's versions: one per distinct inputs and outputs (Marquez)",
            responses=answer(mq.JobVersions))
def job_versions(graph: G, namespace: str, job: str, limit: MLimit, offset: MOffset = 0) -> Any:
    return to_json(mv.job_versions(graph, namespace, job, limit, offset))


@router.get("/namespaces/{namespace}/jobs/{job}/versions/{version}", dependencies=[READ],
            summary="One version of a job (Marquez)",
            responses=answer(mq.JobVersion))
def job_version(graph: G, namespace: str, job: str, version: str) -> Any:
    return to_json(mv.job_version(graph, namespace, job, version))


@router.put("/namespaces/{namespace}/jobs/{job}", dependencies=[WRITE],
            summary="Create or update a job (Marquez's legacy write: a JobEvent)",
            responses=answer(mq.Job))
def put_job(request: Request, graph: G, namespace: str, job: str, meta: JobMeta) -> Any:
    return to_json(writes.put_job(app_context(request), graph, namespace, job, meta))


@router.delete("/namespaces/{namespace}/jobs/{job}", dependencies=[WRITE],
               summary="Hide a job (Marquez's soft delete)",
            responses=answer(mq.Job))
def delete_job(request: Request, graph: G, namespace: str, job: str) -> Any:
    found = mc.job(graph, namespace, job)
    app_context(request).command("soft_delete", {"kind": "job", "namespace": namespace, "name": job})
    return found


def _tag(request: Request, graph: Graph, namespace: str, job: str, tag: str, add: bool) -> Any:
    mc.job(graph, namespace, job)
    commands.tag(graph, app_context(request).log(), "job", namespace, job, tag, add,
                 wait=app_context(request).settings.command_wait)
    return mc.job(graph, namespace, job)


@router.post("/namespaces/{namespace}/jobs/{job}/tags/{tag}", dependencies=[WRITE],
             summary="Tag a job (Marquez)",
            responses=answer(mq.Job))
def tag_job(request: Request, graph: G, namespace: str, job: str, tag: str) -> Any:
    return _tag(request, graph, namespace, job, tag, True)


@router.delete("/namespaces/{namespace}/jobs/{job}/tags/{tag}", dependencies=[WRITE],
               summary="Remove a tag the API set on a job (Marquez)",
            responses=answer(mq.Job))
def untag_job(request: Request, graph: G, namespace: str, job: str, tag: str) -> Any:
    return _tag(request, graph, namespace, job, tag, False)
