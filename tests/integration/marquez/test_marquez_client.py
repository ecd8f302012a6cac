"""Marquez's own Python client (marquez-python, PyPI) against a live `lineage serve`.

Marquez's demo events (and our example, whose namespace holds '/' and ':') are posted one per
request, as producers send them, loaded by `lineage worker --once`, then read back with every read
method of the client. Expected values come from the events themselves.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from graph.db import Graph
from tests import food_delivery
from tests.conftest import server_settings
from tests.helpers import start_serve

pytestmark = pytest.mark.integration
# the client's own default is 10 s a request; on two cores shared with the rest of the suite (the
# tests' JVMs on Java's first compiler tier) a first ask of a query Neo4j has not planned yet took
# longer: a bound on the wait, not a timing assertion
CLIENT_TIMEOUT_MS = 60_000

marquez_client = pytest.importorskip("marquez_client", reason="marquez-python (dev extra)")

SHOP = Path(__file__).parents[3] / "examples" / "events" / "shop.ndjson"
NS = "food_delivery"
SHOP_NS = "postgres://warehouse:5432"


def _env(tmp: Path) -> dict[str, str]:
    env = {**os.environ, "LINEAGE_LOG_FILE": str(tmp / "events.db")}
    env.pop("LINEAGE_API_TOKENS", None)
    if not env.get("NEO4J_URI"):
        s = server_settings()
        env.update(LINEAGE_STATE_DIR=str(s.state_dir), LINEAGE_NEO4J_BOLT_PORT=str(s.neo4j_bolt_port),
                   LINEAGE_NEO4J_HTTP_PORT=str(s.neo4j_http_port))
    return env


def _post(base: str, event: dict[str, Any]) -> None:
    req = urllib.request.Request(f"{base}/api/v1/lineage", data=json.dumps(event).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status in (200, 201), r.status


@pytest.fixture
def demo() -> list[dict[str, Any]]:
    return food_delivery.events()


@pytest.fixture
def served(graph: Graph, demo: list[dict[str, Any]], tmp_path: Path) -> Iterator[str]:
    """`lineage serve` on a free port with the demo events and our example posted and loaded."""
    env = _env(tmp_path)
    proc, base = start_serve(env)
    try:
        shop = [json.loads(line) for line in SHOP.read_text().splitlines() if line.strip()]
        for event in demo + shop:
            _post(base, event)
        done = subprocess.run([sys.executable, "-m", "api.cli", "worker", "--once"], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _namespaces(event: dict[str, Any]) -> set[str]:
    return {event["job"]["namespace"]} | {
        d["namespace"] for d in event.get("inputs", []) + event.get("outputs", [])}


def _column_lineage(events: list[dict[str, Any]], name: str) -> dict[str, set[tuple[str, str, str]]]:
    """The input fields of each field of the dataset ``name``, from its columnLineage facets."""
    found: dict[str, set[tuple[str, str, str]]] = {}
    for e in events:
        for d in e.get("outputs", []):
            if d["name"] == name:
                for field, lineage in (d.get("facets") or {}).get("columnLineage", {}).get(
                        "fields", {}).items():
                    found.setdefault(field, set()).update(
                        (i["namespace"], i["name"], i["field"]) for i in lineage["inputFields"])
    return found


def _datasets(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each dataset of the events with its latest reported facets (by event time). A dataset named
    only inside column lineage is an input too (docs/graph-model.md; the demo names
    public.menu_item_id that way, where Marquez lists no such dataset)."""
    found: dict[str, dict[str, Any]] = {}
    for e in sorted(events, key=lambda e: e["eventTime"]):
        for d in e.get("inputs", []) + e.get("outputs", []):
            found.setdefault(d["name"], {}).update(d.get("facets") or {})
            lineage = (d.get("facets") or {}).get("columnLineage") or {"fields": {}}
            for field in lineage["fields"].values():
                for source in field["inputFields"]:
                    found.setdefault(source["name"], {})
    return found


