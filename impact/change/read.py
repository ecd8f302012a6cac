"""Reading a proposed change for the pre-deploy check: a change file (``changes: [...]``), an
OpenLineage DatasetEvent or JobEvent (diffed against the graph), a column list, or a job's new SQL.

Each document is first checked against the model of its kind (:mod:`impact.change.document`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graph.db import Graph
from graph.errors import LineageError
from impact.change.document import (
    OPS,
    ChangeList,
    ColumnList,
    DocumentError,
    EventChange,
    SqlChange,
    validated,
)


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


def parse_change(doc: Any, graph: Graph) -> list[Change]:
    """Changes from a change file, an OpenLineage event, a column list, or a SQL statement.

    The document is first checked against the model of its kind (impact.change.document)."""
    kind, valid = check_shape(doc)
    if kind == "changes":
        return [_explicit(i, item) for i, item in enumerate(valid["changes"])]
    if kind == "sql":
        return _from_sql(valid, graph)
    if kind == "columns":
        ns, name = _ref(valid, "the column list")
        return _diff(graph, ns, name, _columns(valid["columns"]))
    return _from_event(valid, graph)


def check_shape(doc: Any) -> tuple[str, Any]:
    """What can be said of a change document without the graph: its kind (changes, sql, columns
    or event) and the document as its model reads it; CheckInputError when it is malformed (so
    that a malformed file is said before whether Neo4j answers)."""
    try:
        if isinstance(doc, dict) and "changes" in doc:
            valid = validated(ChangeList, doc)
            for i, item in enumerate(valid["changes"]):
                _explicit(i, item)
            return "changes", valid
        if isinstance(doc, dict) and "sql" in doc:
            return "sql", validated(SqlChange, doc)
        if isinstance(doc, dict) and "columns" in doc:
            valid = validated(ColumnList, doc)
            _ref(valid, "the column list")
            _columns(valid["columns"])
            return "columns", valid
        if isinstance(doc, dict) and ("eventTime" in doc or "job" in doc or "dataset" in doc):
            return "event", validated(EventChange, doc)
    except DocumentError as e:
        raise CheckInputError(str(e)) from e
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
    new_datasets = 0  # an output the graph does not have: a new table, which nothing reads yet
    for ds in datasets:
        fields = ((ds.get("facets") or {}).get("schema") or {}).get("fields")
        if not isinstance(fields, list):
            continue
        if "outputs" in doc and not graph.read("impact/exists_dataset", namespace=ds["namespace"],
                                                 name=ds["name"])[0]["found"]:
            new_datasets += 1
            continue
        changes += _diff(graph, ds["namespace"], ds["name"], _columns(fields))
    job = doc.get("job")
    if isinstance(job, dict) and "inputs" in doc and "run" not in doc:  # static lineage of a job
        new = {(i["namespace"], i["name"]) for i in doc.get("inputs") or []}
        changes += _dropped_inputs(graph, job["namespace"], job["name"], new)
    if not changes and not new_datasets:
        raise CheckInputError("the event proposes no schema and no inputs to compare")
    return changes


def _dropped_inputs(graph: Graph, job_ns: str, job: str, new: set[tuple[str, str]]) -> list[Change]:
    current = {(r["namespace"], r["name"]) for r in graph.read("check/job_reads", namespace=job_ns, name=job)}
    if not current and not graph.read("lookup/job", namespace=job_ns, name=job, runs=1):
        raise CheckInputError(f"unknown job {job_ns}:{job}: it is not in the graph")
    return [Change("remove_input", ns, name, job_namespace=job_ns, job=job)
            for ns, name in sorted(current - new)]


def _from_sql(doc: dict[str, Any], graph: Graph) -> list[Change]:
    from impact.change.sql import SqlError, parse_sql

    job = doc.get("job")
    if not isinstance(job, dict) or not job.get("namespace") or not job.get("name"):
        raise CheckInputError("a SQL change needs 'job': {namespace, name}")
    ns = doc.get("namespace")
    if not isinstance(ns, str) or not ns:
        raise CheckInputError("a SQL change needs 'namespace': the namespace of the tables it names")
    sql = doc["sql"] if isinstance(doc["sql"], list) else [doc["sql"]]
    if not all(isinstance(s, str) for s in sql):
        raise CheckInputError("'sql' must be a statement or a list of statements (strings)")
    try:
        parsed = parse_sql(sql, dialect=str(doc.get("dialect", "generic")))
    except SqlError as e:
        raise CheckInputError(f"sql: {e}") from e
    if parsed is None:
        raise CheckInputError("openlineage-sql could not parse the statement")
    new = {(ns, t) for t in parsed.tables}
    return _dropped_inputs(graph, job["namespace"], job["name"], new)
