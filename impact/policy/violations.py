"""The violations of policy rules lineage-graph keeps in Neo4j (``:PolicyViolation`` nodes), each
with when it was first and last seen and when it cleared; what ``GET /api/v1/policies/violations``
lists and ``/metrics`` counts.

A rule checked for some anchors (impact.policy.check.Scope) replaces what is stored for those anchors
only: a violation seen again is last seen now, a new one (or one that had cleared) first seen
now, and one no longer seen is cleared now. :func:`record` says which appeared and which
cleared, for the webhook (impact.policy.watch).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from graph.db import Graph
from impact.policy.check import RuleResult, Violation


@dataclass(frozen=True)
class ViolationChange:
    """A violation that appeared or cleared, as the store holds it."""

    event: str
    """``appeared`` or ``cleared``."""
    key: str
    rule: str
    violation: Violation | None
    """The violation when it appeared; None when it cleared (it is no longer seen)."""
    at: str


def record(graph: Graph, checks: Iterable[tuple[RuleResult, frozenset[tuple[str, str]] | None]],
           at: datetime, retired_rules: Sequence[str] = ()) -> list[ViolationChange]:
    """Store, in one transaction, what each check found: a rule's result for the anchors it
    checked (None: every anchor); and clear every open violation of ``retired_rules`` (rules no
    longer in the file). One transaction, so that a round that fails (Neo4j away) stores nothing
    and, tried again, reports every change it makes."""
    checks = list(checks)
    results = [result for result, _ in checks]
    when = at.isoformat()
    # what the round owns: the open violations of each rule at the anchors it checked (a
    # violation's key decides its anchor), and every open violation of the rules no longer in
    # the file
    owned_by: dict[str, set[str] | None] = {
        result.rule.id: None if anchors is None else {f"{ns}:{n}" for ns, n in anchors}
        for result, anchors in checks}
    scopes = list(owned_by.values())
    everywhere = any(names is None for names in scopes)
    anchor_names = None if everywhere else sorted(set().union(*(s for s in scopes if s)))
    before: dict[str, dict[str, Any]] = {}
    if owned_by:
        before = {row["key"]: row for row in graph.read(
            "policies/open_violations", rules=sorted(owned_by), anchors=anchor_names)
            if (names := owned_by[row["rule"]]) is None or row["anchor"] in names}
    if retired_rules:
        before |= {row["key"]: row for row in graph.read(
            "policies/open_violations", rules=list(retired_rules), anchors=None)}
    owned = set(before)
    now = {v.key: v for r in results for v in r.violations}
    steps: list[tuple[str, dict[str, Any]]] = []
    if now:
        steps.append(("policies/save_violations", {"rows": [_row(v) for v in now.values()],
                                                   "at": when}))
    gone = sorted(owned - now.keys())
    if gone:
        steps.append(("policies/clear_violations", {"keys": gone, "at": when}))
    if steps:
        graph.write(steps)
    changes = [ViolationChange("appeared", k, v.rule.id, v, when) for k, v in sorted(now.items())
               if k not in before]
    changes += [ViolationChange("cleared", k, before[k]["rule"], None, when) for k in gone]
    return changes


def _row(v: Violation) -> dict[str, Any]:
    # a sources rule's source is a dataset (the root) the anchor (the sink) derives from
    root = v.source if v.rule.kind == "sources" and not v.source.startswith("job ") else ""
    datasets = sorted({v.anchor, v.target_dataset, root} - {""})
    return {"key": v.key, "rule": v.rule.id, "severity": v.rule.severity, "kind": v.rule.kind,
            "source": v.source, "target": v.target, "anchor": v.anchor, "datasets": datasets,
            "targetDataset": v.target_dataset,
            "label": v.label, "what": v.what(), "counts": v.counts,
            "waiver": None if v.waiver is None else v.waiver.reason,
            "steps": json.dumps(_steps(v))}


def _steps(v: Violation) -> list[dict[str, Any]]:
    """The path as stored: each hop, or (a dataset-level path without hops) its nodes."""
    if v.steps:
        return [{"from": s.source, "to": s.target, "job": s.job, "run": s.run, "type": s.type,
                 "subtype": s.subtype, "masking": s.masking} for s in v.steps]
    return [{"path": list(v.path)}] if v.path else []


def listing(graph: Graph, rule: str | None = None, dataset: str | None = None,
            severity: str | None = None, state: str = "open", limit: int = 100,
            offset: int = 0) -> tuple[int, list[dict[str, Any]]]:
    """Stored violations, newest first, and how many match in all."""
    [row] = graph.read("policies/violations", rule=rule, dataset=dataset, severity=severity,
                       state=state, limit=limit, offset=offset)
    found = [{**v, "steps": json.loads(v["steps"] or "[]")} for v in row["violations"]]
    return row["total"], found


def open_counts(graph: Graph) -> list[tuple[str, str, int]]:
    """(rule, severity, how many) of the open violations that count."""
    return [(r["rule"], r["severity"], r["open"]) for r in graph.read("policies/violation_counts")]
