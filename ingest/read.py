"""Splitting OpenLineage payloads into events, for every way in (HTTP bodies, files, Spark).

A payload is one JSON object, a JSON array of them, or NDJSON (one per line). The API knows which
from the content type; a file is read as JSON first and as NDJSON when that fails over several
lines. Reading never raises for bad content: each item comes back either as a parsed object or as
a reason, with where it was found, so one bad line never hides its neighbours. A payload unusable
as a whole (not UTF-8, empty, not JSON, a bare number) is one item with ``index`` None.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ingest.limits import NotJson, loads
from ingest.log.protocol import UNREADABLE, Checked, Entry

Kind = Literal["auto", "json", "ndjson"]


@dataclass(frozen=True)
class RawItem:
    """One item of a payload: ``obj`` when it parsed, else ``error`` says why not.

    ``index`` is the item's position in its payload (0-based), None for an error about the
    payload as a whole. ``checked``: how far the API checked an event read back from the event
    log (the pipeline does only the rest)."""

    where: str
    obj: Any = None
    error: str | None = None
    index: int | None = None
    checked: Checked = Checked.RECEIVED
    digest: str | None = None
    """Its identity digest, as the log knows it (scrubbed events only)."""
    received: float | None = None
    """When the event log took it (unix time), for an item read back from the log."""


def from_log(entry: Entry) -> RawItem:
    """An event log entry as an item, with what the log knows of it (how far it was checked, its
    digest)."""
    unreadable = entry.event.get(UNREADABLE) if entry.checked == Checked.RECEIVED else None
    if isinstance(unreadable, str):  # a message on a Kafka topic that is not an event
        return RawItem(f"log#{entry.seq}", error=unreadable, index=0)
    return RawItem(f"log#{entry.seq}", obj=entry.event, checked=entry.checked, digest=entry.digest,
                   received=entry.received)


def whole_error(items: list[RawItem]) -> str | None:
    """The reason a payload is unusable as a whole, or None when it split into items."""
    if len(items) == 1 and items[0].index is None and items[0].error is not None:
        return items[0].error
    return None


def read_bytes(body: bytes, source: str, kind: Kind = "auto") -> list[RawItem]:
    """Split an undecoded payload (UTF-8, with or without a byte order mark)."""
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        return [RawItem(source, error=f"not UTF-8: invalid byte at position {e.start}")]
    return read_payload(text, source, kind)


def read_payload(text: str, source: str, kind: Kind = "auto") -> list[RawItem]:
    """Split a payload into items; ``source`` names it in messages (a file path or 'request')."""
    stripped = text.lstrip("\ufeff").strip()
    if not stripped:
        return [RawItem(source, error="nothing to read: expected an OpenLineage event, "
                                      "a JSON array of them, or NDJSON (one per line)")]
    if kind == "ndjson":
        return _read_ndjson(stripped, source)
    try:
        whole = loads(stripped)
    except NotJson as e:
        return [RawItem(source, error=f"invalid JSON: {e}")]
    except json.JSONDecodeError as first_error:
        if kind == "auto" and "\n" in stripped:
            return _guess_ndjson(stripped, source)
        return [RawItem(source, error=_json_error(first_error))]
    if isinstance(whole, list):
        return [RawItem(f"{source}[{i}]", obj=item, index=i) for i, item in enumerate(whole)]
    if not isinstance(whole, dict):
        return [RawItem(source, error="expected a JSON object or array, "
                                      f"got {type(whole).__name__}")]
    return [RawItem(source, obj=whole, index=0)]


def _read_ndjson(text: str, source: str) -> list[RawItem]:
    items: list[RawItem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where, index = f"{source}:{number}", len(items)
        try:
            items.append(RawItem(where, obj=loads(line), index=index))
        except json.JSONDecodeError as e:
            items.append(RawItem(where, error=f"invalid JSON at column {e.colno}: {e.msg}",
                                 index=index))
        except NotJson as e:
            items.append(RawItem(where, error=f"invalid JSON: {e}", index=index))
    return items


def _guess_ndjson(text: str, source: str) -> list[RawItem]:
    items = _read_ndjson(text, source)
    # A pretty-printed single object spread over lines is not NDJSON: report it as one error.
    parsed = [item.obj for item in items if item.error is None]
    if not parsed or any(not isinstance(obj, dict) for obj in parsed):
        return [RawItem(source, error=_first_error(text))]
    return items


def _first_error(text: str) -> str:
    try:
        json.loads(text)
    except json.JSONDecodeError as e:
        return _json_error(e)
    return "unreadable payload"


def _json_error(e: json.JSONDecodeError) -> str:
    return f"invalid JSON at line {e.lineno}, column {e.colno} (position {e.pos}): {e.msg}"


def iter_paths(paths: list[Path]) -> Iterator[Path]:
    """Every event file under the given files and folders (*.json, *.ndjson, *.jsonl), sorted."""
    suffixes = {".json", ".ndjson", ".jsonl"}
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in suffixes)
        else:
            yield path


def read_file(path: Path) -> list[RawItem]:
    """Read one file of events; an unreadable file is one error item, not an exception."""
    try:
        body = path.read_bytes()
    except OSError as e:
        return [RawItem(str(path), error=f"cannot read file: {e}")]
    return read_bytes(body, str(path))
