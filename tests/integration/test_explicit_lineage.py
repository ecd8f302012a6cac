"""Explicit lineage (issue 19, part 1): the lineage facets of 2026 are the authoritative picture
of the edges an event states. Events are written from the spec's examples
(proposals/explicit_lineage_facet/ExplicitLineageExamples.md), each loaded in every order, in one
batch and in several, and the answers must be the same every time."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from graph.db import Graph
from impact.blast_radius import column_blast_radius, dataset_blast_radius, job_blast_radius
from impact.change.check import check
from impact.change.read import Change
from impact.upstream import column_upstream, dataset_upstream
from tests.conftest import wipe
from tests.helpers import canonical_dump, dataset, ingest_events, new_run_id, run_event

pytestmark = pytest.mark.integration

PG = "postgresql://warehouse:5432"
FACET_URL = "https://openlineage.io/spec/facets/1-0-0/LineageFacet.json#/$defs/LineageJobFacet"


def _every_load(graph: Graph, events: list[dict[str, Any]]) -> Any:
    """Yield after loading the events in each order, one per batch and all in one batch; the
    whole graph must be the same after each."""
    first: list[str] | None = None
    for order in itertools.permutations(events):
        for batches in ([list(order)], [[e] for e in order]):
            wipe(graph)
            for batch in batches:
                assert ingest_events(graph, batch).rejected == []
            dump = canonical_dump(graph)
            if first is None:
                first = dump
            assert dump == first, "the graph depends on the order or batching of the events"
            yield


def _src(name: str, ns: str = PG, field: str | None = None, kind: str = "DATASET",
         **transformation: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"namespace": ns, "name": name, "type": kind}
    if field is not None:
        item["field"] = field
    if transformation:
        item["transformations"] = [transformation]
    return item


def _lineage(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"lineage": {"_producer": "https://example.com/etl", "_schemaURL": FACET_URL,
                        "entries": list(entries)}}


def _job_event(job: str, time: str, facets: dict[str, Any], ns: str = "airflow://prod",
               inputs: list[dict[str, Any]] | None = None,
               outputs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"eventTime": time, "producer": "https://example.com/catalog",
            "job": {"namespace": ns, "name": job, "facets": facets},
            "inputs": inputs or [], "outputs": outputs or []}


def _names(answer: Any, kind: str = "dataset") -> set[str]:
    return {i.name for i in answer.impacted if i.kind == kind}


def test_multi_output_lineage_facet_states_only_its_edges(graph: Graph) -> None:
    """Example 1: bulk_etl reads A and B and writes C and D; the facet says A->C and B->D. Two
    edges, not four, even with a START that carries no facet and column lineage on an output
    that says otherwise (the lineage facet wins)."""
    a, b = dataset("table_a", PG, columns=["id"]), dataset("table_b", PG, columns=["id"])
    c = dataset("table_c", PG, columns=["id"])
    d = dataset("table_d", PG, columns=["id"],
                lineage={"id": [("table_a", "id", "DIRECT", "IDENTITY")]})
    d["facets"]["columnLineage"]["fields"]["id"]["inputFields"][0]["namespace"] = PG
    facet = _lineage({"namespace": PG, "name": "table_c", "type": "DATASET",
                      "inputs": [_src("table_a")]},
                     {"namespace": PG, "name": "table_d", "type": "DATASET",
                      "inputs": [_src("table_b")]})
    run = new_run_id()
    events = [
        run_event("START", run, "bulk_etl", ns="http://etl-server:8080",
                  time="2026-03-25T10:00:00Z", inputs=[a, b], outputs=[c, d]),
        run_event("COMPLETE", run, "bulk_etl", ns="http://etl-server:8080",
                  time="2026-03-25T10:05:00Z", inputs=[a, b], outputs=[c, d], job_facets=facet),
    ]
    for _ in _every_load(graph, events):
        assert _names(dataset_blast_radius(graph, PG, "table_a")) == {"table_c"}
        assert _names(dataset_blast_radius(graph, PG, "table_b")) == {"table_d"}
        assert _names(dataset_upstream(graph, PG, "table_d")) == {"table_b"}
        # dataset-level lineage names no column: dropping one of A's columns may break C
        report = check(graph, [Change("drop_column", PG, "table_a", "id")])
        assert report.verdict == "RISKY"
        assert {f.consumer for f in report.findings} == {f"{PG}:table_c"}


def test_mixed_granularity_lineage_facet(graph: Graph) -> None:
    """Examples 2 and 3: column lineage (with its transformation), a dataset-wide GROUP BY that
    affects every field of the output, and a field whose source column is unknown."""
    ns = "postgresql://analytics:5432"
    source = dataset("input_A", ns, columns=["col_a", "group_by_col", "amount", "note"])
    out = dataset("output_X", ns, columns=["col1", "col2", "total"])
    facet = _lineage({
        "namespace": ns, "name": "output_X", "type": "DATASET",
        "inputs": [_src("input_A", ns),
                   _src("input_A", ns, "group_by_col", type="INDIRECT", subtype="GROUP_BY")],
        "fields": {"col1": {"inputs": [_src("input_A", ns, "col_a")]},
                   "col2": {"inputs": [_src("input_A", ns)]},
                   "total": {"inputs": [_src("input_A", ns, "amount", type="DIRECT",
                                             subtype="AGGREGATION")]}}})
    run = new_run_id()
    events = [run_event("COMPLETE", run, "analytics_etl", ns="http://etl-server:8080",
                        time="2026-03-25T10:05:00Z", inputs=[source], outputs=[out],
                        job_facets=facet),
              run_event("START", run, "analytics_etl", ns="http://etl-server:8080",
                        time="2026-03-25T10:00:00Z", inputs=[source], outputs=[out])]
    for _ in _every_load(graph, events):
        wide = column_blast_radius(graph, ns, "input_A", "group_by_col")
        assert {(i.name, i.why.split(" via")[0]) for i in wide.impacted} == {
            (f"output_X.{c}", "DERIVED_FROM INDIRECT GROUP_BY") for c in ("col1", "col2", "total")}
        total = column_upstream(graph, ns, "output_X", "total")
        assert ("input_A.amount", "DERIVED_FROM DIRECT AGGREGATION") in {
            (i.name, i.why.split(" via")[0]) for i in total.impacted}
        # a producer that gives no transformation is not assumed to copy: UNKNOWN
        col1 = column_blast_radius(graph, ns, "input_A", "col_a")
        assert {(i.name, i.why.split(" via")[0]) for i in col1.impacted} == {
            ("output_X.col1", "DERIVED_FROM UNKNOWN UNKNOWN")}
        # col2 comes from input_A, column unknown: a column of input_A nobody names is RISKY
        report = check(graph, [Change("drop_column", ns, "input_A", "note")])
        assert report.verdict == "RISKY"
        assert {f.consumer for f in report.findings} == {f"{ns}:output_X"}


def test_dataset_event_derivation_replaces_the_previous_one(graph: Graph) -> None:
    """Example 4: a view over two tables, stated by a DatasetEvent with no job. A newer
    DatasetEvent is the view's whole derivation: orders no longer feeds it, whatever arrives
    first."""
    def view(time: str, *sources: str) -> dict[str, Any]:
        return {"eventTime": time, "producer": "https://example.com/catalog",
                "dataset": {"namespace": PG, "name": "public.customer_view", "facets": {
                    "lineage": {"_producer": "https://example.com/catalog",
                                "_schemaURL": FACET_URL,
                                "inputs": [_src(s) for s in sources]}}}}

    events = [view("2026-03-25T10:00:00Z", "public.customers", "public.orders"),
              view("2026-03-26T10:00:00Z", "public.customers")]
    for _ in _every_load(graph, events):
        assert _names(dataset_blast_radius(graph, PG, "public.customers")) == {
            "public.customer_view"}
        assert _names(dataset_blast_radius(graph, PG, "public.orders")) == set()
        assert _names(dataset_upstream(graph, PG, "public.customer_view")) == {"public.customers"}
    wipe(graph)
    assert ingest_events(graph, events[:1]).rejected == []
    assert _names(dataset_blast_radius(graph, PG, "public.orders")) == {"public.customer_view"}


def test_declared_job_lineage_replaces_and_observed_lineage_accumulates(graph: Graph) -> None:
    """Example 5: a JobEvent's lineage is the job's declared lineage, replaced by the next one;
    a RunEvent's lineage is what a run observed, and stays."""
    def declared(time: str, source: str) -> dict[str, Any]:
        return _job_event("daily_etl", time, _lineage(
            {"namespace": PG, "name": "output_table", "type": "DATASET",
             "inputs": [_src(source)]}), inputs=[dataset(source, PG)],
            outputs=[dataset("output_table", PG)])

    observed = run_event("COMPLETE", new_run_id(), "daily_etl", ns="airflow://prod",
                         time="2026-03-24T10:00:00Z", inputs=[dataset("side_table", PG)],
                         outputs=[dataset("output_table", PG)], job_facets=_lineage(
                             {"namespace": PG, "name": "output_table", "type": "DATASET",
                              "inputs": [_src("side_table")]}))
    events = [declared("2026-03-25T10:00:00Z", "old_source"),
              declared("2026-03-26T10:00:00Z", "source_table"), observed]
    for _ in _every_load(graph, events):
        assert _names(dataset_upstream(graph, PG, "output_table")) == {"source_table",
                                                                      "side_table"}
        assert _names(dataset_blast_radius(graph, PG, "old_source")) == set()


