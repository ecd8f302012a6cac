"""Answers as JSON: dataclasses, Neo4j's temporal types, node properties without bookkeeping, pages.

An answer is serialised once, straight to bytes (orjson, with a ``default`` for the types our
answers hold), and handed to FastAPI as a finished response. Returning a plain dict instead
makes FastAPI walk it with ``jsonable_encoder`` (a pure-Python copy of the whole answer) before
``json.dumps`` walks it again; the bytes are the same (tests/unit/test_encode.py). What the HTTP
path adds to a question is measured by ``bench.peer`` (docs/benchmarks.md).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import uuid
from collections.abc import Callable
from decimal import Decimal
from pathlib import PurePath
from typing import Any

import orjson
from neo4j.time import Date, DateTime, Duration, Time
from starlette.responses import Response

from graph.bookkeeping import public


def _iso(value: Any) -> str:
    return str(value.to_native().isoformat())


_EXACT: dict[type, Callable[[Any], Any]] = {
    DateTime: _iso, Date: _iso, Time: _iso, Duration: str,
    dt.datetime: dt.datetime.isoformat, dt.date: dt.date.isoformat, dt.time: dt.time.isoformat,
    dt.timedelta: dt.timedelta.total_seconds, set: list, frozenset: list, uuid.UUID: str,
    Decimal: float,
}


def _default(value: Any) -> Any:
    """What ``json.dumps`` cannot write itself, written as FastAPI's ``jsonable_encoder`` would."""
    exact = _EXACT.get(type(value))
    if exact is not None:
        return exact(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, PurePath):
        return str(value)
    dump = getattr(value, "model_dump", None)  # a pydantic model
    if callable(dump):
        return dump(mode="json")
    for kind, write in _EXACT.items():  # subclasses (a pandas Timestamp is a datetime)
        if isinstance(value, kind):
            return write(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def dumps(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON, the bytes FastAPI's JSONResponse would send: orjson, and
    :mod:`json` for what orjson refuses (integers beyond 64 bits, keys that are not strings)."""
    try:
        return orjson.dumps(value, default=_default, option=orjson.OPT_PASSTHROUGH_DATETIME)
    except orjson.JSONEncodeError:
        return json.dumps(value, default=_default, ensure_ascii=False, allow_nan=False,
                          separators=(",", ":")).encode()


class JSONAnswer(Response):
    """A JSON response whose body was serialised once, by ``dumps``."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps(content)


def to_json(value: Any) -> JSONAnswer:
    """The response for an answer (dataclasses as objects, Neo4j times as ISO strings)."""
    return JSONAnswer(value)


def lean(row: dict[str, Any]) -> dict[str, Any]:
    """Drop bookkeeping properties (event digests, property times) from a node's properties."""
    return {**row, "props": public(row["props"])}


def page(key: str, rows: list[dict[str, Any]], limit: int, offset: int) -> JSONAnswer:
    """A page of rows whose query counted the total in each row."""
    total = rows[0]["total"] if rows else None
    items = [{k: v for k, v in r.items() if k != "total"} for r in rows]
    return to_json({key: items, "limit": limit, "offset": offset, "total": total})
