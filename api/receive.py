"""Receiving OpenLineage events over HTTP: ``POST /api/v1/lineage``.

One event, a JSON array, or NDJSON (``application/x-ndjson``), plain or gzip-compressed (the route
gunzips, bounded by the limit). Each event is validated; the accepted
ones are appended to the durable log before the response, which says how many were accepted and,
for each rejected one, its index and reasons. 201 when at least one event was accepted, 400 when
none was; 413 over the size limit; 415 for another content type; 400 with line and column for a
body that is not JSON. Bad input never gives a 500.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from graph.errors import LineageError
from ingest.read import Kind, read_bytes, whole_error
from ingest.validate import validate

JSON_TYPES = ("application/json",)
NDJSON_TYPES = ("application/x-ndjson", "application/ndjson", "application/jsonl",
                "application/x-jsonlines", "application/json-seq")


class BodyError(LineageError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class BodyBudget:
    """Bytes of request bodies one API process holds at once, from the first byte read until the
    events are logged (their parsed objects take several times their size): a burst of large
    bodies takes turns instead of taking the process's memory with it. A request that finds no
    room within ``wait`` seconds gets 503 with Retry-After."""

    def __init__(self, total: int, wait: float = 30.0) -> None:
        self.total = self.free = total
        self.wait = wait
        self._room = asyncio.Condition()

    @contextlib.asynccontextmanager
    async def hold(self, size: int) -> AsyncIterator[None]:
        size = min(size, self.total)
        async with self._room:
            try:
                await asyncio.wait_for(self._room.wait_for(lambda: self.free >= size), self.wait)
            except TimeoutError as e:
                raise BodyError(503, f"the API is taking in {self.total - self.free} bytes of "
                                     f"other bodies: send again shortly") from e
            self.free -= size
        try:
            yield
        finally:
            async with self._room:
                self.free += size
                self._room.notify_all()


@dataclass
class Verdict:
    accepted: list[dict[str, Any]] = field(default_factory=list)
    texts: list[str | None] = field(default_factory=list)  # each accepted one's log body, if made
    rejected: list[dict[str, Any]] = field(default_factory=list)  # {index, reasons}


def media_type(header: str | None) -> str:
    return (header or "").split(";", 1)[0].strip().lower()


def check_media_type(header: str | None) -> Kind:
    kind = media_type(header)
    if kind in JSON_TYPES or kind.endswith("+json"):
        return "json"
    if kind in NDJSON_TYPES:
        return "ndjson"
    raise BodyError(415, f"unsupported content type {kind or '(none)'}: send application/json "
                         "(one event or an array) or application/x-ndjson (one event per line)")


def parse(body: bytes, kind: Kind, keep_raw: bool = False) -> Verdict:
    """Split and validate a body. Raises BodyError for a body that is unusable as a whole.

    The body is split as files are (:func:`ingest.read.read_bytes`). Accepted events come
    scrubbed of secrets, as the graph will hold them, unless ``keep_raw``."""
    items = read_bytes(body, "body", kind)
    unusable = whole_error(items)
    if unusable is not None:
        raise BodyError(400, f"body: {unusable}")
    if not items:
        raise BodyError(400, "empty array: expected at least one event")
    verdict = Verdict()
    for item in items:
        index = item.index if item.index is not None else 0
        if item.error is not None:
            verdict.rejected.append({"index": index, "reasons": [item.error]})
            continue
        try:
            result = validate(item.obj)
        except RecursionError:
            result = ["event nested too deeply"]
        if isinstance(result, list):
            verdict.rejected.append({"index": index, "reasons": result})
        else:
            verdict.accepted.append(item.obj if keep_raw else result.raw)
            verdict.texts.append(None if keep_raw else result.text)
    return verdict
