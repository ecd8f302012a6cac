"""Receiving OpenLineage events over HTTP: ``POST /api/v1/lineage``.

One event, a JSON array, or NDJSON (``application/x-ndjson``). Each event is validated; the accepted
ones are appended to the durable log before the response, which says how many were accepted and,
for each rejected one, its index and reasons. 201 when at least one event was accepted, 400 when
none was; 413 over the size limit; 415 for another content type; 400 with line and column for a
body that is not JSON. Bad input never gives a 500.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from graph.errors import LineageError
from ingest.bounds import NotJson, loads
from ingest.validate import validate

JSON_TYPES = ("application/json",)
NDJSON_TYPES = ("application/x-ndjson", "application/ndjson", "application/jsonl",
                "application/x-jsonlines", "application/json-seq")


class BodyError(LineageError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class Verdict:
    accepted: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)  # {index, reasons}


def media_type(header: str | None) -> str:
    return (header or "").split(";", 1)[0].strip().lower()


def check_media_type(header: str | None) -> str:
    kind = media_type(header)
    if kind in JSON_TYPES or kind.endswith("+json"):
        return "json"
    if kind in NDJSON_TYPES:
        return "ndjson"
    raise BodyError(415, f"unsupported content type {kind or '(none)'}: send application/json "
                         "(one event or an array) or application/x-ndjson (one event per line)")


def _decode(body: bytes) -> str:
    try:
        return body.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise BodyError(400, f"body is not UTF-8: invalid byte at position {e.start}") from e


def parse(body: bytes, kind: str, keep_raw: bool = False) -> Verdict:
    """Split and validate a body. Raises BodyError for a body that is unusable as a whole.

    Accepted events come scrubbed of secrets, as the graph will hold them, unless ``keep_raw``."""
    text = _decode(body)
    if not text.strip():
        raise BodyError(400, "empty body: expected an OpenLineage event")
    verdict = Verdict()
    if kind == "json":
        try:
            whole = loads(text)
        except json.JSONDecodeError as e:
            raise BodyError(400, f"invalid JSON at line {e.lineno}, column {e.colno} "
                                 f"(position {e.pos}): {e.msg}") from e
        except NotJson as e:
            raise BodyError(400, f"invalid JSON: {e}") from e
        except RecursionError as e:
            raise BodyError(400, "JSON nested too deeply") from e
        if isinstance(whole, list):
            items: list[tuple[int, Any, str | None]] = [(i, x, None) for i, x in enumerate(whole)]
        elif isinstance(whole, dict):
            items = [(0, whole, None)]
        else:
            raise BodyError(400, f"expected a JSON object or array, got {type(whole).__name__}")
    else:
        items = []
        for index, line in enumerate(x for x in text.splitlines() if x.strip()):
            try:
                items.append((index, loads(line), None))
            except json.JSONDecodeError as e:
                items.append((index, None, f"invalid JSON at column {e.colno}: {e.msg}"))
            except NotJson as e:
                items.append((index, None, f"invalid JSON: {e}"))
            except RecursionError:
                items.append((index, None, "JSON nested too deeply"))
    if not items:
        raise BodyError(400, "empty array: expected at least one event")
    for index, obj, error in items:
        if error is not None:
            verdict.rejected.append({"index": index, "reasons": [error]})
            continue
        try:
            result = validate(obj)
        except RecursionError:
            result = ["event nested too deeply"]
        if isinstance(result, list):
            verdict.rejected.append({"index": index, "reasons": result})
        else:
            verdict.accepted.append(obj if keep_raw else result.raw)
    return verdict
