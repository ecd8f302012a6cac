"""Each ingest rule, one behaviour per test, against the real Neo4j server."""

from __future__ import annotations

from typing import Any

import pytest

from graph.db import Graph
from tests.helpers import (
    dataset,
    edges,
    ingest_events,
    ingest_text,
    ndjson,
    new_run_id,
    nodes,
    rows,
    run_event,
)

pytestmark = pytest.mark.integration


def _run(graph: Graph, run_id: str) -> dict[str, Any]:
    [row] = rows(graph, "MATCH (r:Run {runId: $id}) RETURN properties(r) AS p", id=run_id)
    props: dict[str, Any] = row["p"]
    return props


def test_the_same_event_twice_changes_nothing(graph: Graph) -> None:
    event = run_event("COMPLETE", new_run_id(), inputs=[dataset("a", columns=["x"])],
                      outputs=[dataset("b", lineage={"x": [("a", "x", "DIRECT", "IDENTITY")]})])
    first = ingest_events(graph, [event])
    before = (nodes(graph), edges(graph))
    again = ingest_events(graph, [event])
    assert (first.loaded, again.loaded, again.duplicates) == (1, 0, 1)
    assert (nodes(graph), edges(graph)) == before


def test_late_start_never_overrides_complete(graph: Graph) -> None:
    run_id = new_run_id()
    ingest_events(graph, [run_event("COMPLETE", run_id, time="2024-05-01T03:00:00Z")])
    ingest_events(graph, [run_event("START", run_id, time="2024-05-01T02:00:00Z")])
    run = _run(graph, run_id)
    assert run["state"] == "COMPLETE"
    assert run["startTime"].iso_format().startswith("2024-05-01T02:00:00")


def test_other_never_overrides_a_state(graph: Graph) -> None:
    run_id = new_run_id()
    ingest_events(graph, [run_event("START", run_id)])
    ingest_events(graph, [run_event("OTHER", run_id, time="2024-05-01T05:00:00Z")])
    assert _run(graph, run_id)["state"] == "START"


def test_running_overrides_start_and_fail_keeps_its_error_message(graph: Graph) -> None:
    run_id = new_run_id()
    ingest_events(graph, [run_event("START", run_id, time="2024-05-01T01:00:00Z")])
    ingest_events(graph, [run_event("RUNNING", run_id, time="2024-05-01T01:10:00Z")])
    assert _run(graph, run_id)["state"] == "RUNNING"
    ingest_events(graph, [run_event("FAIL", run_id, time="2024-05-01T01:20:00Z",
                                    run_facets={"errorMessage": {"message": "no column x"}})])
    run = _run(graph, run_id)
    assert (run["state"], run["errorMessage"]) == ("FAIL", "no column x")


def test_inputs_and_outputs_merge_across_a_runs_events(graph: Graph) -> None:
    run_id = new_run_id()
    ingest_events(graph, [run_event("START", run_id, inputs=[dataset("a")])])
    ingest_events(graph, [run_event("COMPLETE", run_id, inputs=[], outputs=[dataset("b")],
                                    time="2024-05-01T03:00:00Z")])
    io = rows(graph, "MATCH (:Run {runId: $id})-[e]->(d:Dataset) RETURN type(e) AS t, d.name AS d",
              id=run_id)
    assert {(r["t"], r["d"]) for r in io} == {("READ", "a"), ("WROTE", "b")}


def test_coarse_edge_when_no_column_lineage(graph: Graph) -> None:
    ingest_events(graph, [run_event("COMPLETE", new_run_id(), "j", inputs=[dataset("a")],
                                    outputs=[dataset("b")])])
    assert ("DERIVED_FROM", "ns", "", "b", "ns", "", "a", "j", "", "", "true") in edges(graph)


