"""An erasure plan: where one person's data lives, how to find their rows in each place, and which
places can only be cleaned by rebuilding them (docs/graph-model.md, "Erasure").

From the subject's key columns (``raw.users.user_id``) and the personal columns of the same tables
(tagged PII, or named), GDPR reach (impact.where) gives every column their data reaches and in
what form. Each dataset reached is then one place:

* **delete by key**: a raw copy of a key reaches it: the subject's rows are found by the column
  that carries the key there, with a statement template where its namespace says it is SQL;
* **unverified**: no raw key, and a hop on the way did not report its transformation: for a
  human to check, never assumed clean;
* **rebuild**: personal data reaches it (raw, transformed, masked or aggregated) and no raw copy
  of the key does: it is cleaned by running its producers again once what they read is clean;
* datasets reached only by influence (a join or filter on the data: no value copied) are listed
  apart, and model versions trained on a reached column are listed to retrain.

Places come in an order in which nothing rebuilt re-reads a place not cleaned yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import networkx as nx

from graph.db import Graph
from impact.answers import ModelVersion, clamp_depth
from impact.where import LABELS, Reach, where

ACTIONS = ("delete by key", "unverified", "rebuild")
REBUILT = frozenset({"raw", "transformed", "masked", "aggregated"})
"""Labels of personal data (not the key) that rebuilding from cleaned sources removes."""
# how a namespace's scheme quotes identifiers; a scheme not listed is not SQL (files, topics)
_QUOTES = {**dict.fromkeys(("postgres", "postgresql", "redshift", "snowflake", "trino", "presto",
                            "duckdb", "sqlite", "oracle", "mssql", "sqlserver", "db2", "teradata",
                            "vertica", "athena", "hive", "databricks", "clickhouse"), '"'),
           **dict.fromkeys(("mysql", "mariadb", "bigquery", "spanner"), "`")}


@dataclass(frozen=True)
class Key:
    namespace: str
    dataset: str
    column: str

    @property
    def text(self) -> str:
        return f"{self.namespace}:{self.dataset}.{self.column}"


@dataclass(frozen=True)
class Place:
    """One dataset the subject's data reaches, and how it is cleaned."""

    step: int
    dataset: str  # 'namespace:name', its current name
    action: str  # one of ACTIONS
    key_columns: tuple[str, ...]  # the columns that carry a key there (delete by key)
    statement: str | None  # a parameterised template of the deletion (:key), where it is SQL
    producers: tuple[str, ...]  # the jobs that write it (run again to rebuild it)
    after: tuple[str, ...]  # the places to clean before it
    reached: tuple[str, ...]  # 'source -> column (label)': what of the subject's data lands here
    other_names: tuple[str, ...]  # its other names (symlinks, aliases), and a name it had before
    note: str
    namespace: str = ""  # the dataset's namespace and name apart
    name: str = ""


@dataclass(frozen=True)
class ErasurePlan:
    keys: tuple[str, ...]
    personal: tuple[str, ...]  # the personal columns of the key tables (tagged or named)
    places: tuple[Place, ...]
    influenced: tuple[str, ...]  # reached only by influence (join, filter): no value copied
    models: tuple[ModelVersion, ...]  # trained on a reached column: retrain them
    depth: int

    def counts(self) -> dict[str, int]:
        return {a: sum(1 for p in self.places if p.action == a) for a in ACTIONS}


def erasure_plan(graph: Graph, keys: list[Key], pii_tag: str | None = "PII",
                 personal: tuple[str, ...] = (), depth: int | None = None) -> ErasurePlan:
    """The plan for the subject whose key is in ``keys`` (each a column); ``personal``: more
    column names of the key tables that hold their data, beside those tagged ``pii_tag``."""
    if not keys:
        raise ValueError("an erasure plan needs at least one key column")
    depth = clamp_depth(depth)
    sources = {k.text: k for k in keys}
    tables = list(dict.fromkeys((k.namespace, k.dataset) for k in keys))
    found: list[Key] = []
    if pii_tag:
        found += [Key(r["namespace"], r["dataset"], r["column"]) for r in graph.read(
            "erasure/personal_columns", tag=pii_tag.lower(),
            tables=[{"namespace": ns, "dataset": ds} for ns, ds in tables])]
    if personal:
        found += [Key(r["namespace"], r["dataset"], r["column"]) for r in graph.read(
            "erasure/named_columns", names=list(personal),
            tables=[{"namespace": ns, "dataset": ds} for ns, ds in tables])]
    extra = {k.text: k for k in found if k.text not in sources}
    # the keys first: where() says NotFound for a key column that is not in the graph
    reports = {text: where(graph, k.namespace, k.dataset, k.column, depth)
               for text, k in (sources | extra).items()}
    return _plan(graph, keys, list(extra.values()), reports, depth)


