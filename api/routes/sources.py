"""Data sources (Marquez's paths), from the datasets' ``dataSource`` facets. Marquez's legacy
source write answers 501."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from api import errors
from api.deps import READ, WRITE, G, MLimit, MOffset
from api.errors import RESPONSES
from api.paths import MarquezRoute
from impact import marquez_catalog as mc

router = APIRouter(prefix="/api/v1/sources", tags=["sources"], route_class=MarquezRoute,
                   responses={**RESPONSES, 404: {"description": "not found"}})


@router.get("", dependencies=[READ], summary="Data sources (Marquez)")
def sources(graph: G, limit: MLimit, offset: MOffset = 0) -> Any:
    return mc.sources(graph, limit, offset)


@router.get("/{source}", dependencies=[READ], summary="One data source (Marquez)")
def source(graph: G, source: str) -> Any:
    return mc.source(graph, source)


@router.put("/{source}", dependencies=[WRITE], status_code=501,
            summary="Marquez's legacy source write: 501, sources come from the dataSource facet")
def put_source(source: str) -> Any:
    return errors.legacy_write("source")