@pytest.mark.parametrize("column_lineage_first", [True, False])
def test_column_lineage_makes_its_pairs_edge_fine_and_other_inputs_stay_coarse_in_any_order(
        graph: Graph, column_lineage_first: bool) -> None:
    """a -> b is covered by column lineage (fine); side is read but never named (issue 19: it
    keeps a coarse edge, read with no column lineage)."""
    run_id = new_run_id()
    start = run_event("START", run_id, "j", inputs=[dataset("a"), dataset("side")],
                      outputs=[dataset("b")], time="2024-05-01T01:00:00Z")
    complete = run_event("COMPLETE", run_id, "j", outputs=[
        dataset("b", lineage={"x": [("a", "x", "DIRECT", "IDENTITY")]})])
    ingest_events(graph, [complete, start] if column_lineage_first else [start, complete])
    found = {(e[3], e[6], e[-1]) for e in edges(graph) if e[0] == "DERIVED_FROM" and not e[2]}
    assert found == {("b", "a", "false"), ("b", "side", "true")}


def test_column_edge_keeps_type_subtype_masking_job_and_times(graph: Graph) -> None:
    out = dataset("clean", lineage={"email_hash": [("raw", "email", "DIRECT", "MASKED")]})
    ingest_events(graph, [run_event("COMPLETE", new_run_id(), "hash", outputs=[out])])
    [edge] = rows(graph, """MATCH (:Column {name: 'email_hash'})-[e:DERIVED_FROM]->
                           (:Column {name: 'email'}) RETURN properties(e) AS p""")
    p = edge["p"]
    assert (p["type"], p["subtype"], p["masking"], p["jobName"]) == ("DIRECT", "MASKED", True, "hash")
    assert p["firstSeen"] == p["lastSeen"]


def test_empty_input_list_removes_nothing(graph: Graph) -> None:
    job_event = {"eventTime": "2024-05-01T00:00:00Z", "job": {"namespace": "ns", "name": "j"},
                 "inputs": [dataset("a")], "outputs": [dataset("b")]}
    ingest_events(graph, [job_event, {**job_event, "eventTime": "2024-05-02T00:00:00Z",
                                      "inputs": []}])
    assert ("READS", "ns", "", "j", "ns", "", "a", "", "", "", "") in edges(graph)


def test_deleted_facet_removes_its_property(graph: Graph) -> None:
    docs = {"documentation": {"description": "orders"}}
    ingest_events(graph, [run_event("START", new_run_id(), job_facets=docs)])
    ingest_events(graph, [run_event("START", new_run_id(), time="2024-05-02T00:00:00Z",
                                    job_facets={"documentation": {"_deleted": True}})])
    [job] = rows(graph, "MATCH (j:Job {name: 'job'}) RETURN j.description AS d")
    assert job["d"] is None


def test_older_event_does_not_override_newer_facets_but_fills_gaps(graph: Graph) -> None:
    new = run_event("START", new_run_id(), time="2024-05-02T00:00:00Z",
                    job_facets={"documentation": {"description": "new"}})
    old = run_event("START", new_run_id(), time="2024-05-01T00:00:00Z",
                    job_facets={"documentation": {"description": "old"}, "sql": {"query": "Q"}})
    ingest_events(graph, [new])
    ingest_events(graph, [old])
    [job] = rows(graph, "MATCH (j:Job {name: 'job'}) RETURN j.description AS d, j.sql AS s")
    assert (job["d"], job["s"]) == ("new", "Q")


def test_parent_without_events_becomes_a_stub_run_and_job(graph: Graph) -> None:
    parent = new_run_id()
    facets = {"parent": {"run": {"runId": parent}, "job": {"namespace": "spark", "name": "app"}}}
    child = new_run_id()
    ingest_events(graph, [run_event("COMPLETE", child, run_facets=facets)])
    [row] = rows(graph, """MATCH (:Run {runId: $c})-[:PARENT]->(p:Run)-[:OF]->(j:Job)
                          RETURN p.runId AS p, p.stub AS ps, j.name AS j, j.stub AS js""", c=child)
    assert row == {"p": parent, "ps": True, "j": "app", "js": True}


