"""Checking the rules of a policy file (impact.policy.rules) against the graph.

A ``flow`` rule selects source columns (by tag, or by name patterns) and target columns, and says
what every path from one to the other must be:

* ``never``: no path at all: any reach of a source's data into a target is a violation;
* ``masked``: every path passes a masking step. The reach of a source's data into a target is
  labelled by its most exposing path (impact.where): ``raw`` and ``transformed`` violate;
  ``unknown`` (a hop whose producer reported no transformation) violates as **unverified**
  unless the rule allows it; ``aggregated`` violates unless the rule says an aggregation masks;
  ``masked`` and ``influence`` (a join, filter or group-by key: the value is not copied) hold.

A ``metadata`` rule selects datasets (by tag or name patterns) and lists what each must have: an
owner, a description, a schema, a producer (a job writes it), column lineage into its columns
(asked only of a dataset that has a producer). A dataset that lacks one is a violation naming
what it lacks.

A flow rule with no column and no tag in its ``from`` selects datasets: for ``never`` a dataset-level
path (a job that reads one and writes the other, transitively) is a violation too.

Three rules walk dataset-level lineage (impact.policy.paths):

* ``through``: every path from a source to a target passes a checkpoint (a job or a dataset the
  rule names); a target reached by a path that avoids them all is a violation, shown with that
  path. Columns selected in ``from`` are walked by column lineage, datasets by dataset lineage.
* ``residency``: data of a dataset in one region never reaches a dataset of another region (or,
  as the rule says, one with no region). A violation is the pair of the dataset of the region and
  each dataset of another region (or of none) its data reaches through datasets of no region, with
  the path between them.
* ``sources``: every dataset at the root of a selected sink's upstream lineage is allowed.

Each violation carries the path node by node, each hop with its job, transformation, masking and
run. A waiver that covers the target accepts a violation until its date; after it, the violation
counts again and says the waiver expired.

Every violation has an **anchor**: the dataset whose lineage decides it (the source's dataset; a
``sources`` rule's sink; a ``metadata`` rule's dataset). A rule can be checked for some anchors
only (:class:`Scope`): that is how the rules are kept up to date after each batch the worker
loads (impact.policy.watch) without walking the whole graph.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from typing import Any

import networkx as nx

from graph.db import Graph
from graph.errors import NotFound
from impact.answers import clamp_depth
from impact.blast_radius import dataset_blast_radius
from impact.policy import paths
from impact.policy.paths import Node
from impact.policy.rules import Policies, Rule, Selector, Waiver
from impact.tag_reach import tagged_columns
from impact.where import Hop, basis, where

MAX_SOURCES = 10_000
"""The most source columns (or datasets) one rule selects; past it the report says so."""

FIELD_TAG = "\x1f"
"""Separates a field's name from its tag in a dataset's ``fieldTags`` (written by ingest.facets)."""
ALL = 2**62
"""A query's limit when the rule filters what it answers (by tag) in Python."""

_VIOLATES_MASKED = {"raw", "transformed"}


@dataclass(frozen=True)
class Violation:
    rule: Rule
    source: str
    """``namespace:dataset.column`` (or ``namespace:dataset`` for a dataset-level rule)."""
    target: str
    label: str
    """How the data arrives: raw, transformed, unverified, aggregated, masked, influence, or
    ``reaches`` for a dataset-level path."""
    steps: tuple[Hop, ...]
    """The path, hop by hop, from the source to the target (empty for a dataset-level path)."""
    path: tuple[str, ...] = ()
    """A dataset-level path's nodes, source first."""
    waiver: Waiver | None = None
    """The waiver that accepts it (still in force), if any."""
    expired: Waiver | None = None
    """A waiver that covered it but has expired."""
    anchor: str = ""
    """``namespace:name`` of the dataset whose lineage decides it (see the module's doc)."""
    column_of: str = ""
    """``namespace:name`` of the target's dataset when the target is a column."""

    @property
    def target_dataset(self) -> str:
        """``namespace:name`` of the dataset the target is or is a column of."""
        return self.column_of or self.target

    def what(self) -> str:
        """The violation in a line."""
        kind = self.rule.kind
        if kind == "metadata":
            return f"{self.target} lacks {self.label}"
        if kind == "quality":
            return f"{self.target}: {self.label}"
        if kind == "sources":
            return f"{self.target} derives from {self.source}, {self.label}"
        if kind == "residency":
            return f"{self.source} reaches {self.target}: {self.label}"
        return f"{self.source} reaches {self.target} {self.label}"

    @property
    def key(self) -> str:
        """What makes it the same violation from one check to the next."""
        return f"{self.rule.id}|{self.source}|{self.target}"

    @property
    def counts(self) -> bool:
        """It counts against the rule: not accepted by a waiver in force."""
        return self.waiver is None


