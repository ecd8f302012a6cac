"""Every JSON answer holds to the schema the OpenAPI document declares for it: a GET of every
route (and the writes' answers) on the shop's graph, each answer validated against its
operation's 2xx schema."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from jsonschema import Draft202012Validator

from api.app import create_app
from graph.db import Graph
from graph.settings import Settings
from ingest.pipeline import Ingester, IngestReport
from ingest.read import read_file

pytestmark = pytest.mark.integration

SHOP = Path(__file__).parents[2] / "examples" / "events" / "shop.ndjson"
NS, JOBS = "postgres://warehouse:5432", "shop-nightly"
Q = urllib.parse.quote


@pytest.fixture
def api(graph: Graph) -> Iterator[TestClient]:
    Ingester(graph).ingest(read_file(SHOP), IngestReport())
    with TestClient(create_app(Settings(), graph), client=("127.0.0.1", 40000),
                    base_url="http://localhost") as client:
        yield client


def _requests(api: TestClient) -> list[tuple[str, str, str, dict[str, Any] | None]]:
    """(method, route as the document names it, URL, body) of a valid request of each route."""
    ds, job = f"/api/v1/namespaces/{Q(NS, safe='')}/datasets", f"/api/v1/namespaces/{JOBS}/jobs"
    run_id = api.get(f"{job}/clean_users/runs").json()["runs"][0]["id"]
    ds_version = api.get(f"{ds}/raw.users/versions").json()["versions"][0]["version"]
    job_version = api.get(f"{job}/clean_users/versions").json()["versions"][0]["version"]
    return [
        ("get", "/health", "/health", None),
        ("get", "/api/v1/namespaces", "/api/v1/namespaces", None),
        ("get", "/api/v1/namespaces/{namespace}", f"/api/v1/namespaces/{JOBS}", None),
        ("put", "/api/v1/namespaces/{namespace}", "/api/v1/namespaces/team",
         {"ownerName": "me", "description": "ours"}),
        ("get", "/api/v1/namespaces/{namespace}/datasets", ds, None),
        ("get", "/api/v1/namespaces/{namespace}/datasets/{dataset}", f"{ds}/raw.users", None),
        ("get", "/api/v1/namespaces/{namespace}/datasets/{dataset}/versions",
         f"{ds}/raw.users/versions", None),
        ("get", "/api/v1/namespaces/{namespace}/datasets/{dataset}/versions/{version}",
         f"{ds}/raw.users/versions/{ds_version}", None),
        ("post", "/api/v1/namespaces/{namespace}/datasets/{dataset}/tags/{tag}",
         f"{ds}/raw.users/tags/PII", None),
        ("post", "/api/v1/namespaces/{namespace}/datasets/{dataset}/fields/{field}/tags/{tag}",
         f"{ds}/raw.users/fields/email/tags/PII", None),
        ("get", "/api/v1/jobs", "/api/v1/jobs", None),
        ("get", "/api/v1/namespaces/{namespace}/jobs", job, None),
        ("get", "/api/v1/namespaces/{namespace}/jobs/{job}", f"{job}/clean_users", None),
        ("get", "/api/v1/namespaces/{namespace}/jobs/{job}/versions",
         f"{job}/clean_users/versions", None),
        ("get", "/api/v1/namespaces/{namespace}/jobs/{job}/versions/{version}",
         f"{job}/clean_users/versions/{job_version}", None),
        ("get", "/api/v1/namespaces/{namespace}/jobs/{job}/runs", f"{job}/clean_users/runs", None),
        ("get", "/api/v1/jobs/runs/{run_id}", f"/api/v1/jobs/runs/{run_id}", None),
        ("get", "/api/v1/jobs/runs/{run_id}/facets", f"/api/v1/jobs/runs/{run_id}/facets?type=run",
         None),
        ("get", "/api/v1/runlineage/upstream", f"/api/v1/runlineage/upstream?runId={run_id}", None),
        ("get", "/api/v1/sources", "/api/v1/sources", None),
        ("get", "/api/v1/tags", "/api/v1/tags", None),
        ("put", "/api/v1/tags/{tag}", "/api/v1/tags/GOLD", {"description": "the best"}),
        ("get", "/api/v1/search", "/api/v1/search?q=users", None),
        ("get", "/api/v1/stats/{kind}", "/api/v1/stats/datasets?period=DAY", None),
        ("get", "/api/v1/stats/lineage-events", "/api/v1/stats/lineage-events?period=DAY", None),
        ("get", "/api/v1/events/lineage", "/api/v1/events/lineage", None),
        ("get", "/api/v1/lineage", f"/api/v1/lineage?nodeId=dataset:{Q(NS)}:raw.users", None),
        ("get", "/api/v1/column-lineage",
         f"/api/v1/column-lineage?nodeId=dataset:{Q(NS)}:staging.users_clean", None),
        ("get", "/api/v1/impact/dataset", f"/api/v1/impact/dataset?namespace={Q(NS)}&name=raw.users",
         None),
        ("get", "/api/v1/impact/column",
         f"/api/v1/impact/column?namespace={Q(NS)}&dataset=raw.users&column=email", None),
        ("get", "/api/v1/upstream/dataset",
         f"/api/v1/upstream/dataset?namespace={Q(NS)}&name=dashboards.revenue", None),
        ("get", "/api/v1/root-cause/dataset",
         f"/api/v1/root-cause/dataset?namespace={Q(NS)}&name=dashboards.revenue", None),
        ("get", "/api/v1/where", f"/api/v1/where?namespace={Q(NS)}&dataset=raw.users&column=email",
         None),
        ("get", "/api/v1/where", "/api/v1/where?tag=PII", None),
        ("get", "/api/v1/freshness", f"/api/v1/freshness?namespace={Q(NS)}&name=raw.users", None),
        ("post", "/api/v1/impact/check", "/api/v1/impact/check",
         {"changes": [{"op": "drop_column", "namespace": NS, "dataset": "raw.users",
                      "column": "email"}]}),
        ("get", "/api/v1/datasets", "/api/v1/datasets", None),
        ("get", "/api/v1/dataset", f"/api/v1/dataset?namespace={Q(NS)}&name=raw.users", None),
        ("get", "/api/v1/job", f"/api/v1/job?namespace={JOBS}&name=clean_users", None),
        ("get", "/api/v1/runs/{run_id}", f"/api/v1/runs/{run_id}", None),
        ("get", "/api/v1/gate", f"/api/v1/gate?namespace={Q(NS)}&name=dashboards.revenue", None),
        ("get", "/api/v1/health/lineage", "/api/v1/health/lineage", None),
        ("post", "/api/v1/lineage", "/api/v1/lineage", {
            "eventType": "COMPLETE", "eventTime": "2024-06-03T00:00:00Z",
            "run": {"runId": "0192a8f0-0000-7000-8000-000000000001"},
            "job": {"namespace": JOBS, "name": "late_job"},
            "producer": "https://example.test/p", "schemaURL":
                "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"}),
    ]


def test_every_answer_holds_to_its_declared_schema(api: TestClient) -> None:
    doc = api.get("/openapi.json").json()
    checked = set()
    for method, route, url, body in _requests(api):
        r = api.request(method.upper(), url, json=body)
        assert 200 <= r.status_code < 300, (method, url, r.status_code, r.text[:300])
        declared = doc["paths"][route][method]["responses"][str(r.status_code)]
        schema = declared["content"]["application/json"]["schema"]
        errors = sorted(Draft202012Validator({**schema, "components": doc["components"]})
                        .iter_errors(r.json()), key=str)
        assert not errors, (method, url, [f"{list(e.absolute_path)}: {e.message[:200]}"
                                          for e in errors[:5]])
        checked.add((method, route))
    assert len(checked) >= 40
