"""Load: the only I/O of ingest. One write transaction per batch, one UNWIND query per row kind."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from graph.db import Graph, Step
from graph.errors import QueryError
from ingest.transform import Rows

# Nodes before the edges that MATCH them; fine dataset edges before the coarse refresh.
_ORDER = (
    ("datasets", "ingest/datasets"),
    ("jobs", "ingest/jobs"),
    ("runs", "ingest/runs"),
    ("parents", "ingest/parents"),
    ("columns", "ingest/columns"),
    ("column_keys", "ingest/column_keys"),
    ("reads", "ingest/reads"),
    ("writes", "ingest/writes"),
    ("job_reads", "ingest/job_reads"),
    ("job_writes", "ingest/job_writes"),
    ("column_edges", "ingest/column_edges"),
    ("dataset_edges", "ingest/dataset_edges"),
    ("symlinks", "ingest/symlinks"),
    ("renames", "ingest/renames"),
)
_COUNTS_DUPLICATES = ("ingest/datasets", "ingest/jobs", "ingest/runs")


_WIRE_TIMES = ("firstSeen", "lastSeen", "stateTime")


def _wire(row: dict[str, Any]) -> dict[str, Any]:
    """The row as the queries take it: times as ISO strings, without the combine-only ``time``.

    The driver converts each Python datetime through neo4j.time, which cost most of the worker's
    own CPU on realistic events; strings pack cheaply and the queries turn them back with
    datetime(). ``time`` only orders rows inside ``combine`` (firstSeen/lastSeen carry it on).
    """
    out = row.copy()
    out.pop("time", None)
    for k in _WIRE_TIMES:
        v = out.get(k)
        if isinstance(v, datetime):
            out[k] = v.isoformat()
    state_times: dict[str, Any] | None = row.get("stateTimes")
    if state_times is not None:
        out["stateTimes"] = {k: v.isoformat() if isinstance(v, datetime) else v
                             for k, v in state_times.items()}
    return out


def steps(rows: Rows) -> list[Step]:
    """The named queries and parameters that write ``rows`` (already combined per key)."""
    plan: list[Step] = []
    for kind, name in _ORDER:
        params = (_edge_columns(rows) if kind == "column_keys"
                  else [_wire(r) for r in getattr(rows, kind)])
        if params:
            plan.append((name, {"rows": params}))
    jobs = {(r["jobNamespace"], r["jobName"]) for r in rows.job_writes}
    if jobs:
        plan.append(("ingest/coarse_edges",
                     {"jobs": [{"namespace": ns, "name": name} for ns, name in sorted(jobs)]}))
    return plan


def _edge_columns(rows: Rows) -> list[dict[str, str]]:
    """Columns named by column lineage but not by a schema row of this batch."""
    known = {(r["namespace"], r["dataset"], r["name"]) for r in rows.columns}
    ends = {end for e in rows.column_edges
            for end in ((e["outNamespace"], e["outDataset"], e["outColumn"]),
                        (e["inNamespace"], e["inDataset"], e["inColumn"]))} - known
    return [{"namespace": ns, "dataset": ds, "name": name} for ns, ds, name in sorted(ends)]


def load(graph: Graph, rows: Rows) -> int:
    """Write one combined batch in a single transaction; returns events already recorded."""
    plan = steps(rows)
    if not plan:
        return 0
    results = graph.write(plan)
    duplicates = 0
    for (name, params), result in zip(plan, results, strict=True):
        if name == "ingest/column_edges" and result[0]["written"] != len(params["rows"]):
            raise QueryError(name, f"{len(params['rows']) - result[0]['written']} column edges found "
                                   "no column to attach to")
        if name in _COUNTS_DUPLICATES and result:
            duplicates += int(result[0].get("duplicates") or 0)
    return duplicates

