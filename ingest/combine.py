"""Combining the rows of a batch so that each node and edge appears once per write.

Rows of one key are merged oldest to newest: newer values win, older ones fill what newer rows
lack; ``props`` maps merge property by property, each keeping the value of its latest ``stamp``
(event time, then digest; a None from a deleted facet removes), and the merged row gets
``firstSeen``/``lastSeen``. Runs pick their state by precedence, then stamp.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from typing import Any

from ingest.rows import Rows

_KEYS: dict[str, tuple[str, ...]] = {
    "jobs": ("namespace", "name"),
    "datasets": ("namespace", "name"),
    "parents": ("runId", "parentRunId"),
    "columns": ("namespace", "dataset", "name", "written"),
    "reads": ("runId", "namespace", "name"),
    "writes": ("runId", "namespace", "name"),
    "job_reads": ("jobNamespace", "jobName", "namespace", "name"),
    "job_writes": ("jobNamespace", "jobName", "namespace", "name"),
    "column_edges": ("outNamespace", "outDataset", "outColumn", "inNamespace", "inDataset",
                     "inColumn", "jobNamespace", "jobName", "type", "subtype"),
    "dataset_edges": ("outNamespace", "outDataset", "inNamespace", "inName", "jobNamespace",
                      "jobName"),
    "flows": ("outKind", "outNamespace", "outName", "inKind", "inNamespace", "inName",
              "jobNamespace", "jobName"),
    "produced": ("outNamespace", "outDataset", "outColumn", "byNamespace", "byName", "jobNamespace",
                 "jobName", "type", "subtype"),
    "declarations": ("kind", "namespace", "name"),
    "symlinks": ("namespace", "name", "aliasNamespace", "aliasName", "type"),
    "renames": ("namespace", "name", "oldNamespace", "oldName"),
    "schemas": ("namespace", "dataset", "digest"),
    "lineages": ("jobNamespace", "jobName", "digest"),
}


# Row kinds that carry maps or lists merged across rows (the others merge value by value).
_SPECIAL = {"jobs": ("props", "digests"), "datasets": ("props", "digests"),
            "dataset_edges": ("subtypes", "coarse", "explicit", "observed"),
            "flows": ("subtypes", "observed"), "declarations": ("targets",),
            "column_edges": ("observed", "explicit"), "produced": ("observed",)}
# Flags that hold when any row says so (missing: the default), or only when all rows do.
_ANY = {"explicit": False, "observed": True, "coarse": False}
_ALL: dict[str, bool] = {}
_ORDER = itemgetter("evt")  # the event's stamp: its time, then its digest (transform.stamp)


# Left as they are by combine: the loader combines only those it writes (ingest.plan.Plan), and most
# columns and column edges of a batch belong to schemas and lineages that are already current.
DEFERRED = ("columns", "column_edges")


def combine(rows: Rows) -> Rows:
    """One merged row per key for every kind of row in the batch but the DEFERRED ones."""
    out = Rows()
    for kind in _KEYS:
        setattr(out, kind, (list(getattr(rows, kind)) if kind in DEFERRED
                            else combine_kind(kind, getattr(rows, kind))))
    out.runs = [_merge_run(group) for group in _groups(rows.runs, ("runId",))]
    return out


def combine_kind(kind: str, rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One merged row per key of rows of one kind."""
    special = _SPECIAL.get(kind, ())
    return [_merge(group, special) for group in _groups(rows, _KEYS[kind])]


def _groups(rows: Iterable[dict[str, Any]], key: tuple[str, ...]) -> Iterable[list[dict[str, Any]]]:
    """The rows of each key, oldest first (events of the same time in the order of their
    digests, so the order of arrival never decides)."""
    key_of = itemgetter(*key)
    grouped: dict[Any, list[dict[str, Any]]] = {}
    for row in rows:
        k = key_of(row)
        group = grouped.get(k)
        if group is None:
            grouped[k] = [row]
        else:
            group.append(row)
    for group in grouped.values():
        if len(group) > 1:
            group.sort(key=_ORDER)
    return grouped.values()


