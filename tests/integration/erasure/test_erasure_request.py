"""Erasure requests and their evidence (docs/graph-model.md, "Erasure"), on the estate of
test_erasure_plan: a request is recorded in the event log like any command, under a salted hash
of the subject's reference (the reference is nowhere in the log, an export or the graph); a place is done
only after a completed run wrote it after the request and after every place before it was done;
past the deadline what is pending is overdue. On the CLI and over HTTP too."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from api.services.erasure import open_request, subject_hash
from graph.db import Graph
from graph.errors import NotFound
from graph.settings import Settings
from impact.erasure.evidence import erasure_status
from impact.erasure.plan import Key, erasure_plan
from ingest.log.sqlite import SQLiteLog
from tests.helpers import canonical_dump, ingest_events, run_event
from tests.integration.erasure.test_erasure_plan import NS, _estate, _out

pytestmark = pytest.mark.integration

SUBJECT = "REQ-4711 person 0042"
KEY = Key(NS, "public.people", "person_id")


def _write(job: str, i: int, ns: str, name: str, at: datetime) -> dict[str, Any]:
    """A completed run of ``job`` that wrote ``ns:name`` at ``at``."""
    return run_event("COMPLETE", f"00000000-0000-4000-9000-{i:012d}", job, ns="crm",
                     time=at.isoformat(), outputs=[_out(ns, name, ["person_id"])])


def test_a_place_is_done_only_after_what_comes_before_it(graph: Graph, tmp_path: Path) -> None:
    ingest_events(graph, _estate())
    settings = Settings(state_dir=tmp_path / "state")
    log = SQLiteLog(tmp_path / "events.db")
    plan = erasure_plan(graph, [KEY])
    opened = open_request(graph, log, settings, plan, SUBJECT)
    assert opened.created and opened.ref == subject_hash(settings, SUBJECT)
    again = open_request(graph, log, settings, plan, SUBJECT)
    assert not again.created  # kept as first recorded

    status = erasure_status(graph, opened.ref)
    assert status.state == "open" and {p.state for p in status.places} == {"pending"}
    by = {p.dataset: p for p in status.places}
    assert by[f"{NS}:mirror.persons"].waits_for == (f"{NS}:public.people",)
    assert by["mlflow://models:churn version 3"].action == "retrain"

    now = datetime.now(UTC)
    # the mirror reports first, before its source was cleaned: not done
    ingest_events(graph, [_write("mirror", 1, NS, "mirror.persons", now + timedelta(minutes=1))])
    assert {p.dataset: p.state for p in erasure_status(graph, opened.ref).places}[
        f"{NS}:mirror.persons"] == "pending"
    # the source is cleaned, then the mirror runs again: both done, in that order
    ingest_events(graph, [
        _write("load_people", 2, NS, "public.people", now + timedelta(minutes=2)),
        _write("mirror", 3, NS, "mirror.persons", now + timedelta(minutes=3))])
    by = {p.dataset: p for p in erasure_status(graph, opened.ref).places}
    assert by[f"{NS}:public.people"].state == "done"
    assert by[f"{NS}:public.people"].job == "crm:load_people"
    mirror = by[f"{NS}:mirror.persons"]
    assert mirror.state == "done" and mirror.run_id == "00000000-0000-4000-9000-000000000003"
    # the board waits for the counts it reads
    assert by[f"{NS}:dash.city_board"].waits_for == (f"{NS}:stats.city_counts",)

    late = erasure_status(graph, opened.ref, now + timedelta(days=31))
    assert late.state == "overdue"
    assert {p.dataset for p in late.places if p.overdue} == {
        p.dataset for p in late.places if p.state == "pending"} != set()

    # the reference is kept only as its salted hash: not in the log, an export or the graph
    from ingest.export import export_parquet

    log.append(_estate())  # the events beside the requests, as a worker's log holds them
    _, _, commands_left_out = export_parquet(log, tmp_path / "export")
    assert commands_left_out >= 2  # the requests, with the events' rows beside them
    exported = b"".join(f.read_bytes() for f in (tmp_path / "export").rglob("*.parquet"))
    assert exported and SUBJECT.encode() not in exported
    log.close()
    stored = (tmp_path / "events.db").read_bytes()
    for wal in tmp_path.glob("events.db-*"):
        stored += wal.read_bytes()
    assert SUBJECT.encode() not in stored and opened.ref.encode() in stored
    assert not any(SUBJECT in line for line in canonical_dump(graph))
    with pytest.raises(NotFound):
        erasure_status(graph, subject_hash(settings, "someone else"))


def test_open_and_status_on_the_cli_and_over_http(
        graph: Graph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from fastapi.testclient import TestClient
    from typer.testing import CliRunner

    from api.app import create_app
    from api.cli import app
    from tests.helpers import point_cli_at_test_server

    ingest_events(graph, _estate())
    point_cli_at_test_server(monkeypatch)
    monkeypatch.setenv("LINEAGE_LOG_FILE", str(tmp_path / "cli-events.db"))
    monkeypatch.setenv("LINEAGE_ERASURE_SALT", "a test salt")
    runner = CliRunner()
    key = ["--key", NS, "public.people", "person_id"]
    done = runner.invoke(app, ["erasure", "open", *key, "--subject-ref", SUBJECT])
    assert done.exit_code == 0, done.output
    assert "opened the erasure request (7 places" in done.stdout
    status = runner.invoke(app, ["erasure", "status", SUBJECT, "--format", "json"])
    assert status.exit_code == 0, status.output
    answer = json.loads(status.stdout)
    assert answer["state"] == "open" and len(answer["places"]) == 8  # 7 places and the model
    markdown = runner.invoke(app, ["erasure", "status", SUBJECT, "--format", "markdown"]).stdout
    assert markdown.startswith("# Erasure request ") and "| pending" in markdown
    missing = runner.invoke(app, ["erasure", "status", "nobody"])
    assert missing.exit_code != 0 and "no erasure request" in missing.output
    assert SUBJECT.encode() not in (tmp_path / "cli-events.db").read_bytes()

    settings = Settings(state_dir=tmp_path / "api-state", log_file=tmp_path / "api-events.db",
                        erasure_salt="a test salt")
    with TestClient(create_app(settings, graph), base_url="http://localhost",
                    client=("127.0.0.1", 40001)) as api:
        got = api.post("/api/v1/erasure/status", json={"subjectRef": SUBJECT})
        assert got.status_code == 200 and got.json()["places"] == answer["places"]
        body = {"keys": [{"namespace": NS, "dataset": "public.people", "column": "person_id"}],
                "subjectRef": "REQ-4712"}
        made = api.post("/api/v1/erasure/requests", json=body)
        assert made.status_code == 201 and made.json()["created"] is True
        assert api.post("/api/v1/erasure/status", json={"subjectRef": "REQ-4712"}).status_code == 200
        assert api.post("/api/v1/erasure/status", json={"subjectRef": "nobody"}).status_code == 404
        scraped = api.get("/metrics").text
        assert 'lineage_erasure_requests{state="open"} 2' in scraped
        assert 'lineage_erasure_requests{state="overdue"} 0' in scraped
        assert api.post("/api/v1/erasure/requests", json={**body, "subjectRef": ""}
                        ).status_code == 422
