"""Retired lineage (issue 19, part 5): a job that read A until Monday and reads B from Tuesday is
downstream of B only. Questions answer over current lineage; retired edges come back marked when
asked for, with their last run; as of a time, the lineage current then. Every order, one batch and
several."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime
from typing import Any

import pytest

from graph.db import Graph
from impact.blast_radius import column_blast_radius, dataset_blast_radius, job_blast_radius
from impact.change.check import check
from impact.change.read import Change
from impact.upstream import dataset_upstream
from impact.where import where
from tests.conftest import wipe
from tests.helpers import canonical_dump, dataset, ingest_events, run_event

pytestmark = pytest.mark.integration

RUN_A = "01900000-0000-7000-8000-00000000000a"
RUN_B = "01900000-0000-7000-8000-00000000000b"
RUN_FAIL = "01900000-0000-7000-8000-00000000000f"
RUN_EMPTY = "01900000-0000-7000-8000-00000000000e"


def _every_load(graph: Graph, events: list[dict[str, Any]], most: int | None = None) -> Any:
    """Load the events in every order (or ``most`` orders drawn with a fixed seed), as one batch
    and one event a batch; the same graph each time."""
    first: list[str] | None = None
    orders = list(itertools.permutations(events)) if most is None else [
        random.Random(seed).sample(events, len(events)) for seed in range(most)]
    for order in orders:
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


RUN_C = "01900000-0000-7000-8000-00000000000c"


def _copy(run: str, day: int, columns: dict[str, tuple[str, str, bool]],
          state: str = "COMPLETE", schema: list[str] | None = None) -> dict[str, Any]:
    """A run of job ``copy`` (src -> dst); ``columns`` maps an output column to the (type,
    subtype, masking) it takes from ``src.email``."""
    lineage = {"fields": {out: {"inputFields": [{
        "namespace": "ns", "name": "src", "field": "email",
        "transformations": [{"type": kind, "subtype": subtype, "masking": masking}]}]}
        for out, (kind, subtype, masking) in columns.items()}}
    out = dataset("dst", columns=schema if schema is not None else list(columns))
    out["facets"]["columnLineage"] = lineage
    return run_event(state, run, "copy", time=f"2026-11-0{day}T02:00:00Z",
                     inputs=[dataset("src", columns=["email"])], outputs=[out])


RAW = ("DIRECT", "IDENTITY", False)
MASKED = ("DIRECT", "TRANSFORMATION", True)


def _labels(graph: Graph) -> dict[str, str]:
    return {f"{r.dataset}.{r.column}": r.label for r in where(graph, "ns", "src", "email").reaches}


def test_a_run_that_starts_masking_a_column_retires_the_raw_copy(graph: Graph) -> None:
    """Run 1 copies src.email raw into dst.email; run 2 (same datasets) masks it. The latest
    completed run's column lineage is the whole truth of dst's: the raw edge is retired, in every
    order and batching, shown again with retired lineage and as of day 1."""
    events = [_copy(RUN_A, 1, {"email": RAW}), _copy(RUN_B, 2, {"email": MASKED})]
    for _ in _every_load(graph, events):
        assert _labels(graph) == {"dst.email": "masked"}
        radius = column_blast_radius(graph, "ns", "src", "email")
        assert [(i.name, "RETIRED" in i.why) for i in radius.impacted] == [("dst.email", False)]
        retired = where(graph, "ns", "src", "email", include_retired=True)
        assert {r.label for r in retired.reaches} == {"raw"}
        assert any(f"last run {RUN_A}" in s.basis for r in retired.reaches for s in r.steps)
        assert _labels_as_of(graph, datetime(2026, 11, 1, 12, tzinfo=UTC)) == {"dst.email": "raw"}


def _labels_as_of(graph: Graph, as_of: datetime) -> dict[str, str]:
    return {f"{r.dataset}.{r.column}": r.label
            for r in where(graph, "ns", "src", "email", as_of=as_of).reaches}


def test_a_run_that_writes_a_masked_column_instead_retires_the_dropped_raw_one(graph: Graph) -> None:
    """Run 2 writes email_hash (masked) and drops email from dst's schema: email is no raw copy
    any longer."""
    events = [_copy(RUN_A, 1, {"email": RAW}), _copy(RUN_B, 2, {"email_hash": MASKED})]
    for _ in _every_load(graph, events):
        assert _labels(graph) == {"dst.email_hash": "masked"}


def test_a_runs_partial_lineage_across_its_events_adds_up(graph: Graph) -> None:
    """Run 2's START states one column, its COMPLETE another: both are its lineage, and run 1's
    raw copy of a third, which run 2 no longer states, is retired; a failed run 3 and a run that
    states no column lineage change nothing."""
    day_3_empty = run_event("COMPLETE", RUN_C, "copy", time="2026-11-04T02:00:00Z",
                            inputs=[dataset("src", columns=["email"])],
                            outputs=[dataset("dst", columns=["a", "b", "c"])])
    events = [_copy(RUN_A, 1, {"c": RAW}),
              _copy(RUN_B, 2, {"a": MASKED}, state="START", schema=["a", "b", "c"]),
              _copy(RUN_B, 3, {"b": RAW}, schema=["a", "b", "c"]),
              _copy(RUN_FAIL, 3, {"c": RAW}, state="FAIL"), day_3_empty]
    for _ in _every_load(graph, events, most=12):
        assert _labels(graph) == {"dst.a": "masked", "dst.b": "raw"}
