"""Pre-deploy change check: what a proposed change would break, classified against the real
downstream consumers of each column.

* BREAKING: a DIRECT consumer (identity, transformation, aggregation; also further DIRECT steps
  downstream of it) of a dropped, renamed or retyped column; any consumer of a dropped or renamed
  dataset; a job output column that loses its source. A type change that only widens is not breaking.
* RISKY: only INDIRECT influence (join, filter, group by, sort ...), or a consumer whose column
  lineage is unknown (a coarse, dataset-level edge, or a column edge whose producer reported no
  transformation).
* SAFE: nothing downstream reads it; added columns.

The verdict is the worst finding. Each finding names the change, the consumer, the path, the
transformation, the consumer's owners and when its job last ran; consumers whose job has not run
for ``stale_days`` are marked stale and can be left out of the verdict.

The proposed change is read by :mod:`impact.change.read`; reports are rendered by the front doors
(``api.render.check``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from graph.db import Graph
from graph.errors import NotFound
from impact.answers import ModelVersion, native_time, require_column, require_dataset
from impact.blast_radius import column_blast_radius, dataset_blast_radius
from impact.change.read import Change, CheckInputError
from impact.discover import closest

SEVERITY = {"SAFE": 0, "RISKY": 1, "BREAKING": 2}


@dataclass(frozen=True)
class Finding:
    severity: str
    change: str
    consumer_kind: str  # column, dataset or job
    consumer: str
    path: tuple[str, ...]
    transformation: str
    job: str | None
    owners: tuple[str, ...]
    last_run: datetime | None
    stale: bool = False
    note: str = ""


@dataclass(frozen=True)
class Report:
    verdict: str
    changes: tuple[str, ...]
    findings: tuple[Finding, ...]
    stale_excluded: bool
    counts: dict[str, int] = field(default_factory=dict)
    models: tuple[ModelVersion, ...] = ()  # every model version trained on what a change reaches

    def fails(self, fail_on: str) -> bool:
        if fail_on == "never":
            return False
        return SEVERITY[self.verdict] >= SEVERITY["BREAKING" if fail_on == "breaking" else "RISKY"]


_RANK = {"tinyint": 0, "byte": 0, "smallint": 1, "short": 1, "int": 2, "integer": 2, "bigint": 3,
         "long": 3, "float": 10, "real": 10, "double": 11, "double precision": 11}


def widens(old: str | None, new: str | None) -> bool:
    """True when ``new`` holds every value of ``old`` (int -> bigint, float -> double,
    decimal(10,2) -> decimal(12,2), varchar(20) -> varchar(50) or text)."""
    if not old or not new:
        return False
    o, n = old.strip().lower(), new.strip().lower()
    if o == n:
        return True
    if o in _RANK and n in _RANK:
        same_family = (_RANK[o] < 10) == (_RANK[n] < 10)
        return (same_family and _RANK[n] >= _RANK[o]) or (_RANK[o] < 3 and _RANK[n] == 11)
    dec = re.compile(r"(?:decimal|numeric)\s*\(\s*(\d+)\s*(?:,\s*(\d+))?\s*\)")
    mo, mn = dec.fullmatch(o), dec.fullmatch(n)
    if mo and mn:
        po, so, pn, sn = int(mo[1]), int(mo[2] or 0), int(mn[1]), int(mn[2] or 0)
        return sn >= so and pn - sn >= po - so
    var = re.compile(r"(?:varchar|character varying|char)\s*\(\s*(\d+)\s*\)")
    vo, vn = var.fullmatch(o), var.fullmatch(n)
    return bool(vo and (n in ("text", "string", "varchar") or (vn and int(vn[1]) >= int(vo[1]))))


@dataclass(frozen=True)
class _View:
    """Which lineage a check reads: current (or current at ``as_of``), or with retired edges."""

    as_of: datetime | None
    include_retired: bool


def check(graph: Graph, changes: list[Change], *, depth: int = 20, as_of: datetime | None = None,
          stale_days: int = 30, exclude_stale: bool = False, now: datetime | None = None,
          include_retired: bool = False) -> Report:
    """Classify every change against its real downstream consumers (over current lineage, or
    the lineage current at ``as_of``; ``include_retired`` adds edges no longer stated)."""
    cutoff = (as_of or now or datetime.now(UTC)) - timedelta(days=stale_days)
    view = _View(as_of, include_retired)
    findings: list[Finding] = []
    models: dict[tuple[str, str, str], ModelVersion] = {}
    for change in changes:
        try:
            found = _classify(graph, change, depth, view, cutoff)
            versions = _models(graph, change, depth, view)
        except NotFound as e:
            close = closest(graph, e)
            hint = "; did you mean: " + ", ".join(f"{f.namespace} {f.name}" for f in close) \
                if close else ""
            raise CheckInputError(f"unknown {e.kind} {e.key}: it is not in the graph{hint}") from e
        findings += found + _model_findings(change, versions, found, cutoff)
        models |= {(v.namespace, v.name, v.version): v for v in versions}
    findings.sort(key=lambda f: (-SEVERITY[f.severity], f.change, len(f.path), f.consumer))
    counted = [f for f in findings if not (exclude_stale and f.stale)]
    verdict = max((f.severity for f in counted), key=SEVERITY.__getitem__, default="SAFE")
    counts = {s: sum(1 for f in counted if f.severity == s) for s in SEVERITY}
    return Report(verdict, tuple(c.describe() for c in changes), tuple(findings), exclude_stale, counts,
                  tuple(models.values()))


def _models(graph: Graph, change: Change, depth: int, view: _View) -> tuple[ModelVersion, ...]:
    """The model versions trained on what ``change`` reaches (none for an added column)."""
    if change.op in ("drop_dataset", "rename_dataset"):
        return dataset_blast_radius(graph, change.namespace, change.dataset, depth, view.as_of,
                                    view.include_retired).models
    if change.op in ("drop_column", "rename_column", "retype_column"):
        return column_blast_radius(graph, change.namespace, change.dataset, str(change.column),
                                   depth, view.as_of, view.include_retired).models
    return ()


def _model_findings(change: Change, versions: tuple[ModelVersion, ...], found: list[Finding],
                    cutoff: datetime) -> list[Finding]:
    """A finding for the latest version of each model trained on what the change reaches: its
    next training reads it. BREAKING when its column lineage names the changed column or a
    consumer the change breaks; RISKY when it reaches the model another way, or which columns
    trained it is not stated."""
    if not versions or all(f.severity == "SAFE" for f in found):
        return []
    what = change.describe()
    breaking = {f.consumer for f in found if f.severity == "BREAKING"}
    changed = f"{change.namespace}:{change.dataset}" + (f".{change.column}" if change.column else "")
    latest: dict[tuple[str, str], ModelVersion] = {}
    for v in versions:  # oldest first within a model
        latest[(v.namespace, v.name)] = v
    out = []
    for v in latest.values():
        direct = v.basis == "columns" and (v.via == changed or v.via in breaking)
        if change.op in ("drop_dataset", "rename_dataset"):
            direct = True
        out.append(Finding("BREAKING" if direct else "RISKY", what, "model", v.label,
                           (changed, v.via, f"{v.namespace}:{v.name}"),
                           "trained on" if v.basis == "columns" else "trained on its dataset",
                           v.job, (), v.trained_at, _stale(v.trained_at, cutoff),
                           f"trained on {v.via}" if v.basis == "columns" else
                           f"trained on {v.via}; which columns is not stated"))
    return out


def _stale(last: datetime | None, cutoff: datetime) -> bool:
    return last is None or last < cutoff


def _classify(graph: Graph, change: Change, depth: int, view: _View,
              cutoff: datetime) -> list[Finding]:
    what = change.describe()
    if change.op in ("drop_dataset", "rename_dataset"):
        radius = dataset_blast_radius(graph, change.namespace, change.dataset, depth, view.as_of,
                                      view.include_retired)
        out = [Finding("BREAKING", what, i.kind, f"{i.namespace}:{i.name}", i.path, i.why, i.job,
                       i.owners, i.last_seen, _stale(i.last_seen, cutoff),
                       "reads it" if i.kind == "job" else "derived from it")
               for i in radius.impacted]
        return out or [_safe(what, f"{change.namespace}:{change.dataset}", "nothing reads it")]
    if change.op == "add_column":
        require_dataset(graph, change.namespace, change.dataset)
        return [_safe(what, f"{change.namespace}:{change.dataset}.{change.column}", "an added column")]
    if change.op == "remove_input":
        return _removed_input(graph, change, what, depth, view, cutoff)
    # drop, rename or retype a column
    require_column(graph, change.namespace, change.dataset, str(change.column))
    if change.op == "retype_column":
        current = graph.read("lookup/dataset", namespace=change.namespace, name=change.dataset)[0]
        old = next((c["type"] for c in current["columns"] if c["name"] == change.column), None)
        if widens(old, change.to):
            return [_safe(what, f"{change.namespace}:{change.dataset}.{change.column}",
                          f"{old} -> {change.to} only widens")]
    keys = [{"namespace": change.namespace, "dataset": change.dataset, "name": change.column}]
    out = [f for found in _column_findings(graph, keys, what, depth, view, cutoff).values()
           for f in found]
    for r in graph.read("check/coarse_consumers", datasets=[{"namespace": change.namespace,
                                                             "name": change.dataset}],
                        asOf=view.as_of, includeRetired=view.include_retired):
        last = native_time(r["lastRun"])
        out.append(Finding("RISKY", what, "dataset", f"{r['namespace']}:{r['name']}",
                           (f"{change.namespace}:{change.dataset}", f"{r['namespace']}:{r['name']}"),
                           "coarse (no column lineage)", r["job"], tuple(r["owners"]), last,
                           _stale(last, cutoff), "column lineage unknown: may read it"))
    return out or [_safe(what, f"{change.namespace}:{change.dataset}.{change.column}", "nothing reads it")]


def _column_findings(graph: Graph, keys: list[dict[str, Any]], what: str, depth: int,
                     view: _View, cutoff: datetime) -> dict[str, list[Finding]]:
    """The consumers of each of ``keys`` (one query for all), by source ``ns:dataset.column``."""
    out: dict[str, list[Finding]] = {}
    for r in graph.read("check/column_consumers", columns=keys, depth=depth, asOf=view.as_of,
                        includeRetired=view.include_retired):
        if r["alias"]:  # another name of the column or of a consumer listed already
            continue
        last = native_time(r["lastRun"])
        steps = " -> ".join(f"{s['type']} {s['subtype']}" + (" masked" if s["masking"] else "")
                            for s in r["steps"])
        out.setdefault(r["source"], []).append(Finding(
            "BREAKING" if r["direct"] else "RISKY", what, "column",
            f"{r['namespace']}:{r['dataset']}.{r['column']}", tuple(r["path"]), steps, r["job"],
            tuple(r["owners"]), last, _stale(last, cutoff),
            "reads it directly" if r["direct"] else
            "transformation not reported: may copy it" if any(s["type"] == "UNKNOWN"
                                                             for s in r["steps"])
            else "influenced only (INDIRECT)"))
    return out


def _removed_input(graph: Graph, change: Change, what: str, depth: int, view: _View,
                   cutoff: datetime) -> list[Finding]:
    current = {(r["namespace"], r["name"]) for r in graph.read(
        "check/job_reads", namespace=change.job_namespace, name=change.job)}
    if (change.namespace, change.dataset) not in current:
        raise CheckInputError(f"job {change.job_namespace}:{change.job} does not read "
                              f"{change.namespace}:{change.dataset}")
    rows = graph.read("check/job_input_columns", jobNamespace=change.job_namespace, jobName=change.job,
                      namespace=change.namespace, name=change.dataset)
    keys = [dict(k) for k in {tuple(sorted({"namespace": r["namespace"], "dataset": r["dataset"],
                                            "name": r["column"]}.items())) for r in rows}]
    downstream = _column_findings(graph, keys, what, depth, view, cutoff) if keys else {}
    out: list[Finding] = []
    for r in rows:
        direct = r["type"] == "DIRECT"
        out.append(Finding("BREAKING" if direct else "RISKY", what, "column",
                           f"{r['namespace']}:{r['dataset']}.{r['column']}",
                           (f"{change.dataset}.{r['fromColumn']}", f"{r['dataset']}.{r['column']}"),
                           f"{r['type']} {r['subtype']}", f"{change.job_namespace}:{change.job}",
                           (), None, False, "loses its source" if direct else "loses an influence"))
        hop = f"{change.dataset}.{r['fromColumn']}"
        for f in downstream.get(f"{r['namespace']}:{r['dataset']}.{r['column']}", []):
            out.append(replace(f, severity=f.severity if direct else "RISKY", path=(hop, *f.path)))
    if not rows:
        out.append(Finding("RISKY", what, "job", f"{change.job_namespace}:{change.job}",
                           (f"{change.namespace}:{change.dataset}",), "coarse (no column lineage)",
                           f"{change.job_namespace}:{change.job}", (), None, False,
                           "the job has no column lineage from it: what it loses is unknown"))
    return out


def _safe(what: str, consumer: str, note: str) -> Finding:
    return Finding("SAFE", what, "none", consumer, (), "", None, (), None, False, note)
