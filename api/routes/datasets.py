"""Datasets (Marquez's paths): list, read, versions, soft-delete, tags on a dataset and on its
fields, and Marquez's legacy dataset write (as the OpenLineage event it means)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from api.deps import READ, WRITE, G, MLimit, MOffset, app_context
from api.encode import to_json
from api.errors import RESPONSES
from api.paths import MarquezRoute
from api.schemas import answer
from api.schemas import marquez as mq
from api.services import marquez_writes as writes
from api.services.marquez_writes import DatasetMeta
from graph.db import Graph
from graph.errors import NotFound
from impact.marquez import catalog as mc
from impact.marquez import versions as mv
from ingest import commands

router = APIRouter(prefix="/api/v1/namespaces/{namespace}/datasets", tags=["datasets"],
                   route_class=MarquezRoute,
                   responses={**RESPONSES, 404: {"description": "not found"}})


@router.get("", dependencies=[READ], summary="Datasets of a namespace (Marquez)",
            responses=answer(mq.Datasets))
def datasets(graph: G, namespace: str, limit: MLimit, offset: MOffset = 0) -> Any:
    return to_json(mc.datasets(graph, namespace, limit, offset))


@router.get("/{dataset}", dependencies=[READ], summary="One dataset (Marquez)",
            responses=answer(mq.Dataset))
def dataset(graph: G, namespace: str, dataset: str) -> Any:
    return to_json(mc.dataset(graph, namespace, dataset))


@router.get("/{dataset}/versions", dependencies=[READ],
            summary="A dataset's versions: one per write (Marquez)",
            responses=answer(mq.DatasetVersions))
def dataset_versions(graph: G, namespace: str, dataset: str, limit: MLimit,
                     offset: MOffset = 0) -> Any:
    return to_json(mv.dataset_versions(graph, namespace, dataset, limit, offset))


@router.get("/{dataset}/versions/{version}", dependencies=[READ],
            summary="One version of a dataset (Marquez)",
            responses=answer(mq.DatasetVersion))
def dataset_version(graph: G, namespace: str, dataset: str, version: str) -> Any:
    return to_json(mv.dataset_version(graph, namespace, dataset, version))


@router.put("/{dataset}", dependencies=[WRITE],
            summary="Create or update a dataset (Marquez's legacy write: a DatasetEvent)",
            responses=answer(mq.Dataset))
def put_dataset(request: Request, graph: G, namespace: str, dataset: str,
                meta: DatasetMeta) -> Any:
    return to_json(writes.put_dataset(app_context(request), graph, namespace, dataset, meta))


@router.delete("/{dataset}", dependencies=[WRITE], summary="Hide a dataset (Marquez's soft delete)",
            responses=answer(mq.Dataset))
def delete_dataset(request: Request, graph: G, namespace: str, dataset: str) -> Any:
    found = mc.dataset(graph, namespace, dataset)
    app_context(request).command("soft_delete",
                              {"kind": "dataset", "namespace": namespace, "name": dataset})
    return found


def _tag(request: Request, graph: Graph, namespace: str, dataset: str, tag: str, add: bool,
         field: str | None = None) -> Any:
    mc.dataset(graph, namespace, dataset)
    if field is not None and not mc.has_field(graph, namespace, dataset, field):
        raise NotFound("field", f"{namespace}:{dataset}.{field}")  # before anything is logged
    commands.tag(graph, app_context(request).log(), "field" if field is not None else "dataset",
                 namespace, dataset, tag, add, field, app_context(request).settings.command_wait)
    return mc.dataset(graph, namespace, dataset)


@router.post("/{dataset}/tags/{tag}", dependencies=[WRITE], summary="Tag a dataset (Marquez)",
            responses=answer(mq.Dataset))
def tag_dataset(request: Request, graph: G, namespace: str, dataset: str, tag: str) -> Any:
    return _tag(request, graph, namespace, dataset, tag, True)


@router.delete("/{dataset}/tags/{tag}", dependencies=[WRITE],
               summary="Remove a tag the API set on a dataset (Marquez)",
            responses=answer(mq.Dataset))
def untag_dataset(request: Request, graph: G, namespace: str, dataset: str, tag: str) -> Any:
    return _tag(request, graph, namespace, dataset, tag, False)


@router.post("/{dataset}/fields/{field}/tags/{tag}", dependencies=[WRITE],
             summary="Tag a field of a dataset (Marquez: the tag is upper-cased)",
            responses=answer(mq.Dataset))
def tag_field(request: Request, graph: G, namespace: str, dataset: str, field: str,
              tag: str) -> Any:
    return _tag(request, graph, namespace, dataset, tag.upper(), True, field)


@router.delete("/{dataset}/fields/{field}/tags/{tag}", dependencies=[WRITE],
               summary="Remove a tag the API set on a field (Marquez)",
            responses=answer(mq.Dataset))
def untag_field(request: Request, graph: G, namespace: str, dataset: str, field: str,
                tag: str) -> Any:
    return _tag(request, graph, namespace, dataset, tag.upper(), False, field)
