"""Combining the rows of a batch so that each node and edge appears once per write.

Rows of one key are merged oldest to newest: newer values win, older ones fill what newer rows
lack, ``props`` maps merge the same way (a None from a deleted facet removes), and the merged row
gets ``firstSeen``/``lastSeen``. Runs pick their state by precedence, then event time.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from typing import Any

from ingest.transform import Rows

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
    "symlinks": ("namespace", "name", "aliasNamespace", "aliasName", "type"),
    "renames": ("namespace", "name", "oldNamespace", "oldName"),
    "schemas": ("namespace", "dataset", "digest"),
    "lineages": ("jobNamespace", "jobName", "digest"),
}


# Row kinds that carry maps or lists merged across rows (the others merge value by value).
_SPECIAL = {"jobs": ("props", "digests"), "datasets": ("props", "digests"),
            "dataset_edges": ("subtypes",)}
_TIME = itemgetter("time")


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
    """The rows of each key, oldest first (a stable sort: arrival order breaks ties)."""
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
            group.sort(key=_TIME)
    return grouped.values()


def _merge(group: list[dict[str, Any]], special: tuple[str, ...] = ("props", "digests")
           ) -> dict[str, Any]:
    """Newer non-null values win; ``special`` fields merge as maps (props), lists (digests) or sets
    (subtypes)."""
    merged: dict[str, Any] = {}
    for row in group:
        merged.update({k: v for k, v in row.items() if v is not None})
    for name in special:
        if name not in group[0]:
            merged.pop(name, None)
            continue
        if name == "props":
            props: dict[str, Any] = {}
            for row in group:
                props.update(row.get("props") or {})
            merged["props"] = props
        elif name == "digests":
            digests: list[str] = []
            for row in group:
                digests.extend(d for d in row.get("digests") or [] if d not in digests)
            merged["digests"] = digests
        else:
            merged[name] = sorted({s for row in group for s in row.get(name) or []})
    merged["firstSeen"] = group[0]["time"]
    merged["lastSeen"] = group[-1]["time"]
    return merged


def _merge_run(group: list[dict[str, Any]]) -> dict[str, Any]:
    merged = _merge(group)
    winner = max(group, key=lambda r: (r["rank"], r["time"]))
    merged.update(state=winner["state"], rank=winner["rank"], stateTime=winner["time"],
                  stateTimeOriginal=next(iter(winner["stateTimesRaw"].values())))
    times: dict[str, Any] = {}
    for row in group:
        for k, v in row["stateTimes"].items():
            times[k] = max(times.get(k, v), v)
    merged["stateTimes"] = times
    merged.pop("stateTimesRaw", None)
    return merged
