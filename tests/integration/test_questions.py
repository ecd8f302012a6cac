"""Upstream lineage, GDPR reach, root cause and freshness on the real server.

Hand-built scenarios with known answers, and networkx as an independent oracle on random graphs
with cycles and diamonds, loaded through the real ingest path.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.render.check import where_csv
from graph.db import Graph
from graph.errors import NotFound
from impact.health.freshness import assess, freshness
from impact.root_cause import root_cause_dataset, root_cause_run
from impact.upstream import column_upstream, dataset_upstream
from impact.where import where
from tests.conftest import wipe
from tests.helpers import dataset, ingest_events, new_run_id, run_event

pytestmark = pytest.mark.integration

# subtype per GDPR level, as the helper's dataset() writes it (MASKED sets masking=true)
KIND = {4: ("DIRECT", "IDENTITY"), 3: ("DIRECT", "TRANSFORMATION"), 2: ("DIRECT", "MASKED"),
        1: ("DIRECT", "AGGREGATION"), 0: ("INDIRECT", "FILTER")}
LABEL = {4: "raw", 3: "transformed", 2: "masked", 1: "aggregated", 0: "influence"}


def _load_columns(graph: Graph, edges: list[tuple[str, str, int]],
                  time: str = "2024-05-01T02:00:00Z") -> None:
    """Column ``c`` of dataset ``derived`` from column ``c`` of ``source``, at a GDPR level;
    one job per derived dataset."""
    by_out: dict[str, list[tuple[str, int]]] = {}
    for derived, source, level in edges:
        by_out.setdefault(derived, []).append((source, level))
    events = [run_event("COMPLETE", new_run_id(), f"make_{out}", time=time,
                        inputs=[dataset(s) for s, _ in ins],
                        outputs=[dataset(out, lineage={"c": [(s, "c", *KIND[lvl]) for s, lvl in ins]})])
              for out, ins in by_out.items()]
    assert ingest_events(graph, events).rejected == []


def _labels(graph: Graph, source: str, depth: int | None = None) -> dict[str, tuple[str, int]]:
    report = where(graph, "ns", source, "c", depth)
    return {r.dataset: (r.label, r.distance) for r in report.reaches}


# --- GDPR: where does this column go -------------------------------------------------------------

def test_raw_copy_behind_a_masked_shortcut_is_still_raw(graph: Graph) -> None:
    # users.c -> hashed.c (masked) -> features.c (identity): masked at distance 2
    # users.c -> copy.c (identity) -> export.c (identity) -> features.c: raw at distance 3
    _load_columns(graph, [("hashed", "users", 2), ("features", "hashed", 4),
                          ("copy", "users", 4), ("export", "copy", 4), ("features", "export", 4)])
    found = _labels(graph, "users")
    assert found["features"] == ("raw", 3)
    assert found["hashed"] == ("masked", 1)
    assert found["copy"] == ("raw", 1)


def test_each_label_and_raw_reaches_first(graph: Graph) -> None:
    _load_columns(graph, [("t", "users", 3), ("m", "users", 2), ("a", "users", 1),
                          ("f", "users", 0), ("r", "users", 4), ("ma", "m", 1), ("rt", "r", 3)])
    report = where(graph, "ns", "users", "c")
    assert [(r.dataset, r.label) for r in report.reaches][:1] == [("r", "raw")]
    assert {r.dataset: r.label for r in report.reaches} == {
        "r": "raw", "t": "transformed", "rt": "transformed", "m": "masked", "a": "aggregated",
        "ma": "aggregated", "f": "influence"}
    assert report.counts() == {"raw": 1, "unknown": 0, "transformed": 2, "masked": 1, "aggregated": 2,
                               "influence": 1}
    [rt] = [r for r in report.reaches if r.dataset == "rt"]
    assert [s.job for s in rt.steps] == ["make_r", "make_rt"]
    assert rt.steps[0].source == "ns:users.c" and rt.steps[-1].target == "ns:rt.c"
    assert all(s.run for s in rt.steps) and rt.last_flowed is not None
    csv_text = where_csv(report)
    assert csv_text.splitlines()[0].startswith("namespace,dataset,column,label")
    assert "ns,rt,c,transformed,2,ns:users.c -> ns:r.c -> ns:rt.c,make_r make_rt" in csv_text


def test_a_cycle_of_copies_terminates_and_reports_each_column_once(graph: Graph) -> None:
    _load_columns(graph, [("a", "users", 4), ("b", "a", 4), ("a", "b", 4), ("users", "b", 2)])
    assert _labels(graph, "users") == {"a": ("raw", 1), "b": ("raw", 2)}


def _one_hop(graph: Graph, transformations: list[dict[str, Any]] | None,
             legacy: str | None = None) -> list[tuple[str, str, str]]:
    """users.c -> clean.out with the given transformations; the reach's (column, label, basis)."""
    spec: dict[str, Any] = {"inputFields": [{"namespace": "ns", "name": "users", "field": "c"}]}
    if transformations is not None:
        spec["inputFields"][0]["transformations"] = transformations
    if legacy is not None:
        spec["transformationType"] = legacy
    event = run_event("COMPLETE", new_run_id(), "clean", outputs=[dataset("clean")])
    event["outputs"][0]["facets"]["columnLineage"] = {"fields": {"out": spec}}
    assert ingest_events(graph, [event]).rejected == []
    report = where(graph, "ns", "users", "c")
    return [(r.column, r.label, r.steps[0].basis) for r in report.reaches]


