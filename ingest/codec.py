"""Writing JSON on the hot paths (the event log's bodies, event digests): orjson, 3-5x faster than json.

Whatever orjson refuses (integers beyond 64 bits, nesting deeper than 254, lone surrogates) goes
through :mod:`json`. Reading stays with :mod:`json`: orjson was no faster at reading our events,
reads integers beyond 64 bits as floats, and crashed (segmentation fault, orjson 3.8) on a
document nested 100,000 deep.
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
