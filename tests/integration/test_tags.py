"""Tags: from producers' tags facets (dataset, field, job) and from Marquez's API, kept apart with
who set them; GDPR reach from a tag, over HTTP and in the CLI; tags never written by answers."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.app import create_app
from api.cli import app as cli_app
from graph.db import Graph
from graph.settings import Settings, get_settings
from tests.helpers import dataset, ingest_events, new_run_id, point_cli_at_test_server, run_event

pytestmark = pytest.mark.integration

NS = "warehouse"
M = f"/api/v1/namespaces/{NS}/datasets"


def _tags(*entries: tuple[str, str, str | None]) -> dict[str, object]:
    return {"tags": [{"key": k, "value": v, **({"field": f} if f else {})} for k, v, f in entries]}


def _events(time: str = "2026-11-01T00:00:00Z") -> list[dict[str, object]]:
    users = dataset("raw.users", NS, ["id", "email", "phone"], tags=_tags(
        ("gdpr", "true", None), ("PII", "true", "email"), ("classification", "PII", "phone")))
    copy = dataset("copy.users", NS, ["email", "phone_hash"], lineage={
        "email": [("raw.users", "email", "DIRECT", "IDENTITY")],
        "phone_hash": [("raw.users", "phone", "DIRECT", "MASKED")]})
    contacts = dataset("marts.contacts", NS, ["email"], lineage={
        "email": [("copy.users", "email", "DIRECT", "IDENTITY")]})
    return [
        run_event("COMPLETE", new_run_id(), "load_users", ns=NS, time=time, outputs=[users]),
        run_event("COMPLETE", new_run_id(), "copy_users", ns=NS, time=time,
                  inputs=[dataset("raw.users", NS)], outputs=[copy],
                  job_facets={"tags": _tags(("team", "growth", None))}),
        run_event("COMPLETE", new_run_id(), "contacts", ns=NS, time=time,
                  inputs=[dataset("copy.users", NS)], outputs=[contacts]),
    ]


@pytest.fixture
def api(graph: Graph) -> Iterator[TestClient]:
    assert ingest_events(graph, _events()).loaded == 3
    with TestClient(create_app(Settings(), graph), client=("127.0.0.1", 40000),
                    base_url="http://localhost") as c:
        yield c


def test_producer_tags_by_dataset_field_and_job(api: TestClient, graph: Graph) -> None:
    users = api.get(f"{M}/raw.users").json()
    assert users["tags"] == ["gdpr"]  # an entry whose value is "true" is its key alone
    assert {f["name"]: f["tags"] for f in users["fields"]} == {
        "id": [], "email": ["PII"], "phone": ["classification:PII"]}
    assert api.get(f"/api/v1/namespaces/{NS}/jobs/copy_users").json()["tags"] == ["team:growth"]
    assert {t["name"] for t in api.get("/api/v1/tags").json()["tags"]} == {
        "gdpr", "PII", "classification:PII", "team:growth", "SENSITIVE"}  # SENSITIVE: configured
    # a later tags facet is the dataset's whole set: the fields it no longer names lose theirs
    later = dataset("raw.users", NS, tags=_tags(("gdpr", "true", None)))
    old = dataset("raw.users", NS, tags=_tags(("PII", "true", "id")))
    ingest_events(graph, [run_event("COMPLETE", new_run_id(), "load_users", ns=NS,
                                    time="2026-11-02T00:00:00Z", outputs=[later]),
                          run_event("COMPLETE", new_run_id(), "load_users", ns=NS,
                                    time="2026-10-01T00:00:00Z", outputs=[old])])
    assert all(f["tags"] == [] for f in api.get(f"{M}/raw.users").json()["fields"])


def test_where_from_a_tag_groups_by_source_and_names_untagged_raw_copies(api: TestClient) -> None:
    assert api.post(f"{M}/marts.contacts/fields/email/tags/pii").status_code == 200
    body = api.get("/api/v1/where", params={"tag": "PII"}).json()
    sources = {s["source"]["dataset"] + "." + s["source"]["column"]: s for s in body["sources"]}
    assert set(sources) == {"raw.users.email", "raw.users.phone", "marts.contacts.email"}
    assert "(producer, 2026-11-01T00:00:00" in sources["raw.users.email"]["source"]["tags"][0]
    assert sources["marts.contacts.email"]["source"]["tags"][0].startswith("PII (api, ")
    reach = {(r["dataset"], r["column"]): r["label"] for r in sources["raw.users.email"]["reaches"]}
    assert reach == {("copy.users", "email"): "raw", ("marts.contacts", "email"): "raw"}
    assert {(r["dataset"], r["column"]): r["label"]
            for r in sources["raw.users.phone"]["reaches"]} == {("copy.users", "phone_hash"): "masked"}
    assert [(c["dataset"], c["column"]) for c in body["untaggedRaw"]] == [("copy.users", "email")]
    assert "should probably be tagged" in body["summary"]
    rows = list(csv.DictReader(io.StringIO(
        api.get("/api/v1/where", params={"tag": "pii", "format": "csv"}).text)))
    assert {(r["dataset"], r["column"], r["tagged"]) for r in rows if r["label"] == "raw"} == {
        ("copy.users", "email", "False"), ("marts.contacts", "email", "True")}
    # answers never tag: the raw copy is still untagged
    assert {f["name"]: f["tags"] for f in api.get(f"{M}/copy.users").json()["fields"]}[
        "email"] == []
    both = api.get("/api/v1/where", params={"tag": "PII", "namespace": NS})
    assert both.status_code == 422
    assert api.get("/api/v1/where").status_code == 422


def test_cli_where_tag(api: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    point_cli_at_test_server(monkeypatch)
    try:
        r = CliRunner().invoke(cli_app, ["where", "--tag", "pii", "--format", "json"])
        assert r.exit_code == 0, r.output
        body = json.loads(r.stdout)
        assert [(c["dataset"], c["column"]) for c in body["untaggedRaw"]] == [
            ("copy.users", "email"), ("marts.contacts", "email")]
        table = CliRunner().invoke(cli_app, ["where", "--tag", "PII"])
        assert table.exit_code == 0 and "should probably be tagged" in table.output
        r = CliRunner().invoke(cli_app, ["where", NS, "raw.users", "email", "--tag", "PII"])
        assert r.exit_code == 2 and "not both" in r.output
    finally:
        get_settings.cache_clear()
