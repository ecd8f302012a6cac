"""A columnLineage facet as edges (ingest.column_lineage): one column edge per input field and
transformation, dataset-wide inputs fanned out to every output field, one dataset edge per input
dataset, transformations only as the producer reported them, and the compact form the same edges."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ingest.column_lineage import column_lineage, transformations
from ingest.version_members import edge_rows

T = datetime(2024, 6, 1, tzinfo=UTC)
JOB = ("shop", "clean_users")


def _output() -> dict[str, Any]:
    return {"namespace": "pg", "name": "staging.users", "facets": {
        "schema": {"fields": [{"name": "id"}, {"name": "email_hash"}, {"name": "country"}]},
        "columnLineage": {
            "fields": {
                "id": {"inputFields": [{"namespace": "pg", "name": "raw.users", "field": "id",
                                        "transformations": [{"type": "DIRECT",
                                                             "subtype": "IDENTITY"}]}]},
                "email_hash": {"inputFields": [{"namespace": "pg", "name": "raw.users",
                                                "field": "email", "transformations": [
                                                    {"type": "DIRECT", "subtype": "TRANSFORMATION",
                                                     "masking": True}]}]},
            },
            "dataset": [{"namespace": "pg", "name": "raw.countries", "field": "code",
                         "transformations": [{"type": "INDIRECT", "subtype": "JOIN"}]}]}}}


def test_one_edge_per_input_field_and_dataset_wide_inputs_reach_every_output_field() -> None:
    edges: list[dict[str, Any]] = []
    datasets: list[dict[str, Any]] = []
    column_lineage(_output(), JOB, "run-1", T, edges, datasets)
    got = {(e["outColumn"], e["inDataset"], e["inColumn"], e["type"], e["subtype"], e["masking"])
           for e in edges}
    assert got == {
        ("id", "raw.users", "id", "DIRECT", "IDENTITY", False),
        ("email_hash", "raw.users", "email", "DIRECT", "TRANSFORMATION", True),
        # the join column affects every field of the output, in the schema or in the lineage
        ("id", "raw.countries", "code", "INDIRECT", "JOIN", False),
        ("email_hash", "raw.countries", "code", "INDIRECT", "JOIN", False),
        ("country", "raw.countries", "code", "INDIRECT", "JOIN", False),
    }
    assert {(d["inName"], tuple(d["subtypes"])) for d in datasets} == {
        ("raw.users", ("IDENTITY", "TRANSFORMATION")), ("raw.countries", ("JOIN",))}


def test_the_compact_form_makes_the_same_edges() -> None:
    rows: list[dict[str, Any]] = []
    column_lineage(_output(), JOB, "run-1", T, rows, [])
    compact: list[Any] = []
    column_lineage(_output(), JOB, "run-1", T, [], [], compact)
    lineage = {"jobNamespace": JOB[0], "jobName": JOB[1], "runId": "run-1", "time": T,
               "evt": "stamp", "digest": "d1", "compact": compact}

    def key(e: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(e[k] for k in ("outColumn", "inNamespace", "inDataset", "inColumn", "type",
                                    "subtype", "masking", "description", "jobName", "runId"))

    assert sorted(map(key, edge_rows(lineage))) == sorted(map(key, rows))


def test_transformations_only_as_reported() -> None:
    # none reported: UNKNOWN, never assumed DIRECT; masking only from the flag
    assert transformations({"field": "a"}, {}) == [("UNKNOWN", "UNKNOWN", False, None)]
    assert transformations({"transformations": [{"description": "sha256 masked"}]}, {}) == [
        ("UNKNOWN", "UNKNOWN", False, "sha256 masked")]
    # the deprecated whole-field form: MASKED is masking, a filter is indirect
    assert transformations({}, {"transformationType": "MASKED"}) == [
        ("DIRECT", "MASKED", True, None)]
    assert transformations({}, {"transformationType": "filter"})[0][:2] == ("INDIRECT", "FILTER")
