"""Pre-deploy change check: what a proposed change would break, classified against the real
downstream consumers of each column.

* BREAKING: a DIRECT consumer (identity, transformation, aggregation; also further DIRECT steps
  downstream of it) of a dropped, renamed or retyped column; any consumer of a dropped or renamed
  dataset; a job output column that loses its source. A type change that only widens is not breaking.
* RISKY: only INDIRECT influence (join, filter, group by, sort ...), or a consumer whose column
  lineage is unknown (a coarse, dataset-level edge).
* SAFE: nothing downstream reads it; added columns.

The verdict is the worst finding. Each finding names the change, the consumer, the path, the
transformation, the consumer's owners and when its job last ran; consumers whose job has not run
for ``stale_days`` are marked stale and can be left out of the verdict.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from graph.db import Graph
from graph.errors import LineageError, NotFound
from impact.blast_radius import _native, dataset_blast_radius, require_column, require_dataset
from impact.change_doc import (
    OPS,
    ChangeList,
    ColumnList,
    DocumentError,
    EventChange,
    SqlChange,
    validated,
)

SEVERITY = {"SAFE": 0, "RISKY": 1, "BREAKING": 2}


class CheckInputError(LineageError):
    """The change cannot be checked: malformed, or about datasets or columns we do not know."""


@dataclass(frozen=True)
class Change:
    op: str
    namespace: str
    dataset: str
    column: str | None = None
    to: str | None = None  # the new name (rename) or the new type (retype, add)
    job_namespace: str | None = None
    job: str | None = None  # remove_input: the job that stops reading the dataset

    def describe(self) -> str:
        target = f"{self.namespace}:{self.dataset}" + (f".{self.column}" if self.column else "")
        if self.op == "remove_input":
            return f"job {self.job_namespace}:{self.job} stops reading {target}"
        verb = self.op.replace("_", " ")
        return f"{verb} {target}" + (f" -> {self.to}" if self.to else "")


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

    def fails(self, fail_on: str) -> bool:
        if fail_on == "never":
            return False
        return SEVERITY[self.verdict] >= SEVERITY["BREAKING" if fail_on == "breaking" else "RISKY"]


# --- reading the proposed change ----------------------------------------------------------------

def parse_change(doc: Any, graph: Graph) -> list[Change]:
    """Changes from a change file, an OpenLineage event, a column list, or a SQL statement.

    The document is first checked against the model of its kind (impact.change_doc)."""
    try:
        return _parse_change(doc, graph)
    except DocumentError as e:
        raise CheckInputError(str(e)) from e


def _parse_change(doc: Any, graph: Graph) -> list[Change]:
    if isinstance(doc, dict) and "changes" in doc:
        items = validated(ChangeList, doc)["changes"]
        return [_explicit(i, item) for i, item in enumerate(items)]
    if isinstance(doc, dict) and "sql" in doc:
        return _from_sql(validated(SqlChange, doc), graph)
    if isinstance(doc, dict) and "columns" in doc:
        doc = validated(ColumnList, doc)
        ns, name = _ref(doc, "the column list")
        return _diff(graph, ns, name, _columns(doc["columns"]))
    if isinstance(doc, dict) and ("eventTime" in doc or "job" in doc or "dataset" in doc):
        return _from_event(validated(EventChange, doc), graph)
    raise CheckInputError("unrecognised change: expected {changes: [...]}, an OpenLineage event, "
                          "{namespace, dataset, columns}, or {job, sql}")


def _ref(item: dict[str, Any], where: str) -> tuple[str, str]:
    ns, name = item.get("namespace"), item.get("dataset") or item.get("name")
    if not isinstance(ns, str) or not isinstance(name, str) or not ns or not name:
        raise CheckInputError(f"{where}: needs 'namespace' and 'dataset'")
    return ns, name


def _explicit(i: int, item: Any) -> Change:
    where = f"changes[{i}]"
    if not isinstance(item, dict):
        raise CheckInputError(f"{where}: expected an object")
    op = item.get("op")
    if op not in OPS:
        raise CheckInputError(f"{where}: op must be one of {', '.join(OPS)}, got {op!r}")
    ns, name = _ref(item, where)
    column = item.get("column")
    to = item.get("to") or item.get("new_name") or item.get("new_type") or item.get("type")
    if op in ("drop_column", "rename_column", "retype_column", "add_column") and not column:
        raise CheckInputError(f"{where}: {op} needs 'column'")
    if op in ("rename_column", "retype_column", "rename_dataset") and not to:
        noun = "type" if op == "retype_column" else "name"
        raise CheckInputError(f"{where}: {op} needs 'to' (the new {noun})")
    job_ns, job = item.get("job_namespace"), item.get("job")
    if op == "remove_input":
        if isinstance(job, dict):
            job_ns, job = job.get("namespace"), job.get("name")
        if not job or not job_ns:
            raise CheckInputError(f"{where}: remove_input needs 'job' and 'job_namespace'")
    return Change(op, ns, name, column, to, job_ns, job)


def _columns(value: Any) -> dict[str, str | None]:
    if not isinstance(value, list):
        raise CheckInputError("'columns' must be a list of names or {name, type}")
    out: dict[str, str | None] = {}
    for c in value:
        if isinstance(c, str):
            out[c] = None
        elif isinstance(c, dict) and isinstance(c.get("name"), str):
            out[c["name"]] = c.get("type") if isinstance(c.get("type"), str) else None
        else:
            raise CheckInputError(f"column {c!r}: expected a name or {{name, type}}")
    return out


def _diff(graph: Graph, ns: str, name: str, proposed: dict[str, str | None]) -> list[Change]:
    rows = graph.read("lookup/dataset", namespace=ns, name=name)
    if not rows:
        raise CheckInputError(f"unknown dataset {ns}:{name}: it is not in the graph")
    current = {c["name"]: c["type"] for c in rows[0]["columns"] if c["inSchema"]}
    changes = [Change("drop_column", ns, name, c) for c in sorted(set(current) - set(proposed))]
    changes += [Change("add_column", ns, name, c, proposed[c])
                for c in sorted(set(proposed) - set(current))]
    changes += [Change("retype_column", ns, name, c, proposed[c])
                for c in sorted(set(current) & set(proposed))
                if proposed[c] and current[c] and str(proposed[c]).lower() != str(current[c]).lower()]
    return changes


def _from_event(doc: dict[str, Any], graph: Graph) -> list[Change]:
    datasets = [doc["dataset"]] if isinstance(doc.get("dataset"), dict) else list(doc.get("outputs") or [])
    changes: list[Change] = []
    for ds in datasets:
        fields = ((ds.get("facets") or {}).get("schema") or {}).get("fields")
        if isinstance(fields, list):
            changes += _diff(graph, ds["namespace"], ds["name"], _columns(fields))
    job = doc.get("job")
    if isinstance(job, dict) and "inputs" in doc and "run" not in doc:  # static lineage of a job
        new = {(i["namespace"], i["name"]) for i in doc.get("inputs") or []}
        changes += _dropped_inputs(graph, job["namespace"], job["name"], new)
    if not changes:
        raise CheckInputError("the event proposes no schema and no inputs to compare")
    return changes


def _dropped_inputs(graph: Graph, job_ns: str, job: str, new: set[tuple[str, str]]) -> list[Change]:
    current = {(r["namespace"], r["name"]) for r in graph.read("check/job_reads", namespace=job_ns, name=job)}
    if not current and not graph.read("lookup/job", namespace=job_ns, name=job, runs=1):
        raise CheckInputError(f"unknown job {job_ns}:{job}: it is not in the graph")
    return [Change("remove_input", ns, name, job_namespace=job_ns, job=job)
            for ns, name in sorted(current - new)]


def _from_sql(doc: dict[str, Any], graph: Graph) -> list[Change]:
    import openlineage_sql

    job = doc.get("job")
    if not isinstance(job, dict) or not job.get("namespace") or not job.get("name"):
        raise CheckInputError("a SQL change needs 'job': {namespace, name}")
    ns = doc.get("namespace")
    if not isinstance(ns, str) or not ns:
        raise CheckInputError("a SQL change needs 'namespace': the namespace of the tables it names")
    sql = doc["sql"] if isinstance(doc["sql"], list) else [doc["sql"]]
    parsed = openlineage_sql.parse(sql, dialect=doc.get("dialect", "generic"))
    if parsed is None:
        raise CheckInputError("openlineage-sql could not parse the statement")
    new = {(ns, t.qualified_name) for t in parsed.in_tables}
    return _dropped_inputs(graph, job["namespace"], job["name"], new)


# --- classifying ----------------------------------------------------------------------------------

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


def check(graph: Graph, changes: list[Change], *, depth: int = 20, as_of: datetime | None = None,
          stale_days: int = 30, exclude_stale: bool = False, now: datetime | None = None) -> Report:
    """Classify every change against its real downstream consumers."""
    cutoff = (as_of or now or datetime.now(UTC)) - timedelta(days=stale_days)
    findings: list[Finding] = []
    for change in changes:
        try:
            findings += _classify(graph, change, depth, as_of, cutoff)
        except NotFound as e:
            raise CheckInputError(f"unknown {e.kind} {e.key}: it is not in the graph") from e
    findings.sort(key=lambda f: (-SEVERITY[f.severity], f.change, len(f.path), f.consumer))
    counted = [f for f in findings if not (exclude_stale and f.stale)]
    verdict = max((f.severity for f in counted), key=SEVERITY.__getitem__, default="SAFE")
    counts = {s: sum(1 for f in counted if f.severity == s) for s in SEVERITY}
    return Report(verdict, tuple(c.describe() for c in changes), tuple(findings), exclude_stale, counts)


def _stale(last: datetime | None, cutoff: datetime) -> bool:
    return last is None or last < cutoff


def _classify(graph: Graph, change: Change, depth: int, as_of: datetime | None,
              cutoff: datetime) -> list[Finding]:
    what = change.describe()
    if change.op in ("drop_dataset", "rename_dataset"):
        radius = dataset_blast_radius(graph, change.namespace, change.dataset, depth, as_of)
        out = [Finding("BREAKING", what, i.kind, f"{i.namespace}:{i.name}", i.path, i.why, i.job,
                       i.owners, i.last_seen, _stale(i.last_seen, cutoff),
                       "reads it" if i.kind == "job" else "derived from it")
               for i in radius.impacted]
        return out or [_safe(what, f"{change.namespace}:{change.dataset}", "nothing reads it")]
    if change.op == "add_column":
        require_dataset(graph, change.namespace, change.dataset)
        return [_safe(what, f"{change.namespace}:{change.dataset}.{change.column}", "an added column")]
    if change.op == "remove_input":
        return _removed_input(graph, change, what, depth, as_of, cutoff)
    # drop, rename or retype a column
    require_column(graph, change.namespace, change.dataset, str(change.column))
    if change.op == "retype_column":
        current = graph.read("lookup/dataset", namespace=change.namespace, name=change.dataset)[0]
        old = next((c["type"] for c in current["columns"] if c["name"] == change.column), None)
        if widens(old, change.to):
            return [_safe(what, f"{change.namespace}:{change.dataset}.{change.column}",
                          f"{old} -> {change.to} only widens")]
    keys = [{"namespace": change.namespace, "dataset": change.dataset, "name": change.column}]
    out = [f for found in _column_findings(graph, keys, what, depth, as_of, cutoff).values()
           for f in found]
    for r in graph.read("check/coarse_consumers", datasets=[{"namespace": change.namespace,
                                                             "name": change.dataset}], asOf=as_of):
        last = _native(r["lastRun"])
        out.append(Finding("RISKY", what, "dataset", f"{r['namespace']}:{r['name']}",
                           (f"{change.namespace}:{change.dataset}", f"{r['namespace']}:{r['name']}"),
                           "coarse (no column lineage)", r["job"], tuple(r["owners"]), last,
                           _stale(last, cutoff), "column lineage unknown: may read it"))
    return out or [_safe(what, f"{change.namespace}:{change.dataset}.{change.column}", "nothing reads it")]


def _column_findings(graph: Graph, keys: list[dict[str, Any]], what: str, depth: int,
                     as_of: datetime | None, cutoff: datetime) -> dict[str, list[Finding]]:
    """The consumers of each of ``keys`` (one query for all), by source ``ns:dataset.column``."""
    out: dict[str, list[Finding]] = {}
    for r in graph.read("check/column_consumers", columns=keys, depth=depth, asOf=as_of):
        last = _native(r["lastRun"])
        steps = " -> ".join(f"{s['type']} {s['subtype']}" + (" masked" if s["masking"] else "")
                            for s in r["steps"])
        out.setdefault(r["source"], []).append(Finding(
            "BREAKING" if r["direct"] else "RISKY", what, "column",
            f"{r['namespace']}:{r['dataset']}.{r['column']}", tuple(r["path"]), steps, r["job"],
            tuple(r["owners"]), last, _stale(last, cutoff),
            "reads it directly" if r["direct"] else "influenced only (INDIRECT)"))
    return out


def _removed_input(graph: Graph, change: Change, what: str, depth: int, as_of: datetime | None,
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
    downstream = _column_findings(graph, keys, what, depth, as_of, cutoff) if keys else {}
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


# --- reports ----------------------------------------------------------------------------------------

def to_json(report: Report) -> str:
    return json.dumps(asdict(report), indent=2,
                      default=lambda v: v.isoformat() if hasattr(v, "isoformat") else str(v))


def to_text(report: Report) -> str:
    lines = [f"lineage check: {report.verdict}  ({_summary(report)})"]
    for f in report.findings:
        stale = " [stale]" if f.stale else ""
        lines.append(f"  {f.severity:8s} {f.change}: {f.consumer_kind} {f.consumer}{stale} -- {f.note}")
        if f.path:
            lines.append(f"           path {' -> '.join(f.path)}  via {f.transformation or '-'}"
                         + (f"  job {f.job}" if f.job else ""))
        if f.owners or f.last_run:
            last = f"{f.last_run:%Y-%m-%d %H:%M}" if f.last_run else "never"
            lines.append(f"           owners {', '.join(f.owners) or '-'}; last run {last}")
    return "\n".join(lines) + "\n"


def to_markdown(report: Report) -> str:
    icon = {"BREAKING": ":x:", "RISKY": ":warning:", "SAFE": ":white_check_mark:"}[report.verdict]
    out = [f"### {icon} lineage check: **{report.verdict}**", "",
           f"{_summary(report)} for {len(report.changes)} change(s): "
           + "; ".join(f"`{c}`" for c in report.changes),
           ""]
    shown = [f for f in report.findings if f.severity != "SAFE"]
    if shown:
        out += ["| severity | change | consumer | via | owners | last run |", "|---|---|---|---|---|---|"]
        for f in shown:
            last = f"{f.last_run:%Y-%m-%d}" if f.last_run else "never"
            out.append(f"| {f.severity}{' (stale)' if f.stale else ''} | {f.change} | `{f.consumer}` | "
                       f"{f.transformation} | {', '.join(f.owners) or '-'} | {last} |")
        out += ["", "<details><summary>paths</summary>", ""]
        out += [f"- `{f.consumer}`: {' → '.join(f.path)} ({f.note})" for f in shown]
        out += ["", "</details>"]
    else:
        out.append("Nothing downstream breaks.")
    return "\n".join(out) + "\n"


def _summary(report: Report) -> str:
    c = report.counts
    extra = ", stale consumers excluded" if report.stale_excluded else ""
    return f"{c.get('BREAKING', 0)} breaking, {c.get('RISKY', 0)} risky, {c.get('SAFE', 0)} safe{extra}"