@dataclass(frozen=True)
class RuleResult:
    rule: Rule
    sources: int
    """How many sources the rule selected and walked from."""
    violations: tuple[Violation, ...]
    truncated: bool = False

    @property
    def holds(self) -> bool:
        return not any(v.counts for v in self.violations)


@dataclass(frozen=True)
class PolicyReport:
    path: str
    checked_at: datetime
    results: tuple[RuleResult, ...]

    @property
    def violations(self) -> tuple[Violation, ...]:
        return tuple(v for r in self.results for v in r.violations)

    def failed(self) -> bool:
        """An error-severity violation counts: the check fails (exit 1)."""
        return any(v.counts and v.rule.severity == "error" for v in self.violations)


@dataclass(frozen=True)
class Scope:
    """The anchors a check is limited to: after a batch, the datasets it touched with those
    upstream of them (whose paths may have changed) and those downstream (whose origins may
    have changed); see impact.policy.watch."""

    touched: frozenset[tuple[str, str]]
    """The datasets whose lineage the batch changed (impact.policy.prints)."""
    upstream: frozenset[tuple[str, str]]
    downstream: frozenset[tuple[str, str]]
    measured: frozenset[tuple[str, str]] = frozenset()
    """The datasets whose per-run figures (or lineage) the batch changed: a quality rule's."""

    def anchors(self, rule: Rule) -> frozenset[tuple[str, str]]:
        """The anchors of ``rule``'s violations the batch may have changed."""
        if rule.kind == "quality":
            return self.measured | self.touched
        if rule.kind == "metadata":
            return self.touched
        return self.downstream if rule.kind == "sources" else self.upstream


def check(graph: Graph, policies: Policies, depth: int | None = None,
          today: date | None = None) -> PolicyReport:
    """Every rule of ``policies`` against the graph as it is now."""
    now = datetime.now(UTC)
    day = today or now.date()
    return PolicyReport(policies.path, now,
                        tuple(check_rule(graph, rule, depth, day) for rule in policies.rules))


def check_rule(graph: Graph, rule: Rule, depth: int | None, today: date,
               within: frozenset[tuple[str, str]] | None = None) -> RuleResult:
    """``rule`` against the graph; with ``within``, only its violations anchored at those
    datasets (``Scope.anchors``)."""
    if rule.metadata is not None:
        return _metadata_rule(graph, rule, today, within)
    if rule.residency is not None:
        return _residency_rule(graph, rule, depth, today, within)
    if rule.sources is not None:
        return _sources_rule(graph, rule, depth, today, within)
    if rule.quality is not None:
        return _quality_rule(graph, rule, today, within)
    flow = rule.flow
    assert flow is not None  # a rule is of one kind (impact.policy.rules)
    if flow.source.tag is None and flow.source.column is None:
        return _dataset_rule(graph, rule, depth, today, within)
    sources = list(_source_columns(graph, flow.source, MAX_SOURCES + 1, within))
    if flow.must == "through":
        return _through_columns(graph, rule, sources, depth, today)
    found: list[Violation] = []
    for ns, ds, col in sources[:MAX_SOURCES]:
        source = f"{ns}:{ds}.{col}"
        try:
            reaches = where(graph, ns, ds, col, depth).reaches
        except NotFound:  # a field a tags facet names that no schema or lineage holds
            continue
        for reach in reaches:
            if not flow.target.matches(reach.namespace, reach.dataset, reach.column):
                continue
            label = _verdict(rule, reach.label)
            if label is None:
                continue
            target = f"{reach.namespace}:{reach.dataset}.{reach.column}"
            steps = tuple(replace(s, job=s.job_key, job_namespace=None) for s in reach.steps)
            found.append(_waived(Violation(rule, source, target, label, steps,
                                           anchor=f"{ns}:{ds}",
                                           column_of=f"{reach.namespace}:{reach.dataset}"),
                                 rule, reach.namespace, reach.dataset, reach.column, today,
                                 (ns, ds, col)))
    return RuleResult(rule, min(len(sources), MAX_SOURCES), tuple(found),
                      len(sources) > MAX_SOURCES)


