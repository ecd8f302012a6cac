"""The pure parts of the questions, without Neo4j: type widening, flow analysis (criticality and
choke points), freshness, and the scoring of root-cause candidates."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from neo4j.time import DateTime

from impact.change.check import widens
from impact.flow import choke_points, criticality, flow_graph
from impact.health.freshness import assess
from impact.root_cause import WEIGHT, candidates

T0 = datetime(2024, 6, 10, 2, 0, tzinfo=UTC)


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("int", "bigint", True), ("INT", "BigInt", True), ("smallint", "int", True),
    ("bigint", "int", False), ("float", "double", True), ("double", "float", False),
    ("int", "double", True), ("bigint", "double", False), ("int", "float", False),
    ("decimal(10,2)", "decimal(12,2)", True), ("decimal(10,2)", "decimal(10,1)", False),
    ("numeric(10, 2)", "decimal(11,3)", True), ("decimal(10,2)", "decimal(11,4)", False),
    ("varchar(20)", "varchar(50)", True), ("varchar(50)", "varchar(20)", False),
    ("varchar(20)", "text", True), ("string", "int", False), (None, "int", False),
    ("date", "date", True),
])
def test_type_widening(old: str | None, new: str | None, expected: bool) -> None:
    assert widens(old, new) is expected


def test_criticality_counts_what_lies_downstream() -> None:
    flow = flow_graph({"b": ["a"], "c": ["b"], "d": ["b"], "e": ["c", "d"]})
    assert criticality(flow, ["a", "b", "c", "e", "zz"]) == {"a": 4, "b": 3, "c": 1, "e": 0, "zz": 0}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)), max_size=40))
def test_criticality_equals_descendants_with_cycles_and_self_loops(pairs: list[tuple[int, int]]
                                                                  ) -> None:
    sources: dict[str, list[str]] = {}
    for derived, source in pairs:  # the walk's rows: each node with its direct sources
        sources.setdefault(f"n{derived}", []).append(f"n{source}")
    flow = flow_graph(sources)
    asked = [*flow.nodes, "not-in-the-walk"]
    expected = {n: len(nx.descendants(flow, n)) if n in flow else 0 for n in asked}
    assert criticality(flow, asked) == expected


def test_choke_points_every_path_passes_through_nearest_first() -> None:
    chain = flow_graph({"b": ["a"], "c": ["b"], "d": ["c"]})
    assert choke_points(chain, "d") == ["c", "b", "a"]
    diamond = flow_graph({"b": ["a"], "c": ["a"], "d": ["b", "c"], "e": ["d"]})
    assert choke_points(diamond, "e") == ["d", "a"]
    two_sources = flow_graph({"c": ["a", "b"], "d": ["c"]})
    assert choke_points(two_sources, "d") == ["c"]
    assert choke_points(flow_graph({"a": ["b"], "b": ["a"]}), "a") == []  # only a cycle upstream
    assert choke_points(chain, "nowhere") == []


def test_freshness_from_the_cadence_of_successes() -> None:
    daily = [T0 - timedelta(days=d) for d in (0, 1, 2, 3)]
    assert assess(daily, T0 + timedelta(hours=30)) == (T0, timedelta(days=1), T0 + timedelta(hours=36), False)
    assert assess(daily, T0 + timedelta(hours=37))[3] is True
    assert assess([T0], T0 + timedelta(days=30)) == (T0, None, None, False)
    assert assess([], T0) == (None, None, None, False)


def test_a_cadence_needs_four_writes_a_minute_apart_or_it_is_unknown_never_late() -> None:
    """Three runs seconds apart are one occasion; three daily writes are too few to tell."""
    seconds_apart = [T0 - timedelta(seconds=s) for s in (0, 2, 5)]
    assert assess(seconds_apart, T0 + timedelta(days=30)) == (T0, None, None, False)
    three_days = [T0 - timedelta(days=d) for d in (0, 1, 2)]
    assert assess(three_days, T0 + timedelta(days=30)) == (T0, None, None, False)
    bursts = [T0 - timedelta(days=d, seconds=s) for d in (0, 1, 2, 3) for s in (0, 3)]
    assert assess(bursts, T0)[1] == timedelta(days=1)


def test_writes_of_the_same_application_are_never_stale_relative_to_each_other() -> None:
    """An insert 1 ms before the CTAS that reads it: no candidate, with or without a cadence."""
    week = timedelta(days=7)
    just_before = _row(successes=[_neo(T0 - timedelta(milliseconds=1))], reads=[_neo(T0)])
    assert candidates(just_before, 0, T0, week, set()) == []
    daily = [_neo(T0 - timedelta(days=d, milliseconds=1)) for d in range(5)]
    reads = [_neo(T0 - timedelta(days=d)) for d in range(2)]
    assert candidates(_row(successes=daily, reads=reads), 0, T0, week, set()) == []
    # with a daily cadence, read three days after its last write: overdue when it was read
    old = [_neo(T0 - timedelta(days=d)) for d in range(3, 8)]
    [c] = candidates(_row(successes=old, reads=reads), 0, T0, week, set())
    assert c.kind == "stale input" and c.evidence["cadence"] == timedelta(days=1)


def _row(**over: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"namespace": "pg", "name": "src", "distance": 2, "path": ["pg:dash", "pg:mid", "pg:src"],
                           "latestRuns": [], "failedAssertions": [], "successes": [], "producers": ["job_a"],
                           "added": [], "dropped": []}
    return row | over


def _neo(when: datetime) -> DateTime:
    """A time as the driver returns it."""
    return DateTime.from_native(when)


def _run(state: str, when: datetime, error: str | None = None) -> dict[str, Any]:
    return {"job": "job_a", "runId": "r1", "state": state, "time": _neo(when), "errorMessage": error}


def test_candidate_scores_weigh_kind_choke_point_and_distance() -> None:
    failed = _row(latestRuns=[_run("FAIL", T0, "boom")], successes=[_neo(T0 - timedelta(days=1))])
    [c] = candidates(failed, 0, T0, timedelta(days=7), set())
    assert (c.kind, c.score, c.distance) == ("failed run", WEIGHT["failed run"] - 2, 2)
    assert "boom" in c.summary and c.evidence["chokePoint"] is False
    [choke] = candidates(failed, 0, T0, timedelta(days=7), {"pg:src"})
    assert choke.score == c.score + 10
    far = candidates(failed | {"distance": 40}, 0, T0, timedelta(days=7), set())
    assert far[0].score == WEIGHT["failed run"] - 19  # distance costs at most 19


def test_stale_missing_and_schema_change_candidates() -> None:
    week = timedelta(days=7)
    # read twice by its consumer, written before both reads: the consumer read the same data twice
    stale = _row(successes=[_neo(T0 - timedelta(days=5)), _neo(T0 - timedelta(days=6))],
                 reads=[_neo(T0 - timedelta(days=1)), _neo(T0 - timedelta(days=2))])
    [c] = candidates(stale, 0, T0, week, set())
    assert c.kind == "stale input" and c.evidence["previousRead"] == T0 - timedelta(days=2)
    [m] = candidates(_row(), 0, T0, week, set())
    assert m.kind == "missing input"
    changed = _row(successes=[_neo(T0)], added=[{"column": "x", "time": _neo(T0 - timedelta(days=1))}],
                   dropped=[{"column": "y", "time": _neo(T0 - timedelta(days=30))}])
    [s] = candidates(changed, 0, T0, week, set())
    assert s.kind == "schema change" and s.evidence == {"added": ["x"], "dropped": [], "chokePoint": False}
    # the broken dataset itself (distance 0) is never its own stale or missing input
    assert candidates(_row(distance=0), 0, T0, week, set()) == []
