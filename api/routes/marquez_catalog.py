"""Marquez's read API on our store: namespaces, sources, datasets, jobs, runs, versions, events,
tags and search, at Marquez's paths with its parameters, paging and field names
(docs/marquez.md lists every operation and how it differs, if at all)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request

from api.deps import READ, G, services
from api.encode import to_json
from api.errors import RESPONSES
from api.paths import SlashRoute
from impact import marquez_catalog as mc
from impact import marquez_versions as mv

router = APIRouter(prefix="/api/v1", tags=["marquez"], dependencies=[READ],
                   responses={**RESPONSES, 404: {"description": "not found"}},
                   route_class=SlashRoute)


async def marquez_limit(request: Request, limit: Annotated[int, Query(
        ge=0, description="Page size (Marquez's default 100; clamped to the configured "
                          "maximum).")] = 100) -> int:
    return min(limit, services(request).settings.api_max_page)


MLimit = Annotated[int, Depends(marquez_limit)]
RunStates = Annotated[list[Literal["NEW", "RUNNING", "COMPLETED", "FAILED", "ABORTED"]] | None, Query(
    alias="lastRunStates", description="Keep jobs whose latest run is in these states")]
MOffset = Annotated[int, Query(ge=0, le=2_000_000_000, description="Rows to skip.")]


@router.get("/namespaces", summary="Namespaces (Marquez)")
def namespaces(graph: G, limit: MLimit, offset: MOffset = 0) -> Any:
    return to_json(mc.namespaces(graph, limit, offset))


@router.get("/namespaces/{namespace}", summary="One namespace (Marquez)")
def namespace(graph: G, namespace: str) -> Any:
    return to_json(mc.namespace(graph, namespace))


@router.get("/namespaces/{namespace}/datasets", summary="Datasets of a namespace (Marquez)")
def datasets(graph: G, namespace: str, limit: MLimit, offset: MOffset = 0) -> Any:
    return to_json(mc.datasets(graph, namespace, limit, offset))


@router.get("/namespaces/{namespace}/datasets/{dataset}", summary="One dataset (Marquez)")
def dataset(graph: G, namespace: str, dataset: str) -> Any:
    return to_json(mc.dataset(graph, namespace, dataset))


@router.get("/namespaces/{namespace}/datasets/{dataset}/versions",
            summary="A dataset's versions: one per write (Marquez)")
def dataset_versions(graph: G, namespace: str, dataset: str, limit: MLimit,
                     offset: MOffset = 0) -> Any:
    return to_json(mv.dataset_versions(graph, namespace, dataset, limit, offset))


@router.get("/namespaces/{namespace}/datasets/{dataset}/versions/{version}",
            summary="One version of a dataset (Marquez)")
def dataset_version(graph: G, namespace: str, dataset: str, version: str) -> Any:
    return to_json(mv.dataset_version(graph, namespace, dataset, version))


@router.get("/jobs", summary="Jobs of every namespace (Marquez)")
def all_jobs(graph: G, limit: MLimit, offset: MOffset = 0,
             last_run_states: RunStates = None) -> Any:
    return to_json(mc.jobs(graph, None, limit, offset, last_run_states))


@router.get("/namespaces/{namespace}/jobs", summary="Jobs of a namespace (Marquez)")
def jobs(graph: G, namespace: str, limit: MLimit, offset: MOffset = 0,
         last_run_states: RunStates = None) -> Any:
    return to_json(mc.jobs(graph, namespace, limit, offset, last_run_states))


@router.get("/namespaces/{namespace}/jobs/{job}", summary="One job (Marquez)")
def job(graph: G, namespace: str, job: str) -> Any:
    return to_json(mc.job(graph, namespace, job))


@router.get("/namespaces/{namespace}/jobs/{job}/versions",
            summary="A job's versions: one per distinct inputs and outputs (Marquez)")
def job_versions(graph: G, namespace: str, job: str, limit: MLimit, offset: MOffset = 0) -> Any:
    return to_json(mv.job_versions(graph, namespace, job, limit, offset))


@router.get("/namespaces/{namespace}/jobs/{job}/versions/{version}",
            summary="One version of a job (Marquez)")
def job_version(graph: G, namespace: str, job: str, version: str) -> Any:
    return to_json(mv.job_version(graph, namespace, job, version))


@router.get("/namespaces/{namespace}/jobs/{job}/runs", summary="A job's runs (Marquez)")
def job_runs(graph: G, namespace: str, job: str, limit: MLimit, offset: MOffset = 0) -> Any:
    return to_json(mc.job_runs(graph, namespace, job, limit, offset))


@router.get("/jobs/runs/{run_id}", summary="One run (Marquez)")
def run(graph: G, run_id: str) -> Any:
    return to_json(mc.run(graph, run_id))


@router.get("/jobs/runs/{run_id}/facets", summary="A run's facets, or its job's (Marquez)")
def run_facets(graph: G, run_id: str, type_: Annotated[str, Query(
        alias="type", pattern="^(?i:run|job)$", description="run or job")]) -> Any:
    return to_json(mc.run_facets(graph, run_id, type_.lower()))
