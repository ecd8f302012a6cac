"""The plan of a batch's writes (schema versions, members, edge columns) and its load: the only
I/O of ingest. One write transaction per batch, one UNWIND query per row kind."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from graph.db import Graph, QueryStep
from graph.errors import QueryError
from ingest.rows import KINDS, Rows, check_library
from ingest.transform import edge_key
from ingest.version_members import Members, column_rows, edge_rows, wire

_SCHEMA_KEY = itemgetter("namespace", "dataset")
_LINEAGE_KEY = itemgetter("jobNamespace", "jobName")
_COUNTS_DUPLICATES = ("ingest/datasets", "ingest/jobs", "ingest/runs")


class SeenCurrent:
    """The version each dataset's schema and job's column lineage had when this ingester last
    wrote or touched it: only a guess of what Neo4j will touch (see Plan). One per ingester; the
    worker keeps one across its batches.

    Kept small, since a worker lives for months: each key and digest as its 64-bit hash (a
    collision only makes a wrong guess), the least recently written forgotten past ``most`` keys
    (200,000: every schema and lineage of a graph of 100,000 datasets; its size in
    docs/benchmarks.md, "A worker's memory")."""

    def __init__(self, most: int = 200_000) -> None:
        self.most = most
        self._digests: OrderedDict[int, int] = OrderedDict()

    def get(self, query: str, key: Any, digest: str) -> bool:
        """Whether ``digest`` was current for ``key`` when last seen."""
        return self._digests.get(hash((query, key))) == hash(digest)

    def saw(self, query: str, key: Any, digest: str | None) -> None:
        """After a write: ``digest`` is current for ``key`` now (None: not known)."""
        k = hash((query, key))
        self._digests.pop(k, None)
        if digest is not None:
            self._digests[k] = hash(digest)
            if len(self._digests) > self.most:
                self._digests.popitem(last=False)


class Plan:
    """The writes of one combined batch, in two rounds of one transaction.

    A job that runs every day mostly reports the schema and the column lineage it reported the day
    before. Rewriting each column and column edge for that only to move its last-seen time was
    about half of Neo4j's work per event, so whole schemas (on the Dataset) and whole column
    lineages (on the Job) are compared by digest instead: the first round writes nodes and run and
    job edges and, per dataset and per job, touches the version that is already current or makes
    way for a new one (ingest/schemas, ingest/lineages); the second round writes column by column
    and edge by edge only what was not touched. See docs/graph-model.md for how a column's or
    edge's times are read then.
    """

    def __init__(self, rows: Rows, seen: SeenCurrent) -> None:
        """``rows`` as ``combine`` left them (columns and column edges not yet combined);
        ``seen``: the versions the ingester saw current, which ``then`` keeps up to date.

        Built where the batch is prepared (the worker does that while the previous batch is
        written): the columns and edges of versions that are probably not current (not seen
        current by this process) are combined here, the others only if Neo4j does not touch them.
        """
        check_library()  # once per process: every row.x of the ingest files is declared
        self.rows = rows
        self.seen = seen
        self.schemas = _newest_by_key(rows.schemas, _SCHEMA_KEY)
        self.lineages = _newest_by_key(rows.lineages, _LINEAGE_KEY)
        self.first: list[QueryStep] = [(kind.query, {"rows": params}) for kind in KINDS
                                  if kind.first and kind.query
                                  and (params := [wire(r) for r in getattr(rows, kind.name)])]
        self.versions = [(name, versions) for name, versions in (
            ("ingest/schemas", self.schemas), ("ingest/lineages", self.lineages)) if versions]
        self.first += [(name, {"rows": [_version(v) for v in versions.values()]})
                       for name, versions in self.versions]
        likely = {name: {k for k, v in versions.items()
                         if not v["force"] and seen.get(name, k, v["digest"])}
                  for name, versions in self.versions}
        self.columns = Members("columns", rows.columns, _SCHEMA_KEY, self.schemas,
                               likely.get("ingest/schemas", set()), lambda r: not r["written"],
                               rows.schemas, column_rows)
        # a declared edge (a JobEvent's or DatasetEvent's lineage facet) is never in a version
        self.edges = Members("column_edges", rows.column_edges, _LINEAGE_KEY, self.lineages,
                              likely.get("ingest/lineages", set()),
                              lambda r: r.get("declared") is not None,
                              [r for r in rows.lineages if r.get("compact")], edge_rows)

    def then(self, results: Sequence[list[dict[str, Any]]]) -> list[QueryStep]:
        """The second round, given the results of the first (which versions were not touched,
        and which of those are current now)."""
        missed: dict[str, set[Any]] = {"ingest/schemas": set(), "ingest/lineages": set()}
        current: dict[str, set[Any]] = {name: set() for name in missed}
        for (name, versions), result in zip(
                self.versions, results[len(results) - len(self.versions):], strict=True):
            missed[name] = {tuple(k) for k in result[0]["missed"]}
            current[name] = {tuple(k) for k in result[0]["current"]}
            for k, v in versions.items():
                now = k not in missed[name] or k in current[name]
                self.seen.saw(name, k, v["digest"] if now else None)
        # a written member of a version that is current now carries its digest (the stamp); the
        # rows are this plan's own: set again if the transaction is retried
        columns = self.columns.written(missed["ingest/schemas"])
        _stamp(columns, self.schemas, current["ingest/schemas"], _SCHEMA_KEY, "columns",
               itemgetter("name"))
        edges = self.edges.written(missed["ingest/lineages"])
        _stamp(edges, self.lineages, current["ingest/lineages"], _LINEAGE_KEY, "edges", edge_key)
        plan: list[QueryStep] = []
        for kind in KINDS:
            if kind.first or kind.query is None:
                continue
            if kind.name == "columns":
                params = columns
            elif kind.name == "column_edges":
                # first the columns the edges name that no schema of the batch wrote
                if keys := _edge_columns(self.rows, edges):
                    plan.append(("ingest/column_keys", {"rows": keys}))
                params = edges
            else:
                params = [wire(r) for r in getattr(self.rows, kind.name)]
            if params:
                plan.append((kind.query, {"rows": params}))
        return plan + _refreshes(self.rows, plan)


def _refreshes(rows: Rows, plan: list[QueryStep]) -> list[QueryStep]:
    """The queries that keep derived edges right after the batch's writes: alias edges of tables
    with several names, coarse and hand-off boundary edges of its jobs, and (last) which of their
    edges are current (docs/graph-model.md)."""
    steps: list[QueryStep] = []
    # a new name or column of a table with several names: make them one identity
    named = {(r["namespace"], r["dataset"]) for r in rows.columns + rows.schemas}
    named |= {(r["namespace"], r["dataset"]) for r in plan_columns(plan)}
    named |= {(r[ns], r[n]) for r in rows.symlinks
              for ns, n in (("namespace", "name"), ("aliasNamespace", "aliasName"))}
    named |= {(r["outNamespace"], r["outDataset"]) for r in rows.produced}
    if named:
        steps.append(("ingest/aliases", {"datasets": [
            {"namespace": ns, "name": name} for ns, name in sorted(named)]}))
    # a new input or output of a job may pair with its others: refresh its coarse edges, and
    # the edges that link a job of a hand-off to what it reads and writes
    jobs = {(r["jobNamespace"], r["jobName"]) for r in rows.job_writes + rows.job_reads}
    jobs |= {(r[f"{end}Namespace"], r[f"{end}Name"]) for r in rows.flows
             for end in ("out", "in") if r[f"{end}Kind"] == "JOB"}
    if jobs:
        keys = [{"namespace": ns, "name": name} for ns, name in sorted(jobs)]
        steps.append(("ingest/coarse_edges", {"jobs": keys}))
        steps.append(("ingest/boundaries", {"jobs": keys}))
    # last: which of the jobs' edges their latest completed runs still state
    runs: dict[tuple[str, str], list[str]] = {job: [] for job in jobs}
    for r in rows.runs:
        runs.setdefault((r["jobNamespace"], r["jobName"]), []).append(r["runId"])
    if runs:
        steps.append(("ingest/retire", {"jobs": [
            {"namespace": ns, "name": name, "runs": sorted(ids)}
            for (ns, name), ids in sorted(runs.items())]}))
    return steps


def plan_columns(plan: list[QueryStep]) -> list[dict[str, Any]]:
    """The columns that column edges of the plan name (the rows of ingest/column_keys)."""
    return next((params["rows"] for name, params in plan if name == "ingest/column_keys"), [])


def _stamp(rows: list[dict[str, Any]], versions: dict[Any, dict[str, Any]], current: set[Any],
           key: Callable[[dict[str, Any]], Any], members: str,
           member: Callable[[dict[str, Any]], Any]) -> None:
    """Set each row's ``stamp``: the digest of its version if that version is current and lists
    the row, else None."""
    listed: dict[Any, set[Any]] = {}
    for r in rows:
        k = key(r)
        stamp = None
        if k in current:
            names = listed.get(k)
            if names is None:
                names = listed[k] = set(versions[k][members])
            if member(r) in names:
                stamp = versions[k]["digest"]
        r["stamp"] = stamp


def _newest_by_key(versions: list[dict[str, Any]], key: Callable[[dict[str, Any]], Any]
                   ) -> dict[Any, dict[str, Any]]:
    """The newest version of each key (of those seen at the same time, the greatest digest, as
    ingest/schemas and ingest/lineages decide), marked ``force`` when the batch holds others of
    that key: their members are all written one by one."""
    newest: dict[Any, dict[str, Any]] = {}
    for version in versions:
        k = key(version)
        seen = newest.get(k)
        if seen is None:
            newest[k] = version | {"force": False}
        else:
            newer = (version["lastSeen"], version["digest"]) > (seen["lastSeen"], seen["digest"])
            winner = version if newer else seen
            newest[k] = winner | {"force": True}
    return newest


def _version(group: dict[str, Any]) -> dict[str, Any]:
    """A schema or lineage row as the touch and switch queries take it: without its members (a
    schema keeps the names of its columns, in order: the dataset's current columns)."""
    out = wire(group)
    if "columns" in out:
        out["columnNames"] = list(out.pop("columns"))
    for kept in ("edges", "compact", "flat"):  # members: not the query's
        out.pop(kept, None)
    return out


def _edge_columns(rows: Rows, edges: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Columns named by the column edges to write but not by a schema of this batch (the
    columns of a touched schema exist: they were written when that schema became current)."""
    if not edges:
        return []
    known = {(r["namespace"], r["dataset"], r["name"]) for r in rows.columns}
    known |= {(r["namespace"], r["dataset"], name) for r in rows.schemas for name in r["columns"]}
    ends = {end for e in edges
            for end in ((e["outNamespace"], e["outDataset"], e["outColumn"]),
                        (e["inNamespace"], e["inDataset"], e["inColumn"]))} - known
    return [{"namespace": ns, "dataset": ds, "name": name} for ns, ds, name in sorted(ends)]


def load(graph: Graph, plan: Plan) -> int:
    """Write one planned batch in a single transaction; returns events already recorded."""
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
