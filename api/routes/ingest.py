"""Receiving OpenLineage events: ``POST /api/v1/lineage`` (see :mod:`api.receive`)."""

from __future__ import annotations

import asyncio
import logging

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from api import errors
from api.deps import Services, check_scope, services
from api.receive import BodyError, Verdict, check_media_type, parse
from ingest.log import LogError

log = logging.getLogger(__name__)

router = APIRouter(tags=["ingest"])
LOG_APPEND_TIMEOUT_S = 60
_REASONS = {413: "too_large", 415: "unsupported_media_type"}


@router.post("/api/v1/lineage", status_code=201,
             summary="Receive OpenLineage events: one, a JSON array, or NDJSON",
             responses={201: {"description": "at least one event accepted (durably logged)"},
                        400: {"model": errors.ErrorBody,
                              "description": "no event accepted, or the body is not JSON"},
                        413: {"model": errors.ErrorBody, "description": "body over the size limit"},
                        415: {"model": errors.ErrorBody, "description": "not JSON or NDJSON"},
                        503: {"model": errors.ErrorBody,
                              "description": "the event log cannot be written now"}})
async def receive(request: Request) -> JSONResponse:
    # the token check is called here, not declared as a dependency: FastAPI's dependency
    # machinery was a good part of the cost of a one-event request
    await check_scope(request, "write")
    found = services(request)
    counters = found.counters
    try:
        kind = check_media_type(request.headers.get("content-type"))
        verdict = parse(await _body(request, found), kind, found.settings.log_raw_events)
    except BodyError as e:
        counters.add(rejected={_REASONS.get(e.status, "invalid_body"): 1}, status=e.status)
        return errors.answer(e.status, e.message)
    rejected_by = {"invalid_event": len(verdict.rejected)} if verdict.rejected else {}
    if not verdict.accepted:
        counters.add(rejected=rejected_by, status=400)
        return errors.answer(400, "no event accepted: each one was invalid (see rejected)",
                             accepted=0, rejected=verdict.rejected)
    return await _append(found, verdict, rejected_by)


async def _body(request: Request, found: Services) -> bytes:
    limit = found.settings.max_body_bytes
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise BodyError(413, f"body of {declared} bytes is over the limit of {limit} bytes: split it")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyError(413, f"body is over the limit of {limit} bytes: split it")
    return bytes(body)


async def _append(found: Services, verdict: Verdict, rejected_by: dict[str, int]) -> JSONResponse:
    counters = found.counters
    try:
        queued = found.committer().enqueue(verdict.accepted)
    except ValueError as e:  # validation lets no such event through: a last guard
        counters.add(rejected={"invalid_event": len(verdict.accepted)}, status=400)
        return errors.answer(400, f"events cannot be stored: {e}")
    retry = {"Retry-After": str(errors.RETRY_AFTER_S)}
    try:
        # awaited on the event loop (no thread hop); shielded so a timeout leaves the append alone
        seqs = await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(queued)),
                                      LOG_APPEND_TIMEOUT_S)
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
