"""Load: the only I/O of ingest. One write transaction per batch, one UNWIND query per row kind."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from graph.db import Graph, Step
from ingest.transform import Rows

# Nodes before the edges that MATCH them; fine dataset edges before the coarse refresh.
_ORDER = (
    ("datasets", "ingest/datasets"),
    ("jobs", "ingest/jobs"),
    ("runs", "ingest/runs"),
    ("parents", "ingest/parents"),
    ("columns", "ingest/columns"),
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
    """The row with its main times as ISO strings; the queries turn them back with datetime().

    The driver converts each Python datetime through neo4j.time, which cost about 70% of the
    ingest time on realistic events; strings pack cheaply and the server parses them fast.
    """
    return {**row, **{k: row[k].isoformat() for k in _WIRE_TIMES
                      if isinstance(row.get(k), datetime)}}


def steps(rows: Rows) -> list[Step]:
    """The named queries and parameters that write ``rows`` (already combined per key)."""
    plan: list[Step] = [(name, {"rows": [_wire(r) for r in getattr(rows, kind)]})
                        for kind, name in _ORDER if getattr(rows, kind)]
    jobs = {(r["jobNamespace"], r["jobName"]) for r in rows.job_writes}
    if jobs:
        plan.append(("ingest/coarse_edges",
                     {"jobs": [{"namespace": ns, "name": name} for ns, name in sorted(jobs)]}))
    return plan


def load(graph: Graph, rows: Rows) -> int:
    """Write one combined batch in a single transaction; returns events already recorded."""
    plan = steps(rows)
    if not plan:
        return 0
    results = graph.write(plan)
    duplicates = 0
    for (name, _), result in zip(plan, results, strict=True):
        if name in _COUNTS_DUPLICATES and result:
            duplicates += int(result[0].get("duplicates") or 0)
    return duplicates