def test_job_to_job_hand_off_is_walked(graph: Graph) -> None:
    """Examples 9 and 10: dag_b.task_1 receives its data from dag_a.task_3 with no dataset in
    between. Blast radius and upstream walk through both jobs: raw feeds task_3, task_3 feeds
    task_1, task_1 writes report."""
    airflow = "airflow://prod"
    hand_off = _job_event("dag_b", "2026-03-25T09:00:00Z", _lineage(
        {"namespace": airflow, "name": "dag_b.task_1", "type": "JOB",
         "inputs": [_src("dag_a.task_3", airflow, kind="JOB")]}))
    task_3 = run_event("COMPLETE", new_run_id(), "dag_a.task_3", ns=airflow,
                       time="2026-03-25T10:00:00Z", inputs=[dataset("raw", PG)])
    task_1 = run_event("COMPLETE", new_run_id(), "dag_b.task_1", ns=airflow,
                       time="2026-03-25T11:00:00Z", outputs=[dataset("report", PG)])
    for _ in _every_load(graph, [hand_off, task_3, task_1]):
        radius = dataset_blast_radius(graph, PG, "raw")
        assert _names(radius) == {"report"}
        assert _names(radius, "job") >= {"dag_a.task_3", "dag_b.task_1"}
        report = next(i for i in radius.impacted if i.name == "report")
        assert report.path == (f"{PG}:raw", f"{airflow}:dag_a.task_3", f"{airflow}:dag_b.task_1",
                               f"{PG}:report")
        up = dataset_upstream(graph, PG, "report")
        assert _names(up) == {"raw"} and _names(up, "job") == {"dag_a.task_3", "dag_b.task_1"}
        assert _names(job_blast_radius(graph, airflow, "dag_a.task_3")) == {"report"}


