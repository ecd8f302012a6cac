"""api.encode writes an answer as FastAPI's encoder and JSONResponse did, in one pass."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import uuid
from collections.abc import Callable
from typing import Any

from fastapi.encoders import jsonable_encoder
from neo4j.time import Date, DateTime, Duration

from api.encode import dumps, to_json


class Kind(enum.Enum):
    DATASET = "dataset"


@dataclasses.dataclass(frozen=True)
class Step:
    name: str
    at: DateTime
    kinds: frozenset[str]


@dataclasses.dataclass
class Answer:
    steps: list[Step]
    tags: set[str]
    kind: Kind
    seen: dt.datetime
    day: Date
    span: dt.timedelta
    nothing: None = None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)


def _old_way(value: Any) -> bytes:
    """What the routes sent before: jsonable_encoder (with the Neo4j types), then JSONResponse."""
    iso: dict[Any, Callable[[Any], Any]] = {
        DateTime: lambda v: v.to_native().isoformat(), Date: lambda v: v.to_native().isoformat(),
        Duration: str}
    encoded = jsonable_encoder(value, custom_encoder=iso)
    return json.dumps(jsonable_encoder(encoded), ensure_ascii=False, allow_nan=False,
                      separators=(",", ":")).encode()


def test_an_answer_is_written_byte_for_byte_as_before() -> None:
    utc = dt.UTC
    answer = Answer(
        steps=[Step("raw.users é", DateTime(2024, 6, 1, 3, 0, 5, 120000, tzinfo=utc), frozenset({"x"})),
               Step("stg.users", DateTime(2024, 6, 1, 3, 0, 0, tzinfo=utc), frozenset())],
        tags={"PII"}, kind=Kind.DATASET, seen=dt.datetime(2024, 6, 1, 3, 0, tzinfo=utc),
        day=Date(2024, 6, 1), span=dt.timedelta(seconds=1.5),
        extra={"id": uuid.UUID(int=7), "n": 3, "f": 0.25, "nested": [{"a": [1, 2]}], "big": 2**70})
    assert dumps(answer) == _old_way(answer)
    took = {"took": Duration(seconds=90)}  # a tuple: in a dataclass, the old way could not copy it
    assert dumps(took) == _old_way(took) == b'{"took":"PT1M30S"}'
    assert to_json(answer).body == _old_way(answer)
    assert json.loads(dumps(answer))["steps"][0]["at"] == "2024-06-01T03:00:05.000120+00:00"  # nanoseconds


def test_integer_keys_and_huge_integers_are_written_as_the_standard_library_does() -> None:
    value = {1: "one", "n": 2**80}
    assert dumps(value) == _old_way(value)
