"""Data sources (Marquez's paths), from the datasets' ``dataSource`` facets and those created
through Marquez's legacy source write."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from api.deps import READ, WRITE, G, MLimit, MOffset, app_context
from api.errors import RESPONSES
from api.paths import MarquezRoute
from api.schemas import answer
from api.schemas import marquez as mq
from api.services import marquez_writes as writes
from api.services.marquez_writes import SourceMeta
from impact.marquez import catalog as mc

router = APIRouter(prefix="/api/v1/sources", tags=["sources"], route_class=MarquezRoute,
                   responses={**RESPONSES, 404: {"description": "not found"}})


@router.get("", dependencies=[READ], summary="Data sources (Marquez)",
            responses=answer(mq.Sources))
def sources(graph: G, limit: MLimit, offset: MOffset = 0) -> Any:
    return mc.sources(graph, limit, offset)


@router.get("/{source}", dependencies=[READ], summary="One data source (Marquez)",
            responses=answer(mq.Source))
def source(graph: G, source: str) -> Any:
    return mc.source(graph, source)


@router.put("/{source}", dependencies=[WRITE],
            summary="Create or describe a data source (Marquez's legacy write)",
            responses=answer(mq.Source))
def put_source(request: Request, graph: G, source: str, meta: SourceMeta) -> Any:
    return writes.put_source(app_context(request), graph, source, meta)
