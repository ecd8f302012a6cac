"""Load: the only I/O of ingest. One write transaction per batch, one UNWIND query per row kind."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from operator import itemgetter
from typing import Any

from graph.db import Graph, Step
from graph.errors import QueryError
from ingest.batch import combine_kind
from ingest.transform import Rows, edge_key

# Nodes and the edges of runs and jobs first, then whether the batch's written schemas and column
# lineage are the ones already current (the touches); then columns and column edges for the others.
_FIRST = (
    ("datasets", "ingest/datasets"),
    ("jobs", "ingest/jobs"),
    ("runs", "ingest/runs"),
    ("parents", "ingest/parents"),
    ("reads", "ingest/reads"),
    ("writes", "ingest/writes"),
    ("job_reads", "ingest/job_reads"),
    ("job_writes", "ingest/job_writes"),
)
# Columns before the column edges that MATCH them; fine dataset edges before the coarse refresh.
_THEN = (
    ("columns", "ingest/columns"),
    ("column_keys", "ingest/column_keys"),
    ("column_edges", "ingest/column_edges"),
    ("dataset_edges", "ingest/dataset_edges"),
    ("symlinks", "ingest/symlinks"),
    ("renames", "ingest/renames"),
)
_SCHEMA_KEY = itemgetter("namespace", "dataset")
_LINEAGE_KEY = itemgetter("jobNamespace", "jobName")
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


class Plan:
    """The writes of one combined batch, in two rounds of one transaction.

    A job that runs every day mostly reports the schema and the column lineage it reported the day
    before. Rewriting each column and column edge for that only to move its last-seen time was
    about half of Neo4j's work per event, so whole schemas and whole column lineages are compared
    by digest instead: the first round writes nodes and run/job edges and "touches" the schemas
    (on the Dataset) and lineages (on the Job) that are already current; the second round writes
    column by column only what the touches missed: new or changed ones, or events older than the
    current version. See docs/graph-model.md for how a column's or edge's times are read then.
    """

    def __init__(self, rows: Rows) -> None:
        """``rows`` as ``combine`` left them (columns and column edges not yet combined)."""
        self.rows = rows
        self.schemas = _by_key(rows.schemas, _SCHEMA_KEY)
        self.lineages = _by_key(rows.lineages, _LINEAGE_KEY)
        self.first: list[Step] = [(name, {"rows": params}) for kind, name in _FIRST
                                  if (params := [_wire(r) for r in getattr(rows, kind)])]
        self.touches = 0
        for name, groups in (("ingest/schema_touch", self.schemas),
                             ("ingest/lineage_touch", self.lineages)):
            # a key with two versions in one batch is written in full (the second round)
            params = [_version(g[0]) for g in groups.values() if len(g) == 1]
            if params:
                self.first.append((name, {"rows": params}))
                self.touches += 1

    def then(self, results: Sequence[list[dict[str, Any]]]) -> list[Step]:
        """The second round, given the results of the first (which touches missed)."""
        missed: set[tuple[str, str]] = set()
        for result in results[len(results) - self.touches:]:
            missed.update(tuple(k) for k in result[0]["missed"])
        schemas = {k: _newest(g) for k, g in self.schemas.items() if len(g) > 1 or k in missed}
        lineages = {k: _newest(g) for k, g in self.lineages.items() if len(g) > 1 or k in missed}
        stamps = {(k, c): g["digest"] for k, g in schemas.items() for c in g["columns"]}
        columns = [_wire(r) | {"stamp": stamps.get((_SCHEMA_KEY(r), r["name"]))}
                   for r in combine_kind("columns", (
                       r for r in self.rows.columns if not r["written"]
                       or _SCHEMA_KEY(r) in schemas or _SCHEMA_KEY(r) not in self.schemas))]
        edge_stamps = {(k, e): g["digest"] for k, g in lineages.items() for e in g["edges"]}
        edges = [_wire(r) | {"stamp": edge_stamps.get((_LINEAGE_KEY(r), edge_key(r)))}
                 for r in combine_kind("column_edges", (
                     r for r in self.rows.column_edges
                     if _LINEAGE_KEY(r) in lineages or _LINEAGE_KEY(r) not in self.lineages))]
        plan: list[Step] = []
        if schemas:
            plan.append(("ingest/schema_switch", {"rows": [_version(g) for g in schemas.values()]}))
        if lineages:
            plan.append(("ingest/lineage_switch", {"rows": [_version(g) for g in lineages.values()]}))
        for kind, name in _THEN:
            if kind == "columns":
                params = columns
            elif kind == "column_keys":
                params = _edge_columns(self.rows.columns, edges)
            elif kind == "column_edges":
                params = edges
            else:
                params = [_wire(r) for r in getattr(self.rows, kind)]
            if params:
                plan.append((name, {"rows": params}))
        jobs = {(r["jobNamespace"], r["jobName"]) for r in self.rows.job_writes}
        if jobs:
            plan.append(("ingest/coarse_edges",
                         {"jobs": [{"namespace": ns, "name": name} for ns, name in sorted(jobs)]}))
        return plan


def _by_key(rows: list[dict[str, Any]], key: Callable[[dict[str, Any]], Any]
            ) -> dict[Any, list[dict[str, Any]]]:
    grouped: dict[Any, list[dict[str, Any]]] = {}
    for row in rows:
        grouped.setdefault(key(row), []).append(row)
    return grouped


def _newest(groups: list[dict[str, Any]]) -> dict[str, Any]:
    """The group seen last (the first of those seen at the same time)."""
    return max(groups, key=itemgetter("lastSeen"))


def _version(group: dict[str, Any]) -> dict[str, Any]:
    """A schema or lineage row as the touch and switch queries take it: without its members."""
    out = _wire(group)
    out.pop("columns", None)
    out.pop("edges", None)
    return out


def _edge_columns(columns: list[dict[str, Any]], edges: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Columns named by the column edges to write but not by a schema row of this batch (the
    columns of a touched schema exist: they were written when that schema became current)."""
    known = {(r["namespace"], r["dataset"], r["name"]) for r in columns}
    ends = {end for e in edges
            for end in ((e["outNamespace"], e["outDataset"], e["outColumn"]),
                        (e["inNamespace"], e["inDataset"], e["inColumn"]))} - known
    return [{"namespace": ns, "dataset": ds, "name": name} for ns, ds, name in sorted(ends)]


def load(graph: Graph, rows: Rows) -> int:
    """Write one combined batch in a single transaction; returns events already recorded."""
    plan = Plan(rows)
    if not plan.first:
        return 0
    done = graph.write(plan.first, plan.then)
    duplicates = 0
    for (name, params), result in done:
        if name == "ingest/column_edges" and result[0]["written"] != len(params["rows"]):
            raise QueryError(name, f"{len(params['rows']) - result[0]['written']} column edges found "
                                   "no column to attach to")
        if name in _COUNTS_DUPLICATES and result:
            duplicates += int(result[0].get("duplicates") or 0)
    return duplicates
