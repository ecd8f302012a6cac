"""Writing JSON on the hot paths (the event log's bodies, event digests): orjson, several times
faster than json (docs/benchmarks.md, "Measurements behind the code").

Whatever orjson refuses (integers beyond 64 bits, nesting deeper than 254, lone surrogates) goes
through :mod:`json`. Reading what anyone may send stays with :mod:`json`: orjson reads integers
beyond 64 bits as floats, and crashed (segmentation fault, orjson 3.8) on a document nested
100,000 deep. Only the event log's bodies of validated events are read with orjson
(:func:`read_checked`).
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def canonical(value: Any) -> bytes:
    """UTF-8 of the compact JSON with sorted keys (the same bytes as ``json.dumps(sort_keys=True,
    separators=(",", ":"), ensure_ascii=False)`` for every event of ../shared/corpus)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return json.dumps(value, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False).encode("utf-8")


def read_checked(body: str) -> Any:
    """An event log body that the API validated and wrote as canonical JSON: such an event is
    within :mod:`ingest.limits` (nesting at most 64 deep, integers within 64 bits, finite
    numbers, valid text), where orjson reads exactly what :mod:`json` reads, faster."""
    return orjson.loads(body)
