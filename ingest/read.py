"""Reading OpenLineage payloads: one JSON object, a JSON array of them, or NDJSON (one per line).

Reading never raises for bad content: each item comes back either as a parsed object or as a
reason, with where it was found, so one bad line never hides its neighbours.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingest.bounds import NotJson, loads


@dataclass(frozen=True)
class RawItem:
    """One item of a payload: ``obj`` when it parsed, else ``error`` says why not."""

    where: str
    obj: Any = None
    error: str | None = None


def read_payload(text: str, source: str) -> list[RawItem]:
    """Split a payload into items; ``source`` names it in messages (a file path or 'request')."""
    stripped = text.lstrip("\ufeff").strip()
    if not stripped:
        return [RawItem(source, error="empty payload")]
    try:
        whole = loads(stripped)
    except NotJson as e:
        return [RawItem(source, error=f"invalid JSON: {e}")]
    except RecursionError:
        return [RawItem(source, error="JSON nested too deeply")]
    except json.JSONDecodeError as first_error:
        if "\n" in stripped:
            return _read_ndjson(stripped, source)
        return [RawItem(source, error=_json_error(first_error))]
    if isinstance(whole, list):
        return [RawItem(f"{source}[{i}]", obj=item) for i, item in enumerate(whole)]
    return [RawItem(source, obj=whole)]


def _read_ndjson(text: str, source: str) -> list[RawItem]:
    items: list[RawItem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            items.append(RawItem(where, obj=loads(line)))
        except json.JSONDecodeError as e:
            items.append(RawItem(where, error=_json_error(e)))
        except NotJson as e:
            items.append(RawItem(where, error=f"invalid JSON: {e}"))
        except RecursionError:
            items.append(RawItem(where, error="JSON nested too deeply"))
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
    return f"invalid JSON at line {e.lineno} column {e.colno} (char {e.pos}): {e.msg}"


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
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return [RawItem(str(path), error=f"cannot read file: {e}")]
    return read_payload(text, str(path))
