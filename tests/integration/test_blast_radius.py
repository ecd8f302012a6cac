"""Downstream blast radius on the real server: hand-built answers and a networkx oracle."""

from __future__ import annotations

from datetime import UTC, datetime

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graph.db import Graph
from graph.errors import NotFound
from impact.blast_radius import column_blast_radius, dataset_blast_radius
from tests.conftest import wipe
from tests.helpers import dataset, ingest_events, new_run_id, run_event

pytestmark = pytest.mark.integration


def _load_edges(graph: Graph, edges: list[tuple[str, str]], time: str = "2024-05-01T02:00:00Z"
                ) -> None:
    """One job per derived dataset; each edge (derived, source) as identity column lineage."""
    sources: dict[str, list[str]] = {}
    for derived, source in edges:
        sources.setdefault(derived, []).append(source)
    events = [run_event("COMPLETE", new_run_id(), f"make_{out}", time=time,
                        inputs=[dataset(s) for s in ins],
                        outputs=[dataset(out, lineage={"x": [(s, "x", "DIRECT", "IDENTITY")
                                                             for s in ins]})])
              for out, ins in sources.items()]
    assert ingest_events(graph, events).rejected == []


def _datasets(answer) -> dict[str, int]:  # type: ignore[no-untyped-def]
    return {i.name: i.distance for i in answer.impacted if i.kind == "dataset"}


def test_diamond_and_cycle_report_each_dataset_once_at_shortest_distance(graph: Graph) -> None:
    _load_edges(graph, [("b", "a"), ("c", "a"), ("d", "b"), ("d", "c"), ("e", "d"),
                        ("d", "e"), ("e", "e")])
    answer = dataset_blast_radius(graph, "ns", "a")
    assert _datasets(answer) == {"b": 1, "c": 1, "d": 2, "e": 3}
    [e] = [i for i in answer.impacted if i.name == "e"]
    assert e.path[0] == "ns:a" and e.path[-1] == "ns:e" and len(e.path) == 4
    assert e.job == "make_e" and "IDENTITY" in e.why


def test_depth_bounds_the_walk(graph: Graph) -> None:
    _load_edges(graph, [("b", "a"), ("c", "b"), ("d", "c")])
    assert _datasets(dataset_blast_radius(graph, "ns", "a", depth=2)) == {"b": 1, "c": 2}


def test_readers_of_impacted_datasets_are_impacted_jobs(graph: Graph) -> None:
    _load_edges(graph, [("b", "a"), ("c", "b")])
    jobs = {i.name: i.distance for i in dataset_blast_radius(graph, "ns", "a").impacted
            if i.kind == "job"}
    assert jobs == {"make_b": 1, "make_c": 2}


def test_as_of_ignores_lineage_first_seen_later(graph: Graph) -> None:
    _load_edges(graph, [("b", "a")], time="2024-01-01T00:00:00Z")
    _load_edges(graph, [("c", "b")], time="2024-06-01T00:00:00Z")
    before = dataset_blast_radius(graph, "ns", "a", as_of=datetime(2024, 3, 1, tzinfo=UTC))
    assert _datasets(before) == {"b": 1}


def test_column_blast_radius_explains_masking_and_identity(graph: Graph) -> None:
    events = [run_event("COMPLETE", new_run_id(), "clean", outputs=[dataset(
        "clean", lineage={"email_hash": [("raw", "email", "DIRECT", "MASKED")]})]),
        run_event("COMPLETE", new_run_id(), "features", outputs=[dataset(
            "features", lineage={"email": [("raw", "email", "DIRECT", "IDENTITY")]})])]
    ingest_events(graph, events)
    found = {i.name: i.why for i in column_blast_radius(graph, "ns", "raw", "email").impacted}
    assert set(found) == {"clean.email_hash", "features.email"}
    assert "masked" in found["clean.email_hash"] and "masked" not in found["features.email"]
    assert "IDENTITY" in found["features.email"]


def test_unknown_dataset_is_not_found_not_an_empty_answer(graph: Graph) -> None:
    with pytest.raises(NotFound, match="no dataset ns:missing"):
        dataset_blast_radius(graph, "ns", "missing")


_NAMES = [f"t{i}" for i in range(7)]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edges=st.lists(st.tuples(st.sampled_from(_NAMES), st.sampled_from(_NAMES)),
                      min_size=1, max_size=14, unique=True),
       depth=st.integers(min_value=1, max_value=6))
def test_blast_radius_equals_networkx_on_random_graphs(
        session_graph: Graph, edges: list[tuple[str, str]], depth: int) -> None:
    wipe(session_graph)
    _load_edges(session_graph, edges)
    oracle = nx.DiGraph()
    oracle.add_edges_from((source, derived) for derived, source in edges)
    source = edges[0][1]
    expected = {n: d for n, d in nx.single_source_shortest_path_length(
        oracle, source, cutoff=depth).items() if n != source}
    assert _datasets(dataset_blast_radius(session_graph, "ns", source, depth=depth)) == expected


def test_job_blast_radius_starts_at_its_outputs(graph: Graph) -> None:
    from impact.blast_radius import job_blast_radius

    _load_edges(graph, [("b", "a"), ("c", "b"), ("d", "c")])
    answer = job_blast_radius(graph, "ns", "make_b")
    assert _datasets(answer) == {"b": 1, "c": 2, "d": 3}
    jobs = {i.name: i.distance for i in answer.impacted if i.kind == "job"}
    assert jobs == {"make_c": 2, "make_d": 3}  # readers of b and c; not the job itself
    [d] = [i for i in answer.impacted if i.name == "d"]
    assert d.path == ("ns:make_b", "ns:b", "ns:c", "ns:d")
    assert _datasets(job_blast_radius(graph, "ns", "make_b", depth=2)) == {"b": 1, "c": 2}
    with pytest.raises(NotFound, match="no job ns:nope"):
        job_blast_radius(graph, "ns", "nope")