def _metadata_rule(graph: Graph, rule: Rule, today: date,
                   within: frozenset[tuple[str, str]] | None) -> RuleResult:
    meta = rule.metadata
    assert meta is not None
    selected = meta.datasets
    rows = graph.read("policies/metadata", namespace=_regex(selected.namespace),
                      dataset=_regex(selected.dataset),
                      tag=selected.tag.strip().lower() if selected.tag else None,
                      datasets=_listed(within), limit=MAX_SOURCES + 1)
    found: list[Violation] = []
    for row in rows[:MAX_SOURCES]:
        has = {"owner": row["owner"], "description": row["description"], "schema": row["schema"],
               "producer": row["producer"],
               # asked of a derived dataset only, as lineage health asks it (docs/health.md)
               "column-lineage": row["columnLineage"] or not row["derived"]}
        missing = [item for item in meta.require if not has[item]]
        if missing:
            name = f"{row['namespace']}:{row['name']}"
            found.append(_waived(Violation(rule, name, name, ", ".join(missing), (), anchor=name),
                                 rule, row["namespace"], row["name"], None, today,
                                 (row["namespace"], row["name"], None)))
    return RuleResult(rule, min(len(rows), MAX_SOURCES), tuple(found), len(rows) > MAX_SOURCES)


def _verdict(rule: Rule, label: str) -> str | None:
    """How a reach labelled ``label`` violates the rule, or None when it holds."""
    flow = rule.flow
    assert flow is not None
    if flow.must == "never":
        return label
    if label in _VIOLATES_MASKED:
        return label
    if label == "unknown":
        return None if flow.unverified_allowed else "unverified"
    if label == "aggregated":
        return None if flow.aggregation_masks else label
    return None  # masked, influence


def _dataset_rule(graph: Graph, rule: Rule, depth: int | None, today: date,
                  within: frozenset[tuple[str, str]] | None) -> RuleResult:
    """A rule whose sources are datasets: any dataset-level path to a target violates
    ``never``; ``masked`` is checked on every column of the source datasets; ``through`` on
    every dataset-level path."""
    flow = rule.flow
    assert flow is not None
    datasets = _datasets(graph, flow.source, within)
    chosen = [(row["namespace"], row["name"]) for row in datasets[:MAX_SOURCES]]
    if flow.must == "through":
        found = _through_datasets(graph, rule, chosen, depth, today)
        return RuleResult(rule, len(chosen), found, len(datasets) > MAX_SOURCES)
    found_: list[Violation] = []
    for ns, name in chosen:
        if flow.must == "masked":  # every column of this dataset is a source
            of_dataset = Selector(namespace=_exact(ns), dataset=_exact(name), column="*")
            found_ += check_rule(graph, replace(rule, flow=replace(flow, source=of_dataset)),
                                 depth, today, frozenset({(ns, name)})).violations
            continue
        for item in dataset_blast_radius(graph, ns, name, depth).impacted:
            if item.kind != "dataset" or not flow.target.matches(item.namespace, item.name):
                continue
            found_.append(_waived(Violation(rule, f"{ns}:{name}", f"{item.namespace}:{item.name}",
                                            "reaches", (), tuple(item.path), anchor=f"{ns}:{name}"),
                                  rule, item.namespace, item.name, None, today, (ns, name, None)))
    return RuleResult(rule, len(chosen), tuple(found_), len(datasets) > MAX_SOURCES)


def _datasets(graph: Graph, selector: Selector,
              within: frozenset[tuple[str, str]] | None) -> list[dict[str, Any]]:
    """The datasets ``selector`` selects (tags included), all or only those ``within``, sorted."""
    if within is None:
        rows = graph.read("policies/datasets", namespace=_regex(selector.namespace),
                          dataset=_regex(selector.dataset),
                          limit=MAX_SOURCES + 1 if selector.tag is None else ALL)
    else:
        rows = graph.read("policies/dataset_tags", datasets=_listed(_named(within, (selector,))))
    return [r for r in rows if selector.selects(r["namespace"], r["name"], None, r["tags"])]


