import uuid
from pathlib import Path
from typing import Any

import pytest

from ingest.log.protocol import Checked
from ingest.validate import ValidEvent, event_digest, logged, validate
from tests.helpers import dataset, run_event


def test_run_event_with_uuid_v7_is_valid() -> None:
    v7 = "0190b4e4-7c1a-7cc2-8a7b-1234567890ab"
    result = validate(run_event("START", v7))
    assert isinstance(result, ValidEvent) and result.kind == "RunEvent" and result.run_id == v7


def test_kind_is_decided_by_shape_not_schema_url() -> None:
    job_event = {"eventTime": "2024-01-01T00:00:00Z", "eventType": "COMPLETE",
                 "schemaURL": "http://test.schema.url", "job": {"namespace": "n", "name": "j"}}
    ds_event = {"eventTime": "2024-01-01T00:00:00Z", "dataset": {"namespace": "n", "name": "d"}}
    assert validate(job_event).kind == "JobEvent"  # type: ignore[union-attr]
    assert validate(ds_event).kind == "DatasetEvent"  # type: ignore[union-attr]


def test_run_event_without_event_type_counts_as_other() -> None:
    result = validate(run_event(None, str(uuid.uuid4())))
    assert isinstance(result, ValidEvent) and result.event_type == "OTHER"


def test_missing_run_id_is_rejected_with_reason() -> None:
    event = run_event("START", "x")
    del event["run"]["runId"]
    assert validate(event) == ["run.runId: missing (a run event needs the UUID of its run)"]


def test_every_reason_is_reported_with_its_path() -> None:
    event = run_event("FINISHED", "not-a-uuid", outputs=[dataset("o", outputStatistics={})])
    event["eventTime"] = "soon"
    event["outputs"][0]["outputFacets"] = {"outputStatistics": {"rowCount": "many"}}
    reasons = validate(event)
    assert isinstance(reasons, list)
    assert any(r.startswith("eventTime:") for r in reasons)
    assert any(r.startswith("run.runId: not a UUID") for r in reasons)
    assert any(r.startswith("eventType: 'FINISHED'") for r in reasons)
    assert any(r.startswith("outputs[0].outputFacets.outputStatistics.rowCount") for r in reasons)


def test_unknown_facets_and_keys_are_allowed() -> None:
    event = run_event("COMPLETE", str(uuid.uuid4()), run_facets={"spark.logicalPlan": {"x": [1]}})
    event["somethingNew"] = True
    assert isinstance(validate(event), ValidEvent)


def test_deleted_facet_is_not_validated_as_a_facet() -> None:
    event = run_event("COMPLETE", str(uuid.uuid4()), job_facets={"sql": {"_deleted": True}})
    assert isinstance(validate(event), ValidEvent)


def test_digest_ignores_key_order() -> None:
    assert event_digest({"a": 1, "b": 2}) == event_digest({"b": 2, "a": 1})


def test_non_object_is_rejected() -> None:
    assert validate([1, 2]) == ["an event must be a JSON object, got list"]


def test_nested_facet_errors_name_the_field_and_not_our_classes() -> None:
    event = run_event("COMPLETE", str(uuid.uuid4()), outputs=[dataset("o", columns=["a", "b"])])
    event["outputs"][0]["facets"]["schema"]["fields"][1] = "b"
    event["outputs"][0]["facets"]["columnLineage"] = {
        "fields": {"a": {"inputFields": [{"namespace": "ns", "name": "src"}]}}}
    event["run"]["facets"] = {"parent": {"run": {"runId": ""}, "job": {"namespace": "", "name": "p"}}}
    reasons = validate(event)
    assert isinstance(reasons, list)
    assert "outputs[0].facets.schema.fields.1: Input should be a valid dictionary" in reasons
    assert "outputs[0].facets.columnLineage.fields.a.inputFields.0.field: Field required" in reasons
    # a parent's run id need not be a UUID (Airflow's older integration), but it is not empty
    assert any(r.startswith("run.facets.parent.run.runId: String should have at least 1 character")
               for r in reasons)
    assert any(r.startswith("run.facets.parent.job.namespace: String should have at least 1 character")
               for r in reasons)
    assert not any("instance of" in r for r in reasons)


