"""Edges that stay right on real producers' column lineage (issue 19): dataset-wide dependencies,
inputs that column lineage does not cover, and several transformations between two columns; each
loaded in every order, in one batch and in several."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from graph.db import Graph
from impact.blast_radius import column_blast_radius, dataset_blast_radius
from impact.change.check import check
from impact.change.read import Change
from impact.marquez.lineage import column_lineage
from tests.conftest import wipe
from tests.helpers import dataset, ingest_events, new_run_id, rows, run_event

pytestmark = pytest.mark.integration

HIVE = "hive://metastore:9083"


def _every_load(graph: Graph, events: list[dict[str, Any]]) -> Any:
    """Yield after loading the events in each order, one per batch and all in one batch."""
    for order in itertools.permutations(events):
        for batches in ([list(order)], [[e] for e in order]):
            wipe(graph)
            for batch in batches:
                assert ingest_events(graph, batch).rejected == []
            yield


def _field(ds: str, name: str, kind: str, subtype: str, ns: str = HIVE) -> dict[str, Any]:
    return {"namespace": ns, "name": ds, "field": name,
            "transformations": [{"type": kind, "subtype": subtype, "masking": False}]}


def test_dataset_wide_dependencies_are_indirect_edges_to_every_output_field(graph: Graph) -> None:
    """columnLineage.dataset (facet 1-2-0): submissiondate filters the whole output, so it
    influences month and total; dropping it is RISKY for both, not SAFE."""
    monthly = dataset("default.monthly", HIVE, columns=["month", "total"])
    monthly["facets"]["columnLineage"] = {
        "fields": {"month": {"inputFields": [_field("default.transactions", "month", "DIRECT",
                                                     "IDENTITY")]},
                   "total": {"inputFields": [_field("default.transactions", "amount", "DIRECT",
                                                     "AGGREGATION")]}},
        "dataset": [_field("default.transactions", "submissiondate", "INDIRECT", "FILTER")]}
    source = dataset("default.transactions", HIVE, columns=["submissiondate", "month", "amount"])
    events = [run_event("START", (rid := new_run_id()), "monthly", time="2024-06-01T02:00:00Z",
                        inputs=[source]),
              run_event("COMPLETE", rid, "monthly", time="2024-06-01T02:05:00Z", inputs=[source],
                        outputs=[monthly])]
    for _ in _every_load(graph, events):
        answer = column_blast_radius(graph, HIVE, "default.transactions", "submissiondate")
        assert {(i.name, i.why.split(" via")[0]) for i in answer.impacted} == {
            ("default.monthly.month", "DERIVED_FROM INDIRECT FILTER"),
            ("default.monthly.total", "DERIVED_FROM INDIRECT FILTER")}
        report = check(graph, [Change("drop_column", HIVE, "default.transactions", "submissiondate")])
        assert report.verdict == "RISKY"
        assert {f.consumer for f in report.findings} == {f"{HIVE}:default.monthly.month",
                                                         f"{HIVE}:default.monthly.total"}


def test_an_input_its_column_lineage_never_names_keeps_a_read_edge(graph: Graph) -> None:
    """A job reads x and y; its output's column lineage names only x's fields. y still feeds z
    ("read, no column lineage"): in y's blast radius, and dropping a column of y is RISKY."""
    out = dataset("z", columns=["a"], lineage={"a": [("x", "a", "DIRECT", "IDENTITY")]})
    plain_out = dataset("z", columns=["a"])
    run = new_run_id()
    events = [
        run_event("START", run, "join", time="2024-06-01T02:00:00Z",
                  inputs=[dataset("x", columns=["a"]), dataset("y", columns=["b"])],
                  outputs=[plain_out]),
        run_event("COMPLETE", run, "join", time="2024-06-01T02:05:00Z",
                  inputs=[dataset("x", columns=["a"]), dataset("y", columns=["b"])], outputs=[out]),
    ]
    for _ in _every_load(graph, events):
        radius = dataset_blast_radius(graph, "ns", "y")
        [z] = [i for i in radius.impacted if i.kind == "dataset"]
        assert z.name == "z" and "coarse" in z.why
        report = check(graph, [Change("drop_column", "ns", "y", "b")])
        assert report.verdict == "RISKY" and [f.consumer for f in report.findings] == ["ns:z"]
        fine = dataset_blast_radius(graph, "ns", "x")
        assert [i.why for i in fine.impacted if i.name == "z"][0].find("coarse") == -1


def test_several_transformations_between_two_columns_report_the_strongest_and_all(
        graph: Graph) -> None:
    """Spark lists one input field several times for one output field: DIRECT IDENTITY and
    INDIRECT FILTER and JOIN. The headline is DIRECT IDENTITY in every order; every
    transformation is kept; Marquez's shape has one inputFields entry with all three."""
    out = dataset("clean", columns=["id"])
    out["facets"]["columnLineage"] = {"fields": {"id": {"inputFields": [{
        "namespace": "ns", "name": "raw", "field": "id", "transformations": [
            {"type": "INDIRECT", "subtype": "FILTER"}, {"type": "DIRECT", "subtype": "IDENTITY"},
            {"type": "INDIRECT", "subtype": "JOIN"}]}]}}}
    events = [run_event("COMPLETE", new_run_id(), "clean", time="2024-06-01T02:00:00Z",
                        inputs=[dataset("raw", columns=["id"])], outputs=[out]),
              run_event("COMPLETE", new_run_id(), "clean", time="2024-06-02T02:00:00Z",
                        inputs=[dataset("raw", columns=["id"])], outputs=[out])]
    answers = set()
    for _ in _every_load(graph, events):
        [hop] = column_blast_radius(graph, "ns", "raw", "id").impacted
        answers.add(hop.why)
        [node] = [n for n in column_lineage(graph, "datasetField:ns:clean:id")["graph"]
                  if n["data"]["field"] == "id" and n["data"]["dataset"] == "clean"]
        [entry] = node["data"]["inputFields"]
        assert [(t["type"], t["subtype"]) for t in entry["transformations"]] == [
            ("DIRECT", "IDENTITY"), ("INDIRECT", "FILTER"), ("INDIRECT", "JOIN")]
        assert entry["transformationType"] == "IDENTITY"
    assert answers == {"DERIVED_FROM DIRECT IDENTITY via job clean; also INDIRECT FILTER; "
                       "INDIRECT JOIN"}, answers