@pytest.mark.parametrize("description", ["copied as-is, NOT hashed", "hashtag-safe raw copy",
                                         "sha2(email, 256) hash"])
def test_a_description_never_makes_a_raw_copy_masked(graph: Graph, description: str) -> None:
    """Only ``masking: true`` masks: a description that mentions hashing changes nothing."""
    [(column, label, basis)] = _one_hop(graph, [{"type": "DIRECT", "subtype": "IDENTITY",
                                                 "masking": False, "description": description}])
    assert (column, label) == ("out", "raw")
    assert basis == "type DIRECT, subtype IDENTITY, masking not true"
    wipe(graph)
    [(_, label, _)] = _one_hop(graph, [{"type": "DIRECT", "subtype": "TRANSFORMATION",
                                        "description": description}])
    assert label == "transformed"


def test_masking_comes_from_the_flag_and_the_deprecated_masked_type(graph: Graph) -> None:
    [(_, label, basis)] = _one_hop(graph, [{"type": "DIRECT", "subtype": "TRANSFORMATION",
                                            "masking": True}])
    assert (label, basis) == ("masked", "type DIRECT, subtype TRANSFORMATION, masking true")
    wipe(graph)
    assert _one_hop(graph, None, legacy="MASKED")[0][1] == "masked"
    wipe(graph)
    assert _one_hop(graph, None, legacy="IDENTITY")[0][1] == "raw"


@pytest.mark.parametrize("transformations", [None, []])
def test_a_hop_without_a_reported_transformation_is_unknown_not_transformed(
        graph: Graph, transformations: list[dict[str, Any]] | None) -> None:
    [(_, label, basis)] = _one_hop(graph, transformations)
    assert label == "unknown" and basis == "transformation not reported by the producer"
    wipe(graph)
    [(_, label, basis)] = _one_hop(graph, [{"type": "DIRECT", "description": "dbt model"}])
    assert label == "unknown" and basis == "type DIRECT, subtype not reported, masking not true"


def test_unknown_column_is_not_found(graph: Graph) -> None:
    with pytest.raises(NotFound, match="no column ns:users.nope"):
        where(graph, "ns", "users", "nope")


_NAMES = [f"t{i}" for i in range(6)]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edges=st.lists(st.tuples(st.sampled_from(_NAMES), st.sampled_from(_NAMES),
                                st.integers(min_value=0, max_value=4)),
                      min_size=1, max_size=12, unique_by=lambda e: (e[0], e[1])),
       depth=st.integers(min_value=1, max_value=5))
def test_gdpr_labels_equal_networkx_widest_path_on_random_graphs(
        session_graph: Graph, edges: list[tuple[str, str, int]], depth: int) -> None:
    wipe(session_graph)
    _load_columns(session_graph, edges)
    source = edges[0][1]
    expected: dict[str, tuple[str, int]] = {}
    for level in (4, 3, 2, 1, 0):  # a label is the highest level whose sub-graph reaches the node
        sub = nx.DiGraph((s, d) for d, s, lvl in edges if lvl >= level)
        if source not in sub:
            continue
        for node, dist in nx.single_source_shortest_path_length(sub, source, cutoff=depth).items():
            if node != source and node not in expected:
                expected[node] = (LABEL[level], dist)
    assert _labels(session_graph, source, depth) == expected


