"""Combining the rows of a batch so that each node and edge appears once per write.

Rows of one key are merged oldest to newest: newer values win, older ones fill what newer rows
lack, ``props`` maps merge the same way (a None from a deleted facet removes), and the merged row
gets ``firstSeen``/``lastSeen``. Runs pick their state by precedence, then event time.
"""

from __future__ import annotations

from collections.abc import Iterable
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
}


def combine(rows: Rows) -> Rows:
    """One merged row per key for every kind of row in the batch."""
    out = Rows()
    for kind, key in _KEYS.items():
        setattr(out, kind, [_merge(group) for group in _groups(getattr(rows, kind), key)])
    out.runs = [_merge_run(group) for group in _groups(rows.runs, ("runId",))]
    return out


def _groups(rows: Iterable[dict[str, Any]], key: tuple[str, ...]) -> list[list[dict[str, Any]]]:
    grouped: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(tuple(row[k] for k in key), []).append(row)
    return [sorted(group, key=lambda r: r["time"]) for group in grouped.values()]


def _merge(group: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    props: dict[str, Any] = {}
    digests: list[str] = []
    subtypes: set[str] = set()
    for row in group:
        for k, v in row.items():
            if v is not None and k not in ("props", "digests", "subtypes"):
                merged[k] = v
        props.update(row.get("props") or {})
        digests.extend(d for d in row.get("digests") or [] if d not in digests)
        subtypes.update(row.get("subtypes") or [])
    if "props" in group[0]:
        merged["props"] = props
    if "digests" in group[0]:
        merged["digests"] = digests
    if "subtypes" in group[0]:
        merged["subtypes"] = sorted(subtypes)
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
