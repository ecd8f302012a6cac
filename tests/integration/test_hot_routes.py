"""The questions answered below FastAPI's router (api.hot): the same answer, byte for byte, as
through the router, and everything the layer is unsure of left to the router's validation."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fastapi.routing
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.hot import get_routes
from api.routes import marquez, questions
from graph.db import Graph
from graph.settings import Settings
from ingest.pipeline import Ingester, IngestReport
from ingest.read import read_file

pytestmark = pytest.mark.integration

SHOP = Path(__file__).parents[2] / "examples" / "events" / "shop.ndjson"
NS = "postgres://warehouse:5432"
LOCAL = ("127.0.0.1", 40000)

# the valid questions, one or more per route answered below the router
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
    ("/api/v1/lineage", {"nodeId": "table:x:y"}),  # 422 from the function, not the validation
    ("/api/v1/where", {"tag": "PII", "namespace": NS}),  # BadParam
    ("/api/v1/impact/dataset", {"namespace": NS, "name": "raw.users", "unknown": "ignored"}),
]

# what the layer leaves to FastAPI's validation (or to its choice between repeated values)
UNSURE: list[tuple[str, Any]] = [
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


@pytest.fixture
def routed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths of the requests FastAPI's router handed to a route."""
    seen: list[str] = []
    original = fastapi.routing.APIRoute.handle

    async def spy(self: fastapi.routing.APIRoute, scope: Any, receive: Any, send: Any) -> None:
        seen.append(self.path)
        await original(self, scope, receive, send)

    monkeypatch.setattr(fastapi.routing.APIRoute, "handle", spy)
    return seen


def _clients(graph: Graph, tokens: str | None = None,
             client: tuple[str, int] = LOCAL) -> Iterator[tuple[TestClient, TestClient]]:
    settings = Settings(api_tokens=tokens, api_max_page=3)
    with TestClient(create_app(settings, graph), client=client, base_url="http://localhost") as hot, \
            TestClient(create_app(settings, graph, below_router=False), client=client,
                       base_url="http://localhost") as plain:
        yield hot, plain


@pytest.fixture
def both(shop: Graph) -> Iterator[tuple[TestClient, TestClient]]:
    yield from _clients(shop)


def _same(hot: TestClient, plain: TestClient, path: str, params: Any,
          headers: dict[str, str] | None = None) -> int:
    a = hot.get(path, params=params, headers=headers)
    b = plain.get(path, params=params, headers=headers)
    assert (a.status_code, a.content) == (b.status_code, b.content), (path, params)
    assert a.headers["content-type"] == b.headers["content-type"]
    assert a.headers.get("www-authenticate") == b.headers.get("www-authenticate")
    return a.status_code


def test_every_question_route_is_answered_below_the_router() -> None:
    # a route whose signature this layer cannot parse would silently go back to the router
    paths = {path for _, path in get_routes((questions.router, marquez.router))}
    assert paths == {"/api/v1/impact/dataset", "/api/v1/impact/job", "/api/v1/impact/column",
                     "/api/v1/upstream/dataset", "/api/v1/upstream/column",
                     "/api/v1/root-cause/dataset", "/api/v1/where", "/api/v1/freshness",
                     "/api/v1/lineage", "/api/v1/column-lineage"}
    # and every one of them is in VALID
    assert paths == {path for path, _ in VALID}


def test_answers_below_the_router_are_the_routers_byte_for_byte(
        both: tuple[TestClient, TestClient], routed: list[str]) -> None:
    hot, plain = both
    statuses = []
    for path, params in VALID:
        routed.clear()
        statuses.append(_same(hot, plain, path, params))
        # the plain app's request went through the router, the hot one's did not
        assert routed == [path], (path, params, routed)
    assert statuses == [200] * 15 + [404, 422, 422, 200], statuses


def test_what_the_layer_is_unsure_of_goes_to_the_routers_validation(
        both: tuple[TestClient, TestClient], routed: list[str]) -> None:
    hot, plain = both
    for path, params in UNSURE:
        routed.clear()
        status = _same(hot, plain, path, params)
        assert routed == [path, path], (path, params)  # both apps' requests went to the router
        # lenient values FastAPI accepts are answered, the rest refused by its validation
        assert status in (200, 422), (path, params, status)
    # depth=+3, " 3", withDownstream=1, the repeated name: FastAPI's parsing accepted them
    assert hot.get("/api/v1/impact/dataset", params={"namespace": NS, "name": "raw.users",
                                                     "depth": "+3"}).json()["depth"] == 3


def test_tokens_are_checked_below_the_router_as_above(shop: Graph, routed: list[str]) -> None:
    path, params = VALID[0]
    away = ("203.0.113.9", 1234)
    for hot, plain in _clients(shop, tokens="reader-token:read,writer-token:write", client=away):
        for auth, expected in (("", 401), ("Bearer nope", 401), ("Basic abc", 401),
                               ("Bearer writer-token", 200), ("Bearer reader-token", 200)):
            routed.clear()
            status = _same(hot, plain, path, params, {"Authorization": auth} if auth else None)
            assert routed == [path] and status == expected, (auth, status)
    for hot, plain in _clients(shop, client=away):  # no tokens: loopback clients only
        assert _same(hot, plain, path, params) == 403