def test_every_read_method_of_marquez_python(served: str, demo: list[dict[str, Any]]) -> None:
    from marquez_client import MarquezClient

    client = MarquezClient(url=served, timeout_ms=CLIENT_TIMEOUT_MS)
    spaces = {n["name"]: n for n in client.list_namespaces()["namespaces"]}
    shop = [json.loads(line) for line in SHOP.read_text().splitlines() if line.strip()]
    assert set(spaces) == {n for e in demo + shop for n in _namespaces(e)}
    assert spaces[NS]["ownerName"] == "anonymous" and spaces[NS]["isHidden"] is False
    assert client.get_namespace(NS)["name"] == NS
    assert client.get_namespace(SHOP_NS)["name"] == SHOP_NS  # '/' and ':' inside one segment

    expected = _datasets(demo)
    listed = client.list_datasets(NS, limit=100)
    assert listed["totalCount"] == len(expected)
    assert {d["name"] for d in listed["datasets"]} == set(expected)
    paged = client.list_datasets(NS, limit=5, offset=5)
    assert len(paged["datasets"]) == 5 and paged["totalCount"] == len(expected)
    assert [d["name"] for d in paged["datasets"]] == sorted(expected)[5:10]

    orders = client.get_dataset(NS, "public.orders")
    facets = expected["public.orders"]
    assert [f["name"] for f in orders["fields"]] == [f["name"] for f in facets["schema"]["fields"]]
    assert [f["type"] for f in orders["fields"]] == [f["type"] for f in facets["schema"]["fields"]]
    assert orders["sourceName"] == facets["dataSource"]["name"]
    assert orders["description"] == facets["documentation"]["description"]
    assert orders["id"] == {"namespace": NS, "name": "public.orders"} and orders["deleted"] is False

    writes = {e["run"]["runId"] for e in demo
              if any(o["name"] == "public.orders" for o in e.get("outputs", []))}
    versions = client.list_dataset_versions(NS, "public.orders")
    assert versions["totalCount"] == len(writes) == len(versions["versions"])
    assert {v["createdByRun"]["id"] for v in versions["versions"]} == writes
    assert orders["currentVersion"] == versions["versions"][0]["version"]
    one = client.get_dataset_version(NS, "public.orders", orders["currentVersion"])
    assert one["id"]["version"] == orders["currentVersion"]
    assert [f["name"] for f in one["fields"]] == [f["name"] for f in orders["fields"]]

    jobs = {(e["job"]["namespace"], e["job"]["name"]) for e in demo}
    listed_jobs = client.list_jobs(NS, limit=100)
    assert listed_jobs["totalCount"] == len(jobs)
    assert {j["name"] for j in listed_jobs["jobs"]} == {n for _, n in jobs}

    runs = [e for e in demo if e["job"]["name"] == "etl_orders"]
    job = client.get_job(NS, "etl_orders")
    assert job["id"] == {"namespace": NS, "name": "etl_orders"}
    assert job["description"] == runs[0]["job"]["facets"]["documentation"]["description"]
    assert job["outputs"] == [{"namespace": NS, "name": o["name"]} for o in runs[0]["outputs"]]
    assert job["latestRun"]["state"] == "COMPLETED"
    job_runs = client.list_job_runs(NS, "etl_orders")
    assert {r["id"] for r in job_runs["runs"]} == {e["run"]["runId"] for e in runs}
    run = client.get_job_run(runs[0]["run"]["runId"])
    nominal = runs[0]["run"]["facets"]["nominalTime"]["nominalStartTime"]
    assert run["state"] == "COMPLETED" and run["nominalStartTime"] == nominal.replace(".000", "")
    assert run["durationMs"] > 0 and run["jobVersion"]["name"] == "etl_orders"

    events = client.list_events(limit=5)
    assert len(events["events"]) == 5 and events["totalCount"] >= len(demo)
    assert client.list_events(NS, limit=100)["totalCount"] == len(demo)

    sources = {s["name"]: s for s in client.list_sources()["sources"]}
    named = {f["dataSource"]["name"] for f in expected.values() if "dataSource" in f}
    assert named <= set(sources)
    some = sorted(named)[0]
    assert client.get_source(some)["name"] == some

    lineage = client.get_column_lineage_by_dataset(NS, "public.orders")
    assert {n["type"] for n in lineage["graph"]} <= {"DATASET_FIELD"}

    # a dataset carries the column lineage of its fields (Marquez's DatasetResource fills it)
    reported = _column_lineage(demo, "public.delivery_7_days")
    delivery = client.get_dataset(NS, "public.delivery_7_days")
    assert {c["name"]: {(i["namespace"], i["dataset"], i["field"]) for i in c["inputFields"]}
            for c in delivery["columnLineage"]} == reported
    listed_cl = {d["name"]: d["columnLineage"] for d in client.list_datasets(NS)["datasets"]}
    assert listed_cl["public.delivery_7_days"] == delivery["columnLineage"]
    assert listed_cl["public.customers"] is None  # a source: no field comes from another
    # a job's column lineage: the fields it writes and where they come from
    by_job = client.get_column_lineage_by_job(NS, "etl_delivery_7_days")
    ids = {n["id"] for n in by_job["graph"]}
    assert {f"datasetField:{NS}:public.delivery_7_days:{f}" for f in reported} <= ids
    assert f"datasetField:{NS}:public.customers:email" in ids
    assert all(isinstance(n["data"]["fieldType"], str) for n in by_job["graph"])
    one = client.get_column_lineage_by_dataset_field(NS, "public.delivery_7_days", "customer_email")
    assert {n["id"] for n in one["graph"]} == {
        f"datasetField:{NS}:public.delivery_7_days:customer_email",
        f"datasetField:{NS}:public.customers:email"}

    shop = client.get_dataset(SHOP_NS, "raw.users")
    assert shop["namespace"] == SHOP_NS and "email" in {f["name"] for f in shop["fields"]}


