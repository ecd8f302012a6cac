import uuid
from pathlib import Path
from typing import Any

from ingest.combine import combine
from ingest.rows import Rows
from ingest.transform import transform
from ingest.validate import ValidEvent, validate
from ingest.version_members import column_rows, edge_rows
from tests.helpers import dataset, run_event


def _rows(*events: dict[str, Any]) -> Rows:
    rows = Rows()
    for event in events:
        valid = validate(event)
        assert isinstance(valid, ValidEvent), valid
        rows.extend(transform(valid))
    return rows


def _edges(rows: Rows) -> list[dict[str, Any]]:
    """Column edge rows: those transform made, and those it kept compact on lineage versions."""
    return rows.column_edges + [e for r in rows.lineages if r.get("compact") for e in edge_rows(r)]


def test_column_lineage_keeps_type_subtype_and_masking() -> None:
    out = dataset("clean", lineage={"email_hash": [("raw", "email", "DIRECT", "MASKED")],
                                    "id": [("raw", "id", "DIRECT", "IDENTITY")]})
    rows = _rows(run_event("COMPLETE", str(uuid.uuid4()), "clean_job", outputs=[out]))
    got = {(e["outColumn"], e["inDataset"], e["inColumn"], e["type"], e["subtype"], e["masking"])
           for e in _edges(rows)}
    assert got == {("email_hash", "raw", "email", "DIRECT", "MASKED", True),
                   ("id", "raw", "id", "DIRECT", "IDENTITY", False)}
    assert [(e["outDataset"], e["inName"], e["subtypes"]) for e in rows.dataset_edges] == [
        ("clean", "raw", ["IDENTITY", "MASKED"])]


def test_legacy_transformation_type_becomes_the_subtype() -> None:
    out = {"namespace": "ns", "name": "o", "facets": {"columnLineage": {"fields": {"c": {
        "inputFields": [{"namespace": "ns", "name": "i", "field": "c"}],
        "transformationType": "IDENTITY", "transformationDescription": "copied"}}}}}
    [edge] = _edges(_rows(run_event("COMPLETE", str(uuid.uuid4()), outputs=[out])))
    assert (edge["type"], edge["subtype"], edge["description"]) == ("DIRECT", "IDENTITY", "copied")


def test_nested_schema_fields_become_dotted_columns() -> None:
    ds = {"namespace": "ns", "name": "t", "facets": {"schema": {"fields": [
        {"name": "address", "type": "STRUCT", "fields": [{"name": "zip", "type": "STRING"}]}]}}}
    rows = _rows(run_event("START", str(uuid.uuid4()), inputs=[ds]))
    assert [c["name"] for c in rows.columns] == ["address", "address.zip"]


def test_terminal_state_wins_within_a_batch_whatever_the_order() -> None:
    run_id = str(uuid.uuid4())
    rows = _rows(run_event("COMPLETE", run_id, time="2024-05-01T02:00:00Z"),
                 run_event("START", run_id, time="2024-05-01T03:00:00Z"))
    [run] = combine(rows).runs
    assert run["state"] == "COMPLETE"
    assert set(run["stateTimes"]) == {"completeTime", "startTime"}


def test_error_message_and_parent_are_lifted() -> None:
    parent_id = str(uuid.uuid4())
    facets = {"errorMessage": {"message": "boom", "programmingLanguage": "python"},
              "parent": {"run": {"runId": parent_id}, "job": {"namespace": "air", "name": "dag"}}}
    rows = _rows(run_event("FAIL", str(uuid.uuid4()), run_facets=facets))
    assert rows.runs[0]["props"]["errorMessage"] == "boom"
    assert (rows.parents[0]["parentRunId"], rows.parents[0]["parentJobName"]) == (parent_id, "dag")


def test_secrets_in_custom_facets_never_reach_the_rows() -> None:
    facets = {"debezium": {"config": {"database.password": "hunter2"}}}
    rows = _rows(run_event("RUNNING", str(uuid.uuid4()), run_facets=facets))
    assert "hunter2" not in rows.runs[0]["props"]["facet.debezium"]


def test_only_producers_schemas_count_as_written() -> None:
    event = run_event("COMPLETE", str(uuid.uuid4()),
                      inputs=[dataset("src", columns=["id"])], outputs=[dataset("dst", columns=["id"])])
    rows = _rows(event)
    written = [c for r in rows.schemas for c in column_rows(r)]
    assert {(c["dataset"], c["written"]) for c in rows.columns + written} == {
        ("src", False), ("dst", True)}
    assert [c["dataset"] for c in rows.columns] == ["src"]  # the written one stays whole


