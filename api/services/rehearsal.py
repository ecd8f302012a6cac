"""The policy rules on the graph as a proposed change would leave it (``lineage check
--policies``): the change's events (a dbt branch's models as dbt-ol would report them, or an
OpenLineage event given as the change) are planned by the ingest path as any event is, written
in a transaction that is rolled back once the rules are checked in it (graph.db.Graph.rehearse).
The graph keeps nothing of it.

A proposed run is a completed run, so the graph's own rule applies to it as to any run: its column
lineage is the whole truth of its outputs' (docs/graph-model.md, "Current and retired lineage"),
and a model that stops copying a column raw removes the violation in the rehearsal exactly as it
does once its event is loaded."""

from __future__ import annotations

from datetime import date
from typing import Any

from graph.db import Graph
from impact.change.read import CheckInputError
from impact.policy.check import check
from impact.policy.delta import PolicyDelta
from impact.policy.rules import Policies
from ingest.pipeline import Ingester, IngestReport
from ingest.read import RawItem


def rehearse_policies(graph: Graph, policies: Policies, events: list[dict[str, Any]],
                      depth: int | None = None, today: date | None = None) -> PolicyDelta:
    """The rules checked now and after ``events``; CheckInputError when an event is not one."""
    before = check(graph, policies, depth, today)
    if not events:
        return PolicyDelta(before, before)
    report = IngestReport()
    ingester = Ingester(graph, batch_size=len(events))
    prepared = list(ingester.prepare([RawItem(f"change[{i}]", obj=e) for i, e in enumerate(events)],
                                     report))
    if report.rejected:
        raise CheckInputError("the change's lineage is not valid OpenLineage: " + "; ".join(
            f"{r.where}: {', '.join(r.reasons)}" for r in report.rejected))
    if not prepared:
        return PolicyDelta(before, before)
    [batch] = prepared
    after = graph.rehearse(batch.plan.first, batch.plan.then,
                           lambda rehearsed: check(rehearsed, policies, depth, today))
    return PolicyDelta(before, after)
