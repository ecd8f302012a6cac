"""Marquez's API on our store, operation by operation, on Marquez's demo events: search, events,
versions, run facets, filters, soft deletes, the checks of the legacy writes and the tokens on writes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from graph.db import Graph
from graph.settings import Settings
from ingest.log.sqlite import SQLiteLog
from tests import food_delivery
from tests.helpers import ingest_events, new_run_id, run_event

pytestmark = pytest.mark.integration

NS = "food_delivery"
M = "/api/v1/namespaces/food_delivery"


@pytest.fixture
def demo(graph: Graph, tmp_path: Path) -> tuple[Graph, SQLiteLog, list[dict[str, Any]]]:
    events = food_delivery.events()
    assert ingest_events(graph, events).loaded == len(events)
    log = SQLiteLog(tmp_path / "events.db")
    log.append(events)
    return graph, log, events


@pytest.fixture
def api(demo: tuple[Graph, SQLiteLog, list[dict[str, Any]]]) -> Iterator[TestClient]:
    graph, log, _ = demo
    with TestClient(create_app(Settings(), graph, log), client=("127.0.0.1", 40000),
                    base_url="http://localhost") as c:
        yield c


def test_search_by_fragment_with_filter_and_sort(api: TestClient) -> None:
    found = api.get("/api/v1/search", params={"q": "ORDERS"}).json()
    names = [r["name"] for r in found["results"]]
    assert names == sorted(names) and found["totalCount"] == len(names) > 2
    assert {"public.orders", "etl_orders"} <= set(names)
    jobs = api.get("/api/v1/search", params={"q": "orders", "filter": "JOB"}).json()
    assert {r["type"] for r in jobs["results"]} == {"JOB"}
    assert all(r["nodeId"] == f"job:{NS}:{r['name']}" for r in jobs["results"])
    assert api.get("/api/v1/search", params={"q": "orders", "limit": 1}).json()["totalCount"] \
        == found["totalCount"]
    assert api.get("/api/v1/search", params={"q": "orders", "after": "2030-01-01"}).json() == {
        "totalCount": 0, "results": []}
    assert api.get("/api/v1/search", params={"q": " "}).status_code == 400


def test_events_window_sort_and_paging(api: TestClient,
                                       demo: tuple[Graph, SQLiteLog, list[dict[str, Any]]]) -> None:
    events = demo[2]
    times = sorted(e["eventTime"] for e in events)
    newest = api.get("/api/v1/events/lineage", params={"limit": 3}).json()
    assert newest["totalCount"] == len(events)
    assert [e["eventTime"] for e in newest["events"]] == times[::-1][:3]
    oldest = api.get("/api/v1/events/lineage",
                     params={"sortDirection": "asc", "limit": 2, "offset": 1}).json()
    assert [e["eventTime"] for e in oldest["events"]] == times[1:3]
    window = api.get("/api/v1/events/lineage", params={
        "after": times[0], "before": times[-1], "limit": 100}).json()  # after <= t < before
    assert window["totalCount"] == sum(1 for t in times if times[0] <= t < times[-1])
    assert api.get("/api/v1/events/lineage", params={"before": "yesterday"}).status_code == 400


def test_versions_runs_and_facets(api: TestClient,
                                  demo: tuple[Graph, SQLiteLog, list[dict[str, Any]]]) -> None:
    versions = api.get(f"{M}/jobs/etl_orders_7_days/versions").json()
    assert versions["totalCount"] == 1
    version = versions["versions"][0]
    assert {d["name"] for d in version["inputs"]} >= {"public.orders"}
    assert api.get(f"{M}/jobs/etl_orders_7_days/versions/{version['version']}").json()[
        "latestRun"]["id"] == version["latestRun"]["id"]
    assert api.get(f"{M}/jobs/etl_orders_7_days/versions/{new_run_id()}").status_code == 404
    run_id = version["latestRun"]["id"]
    facets = api.get(f"/api/v1/jobs/runs/{run_id}/facets", params={"type": "run"}).json()
    assert facets["runId"] == run_id and "nominalTime" in facets["facets"]
    job_facets = api.get(f"/api/v1/jobs/runs/{run_id}/facets", params={"type": "job"}).json()
    assert "sql" in job_facets["facets"]
    assert api.get(f"/api/v1/jobs/runs/{new_run_id()}").status_code == 404
    assert api.get(f"{M}/datasets/public.orders/versions/{new_run_id()}").status_code == 404
    # facets are kept per dataset: the newest version has them, an older one none
    shop = Path(__file__).parents[3] / "examples" / "events" / "shop.ndjson"
    ingest_events(demo[0], [json.loads(line) for line in shop.read_text().splitlines() if line])
    written = api.get("/api/v1/namespaces/postgres%3A%2F%2Fwarehouse%3A5432/datasets/"
                      "staging.users_clean/versions").json()["versions"]  # written both nights
    assert len(written) == 2 and "schema" in written[0]["facets"]
    assert all(v["facets"] == {} for v in written[1:])


def test_facets_are_served_as_producers_sent_them(
        api: TestClient, demo: tuple[Graph, SQLiteLog, list[dict[str, Any]]]) -> None:
    """Every facet a producer sent, the lifted ones too, with the producer's _producer; a
    dataset's input facets among its facets; a run's job facets."""
    events = demo[2]
    sent = next(o["facets"] for e in events for o in e.get("outputs", [])
                if o["name"] == "public.delivery_7_days" and "columnLineage" in (o.get("facets") or {}))
    served = api.get(f"{M}/datasets/public.delivery_7_days").json()["facets"]
    for name in ("columnLineage", "schema"):
        assert served[name] == sent[name], name
    # scrubbed of secrets as every event is: the source's password is not kept
    assert served["dataSource"] == {**sent["dataSource"], "uri": "postgres://postgres:5432/food_delivery"}
    run = next(e for e in events if e["job"]["name"] == "etl_orders_7_days")
    job_facets = api.get(f"/api/v1/jobs/runs/{run['run']['runId']}/facets",
                         params={"type": "job"}).json()["facets"]
    assert set(job_facets) == set(run["job"]["facets"]) and job_facets["sql"] == run["job"]["facets"]["sql"]
    producer = "https://example.test/some-producer"
    stats = {"_producer": producer, "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/"
             "InputStatisticsInputDatasetFacet.json#/$defs/InputStatisticsInputDatasetFacet",
             "rowCount": 7, "size": 640}
    change = {"_producer": producer, "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/"
              "LifecycleStateChangeDatasetFacet.json#/$defs/LifecycleStateChangeDatasetFacet",
              "lifecycleStateChange": "OVERWRITE"}
    kind = {"_producer": producer, "_schemaURL": "https://openlineage.io/spec/facets/2-0-4/"
            "JobTypeJobFacet.json#/$defs/JobTypeJobFacet", "processingType": "BATCH",
            "integration": "SPARK", "jobType": "JOB"}
    rid = new_run_id()
    ingest_events(demo[0], [run_event(
        "COMPLETE", rid, "stats_job", ns=NS, time="2030-01-01T00:00:00Z", job_facets={"jobType": kind},
        inputs=[{"namespace": NS, "name": "public.orders", "inputFacets": {"inputStatistics": stats}}],
        outputs=[{"namespace": NS, "name": "public.order_stats", "facets": {"lifecycleStateChange": change}}])])
    assert api.get(f"{M}/datasets/public.orders").json()["facets"]["inputStatistics"] == stats
    out = api.get(f"{M}/datasets/public.order_stats").json()
    assert out["facets"]["lifecycleStateChange"] == change and out["lastLifecycleState"] == "OVERWRITE"
    assert api.get(f"/api/v1/jobs/runs/{rid}/facets", params={"type": "job"}).json()[
        "facets"]["jobType"] == kind


def test_jobs_filtered_by_the_state_of_their_latest_run(api: TestClient, graph: Graph) -> None:
    every = api.get("/api/v1/jobs", params={"limit": 100}).json()
    assert every["totalCount"] == 13 and all(j["id"]["namespace"] == NS for j in every["jobs"])
    completed = api.get("/api/v1/jobs", params={"lastRunStates": "COMPLETED"}).json()
    assert completed["totalCount"] == 13
    assert api.get("/api/v1/jobs", params={"lastRunStates": "FAILED"}).json()["totalCount"] == 0
    ingest_events(graph, [run_event("FAIL", new_run_id(), "etl_orders", ns=NS,
                                    time="2030-01-01T00:00:00Z")])
    failed = api.get("/api/v1/jobs", params={"lastRunStates": ["FAILED", "ABORTED"]}).json()
    assert [j["name"] for j in failed["jobs"]] == ["etl_orders"]
    assert failed["jobs"][0]["latestRun"]["state"] == "FAILED"


def test_soft_delete_hides_until_reported_again(api: TestClient, graph: Graph) -> None:
    gone = api.delete(f"{M}/datasets/public.discounts")
    assert gone.status_code == 200 and gone.json()["name"] == "public.discounts"
    assert api.get(f"{M}/datasets/public.discounts").status_code == 404
    assert "public.discounts" not in {d["name"] for d in api.get(f"{M}/datasets").json()["datasets"]}
    assert api.get("/api/v1/search", params={"q": "discounts", "filter": "DATASET"}).json()[
        "totalCount"] == 0
    ingest_events(graph, [run_event("COMPLETE", new_run_id(), "etl_discounts", ns=NS,
                                    time="2030-01-01T00:00:00Z",
                                    outputs=[{"namespace": NS, "name": "public.discounts"}])])
    assert api.get(f"{M}/datasets/public.discounts").status_code == 200

    assert api.delete(M).json()["name"] == NS
    # Marquez keeps a deleted namespace, hidden; its datasets and jobs leave the listings
    listed = {n["name"]: n for n in api.get("/api/v1/namespaces").json()["namespaces"]}
    assert listed[NS]["isHidden"] is True and api.get(M).json()["isHidden"] is True
    assert not any(n["isHidden"] for name, n in listed.items() if name != NS)
    assert api.get(f"{M}/jobs").json() == {"totalCount": 0, "jobs": []}
    assert api.get(f"{M}/datasets").json() == {"totalCount": 0, "datasets": []}
    assert api.put(M, json={"ownerName": "me"}).json()["ownerName"] == "me"
    assert api.get(M).json()["isHidden"] is False


def test_parameter_errors_have_marquezs_shape_on_marquezs_paths(api: TestClient) -> None:
    r = api.get(f"{M}/datasets", params={"limit": -1})
    assert r.status_code == 400 and r.json()["errors"] and all(
        isinstance(e, str) for e in r.json()["errors"]), r.text
    assert "limit" in r.json()["errors"][0]
    bad = api.get("/api/v1/lineage", params={"nodeId": "table:x:y"})
    assert bad.status_code == 400 and "nodeId" in bad.json()["errors"][0]
    ours = api.get("/api/v1/impact/dataset", params={"name": "x", "namespace": NS, "depth": -1})
    assert ours.status_code == 422 and isinstance(ours.json()["errors"][0], dict), ours.text


def test_legacy_writes_refuse_what_marquez_refuses(api: TestClient) -> None:
    """Marquez's legacy writes (tested with marquez-python in test_marquez_client) check what
    Marquez checks: a body it cannot read, an unknown namespace, source, dataset, job or run."""
    for method, path, body, status in (
            ("put", f"{M}/datasets/x", {"sourceName": "default"}, 400),  # no physicalName
            ("put", "/api/v1/namespaces/nope/datasets/x",
             {"physicalName": "x", "sourceName": "default"}, 404),
            ("put", f"{M}/datasets/x", {"physicalName": "x", "sourceName": "nope"}, 404),
            ("put", f"{M}/jobs/x", {"type": "BATCH", "inputs": [], "outputs": [],
                                     "location": None, "runId": "not-a-uuid"}, 400),
            ("put", f"{M}/jobs/x", {"type": "BATCH", "outputs": [],
                                     "inputs": [{"namespace": NS, "name": "nope"}]}, 404),
            ("post", f"{M}/jobs/nope/runs", {}, 404),
            ("post", f"/api/v1/jobs/runs/{new_run_id()}/complete", None, 404),
            ("post", f"/api/v1/jobs/runs/{new_run_id()}/finish", None, 400),
            ("put", "/api/v1/sources/x", {"type": "POSTGRESQL"}, 400)):
        r = api.request(method.upper(), path, json=body)
        assert r.status_code == status, (path, body, r.text)


def test_marquez_writes_need_a_write_token(demo: tuple[Graph, SQLiteLog, list[dict[str, Any]]]
                                           ) -> None:
    graph, log, _ = demo
    app = create_app(Settings(api_tokens="reader-token-1:read,writer-token-1:write"), graph, log)
    with TestClient(app, base_url="http://localhost") as c:
        reader, writer = ({"Authorization": f"Bearer {t}"} for t in ("reader-token-1", "writer-token-1"))
        assert c.get(f"{M}/datasets", headers=reader).status_code == 200
        path = f"{M}/datasets/public.customers/tags/GOLD"
        assert c.post(path, headers=reader).status_code == 403
        assert c.post(path).status_code == 401
        assert c.post(path, headers=writer).json()["tags"] == ["GOLD"]
        assert c.delete(path, headers=writer).json()["tags"] == []


def test_names_with_slashes_and_unknown_names(api: TestClient, graph: Graph) -> None:
    ns = "postgres://db.example:5432"
    ingest_events(graph, [run_event("COMPLETE", new_run_id(), "load", ns="etl",
                                    outputs=[{"namespace": ns, "name": "public/raw.users"}])])
    r = api.get("/api/v1/namespaces/postgres%3A%2F%2Fdb.example%3A5432/datasets/public%2Fraw.users")
    assert r.status_code == 200 and r.json()["id"] == {"namespace": ns, "name": "public/raw.users"}
    missing = api.get(f"{M}/datasets/public.nope")
    assert missing.status_code == 404 and missing.json()["kind"] == "dataset"
    # Marquez's job listing does not look its namespace up: an unknown one has no jobs
    assert api.get("/api/v1/namespaces/nowhere/jobs").json() == {"totalCount": 0, "jobs": []}
    assert api.get("/api/v1/namespaces/nowhere/datasets").status_code == 404


def test_run_lineage_upstream(api: TestClient,
                              demo: tuple[Graph, SQLiteLog, list[dict[str, Any]]]) -> None:
    events = demo[2]
    run_of = {e["job"]["name"]: e["run"]["runId"] for e in events}
    body = api.get("/api/v1/runlineage/upstream",
                   params={"runId": run_of["etl_delivery_7_days"]}).json()
    jobs = [r["job"]["name"] for r in body["runs"]]
    # the run itself, the writers of its five inputs, and the four writers of orders_7_days' inputs
    assert jobs[0] == "etl_delivery_7_days" and set(jobs) == {
        "etl_delivery_7_days", "etl_orders_7_days", "etl_customers", "etl_order_status",
        "etl_drivers", "etl_restaurants", "etl_menus", "etl_menu_items", "etl_orders",
        "etl_categories"}
    first = body["runs"][0]
    assert first["run"]["status"] == "COMPLETED"
    produced = {i["name"]: i["producedByRunId"] for i in first["inputs"]}
    assert produced["public.orders_7_days"] == run_of["etl_orders_7_days"]
    shallow = api.get("/api/v1/runlineage/upstream",
                      params={"runId": run_of["etl_delivery_7_days"], "depth": 0}).json()
    assert len(shallow["runs"]) == 1
    assert api.get("/api/v1/runlineage/upstream", params={"runId": new_run_id()}).status_code == 404


def _holding(windows: list[dict[str, Any]], when: str) -> dict[str, Any]:
    """The window of a stats answer whose [startInterval, endInterval) holds the time ``when``."""
    from ingest.times import parse_time

    at = parse_time(when)
    return next(w for w in windows
                if parse_time(w["startInterval"]) <= at < parse_time(w["endInterval"]))


def test_stats_by_hour_and_day(api: TestClient, graph: Graph,
                               demo: tuple[Graph, SQLiteLog, list[dict[str, Any]]]) -> None:
    from datetime import UTC, datetime

    now = datetime.now(UTC).isoformat()
    fresh = [run_event("START", new_run_id(), "fresh_job", ns=NS, time=now),
             run_event("FAIL", new_run_id(), "fresh_job", ns=NS, time=now)]
    ingest_events(graph, fresh)
    demo[1].append(fresh)
    day = api.get("/api/v1/stats/lineage-events", params={"period": "DAY"}).json()
    # the window holding the fresh events: the last one, or the one before when the hour (or,
    # below, the day) turned between the events and the request
    assert len(day) == 24 and _holding(day, now) in (day[-1], day[-2])
    assert _holding(day, now)["start"] == 1 and _holding(day, now)["fail"] == 1
    assert sum(h["start"] for h in day) == 1  # the demo's events are from 2020
    assert sum(h["complete"] for h in day) == 0
    week = api.get("/api/v1/stats/lineage-events",
                   params={"period": "WEEK", "timezone": "Europe/Paris"}).json()
    assert len(week) == 7 and _holding(week, now) in (week[-1], week[-2])
    assert _holding(week, now)["fail"] == 1 and sum(d["fail"] for d in week) == 1
    assert api.get("/api/v1/stats/lineage-events", params={"period": "WEEK"}).status_code == 400
    jobs = api.get("/api/v1/stats/jobs", params={"period": "DAY"}).json()
    assert jobs[0]["count"] == 13 and jobs[-1]["count"] == 14
    assert api.get("/api/v1/stats/sources", params={"period": "WEEK",
                                                    "timezone": "Mars/Base"}).status_code == 400


def test_version_suffixes_where_marquez_takes_them(api: TestClient) -> None:
    """Column lineage takes a dataset's or a job's version (marquez-python's
    get_column_lineage_by_job sends one); /lineage refuses it, where Marquez reads the suffix as
    part of the name and finds no node."""
    version = api.get(f"{M}/datasets/public.delivery_7_days").json()["currentVersion"]
    plain = api.get("/api/v1/column-lineage",
                    params={"nodeId": f"dataset:{NS}:public.delivery_7_days"}).json()
    versioned = api.get("/api/v1/column-lineage",
                        params={"nodeId": f"dataset:{NS}:public.delivery_7_days#{version}"})
    assert versioned.status_code == 200 and versioned.json() == plain and plain["graph"]
    job = api.get("/api/v1/column-lineage",
                  params={"nodeId": f"job:{NS}:etl_delivery_7_days#{new_run_id()}"})
    assert job.status_code == 200 and job.json()["graph"]
    refused = api.get("/api/v1/lineage", params={"nodeId": f"dataset:{NS}:public.orders#{version}"})
    assert refused.status_code == 400 and "version" in refused.json()["errors"][0]
    assert api.get("/api/v1/lineage", params={"nodeId": f"job:{NS}:etl_orders#{new_run_id()}"}
                   ).status_code == 400
    assert api.get("/api/v2beta/search/jobs", params={"q": "orders"}).status_code == 503


def test_lineage_of_a_job_without_inputs_or_outputs(api: TestClient) -> None:
    loader = api.get("/api/v1/lineage", params={"nodeId": f"job:{NS}:etl_orders", "depth": 1})
    ids = {n["id"] for n in loader.json()["graph"]}
    assert {f"job:{NS}:etl_orders", f"dataset:{NS}:public.orders"} <= ids
    sink = api.get("/api/v1/lineage", params={"nodeId": f"job:{NS}:email_discounts", "depth": 1})
    ids = {n["id"] for n in sink.json()["graph"]}
    assert {f"job:{NS}:email_discounts", f"dataset:{NS}:public.discounts"} <= ids


def test_an_unknown_run_state_is_refused(api: TestClient) -> None:
    r = api.get("/api/v1/jobs", params={"lastRunStates": "DONE"})
    assert r.status_code == 400 and "lastRunStates" in r.text


def test_a_listings_total_does_not_depend_on_paging(api: TestClient) -> None:
    """Marquez counts what a listing holds, whatever page is asked: an empty page past the end,
    or limit=0, still says how many there are."""
    for path in ("/api/v1/namespaces", "/api/v1/namespaces/food_delivery/datasets",
                 "/api/v1/namespaces/food_delivery/jobs", "/api/v1/jobs"):
        whole = api.get(path, params={"limit": 100}).json()["totalCount"]
        assert whole >= 1, path
        past = api.get(path, params={"limit": 5, "offset": whole + 1}).json()
        assert past["totalCount"] == whole, path
        none = api.get(path, params={"limit": 0}).json()
        assert none["totalCount"] == whole, path


def test_jobs_are_listed_newest_updated_first(api: TestClient) -> None:
    """Marquez's home page lists the latest updated jobs first (JobDao.findAll: updated_at
    DESC); datasets and namespaces stay by name."""
    jobs = api.get("/api/v1/jobs", params={"limit": 100}).json()["jobs"]
    updated = [j["updatedAt"] for j in jobs]
    assert len(set(updated)) > 1 and updated == sorted(updated, reverse=True)
    names = [d["name"] for d in api.get(f"{M}/datasets", params={"limit": 100}).json()["datasets"]]
    assert names == sorted(names)


def test_a_facet_that_is_not_an_object_keeps_its_event(
        api: TestClient, demo: tuple[Graph, SQLiteLog, list[dict[str, Any]]]) -> None:
    """Marquez keeps an event whose facet is not an object: so does lineage-graph. The value is
    kept as sent and never read, the answer lists it, and /metrics counts it."""
    from ingest.worker import Worker

    graph, log, _ = demo
    event = run_event("COMPLETE", new_run_id(), "odd_facets", ns=NS, time="2030-01-01T00:00:00Z",
                      run_facets={"parent": "not a facet"}, job_facets={"sql": 7},
                      outputs=[{"namespace": NS, "name": "public.odd", "facets": {
                          "schema": ["x"], "documentation": {"description": "kept"}}}])
    r = api.post("/api/v1/lineage", json=event)
    assert r.status_code == 201, r.text
    assert r.json()["unreadFacets"] == [{"index": 0, "facets": [
        "run.facets.parent", "job.facets.sql", "outputs[0].facets.schema"]}]
    while Worker(graph, log).run_once() is not None:
        pass
    odd = api.get(f"{M}/datasets/public.odd").json()
    assert odd["description"] == "kept" and odd["fields"] == []
    assert "lineage_facets_unread_total 3" in api.get("/metrics").text


@pytest.mark.parametrize("asked", ["setting", "header"])
def test_visible_when_acknowledged_when_asked(
        demo: tuple[Graph, SQLiteLog, list[dict[str, Any]]], asked: str) -> None:
    """Marquez's clients read right after a write: with LINEAGE_INGEST_WAIT (or one request's
    `Lineage-Wait: loaded`) the 201 comes once the worker has loaded the event."""
    import threading

    from ingest.worker import Worker

    graph, log, _ = demo
    settings = Settings(ingest_wait=10) if asked == "setting" else Settings()
    headers = {"Lineage-Wait": "loaded"} if asked == "header" else {}
    stop = threading.Event()
    worker = threading.Thread(target=Worker(graph, log).run, args=(stop, 0.05), daemon=True)
    worker.start()
    try:
        with TestClient(create_app(settings, graph, log), client=("127.0.0.1", 40000),
                        base_url="http://localhost") as api:
            for i in range(3):
                event = run_event("COMPLETE", new_run_id(), f"written_{i}", ns=NS,
                                  outputs=[{"namespace": NS, "name": f"public.read_back_{i}"}])
                r = api.post("/api/v1/lineage", json=event, headers=headers)
                assert r.status_code == 201 and r.json()["loaded"] is True, r.text
                assert api.get(f"{M}/datasets/public.read_back_{i}").status_code == 200
    finally:
        stop.set()
        worker.join(timeout=30)


def test_the_configured_tags_are_listed_on_an_empty_store(graph: Graph, tmp_path: Path) -> None:
    with TestClient(create_app(Settings(), graph, SQLiteLog(tmp_path / "e.db")),
                    client=("127.0.0.1", 40000), base_url="http://localhost") as api:
        assert api.get("/api/v1/tags").json()["tags"] == [
            {"name": "PII", "description": "Personally identifiable information"},
            {"name": "SENSITIVE", "description": "Contains sensitive information"}]
        api.put("/api/v1/tags/PII", json={"description": "ours"})
        assert api.get("/api/v1/tags").json()["tags"][0] == {"name": "PII", "description": "ours"}


def test_airflow_parents_old_and_new_make_the_dag_job_and_run(graph: Graph, tmp_path: Path) -> None:
    """The older `parentRun` facet is read like `parent` (and first when both come); a parent
    run id that is not a UUID (the DAG run's own id) names the run as Marquez names it; a job
    known only as a parent has the times its children named it, and its run."""
    import uuid

    dag_run = "scheduled__2022-04-25T00:20:00+00:00"

    def task(name: str, facet: str) -> dict[str, Any]:
        link = {"run": {"runId": dag_run}, "job": {"namespace": NS, "name": f"the_dag.{name}"}}
        return run_event("COMPLETE", new_run_id(), f"the_dag.{name}", ns=NS,
                         time="2026-11-28T02:00:00Z", run_facets={facet: link})

    started = task("task1", "parentRun") | {"eventType": "START", "eventTime": "2026-11-28T01:00:00Z"}
    started["run"] = {**started["run"], "runId": new_run_id()}
    assert ingest_events(graph, [task("task1", "parentRun"), task("task2", "parent"),
                                 started]).rejected == []
    with TestClient(create_app(Settings(), graph, SQLiteLog(tmp_path / "e.db")),
                    client=("127.0.0.1", 40000), base_url="http://localhost") as api:
        child = api.get(f"{M}/jobs/the_dag.task1").json()
        assert (child["parentJobName"], child["simpleName"]) == ("the_dag", "task1")
        parent = api.get(f"{M}/jobs/the_dag").json()
        assert parent["createdAt"] and parent["updatedAt"] and parent["parentJobName"] is None
        runs = api.get(f"{M}/jobs/the_dag/runs").json()["runs"]
        expected = uuid.uuid3(uuid.NAMESPACE_URL, f"{NS}.the_dag.{dag_run}")
        assert [r["id"] for r in runs] == [str(expected)]
        # it started with its first child and is as far as its latest one
        assert (runs[0]["startedAt"], runs[0]["state"]) == ("2026-11-28T01:00:00Z", "COMPLETED")


def test_a_run_that_reads_and_writes_a_table_read_the_version_before_it(
        graph: Graph, tmp_path: Path) -> None:
    first, second = new_run_id(), new_run_id()
    table = {"namespace": NS, "name": "public.counts"}
    ingest_events(graph, [
        run_event("COMPLETE", first, "load", ns=NS, time="2026-11-01T02:00:00Z", outputs=[table]),
        run_event("COMPLETE", second, "bump", ns=NS, time="2026-11-02T02:00:00Z",
                  inputs=[table], outputs=[table])])
    with TestClient(create_app(Settings(), graph, SQLiteLog(tmp_path / "e.db")),
                    client=("127.0.0.1", 40000), base_url="http://localhost") as api:
        loaded = api.get(f"/api/v1/jobs/runs/{first}").json()
        bumped = api.get(f"/api/v1/jobs/runs/{second}").json()
    [written] = loaded["outputDatasetVersions"]
    [read] = bumped["inputDatasetVersions"]
    [rewritten] = bumped["outputDatasetVersions"]
    assert read["datasetVersionId"] == written["datasetVersionId"]
    assert read["datasetVersionId"] != rewritten["datasetVersionId"]


def _dataset_event(name: str, time: str, **facets: Any) -> dict[str, Any]:
    return {"eventTime": time, "producer": "https://example.com/p",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
            "dataset": {"namespace": NS, "name": name, "facets": facets}}


def test_a_dataset_has_a_version_per_write_per_declaration_and_from_its_first_read(
        graph: Graph, tmp_path: Path) -> None:
    """Marquez makes a dataset version for each write, for each DatasetEvent (a legacy PUT is
    one) and, for a dataset read before it had any, at that read; newest first, the current
    version the newest, each the same on every request."""
    reader, writer = new_run_id(), new_run_id()
    only_read, declared, read_then_written = (
        {"namespace": NS, "name": n} for n in ("public.only_read", "public.declared", "public.rw"))
    events = [
        run_event("COMPLETE", reader, "reads", ns=NS, time="2026-11-01T02:00:00Z",
                  inputs=[only_read, read_then_written]),
        _dataset_event("public.declared", "2026-11-01T03:00:00Z"),
        run_event("COMPLETE", writer, "writes", ns=NS, time="2026-11-02T02:00:00Z",
                  outputs=[declared, read_then_written])]
    assert ingest_events(graph, events).rejected == []
    assert ingest_events(graph, [events[1]]).loaded == 0  # a re-sent declaration is no new version
    with TestClient(create_app(Settings(), graph, SQLiteLog(tmp_path / "e.db")),
                    client=("127.0.0.1", 40000), base_url="http://localhost") as api:
        def versions(name: str) -> list[dict[str, Any]]:
            found = api.get(f"{M}/datasets/{name}/versions").json()
            assert found["totalCount"] == len(found["versions"])
            assert api.get(f"{M}/datasets/{name}").json()["currentVersion"] == \
                found["versions"][0]["version"]
            assert api.get(f"{M}/datasets/{name}/versions").json() == found  # stable ids
            for v in found["versions"]:
                assert api.get(f"{M}/datasets/{name}/versions/{v['version']}").json() == v
            return list(found["versions"])

        [first] = versions("public.only_read")
        assert (first["createdAt"], first["createdByRun"]) == ("2026-11-01T02:00:00Z", None)
        newest, oldest = versions("public.declared")
        assert newest["createdByRun"]["id"] == writer and oldest["createdByRun"] is None
        assert oldest["createdAt"] == "2026-11-01T03:00:00Z"
        written, read = versions("public.rw")
        assert written["createdByRun"]["id"] == writer
        assert (read["createdAt"], read["createdByRun"]) == ("2026-11-01T02:00:00Z", None)


def test_a_legacy_put_of_a_stream_is_a_stream_and_adds_its_tags(graph: Graph,
                                                                tmp_path: Path) -> None:
    """A StreamMeta comes back a STREAM with its schema location (marquez-java casts to
    Stream); a PUT adds its tags to the dataset's, as Marquez does, and its fields replace."""
    with TestClient(create_app(Settings(), graph, SQLiteLog(tmp_path / "e.db")),
                    client=("127.0.0.1", 40000), base_url="http://localhost") as api:
        assert api.put("/api/v1/namespaces/streams", json={"ownerName": "me"}).status_code == 200
        assert api.put("/api/v1/sources/bus", json={
            "type": "KAFKA", "connectionUrl": "kafka://broker:9092"}).status_code == 200
        path = "/api/v1/namespaces/streams/datasets/clicks"
        put = api.put(path, json={"type": "STREAM", "physicalName": "clicks", "sourceName": "bus",
                                  "schemaLocation": "https://registry/clicks.avsc", "tags": ["PII"],
                                  "fields": [{"name": "a", "type": "STRING"}]})
        assert put.status_code == 200, put.text
        stream = put.json()
        assert (stream["type"], stream["schemaLocation"]) == ("STREAM", "https://registry/clicks.avsc")
        [version] = api.get(f"{path}/versions").json()["versions"]
        assert (version["type"], version["schemaLocation"]) == ("STREAM", "https://registry/clicks.avsc")
        again = api.put(path, json={"type": "STREAM", "physicalName": "clicks", "sourceName": "bus",
                                    "tags": ["SENSITIVE"], "fields": [{"name": "b", "type": "INT"}]})
        assert again.json()["tags"] == ["PII", "SENSITIVE"]
        assert [f["name"] for f in again.json()["fields"]] == ["b"]
        assert api.get(path).json()["tags"] == ["PII", "SENSITIVE"]
        assert api.get(f"{path}/versions").json()["totalCount"] == 2
        # each declared version keeps the source, description and tags its PUT declared; what a
        # PUT left out (the first two said no description) is the dataset's current
        assert api.put("/api/v1/sources/bus2", json={
            "type": "KAFKA", "connectionUrl": "kafka://other:9092"}).status_code == 200
        assert api.put(path, json={"type": "STREAM", "physicalName": "clicks", "sourceName": "bus2",
                                   "description": "clicks, deduplicated", "tags": [],
                                   "fields": [{"name": "b", "type": "INT"}]}).status_code == 200
        newest, middle, oldest = api.get(f"{path}/versions").json()["versions"]
        assert [(v["sourceName"], v["description"], v["tags"]) for v in (newest, middle, oldest)] == [
            ("bus2", "clicks, deduplicated", ["PII", "SENSITIVE"]),
            ("bus", "clicks, deduplicated", ["PII", "SENSITIVE"]),
            ("bus", "clicks, deduplicated", ["PII"])]
        assert api.get(f"{path}/versions/{oldest['version']}").json() == oldest


def test_a_job_no_run_has_run_has_the_version_its_declaration_names(graph: Graph,
                                                                     tmp_path: Path) -> None:
    event = {"eventTime": "2026-11-01T02:00:00Z", "producer": "https://example.com/p",
             "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
             "job": {"namespace": NS, "name": "declared_job"},
             "inputs": [{"namespace": NS, "name": "public.in"}],
             "outputs": [{"namespace": NS, "name": "public.out"}]}
    assert ingest_events(graph, [event]).rejected == []
    with TestClient(create_app(Settings(), graph, SQLiteLog(tmp_path / "e.db")),
                    client=("127.0.0.1", 40000), base_url="http://localhost") as api:
        [version] = api.get(f"{M}/jobs/declared_job/versions").json()["versions"]
        assert [d["name"] for d in version["inputs"]] == ["public.in"]
        assert [d["name"] for d in version["outputs"]] == ["public.out"]
        assert version["latestRun"] is None
        assert api.get(f"{M}/jobs/declared_job").json()["currentVersion"] == version["version"]
        assert api.get(f"{M}/jobs/declared_job/versions/{version['version']}").json() == version


def test_lineage_is_read_in_one_transaction(demo: tuple[Graph, SQLiteLog, list[dict[str, Any]]],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Marquez's lineage and column lineage are each one read transaction (goal 5 of issue 70),
    and answer what a transaction per query answers."""
    from impact.marquez import lineage as lg

    graph = demo[0]
    opened: list[str] = []
    session_of = graph.driver.session

    def counted(*args: Any, **kwargs: Any) -> Any:
        session = session_of(*args, **kwargs)
        read = session.execute_read

        def execute_read(work: Any, *a: Any, **k: Any) -> Any:
            opened.append("read")
            return read(work, *a, **k)

        monkeypatch.setattr(session, "execute_read", execute_read)
        return session

    monkeypatch.setattr(graph.driver, "session", counted)
    for node in (f"dataset:{NS}:public.orders", f"job:{NS}:etl_orders_7_days"):
        opened.clear()
        answer = lg.lineage(graph, node)
        assert opened == ["read"], node
        assert len(answer["graph"]) > 1
        opened.clear()
        assert lg._lineage(graph, node, None, False) == answer
        assert len(opened) >= 3, "the answer takes several queries"
    opened.clear()
    columns = lg.column_lineage(graph, f"dataset:{NS}:public.delivery_7_days")
    assert opened == ["read"] and columns["graph"]
    assert lg._column_lineage(graph, f"dataset:{NS}:public.delivery_7_days", None, False,
                              False) == columns
