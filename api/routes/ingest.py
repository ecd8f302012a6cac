"""Receiving OpenLineage events: ``POST /api/v1/lineage`` (see :mod:`api.receive`).

Producers send one event per request, so this route is served by :data:`served`, a plain
Starlette route first in the app's table: FastAPI's work around an endpoint (solving its
parameters, its exit stacks) was a measured part of a one-event request's cost
(docs/benchmarks.md, "One event over HTTP"). The FastAPI route on the same function describes it
in the OpenAPI document; the token check is called in the function, not declared."""

from __future__ import annotations

import asyncio
import logging
import zlib
from collections.abc import AsyncIterator

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.routing import Route

from api import errors
from api.deps import Services, check_scope, services
from api.receive import BodyError, Verdict, check_media_type, parse
from ingest.log import LogError

log = logging.getLogger(__name__)

router = APIRouter(tags=["ingest"])
LOG_APPEND_TIMEOUT_S = 60
DRAIN_FACTOR = 4
_REASONS = {413: "too_large", 415: "unsupported_media_type"}


@router.post("/api/v1/lineage", status_code=201,
             summary="Receive OpenLineage events: one, a JSON array, or NDJSON",
             responses={201: {"description": "at least one event accepted (durably logged)"},
                        400: {"model": errors.ErrorBody,
                              "description": "no event accepted, or the body is not JSON"},
                        413: {"model": errors.ErrorBody,
                              "description": "body over the size limit (after gunzip)"},
                        415: {"model": errors.ErrorBody,
                              "description": "not JSON or NDJSON, or an encoding other than gzip"},
                        503: {"model": errors.ErrorBody,
                              "description": "the event log cannot be written now"}})
async def receive(request: Request) -> JSONResponse:
    await check_scope(request, "write")
    found = services(request)
    counters = found.counters
    try:
        kind = check_media_type(request.headers.get("content-type"))
        async with found.bodies.hold(_size(request, found.settings.max_body_bytes)):
            verdict = parse(await _body(request, found), kind, found.settings.log_raw_events)
            rejected_by = {"invalid_event": len(verdict.rejected)} if verdict.rejected else {}
            if not verdict.accepted:
                counters.add(rejected=rejected_by, status=400)
                return errors.answer(400, "no event accepted: each one was invalid (see rejected)",
                                     accepted=0, rejected=verdict.rejected)
            return await _append(found, verdict, rejected_by)
    except BodyError as e:
        counters.add(rejected={_REASONS.get(e.status, "invalid_body"): 1}, status=e.status)
        return errors.answer(e.status, e.message, headers={"Retry-After": str(errors.RETRY_AFTER_S)}
                             if e.status == 503 else None)


served = Route("/api/v1/lineage", receive, methods=["POST"], include_in_schema=False)


def _size(request: Request, limit: int) -> int:
    """What a body may take in memory: its declared length, or the limit when it declares none
    or is compressed."""
    declared = request.headers.get("content-length") or ""
    compressed = (request.headers.get("content-encoding") or "identity").strip().lower() != "identity"
    return int(declared) if declared.isdigit() and not compressed else limit


async def _body(request: Request, found: Services) -> bytes:
    """The body, gunzipped when sent with ``Content-Encoding: gzip``, bounded by the limit after
    decompression. Over the limit, the rest of the body is read and dropped (up to DRAIN_FACTOR
    times the limit) before the 413, so that a client still sending it reads the answer instead of
    a broken pipe."""
    limit = found.settings.max_body_bytes
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


async def _append(found: Services, verdict: Verdict, rejected_by: dict[str, int]) -> JSONResponse:
    counters = found.counters
    try:
        queued = found.committer().submit(verdict.accepted, verdict.texts)
    except ValueError as e:  # validation lets no such event through: a last guard
        counters.add(rejected={"invalid_event": len(verdict.accepted)}, status=400)
        return errors.answer(400, f"events cannot be stored: {e}")
    retry = {"Retry-After": str(errors.RETRY_AFTER_S)}
    try:
        # shielded: a timeout leaves the append alone (it may still become durable)
        seqs = await asyncio.wait_for(asyncio.shield(queued), LOG_APPEND_TIMEOUT_S)
    except LogError as e:
        log.error("event log append failed: %s", e)
        counters.add(status=503)
        return errors.answer(503, f"the event log cannot be written; nothing was accepted ({e})",
                             headers=retry)
    except TimeoutError:
        log.error("event log append not confirmed within %s s", LOG_APPEND_TIMEOUT_S)
        counters.add(status=503)
        return errors.answer(503, f"the event log did not confirm the write within "
                                  f"{LOG_APPEND_TIMEOUT_S} s; send the events again (an event "
                                  "sent twice is recognised and loaded once)", headers=retry)
    counters.add(accepted=len(seqs), rejected=rejected_by, status=201)
    return JSONResponse({"accepted": len(seqs), "first_seq": seqs[0], "last_seq": seqs[-1],
                         "rejected": verdict.rejected}, status_code=201)
