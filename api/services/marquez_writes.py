"""Marquez's legacy writes as the API takes them: checked as Marquez checks them (the namespace,
the source, the datasets, the run must exist: 404 otherwise), turned into the OpenLineage event
they mean (:mod:`ingest.marquez_events`), appended to the event log and loaded before the answer
(by the running worker, else here: ingest.handoff), so that the answer, and the next request of a
script, see them; ``lineage replay`` keeps them.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from fastapi import HTTPException
from pydantic import BaseModel, Field

from api.deps import AppContext
from graph.db import Graph
from graph.errors import NotFound
from impact.marquez import catalog as mc
from ingest import marquez_events as mw
from ingest.pipeline import Ingester, IngestReport
from ingest.read import RawItem

# Marquez's request bodies (marquez.service.models.*Meta), with the names Marquez's clients send
# (camelCase, hence the noqa: N815)


class DatasetIdMeta(BaseModel):
    namespace: str = Field(min_length=1, max_length=1024)
    name: str = Field(min_length=1, max_length=1024)


class FieldMeta(BaseModel):
    name: str = Field(min_length=1, max_length=1024)
    type: str | None = Field(default=None, max_length=1024)
    tags: list[str] | None = None
    description: str | None = Field(default=None, max_length=10_000)


class DatasetMeta(BaseModel):
    type: Literal["DB_TABLE", "STREAM"] = "DB_TABLE"
    physicalName: str = Field(min_length=1, max_length=1024)  # noqa: N815
    sourceName: str = Field(min_length=1, max_length=1024)  # noqa: N815
    fields: list[FieldMeta] | None = Field(default=None, max_length=10_000)
    tags: list[str] | None = None
    description: str | None = Field(default=None, max_length=10_000)
    runId: uuid.UUID | None = None  # noqa: N815
    schemaLocation: str | None = Field(default=None, max_length=2048)  # noqa: N815 (a stream's)


class JobMeta(BaseModel):
    type: Literal["BATCH", "STREAM", "SERVICE"]
    inputs: list[DatasetIdMeta] = Field(max_length=10_000)
    outputs: list[DatasetIdMeta] = Field(max_length=10_000)
    location: str | None = Field(default=None, max_length=2048)
    description: str | None = Field(default=None, max_length=10_000)
    context: dict[str, str] | None = None
    runId: uuid.UUID | None = None  # noqa: N815 (checked against the job, as Marquez does)
    tags: list[str] | None = None


class RunMeta(BaseModel):
    id: uuid.UUID | None = None
    nominalStartTime: datetime | None = None  # noqa: N815
    nominalEndTime: datetime | None = None  # noqa: N815
    args: dict[str, str] | None = None


class SourceMeta(BaseModel):
    type: str = Field(min_length=1, max_length=64)
    connectionUrl: str = Field(min_length=1, max_length=2048)  # noqa: N815
    description: str | None = Field(default=None, max_length=10_000)


def _load(found: AppContext, graph: Graph, event: dict[str, Any], where: str) -> None:
    """Log and load one event now; a refused event is a 400 that says why."""
    report = IngestReport()
    Ingester(graph, found.settings.batch_size, found.settings.facet_max_bytes,
             journal=found.log(), handoff_wait=found.settings.command_wait).ingest(
        [RawItem(where, obj=event)], report)
    if report.rejected:
        raise HTTPException(400, f"{where}: " + "; ".join(report.rejected[0].reasons))


def put_source(found: AppContext, graph: Graph, name: str, meta: SourceMeta) -> dict[str, Any]:
    found.command("put_source", {"name": name, "type": meta.type.upper(),
                                             "connectionUrl": meta.connectionUrl,
                                             "description": meta.description})
    return mc.source(graph, name)


def put_dataset(found: AppContext, graph: Graph, namespace: str, name: str,
                meta: DatasetMeta) -> dict[str, Any]:
    mc.namespace(graph, namespace)
    source = mc.source(graph, meta.sourceName)
    # Marquez adds a PUT's tags to the dataset's own; the fields are the PUT's, with their tags
    meta = meta.model_copy(update={"tags": sorted(set(meta.tags or []) | _own_tags(graph, namespace, name))})
    facets = mw.dataset_facets(meta.model_dump(), meta.sourceName, source["connectionUrl"] or None)
    where = f"PUT /api/v1/namespaces/{namespace}/datasets/{name}"
    if meta.runId is None:
        _load(found, graph, mw.dataset_event(namespace, name, facets), where)
    else:
        run = mc.run(graph, str(meta.runId))
        _load(found, graph, mw.run_event(
            "OTHER", run["id"], run["jobVersion"], [],
            [{"namespace": namespace, "name": name, "facets": facets}]), where)
    return mc.dataset(graph, namespace, name)


def _own_tags(graph: Graph, namespace: str, name: str) -> set[str]:
    """The dataset-level tags of the dataset's tags facet (those a producer or an earlier PUT
    set; tags added through Marquez's tag routes are kept apart and stay)."""
    facet = mc.dataset_facet(graph, namespace, name, "tags")
    entries = facet.get("tags") if isinstance(facet, dict) else None
    return {t["key"] for t in entries or [] if isinstance(t, dict) and isinstance(t.get("key"), str)
            and not t.get("field")}