def test_tags_and_namespaces_written_with_marquez_python(served: str) -> None:
    from marquez_client import MarquezClient

    client = MarquezClient(url=served, timeout_ms=CLIENT_TIMEOUT_MS)
    assert client.create_tag("PII", "personal data") == {"name": "PII",
                                                         "description": "personal data"}
    tagged = client.tag_dataset(NS, "public.customers", "GOLD")
    assert tagged["name"] == "public.customers" and tagged["tags"] == ["GOLD"]
    fields = {f["name"]: f for f in client.tag_dataset_field(
        NS, "public.customers", "email", "pii")["fields"]}
    assert fields["email"]["tags"] == ["PII"]  # Marquez upper-cases a field's tag
    assert all(f["tags"] == [] for n, f in fields.items() if n != "email")
    assert client.get_dataset(NS, "public.customers")["tags"] == ["GOLD"]
    tags = {t["name"]: t["description"] for t in client.list_tags()["tags"]}
    # PII described through the API; SENSITIVE as the settings declare it (LINEAGE_TAGS)
    assert tags == {"PII": "personal data", "GOLD": None,
                    "SENSITIVE": "Contains sensitive information"}

    made = client.create_namespace("team_space", "data-platform", "created by a runbook")
    assert (made["name"], made["ownerName"], made["description"]) == (
        "team_space", "data-platform", "created by a runbook")
    assert "team_space" in {n["name"] for n in client.list_namespaces()["namespaces"]}


