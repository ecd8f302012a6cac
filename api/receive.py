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
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request

from graph.errors import LineageError
from ingest.read import Kind, read_bytes, whole_error
from ingest.validate import unread_facets, validate

DRAIN_FACTOR = 4
"""A body over the limit is read and dropped up to this many times the limit before the 413."""
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
class Received:
    accepted: list[dict[str, Any]] = field(default_factory=list)
    texts: list[str | None] = field(default_factory=list)  # each accepted one's log body, if made
    rejected: list[dict[str, Any]] = field(default_factory=list)  # {index, reasons}
    unread: list[dict[str, Any]] = field(default_factory=list)  # {index, facets}: not objects
    invalid: int = 0
    """Of ``rejected``, those that were JSON but not valid events (the others were not JSON)."""


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


def parse(body: bytes, kind: Kind, keep_raw: bool = False) -> Received:
    """Split and validate a body. Raises BodyError for a body that is unusable as a whole.

    The body is split as files are (:func:`ingest.read.read_bytes`). Accepted events come
    scrubbed of secrets, as the graph will hold them, unless ``keep_raw``."""
    items = read_bytes(body, "body", kind)
    unusable = whole_error(items)
    if unusable is not None:
        raise BodyError(400, f"body: {unusable}")
    if not items:
        raise BodyError(400, "empty array: expected at least one event")
    verdict = Received()
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
            verdict.invalid += 1
        else:
            verdict.accepted.append(item.obj if keep_raw else result.raw)
            verdict.texts.append(None if keep_raw else result.text)
            if unread := unread_facets(result.raw):
                verdict.unread.append({"index": index, "facets": unread})
    return verdict


def body_size(request: Request, limit: int) -> int:
    """What a body may take in memory: its declared length, or the limit when it declares none
    or is compressed."""
    declared = request.headers.get("content-length") or ""
    compressed = (request.headers.get("content-encoding") or "identity").strip().lower() != "identity"
    return int(declared) if declared.isdigit() and not compressed else limit


async def read_body(request: Request, limit: int) -> bytes:
    """The body, gunzipped when sent with ``Content-Encoding: gzip``, bounded by the limit after
    decompression. Over the limit, the rest of the body is read and dropped (up to DRAIN_FACTOR
    times the limit) before the 413, so that a client still sending it reads the answer instead of
    a broken pipe."""
    encoding = (request.headers.get("content-encoding") or "identity").strip().lower()
    if encoding not in ("identity", "gzip", "x-gzip"):
        raise BodyError(415, f"unsupported content encoding {encoding}: send the body as it is "
                             "or gzip-compressed (Content-Encoding: gzip)")
    gunzip = _Gunzip() if encoding != "identity" else None
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        over = f"body of {declared} bytes is over the limit of {limit} bytes: split it"
        if int(declared) <= limit * DRAIN_FACTOR:
            await _drain(request.stream())
        raise BodyError(413, over)
    body = bytearray()
    stream = request.stream()
    async for chunk in stream:
        try:
            body += gunzip.decompress(chunk, limit + 1 - len(body)) if gunzip else chunk
        except zlib.error as e:
            raise BodyError(400, f"body is not valid gzip: {e}") from e
        if len(body) > limit or (gunzip is not None and gunzip.held_back):
            await _drain(stream, limit * DRAIN_FACTOR)
            raise BodyError(413, f"body is over the limit of {limit} bytes"
                                 + (" once decompressed" if gunzip else "") + ": split it")
    if gunzip is not None and not gunzip.eof:
        raise BodyError(400, "body is not valid gzip: it ends before the compressed stream does")
    return bytes(body)


class _Gunzip:
    """Decompresses every member of a gzip body: ``cat a.gz b.gz`` is one valid gzip file (RFC
    1952), and reading only its first member would acknowledge part of a body silently. Bytes
    after a member that do not start another are an error (zlib's), never ignored."""

    def __init__(self) -> None:
        self._member = zlib.decompressobj(wbits=31)

    def decompress(self, data: bytes, room: int) -> bytes:
        """At most ``room`` bytes of what ``data`` holds, across members."""
        out = self._member.decompress(data, room)
        while self._member.eof and self._member.unused_data and len(out) < room:
            rest = self._member.unused_data
            self._member = zlib.decompressobj(wbits=31)
            out += self._member.decompress(rest, room - len(out))
        return out

    @property
    def held_back(self) -> bool:
        """Input is left that did not fit in ``room``: the body is over the limit."""
        return bool(self._member.unconsumed_tail) or (self._member.eof
                                                        and bool(self._member.unused_data))

    @property
    def eof(self) -> bool:
        return self._member.eof


async def _drain(stream: AsyncIterator[bytes], bound: int | None = None) -> None:
    """Read and drop what is left of a body (at most ``bound`` bytes)."""
    dropped = 0
    async for chunk in stream:
        dropped += len(chunk)
        if bound is not None and dropped > bound:
            return
