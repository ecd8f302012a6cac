"""Every question route over HTTP: a valid request of each answers, lenient values are read as
FastAPI reads them and malformed ones refused with 422, and tokens are checked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from api.app import create_app
from api.routes import lineage, questions
from graph.db import Graph
from graph.settings import Settings
from ingest.pipeline import Ingester, IngestReport
from ingest.read import read_file

pytestmark = pytest.mark.integration

SHOP = Path(__file__).parents[2] / "examples" / "events" / "shop.ndjson"
NS = "postgres://warehouse:5432"
LOCAL = ("127.0.0.1", 40000)

QUESTIONS = {"/api/v1/impact/dataset", "/api/v1/impact/job", "/api/v1/impact/column",
             "/api/v1/upstream/dataset", "/api/v1/upstream/column", "/api/v1/root-cause/dataset",
             "/api/v1/where", "/api/v1/freshness", "/api/v1/lineage", "/api/v1/column-lineage",
             "/api/v1/provenance/model"}

# the valid questions, one or more per route
VALID: list[tuple[str, dict[str, Any]]] = [
    ("/api/v1/impact/dataset", {"namespace": NS, "name": "raw.users"}),
    ("/api/v1/impact/dataset", {"namespace": NS, "name": "raw.users", "depth": "1",
                                "includeRetired": "true", "asOf": "2024-06-02T00:00:00Z"}),
    ("/api/v1/impact/dataset", {"namespace": NS, "name": "raw.users", "depth": "999"}),
    ("/api/v1/impact/job", {"namespace": "shop-nightly", "name": "clean_users"}),
    ("/api/v1/impact/column", {"namespace": NS, "dataset": "raw.users", "column": "email",
                               "depth": "007"}),
    ("/api/v1/upstream/dataset", {"namespace": NS, "name": "dashboards.revenue"}),
    ("/api/v1/upstream/column", {"namespace": NS, "dataset": "staging.users_clean",
                                 "column": "email_hash", "includeRetired": "false"}),
    ("/api/v1/root-cause/dataset", {"namespace": NS, "name": "dashboards.revenue",
                                    "asOf": "2024-06-01T03:00:00Z"}),
    ("/api/v1/where", {"namespace": NS, "dataset": "raw.users", "column": "email"}),
    ("/api/v1/where", {"namespace": NS, "dataset": "raw.users", "column": "email",
                       "format": "csv"}),
    ("/api/v1/where", {"tag": "PII"}),
    ("/api/v1/freshness", {"namespace": NS, "name": "raw.users", "asOf": "2024-06-02T12:00:00Z"}),
    ("/api/v1/lineage", {"nodeId": f"dataset:{NS}:staging.users_clean", "depth": "1"}),
    ("/api/v1/column-lineage", {"nodeId": f"dataset:{NS}:marts.orders_enriched",
                                "withDownstream": "true"}),
    ("/api/v1/column-lineage", {"nodeId": f"datasetField:{NS}:staging.users_clean:email_hash"}),
    # errors the routes' own functions raise, answered by the app's handlers
    ("/api/v1/impact/dataset", {"namespace": NS, "name": "raw.user"}),  # 404 with didYouMean
    ("/api/v1/lineage", {"nodeId": "table:x:y"}),  # 400 (Marquez's path) from the function
    ("/api/v1/where", {"tag": "PII", "namespace": NS}),  # BadParam
    ("/api/v1/impact/dataset", {"namespace": NS, "name": "raw.users", "unknown": "ignored"}),
    # the shop has no model (tests/integration/ml/test_mlflow.py asks provenance of real ones)
    ("/api/v1/provenance/model", {"name": "churn", "format": "json"}),  # 404
]

# values FastAPI's validation reads leniently (depth=+3, a repeated name) or refuses
LENIENT_OR_REFUSED: list[tuple[str, Any]] = [
    ("/api/v1/impact/dataset", {"namespace": NS}),
    ("/api/v1/impact/dataset", {"namespace": "", "name": "raw.users"}),
    ("/api/v1/impact/dataset", {"namespace": NS, "name": "raw.users", "depth": "0"}),
    ("/api/v1/impact/dataset", {"namespace": NS, "name": "raw.users", "depth": "+3"}),
    ("/api/v1/impact/dataset", {"namespace": NS, "name": "raw.users", "depth": " 3"}),
    ("/api/v1/impact/dataset", {"namespace": NS, "name": "raw.users", "depth": "x"}),
    ("/api/v1/impact/dataset", {"namespace": NS, "name": "raw.users", "depth": ""}),
    ("/api/v1/impact/dataset", {"namespace": NS, "name": "raw.users", "includeRetired": "yes"}),
    ("/api/v1/impact/dataset", {"namespace": NS, "name": "raw.users", "asOf": "yesterday"}),
    ("/api/v1/impact/dataset", [("namespace", NS), ("name", "raw.users"), ("name", "raw.orders")]),
    ("/api/v1/where", {"namespace": NS, "dataset": "raw.users", "column": "email",
                       "format": "xml"}),
    ("/api/v1/where", {"tag": "x" * 257}),
    ("/api/v1/lineage", {"nodeId": "ab"}),
    ("/api/v1/column-lineage", {"nodeId": f"dataset:{NS}:raw.users", "withDownstream": "1"}),
]


@pytest.fixture
def shop(graph: Graph) -> Graph:
    report = Ingester(graph).ingest(read_file(SHOP), IngestReport())
    assert report.loaded == 28 and not report.rejected
    return graph


def _client(graph: Graph, tokens: str | None = None,
            client: tuple[str, int] = LOCAL) -> Iterator[TestClient]:
    settings = Settings(api_tokens=tokens, api_max_page=3)
    with TestClient(create_app(settings, graph), client=client, base_url="http://localhost") as c:
        yield c


@pytest.fixture
def api(shop: Graph) -> Iterator[TestClient]:
    yield from _client(shop)


def test_every_question_route_has_a_valid_request() -> None:
    # every GET route taking its question in the query (a run's root cause takes it in the
    # path), and the Marquez-shaped lineage graphs (not the listing of events received)
    paths = {r.path for router in (questions.router, lineage.router) for r in router.routes
             if isinstance(r, APIRoute) and r.methods == {"GET"} and "{" not in r.path
             and not r.path.startswith("/api/v1/events")}
    assert paths == QUESTIONS == {path for path, _ in VALID}


def test_each_question_answers(api: TestClient) -> None:
    statuses = []
    for path, params in VALID:
        r = api.get(path, params=params)
        assert r.headers["content-type"].startswith(("application/json", "text/csv")), (path, params)
        statuses.append(r.status_code)
    assert statuses == [200] * 15 + [404, 400, 422, 200, 404], statuses


def test_lenient_values_are_read_and_malformed_ones_refused(api: TestClient) -> None:
    for path, params in LENIENT_OR_REFUSED:
        status = api.get(path, params=params).status_code
        # refused: 422 on our paths, 400 on Marquez's (its shape)
        assert status in (200, 400 if "lineage" in path else 422), (path, params, status)
    # depth=+3 and " 3": FastAPI's parsing accepts them
    assert api.get("/api/v1/impact/dataset", params={"namespace": NS, "name": "raw.users",
                                                     "depth": "+3"}).json()["depth"] == 3
    assert api.get("/api/v1/impact/dataset", params={"namespace": NS, "name": "raw.users",
                                                     "depth": "x"}).status_code == 422


def test_tokens_are_checked_on_the_questions(shop: Graph) -> None:
    path, params = VALID[0]
    away = ("203.0.113.9", 1234)
    for api in _client(shop, tokens="reader-token:read,writer-token:write", client=away):
        for auth, expected in (("", 401), ("Bearer nope", 401), ("Basic abc", 401),
                               ("Bearer writer-token", 200), ("Bearer reader-token", 200)):
            r = api.get(path, params=params, headers={"Authorization": auth} if auth else None)
            assert r.status_code == expected, (auth, r.status_code)
    for api in _client(shop, client=away):  # no tokens: loopback clients only
        assert api.get(path, params=params).status_code == 403