def test_symlink_and_rename_become_edges(graph: Graph) -> None:
    ds = dataset("/warehouse/orders", ns="file",
                 symlinks={"identifiers": [{"namespace": "hive", "name": "db.orders",
                                            "type": "TABLE"}]},
                 lifecycleStateChange={"lifecycleStateChange": "RENAME",
                                       "previousIdentifier": {"namespace": "file",
                                                              "name": "/warehouse/orders_old"}})
    ingest_events(graph, [run_event("COMPLETE", new_run_id(), outputs=[ds])])
    found = {(e[0], e[3], e[6]) for e in edges(graph)}
    assert ("SYMLINK", "/warehouse/orders", "db.orders") in found
    assert ("RENAMED_FROM", "/warehouse/orders", "/warehouse/orders_old") in found


def test_dataset_names_are_stored_verbatim(graph: Graph) -> None:
    names = ["/Data/Orders 2024", "s3://bucket/key.parquet", "Öl.🚀.Table"]
    ingest_events(graph, [run_event("COMPLETE", new_run_id(),
                                    outputs=[dataset(n, ns="Mixed.Case") for n in names])])
    assert {(n[1], n[2]) for n in nodes(graph) if n[0] == "Dataset"} == {("Mixed.Case", n) for n in names}


def test_a_rejected_event_leaves_its_batch_intact(graph: Graph) -> None:
    good1 = run_event("START", new_run_id(), "one")
    bad = run_event("START", "not-a-uuid", "bad")
    good2 = run_event("START", new_run_id(), "two")
    report = ingest_text(graph, ndjson([good1, bad, good2]) + "\n{broken", "batch.ndjson")
    assert report.loaded == 2
    assert [r.where for r in report.rejected] == ["batch.ndjson:2", "batch.ndjson:4"]
    assert {n[2] for n in nodes(graph) if n[0] == "Job"} == {"one", "two"}


def test_event_neo4j_refuses_is_isolated_and_its_neighbours_load(graph: Graph) -> None:
    # A name beyond what Neo4j's uniqueness index can hold. Validation refuses it at the door
    # (ingest.limits.MAX_NAME_BYTES); read back as validated (a log an earlier version wrote), it
    # reaches Neo4j, which refuses it alone.
    from ingest.log.protocol import Checked
    from ingest.pipeline import Ingester, IngestReport
    from ingest.read import RawItem

    huge = run_event("COMPLETE", new_run_id(), "huge", outputs=[dataset("x" * 40_000)])
    events = [run_event("START", new_run_id(), f"ok{i}") for i in range(5)]
    items = [RawItem(f"test[{i}]", obj=e, checked=Checked.SCRUBBED)
             for i, e in enumerate(events[:2] + [huge] + events[2:])]
    report = Ingester(graph, 10).ingest(items, IngestReport())
    assert report.loaded == 5
    [rejection] = report.rejected
    assert rejection.where == "test[2]" and "could not be loaded" in rejection.reasons[0]


def test_a_complete_after_a_fail_keeps_the_run_failed_with_the_spark_exception(graph: Graph) -> None:
    # What the OpenLineage Spark listener sends for a query that fails at run time.
    run_id = new_run_id()
    trace = "org.apache.spark.SparkRuntimeException: [USER_RAISED_EXCEPTION] amount_eur is missing\n\tat x"
    ingest_events(graph, [
        run_event("START", run_id, time="2024-05-01T01:00:00Z"),
        run_event("FAIL", run_id, time="2024-05-01T01:00:10Z",
                  run_facets={"spark.exception": {"stackTrace": trace}}),
        run_event("COMPLETE", run_id, time="2024-05-01T01:00:11Z")])
    run = _run(graph, run_id)
    assert run["state"] == "FAIL"
    assert run["errorMessage"].endswith("[USER_RAISED_EXCEPTION] amount_eur is missing")
    assert run["stackTrace"].startswith("org.apache.spark.SparkRuntimeException")
