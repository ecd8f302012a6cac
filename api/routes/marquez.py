"""Marquez-shaped lineage: ``GET /api/v1/lineage`` and ``GET /api/v1/column-lineage``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Query

from api import errors
from api.deps import READ, Depth, G, Retired
from api.encode import to_json
from api.errors import RESPONSES, BadParam
from impact import marquez_lineage as lg

router = APIRouter(tags=["marquez"], dependencies=[READ], responses={
    **RESPONSES, 400: {"model": errors.ErrorBody,
                       "description": "a nodeId that names several nodes, with the candidates"}})


def _answer(ask: Callable[[], Any]) -> Any:
    try:
        return to_json(ask())
    except lg.AmbiguousNodeId as e:
        return errors.answer(400, str(e), candidates=e.candidates)
    except lg.BadNodeId as e:
        raise BadParam("nodeId", str(e)) from e


@router.get("/api/v1/lineage", summary="Marquez-compatible lineage graph around a dataset or job")
def lineage(graph: G, node_id: Annotated[str, Query(
        alias="nodeId", min_length=3, max_length=lg.MAX_NODE_ID,
        description="dataset:NAMESPACE:NAME or job:NAMESPACE:NAME")], depth: Depth = None,
            retired: Retired = False) -> Any:
    return _answer(lambda: lg.lineage(graph, node_id, depth, retired))


@router.get("/api/v1/column-lineage",
            summary="Marquez-compatible column lineage around a field (or all fields of a dataset)")
def column_lineage(graph: G, node_id: Annotated[str, Query(
        alias="nodeId", min_length=3, max_length=lg.MAX_NODE_ID,
        description="datasetField:NAMESPACE:DATASET:FIELD or dataset:NAMESPACE:NAME")],
                   depth: Depth = None,
                   with_downstream: Annotated[bool, Query(alias="withDownstream")] = False,
                   retired: Retired = False) -> Any:
    return _answer(lambda: lg.column_lineage(graph, node_id, depth, with_downstream, retired))
