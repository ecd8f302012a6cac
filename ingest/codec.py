"""JSON on the hot paths: orjson where it can, the standard library where orjson refuses.

orjson is several times faster at writing JSON and somewhat faster at reading it. It is stricter
than :mod:`json` (integers beyond 64 bits, lone surrogates, NaN): whatever it refuses goes through
:mod:`json`, so what is accepted, and every error message, stays exactly what it was.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def loads(data: str | bytes) -> Any:
    """Parse JSON this project wrote (the event log); raises :class:`json.JSONDecodeError`.

    Never for bodies from the network: orjson has no nesting limit, and a JSON document nested
    100,000 deep crashed the process (segmentation fault, orjson 3.8). The API parses with
    :mod:`json`, which refuses deep nesting with a RecursionError, so the log holds nothing deeper.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def dumps(value: Any) -> str:
    """Compact JSON text, non-ASCII kept as is."""
    try:
        return orjson.dumps(value).decode("utf-8")
    except (orjson.JSONEncodeError, UnicodeDecodeError):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def canonical(value: Any) -> bytes:
    """UTF-8 of the compact JSON with sorted keys (the same bytes as ``json.dumps(sort_keys=True,
    separators=(",", ":"), ensure_ascii=False)`` for every event of ../shared/corpus)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return json.dumps(value, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False).encode("utf-8")
