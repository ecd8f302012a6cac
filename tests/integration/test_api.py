"""The HTTP API against the real server: answers, Marquez-compatible shapes, error paths, tokens."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from neo4j import GraphDatabase

from api.app import create_app
from graph.db import Graph
from graph.settings import Settings
from ingest.pipeline import Ingester, IngestReport
from ingest.read import read_file
from tests.helpers import dataset, ingest_events, new_run_id, run_event

pytestmark = pytest.mark.integration

SHOP = Path(__file__).parents[2] / "examples" / "events" / "shop.ndjson"
NS = "postgres://warehouse:5432"
LOCAL = ("127.0.0.1", 40000)


@pytest.fixture
def shop(graph: Graph) -> Graph:
    report = Ingester(graph).ingest(read_file(SHOP), IngestReport())
    assert report.loaded == 28 and not report.rejected
    return graph


def _client(graph: Graph, tokens: str | None = None, client: tuple[str, int] = LOCAL) -> TestClient:
    settings = Settings(api_tokens=tokens, api_max_page=3)
    return TestClient(create_app(settings, graph), client=client, base_url="http://localhost")


@pytest.fixture
def api(shop: Graph) -> Iterator[TestClient]:
    with _client(shop) as c:
        yield c


def test_blast_radius_and_where_answer_with_explanations(api: TestClient) -> None:
    r = api.get("/api/v1/impact/dataset", params={"namespace": NS, "name": "raw.users"})
    assert r.status_code == 200
    body = r.json()
    names = {i["name"] for i in body["impacted"] if i["kind"] == "dataset"}
    assert {"staging.users_clean", "marts.orders_enriched", "dashboards.revenue",
            "ml.user_features"} <= names
    assert all(i["path"][0] == f"{NS}:raw.users" and i["why"] for i in body["impacted"])
    where = api.get("/api/v1/where", params={"namespace": NS, "dataset": "raw.users",
                                             "column": "email"}).json()
    assert [(x["dataset"], x["column"], x["label"]) for x in where["reaches"]] == [
        ("ml.user_features", "email", "raw"), ("staging.users_clean", "email_hash", "masked")]
    assert where["counts"]["raw"] == 1
    csv_r = api.get("/api/v1/where", params={"namespace": NS, "dataset": "raw.users",
                                             "column": "email", "format": "csv"})
    assert csv_r.headers["content-type"].startswith("text/csv")
    assert "ml.user_features,email,raw,1" in csv_r.text


def test_root_cause_upstream_and_freshness(api: TestClient) -> None:
    rc = api.get("/api/v1/root-cause/dataset", params={
        "namespace": NS, "name": "dashboards.revenue", "asOf": "2024-06-01T03:00:00Z"}).json()
    top = rc["candidates"][0]
    assert top["kind"] == "failed run" and "amount_eur" in top["evidence"]["errorMessage"]
    up = api.get("/api/v1/upstream/dataset", params={"namespace": NS, "name": "dashboards.revenue"}).json()
    assert {i["name"] for i in up["impacted"]} == {
        "marts.revenue_by_country", "marts.orders_enriched", "raw.orders", "staging.users_clean",
        "raw.users"}
    fresh = api.get("/api/v1/freshness", params={"namespace": NS, "name": "raw.users",
                                                 "asOf": "2024-06-02T12:00:00Z"}).json()
    # two daily writes are too few for a cadence (impact.health.freshness.MIN_OCCASIONS): never LATE
    assert fresh["late"] is False and fresh["cadence"] is None
    assert "cadence unknown (2 runs" in fresh["verdict"]


def test_marquez_lineage_shape_is_directed(api: TestClient) -> None:
    r = api.get("/api/v1/lineage", params={"nodeId": f"dataset:{NS}:staging.users_clean", "depth": 1})
    assert r.status_code == 200
    nodes = {n["id"]: n for n in r.json()["graph"]}
    assert set(nodes) == {f"dataset:{NS}:raw.users", "job:shop-nightly:clean_users",
                          f"dataset:{NS}:staging.users_clean", "job:shop-nightly:enrich_orders",
                          f"dataset:{NS}:marts.orders_enriched"}
    # ml_user_features merely shares raw.users as input: a sibling, not lineage
    assert not any("ml_user_features" in i for i in nodes)
    job = nodes["job:shop-nightly:clean_users"]
    assert job["type"] == "JOB" and job["data"]["latestRun"]["state"] == "COMPLETED"
    assert job["inEdges"] == [{"origin": f"dataset:{NS}:raw.users",
                               "destination": "job:shop-nightly:clean_users"}]
    assert job["outEdges"] == [{"origin": "job:shop-nightly:clean_users",
                                "destination": f"dataset:{NS}:staging.users_clean"}]
    ds = nodes[f"dataset:{NS}:staging.users_clean"]
    assert ds["type"] == "DATASET" and {f["name"] for f in ds["data"]["fields"]} >= {"email_hash"}


def test_marquez_column_lineage_keeps_transformations(api: TestClient) -> None:
    r = api.get("/api/v1/column-lineage", params={
        "nodeId": f"datasetField:{NS}:staging.users_clean:email_hash", "withDownstream": "false"})
    assert r.status_code == 200
    nodes = {n["id"]: n for n in r.json()["graph"]}
    me = nodes[f"datasetField:{NS}:staging.users_clean:email_hash"]
    [field] = me["data"]["inputFields"]
    assert (field["dataset"], field["field"]) == ("raw.users", "email")
    assert field["transformations"][0]["masking"] is True
    assert f"datasetField:{NS}:raw.users:email" in nodes
    whole = api.get("/api/v1/column-lineage", params={"nodeId": f"dataset:{NS}:marts.orders_enriched",
                                                      "withDownstream": "true"}).json()
    assert f"datasetField:{NS}:marts.revenue_by_country:revenue" in {n["id"] for n in whole["graph"]}


def test_lookups_paginate_and_clamp(api: TestClient) -> None:
    page = api.get("/api/v1/datasets", params={"limit": 1000}).json()
    assert page["limit"] == 3 and len(page["datasets"]) == 3 and page["total"] == 7
    second = api.get("/api/v1/datasets", params={"limit": 3, "offset": 3}).json()
    assert not {d["name"] for d in page["datasets"]} & {d["name"] for d in second["datasets"]}
    job = api.get("/api/v1/job", params={"namespace": "shop-nightly", "name": "revenue_by_country"}).json()
    assert [r["state"] for r in job["runs"]] == ["COMPLETE", "FAIL"]
    run = api.get(f"/api/v1/runs/{job['runs'][1]['runId']}").json()
    assert "amount_eur" in run["props"]["errorMessage"] and "events" not in run["props"]
    assert api.get("/api/v1/namespaces").json()["namespaces"][0]["name"] == NS
    assert api.get("/api/v1/impact/dataset", params={"namespace": NS, "name": "raw.users",
                                                     "depth": 999}).json()["depth"] == 50


@pytest.mark.parametrize(("path", "params", "status", "field"), [
    ("/api/v1/dataset", {"namespace": NS, "name": "nope"}, 404, None),
    ("/api/v1/impact/column", {"namespace": NS, "dataset": "raw.users", "column": "nope"}, 404, None),
    ("/api/v1/runs/00000000-0000-0000-0000-000000000000", {}, 404, None),
    ("/api/v1/lineage", {"nodeId": "dataset:nowhere:nothing"}, 404, None),
    ("/api/v1/impact/dataset", {"namespace": NS, "name": "raw.users", "depth": 0}, 422, "depth"),
    ("/api/v1/impact/dataset", {"namespace": NS, "name": "raw.users", "depth": "x"}, 422, "depth"),
    ("/api/v1/impact/dataset", {"namespace": NS}, 422, "name"),
    ("/api/v1/root-cause/dataset", {"namespace": NS, "name": "raw.users", "asOf": "yesterday"}, 422, "asOf"),
    ("/api/v1/lineage", {"nodeId": "table:x:y"}, 400, "nodeId"),  # Marquez's path: its shape
    ("/api/v1/where", {"namespace": NS, "dataset": "raw.users", "column": "email", "format": "xml"},
     422, "format"),
    ("/api/v1/datasets", {"limit": 0}, 422, "limit"),
])
def test_error_paths(api: TestClient, path: str, params: dict[str, Any], status: int,
                     field: str | None) -> None:
    r = api.get(path, params=params)
    assert r.status_code == status, r.text
    body = r.json()
    assert body["status"] == status and body["error"] and body["detail"], body  # the one shape
    if status == 404:
        assert body["error"] == "not found" and body["key"]
    elif status == 400:  # on Marquez's paths, Marquez's shape: each error a sentence
        assert any(str(field) in e for e in body["errors"]), body
    else:
        assert field in [d["loc"][-1] for d in body["errors"]]


def test_an_ambiguous_node_id_is_400_with_its_candidates_never_a_guess(
        api: TestClient, graph: Graph) -> None:
    ingest_events(graph, [run_event("COMPLETE", new_run_id(), "w", ns="amb", outputs=[
        dataset("y", ns="amb:x"), dataset("x:y", ns="amb")])])
    r = api.get("/api/v1/lineage", params={"nodeId": "dataset:amb:x:y"})
    assert r.status_code == 400, r.text
    assert sorted(r.json()["candidates"]) == ["dataset:amb%3Ax:y", "dataset:amb:x%3Ay"]
    assert "%3A" in r.json()["detail"] and "'amb:x'" in r.json()["detail"]
    for node_id, expected in (("dataset:amb%3Ax:y", "dataset:amb:x:y"),
                              ("dataset:amb:x%3Ay", "dataset:amb:x:y")):
        r = api.get("/api/v1/lineage", params={"nodeId": node_id, "depth": 1})
        assert r.status_code == 200, r.text
        assert expected in {n["id"] for n in r.json()["graph"]}


def test_a_404_names_the_closest_datasets_in_any_namespace(api: TestClient) -> None:
    r = api.get("/api/v1/dataset", params={"namespace": "postgres://elsewhere", "name": "raw.user"})
    assert r.status_code == 404, r.text
    assert {"namespace": NS, "name": "raw.users"} in r.json()["didYouMean"]
    r = api.get("/api/v1/impact/job", params={"namespace": "nowhere", "name": "qqqqqqqq"})
    assert r.status_code == 404 and r.json()["didYouMean"] == []


def test_neo4j_outage_is_503_with_retry_hint_not_a_stack_trace() -> None:
    dead = Graph(GraphDatabase.driver("bolt://127.0.0.1:1", auth=("neo4j", "x"),
                                      connection_acquisition_timeout=2, connection_timeout=2,
                                      max_transaction_retry_time=1))
    with _client(dead) as c:
        r = c.get("/api/v1/impact/dataset", params={"namespace": NS, "name": "raw.users"})
    assert r.status_code == 503 and r.headers["retry-after"] == "5"
    assert "Traceback" not in r.text and "retry" in r.json()["detail"]


def test_tokens_are_scoped(shop: Graph) -> None:
    tokens = "reader-token-1:read,writer-token-1:write"
    url, params = "/api/v1/impact/dataset", {"namespace": NS, "name": "raw.users"}
    with _client(shop, tokens, client=("203.0.113.9", 1234)) as c:
        assert c.get(url, params=params).status_code == 401
        assert c.get(url, params=params, headers={"Authorization": "Bearer wrong-token"}).status_code == 401
        assert c.get(url, params=params, headers={"Authorization": "Basic abc"}).status_code == 401
        for token in ("reader-token-1", "writer-token-1"):
            auth = {"Authorization": f"Bearer {token}"}
            assert c.get(url, params=params, headers=auth).status_code == 200
        assert c.get("/health").status_code == 200


def test_without_tokens_only_loopback_clients_are_served(shop: Graph) -> None:
    with _client(shop, client=("203.0.113.9", 1234)) as c:
        r = c.get("/api/v1/namespaces")
        assert r.status_code == 403 and "LINEAGE_API_TOKENS" in r.json()["detail"]
    with _client(shop, client=("::1", 1234)) as c:
        assert c.get("/api/v1/namespaces").status_code == 200


def test_openapi_docs_are_served(api: TestClient) -> None:
    assert api.get("/docs").status_code == 200
    spec = api.get("/openapi.json").json()
    assert {"/api/v1/lineage", "/api/v1/column-lineage", "/api/v1/where",
            "/api/v1/root-cause/dataset"} <= set(spec["paths"])


def test_marquez_lineage_from_a_job_counts_depth_in_jobs(api: TestClient) -> None:
    one = api.get("/api/v1/lineage", params={"nodeId": "job:shop-nightly:enrich_orders", "depth": 1})
    assert {n["id"] for n in one.json()["graph"]} == {
        "job:shop-nightly:enrich_orders", f"dataset:{NS}:staging.users_clean",
        f"dataset:{NS}:raw.orders", f"dataset:{NS}:marts.orders_enriched"}
    two = {n["id"] for n in api.get("/api/v1/lineage", params={
        "nodeId": "job:shop-nightly:enrich_orders", "depth": 2}).json()["graph"]}
    assert {"job:shop-nightly:revenue_by_country", "job:shop-nightly:clean_users",
            "job:shop-nightly:load_orders", f"dataset:{NS}:marts.revenue_by_country",
            f"dataset:{NS}:raw.users"} <= two
    assert "job:shop-nightly:ml_user_features" not in two  # reads raw.orders too: a sibling


def test_every_error_has_one_shape(shop: Graph) -> None:
    """401, 403, 404, 413, 415, 421, 422 and 400 from the routes, the guard and FastAPI alike."""
    seen = {}
    with _client(shop, "reader-token-1:read", client=("203.0.113.9", 1)) as c:
        seen[401] = c.get("/api/v1/namespaces")
        seen[403] = c.post("/api/v1/lineage", json={}, headers={"Authorization": "Bearer reader-token-1"})
    with _client(shop) as c:
        seen[404] = c.get("/api/v1/dataset", params={"namespace": NS, "name": "no.such"})
        seen[415] = c.post("/api/v1/lineage", content=b"x", headers={"content-type": "text/plain"})
        seen[400] = c.post("/api/v1/lineage", content=b'{"eventType":\n',  # not JSON
                           headers={"content-type": "application/x-ndjson"})
        seen[422] = c.get("/api/v1/impact/dataset", params={"namespace": NS})
        invalid = c.post("/api/v1/lineage", json={"eventType": "COMPLETE"})  # JSON, not an event
    with TestClient(create_app(Settings(), shop), client=LOCAL, base_url="http://attacker.example") as c:
        seen[421] = c.get("/api/v1/namespaces")
    for status, r in seen.items():
        body = r.json()
        assert r.status_code == status and body["status"] == status, r.text
        assert isinstance(body["error"], str) and isinstance(body["detail"], str) and body["detail"]
        assert r.headers["x-request-id"]  # what the server's log lines about it carry
        # the server's own time, for browsers' developer tools and bench.over_http
        assert re.fullmatch(r"app;dur=\d+\.\d\d", r.headers["server-timing"]), r.headers
    assert seen[422].json()["errors"][0]["loc"] == ["query", "name"]
    assert seen[400].json()["accepted"] == 0 and seen[400].json()["rejected"]
    assert invalid.status_code == 422 and invalid.json()["errors"][0].startswith("event 0: ")