def _through_datasets(graph: Graph, rule: Rule, sources: list[tuple[str, str]],
                      depth: int | None, today: date) -> tuple[Violation, ...]:
    """``must: through`` on dataset lineage: each target a path reaches around every
    checkpoint."""
    flow = rule.flow
    assert flow is not None
    lineage = paths.downstream(graph, sources, depth)
    found = []
    for ns, name in sources:
        start: Node = ("dataset", ns, name)
        if start not in lineage or _is_checkpoint(rule, start, None):
            continue
        for node, path in paths.walk(lineage, start, lambda n, e: not _is_checkpoint(rule, n, e),
                                            lambda n: False, depth):
            if node[0] != "dataset" or not flow.target.matches(node[1], node[2]):
                continue
            found.append(_waived(Violation(
                rule, f"{ns}:{name}", paths.key(node), f"around {_checkpoints(rule)}",
                paths.steps(lineage, path), anchor=f"{ns}:{name}"),
                rule, node[1], node[2], None, today, (ns, name, None)))
    return tuple(found)


def _through_columns(graph: Graph, rule: Rule, sources: list[tuple[str, str, str]],
                     depth: int | None, today: date) -> RuleResult:
    """``must: through`` on column lineage: each target column a path reaches around every
    checkpoint."""
    flow = rule.flow
    assert flow is not None
    chosen = sources[:MAX_SOURCES]
    lineage = nx.DiGraph()
    starts = [{"namespace": ns, "dataset": ds, "column": col} for ns, ds, col in chosen]
    for i in range(0, len(starts), paths.STARTS_PER_QUERY):
        for row in graph.read("policies/column_downstream",
                              columns=starts[i:i + paths.STARTS_PER_QUERY],
                              depth=clamp_depth(depth)):
            here = (row["namespace"], row["dataset"], row["column"])
            lineage.add_node(here)
            for s in row["sources"]:
                lineage.add_edge((s["namespace"], s["dataset"], s["column"]), here, **s)
    found = []
    for ns, ds, col in chosen:
        start = (ns, ds, col)
        if start not in lineage or _is_checkpoint(rule, ("dataset", ns, ds), None):
            continue
        for node, path in paths.walk(
                lineage, start,
                lambda n, e: not _is_checkpoint(rule, ("dataset", n[0], n[1]), e),
                lambda n: False, depth):
            if not flow.target.matches(*node):
                continue
            hops = tuple(_column_step(lineage, a, b) for a, b in zip(path, path[1:], strict=False)
                         if not lineage.edges[a, b]["alias"])
            found.append(_waived(Violation(
                rule, f"{ns}:{ds}.{col}", f"{node[0]}:{node[1]}.{node[2]}",
                f"around {_checkpoints(rule)}", hops, anchor=f"{ns}:{ds}",
                column_of=f"{node[0]}:{node[1]}"),
                rule, node[0], node[1], node[2], today, (ns, ds, col)))
    return RuleResult(rule, len(chosen), tuple(found), len(sources) > MAX_SOURCES)


def _column_step(lineage: nx.DiGraph, a: tuple[str, str, str], b: tuple[str, str, str]) -> Hop:
    e = lineage.edges[a, b]
    return Hop(f"{a[0]}:{a[1]}.{a[2]}", f"{b[0]}:{b[1]}.{b[2]}", e["job"], e["run"], e["type"],
                e["subtype"], bool(e["masking"]), None, None,
                basis(e["type"], e["subtype"], bool(e["masking"])))


def _is_checkpoint(rule: Rule, node: Node, edge: dict[str, Any] | None) -> bool:
    """Whether the node a path enters, or the job of the edge it enters by, is a checkpoint."""
    flow = rule.flow
    assert flow is not None
    job = (edge or {}).get("job") or ""
    job_ns, _, job_name = job.partition(":") if job else ("", "", "")
    return any(c.matches(*node) or (edge is not None and not edge.get("alias") and job
                                    and c.matches("job", job_ns, job_name))
               for c in flow.through)


def _checkpoints(rule: Rule) -> str:
    flow = rule.flow
    assert flow is not None
    return " and ".join(c.describe() for c in flow.through)


