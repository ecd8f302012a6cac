"""Lookups: a page of datasets, one dataset, job or run as the graph holds them (the API's
``/api/v1/datasets``, ``/dataset``, ``/job``, ``/runs/{id}`` and ``lineage show``)."""

from __future__ import annotations

from typing import Any

from graph.db import Graph
from graph.errors import NotFound


def datasets(graph: Graph, namespace: str | None, limit: int, offset: int) -> list[dict[str, Any]]:
    """A page of datasets with their columns and owners, by namespace and name."""
    return graph.read("lookup/datasets", namespace=namespace, skip=offset, limit=limit)


def dataset(graph: Graph, namespace: str, name: str) -> dict[str, Any]:
    """One dataset: columns, owners, writers, readers, neighbours, last run; NotFound."""
    rows = graph.read("lookup/dataset", namespace=namespace, name=name)
    if not rows:
        raise NotFound("dataset", f"{namespace}:{name}", name)
    return rows[0]


def job(graph: Graph, namespace: str, name: str, runs: int) -> dict[str, Any]:
    """One job: what it reads and writes, its parents and its latest ``runs``; NotFound."""
    rows = graph.read("lookup/job", namespace=namespace, name=name, runs=runs)
    if not rows:
        raise NotFound("job", f"{namespace}:{name}", name)
    return rows[0]


def run(graph: Graph, run_id: str) -> dict[str, Any]:
    """One run with its facets, inputs, outputs, parent and children; NotFound."""
    rows = graph.read("lookup/run", runId=run_id)
    if not rows:
        raise NotFound("run", run_id)
    return rows[0]
