"""Checking the rules of a policy file (impact.policy_file) against the graph.

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
path (a job that reads one and writes the other, transitively) is a violation too. Each violation
carries the path node by node, each hop with its job, transformation, masking and run. A waiver
that covers the target accepts a violation until its date; after it, the violation counts again
and says the waiver expired.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime

from graph.db import Graph
from impact.blast_radius import dataset_blast_radius
from impact.policy_file import Policies, Rule, Selector, Waiver
from impact.tag_reach import tagged_columns
from impact.where import Step, where

MAX_SOURCES = 10_000
"""The most source columns (or datasets) one rule selects; past it the report says so."""

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
    steps: tuple[Step, ...]
    """The path, hop by hop, from the source to the target (empty for a dataset-level path)."""
    path: tuple[str, ...] = ()
    """A dataset-level path's nodes, source first."""
    waiver: Waiver | None = None
    """The waiver that accepts it (still in force), if any."""
    expired: Waiver | None = None
    """A waiver that covered it but has expired."""

    def what(self) -> str:
        """The violation in a line."""
        if self.rule.metadata is not None:
            return f"{self.target} lacks {self.label}"
        return f"{self.source} reaches {self.target} {self.label}"

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


def check(graph: Graph, policies: Policies, depth: int | None = None,
          today: date | None = None) -> PolicyReport:
    """Every rule of ``policies`` against the graph as it is now."""
    now = datetime.now(UTC)
    day = today or now.date()
    return PolicyReport(policies.path, now,
                        tuple(check_rule(graph, rule, depth, day) for rule in policies.rules))


def check_rule(graph: Graph, rule: Rule, depth: int | None, today: date) -> RuleResult:
    if rule.metadata is not None:
        return _metadata_rule(graph, rule, today)
    flow = rule.flow
    assert flow is not None  # a rule is a flow or a metadata rule (impact.policy_file)
    if flow.source.tag is None and flow.source.column is None:
        return _dataset_rule(graph, rule, depth, today)
    sources = list(_source_columns(graph, flow.source, MAX_SOURCES + 1))
    found: list[Violation] = []
    for ns, ds, col in sources[:MAX_SOURCES]:
        source = f"{ns}:{ds}.{col}"
        for reach in where(graph, ns, ds, col, depth).reaches:
            if not flow.target.matches(reach.namespace, reach.dataset, reach.column):
                continue
            label = _verdict(rule, reach.label)
            if label is None:
                continue
            target = f"{reach.namespace}:{reach.dataset}.{reach.column}"
            found.append(_waived(Violation(rule, source, target, label, reach.steps), rule,
                                 reach.namespace, reach.dataset, reach.column, today))
    return RuleResult(rule, min(len(sources), MAX_SOURCES), tuple(found),
                      len(sources) > MAX_SOURCES)


def _metadata_rule(graph: Graph, rule: Rule, today: date) -> RuleResult:
    meta = rule.metadata
    assert meta is not None
    selected = meta.datasets
    rows = graph.read("policies/metadata", namespace=_regex(selected.namespace),
                      dataset=_regex(selected.dataset),
                      tag=selected.tag.strip().lower() if selected.tag else None,
                      limit=MAX_SOURCES + 1)
    found: list[Violation] = []
    for row in rows[:MAX_SOURCES]:
        has = {"owner": row["owner"], "description": row["description"], "schema": row["schema"],
               "producer": row["producer"],
               "column-lineage": row["columnLineage"] or not row["producer"]}
        missing = [item for item in meta.require if not has[item]]
        if missing:
            name = f"{row['namespace']}:{row['name']}"
            found.append(_waived(Violation(rule, name, name, ", ".join(missing), ()), rule,
                                 row["namespace"], row["name"], None, today))
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


def _dataset_rule(graph: Graph, rule: Rule, depth: int | None, today: date) -> RuleResult:
    """A rule whose sources are datasets: any dataset-level path to a target violates
    ``never``; ``masked`` is checked on every column of the source datasets."""
    flow = rule.flow
    assert flow is not None
    datasets = graph.read("policies/datasets", namespace=_regex(flow.source.namespace),
                          dataset=_regex(flow.source.dataset), limit=MAX_SOURCES + 1)
    found: list[Violation] = []
    for row in datasets[:MAX_SOURCES]:
        ns, name = row["namespace"], row["name"]
        if flow.must == "masked":  # every column of this dataset is a source
            of_dataset = Selector(namespace=_exact(ns), dataset=_exact(name), column="*")
            found += check_rule(graph, replace(rule, flow=replace(flow, source=of_dataset)),
                                depth, today).violations
            continue
        for item in dataset_blast_radius(graph, ns, name, depth).impacted:
            if item.kind != "dataset" or not flow.target.matches(item.namespace, item.name):
                continue
            found.append(_waived(Violation(rule, f"{ns}:{name}", f"{item.namespace}:{item.name}",
                                           "reaches", (), tuple(item.path)),
                                 rule, item.namespace, item.name, None, today))
    return RuleResult(rule, min(len(datasets), MAX_SOURCES), tuple(found),
                      len(datasets) > MAX_SOURCES)


def _waived(violation: Violation, rule: Rule, namespace: str, dataset: str, column: str | None,
            today: date) -> Violation:
    expired = None
    for waiver in rule.waivers:
        if not waiver.selector.matches(namespace, dataset, column):
            continue
        if waiver.holds(today):
            return replace(violation, waiver=waiver)
        expired = waiver
    return violation if expired is None else replace(violation, expired=expired)


def _source_columns(graph: Graph, selector: Selector, limit: int) -> Iterator[tuple[str, str, str]]:
    if selector.tag is not None:
        for c in tagged_columns(graph, selector.tag):
            if selector.matches(c.namespace, c.dataset, c.column):
                yield c.namespace, c.dataset, c.column
        return
    for row in graph.read("policies/columns", namespace=_regex(selector.namespace),
                          dataset=_regex(selector.dataset), column=_regex(selector.column),
                          limit=limit):
        yield row["namespace"], row["dataset"], row["column"]


def _regex(glob: str | None) -> str | None:
    """A glob as the regular expression Neo4j's ``=~`` matches whole (Java's syntax)."""
    if glob is None or glob == "*":
        return None
    return fnmatch.translate(glob)


def _exact(name: str) -> str:
    """A name as a glob that matches only itself."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)