def _residency_rule(graph: Graph, rule: Rule, depth: int | None, today: date,
                    within: frozenset[tuple[str, str]] | None) -> RuleResult:
    """Each dataset in a region, walked downstream through datasets of no region to the first
    dataset of another region; with ``unregioned: outside`` each dataset of no region on the way
    is a violation too."""
    residency = rule.residency
    assert residency is not None
    if within is None:
        rows = graph.read("policies/datasets", namespace=None, dataset=None, limit=ALL)
    else:
        every = tuple(s for _, selectors in residency.regions for s in selectors)
        rows = graph.read("policies/dataset_tags", datasets=_listed(_named(within, every)))
    regioned = [(r["namespace"], r["name"], home) for r in rows
                if (home := residency.regions_of(r["namespace"], r["name"], r["tags"]))]
    chosen = regioned[:MAX_SOURCES]
    lineage = paths.downstream(graph, [(ns, name) for ns, name, _ in chosen], depth)

    def regions(node: Node) -> tuple[str, ...]:
        return residency.regions_of(node[1], node[2], paths.tags(lineage, node))

    found = []
    for ns, name, own in chosen:
        for node, path in paths.walk(
                lineage, ("dataset", ns, name), lambda n, e: True,
                # past a dataset of a region, the data is that region's (or a violation already);
                # past one of no region it goes on, so that every other region it lands in is named
                lambda n: n[0] == "dataset" and bool(regions(n)),
                depth):
            there = regions(node)
            if node[0] != "dataset" or set(own) & set(there) or not (
                    there or residency.unregioned_outside):
                continue
            label = (f"from {' and '.join(own)} to "
                     + (" and ".join(there) if there else "a dataset of no region"))
            found.append(_waived(Violation(rule, f"{ns}:{name}", paths.key(node), label,
                                           paths.steps(lineage, path),
                                           anchor=f"{ns}:{name}"),
                                 rule, node[1], node[2], None, today, (ns, name, None)))
    return RuleResult(rule, len(chosen), tuple(found), len(regioned) > MAX_SOURCES)


def _quality_rule(graph: Graph, rule: Rule, today: date,
                  within: frozenset[tuple[str, str]] | None) -> RuleResult:
    """Each selected column's (or, for row-count, dataset's) latest metric out of bounds."""
    quality = rule.quality
    assert quality is not None
    found = []
    checked = 0
    for row in graph.read("policies/quality", datasets=_listed(within)):
        ns, name = row["namespace"], row["name"]
        metrics: dict[str, Any] = json.loads(row["columnMetrics"] or "{}")
        if metrics.get("_truncated"):
            metrics = {}
        tags: dict[str, list[str]] = {}
        for tagged in row["fieldTags"]:
            column, _, tag = tagged.partition(FIELD_TAG)
            tags.setdefault(column, []).append(tag)
        for column, tag in row["apiTags"]:
            tags.setdefault(column, []).append(tag)
        if quality.metric == "row-count":
            if quality.columns.selects(ns, name, None, ()) and row["rowCount"] is not None:
                checked += 1
                found += _bounded(rule, ns, name, None, float(row["rowCount"]), today)
            continue
        for column, measured in sorted(metrics.items()):
            if not isinstance(measured, dict) or not quality.columns.selects(
                    ns, name, column, tags.get(column, ())):
                continue
            value = _metric(quality.metric, measured, row["rowCount"])
            if value is not None:
                checked += 1
                found += _bounded(rule, ns, name, column, value, today)
    return RuleResult(rule, checked, tuple(found))


def _metric(metric: str, measured: dict[str, Any], row_count: Any) -> float | None:
    """A column's metric from its dataQualityMetrics entry; None when the producer did not give
    what it needs."""
    nulls, distinct = measured.get("nullCount"), measured.get("distinctCount")
    if metric == "null-count":
        return None if nulls is None else float(nulls)
    if metric == "distinct-count":
        return None if distinct is None else float(distinct)
    rows = measured.get("count", row_count)
    if nulls is None or not rows:
        return None
    return float(nulls) / float(rows)


