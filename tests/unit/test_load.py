"""The plan of a batch's writes (ingest.load), without Neo4j: the first round's queries in the
kinds' order, then the versions; the second round writes a version's columns and edges only when
Neo4j did not touch it as current; the versions seen current are remembered by the ingester's
SeenCurrent, not by the module."""

from __future__ import annotations

import uuid
from typing import Any

from ingest.combine import combine
from ingest.load import Plan, SeenCurrent
from ingest.transform import transform
from ingest.validate import ValidEvent, validate
from ingest.version_members import wire
from tests.helpers import dataset, run_event


def _rows() -> Any:
    event = run_event("COMPLETE", str(uuid.uuid4()), "clean", outputs=[dataset(
        "out", columns=["a", "b"], lineage={"a": [("in", "x", "DIRECT", "IDENTITY")]})])
    valid = validate(event)
    assert isinstance(valid, ValidEvent)
    return combine(transform(valid))


def _results(plan: Plan, touched: bool) -> list[list[dict[str, Any]]]:
    """What Neo4j answers to the first round: for each version query, the keys it did not
    touch (missed) and those current now."""
    out: list[list[dict[str, Any]]] = [[{}] for _ in plan.first[:-len(plan.versions)]]
    for _, versions in plan.versions:
        keys = [list(k) for k in versions]
        out.append([{"missed": [] if touched else keys, "current": keys}])
    return out


def _names(steps: list[Any]) -> list[str]:
    return [name for name, _ in steps]


def test_the_first_round_writes_nodes_and_edges_then_the_versions() -> None:
    plan = Plan(_rows(), SeenCurrent())
    # no parents in this event: a kind without rows has no query
    assert _names(plan.first) == ["ingest/datasets", "ingest/jobs", "ingest/runs", "ingest/reads",
                                  "ingest/writes", "ingest/job_reads", "ingest/job_writes",
                                  "ingest/schemas", "ingest/lineages"]


def test_a_new_version_is_written_member_by_member_and_then_seen_current() -> None:
    seen = SeenCurrent()
    plan = Plan(_rows(), seen)
    then = plan.then(_results(plan, touched=False))
    written = dict(then)
    assert {r["name"] for r in written["ingest/columns"]["rows"]} == {"a", "b"}
    assert [(r["outColumn"], r["inColumn"]) for r in written["ingest/column_edges"]["rows"]] == [
        ("a", "x")]
    # each member of a version current now carries the version's digest
    assert all(r["stamp"] is not None for r in written["ingest/columns"]["rows"])
    assert seen.get("ingest/schemas", ("ns", "out"), plan.schemas[("ns", "out")]["digest"])
    assert seen.get("ingest/lineages", ("ns", "clean"), plan.lineages[("ns", "clean")]["digest"])
    assert not seen.get("ingest/lineages", ("ns", "clean"), "another digest")


def test_a_version_neo4j_touched_as_current_writes_no_member() -> None:
    seen = SeenCurrent()
    first = Plan(_rows(), seen)
    first.then(_results(first, touched=False))
    again = Plan(_rows(), seen)  # the same schema and lineage reported again
    then = dict(again.then(_results(again, touched=True)))
    assert "ingest/columns" not in then and "ingest/column_edges" not in then


def test_seen_current_forgets_the_least_recently_written_past_its_size() -> None:
    seen = SeenCurrent(most=2)
    seen.saw("q", 1, "d1")
    seen.saw("q", 2, "d2")
    seen.saw("q", 1, "d1")  # written again: the most recent now
    seen.saw("q", 3, "d3")  # past its size: 2, the least recently written, is forgotten
    assert seen.get("q", 1, "d1") and seen.get("q", 3, "d3")
    assert not seen.get("q", 2, "d2")
    seen.saw("q", 3, None)  # not known any more
    assert not seen.get("q", 3, "d3")


def test_seen_current_stays_small_however_many_keys_pass() -> None:
    import tracemalloc

    seen = SeenCurrent(most=10_000)
    tracemalloc.start()
    try:
        for i in range(50_000):
            seen.saw("ingest/schemas", ("warehouse://host:5432", f"schema.table_{i}"), f"{i:064x}")
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 10_000 * 400  # about 180 bytes a key; the keys and digests are not kept


def test_wire_rows_carry_iso_times_and_no_combine_fields() -> None:
    row = next(iter(_rows().jobs))
    out = wire(row)
    assert "time" not in out and "evt" not in out
    assert isinstance(out["firstSeen"], str) and out["firstSeen"].startswith("2024-05-01T02:00:00")
    assert row["firstSeen"] != out["firstSeen"]  # the row itself is left as it was
