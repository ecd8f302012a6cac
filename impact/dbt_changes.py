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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from graph.db import Graph
from impact.changes import Change, CheckInputError
from impact.sql import ParsedSql, parse_each


@dataclass(frozen=True)
class Model:
    unique_id: str
    relation: str
    columns: dict[str, str | None] | None  # None: not known (no declared columns)
    inputs: frozenset[str]  # relation names
    lineage: dict[str, frozenset[str]] = field(default_factory=dict)  # column -> its "table.column"s


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
    # every model's compiled SQL in one bounded parse (impact.sql); a model whose SQL cannot be
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
                           frozenset(i for i in inputs | tables if i), lineage)
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