def test_logged_events_are_read_back_without_validating_facets_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The API validated what it logged: the worker reads the envelope only (validated once)."""
    event = run_event("COMPLETE", str(uuid.uuid4()),
                      outputs=[dataset("t", "db", columns=["a"])])
    full = validate(event)
    assert isinstance(full, ValidEvent)
    checked: list[str] = []
    monkeypatch.setattr("ingest.validate._check_facets",
                        lambda *args: checked.append(str(args[1])))
    again = logged(event)
    assert checked == [], "a logged event's facets were validated a second time"
    assert isinstance(again, ValidEvent)
    assert (again.kind, again.time, again.run_id, again.event_type, again.raw) == \
        (full.kind, full.time, full.run_id, full.event_type, full.raw)


def test_logged_events_are_scrubbed_when_the_log_kept_them_raw() -> None:
    event = run_event("START", str(uuid.uuid4()))
    event["job"]["facets"] = {"sql": {"query": "CREATE USER x IDENTIFIED BY 'hunter2'"}}
    again = logged(event)
    assert isinstance(again, ValidEvent)
    assert "hunter2" not in str(again.raw)


def test_a_logged_entry_with_a_broken_envelope_gets_the_full_reasons() -> None:
    event = run_event("START", str(uuid.uuid4()))
    event["eventTime"] = "yesterday"
    reasons = logged(event)
    assert isinstance(reasons, list) and reasons and reasons[0].startswith("eventTime:")


def test_only_events_the_api_checked_skip_validation_when_read_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A log written before the checks (or by hand) holds unchecked events: those are validated."""
    from ingest.pipeline import IngestReport, validate_items
    from ingest.read import RawItem

    checked: list[str] = []
    monkeypatch.setattr("ingest.validate._check_facets",
                        lambda *args: checked.append(str(args[1])))
    event = run_event("START", str(uuid.uuid4()))
    list(validate_items([RawItem("log#1", obj=event, checked=Checked.VALIDATED)], IngestReport()))
    assert checked == []
    list(validate_items([RawItem("log#2", obj=event)], IngestReport()))
    assert checked, "an unchecked event read back from the log was not validated"


def test_an_event_logged_as_scrubbed_is_not_scrubbed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The API marks what it scrubbed; an event logged raw (or by an earlier version) is scrubbed."""
    from ingest.pipeline import IngestReport, validate_items
    from ingest.read import RawItem

    scrubbed: list[object] = []

    def scrub(obj: object) -> object:
        scrubbed.append(obj)
        return obj

    monkeypatch.setattr("ingest.validate.scrub", scrub)
    event = run_event("START", str(uuid.uuid4()))
    [valid] = validate_items([RawItem("log#1", obj=event, checked=Checked.SCRUBBED)],
                             IngestReport())
    assert scrubbed == [] and valid.event.raw is event
    list(validate_items([RawItem("log#2", obj=event, checked=Checked.VALIDATED)], IngestReport()))
    assert scrubbed == [event]


def _corpus_and_generated(corpus: Path) -> list[Any]:
    from bench.generate import events, tables
    from ingest.read import iter_paths, read_file

    items = [i.obj for p in iter_paths([corpus]) for i in read_file(p) if i.error is None]
    return items + list(events(tables(50, seed=5), seed=5, days=2, starts=True))


def test_validation_makes_the_log_body_unless_it_scrubbed_something(corpus: Path) -> None:
    """The API logs the canonical text validation made when it looked for secrets: it must be
    the text ingest.log.sqlite.encode writes, and there is none for an event that was scrubbed."""
    from ingest.log.sqlite import encode

    made = 0
    for event in _corpus_and_generated(corpus):
        result = validate(event)
        if not isinstance(result, ValidEvent):
            continue
        if result.text is not None:
            made += 1
            assert result.raw is event and result.text == encode([event])[0]
        else:
            assert result.raw is not event  # a scrubbed copy: encoded when logged
    assert made > 250
    secret = validate(run_event("COMPLETE", str(uuid.uuid4()), run_facets={
        "conn": {"url": "postgres://erin:PW@host:5432/db"}}))
    assert isinstance(secret, ValidEvent) and secret.text is None
    assert "PW" not in encode([secret.raw])[0]