# --- upstream -------------------------------------------------------------------------------------

def test_upstream_diamond_and_cycle(graph: Graph) -> None:
    _load_columns(graph, [("b", "a", 4), ("c", "a", 4), ("d", "b", 4), ("d", "c", 3),
                          ("a", "d", 4)])
    up = dataset_upstream(graph, "ns", "d")
    assert {i.name: i.distance for i in up.impacted} == {"b": 1, "c": 1, "a": 2}
    assert up.direction == "upstream"
    cols = column_upstream(graph, "ns", "d", "c")
    assert {i.name: i.distance for i in cols.impacted} == {"b.c": 1, "c.c": 1, "a.c": 2}


def test_upstream_follows_a_column_renamed_upstream(graph: Graph) -> None:
    ingest_events(graph, [
        run_event("COMPLETE", new_run_id(), "rename", outputs=[dataset(
            "people", lineage={"full_name": [("users", "name", "DIRECT", "IDENTITY")]})]),
        run_event("COMPLETE", new_run_id(), "report", outputs=[dataset(
            "report", lineage={"person": [("people", "full_name", "DIRECT", "TRANSFORMATION")]})])])
    found = column_upstream(graph, "ns", "report", "person").impacted
    assert [(i.name, i.distance) for i in found] == [("people.full_name", 1), ("users.name", 2)]
    assert found[1].path == ("report.person", "people.full_name", "users.name")
    assert "IDENTITY" in found[1].why and found[1].job == "rename"


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edges=st.lists(st.tuples(st.sampled_from(_NAMES), st.sampled_from(_NAMES)),
                      min_size=1, max_size=12, unique=True),
       depth=st.integers(min_value=1, max_value=5))
def test_upstream_equals_networkx_on_random_graphs(
        session_graph: Graph, edges: list[tuple[str, str]], depth: int) -> None:
    wipe(session_graph)
    _load_columns(session_graph, [(d, s, 4) for d, s in edges])
    target = edges[0][0]
    oracle = nx.DiGraph(edges)  # derived -> source: upstream is a forward walk
    expected = {n: d for n, d in nx.single_source_shortest_path_length(
        oracle, target, cutoff=depth).items() if n != target}
    got = dataset_upstream(session_graph, "ns", target, depth=depth)
    assert {i.name: i.distance for i in got.impacted} == expected


# --- root cause and freshness ---------------------------------------------------------------------

def _day(day: int, minute: int) -> str:
    return f"2024-06-{day:02d}T02:{minute:02d}:00Z"


def _pipeline(day: int, *, stage: str | None = "COMPLETE", raw_columns: list[str] | None = None,
              assertion_ok: bool = True) -> list[dict]:  # type: ignore[type-arg]
    """raw -> stage -> mart -> dash, one job each; ``stage`` None means the stage job did not run."""
    cols = raw_columns or ["id", "email", "amount"]
    events = []

    def job(name: str, minute: int, inputs: list[dict], outputs: list[dict],  # type: ignore[type-arg]
            state: str = "COMPLETE", error: str | None = None) -> None:
        rid = new_run_id()
        facets = {"errorMessage": {"message": error, "programmingLanguage": "python"}} if error else {}
        events.append(run_event("START", rid, name, time=_day(day, minute), inputs=inputs))
        events.append(run_event(state, rid, name, time=_day(day, minute + 4), inputs=inputs,
                                outputs=outputs, run_facets=facets))

    job("load_raw", 0, [], [dataset("raw", columns=cols)])
    raw_in = dataset("raw")
    if not assertion_ok:
        raw_in["inputFacets"] = {"dataQualityAssertions": {"assertions": [
            {"assertion": "not_null", "success": False, "column": "email"}]}}
    if stage is not None:
        job("stage", 10, [raw_in], [dataset("stage", lineage={"id": [("raw", "id", "DIRECT", "IDENTITY")]})],
            state=stage, error="division by zero in amount_eur" if stage == "FAIL" else None)
    for name, source, minute in (("mart", "stage", 20), ("dash", "mart", 30)):
        job(name, minute, [dataset(source)],
            [dataset(name, lineage={"id": [(source, "id", "DIRECT", "IDENTITY")]})])
    return events