def _merge(group: list[dict[str, Any]], special: tuple[str, ...] = ("props", "digests")
           ) -> dict[str, Any]:
    """Newer non-null values win; ``special`` fields merge as maps (props), lists (digests) or sets
    (subtypes)."""
    if len(group) == 1:
        return _merge_one(group[0], special)
    return _merge_many(group, special)


def _merge_many(group: list[dict[str, Any]], special: tuple[str, ...]) -> dict[str, Any]:
    """``_merge`` of any group; tests/unit/test_transform.py holds ``_merge_one`` equal to it."""
    merged: dict[str, Any] = {}
    for row in group:
        # most rows hold no None: one update in C instead of a comprehension per row
        merged.update(row if None not in row.values() else
                      {k: v for k, v in row.items() if v is not None})
    for name in special:
        if name in _ANY:
            merged[name] = any(row.get(name, _ANY[name]) for row in group)
            continue
        if name in _ALL:
            merged[name] = all(row.get(name, _ALL[name]) for row in group)
            continue
        if name not in group[0]:
            merged.pop(name, None)
            continue
        if name == "props":
            _merge_props(group, merged)
        elif name == "digests":
            digests: list[str] = []
            for row in group:
                digests.extend(d for d in row.get("digests") or [] if d not in digests)
            merged["digests"] = digests
        else:
            merged[name] = sorted({s for row in group for s in row.get(name) or []})
    if "firstSeen" in merged:  # rows merged once: ingest.members' rows of whole versions
        merged["firstSeen"] = min(row.get("firstSeen", row["time"]) for row in group)
        merged["lastSeen"] = max(row.get("lastSeen", row["time"]) for row in group)
    else:
        merged["firstSeen"] = group[0]["time"]
        merged["lastSeen"] = group[-1]["time"]
    return merged


def _merge_one(row: dict[str, Any], special: tuple[str, ...]) -> dict[str, Any]:
    """``_merge`` of a group of one row, the same result by a shorter way (most groups of a batch
    have one row: combining was a fifth of the worker's preparation)."""
    merged = dict(row) if None not in row.values() else {k: v for k, v in row.items() if v is not None}
    for name in special:
        if name in _ANY:
            merged[name] = bool(row.get(name, _ANY[name]))
        elif name in _ALL:
            merged[name] = bool(row.get(name, _ALL[name]))
        elif name not in row:
            merged.pop(name, None)
        elif name == "props":
            merged["props"] = dict(row.get("props") or {})
            merged["stamp"] = row["evt"]
        elif name == "digests":
            merged["digests"] = list(dict.fromkeys(row.get("digests") or []))
        else:
            merged[name] = sorted(set(row.get(name) or []))
    merged["firstSeen"] = row.get("firstSeen", row["time"])
    merged["lastSeen"] = row.get("lastSeen", row["time"])
    return merged


def _merge_props(group: list[dict[str, Any]], merged: dict[str, Any]) -> None:
    """Each property's value from the row with the latest stamp that sets it (a None removes).

    ``stamp`` is the newest of the rows; ``stamps`` names only the properties whose value came
    from an older row (usually none), to keep the rows small."""
    props: dict[str, Any] = {}
    stamps: dict[str, str] = {}
    for row in group:
        row_stamp = row["evt"]
        for k, v in (row.get("props") or {}).items():
            if k not in stamps or row_stamp > stamps[k]:
                props[k], stamps[k] = v, row_stamp
    newest = group[-1]["evt"]
    merged["props"] = props
    merged["stamp"] = newest
    older = {k: s for k, s in stamps.items() if s != newest}
    if older:
        merged["stamps"] = older


def _merge_run(group: list[dict[str, Any]]) -> dict[str, Any]:
    merged = _merge(group)
    # the same winner in any order: precedence, then the event's stamp (time, then digest), as
    # ingest/runs decides between batches
    winner = max(group, key=lambda r: (r["rank"], r["evt"]))
    merged.update(state=winner["state"], rank=winner["rank"], stateTime=winner["time"],
                  stateStamp=winner["evt"],
                  stateTimeOriginal=next(iter(winner["stateTimesRaw"].values())))
    times: dict[str, Any] = {}
    for row in group:
        for k, v in row["stateTimes"].items():
            times[k] = max(times.get(k, v), v)
    merged["stateTimes"] = times
    merged.pop("stateTimesRaw", None)
    return merged
