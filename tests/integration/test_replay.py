"""The event log is the record of what the graph holds: whatever loaded events (the API, `lineage
ingest` from files, `lineage alias`) puts them in the log, so `lineage replay --wipe` rebuilds the
same graph; a Spark bulk load, which the log does not copy, makes `replay --wipe` refuse unless
told. Against the real Neo4j, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.app import create_app
from api.cli import app
from graph.db import Graph
from graph.settings import Settings
from ingest.log.sqlite import SQLiteLog
from ingest.worker import CONSUMER, Worker
from tests.helpers import canonical_dump, dataset, new_run_id, run_event

pytestmark = pytest.mark.integration
SHOP = Path(__file__).parents[2] / "examples" / "events"


def _invoke(*args: str) -> str:
    r = CliRunner().invoke(app, list(args))
    assert r.exit_code == 0, r.output
    return r.output


def test_files_loaded_by_ingest_survive_replay_wipe(graph: Graph, log_path: Path) -> None:
    _invoke("ingest", str(SHOP))
    log = SQLiteLog(log_path)
    shop_events = sum(1 for line in (SHOP / "shop.ndjson").read_text().splitlines() if line.strip())
    assert log.count() == shop_events
    # the ingest loaded them itself: the worker, not behind, has nothing left to do
    assert log.position(CONSUMER) == log.last_seq()
    # events that came over HTTP (through the log and the worker) join them
    api = TestClient(create_app(Settings(), graph, log), base_url="http://localhost",
                     client=("127.0.0.1", 40001))
    posted = run_event("COMPLETE", new_run_id(), "late_job", ns="http",
                       inputs=[dataset("raw.users", "postgres://warehouse:5432", ["email"])],
                       outputs=[dataset("late.out", "http", ["email"],
                                        lineage={"email": [("raw.users", "email", "DIRECT",
                                                            "IDENTITY")]})])
    assert api.post("/api/v1/lineage", json=posted).status_code == 201
    while Worker(graph, log).run_once():
        pass
    before = canonical_dump(graph)
    assert any("raw.users" in line for line in before)

    out = _invoke("replay", "--wipe")
    assert f"replayed {shop_events + 1} events" in out
    assert canonical_dump(graph) == before
    # and Marquez's event listing shows the file-loaded events
    listed = api.get("/api/v1/events/lineage",
                     params={"before": "2100-01-01T00:00:00Z", "after": "1970-01-01T00:00:00Z",
                             "limit": 1000}).json()
    assert listed["totalCount"] == shop_events + 1


def test_ingesting_the_same_file_twice_loads_it_once(graph: Graph, log_path: Path) -> None:
    _invoke("ingest", str(SHOP))
    before = canonical_dump(graph)
    out = _invoke("ingest", str(SHOP))
    assert "0 loaded" in out
    log = SQLiteLog(log_path)
    assert log.position(CONSUMER) == log.last_seq()
    _invoke("replay", "--wipe")
    assert canonical_dump(graph) == before


def test_ingest_behind_a_worker_leaves_the_position_to_the_worker(graph: Graph,
                                                                   log_path: Path) -> None:
    log = SQLiteLog(log_path)
    log.append([run_event("COMPLETE", new_run_id(), "queued", outputs=[dataset("q")])])
    _invoke("ingest", str(SHOP))
    # an event before the file's is not loaded yet: the position must not skip it
    assert log.position(CONSUMER) == 0
    while Worker(graph, log).run_once():
        pass
    assert log.position(CONSUMER) == log.last_seq() and log.dead_letter_count() == 0


def test_an_event_over_the_limits_in_a_file_is_rejected_and_not_logged(
        graph: Graph, log_path: Path, tmp_path: Path) -> None:
    huge = run_event("COMPLETE", new_run_id(), "huge", outputs=[dataset("x" * 40_000)])
    fine = run_event("COMPLETE", new_run_id(), "fine", outputs=[dataset("ok")])
    f = tmp_path / "two.ndjson"
    f.write_text(json.dumps(huge) + "\n" + json.dumps(fine) + "\n")
    r = CliRunner().invoke(app, ["ingest", str(f)])
    assert "1 loaded" in r.output and "1 rejected" in r.output and "over the limit" in r.output
    log = SQLiteLog(log_path)
    assert log.count() == 1 and log.dead_letter_count() == 0
    assert log.position(CONSUMER) == 1


def test_replay_wipe_refuses_to_drop_a_spark_bulk_load(graph: Graph, log_path: Path) -> None:
    pytest.importorskip("pyspark")
    _invoke("ingest", "--engine", "spark", "--master", "local[1]", str(SHOP))
    log = SQLiteLog(log_path)
    assert log.count() == 0
    [bulk] = log.bulk_loads()
    assert bulk.source == str(SHOP) and bulk.events > 0
    r = CliRunner().invoke(app, ["replay", "--wipe"])
    assert r.exit_code == 2
    assert str(SHOP) in r.output and "--forget-bulk-loads" in r.output
    assert canonical_dump(graph) != []  # nothing was wiped
    _invoke("replay", "--wipe", "--forget-bulk-loads")
    assert canonical_dump(graph) == [] and log.bulk_loads() == []


def _api(graph: Graph, log: SQLiteLog) -> TestClient:
    return TestClient(create_app(Settings(), graph, log), base_url="http://localhost",
                      client=("127.0.0.1", 40001))


def _drain(graph: Graph, log: SQLiteLog) -> None:
    while Worker(graph, log).run_once():
        pass


WAREHOUSE = "postgres://warehouse:5432"


def test_marquez_metadata_writes_survive_replay_wipe(graph: Graph, log_path: Path) -> None:
    _invoke("ingest", str(SHOP))
    log = SQLiteLog(log_path)
    api = _api(graph, log)
    ns = "/api/v1/namespaces/" + WAREHOUSE.replace("/", "%2F").replace(":", "%3A")
    assert api.put("/api/v1/namespaces/shop-nightly",
                   json={"ownerName": "data-platform",
                         "description": "nightly; password=hunter2"}).status_code == 200
    assert api.put("/api/v1/tags/PII", json={"description": "personal data"}).status_code == 200
    assert api.post(f"{ns}/datasets/raw.users/tags/gold").status_code == 200
    assert api.post(f"{ns}/datasets/raw.users/fields/email/tags/pii").status_code == 200
    assert api.delete("/api/v1/namespaces/shop-nightly/jobs/load_orders").status_code == 200
    # an event after the delete reports the job again: the order among events must be kept
    again = run_event("COMPLETE", new_run_id(), "load_orders", ns="shop-nightly",
                      outputs=[dataset("raw.orders", WAREHOUSE, ["order_id"])])
    assert api.post("/api/v1/lineage", json=again).status_code == 201
    assert api.delete("/api/v1/namespaces/shop-nightly/jobs/clean_users").status_code == 200
    _drain(graph, log)
    before = canonical_dump(graph)
    assert not any("hunter2" in line for line in before)
    assert "hunter2" not in json.dumps([e.event for e in log.scan()])  # scrubbed in the log too
    hidden = [json.loads(line) for line in before if '"Job"' in line]
    deleted = {n[2]["name"] for n in hidden if n[0] == "node" and "deleted" in n[2]}
    assert deleted == {"clean_users"}  # load_orders came back with the later event

    out = _invoke("replay", "--wipe")
    assert "6 metadata commands" in out
    assert canonical_dump(graph) == before
    # the API still answers what it wrote: the field's tag, the namespace's owner
    fields = api.get(f"{ns}/datasets/raw.users").json()["fields"]
    assert "PII" in next(f for f in fields if f["name"] == "email")["tags"]
    assert api.get("/api/v1/namespaces/shop-nightly").json()["ownerName"] == "data-platform"
    # Marquez's listing of events shows events only, not the commands
    listed = api.get("/api/v1/events/lineage",
                     params={"before": "2100-01-01T00:00:00Z", "after": "1970-01-01T00:00:00Z",
                             "limit": 1000}).json()
    assert listed["totalCount"] == log.count() - 6


def test_a_worker_behind_applies_a_command_in_its_place(graph: Graph, log_path: Path) -> None:
    """The API applies a soft delete at once; the worker, loading an older event that reports
    the dataset again, shows it, then applies the delete again in its place: hidden, as a replay
    builds it."""
    log = SQLiteLog(log_path)
    api = _api(graph, log)
    first = run_event("COMPLETE", new_run_id(), "writer", outputs=[dataset("kept.table")])
    assert api.post("/api/v1/lineage", json=first).status_code == 201
    _drain(graph, log)
    queued = run_event("COMPLETE", new_run_id(), "writer", outputs=[dataset("kept.table")])
    assert api.post("/api/v1/lineage", json=queued).status_code == 201  # not loaded yet
    assert api.delete("/api/v1/namespaces/ns/datasets/kept.table").status_code == 200
    assert log.position(CONSUMER) < log.last_seq()  # the worker still has the event to load
    _drain(graph, log)
    assert log.position(CONSUMER) == log.last_seq()
    listed = api.get("/api/v1/namespaces/ns/datasets").json()
    assert "kept.table" not in [d["name"] for d in listed["datasets"]]


def test_an_event_the_log_took_before_a_soft_delete_leaves_it_hidden(graph: Graph,
                                                                     log_path: Path) -> None:
    """Workers on several Kafka partitions keep no order between them: one may load, after a soft
    delete, an event the log took before it. That event leaves the dataset hidden; an event the
    log took after the deletion shows it again, even if the deletion is met again after it."""
    from ingest import commands
    from ingest.pipeline import Ingester, IngestReport
    from ingest.read import from_log

    log = SQLiteLog(log_path)
    api = _api(graph, log)

    def listed() -> list[str]:
        return [d["name"] for d in api.get("/api/v1/namespaces/ns/datasets").json()["datasets"]]

    first = run_event("COMPLETE", new_run_id(), "writer", outputs=[dataset("kept.table")])
    assert api.post("/api/v1/lineage", json=first).status_code == 201
    _drain(graph, log)
    late = run_event("COMPLETE", new_run_id(), "other_writer", outputs=[dataset("kept.table")])
    assert api.post("/api/v1/lineage", json=late).status_code == 201  # taken, not loaded yet
    [taken] = log.read(log.position(CONSUMER), 1)
    assert api.delete("/api/v1/namespaces/ns/datasets/kept.table").status_code == 200
    assert "kept.table" not in listed()
    # another worker loads the earlier event now, before anything else
    report = Ingester(graph).ingest([from_log(taken)], IngestReport())
    assert report.loaded == 1 and "kept.table" not in listed()
    # an event the log takes after the deletion reports it again, as in Marquez
    again = run_event("COMPLETE", new_run_id(), "other_writer", outputs=[dataset("kept.table")])
    assert api.post("/api/v1/lineage", json=again).status_code == 201
    _drain(graph, log)
    assert "kept.table" in listed()
    # the deletion met once more after that event (its partition's worker late): still shown
    [command] = [e for e in log.read(0, 100) if e.kind == "command"]
    commands.apply(graph, commands.Command.of(command.event))
    assert "kept.table" in listed()


def test_a_tag_on_an_unknown_field_is_404_and_leaves_no_trace(graph: Graph, log_path: Path) -> None:
    _invoke("ingest", str(SHOP))
    log = SQLiteLog(log_path)
    entries = log.count()
    ns = "/api/v1/namespaces/" + WAREHOUSE.replace("/", "%2F").replace(":", "%3A")
    r = _api(graph, log).post(f"{ns}/datasets/raw.users/fields/no_such_field/tags/pii")
    assert r.status_code == 404
    assert log.count() == entries
