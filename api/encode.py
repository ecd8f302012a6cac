"""Answers as JSON: dataclasses, Neo4j's temporal types, node properties without bookkeeping, pages."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from fastapi.encoders import jsonable_encoder
from neo4j.time import Date, DateTime, Duration

from graph.bookkeeping import public


def _iso(value: Any) -> str:
    return str(value.to_native().isoformat())


_NEO4J_TYPES: dict[Any, Callable[[Any], Any]] = {DateTime: _iso, Date: _iso, Duration: str}


def to_json(value: Any) -> Any:
    """A value FastAPI can send as JSON (dataclasses as objects, Neo4j times as ISO strings)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    return jsonable_encoder(value, custom_encoder=_NEO4J_TYPES)


def lean(row: dict[str, Any]) -> dict[str, Any]:
    """Drop bookkeeping properties (event digests, property times) from a node's properties."""
    return {**row, "props": public(row["props"])}


def page(key: str, rows: list[dict[str, Any]], limit: int, offset: int) -> Any:
    """A page of rows whose query counted the total in each row."""
    total = rows[0]["total"] if rows else None
    items = [{k: v for k, v in r.items() if k != "total"} for r in rows]
    return to_json({key: items, "limit": limit, "offset": offset, "total": total})