def put_job(found: AppContext, graph: Graph, namespace: str, name: str,
            meta: JobMeta) -> dict[str, Any]:
    mc.namespace(graph, namespace)
    if meta.runId is not None:
        job = mc.run(graph, str(meta.runId))["jobVersion"]
        if (job["namespace"], job["name"]) != (namespace, name):
            raise HTTPException(400, f"run {meta.runId} is a run of {job['namespace']}:"
                                     f"{job['name']}, not of {namespace}:{name}")
    for d in meta.inputs + meta.outputs:
        mc.dataset(graph, d.namespace, d.name)
    _load(found, graph, mw.job_event(namespace, name, meta.model_dump(mode="json")),
          f"PUT /api/v1/namespaces/{namespace}/jobs/{name}")
    return mc.job(graph, namespace, name)


def post_run(found: AppContext, graph: Graph, namespace: str, job_name: str,
             meta: RunMeta) -> dict[str, Any]:
    mc.namespace(graph, namespace)
    job = mc.job(graph, namespace, job_name)
    run_id = str(meta.id or uuid.uuid4())
    if _run_exists(graph, run_id):
        raise HTTPException(400, f"Run '{run_id}' already exists for '{job_name}' under "
                                 f"namespace '{namespace}'.")
    _load(found, graph, mw.run_event(
        "OTHER", run_id, job["id"], job["inputs"], _outputs(graph, job),
        run_facets=mw.new_run_facets(meta.model_dump())),
        f"POST /api/v1/namespaces/{namespace}/jobs/{job_name}/runs")
    return mc.run(graph, run_id)


def _outputs(graph: Graph, job: dict[str, Any]) -> list[dict[str, Any]]:
    """What a run of the job writes: the job's outputs, and those a PUT declared for its runs."""
    found = [{"namespace": d["namespace"], "name": d["name"]} for d in job["outputs"]]
    pending = mc.pending_outputs(graph, job["namespace"], job["name"])
    return found + [d for d in pending if d not in found]


def _run_exists(graph: Graph, run_id: str) -> bool:
    try:
        mc.run(graph, run_id)
    except NotFound:
        return False
    return True


def transition(found: AppContext, graph: Graph, run_id: str, action: str,
               at: datetime | None) -> dict[str, Any]:
    run = mc.run(graph, run_id)
    ident = run["jobVersion"]
    job = mc.job(graph, ident["namespace"], ident["name"])
    _load(found, graph, mw.run_event(mw.TRANSITIONS[action], run["id"], job["id"],
                                       job["inputs"], _outputs(graph, job), at),
          f"POST /api/v1/jobs/runs/{run_id}/{action}")
    return mc.run(graph, run["id"])