def test_a_written_schema_and_a_jobs_lineage_are_digested_whole() -> None:
    def event(columns: list[str], lineage: dict[str, Any], job: str = "job") -> dict[str, Any]:
        out = dataset("out", columns=columns, lineage=lineage)
        return run_event("COMPLETE", str(uuid.uuid4()), job, inputs=[dataset("in", columns=["x"])],
                         outputs=[out])

    same = {"a": [("in", "x", "DIRECT", "IDENTITY")]}
    first, again = _rows(event(["a", "b"], same)), _rows(event(["a", "b"], same))
    # only the output's schema is a version: a reader's schema may be pruned
    assert [(s["dataset"], s["columns"]) for s in first.schemas] == [("out", ("a", "b"))]
    assert first.schemas[0]["digest"] == again.schemas[0]["digest"]
    assert _rows(event(["a", "c"], same)).schemas[0]["digest"] != first.schemas[0]["digest"]
    [lineage] = first.lineages
    assert (lineage["jobName"], lineage["edges"]) == (
        "job", (("ns", "out", "a", "ns", "in", "x", "DIRECT", "IDENTITY"),))
    assert lineage["digest"] == again.lineages[0]["digest"]
    masked = {"a": [("in", "x", "DIRECT", "MASKED")]}
    assert _rows(event(["a", "b"], masked)).lineages[0]["digest"] != lineage["digest"]
    # the same lineage with its fields in another order (as the event log's sorted keys give
    # them) is the same version, whatever the producer's order
    both = {"b": [("in", "x", "DIRECT", "TRANSFORMATION")], "a": [("in", "x", "DIRECT", "IDENTITY")]}
    flipped = dict(reversed(list(both.items())))
    [mine], [sorted_] = _rows(event(["a", "b"], both)).lineages, _rows(event(["a", "b"], flipped)).lineages
    assert mine["digest"] == sorted_["digest"] and mine["edges"] == sorted_["edges"]
    # a START without column lineage has no lineage version
    start = run_event("START", str(uuid.uuid4()), "job", outputs=[dataset("out", columns=["a"])])
    assert _rows(start).lineages == []


def test_each_row_kind_is_declared_once_with_the_query_that_writes_it() -> None:
    from dataclasses import fields

    from graph.queries import query
    from ingest.rows import KINDS

    assert [kind.name for kind in KINDS] == [f.name for f in fields(Rows)]
    for kind in KINDS:
        assert set(kind.merged) <= {"props", "digests", "received", "subtypes", "targets", "trainedOn",
                                    "observed", "explicit", "coarse", "lineage", "lineages",
                                    "declarations", "typed"}, kind
        if kind.query is not None:
            assert query(kind.query).text, kind  # the file exists and loads
    # the first round writes nodes and the edges of runs and jobs, before any column
    assert [k.name for k in KINDS if k.first] == ["datasets", "jobs", "runs", "parents", "reads",
                                                   "writes", "job_reads", "job_writes"]


def test_an_events_rows_do_not_depend_on_the_order_of_its_keys(corpus: Path) -> None:
    """The API's log keeps events with sorted keys, a file is read as the producer wrote it: both
    must give the same rows (a lineage digest once followed the columnLineage facet's key order,
    so the same run loaded both ways looked like two lineages)."""
    import json

    from bench.generate import events, tables
    from ingest import codec
    from ingest.read import iter_paths, read_file
    from ingest.rows import KINDS

    items = [i.obj for p in iter_paths([corpus]) for i in read_file(p) if i.error is None]
    items += events(tables(100, seed=5), seed=5, days=2, starts=True)
    checked = 0
    for raw in items:
        first, again = validate(raw), validate(json.loads(codec.canonical(_reversed(raw))))
        if not isinstance(first, ValidEvent):
            continue
        assert isinstance(again, ValidEvent)
        mine, theirs = transform(first), transform(again)
        for kind in KINDS:
            assert _as_set(getattr(mine, kind.name)) == _as_set(getattr(theirs, kind.name)), kind.name
        checked += 1
    assert checked > 400


def _reversed(value: Any) -> Any:
    """``value`` with every object's keys in reverse order (lists kept in order)."""
    if isinstance(value, dict):
        return {k: _reversed(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reversed(v) for v in value]
    return value


def _as_set(rows: list[dict[str, Any]]) -> list[str]:
    import json

    return sorted(json.dumps(row, sort_keys=True, default=repr) for row in rows)


def test_the_time_the_log_took_an_event_stamps_its_datasets_and_jobs_and_combines_as_the_latest() -> None:
    out = dataset("out", columns=["a"])
    events = [run_event("COMPLETE", str(uuid.uuid4()), "job", inputs=[dataset("in")], outputs=[out])
              for _ in range(2)]
    rows = Rows()
    for event, taken in zip(events, (200.0, 100.0), strict=True):
        valid = validate(event)
        assert isinstance(valid, ValidEvent)
        rows.extend(transform(valid, received=taken))
    combined = combine(rows)
    assert {(d["name"], d["received"]) for d in combined.datasets} == {("in", 200.0), ("out", 200.0)}
    assert [j["received"] for j in combined.jobs] == [200.0]
    assert all("received" not in r for r in combined.runs)  # only what a soft delete can hide
    # an event not read from the log: no time, so it always reports them again
    valid = validate(events[0])
    assert isinstance(valid, ValidEvent)
    assert all("received" not in d for d in combine(transform(valid)).datasets)
