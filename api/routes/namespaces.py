"""Namespaces (Marquez's paths): list, read, create or describe, soft-delete."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from api.deps import READ, WRITE, G, MLimit, MOffset, app_context
from api.encode import to_json
from api.errors import RESPONSES
from api.paths import MarquezRoute
from api.schemas import answer
from api.schemas import marquez as mq
from impact.marquez import catalog as mc
from ingest.secrets import scrub_text

router = APIRouter(prefix="/api/v1", tags=["namespaces"], route_class=MarquezRoute,
                   responses={**RESPONSES, 404: {"description": "not found"}})


class NamespaceMeta(BaseModel):
    ownerName: str = Field(min_length=1, max_length=256)  # noqa: N815 (Marquez's field name)
    description: str | None = Field(default=None, max_length=10_000)


@router.get("/namespaces", dependencies=[READ], summary="Namespaces (Marquez)",
            responses=answer(mq.Namespaces))
def namespaces(graph: G, limit: MLimit, offset: MOffset = 0) -> Any:
    return to_json(mc.namespaces(graph, limit, offset))


@router.get("/namespaces/{namespace}", dependencies=[READ], summary="One namespace (Marquez)",
            responses=answer(mq.Namespace))
def namespace(graph: G, namespace: str) -> Any:
    return to_json(mc.namespace(graph, namespace))


@router.put("/namespaces/{namespace}", dependencies=[WRITE],
            summary="Create or update a namespace (Marquez)",
            responses=answer(mq.Namespace))
def put_namespace(request: Request, graph: G, namespace: str, meta: NamespaceMeta) -> Any:
    app_context(request).command("put_namespace", {"name": namespace, "ownerName": meta.ownerName,
                                                "description": meta.description})
    return mc.namespace(graph, scrub_text(namespace))


@router.delete("/namespaces/{namespace}", dependencies=[WRITE],
               summary="Hide a namespace with its datasets and jobs (Marquez's soft delete)",
            responses=answer(mq.Namespace))
def delete_namespace(request: Request, graph: G, namespace: str) -> Any:
    found = mc.namespace(graph, namespace)
    app_context(request).command("soft_delete",
                              {"kind": "namespace", "namespace": namespace, "name": None})
    return found
