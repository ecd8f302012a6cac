"""A dbt pull request as a change: ``lineage check --dbt-manifest target/manifest.json``.

The branch's compiled manifest (``dbt compile`` or any command that writes ``target/manifest.json``)
says, for each model, the relation it builds (``database.schema.alias``, the name openlineage-dbt
gives its dataset), its columns and what it reads (``ref``s and ``source``s, and the tables its
compiled SQL names, parsed with openlineage-sql). The deployed side is what the graph knows of
those datasets now, or, with ``--dbt-state prod/manifest.json``, the deployed project's manifest.
The differences become the change operations of docs/ci.md:

- a column the deployed side has and the branch does not: ``drop_column``; a new one:
  ``add_column``; both at once, when the new column is made from the very same input columns as
  the old one (its compiled SQL's column lineage against the graph's, or the deployed SQL's):
  ``rename_column``; a declared type that changed: ``retype_column``;
- an input the model's writer reads now and the branch no longer reads: ``remove_input``;
- with ``--dbt-state``, a model the deployed project has and the branch does not: ``drop_dataset``.

A model's columns are its declared ones (``columns:`` in its YAML, with ``data_type``), which dbt
contracts enforce; a model that declares none is read from its compiled SQL's select list, which
openlineage-sql only gives for columns derived from an input (a literal or ``count(*)`` has
none), so such a model's column changes are not compared: the report's notes say so.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from graph.db import Graph
from impact.change.read import Change, CheckInputError
from impact.change.sql import ParsedSql, parse_each


@dataclass(frozen=True)
class Model:
    unique_id: str
    relation: str
    columns: dict[str, str | None] | None  # None: not known (no declared columns)
    inputs: frozenset[str]  # relation names
    lineage: dict[str, frozenset[str]] = field(default_factory=dict)  # column -> its "table.column"s
    sql: str | None = None  # its compiled code


@dataclass
class DbtChanges:
    changes: list[Change]
    namespace: str
    notes: list[str] = field(default_factory=list)


def relation(node: dict[str, Any]) -> str:
    """The dataset name openlineage-dbt gives a node: database.schema.(alias for models, name for
    sources), empty parts left out."""
    table = node.get("identifier") if node.get("resource_type") == "source" else node.get("alias")
    return ".".join(p for p in (node.get("database"), node.get("schema"), table or node.get("name")) if p)


def models(manifest: Any, where: str) -> dict[str, Model]:
    """The models of a manifest, by unique id."""
    if not isinstance(manifest, dict) or not isinstance(manifest.get("nodes"), dict):
        raise CheckInputError(f"{where}: not a dbt manifest (no 'nodes'); run `dbt compile` first")
    nodes: dict[str, Any] = manifest["nodes"]
    sources: dict[str, Any] = manifest.get("sources") or {}
    dialect = str((manifest.get("metadata") or {}).get("adapter_type") or "generic")
    enabled = {uid: node for uid, node in nodes.items() if node.get("resource_type") == "model"
               and (node.get("config") or {}).get("enabled", True)}
    # every model's compiled SQL in one bounded parse (impact.change.sql); a model whose SQL cannot be
    # parsed still counts its refs
    parsed = parse_each([([str(node["compiled_code"])], dialect) for node in enabled.values()
                         if node.get("compiled_code")])
    found: dict[str, Model] = {}
    answers = iter(parsed)
    for uid, node in enabled.items():
        declared = {str(c.get("name") or name): c.get("data_type") or None
                    for name, c in (node.get("columns") or {}).items()}
        inputs = {relation(nodes.get(dep) or sources.get(dep) or {})
                  for dep in (node.get("depends_on") or {}).get("nodes") or []}
        sql = next(answers) if node.get("compiled_code") else None
        tables, lineage = ((set(sql.tables), sql.columns) if isinstance(sql, ParsedSql)
                           else (set(), {}))
        found[uid] = Model(uid, relation(node), declared or None,
                           frozenset(i for i in inputs | tables if i), lineage,
                           str(node["compiled_code"]) if node.get("compiled_code") else None)
    return found


def dbt_changes(graph: Graph, branch: Any, state: Any | None = None, namespace: str | None = None
                ) -> DbtChanges:
    """The change operations a branch's manifest proposes, against ``state`` (the deployed
    manifest) or, without it, against the graph."""
    new = models(branch, "--dbt-manifest")
    old = models(state, "--dbt-state") if state is not None else None
    names = sorted({m.relation for m in new.values()} | {m.relation for m in (old or {}).values()})
    known = graph.read("check/dbt_models", names=names)
    ns = namespace or _namespace(known, names)
    here = {r["name"]: r for r in known if r["namespace"] == ns}
    out = DbtChanges([], ns)
    for uid, model in sorted(new.items()):
        row = here.get(model.relation)
        if row is None:
            out.notes.append(f"{model.relation}: not in the graph yet (a new model: nothing reads it)")
            continue
        before = old.get(uid) if old is not None else None
        if old is not None and before is None:
            out.notes.append(f"{model.relation}: not in the deployed manifest (a new model)")
            continue
        current = (before.columns if before is not None else
                   {c["name"]: c["type"] for c in row["columns"]} or None)
        was_from = (before.lineage if before is not None else
                    {c["name"].lower(): frozenset(x.lower() for x in c["sources"]) for c in row["columns"]})
        if model.columns is None or current is None:
            out.notes.append(f"{model.relation}: columns not compared (no declared columns)")
        else:
            out.changes += _column_changes(ns, model.relation, current, model.columns,
                                           was_from, model.lineage)
        writers = row["writers"]
        was = (before.inputs if before is not None
               else frozenset(i["name"] for w in writers for i in w["reads"] if i["namespace"] == ns))
        for gone in sorted(was - model.inputs):
            readers = [w for w in writers
                       if any(i["name"] == gone and i["namespace"] == ns for i in w["reads"])]
            out.changes += [Change("remove_input", ns, gone, job_namespace=w["namespace"], job=w["name"])
                            for w in readers]
            if not readers:
                out.notes.append(f"{model.relation}: stops reading {gone}, which no job writing it "
                                 "reads in the graph")
    for uid, model in sorted((old or {}).items()):
        if uid not in new and model.relation in here:
            out.changes.append(Change("drop_dataset", ns, model.relation))
    return out


def branch_events(graph: Graph, branch: Any, namespace: str | None = None,
                  producer: str = "lineage-graph check") -> tuple[list[dict[str, Any]], str]:
    """The branch's new and changed models as the OpenLineage events dbt-ol would send once they
    run: each model's job (the job that writes it now, else one named by the model's unique id,
    as dbt-ol names it), its inputs, and its output with its columns and their column lineage,
    each input field with the transformation its compiled SQL makes of it
    (impact.change.sql_expressions): the graph as the branch would leave it, for the policy rules. A
    model whose compiled SQL is the SQL its job last reported is left as the graph has it.
    Returns the events and the namespace."""
    from impact.change.sql_expressions import transformation

    new = models(branch, "--dbt-manifest")
    names = sorted(m.relation for m in new.values())
    known = graph.read("check/dbt_models", names=names)
    ns = namespace or _namespace(known, names)
    writers = {r["name"]: r["writers"] for r in known if r["namespace"] == ns}
    job_spaces = sorted({w["namespace"] for ws in writers.values() for w in ws})
    now = datetime.now(UTC).isoformat()
    events = []
    for uid, model in sorted(new.items()):
        current = writers.get(model.relation) or []
        if current and _same_sql(current[0].get("sql"), model.sql):
            continue
        job = ((current[0]["namespace"], current[0]["name"]) if current
               else (job_spaces[0] if job_spaces else ns, uid))
        by_lower = {i.lower(): i for i in model.inputs}
        columns = list(model.columns or {}) or sorted(model.lineage)
        lineage: dict[str, Any] = {}
        for column in columns:
            fields = []
            how = transformation(model.sql or "", column)
            for source in sorted(model.lineage.get(column.lower(), ())):
                table, _, field_ = source.rpartition(".")
                fields.append({"namespace": ns, "name": by_lower.get(table, table), "field": field_,
                               "transformations": [{"type": how.type, "subtype": how.subtype,
                                                    "masking": how.masking}]})
            if fields:
                lineage[column] = {"inputFields": fields}
        output: dict[str, Any] = {"namespace": ns, "name": model.relation, "facets": {
            "schema": {"_producer": producer, "_schemaURL": _SCHEMA_URL, "fields": [
                {"name": c, **({"type": t} if t else {})}
                for c, t in ((c, (model.columns or {}).get(c)) for c in columns)]}}}
        if lineage:
            output["facets"]["columnLineage"] = {"_producer": producer,
                                                 "_schemaURL": _LINEAGE_URL, "fields": lineage}
        events.append({"eventType": "COMPLETE", "eventTime": now, "producer": producer,
                       "schemaURL": _EVENT_URL,
                       "run": {"runId": str(uuid.uuid4())},
                       "job": {"namespace": job[0], "name": job[1]},
                       "inputs": [{"namespace": ns, "name": i} for i in sorted(model.inputs)],
                       "outputs": [output]})
    return events, ns


def _same_sql(reported: str | None, compiled: str | None) -> bool:
    return bool(reported and compiled) and " ".join(str(reported).split()) == " ".join(
        str(compiled).split())


_EVENT_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
_SCHEMA_URL = "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet"
_LINEAGE_URL = ("https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json"
                "#/$defs/ColumnLineageDatasetFacet")


def _column_changes(ns: str, name: str, current: Mapping[str, str | None],
                    proposed: Mapping[str, str | None],
                    was_from: Mapping[str, frozenset[str]] | None = None,
                    now_from: Mapping[str, frozenset[str]] | None = None) -> list[Change]:
    """Dropped, added and retyped columns; a dropped column and an added one made from the very same
    input columns (non-empty) are one renamed column."""
    lower = {c.lower(): c for c in current}
    dropped = sorted(set(lower) - {p.lower() for p in proposed})
    added = sorted(p for p in proposed if p.lower() not in lower)
    renamed: list[Change] = []
    for d in list(dropped):
        source = (was_from or {}).get(d)
        same = [a for a in added if source and (now_from or {}).get(a.lower()) == source]
        if len(same) == 1:
            renamed.append(Change("rename_column", ns, name, lower[d], same[0]))
            dropped.remove(d)
            added.remove(same[0])
    changes = [Change("drop_column", ns, name, lower[c]) for c in dropped] + renamed
    for p, kind in sorted(proposed.items()):
        was = lower.get(p.lower())
        if p in added:
            changes.append(Change("add_column", ns, name, p, kind))
        elif was is not None and kind and current[was] and kind.lower() != str(current[was]).lower():
            changes.append(Change("retype_column", ns, name, was, kind))
    return changes


def _namespace(known: Iterable[dict[str, Any]], names: list[str]) -> str:
    spaces = sorted({r["namespace"] for r in known})
    if len(spaces) == 1:
        return str(spaces[0])
    if not spaces:
        raise CheckInputError(f"none of the branch's {len(names)} models is in the graph under any "
                              "namespace: has its project sent lineage (dbt-ol) yet? Pass "
                              "--dbt-namespace if it reports under other names")
    raise CheckInputError("the models' names are in several namespaces (" + ", ".join(spaces)
                          + "): pass --dbt-namespace (openlineage-dbt's namespace of the profile, "
                            "e.g. duckdb:///path/to.duckdb or postgres://host:5432)")
