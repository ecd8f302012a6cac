"""Combining the rows of a batch so that each node and edge appears once per write.

Rows of one key are merged oldest to newest: newer values win, older ones fill what newer rows
lack; ``props`` maps merge property by property, each keeping the value of its latest ``stamp``
(event time, then digest; a None from a deleted facet removes), and the merged row gets
``firstSeen``/``lastSeen``. Runs pick their state by precedence, then stamp.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from operator import itemgetter
from typing import Any

from ingest.rows import KIND, KINDS, Row, RowKind, Rows
from ingest.transform import STATE_RANK

ANY = {"explicit": False, "observed": True, "coarse": False}
"""Flags that hold when any row of a key says so (missing from a row: the default)."""
_ORDER = itemgetter("evt")  # the event's stamp: its time, then its digest (transform.stamp)
# the edges of a job keep the run of their latest event, at the same time the greatest run id,
# as their queries decide between batches (docs/graph-model.md, "The latest value")
_BY_RUN = frozenset({"column_edges", "dataset_edges"})


def _run_order(row: Row) -> tuple[Any, ...]:
    return row["time"], row.get("runId") or "", row["evt"]


# Left as they are by combine: the loader combines only those it writes (ingest.load.Plan), and most
# columns and column edges of a batch belong to schemas and lineages that are already current.
DEFERRED = ("columns", "column_edges")


def combine(rows: Rows) -> Rows:
    """One merged row per key for every kind of row in the batch but the DEFERRED ones."""
    out = Rows()
    for kind in KINDS:
        found = getattr(rows, kind.name)
        if kind.name in DEFERRED:
            merged = list(found)
        elif kind.name == "runs":
            merged = [_merge_run(group, kind) for group in _groups(found, kind.key)]
        else:
            merged = combine_kind(kind.name, found)
        setattr(out, kind.name, merged)
    return out


def combine_kind(name: str, rows: Iterable[Row]) -> list[Row]:
    """One merged row per key of rows of one kind."""
    kind = KIND[name]
    order = _run_order if name in _BY_RUN else _ORDER
    return [_merge(group, kind) for group in _groups(rows, kind.key, order)]


def _groups(rows: Iterable[Row], key: tuple[str, ...],
            order: Callable[[Row], Any] = _ORDER) -> Iterable[list[Row]]:
    """The rows of each key, oldest first (events of the same time in the order of their
    digests, so the order of arrival never decides)."""
    key_of = itemgetter(*key)
    grouped: dict[Any, list[Row]] = {}
    for row in rows:
        k = key_of(row)
        group = grouped.get(k)
        if group is None:
            grouped[k] = [row]
        else:
            group.append(row)
    for group in grouped.values():
        if len(group) > 1:
            group.sort(key=order)
    return grouped.values()


def _merge(group: list[Row], kind: RowKind) -> Row:
    """Newer non-null values win; the kind's ``merged`` fields merge as maps (props), lists
    (digests), flags (ANY), the latest (received) or sorted sets."""
    merged: Row = {}
    for row in group:
        # most rows hold no None: one update in C instead of a comprehension per row
        merged.update(row if None not in row.values() else
                      {k: v for k, v in row.items() if v is not None})
    first = group[0]
    for name in kind.merged:
        if name in ANY:
            merged[name] = any(row.get(name, ANY[name]) for row in group)
        elif name == "received":  # the latest time the log took one of them
            taken = [row[name] for row in group if row.get(name) is not None]
            if taken:
                merged[name] = max(taken)
            else:
                merged.pop(name, None)
        elif name not in ("props", "digests"):  # a sorted set: the union of what rows state
            stated = [row[name] for row in group if row.get(name) is not None]
            if stated:
                merged[name] = sorted({s for values in stated for s in values})
            else:
                merged.pop(name, None)
        elif name not in first:
            merged.pop(name, None)
        elif name == "props":
            _merge_props(group, merged)
        else:
            merged["digests"] = list(dict.fromkeys(d for row in group for d in row.get("digests") or []))
    if "firstSeen" in merged:  # rows merged before: ingest.version_members' rows of whole versions
        firsts: list[datetime] = [row["firstSeen"] if "firstSeen" in row else row["time"]
                                  for row in group]
        lasts: list[datetime] = [row["lastSeen"] if "lastSeen" in row else row["time"]
                                 for row in group]
        merged["firstSeen"], merged["lastSeen"] = min(firsts), max(lasts)
    else:  # the group is in time order
        merged["firstSeen"] = first["time"]
        merged["lastSeen"] = group[-1]["time"]
    return merged


def _merge_props(group: list[dict[str, Any]], merged: dict[str, Any]) -> None:
    """Each property's value from the row with the latest stamp that sets it (a None removes).

    ``stamp`` is the newest of the rows; ``stamps`` names only the properties whose value came
    from an older row (usually none), to keep the rows small."""
    if len(group) == 1:  # most keys of a batch: every property from the one row
        merged["props"] = dict(group[0].get("props") or {})
        merged["stamp"] = group[0]["evt"]
        return
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


def _merge_run(group: list[Row], kind: RowKind) -> Row:
    merged = _merge(group, kind)
    # the same winner in any order: precedence, then the event's stamp (time, then digest), as
    # ingest/runs decides between batches; OTHER is no transition: the earliest OTHER holds
    top = max(r["rank"] for r in group)
    contenders = [r for r in group if r["rank"] == top]
    winner = (min if top == STATE_RANK["OTHER"] else max)(contenders, key=lambda r: r["evt"])
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