def test_legacy_writes_of_marquez_python_become_events(served: str, tmp_path: Path) -> None:
    """Marquez's writes from before OpenLineage (sources, datasets, jobs, runs and their
    transitions) work as Marquez answers them, are OpenLineage events in the log, and a replay
    of the log rebuilds what they wrote."""
    from marquez_client.models import DatasetId, DatasetType, JobType

    client = marquez_client.MarquezClient(url=served, timeout_ms=CLIENT_TIMEOUT_MS)
    client.create_namespace("legacy", "data-platform")
    source = client.create_source("legacy_db", "postgresql", "postgresql://db.example:5432/shop")
    assert (source["type"], source["connectionUrl"]) == (
        "POSTGRESQL", "postgresql://db.example:5432/shop")
    src = client.create_dataset(
        "legacy", "public.users", DatasetType.DB_TABLE, "public.users", "legacy_db",
        description="users as signed up", tags=["GOLD"],
        fields=[{"name": "id", "type": "INTEGER"},
                {"name": "email", "type": "VARCHAR", "tags": ["PII"]}])
    assert src["sourceName"] == "legacy_db" and src["description"] == "users as signed up"
    assert [(f["name"], f["type"], f["tags"]) for f in src["fields"]] == [
        ("id", "INTEGER", []), ("email", "VARCHAR", ["PII"])]
    assert src["tags"] == ["GOLD"]
    client.create_dataset("legacy", "public.users_copy", DatasetType.DB_TABLE,
                          "public.users_copy", "legacy_db")
    job = client.create_job("legacy", "copy_users", JobType.BATCH,
                            location="https://github.com/acme/etl/blob/main/copy_users.py",
                            inputs=[DatasetId("legacy", "public.users")],
                            outputs=[DatasetId("legacy", "public.users_copy")],
                            description="copies the users", context={"sql": "INSERT INTO x"})
    assert job["inputs"] == [{"namespace": "legacy", "name": "public.users"}]
    assert job["outputs"] == []  # a job's outputs come with a run, as in Marquez
    assert job["location"] == "https://github.com/acme/etl/blob/main/copy_users.py"
    assert job["description"] == "copies the users" and job["type"] == "BATCH"

    run = client.create_job_run("legacy", "copy_users", nominal_start_time="2026-11-27T10:00:00Z",
                                run_args={"mode": "full"})
    assert run["args"] == {"mode": "full"} and run["nominalStartTime"] == "2026-11-27T10:00:00Z"
    assert run["state"] == "NEW"  # made, not started: as Marquez says it
    with urllib.request.urlopen(f"{served}/api/v1/jobs?lastRunStates=NEW", timeout=30) as answer:
        assert [j["name"] for j in json.loads(answer.read())["jobs"]] == ["copy_users"]
    started = client.mark_job_run_as_started(run["id"], at="2026-11-27T10:01:00Z")
    assert started["state"] == "RUNNING" and started["startedAt"] == "2026-11-27T10:01:00Z"
    done = client.mark_job_run_as_completed(run["id"], at="2026-11-27T10:05:00Z")
    assert done["state"] == "COMPLETED" and done["durationMs"] == 240_000
    assert [d["datasetVersionId"]["name"] for d in done["outputDatasetVersions"]] == [
        "public.users_copy"]
    assert client.get_job("legacy", "copy_users")["latestRun"]["id"] == run["id"]
    assert client.get_job("legacy", "copy_users")["outputs"] == [
        {"namespace": "legacy", "name": "public.users_copy"}]
    assert client.get_dataset("legacy", "public.users_copy")["currentVersion"] is not None
    failed = client.create_job_run("legacy", "copy_users", mark_as_running=True)
    assert client.mark_job_run_as_failed(failed["id"])["state"] == "FAILED"
    stopped = client.create_job_run("legacy", "copy_users", mark_as_running=True)
    assert client.mark_job_run_as_aborted(stopped["id"])["state"] == "ABORTED"

    refusals: list[tuple[Callable[[], Any], int]] = [
            (lambda: client.create_dataset("legacy", "x", DatasetType.DB_TABLE, "x", "nope"), 404),
            (lambda: client.create_job_run("legacy", "copy_users", run_id=run["id"]), 400),
            (lambda: client.mark_job_run_as_aborted("8b0c64a5-0b43-4d4b-a1b4-7b4bdbc7e1c6"), 404),
            (lambda: client.create_job("legacy", "y", JobType.BATCH,
                                       inputs=[DatasetId("legacy", "nope")]), 404)]
    for refused, status in refusals:
        with pytest.raises(marquez_client.errors.APIError) as e:
            refused()
        cause: Any = e.value.__cause__  # the HTTP error the client wraps
        assert cause.response.status_code == status

    # the writes are OpenLineage events in the log; a replay rebuilds what they wrote
    # (Marquez's listing holds run events: 3 runs created, 6 transitions; the DatasetEvents of
    # the 2 datasets and the JobEvent of the job are in the log, not listed)
    events = client.list_events(limit=100)["events"]
    ours = [e for e in events if e["producer"].endswith("ingest/marquez_writes.py")]
    assert len(ours) == 9
    before = (client.get_job("legacy", "copy_users"), client.get_dataset("legacy", "public.users"))
    env = _env(tmp_path)
    replayed = subprocess.run([sys.executable, "-m", "api.cli", "replay", "--wipe"],
                              env=env, capture_output=True, text=True, timeout=300)
    assert replayed.returncode == 0, replayed.stderr[-2000:]
    assert (client.get_job("legacy", "copy_users"),
            client.get_dataset("legacy", "public.users")) == before