def test_identity_less_job_input_keeps_its_transformation(graph: Graph) -> None:
    """Example 8: extract_task writes extracted_data; its total is a sum() over an API's answer
    (a field input of type JOB with no namespace and name: the event's own job)."""
    out = dataset("extracted_data", "postgres://prod", columns=["total"])
    facet = _lineage({"namespace": "postgres://prod", "name": "extracted_data", "type": "DATASET",
                      "inputs": [],
                      "fields": {"total": {"inputs": [
                          {"type": "JOB", "transformations": [
                              {"type": "DIRECT", "subtype": "AGGREGATION",
                               "description": "sum()"}]}]}}})
    run = new_run_id()
    events = [run_event("START", run, "data_pipeline.extract_task", ns="airflow://prod",
                        time="2026-03-25T10:00:00Z", outputs=[out]),
              run_event("COMPLETE", run, "data_pipeline.extract_task", ns="airflow://prod",
                        time="2026-03-25T10:01:00Z", outputs=[out], job_facets=facet)]
    for _ in _every_load(graph, events):
        up = column_upstream(graph, "postgres://prod", "extracted_data", "total")
        assert [(i.kind, i.name, i.why) for i in up.impacted] == [
            ("job", "data_pipeline.extract_task",
             "PRODUCED_BY DIRECT AGGREGATION: sum() (no tracked source)")]


def test_a_malformed_lineage_facet_is_rejected_with_its_path(graph: Graph) -> None:
    """A DATASET without a name, a JOB with a namespace alone, an unknown type: rejected with the
    path of each, and nothing else of the batch is lost."""
    bad = run_event("COMPLETE", new_run_id(), "etl", job_facets=_lineage(
        {"namespace": PG, "type": "DATASET", "inputs": [_src("a", kind="TABLE")]},
        {"namespace": "airflow://prod", "type": "JOB", "inputs": []}))
    good = run_event("COMPLETE", new_run_id(), "etl", outputs=[dataset("fine", PG)])
    report = ingest_events(graph, [bad, good])
    assert len(report.rejected) == 1
    reasons = " ".join(str(r) for r in report.rejected)
    assert "job.facets.lineage.entries[0]: a DATASET needs a non-empty namespace and name" in reasons
    assert "job.facets.lineage.entries[0].inputs[0].type: 'TABLE' is not DATASET or JOB" in reasons
    assert "job.facets.lineage.entries[1]: a JOB has both namespace and name" in reasons
    assert _names(dataset_upstream(graph, PG, "fine")) == set()
