"""The same events give the same graph whatever order they arrive in and however they are batched
(issue 20): every "latest value" follows the event time of the event that set it."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graph.db import Graph
from ingest.read import read_file
from ingest.validate import ValidEvent, validate
from tests.conftest import wipe
from tests.helpers import (
    canonical_dump,
    dataset,
    ingest_events,
    new_run_id,
    rows,
    run_event,
)

pytestmark = pytest.mark.integration

HIVE = "hive://metastore:9083"


def _lifecycle(state: str | None, time: str) -> dict[str, Any]:
    facets: dict[str, Any] = {}
    if state is not None:
        facets["lifecycleStateChange"] = {"lifecycleStateChange": state}
    table = [{**dataset("default.orders", HIVE), "facets": facets}]
    job = f"hive_{(state or 'read').lower()}"
    if state is None:
        return run_event("COMPLETE", new_run_id(), job, ns="hive", time=time, inputs=table)
    return run_event("COMPLETE", new_run_id(), job, ns="hive", time=time, outputs=table)


def _state(graph: Graph) -> Any:
    [row] = rows(graph, "MATCH (d:Dataset {name: 'default.orders'}) RETURN d.lifecycleState AS s")
    return row["s"]


def _loads(events: list[dict[str, Any]]) -> list[tuple[str, list[list[dict[str, Any]]]]]:
    """Every order of the events, each loaded one event per batch and all in one batch."""
    out = []
    for order in itertools.permutations(events):
        out.append(("one by one", [[e] for e in order]))
        out.append(("one batch", [list(order)]))
    return out


def test_a_table_dropped_and_recreated_ends_created_in_every_order(graph: Graph) -> None:
    """DROP at :01, CREATE at :02, a read at :03: the latest lifecycle change is CREATE."""
    events = [_lifecycle("DROP", "2024-06-01T10:00:01Z"), _lifecycle("CREATE", "2024-06-01T10:00:02Z"),
              _lifecycle(None, "2024-06-01T10:00:03Z")]
    seen = {}
    for how, batches in _loads(events):
        wipe(graph)
        for batch in batches:
            ingest_events(graph, batch)
        seen[(how, tuple(e["eventTime"][-3:-1] for b in batches for e in b))] = _state(graph)
    assert set(seen.values()) == {"CREATE"}, seen


def test_every_latest_property_follows_its_own_event_time(graph: Graph) -> None:
    """An older event that arrives first fills description and owners; a newer one that sets
    only the description must still replace it, and the older owners stay (nobody set newer)."""
    old = run_event("COMPLETE", new_run_id(), "w", time="2024-06-01T10:00:00Z", outputs=[dataset(
        "t", documentation={"description": "old"},
        ownership={"owners": [{"name": "team:a"}]})])
    new = run_event("COMPLETE", new_run_id(), "w", time="2024-06-01T11:00:00Z", outputs=[dataset(
        "t", documentation={"description": "new"})])
    for first, second in ((old, new), (new, old)):
        wipe(graph)
        ingest_events(graph, [first])
        ingest_events(graph, [second])
        [row] = rows(graph, "MATCH (d:Dataset {name: 't'}) RETURN d.description AS d, d.owners AS o")
        assert row == {"d": "new", "o": ["team:a"]}


def test_equal_times_are_broken_the_same_way_in_every_order(graph: Graph) -> None:
    """Two events at the same instant that disagree: one winner, whichever arrives first."""
    run = new_run_id()
    a = run_event("COMPLETE", run, "j", time="2024-06-01T10:00:00Z",
                  outputs=[dataset("t", documentation={"description": "a"})])
    b = run_event("FAIL", run, "j", time="2024-06-01T10:00:00Z",
                  outputs=[dataset("t", documentation={"description": "b"})])
    answers = set()
    for _how, batches in _loads([a, b]):
        wipe(graph)
        for batch in batches:
            ingest_events(graph, batch)
        answers.add(tuple(rows(graph, "MATCH (r:Run)-[:WROTE]->(d:Dataset) "
                                      "RETURN r.state AS s, d.description AS d")[0].values()))
    assert len(answers) == 1, answers


def test_the_whole_graph_is_the_same_in_any_order_and_batching(graph: Graph) -> None:
    """A pipeline with lifecycle, schema, ownership and run-state changes, loaded in shuffled
    orders and random batch splits: the canonical dump of the graph never changes."""
    events = _pipeline()
    ingest_events(graph, events)
    expected = canonical_dump(graph)
    rng = random.Random(20)
    for attempt in range(6):
        order = events[:]
        rng.shuffle(order)
        cuts = sorted(rng.sample(range(1, len(order)), rng.randint(0, 4)))
        wipe(graph)
        for start, end in itertools.pairwise([0, *cuts, len(order)]):
            ingest_events(graph, order[start:end], batch_size=rng.choice([1, 3, 500]))
        got = canonical_dump(graph)
        assert got == expected, (attempt, sorted(set(got) ^ set(expected))[:6])


def _pipeline() -> list[dict[str, Any]]:
    events = []
    for day, (state, columns, owner) in enumerate([("CREATE", ["a", "b", "c"], "team:a"),
                                                   ("OVERWRITE", ["a", "b"], "team:b"),
                                                   ("TRUNCATE", ["a", "b"], "team:b"),
                                                   ("DROP", ["a", "b"], "team:c")], start=1):
        run = new_run_id()
        out = dataset("orders", columns=columns, lifecycleStateChange={"lifecycleStateChange": state},
                      ownership={"owners": [{"name": owner}]},
                      documentation={"description": f"day {day}"})
        src = dataset("raw_orders", columns=["a", "b", "c"])
        for kind, minute in (("START", "00"), ("COMPLETE" if day != 3 else "FAIL", "05")):
            events.append(run_event(kind, run, "load_orders", time=f"2024-06-0{day}T02:{minute}:00Z",
                                    inputs=[src], outputs=[out],
                                    job_facets={"sql": {"query": f"-- version {day}"}}))
        events.append(run_event("COMPLETE", new_run_id(), "report", time=f"2024-06-0{day}T03:00:00Z",
                                inputs=[dataset("orders", columns=["a"])],
                                outputs=[dataset("report", columns=["total"],
                                                 lineage={"total": [("orders", "a", "DIRECT",
                                                                     "AGGREGATION")]})]))
    return events


def test_the_current_columns_are_the_latest_written_schema_in_its_order(graph: Graph) -> None:
    """(a, b, c) at t0, then (b, a) at t5, and a reader at t9 that reads only a: in every order
    the dataset's columns are b, a (the schema's order), c is dropped, the reader changes
    nothing."""
    events = [
        run_event("COMPLETE", new_run_id(), "w", time="2024-06-01T00:00:00Z",
                  outputs=[dataset("t", columns=["a", "b", "c"])]),
        run_event("COMPLETE", new_run_id(), "w", time="2024-06-01T00:05:00Z",
                  outputs=[dataset("t", columns=["b", "a"])]),
        run_event("COMPLETE", new_run_id(), "r", time="2024-06-01T00:09:00Z",
                  inputs=[dataset("t", columns=["a"])]),
    ]
    for how, batches in _loads(events):
        wipe(graph)
        for batch in batches:
            ingest_events(graph, batch)
        [row] = graph.read("lookup/dataset", namespace="ns", name="t")
        assert [c["name"] for c in row["columns"]] == ["b", "a"], how
        assert [(c["name"], c["lastWritten"].to_native().minute) for c in row["dropped"]] == \
            [("c", 0)], how


def test_a_columns_type_is_that_of_the_current_schema(graph: Graph) -> None:
    """int at t1, string at t2 (reported again at t5), and the int schema again at t3 arriving
    last: the current schema is the string one, and so is the type."""
    def schema(minute: int, kind: str) -> dict[str, Any]:
        out = dataset("t")
        out["facets"]["schema"] = {"fields": [{"name": "a", "type": kind}]}
        return run_event("COMPLETE", new_run_id(), "w", time=f"2024-06-01T00:0{minute}:00Z",
                         outputs=[out])
    for order in ([1, 2, 5, 3], [3, 5, 2, 1], [2, 5, 1, 3]):
        wipe(graph)
        by_minute = {1: schema(1, "int"), 2: schema(2, "string"), 5: schema(5, "string"),
                     3: schema(3, "int")}
        for minute in order:
            ingest_events(graph, [by_minute[minute]])
        [row] = graph.read("lookup/dataset", namespace="ns", name="t")
        assert row["columns"] == [{"name": "a", "type": "string", "description": None,
                                   "inSchema": True, "tags": []}], order


def test_a_run_known_only_from_other_events_keeps_the_time_it_became_known(graph: Graph) -> None:
    """OTHER is no transition: of a run's OTHER events the earliest sets its state time, in every
    order and batching; a START after them moves it (docs/graph-model.md, "The latest value")."""
    run = new_run_id()
    events = [run_event("OTHER", run, time="2024-05-01T02:03:00Z"),
              run_event("OTHER", run, time="2024-05-01T02:00:00Z"),
              run_event("OTHER", run, time="2024-05-01T02:05:00Z")]
    for how, batches in _loads(events):
        wipe(graph)
        for batch in batches:
            ingest_events(graph, batch)
        [row] = rows(graph, "MATCH (r:Run {runId: $id}) RETURN r.state AS s, r.stateTime AS t", id=run)
        assert (row["s"], row["t"].iso_format()[:19]) == ("OTHER", "2024-05-01T02:00:00"), how
    ingest_events(graph, [run_event("START", run, time="2024-05-01T02:04:00Z")])
    [row] = rows(graph, "MATCH (r:Run {runId: $id}) RETURN r.state AS s, r.stateTime AS t", id=run)
    assert (row["s"], row["t"].iso_format()[:19]) == ("START", "2024-05-01T02:04:00")


def test_a_models_training_columns_are_the_union_of_its_runs_statements(graph: Graph) -> None:
    """Two events of one training run name different input columns for the model it writes:
    WROTE.trainedOn is their union, in every order and batching (docs/graph-model.md, "Models")."""
    run = new_run_id()
    features = [dataset("features", columns=["a", "b", "c"])]

    def training(event_type: str, time: str, field: str) -> dict[str, Any]:
        model = dataset("models/churn", columns=["score"],
                        lineage={"score": [("features", field, "DIRECT", "TRANSFORMATION")]},
                        datasetType={"datasetType": "MODEL"})
        return run_event(event_type, run, "train", time=time, inputs=features, outputs=[model])

    events = [training("RUNNING", "2024-05-01T02:00:00Z", "b"),
              training("COMPLETE", "2024-05-01T02:05:00Z", "a"),
              training("OTHER", "2024-05-01T02:01:00Z", "b")]
    for how, batches in _loads(events):
        wipe(graph)
        for batch in batches:
            ingest_events(graph, batch)
        [row] = rows(graph, "MATCH (:Run)-[w:WROTE]->(:Dataset {name: 'models/churn'}) "
                            "RETURN w.trainedOn AS t")
        assert row["t"] == ["ns:features.a", "ns:features.b"], how


def _same_graph_in_shuffled_orders(graph: Graph, events: list[Any], seed: int, attempts: int,
                                   batch_sizes: tuple[int, ...] = (1, 50, 500)) -> None:
    ingest_events(graph, events)
    expected = canonical_dump(graph)
    rng = random.Random(seed)
    for attempt in range(attempts):
        order = events[:]
        rng.shuffle(order)
        cuts = sorted(rng.sample(range(1, len(order)), min(4, len(order) - 1)))
        wipe(graph)
        for start, end in itertools.pairwise([0, *cuts, len(order)]):
            ingest_events(graph, order[start:end], batch_size=rng.choice(batch_sizes))
        got = canonical_dump(graph)
        assert got == expected, (attempt, sorted(set(got) ^ set(expected))[:4])


def test_the_example_pipeline_is_the_same_graph_in_any_order(graph: Graph) -> None:
    items = read_file(Path(__file__).parents[2] / "examples" / "events" / "shop.ndjson")
    _same_graph_in_shuffled_orders(graph, [i.obj for i in items], seed=7, attempts=3)


def test_the_shared_corpus_is_the_same_graph_in_any_order(graph: Graph, corpus: Path) -> None:
    """Every valid event of the corpus (other projects' producers), shuffled and re-batched."""
    events = [item.obj for f in sorted(p for p in corpus.rglob("*") if p.suffix in (".json", ".ndjson"))
              for item in read_file(f) if isinstance(validate(item.obj), ValidEvent)]
    assert len(events) > 80
    _same_graph_in_shuffled_orders(graph, events, seed=871, attempts=2)


_minutes = st.integers(min_value=0, max_value=30)
_change = st.tuples(
    st.sampled_from(["load_a", "load_b", "read_c"]), _minutes,
    st.sampled_from(["CREATE", "OVERWRITE", "DROP", "TRUNCATE", None]),
    st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=4, unique=True),
    st.sampled_from(["team:a", "team:b", None]), st.sampled_from(["COMPLETE", "FAIL", "START"]))


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(changes=st.lists(_change, min_size=2, max_size=8), seed=st.integers(0, 1000))
def test_generated_changes_give_the_same_graph_in_any_order(
        graph: Graph, changes: list[tuple[Any, ...]], seed: int) -> None:
    """Writers and readers of one table that change its lifecycle, schema and owners, some at the
    same instant: any order and any batching give the same graph."""
    events = []
    for job, minute, state, columns, owner, kind in changes:
        facets: dict[str, Any] = {}
        if state is not None:
            facets["lifecycleStateChange"] = {"lifecycleStateChange": state}
        if owner is not None:
            facets["ownership"] = {"owners": [{"name": owner}]}
        table = dataset("t", columns=columns, **facets)
        at = f"2024-06-01T00:{minute:02d}:00Z"
        if job == "read_c":
            events.append(run_event(kind, new_run_id(), job, time=at, inputs=[table],
                                    outputs=[dataset("c", columns=["x"])]))
        else:
            events.append(run_event(kind, new_run_id(), job, time=at, outputs=[table]))
    wipe(graph)
    _same_graph_in_shuffled_orders(graph, events, seed=seed, attempts=2, batch_sizes=(1, 2, 500))


