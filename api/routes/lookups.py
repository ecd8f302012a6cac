"""Lookups: namespaces, datasets, jobs and runs as the graph holds them."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from api.deps import READ, G, Limit, Name, Ns, Offset
from api.encode import lean, page, to_json
from api.errors import RESPONSES
from graph.errors import NotFound

router = APIRouter(tags=["lookup"], dependencies=[READ], responses=RESPONSES)


@router.get("/api/v1/datasets", summary="Datasets with columns and owners, a page at a time")
def datasets(graph: G, limit: Limit, namespace: str | None = None, offset: Offset = 0) -> Any:
    rows = graph.read("lookup/datasets", namespace=namespace, skip=offset, limit=limit)
    return page("datasets", rows, limit, offset)


@router.get("/api/v1/dataset",
            summary="One dataset: columns, owners, writers, readers, neighbours, last run")
def dataset(graph: G, namespace: Ns, name: Name) -> Any:
    rows = graph.read("lookup/dataset", namespace=namespace, name=name)
    if not rows:
        raise NotFound("dataset", f"{namespace}:{name}", name)
    return to_json(lean(rows[0]))


@router.get("/api/v1/job", summary="One job: what it reads and writes, its parents and latest runs")
def job(graph: G, namespace: Ns, name: Name, runs: Annotated[int, Query(ge=1, le=100)] = 10) -> Any:
    rows = graph.read("lookup/job", namespace=namespace, name=name, runs=runs)
    if not rows:
        raise NotFound("job", f"{namespace}:{name}", name)
    return to_json(lean(rows[0]))


@router.get("/api/v1/runs/{run_id}",
            summary="One run with its facets, inputs, outputs, parent and children")
def run(graph: G, run_id: str) -> Any:
    rows = graph.read("lookup/run", runId=run_id)
    if not rows:
        raise NotFound("run", run_id)
    return to_json(lean(rows[0]))
