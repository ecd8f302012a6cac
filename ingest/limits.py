"""What an accepted event may hold: values the event log, Neo4j and the worker can always store.

Checked once per event at the door (the HTTP API and file reading, through ``validate``), so that
an event that is acknowledged can always be loaded or dead-lettered, never stop the worker:

* nesting at most :data:`MAX_DEPTH` levels (the event object is level 1): facet redaction, the
  JSON encoders and the driver then never run out of stack;
* integers within Neo4j's 64-bit range (the driver raises ``OverflowError`` on anything wider, for
  every event of the transaction);
* strings and keys that are valid Unicode text (a lone UTF-16 surrogate such as ``"\\ud800"``
  cannot be encoded as UTF-8, so neither the log nor Neo4j can store it);
* finite numbers (``NaN``, ``Infinity`` and ``1e999`` are not JSON; the log would write them as
  ``null``);
* names (:data:`NAME_KEYS`, and every key) of at most :data:`MAX_NAME_BYTES` bytes: Neo4j refuses
  an index key past about 8 KB.

The walk is iterative and stops at the first problems it finds. Paths are only worked out for an
event that fails.
"""

from __future__ import annotations

import json
import math
from typing import Any

from graph.errors import LineageError

MAX_DEPTH = 64
INT_MIN, INT_MAX = -(2**63), 2**63 - 1
# Per-event limits, so that what is acknowledged can be written: Neo4j refuses an index key over
# 8,167 bytes (a column's key is namespace, dataset and name together), and one event's rows are
# written in one transaction of the worker's batch.
MAX_NAME_BYTES = 2000
"""A namespace, a dataset or job name, or a field (column) name, in UTF-8 bytes."""
NAME_KEYS = frozenset({"namespace", "name", "field", "datasetType"})
"""The keys whose string values may become indexed values of the graph, wherever an event holds
them: the job, the datasets, a parent's job, a symlink, a rename's previous identifier, column
lineage's inputs (field-level and dataset-wide), nested schema fields, lineage facets' entries,
the dataset type. Each is bounded like a name, and so is every key of the event (a column
lineage's output field is a key), so that no value Neo4j indexes is acknowledged and then
refused (tests/unit/test_validate.py derives these places from the schema's indexes)."""
_NAME_CHARS = MAX_NAME_BYTES // 4  # a string this short cannot be over the limit in UTF-8
MAX_DATASETS = 10_000
"""Inputs and outputs of one event together."""
MAX_FIELDS = 100_000
"""Schema fields and column-lineage input fields of one event together."""
_MAX_REASONS = 5


class NotJson(LineageError, ValueError):
    """A JSON text uses a constant JSON does not have (NaN, Infinity), a number too long to read,
    or nests too deeply to read."""


def _refuse_constant(name: str) -> Any:
    raise NotJson(f"{name} is not a JSON value")


def loads(text: str | bytes) -> Any:
    """``json.loads`` that refuses ``NaN``, ``Infinity`` and ``-Infinity``, integers Python
    will not read (over 4,300 digits), and text nested deeper than Python's parser recurses, as
    :class:`NotJson` (so every reader, the API's, a file's and the Kafka log's, refuses it the
    same way and none is stopped by it)."""
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError:
        raise
    except RecursionError as e:
        raise NotJson(f"JSON nested too deeply (at most {MAX_DEPTH} levels are stored)") from e
    except ValueError as e:  # int()'s digit limit: no 64-bit integer is that long anyway
        if isinstance(e, NotJson):
            raise
        raise NotJson(f"a number too long to store: {str(e).split(';')[0]}") from e


def problems(event: Any) -> list[str]:
    """Why ``event`` cannot be stored as it is, each reason with the path of its field; [] if fine."""
    if _fine(event):
        return []
    return _explain(event)


def _bad_scalar(value: Any, kind: type) -> str | None:
    if kind is str:
        if value.isascii():
            return None
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            return (f"not valid Unicode text: lone surrogate {value[e.start]!r} at character "
                    f"{e.start} (send UTF-8 text; escape binary data)")
        return None
    if kind is int:
        if INT_MIN <= value <= INT_MAX:
            return None
        return (f"integer {value} is beyond the 64-bit range Neo4j stores "
                f"({INT_MIN}..{INT_MAX}); send it as a string")
    if kind is float and not math.isfinite(value):
        return f"number {value} is not finite"
    return None


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "replace"))


def _too_long(text: str) -> bool:
    return len(text) > _NAME_CHARS and _bytes(text) > MAX_NAME_BYTES


def _fine(event: Any) -> bool:
    """The fast walk: no paths, stops at the first problem."""
    stack = [(event, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        value, depth = pop()
        if depth > MAX_DEPTH:
            return False
        children = value.items() if type(value) is dict else enumerate(value)
        for key, child in children:
            if type(key) is str and ((not key.isascii() and _bad_scalar(key, str))
                                     or (len(key) > _NAME_CHARS and _too_long(key))):
                return False
            kind = type(child)
            if kind is dict or kind is list:
                push((child, depth + 1))
            elif kind is str:
                if not child.isascii() and _bad_scalar(child, str):
                    return False
                if len(child) > _NAME_CHARS and key in NAME_KEYS and _too_long(child):
                    return False
            elif (kind is int or kind is float) and _bad_scalar(child, kind):
                return False
    return True


def _explain(event: Any) -> list[str]:
    """The slow walk, for an event that failed the fast one: each problem with its path."""
    reasons: list[str] = []
    stack: list[tuple[Any, int, str]] = [(event, 1, "")]
    while stack and len(reasons) < _MAX_REASONS:
        value, depth, path = stack.pop()
        if depth > MAX_DEPTH:
            reasons.append(f"{path or '(event)'}: nested deeper than {MAX_DEPTH} levels, the "
                           "limit for an event")
            continue
        children = value.items() if type(value) is dict else enumerate(value)
        for key, child in children:
            where = f"{path}[{key}]" if type(key) is int else f"{path}.{key}" if path else str(key)
            shown = where.encode('utf-8', 'backslashreplace').decode()[:300]
            if type(key) is str and (bad := _bad_scalar(key, str)):
                reasons.append(f"{shown}: key {bad}")
                continue
            if type(key) is str and _too_long(key):
                reasons.append(f"{shown}: a key of {_bytes(key)} bytes, over the limit of "
                               f"{MAX_NAME_BYTES} bytes for a name")
                continue
            kind = type(child)
            if kind is dict or kind is list:
                stack.append((child, depth + 1, where))
            elif bad := _bad_scalar(child, kind):
                reasons.append(f"{shown}: {bad}")
            elif kind is str and key in NAME_KEYS and _too_long(child):
                reasons.append(f"{shown}: {_bytes(child)} bytes long, over the limit of "
                               f"{MAX_NAME_BYTES} bytes for a name (the graph indexes it)")
    return reasons[:_MAX_REASONS] or ["event cannot be stored"]