def test_over_http_one_per_request_or_in_arrays_the_graph_is_the_same(
        graph: Graph, tmp_path: Path) -> None:
    """The path a producer takes: POST /api/v1/lineage (one event per request in a shuffled
    order, or arrays), the durable log, the worker; the same canonical graph every time."""
    from fastapi.testclient import TestClient

    from api.app import create_app
    from graph.settings import Settings
    from ingest.log.sqlite import SQLiteLog
    from ingest.worker import Worker

    events = _pipeline()
    ingest_events(graph, events)
    expected = canonical_dump(graph)
    rng = random.Random(3)
    for attempt, per_request in enumerate((1, 5, len(events))):
        order = events[:]
        rng.shuffle(order)
        wipe(graph)
        log = SQLiteLog(tmp_path / f"events-{attempt}.db")
        with TestClient(create_app(Settings(), graph, log), base_url="http://localhost",
                        client=("127.0.0.1", 50000)) as api:
            for start in range(0, len(order), per_request):
                body = order[start] if per_request == 1 else order[start:start + per_request]
                assert api.post("/api/v1/lineage", json=body).status_code == 201
        worker = Worker(graph, log, batch=rng.choice([1, 4, 500]))
        while worker.lag():
            worker.run_once()
        got = canonical_dump(graph)
        assert got == expected, (per_request, sorted(set(got) ^ set(expected))[:4])