def test_root_cause_names_the_failed_upstream_run_with_its_error(graph: Graph) -> None:
    ingest_events(graph, _pipeline(1) + _pipeline(2, stage="FAIL"))
    answer = root_cause_dataset(graph, "ns", "dash")
    top = answer.candidates[0]
    assert top.kind == "failed run" and top.dataset == "ns:stage" and top.distance == 2
    assert top.evidence["errorMessage"] == "division by zero in amount_eur"
    assert top.evidence["job"] == "ns:stage" and top.evidence["runId"]
    assert top.path == ("ns:dash", "ns:mart", "ns:stage")
    assert "ns:mart" in answer.choke_points and top.evidence["chokePoint"] is True
    # the failed run of that job is also found when asking about the run that read stale data
    [mart_run] = [r for r in graph.read("lookup/job", namespace="ns", name="mart", runs=1)[0]["runs"]]
    by_run = root_cause_run(graph, mart_run["runId"])
    assert by_run.candidates[0].kind == "failed run" and by_run.candidates[0].dataset == "ns:stage"


def test_root_cause_of_a_failed_run_starts_with_the_run_itself(graph: Graph) -> None:
    ingest_events(graph, _pipeline(1, stage="FAIL"))
    [stage_run] = graph.read("lookup/job", namespace="ns", name="stage", runs=1)[0]["runs"]
    answer = root_cause_run(graph, stage_run["runId"])
    assert answer.candidates[0].distance == 0
    assert "division by zero" in answer.candidates[0].summary


def test_an_input_not_refreshed_since_the_previous_success_is_stale(graph: Graph) -> None:
    ingest_events(graph, _pipeline(1) + _pipeline(2, stage=None))
    answer = root_cause_dataset(graph, "ns", "dash")
    stale = [c for c in answer.candidates if c.kind == "stale input"]
    assert [c.dataset for c in stale] == ["ns:stage"]
    assert "not written between its consumer's last two successful reads" in stale[0].summary
    assert not [c for c in answer.candidates if c.kind == "failed run"]


def test_failed_assertions_and_schema_changes_are_candidates(graph: Graph) -> None:
    ingest_events(graph, _pipeline(1) + _pipeline(2, raw_columns=["id", "email"], assertion_ok=False))
    answer = root_cause_dataset(graph, "ns", "dash")
    kinds = {(c.kind, c.dataset) for c in answer.candidates}
    assert ("failed assertion", "ns:raw") in kinds
    [schema] = [c for c in answer.candidates if c.kind == "schema change"]
    assert schema.dataset == "ns:raw" and schema.evidence["dropped"] == ["amount"]
    scores = [c.score for c in answer.candidates]
    assert scores == sorted(scores, reverse=True)
    assert answer.candidates[0].kind == "failed assertion"


def test_as_of_sees_the_past(graph: Graph) -> None:
    ingest_events(graph, _pipeline(1, stage="FAIL") + _pipeline(2))
    assert not [c for c in root_cause_dataset(graph, "ns", "dash").candidates if c.kind == "failed run"]
    then = root_cause_dataset(graph, "ns", "dash", as_of=datetime(2024, 6, 1, 3, tzinfo=UTC))
    assert then.candidates[0].kind == "failed run" and then.candidates[0].dataset == "ns:stage"


def test_freshness_uses_the_median_cadence(graph: Graph) -> None:
    ingest_events(graph, _pipeline(1) + _pipeline(2) + _pipeline(3) + _pipeline(4))
    on_time = freshness(graph, "ns", "mart", now=datetime(2024, 6, 4, 20, tzinfo=UTC))
    assert on_time.cadence == timedelta(days=1) and not on_time.late and on_time.successes == 4
    assert on_time.last_success == datetime(2024, 6, 4, 2, 24, tzinfo=UTC)
    late = freshness(graph, "ns", "mart", now=datetime(2024, 6, 6, 2, tzinfo=UTC))
    assert late.late and "LATE" in late.verdict
    with pytest.raises(NotFound):
        freshness(graph, "ns", "nope")


