"""Retired lineage (issue 19, part 5): a job that read A until Monday and reads B from Tuesday is
downstream of B only. Questions answer over current lineage; retired edges come back marked when
asked for, with their last run; as of a time, the lineage current then. Every order, one batch and
several."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

import pytest

from graph.db import Graph
from impact.blast_radius import column_blast_radius, dataset_blast_radius, job_blast_radius
from impact.changes import Change
from impact.check import check
from impact.upstream import dataset_upstream
from tests.conftest import wipe
from tests.helpers import canonical_dump, dataset, ingest_events, run_event

pytestmark = pytest.mark.integration

RUN_A = "01900000-0000-7000-8000-00000000000a"
RUN_B = "01900000-0000-7000-8000-00000000000b"
RUN_FAIL = "01900000-0000-7000-8000-00000000000f"
RUN_EMPTY = "01900000-0000-7000-8000-00000000000e"


def _every_load(graph: Graph, events: list[dict[str, Any]]) -> Any:
    first: list[str] | None = None
    for order in itertools.permutations(events):
        for batches in ([list(order)], [[e] for e in order]):
            wipe(graph)
            for batch in batches:
                assert ingest_events(graph, batch).rejected == []
            dump = canonical_dump(graph)
            first = first or dump
            assert dump == first, "the graph depends on the order or batching of the events"
            yield


def _day(run: str, day: int, source: str | None, state: str = "COMPLETE") -> dict[str, Any]:
    inputs = [dataset(source, columns=["x"])] if source else []
    outputs = [dataset("out", columns=["x"], lineage={"x": [(source, "x", "DIRECT", "IDENTITY")]})
               ] if source else []
    return run_event(state, run, "etl", time=f"2024-06-0{day}T02:00:00Z", inputs=inputs,
                     outputs=outputs)


def _names(answer: Any, kind: str = "dataset") -> set[str]:
    return {i.name for i in answer.impacted if i.kind == kind}


def test_a_later_completed_run_retires_what_it_no_longer_reads(graph: Graph) -> None:
    """Day 1 reads a, day 2 reads b (both complete); day 3 fails reading c; day 4 completes
    with no datasets reported. Current: b -> out. a's edges are retired at day 2 with their last
    run; c's only run failed, so they are not current either; the empty run retires nothing."""
    events = [_day(RUN_A, 1, "a"), _day(RUN_B, 2, "b"), _day(RUN_FAIL, 3, "c", "FAIL"),
              _day(RUN_EMPTY, 4, None)]
    for _ in _every_load(graph, events):
        assert _names(dataset_upstream(graph, "ns", "out")) == {"b"}
        assert _names(dataset_blast_radius(graph, "ns", "a")) == set()
        assert _names(dataset_blast_radius(graph, "ns", "a"), "job") == set()
        assert _names(dataset_blast_radius(graph, "ns", "b")) == {"out"}
        assert _names(job_blast_radius(graph, "ns", "etl")) == {"out"}
        assert _names(column_blast_radius(graph, "ns", "a", "x"), "column") == set()
        assert check(graph, [Change("drop_column", "ns", "a", "x")]).verdict == "SAFE"
        # asked for: retired lineage, marked with the job's last run that stated it
        old = dataset_blast_radius(graph, "ns", "a", include_retired=True)
        out = next(i for i in old.impacted if i.name == "out")
        assert "RETIRED: job ns:etl no longer states it since 2024-06-02 02:00" in out.why
        assert f"last run {RUN_A}" in out.why
        assert _names(old, "job") == {"etl"}
        retired_col = column_blast_radius(graph, "ns", "a", "x", include_retired=True)
        assert [i.name for i in retired_col.impacted] == ["out.x"]
        assert "RETIRED" in retired_col.impacted[0].why
        assert check(graph, [Change("drop_column", "ns", "a", "x")],
                     include_retired=True).verdict == "BREAKING"
        # as of day 1 (after its run), a fed out and b did not exist yet
        day_1 = datetime(2024, 6, 1, 12, tzinfo=UTC)
        assert _names(dataset_upstream(graph, "ns", "out", as_of=day_1)) == {"a"}
        assert _names(dataset_blast_radius(graph, "ns", "a", as_of=day_1)) == {"out"}


def test_a_job_that_stops_running_keeps_its_lineage(graph: Graph) -> None:
    """No later completed run: its edges stay current, however old."""
    for _ in _every_load(graph, [_day(RUN_A, 1, "a")]):
        assert _names(dataset_blast_radius(graph, "ns", "a")) == {"out"}


def test_a_partitioned_input_follows_the_latest_partition(graph: Graph) -> None:
    """A job reading one partition per run (a path per day): the older partitions' edges retire;
    the output's upstream is the partition its latest run read."""
    events = [run_event("COMPLETE", run, "daily", time=f"2024-06-0{day}T02:00:00Z",
                        inputs=[dataset(f"/events/day={day}")], outputs=[dataset("summary")])
              for day, run in ((1, RUN_A), (2, RUN_B))]
    for _ in _every_load(graph, events):
        assert _names(dataset_upstream(graph, "ns", "summary")) == {"/events/day=2"}
        assert _names(dataset_upstream(graph, "ns", "summary", include_retired=True)) == {
            "/events/day=1", "/events/day=2"}
