"""The policy rules on the graph as a proposed change would leave it (``lineage check
--policies``): the change's events (a dbt branch's models as dbt-ol would report them, or an
OpenLineage event given as the change) are planned by the ingest path as any event is, written
in a transaction that is rolled back once the rules are checked in it (graph.db.Graph.rehearse).
The graph keeps nothing of it.

A proposed run is taken to state its job's whole column lineage into its outputs: the job's column
edges into them that it no longer states are retired in the rehearsal
(cypher/policies/rehearsal_retire.cypher), so that a model that stops copying a column raw
removes the violation. (The graph itself retires column edges only with their datasets.)"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from graph.db import Graph
from impact.changes import CheckInputError
from impact.policies import check
from impact.policy_delta import PolicyDelta
from impact.policy_file import Policies
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
    # a run states its job's whole column lineage into its outputs: what it no longer states is
    # gone once the change is deployed (the graph keeps such edges current: docs/graph-model.md)
    jobs = [{"namespace": e["job"]["namespace"], "name": e["job"]["name"],
             "outputs": [{"namespace": o["namespace"], "name": o["name"]}
                         for o in e.get("outputs") or []]}
            for e in events if isinstance(e.get("job"), dict) and "run" in e]

    def then(results: list[list[dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
        return [*batch.plan.then(results),
                ("policies/rehearsal_retire", {"jobs": jobs, "at": datetime.now(UTC).isoformat()})]

    after = graph.rehearse(batch.plan.first, then,
                           lambda rehearsed: check(rehearsed, policies, depth, today))
    return PolicyDelta(before, after)