def test_freshness_counts_only_completed_runs_that_wrote_the_dataset(graph: Graph) -> None:
    """Three runs seconds apart: cadence unknown, never LATE; a run of the same job that wrote
    another table is not a success of this one."""
    events = []
    for second, outputs in ((0, ["t1"]), (2, ["t1"]), (4, ["t1"]), (6, ["t2"])):
        rid = new_run_id()
        events.append(run_event("COMPLETE", rid, "app", time=f"2024-06-01T02:00:0{second}Z",
                                outputs=[dataset(o) for o in outputs]))
    ingest_events(graph, events)
    answer = freshness(graph, "ns", "t1", now=datetime(2024, 7, 1, tzinfo=UTC))
    assert answer.successes == 3 and answer.cadence is None and not answer.late
    assert "cadence unknown (3 runs" in answer.verdict and "LATE" not in answer.verdict
    assert answer.last_success == datetime(2024, 6, 1, 2, 0, 4, tzinfo=UTC)


def test_a_healthy_dataset_with_healthy_inputs_has_no_candidate(graph: Graph) -> None:
    """One application: an insert into t1, then 1 ms later a CTAS of t2 from t1, on two days."""
    events = []
    for day in (1, 2):
        for name, inputs, output, ms in (("insert_t1", [], "t1", "000"),
                                         ("ctas_t2", ["t1"], "t2", "001")):
            rid = new_run_id()
            at = f"2024-06-0{day}T02:00:00.{ms}Z"
            events.append(run_event("START", rid, name, time=at))
            events.append(run_event("COMPLETE", rid, name, time=at,
                                    inputs=[dataset(i) for i in inputs],
                                    outputs=[dataset(output)]))
    ingest_events(graph, events)
    answer = root_cause_dataset(graph, "ns", "t2")
    assert answer.candidates == () and answer.examined == 2


def test_the_examples_healthy_night_has_no_candidate_and_its_failed_night_one(graph: Graph) -> None:
    """examples/make_shop_events.py: on night 1 revenue_by_country fails, night 2 runs clean.
    Two jobs read raw.orders on one night (enrich_orders, ml_user_features): their reads are
    no evidence of staleness, only the same consumer's reads on two nights are."""
    from ingest.read import read_file

    shop = Path(__file__).parents[2] / "examples" / "events" / "shop.ndjson"
    assert ingest_events(graph, [i.obj for i in read_file(shop)]).rejected == []
    healthy = root_cause_dataset(graph, "postgres://warehouse:5432", "dashboards.revenue")
    assert healthy.candidates == () and healthy.examined == 6
    broken = root_cause_dataset(graph, "postgres://warehouse:5432", "dashboards.revenue",
                                as_of=datetime(2024, 6, 1, 3, tzinfo=UTC))
    assert [(c.kind, c.dataset) for c in broken.candidates] == [
        ("failed run", "postgres://warehouse:5432:marts.revenue_by_country")]


def test_assess_without_history() -> None:
    now = datetime(2024, 1, 2, tzinfo=UTC)
    assert assess([], now) == (None, None, None, False)
    assert assess([datetime(2024, 1, 1, tzinfo=UTC)], now)[1:] == (None, None, False)


def test_a_readers_pruned_schema_is_not_a_schema_change(graph: Graph) -> None:
    events = _pipeline(1) + _pipeline(2)
    # on night 2 the stage job reports raw with only the column it read (as Spark does)
    for e in events:
        if e["job"]["name"] == "stage" and e["eventTime"].startswith("2024-06-02"):
            e["inputs"] = [dataset("raw", columns=["id"])]
    ingest_events(graph, events)
    answer = root_cause_dataset(graph, "ns", "dash")
    assert not [c for c in answer.candidates if c.kind == "schema change"]


def test_root_cause_examines_an_input_whose_reads_were_by_other_consumers(graph: Graph) -> None:
    """A table the mart's job reads by another name (a symlink), read by its own name only by
    another job: it is still examined (its failed writer is the candidate); those reads judge no
    staleness."""
    src = dataset("src", symlinks={"identifiers": [{"namespace": "hive", "name": "db.src",
                                                    "type": "TABLE"}]})
    ingest_events(graph, [
        run_event("COMPLETE", new_run_id(), "build_mart", inputs=[dataset("db.src", "hive")],
                  outputs=[dataset("mart")], time="2024-06-01T02:00:00Z"),
        run_event("FAIL", new_run_id(), "load_src", outputs=[src], time="2024-06-02T01:00:00Z"),
        run_event("COMPLETE", new_run_id(), "side_job", inputs=[dataset("src")],
                  outputs=[dataset("side")], time="2024-06-02T01:30:00Z")])
    answer = root_cause_dataset(graph, "ns", "mart")
    assert [(c.kind, c.dataset) for c in answer.candidates] == [("failed run", "ns:src")]
