"""The members of a batch's versions (columns of schemas, column edges of lineages) as the loader
writes them, and the rows as the queries take them (ingest.load)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from ingest.combine import combine_kind

_WIRE_TIMES = ("firstSeen", "lastSeen", "stateTime")


def wire(row: dict[str, Any], keep_stamp: bool = False) -> dict[str, Any]:
    """The row as the queries take it: times as ISO strings, without the combine-only ``time``.

    The driver converts each Python datetime through neo4j.time, which cost most of the worker's
    own CPU on realistic events; strings pack cheaply and the queries turn them back with
    datetime(). ``time`` only orders rows inside ``combine`` (firstSeen/lastSeen carry it on), and
    so does the event stamp ``evt``, except for columns (their type and description follow it).
    """
    out = row.copy()
    out.pop("time", None)
    if not keep_stamp:
        out.pop("evt", None)
    for k in _WIRE_TIMES:
        v = out.get(k)
        if isinstance(v, datetime):
            out[k] = _iso(v)
    state_times: dict[str, Any] | None = row.get("stateTimes")
    if state_times is not None:
        out["stateTimes"] = {k: _iso(v) if isinstance(v, datetime) else v
                             for k, v in state_times.items()}
    return out


@lru_cache(maxsize=65_536)
def _iso(t: datetime) -> str:
    """An event time as ISO text (the rows of one event share its time: each is formatted once)."""
    return t.isoformat()


class Members:
    """The columns (or column edges) of a batch by the version they belong to: combined and made
    ready for the queries ahead for versions likely to be written, left raw for those likely to
    be touched."""

    def __init__(self, kind: str, rows: list[dict[str, Any]], key: Callable[[dict[str, Any]], Any],
                 versions: dict[Any, dict[str, Any]], likely_touched: set[Any],
                 always: Callable[[dict[str, Any]], bool] = lambda r: False,
                 wholes: list[dict[str, Any]] | None = None,
                 members: Callable[[dict[str, Any]], list[dict[str, Any]]] = lambda w: []) -> None:
        """``wholes``: version rows that hold their members compact; ``members`` makes their rows
        (only for the versions written)."""
        self.kind = kind
        self.key = key
        self.members = members
        ahead, self.later, self.wholes = [], [], []
        for r in rows:
            k = key(r)
            # rows outside any version (a reader's schema, a DatasetEvent's lineage) are written
            if always(r) or k not in versions or k not in likely_touched:
                ahead.append(r)
            else:
                self.later.append(r)
        for w in wholes or []:
            if key(w) in likely_touched:
                self.wholes.append(w)
            else:
                ahead += members(w)
        self.ahead = [wire(r, kind == "columns") for r in combine_kind(kind, ahead)]
        self.versions = versions
        self.always = always

    def written(self, missed: set[Any]) -> list[dict[str, Any]]:
        """The combined rows to write (as the queries take them), given the versions that were
        not touched."""
        rows = [r for r in self.ahead
                if self.always(r) or self.key(r) not in self.versions or self.key(r) in missed]
        later = [r for r in self.later if self.key(r) in missed]
        for w in self.wholes:
            if self.key(w) in missed:
                later += self.members(w)
        return rows + [wire(r, self.kind == "columns") for r in combine_kind(self.kind, later)]


def edge_rows(lineage: dict[str, Any]) -> list[dict[str, Any]]:
    """The column edge rows of a job's lineage version that transform kept compact: each as the
    rows of the version's events in this batch, merged, would be (their run, times and stamp);
    of one event's lineage row (not merged), as that event's rows."""
    common = {"jobNamespace": lineage["jobNamespace"], "jobName": lineage["jobName"],
              "runId": lineage.get("runId"), "lineages": [lineage["digest"]], **_seen(lineage)}
    return [{**common, "outNamespace": out_ns, "outDataset": out_ds, "outColumn": out_col,
             "inNamespace": in_ns, "inDataset": in_ds, "inColumn": in_col, "type": kind,
             "subtype": subtype, "masking": masking, "description": description}
            for (out_ns, out_ds, out_col, in_ns, in_ds, in_col, kind, subtype, masking,
                 description) in lineage["compact"]]


def column_rows(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The column rows of a written schema version (transform keeps its columns whole, as
    ``flat``): as :func:`edge_rows` does for a lineage."""
    common = {"namespace": schema["namespace"], "dataset": schema["dataset"], "written": True,
              **_seen(schema)}
    since = f"{common['firstSeen'].astimezone(UTC):%Y-%m-%dT%H:%M:%S.%fZ}"
    return [{**common, "name": name, "type": kind, "description": description,
             "typed": [f"{since}\u001f{kind}"] if kind else None}
            for name, kind, description in schema["flat"]]


def _seen(version: dict[str, Any]) -> dict[str, Any]:
    """The times and stamp a version's member rows take: those of the version's events in the
    batch (merged: first and last seen; one event's row: its time)."""
    first, last = version.get("firstSeen", version["time"]), version.get("lastSeen", version["time"])
    return {"time": last, "firstSeen": first, "lastSeen": last, "evt": version["evt"]}