def _plan(graph: Graph, keys: list[Key], extra: list[Key], reports: dict[str, Any],
          depth: int) -> ErasurePlan:
    key_texts = {k.text for k in keys}
    table = {k.text: (k.namespace, k.dataset) for k in (*keys, *extra)}
    by_place: dict[tuple[str, str], list[tuple[str, Reach]]] = {}
    for text, report in reports.items():
        for r in report.reaches:
            table[f"{r.namespace}:{r.dataset}.{r.column}"] = (r.namespace, r.dataset)
            by_place.setdefault((r.namespace, r.dataset), []).append((text, r))
    # the data's flow between datasets, from the steps of every reach
    flow: nx.DiGraph[tuple[str, str]] = nx.DiGraph()
    flow.add_nodes_from(table.values())
    for report in reports.values():
        for r in report.reaches:
            for s in r.steps:
                if s.source in table and s.target in table and table[s.source] != table[s.target]:
                    flow.add_edge(table[s.source], table[s.target])
    models = tuple({(v.namespace, v.name, v.version): v for report in reports.values()
                    for v in report.models}.values())
    trained = {(v.namespace, v.name) for v in models}  # models are retrained, not cleaned
    # each place under its current name (a table renamed since: lifecycleStateChange RENAME)
    facts = {(r["namespace"], r["name"]): r for r in graph.read("erasure/places", datasets=[
        {"namespace": ns, "name": name} for ns, name in sorted(set(by_place) | set(table.values()))])}
    current = {p: (f["renamedToNamespace"], f["renamedToName"]) if f["renamedToName"] else p
               for p, f in facts.items()}
    flow = nx.relabel_nodes(flow, {p: current.get(p, p) for p in flow.nodes}, copy=True)
    flow.remove_edges_from(nx.selfloop_edges(flow))
    merged: dict[tuple[str, str], list[tuple[str, Reach]]] = {}
    names: dict[tuple[str, str], set[str]] = {}
    for place, reached in by_place.items():
        now = current.get(place, place)
        merged.setdefault(now, []).extend(reached)
        names.setdefault(now, set()).update(
            [*(facts.get(place, {}).get("otherNames") or ()),
             *([f"{place[0]}:{place[1]}"] if now != place else [])])
    decided: dict[tuple[str, str], tuple[str, tuple[str, ...], tuple[str, ...]]] = {}
    for place, reached in merged.items():
        if place in trained:
            continue
        raw_keys = tuple(sorted({r.column for text, r in reached
                                 if text in key_texts and r.label == "raw"}))
        labels = {r.label for text, r in reached if text not in key_texts or r.label != "raw"}
        lines = tuple(dict.fromkeys(f"{text} -> {r.column} ({r.label})" for text, r in sorted(
            reached, key=lambda x: (LABELS.index(x[1].label), x[0], x[1].column))))
        if raw_keys:
            decided[place] = ("delete by key", raw_keys, lines)
        elif "unknown" in labels:
            decided[place] = ("unverified", (), lines)
        elif labels & REBUILT:
            decided[place] = ("rebuild", (), lines)
        else:
            decided[place] = ("influenced", (), lines)
    for k in keys:  # a key's own table: its rows are found by the key itself
        place = current.get((k.namespace, k.dataset), (k.namespace, k.dataset))
        _, columns, lines = decided.get(place, ("", (), ()))
        decided[place] = ("delete by key", tuple(sorted({*columns, k.column})), lines)
    influenced = sorted(f"{ns}:{name}" for (ns, name), d in decided.items() if d[0] == "influenced")
    cleaned = {p for p, d in decided.items() if d[0] != "influenced"}
    writers = {current.get(p, p): f.get("writers") or () for p, f in facts.items()}
    places = []
    for i, place in enumerate(_order(flow, cleaned), 1):
        action, columns, lines = decided[place]
        ns, name = place
        producers = tuple(sorted(set(writers.get(place, ()))))
        statement = _statement(ns, name, columns) if action == "delete by key" else None
        places.append(Place(i, f"{ns}:{name}", action, columns, statement, producers,
                            _after(flow, place, cleaned), lines, tuple(sorted(names.get(place, ()))),
                            _note(action, columns, statement, producers, ns), ns, name))
    return ErasurePlan(tuple(k.text for k in keys), tuple(k.text for k in extra), tuple(places),
                       tuple(influenced), models, depth)


def _order(flow: nx.DiGraph[tuple[str, str]], places: set[tuple[str, str]]
           ) -> list[tuple[str, str]]:
    """The places in an order of the data's flow (a cycle's members together, by name)."""
    condensed = nx.condensation(flow)
    members = {n: sorted(condensed.nodes[n]["members"]) for n in condensed.nodes}
    ordered = [d for n in nx.lexicographical_topological_sort(condensed, key=lambda n: members[n][0])
               for d in members[n]]
    return [d for d in ordered if d in places]


def _after(flow: nx.DiGraph[tuple[str, str]], place: tuple[str, str],
           places: set[tuple[str, str]]) -> tuple[str, ...]:
    """The nearest places upstream of ``place`` (each cleaned before it)."""
    before = (nx.ancestors(flow, place) & places) - {place}
    nearest = {p for p in before if not any(p in nx.ancestors(flow, q) for q in before if q != p)}
    return tuple(sorted(f"{ns}:{name}" for ns, name in nearest))


def _statement(namespace: str, name: str, columns: tuple[str, ...]) -> str | None:
    quote = _QUOTES.get(namespace.split("://", 1)[0].lower())
    if quote is None or not columns:
        return None

    def q(part: str) -> str:
        return quote + part.replace(quote, quote * 2) + quote

    table = ".".join(q(p) for p in name.split("."))
    return f"DELETE FROM {table} WHERE " + " OR ".join(f"{q(c)} = :key" for c in columns)


def _note(action: str, columns: tuple[str, ...], statement: str | None,
          producers: tuple[str, ...], namespace: str) -> str:
    if action == "delete by key":
        return ("delete the subject's rows" if statement else
                f"delete the subject's rows by {', '.join(columns)} (not SQL: {namespace})")
    if action == "rebuild":
        return ("run again, after the places before it: " + ", ".join(producers) if producers
                else "nothing writes it now: rebuild or drop it by hand")
    return "a hop did not report its transformation: check by hand (may hold a raw copy)"