def _bounded(rule: Rule, ns: str, name: str, column: str | None, value: float,
             today: date) -> list[Violation]:
    quality = rule.quality
    assert quality is not None
    over = quality.above is not None and value > quality.above
    under = quality.below is not None and value < quality.below
    if not (over or under):
        return []
    bound = f"above {quality.above:g}" if over else f"below {quality.below:g}"
    target = f"{ns}:{name}" + (f".{column}" if column else "")
    label = f"{quality.metric} {value:.4g} is {bound}"
    return [_waived(Violation(rule, target, target, label, (), anchor=f"{ns}:{name}",
                              column_of=f"{ns}:{name}"), rule, ns, name, column, today,
                    (ns, name, column))]


def _sources_rule(graph: Graph, rule: Rule, depth: int | None, today: date,
                  within: frozenset[tuple[str, str]] | None) -> RuleResult:
    """Each selected sink's upstream roots, each one no ``allow`` selects a violation."""
    sources = rule.sources
    assert sources is not None
    sinks = _datasets(graph, sources.sinks, within)
    chosen = sinks[:MAX_SOURCES]
    found = []
    for row in chosen:
        ns, name = row["namespace"], row["name"]
        lineage = paths.upstream(graph, [(ns, name)], depth)
        sink: Node = ("dataset", ns, name)
        if sink not in lineage:
            continue
        for root, path in paths.roots(lineage, sink):
            if any(a.selects(root[1], root[2], None, paths.tags(lineage, root))
                   for a in sources.allow):
                continue
            found.append(_waived(Violation(rule, paths.key(root), f"{ns}:{name}",
                                           "not an allowed source",
                                           paths.steps(lineage, path),
                                           anchor=f"{ns}:{name}"),
                                 rule, root[1], root[2], None, today, (root[1], root[2], None)))
    return RuleResult(rule, len(chosen), tuple(found), len(sinks) > MAX_SOURCES)


def _waived(violation: Violation, rule: Rule, namespace: str, dataset: str, column: str | None,
            today: date, origin: tuple[str, str, str | None]) -> Violation:
    """The violation as the rule's waivers take it: a waiver covers it when its target
    (``namespace``, ``dataset``, ``column``) is the waiver's, and, for a waiver of one path,
    its source (``origin``) is the waiver's ``from``."""
    expired = None
    for waiver in rule.waivers:
        if not waiver.selector.matches(namespace, dataset, column):
            continue
        if waiver.source is not None and not waiver.source.matches(*origin):
            continue
        if waiver.holds(today):
            return replace(violation, waiver=waiver)
        expired = waiver
    return violation if expired is None else replace(violation, expired=expired)


def _source_columns(graph: Graph, selector: Selector, limit: int,
                    within: frozenset[tuple[str, str]] | None) -> Iterator[tuple[str, str, str]]:
    if within is not None:
        for row in graph.read("policies/dataset_columns",
                              datasets=_listed(_named(within, (selector,)))):
            if (row["node"] or selector.tag is not None) and selector.selects(
                    row["namespace"], row["dataset"], row["column"], row["tags"]):
                yield row["namespace"], row["dataset"], row["column"]
        return
    if selector.tag is not None:
        for c in tagged_columns(graph, selector.tag):
            if selector.matches(c.namespace, c.dataset, c.column):
                yield c.namespace, c.dataset, c.column
        return
    for row in graph.read("policies/columns", namespace=_regex(selector.namespace),
                          dataset=_regex(selector.dataset), column=_regex(selector.column),
                          limit=limit):
        yield row["namespace"], row["dataset"], row["column"]


def _named(within: frozenset[tuple[str, str]], selectors: tuple[Selector, ...]
           ) -> frozenset[tuple[str, str]]:
    """The datasets of ``within`` whose names some selector could select (its tag aside): what
    is worth reading of them."""
    return frozenset(d for d in within if any(s.matches(*d) for s in selectors))


def _listed(within: frozenset[tuple[str, str]] | None) -> list[dict[str, str]] | None:
    return None if within is None else [{"namespace": ns, "name": name}
                                        for ns, name in sorted(within)]


def _regex(glob: str | None) -> str | None:
    """A glob as the regular expression Neo4j's ``=~`` matches whole (Java's syntax)."""
    if glob is None or glob == "*":
        return None
    return fnmatch.translate(glob)


def _exact(name: str) -> str:
    """A name as a glob that matches only itself."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)
