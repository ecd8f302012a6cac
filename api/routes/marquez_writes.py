"""Marquez's metadata writes: namespaces, tags on datasets, fields and jobs, tag descriptions and
soft deletes. They need a write token (or loopback without tokens), as every write here. Each is
a command (ingest.commands): scrubbed, appended to the event log, then applied, so a replay keeps
it. Marquez's legacy writes of datasets, jobs and runs answer 501, pointing to ``POST /lineage``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from api import errors
from api.deps import G, require, services
from api.errors import RESPONSES
from api.paths import SlashRoute
from graph.db import Graph
from graph.errors import NotFound
from impact import marquez_catalog as mc
from ingest import commands
from ingest.event_log import WORKER
from ingest.secrets import scrub_text

router = APIRouter(prefix="/api/v1", tags=["marquez"], dependencies=[Depends(require("write"))],
                   responses={**RESPONSES, 404: {"description": "not found"}},
                   route_class=SlashRoute)


class NamespaceMeta(BaseModel):
    ownerName: str = Field(min_length=1, max_length=256)  # noqa: N815 (Marquez's field name)
    description: str | None = Field(default=None, max_length=10_000)


class TagMeta(BaseModel):
    description: str | None = Field(default=None, max_length=10_000)


def _write(request: Request, graph: Graph, name: str, /, **params: Any) -> list[dict[str, Any]]:
    """Log the command, then apply it. The worker applies it again in its place in the log
    (commands are idempotent), unless it had nothing before it to load."""
    body = commands.command(name, params)
    events = services(request).log()
    behind = events.position(WORKER)
    seq = events.append_command(body)
    rows = commands.apply(graph, body)
    if behind == seq - 1:
        events.advance(WORKER, behind, seq)
    return rows


@router.put("/namespaces/{namespace}", summary="Create or update a namespace (Marquez)")
def put_namespace(request: Request, graph: G, namespace: str, meta: NamespaceMeta) -> Any:
    _write(request, graph, "put_namespace", name=namespace, ownerName=meta.ownerName,
           description=meta.description)
    return mc.namespace(graph, scrub_text(namespace))


@router.delete("/namespaces/{namespace}",
               summary="Hide a namespace with its datasets and jobs (Marquez's soft delete)")
def delete_namespace(request: Request, graph: G, namespace: str) -> Any:
    found = mc.namespace(graph, namespace)
    _write(request, graph, "soft_delete", kind="namespace", namespace=namespace, name=None)
    return found


@router.delete("/namespaces/{namespace}/datasets/{dataset}",
               summary="Hide a dataset (Marquez's soft delete)")
def delete_dataset(request: Request, graph: G, namespace: str, dataset: str) -> Any:
    found = mc.dataset(graph, namespace, dataset)
    _write(request, graph, "soft_delete", kind="dataset", namespace=namespace, name=dataset)
    return found


@router.delete("/namespaces/{namespace}/jobs/{job}", summary="Hide a job (Marquez's soft delete)")
def delete_job(request: Request, graph: G, namespace: str, job: str) -> Any:
    found = mc.job(graph, namespace, job)
    _write(request, graph, "soft_delete", kind="job", namespace=namespace, name=job)
    return found


def _tag(request: Request, graph: Graph, kind: str, namespace: str, name: str, tag: str,
         add: bool, field: str | None = None) -> None:
    if field is not None and not mc.has_field(graph, namespace, name, field):
        raise NotFound("field", f"{namespace}:{name}.{field}")  # before anything is logged
    if add:
        _write(request, graph, "tag_add", kind=kind, namespace=namespace, name=name,
               field=field, tag=tag, by="api")
    else:
        _write(request, graph, "tag_remove", kind=kind, namespace=namespace, name=name,
               field=field, tag=tag)


@router.post("/namespaces/{namespace}/datasets/{dataset}/tags/{tag}",
             summary="Tag a dataset (Marquez)")
def tag_dataset(request: Request, graph: G, namespace: str, dataset: str, tag: str) -> Any:
    mc.dataset(graph, namespace, dataset)
    _tag(request, graph, "dataset", namespace, dataset, tag, True)
    return mc.dataset(graph, namespace, dataset)


@router.delete("/namespaces/{namespace}/datasets/{dataset}/tags/{tag}",
               summary="Remove a tag the API set on a dataset (Marquez)")
def untag_dataset(request: Request, graph: G, namespace: str, dataset: str, tag: str) -> Any:
    mc.dataset(graph, namespace, dataset)
    _tag(request, graph, "dataset", namespace, dataset, tag, False)
    return mc.dataset(graph, namespace, dataset)


@router.post("/namespaces/{namespace}/datasets/{dataset}/fields/{field}/tags/{tag}",
             summary="Tag a field of a dataset (Marquez: the tag is upper-cased)")
def tag_field(request: Request, graph: G, namespace: str, dataset: str, field: str,
              tag: str) -> Any:
    mc.dataset(graph, namespace, dataset)
    _tag(request, graph, "field", namespace, dataset, tag.upper(), True, field)
    return mc.dataset(graph, namespace, dataset)


@router.delete("/namespaces/{namespace}/datasets/{dataset}/fields/{field}/tags/{tag}",
               summary="Remove a tag the API set on a field (Marquez)")
def untag_field(request: Request, graph: G, namespace: str, dataset: str, field: str,
                tag: str) -> Any:
    mc.dataset(graph, namespace, dataset)
    _tag(request, graph, "field", namespace, dataset, tag.upper(), False, field)
    return mc.dataset(graph, namespace, dataset)


@router.post("/namespaces/{namespace}/jobs/{job}/tags/{tag}", summary="Tag a job (Marquez)")
def tag_job(request: Request, graph: G, namespace: str, job: str, tag: str) -> Any:
    mc.job(graph, namespace, job)
    _tag(request, graph, "job", namespace, job, tag, True)
    return mc.job(graph, namespace, job)


@router.delete("/namespaces/{namespace}/jobs/{job}/tags/{tag}",
               summary="Remove a tag the API set on a job (Marquez)")
def untag_job(request: Request, graph: G, namespace: str, job: str, tag: str) -> Any:
    mc.job(graph, namespace, job)
    _tag(request, graph, "job", namespace, job, tag, False)
    return mc.job(graph, namespace, job)


@router.put("/tags/{tag}", summary="Create or describe a tag (Marquez)")
def put_tag(request: Request, graph: G, tag: str,
            meta: Annotated[TagMeta | None, Body()] = None) -> Any:
    rows = _write(request, graph, "put_tag", tag=tag,
                  description=meta.description if meta else None)
    return rows[0]


_LEGACY = ("Marquez's {what} write is not offered: lineage-graph learns datasets, jobs and runs "
           "from OpenLineage events; send them to POST /api/v1/lineage")


def _legacy(what: str) -> JSONResponse:
    return errors.answer(501, _LEGACY.format(what=what))


@router.put("/namespaces/{namespace}/datasets/{dataset}", status_code=501,
            summary="Marquez's legacy dataset write: 501, use POST /api/v1/lineage")
def put_dataset(namespace: str, dataset: str) -> Any:
    return _legacy("dataset")


@router.put("/namespaces/{namespace}/jobs/{job}", status_code=501,
            summary="Marquez's legacy job write: 501, use POST /api/v1/lineage")
def put_job(namespace: str, job: str) -> Any:
    return _legacy("job")


@router.post("/namespaces/{namespace}/jobs/{job}/runs", status_code=501,
             summary="Marquez's legacy run creation: 501, use POST /api/v1/lineage")
def post_run(namespace: str, job: str) -> Any:
    return _legacy("run")


@router.post("/jobs/runs/{run_id}/{transition}", status_code=501,
             summary="Marquez's legacy run transitions (start, complete, fail, abort): 501")
def run_transition(run_id: str, transition: str) -> Any:
    return _legacy(f"run {transition}")


@router.put("/sources/{source}", status_code=501,
            summary="Marquez's legacy source write: 501, sources come from the dataSource facet")
def put_source(source: str) -> Any:
    return _legacy("source")