def _dag() -> tuple[str, list[dict[str, Any]]]:
    """An Airflow DAG run with two task runs (the parent facet names the DAG run): load writes
    stage from raw, report writes report from stage and fails."""
    dag_run = new_run_id()
    parent = {"parent": {"run": {"runId": dag_run}, "job": {"namespace": "airflow", "name": "BQ"}}}
    events = [run_event("START", dag_run, "BQ", ns="airflow", time="2024-06-01T02:00:00Z")]
    for task, inputs, output, state, minute in (("BQ.load", "raw", "stage", "COMPLETE", 1),
                                                ("BQ.report", "stage", "report", "FAIL", 2)):
        run = new_run_id()
        facets: dict[str, Any] = dict(parent)
        if state == "FAIL":
            facets["errorMessage"] = {"message": "quota exceeded", "programmingLanguage": "sql"}
        events.append(run_event(state, run, task, ns="airflow", time=f"2024-06-01T02:0{minute}:00Z",
                                inputs=[dataset(inputs)], outputs=[dataset(output)],
                                run_facets=facets))
    events.append(run_event("FAIL", dag_run, "BQ", ns="airflow", time="2024-06-01T02:05:00Z"))
    return dag_run, events


def test_a_parent_jobs_blast_radius_root_cause_and_lineage_go_through_its_children(
        graph: Graph) -> None:
    from impact.blast_radius import job_blast_radius
    from impact.marquez.lineage import lineage
    from impact.root_cause import root_cause_run

    dag_run, events = _dag()
    for _ in _every_load(graph, events):
        radius = job_blast_radius(graph, "airflow", "BQ")
        datasets = {i.name: i for i in radius.impacted if i.kind == "dataset"}
        assert set(datasets) == {"stage", "report"}
        assert datasets["stage"].path == ("airflow:BQ", "airflow:BQ.load", "ns:stage")
        answer = root_cause_run(graph, dag_run)
        top = answer.candidates[0]
        assert top.kind == "failed run" and top.evidence["job"] == "airflow:BQ.report"
        assert "quota exceeded" in top.summary and answer.examined > 0
        ids = {n["id"] for n in lineage(graph, "job:airflow:BQ")["graph"]}
        assert {"dataset:ns:stage", "dataset:ns:report", "job:airflow:BQ.load"} <= ids
        [job] = graph.read("lookup/job", namespace="airflow", name="BQ", runs=5)
        assert [(c["job"], c["latest"]["state"]) for c in job["children"]] == [
            ("airflow:BQ.load", "COMPLETE"), ("airflow:BQ.report", "FAIL")]


def test_a_multi_output_job_gets_only_the_pairs_its_column_lineage_states(graph: Graph) -> None:
    """Reads a and b, writes c from a and d from b: two dataset edges, not four, whichever event
    (the START without column lineage or the COMPLETE with it) arrives first."""
    run = new_run_id()
    ins = [dataset("a", columns=["x"]), dataset("b", columns=["y"])]
    events = [
        run_event("START", run, "split", time="2024-06-01T02:00:00Z", inputs=ins,
                  outputs=[dataset("c"), dataset("d")]),
        run_event("COMPLETE", run, "split", time="2024-06-01T02:05:00Z", inputs=ins, outputs=[
            dataset("c", columns=["x"], lineage={"x": [("a", "x", "DIRECT", "IDENTITY")]}),
            dataset("d", columns=["y"], lineage={"y": [("b", "y", "DIRECT", "IDENTITY")]})]),
    ]
    for _ in _every_load(graph, events):
        found = {(r["o"], r["i"], r["coarse"]) for r in rows(graph, """
            MATCH (o:Dataset)-[e:DERIVED_FROM]->(i:Dataset)
            RETURN o.name AS o, i.name AS i, e.coarse AS coarse""")}
        assert found == {("c", "a", False), ("d", "b", False)}


def test_inputs_named_only_in_column_lineage_are_read_by_the_job_everywhere(graph: Graph) -> None:
    """dbt names its sources only inside column lineage: the Marquez-shaped lineage shows the
    job reading them, as upstream in the CLI's sense does."""
    from impact.marquez.lineage import lineage
    from impact.upstream import dataset_upstream

    model = dataset("stg_customers", columns=["id"],
                    lineage={"id": [("raw_customers", "id", "DIRECT", "IDENTITY")]})
    events = [run_event("COMPLETE", new_run_id(), "dbt.stg_customers", outputs=[model])]
    for _ in _every_load(graph, events):
        upstream = {i.name for i in dataset_upstream(graph, "ns", "stg_customers").impacted
                    if i.kind == "dataset"}
        assert upstream == {"raw_customers"}
        [job] = [n for n in lineage(graph, "dataset:ns:stg_customers")["graph"]
                 if n["type"] == "JOB"]
        assert {"origin": "dataset:ns:raw_customers", "destination": job["id"]} in job["inEdges"]
