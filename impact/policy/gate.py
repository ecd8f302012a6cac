"""A gate a pipeline waits on: may a job consume this dataset now, and if not, why not.

The gate looks at the dataset and at everything upstream of it (current lineage, within the
depth) and is closed by any of these causes, each reported with the path from where it happened
to the dataset gated:

* **failed-run**: the latest run of a job that writes one of them failed (or was aborted) and no
  successful write of that dataset came after it;
* **failed-assertion**: one of them carries failed data-quality assertions (dbt's tests, Great
  Expectations: ``dataQualityAssertions``);
* **quality**: an error-severity ``quality`` rule of the policy file finds a metric out of its
  bounds (``dataQualityMetrics``: ``nullCount / rowCount`` above 10% for a PII column);
* **late**: one of them is overdue by its own cadence (impact.health.freshness);
* **violation**: an error-severity violation of a policy rule whose target (where the data
  arrived) is the dataset or upstream of it. At the violation's source the gate stays open and
  the violation is listed as a note ("a violation starts here"): a system of record is not
  closed for every consumer because one of them copies it badly.

Warning-severity findings of the policy file are listed as warnings and leave the gate open.
Everything downstream of a cause is "quality at risk": :func:`gate` answers that for any dataset,
and the dataset answers (``lineage show dataset``, ``GET /api/v1/dataset``) carry it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from graph.db import Graph
from impact.answers import clamp_depth, first_words, native_time, require_dataset
from impact.health.freshness import assess
from impact.policy import kept
from impact.policy.check import check_rule
from impact.policy.rules import Policies

FAILED = ("FAIL", "ABORT")


@dataclass(frozen=True)
class Cause:
    kind: str
    """failed-run, failed-assertion, quality, late or violation."""
    dataset: str
    """``namespace:name`` where it happened."""
    what: str
    path: tuple[str, ...]
    """From ``dataset`` to the dataset gated (one node when it is the dataset itself)."""
    job: str | None = None
    run: str | None = None
    at: datetime | None = None
    rule: str | None = None
    severity: str = "error"


@dataclass(frozen=True)
class Gate:
    dataset: str
    checked_at: datetime
    causes: tuple[Cause, ...]
    """What closes the gate (severity error), what only warns (warning), and violations that
    start at the dataset (note)."""
    upstream: int = 0
    """How many datasets upstream were looked at."""
    rules: int = 0
    """How many policy rules were checked."""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def open(self) -> bool:
        return not any(c.severity == "error" for c in self.causes)

    def why(self) -> str:
        """The gate in a line: open, or closed and the first causes."""
        closing = [c for c in self.causes if c.severity == "error"]
        if not closing:
            return f"open: {self.dataset} may be consumed"
        more = f" (and {len(closing) - 3} more)" if len(closing) > 3 else ""
        return (f"closed: {self.dataset} should not be consumed: "
                + "; ".join(c.what for c in closing[:3]) + more)


def gate(graph: Graph, namespace: str, name: str, policies: Policies | None = None,
         depth: int | None = None, now: datetime | None = None,
         position: kept.LogState | None = None) -> Gate:
    """Whether ``namespace:name`` may be consumed now (see the module's doc). ``position``: the
    worker's in the event log; when the policy watch has checked everything up to it against
    the same rules, the rules' violations are read from its store (impact.policy.kept) instead
    of checking each rule."""
    now = now or datetime.now(UTC)
    me = f"{namespace}:{name}"
    rows = graph.read("impact/upstream_datasets", namespace=namespace, name=name,
                      depth=clamp_depth(depth), asOf=None, includeRetired=False)
    if not rows:
        require_dataset(graph, namespace, name)
    path_to_me: dict[str, tuple[str, ...]] = {me: (me,)}
    for r in rows:
        if r["kind"] == "dataset":
            path_to_me.setdefault(f"{r['namespace']}:{r['name']}", tuple(reversed(r["path"])))
    datasets = [(namespace, name)] + [(r["namespace"], r["name"]) for r in rows
                                      if r["kind"] == "dataset"]
    causes: list[Cause] = []
    for fact in graph.read("gate/facts", datasets=[{"namespace": ns, "name": n}
                                                   for ns, n in datasets]):
        causes += _facts(fact, path_to_me, now)
    checked = 0
    if policies is not None:
        checked = sum(1 for rule in policies.rules if rule.kind != "metadata")
        if position is not None and kept.current(graph, policies, position):
            causes += _stored(graph, me, path_to_me)
        else:
            causes += _checked(graph, policies, depth, now, frozenset(datasets), me, path_to_me)
    order = {"failed-run": 0, "failed-assertion": 1, "quality": 2, "violation": 3, "late": 4}
    # a total order: the same answer whether the violations were checked or read from the store
    causes.sort(key=lambda c: (c.severity != "error", order[c.kind], len(c.path), c.dataset,
                               c.rule or "", c.what))
    return Gate(me, now, tuple(causes), len(datasets) - 1, checked)


def _checked(graph: Graph, policies: Policies, depth: int | None, now: datetime,
             within: frozenset[tuple[str, str]], me: str,
             path_to_me: dict[str, tuple[str, ...]]) -> list[Cause]:
    """The causes the rules give, each rule checked for the violations anchored ``within``
    (metadata rules are not: what a dataset lacks says nothing of its data)."""
    causes = []
    for rule in policies.rules:
        if rule.kind == "metadata":
            continue
        result = check_rule(graph, rule, depth, now.date(), within)
        causes += [cause for v in result.violations if v.counts
                   for cause in [_cause(v.rule.id, v.rule.kind, v.rule.severity, v.anchor,
                                        v.target_dataset, v.what(), me, path_to_me)]
                   if cause is not None]
    return causes


def _stored(graph: Graph, me: str, path_to_me: dict[str, tuple[str, ...]]) -> list[Cause]:
    """The same causes from the violations the policy watch stored."""
    return [cause for v in graph.read("gate/violations", anchors=sorted(path_to_me))
            for cause in [_cause(v["rule"], v["kind"], v["severity"], v["anchor"],
                                 v["targetDataset"], v["what"], me, path_to_me)]
            if cause is not None]


def _facts(fact: dict[str, Any], path_to_me: dict[str, tuple[str, ...]],
           now: datetime) -> list[Cause]:
    here = f"{fact['namespace']}:{fact['name']}"
    path = path_to_me.get(here, (here,))
    successes = [t for t in (native_time(x) for x in fact["successes"]) if t is not None]
    last_success = max(successes, default=None)
    found = []
    for run in fact["latestRuns"]:
        at = native_time(run["time"])
        if run["state"] in FAILED and (last_success is None or at is None or last_success < at):
            error = f": {first_words(str(run['errorMessage']))}" if run.get("errorMessage") else ""
            found.append(Cause("failed-run", here, f"the latest run of {run['job']} "
                               f"{'failed' if run['state'] == 'FAIL' else 'was aborted'}"
                               f"{f' at {at:%Y-%m-%d %H:%M}' if at else ''} and no successful "
                               f"write of {here} came after it{error}", path, run["job"],
                               run["runId"], at))
    failed = list(fact["failedAssertions"])
    if failed:
        found.append(Cause("failed-assertion", here, f"data-quality assertions failed on {here}: "
                           + ", ".join(failed[:5]) + (" ..." if len(failed) > 5 else ""), path))
    last, _, due, late = assess(successes, now)
    if late and last is not None and due is not None:
        found.append(Cause("late", here, f"{here} is late: last written {last:%Y-%m-%d %H:%M}, "
                           f"due by {due:%Y-%m-%d %H:%M}", path, at=due))
    return found


def _cause(rule: str, kind: str, severity: str, anchor: str, target_dataset: str, said: str,
           me: str, path_to_me: dict[str, tuple[str, ...]]) -> Cause | None:
    """A violation closes the gate of the dataset where the data arrived (its target) and of
    what derives from it; at its source it is only said, so that a system of record is not
    closed for every consumer because one of them copies it badly."""
    what = f"rule {rule}: {said}"
    if kind == "quality":
        return Cause("quality", anchor, what, path_to_me.get(anchor, (anchor,)), rule=rule,
                     severity=severity)
    if target_dataset in path_to_me:
        return Cause("violation", target_dataset, what, path_to_me[target_dataset], rule=rule,
                     severity=severity)
    if me == anchor:
        return Cause("violation", me, f"a violation starts here: {what}", (me,), rule=rule,
                     severity="note")
    return None
