"""Issue 17, items 3, 4 and 6 against the real app and Neo4j: bad input is a 4xx that says what and
where, never a 500; cheap, bounded answers to hostile input; the loopback mode against browsers."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.app import create_app
from graph.db import Graph
from graph.settings import Settings
from ingest.log.sqlite import SQLiteLog
from ingest.pipeline import Ingester, IngestReport
from ingest.read import read_file

pytestmark = pytest.mark.integration
SHOP = Path(__file__).parents[2] / "examples" / "events" / "shop.ndjson"
NS = "postgres://warehouse:5432"
READER, WRITER = "reader-token-1", "writer-token-1"


@pytest.fixture
def shop(graph: Graph) -> Graph:
    Ingester(graph).ingest(read_file(SHOP), IngestReport())
    return graph


@pytest.fixture
def api(shop: Graph, tmp_path: Path) -> Iterator[TestClient]:
    app = create_app(Settings(), shop, SQLiteLog(tmp_path / "events.db"))
    with TestClient(app, base_url="http://localhost", client=("127.0.0.1", 1234)) as client:
        yield client


AS_OF_ENDPOINTS: list[tuple[str, dict[str, str]]] = [
    ("/api/v1/impact/dataset", {"namespace": NS, "name": "raw.users"}),
    ("/api/v1/impact/job", {"namespace": "shop-nightly", "name": "revenue_by_country"}),
    ("/api/v1/impact/column", {"namespace": NS, "dataset": "raw.users", "column": "email"}),
    ("/api/v1/upstream/dataset", {"namespace": NS, "name": "dashboards.revenue"}),
    ("/api/v1/upstream/column", {"namespace": NS, "dataset": "dashboards.revenue", "column": "revenue"}),
    ("/api/v1/root-cause/dataset", {"namespace": NS, "name": "dashboards.revenue"}),
    ("/api/v1/where", {"namespace": NS, "dataset": "raw.users", "column": "email"}),
    ("/api/v1/freshness", {"namespace": NS, "name": "raw.users"}),
]


@pytest.mark.parametrize("as_of", ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59",
                                   "9999-12-31T23:59:59.999999-00:01", "2024-02-30T00:00:00Z",
                                   "2024-01-01T00:00:00+24:00", "x"])
def test_times_out_of_range_are_422_naming_as_of(api: TestClient, as_of: str) -> None:
    for endpoint, params in AS_OF_ENDPOINTS:
        r = api.get(endpoint, params={**params, "asOf": as_of})
        assert r.status_code == 422, (endpoint, r.text)
        assert r.json()["errors"][0]["loc"] == ["query", "asOf"]


# the body shapes that gave 500 before issue 17, and a few more
BAD_CHECK_BODIES: list[Any] = [
    {"eventTime": "x", "outputs": "abc"},
    {"sql": 123, "job": {"namespace": "a", "name": "b"}, "namespace": "n"},
    {"job": {}, "inputs": []},
    {"namespace": NS, "dataset": "raw.users", "columns": [{"name": "id", "type": {"x": 1}}]},
    {"changes": [{"op": "drop_column", "namespace": NS, "dataset": "raw.users", "column": ["a"]}]},
    {"changes": [{"op": "remove_input", "namespace": NS, "dataset": "raw.users", "job": 5}]},
    {"changes": "all"},
    {"changes": []},
    {"columns": "abc", "namespace": NS, "dataset": "raw.users"},
    {"job": "x", "sql": "select 1", "namespace": NS},
    {"outputs": [{"namespace": NS}]},
    {"dataset": {"namespace": NS, "name": "raw.users", "facets": {"schema": {"fields": "x"}}}},
    {"eventTime": "2024", "job": {"namespace": 1, "name": None}, "inputs": "x"},
    {"sql": [], "job": {"namespace": "a", "name": "b"}, "namespace": "n"},
    {"namespace": NS, "name": "raw.users", "columns": [None]},
]


@pytest.mark.parametrize("body", BAD_CHECK_BODIES, ids=range(len(BAD_CHECK_BODIES)))
def test_malformed_change_documents_are_422_naming_the_field(api: TestClient, body: Any) -> None:
    r = api.post("/api/v1/impact/check", json=body)
    assert r.status_code == 422, r.text
    [detail] = r.json()["errors"]
    assert detail["loc"] == ["body", "body"] and detail["msg"]


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8)
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                        | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=8)


_KEYS = ["changes", "op", "namespace", "dataset", "name", "column", "columns", "to", "job", "sql",
         "inputs", "outputs", "eventTime", "facets", "schema", "fields", "type", "run", "dialect"]


@st.composite
def _check_bodies(draw: st.DrawFn) -> Any:
    """Change documents of every kind with any part replaced by any JSON value."""
    keys = draw(st.lists(st.sampled_from(_KEYS), max_size=5, unique=True))
    body = {k: draw(_json_values()) for k in keys}
    if draw(st.booleans()):
        body["changes"] = [{"op": draw(st.sampled_from(["drop_column", "remove_input", "x"])),
                            "namespace": draw(st.sampled_from([NS, 1, ""])),
                            "dataset": draw(st.sampled_from(["raw.users", None, 2])),
                            "column": draw(_json_values()), "job": draw(_json_values())}]
    return body


def test_generated_change_documents_never_get_a_5xx(api: TestClient) -> None:
    @settings(max_examples=150, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(body=_check_bodies())
    def run(body: Any) -> None:
        r = api.post("/api/v1/impact/check", json=body)
        assert r.status_code < 500, (body, r.text)

    run()


def test_a_node_id_with_many_colons_is_refused(api: TestClient) -> None:
    for path in ("/api/v1/column-lineage", "/api/v1/lineage"):
        # Marquez's paths: 400, each error a sentence naming the parameter
        r = api.get(path, params={"nodeId": "datasetField:" + ":" * 1200})
        assert r.status_code == 400 and r.json()["errors"][0].startswith("query nodeId"), r.text
        r = api.get(path, params={"nodeId": "datasetField:" + "a:" * 40})
        assert r.status_code == 400 and "':'" in r.text
        r = api.get(path, params={"nodeId": "dataset:" + "a" * 3000})
        assert r.status_code == 400
    # real ids with ':' in the namespace still resolve
    r = api.get("/api/v1/column-lineage", params={"nodeId": f"datasetField:{NS}:raw.users:email",
                                                  "withDownstream": "true"})
    assert r.status_code == 200 and r.json()["graph"]


def test_health_answers_on_the_event_loop_while_every_worker_thread_is_busy(
        shop: Graph, tmp_path: Path) -> None:
    """A liveness check never waits behind questions: /health is served by the event loop."""
    import threading

    import anyio.to_thread

    app = create_app(Settings(), shop, SQLiteLog(tmp_path / "events.db"))
    release = threading.Event()
    with TestClient(app, base_url="http://localhost") as client:
        assert client.portal is not None
        limiter = anyio.to_thread.current_default_thread_limiter
        blocked = client.portal.call(lambda: limiter().total_tokens)
        for _ in range(int(blocked)):  # occupy every worker thread of the app
            client.portal.start_task_soon(anyio.to_thread.run_sync, release.wait)  # type: ignore[arg-type]
        time.sleep(0.2)
        answers: list[int] = []
        asking = threading.Thread(target=lambda: answers.append(client.get("/health").status_code))
        asking.start()
        asking.join(timeout=3)  # a /health waiting for a worker thread would wait for ever here
        answered_in_time = list(answers)
        release.set()
        asking.join(timeout=10)
    assert answered_in_time == [200]


def test_loopback_mode_serves_loopback_host_names_only(api: TestClient) -> None:
    event = json.loads(SHOP.read_text().splitlines()[0])
    for host in ("localhost:5000", "127.0.0.1:5000", "127.1.2.3", "[::1]:5000", "localhost"):
        r = api.get("/health", headers={"Host": host})
        assert r.status_code == 200, host
    for host in ("attacker.example:5000", "attacker.example", "10.0.0.1:5000", "localhost.evil.example"):
        r = api.post("/api/v1/lineage", json=event, headers={"Host": host})
        assert r.status_code == 421 and "loopback" in r.json()["detail"], host
        assert api.get("/api/v1/impact/dataset", params={"namespace": NS, "name": "raw.users"},
                       headers={"Host": host}).status_code == 421


def test_loopback_mode_refuses_cross_site_browser_writes(api: TestClient) -> None:
    event = json.loads(SHOP.read_text().splitlines()[0])
    r = api.post("/api/v1/lineage", json=event, headers={"Origin": "https://attacker.example"})
    assert r.status_code == 403 and "cross-site" in r.json()["detail"]
    r = api.post("/api/v1/lineage", json=event, headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403
    # a sandboxed frame or a file:// page sends "null", whatever site it comes from
    r = api.post("/api/v1/lineage", json=event, headers={"Origin": "null"})
    assert r.status_code == 403 and "cross-site" in r.json()["detail"]
    r = api.post("/api/v1/impact/check", json={"changes": []},
                 headers={"Origin": "http://evil.example:5000"})
    assert r.status_code == 403
    # reads from anywhere on this machine, and writes from a loopback page, are fine
    assert api.post("/api/v1/lineage", json=event, headers={"Origin": "http://localhost:3000"}).status_code == 201
    assert api.post("/api/v1/lineage", json=event).status_code == 201
    assert api.get("/health", headers={"Origin": "https://attacker.example"}).status_code == 200


def test_with_tokens_metrics_and_the_api_description_need_a_read_token(shop: Graph, tmp_path: Path) -> None:
    app = create_app(Settings(api_tokens=f"{READER}:read,{WRITER}:write"), shop,
                     SQLiteLog(tmp_path / "events.db"))
    with TestClient(app, base_url="http://lineage.example.com") as client:
        for path in ("/metrics", "/docs", "/openapi.json", "/redoc"):
            assert client.get(path).status_code == 401, path
            assert client.get(path, headers={"Authorization": "Bearer wrong-token"}).status_code == 401
            for token in (READER, WRITER):
                r = client.get(path, headers={"Authorization": f"Bearer {token}"})
                assert r.status_code == 200, (path, r.text)
        for path in ("/health", "/ready"):
            assert client.get(path).status_code == 200, path


@pytest.mark.parametrize(("sql", "says"), [
    # 50,000 terms: openlineage-sql's native parser overflows its stack on this
    ("SELECT " + "+".join(["a"] * 50_000) + " FROM t", "crashed the SQL parser"),
    ("SELECT a FROM t WHERE b = '" + "x" * 300_000 + "'", "over the limit"),
])
def test_sql_that_would_kill_the_parser_is_422_and_the_api_lives_on(api: TestClient, sql: str,
                                                                    says: str) -> None:
    body = {"job": {"namespace": "shop-nightly", "name": "clean_users"},
            "namespace": NS, "sql": sql}
    r = api.post("/api/v1/impact/check", json=body)
    assert r.status_code == 422, r.text
    assert says in r.text
    assert api.get("/health").status_code == 200
    ok = api.post("/api/v1/impact/check", json={**body, "sql": "INSERT INTO staging.users_clean "
                                                                 "SELECT id FROM raw.users"})
    assert ok.status_code == 200, ok.text


def test_sql_that_parses_past_the_time_limit_is_422(api: TestClient,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import impact.change.sql

    monkeypatch.setattr(impact.change.sql, "TIME_LIMIT", 0.5)
    union = " UNION ".join(f"SELECT a{i} FROM t{i}" for i in range(4000))
    r = api.post("/api/v1/impact/check", json={
        "job": {"namespace": "shop-nightly", "name": "clean_users"}, "namespace": NS, "sql": union})
    assert r.status_code == 422 and "longer than 0.5 s" in r.text, r.text


@pytest.mark.parametrize("as_of", ["0001-01-01T00:00:00Z", "9999-12-31T23:59:00Z"])
def test_the_first_and_last_instants_answer_every_question(api: TestClient, as_of: str) -> None:
    for endpoint, params in AS_OF_ENDPOINTS:
        r = api.get(endpoint, params={**params, "asOf": as_of})
        assert r.status_code == 200, (endpoint, as_of, r.text)


def test_event_time_offsets_iso_allows_are_normalised_and_listed(api: TestClient) -> None:
    from tests.helpers import new_run_id, run_event

    basic = run_event("COMPLETE", new_run_id(), "basic_offset", time="2024-06-01T08:00:00+0530")
    bad = run_event("COMPLETE", new_run_id(), "bad_offset", time="2024-06-01T08:00:00+14:99")
    r = api.post("/api/v1/lineage", json=[basic, bad])
    assert r.status_code == 201 and r.json()["accepted"] == 1, r.text
    [refused] = r.json()["rejected"]
    assert refused["index"] == 1 and "offset +14:99" in " ".join(refused["reasons"])
    listed = api.get("/api/v1/events/lineage", params={
        "after": "2024-06-01T00:00:00Z", "before": "2024-06-02T00:00:00Z"}).json()
    assert [e["eventTime"] for e in listed["events"]] == ["2024-06-01T02:30:00Z"]


def test_a_name_holding_a_percent_sign_answers_by_its_node_id(api: TestClient, shop: Graph) -> None:
    from tests.helpers import dataset, ingest_events, new_run_id, run_event

    ingest_events(shop, [run_event("COMPLETE", new_run_id(), "pct", ns="p",
                                   outputs=[dataset("growth_100%_rate", "p")])])
    r = api.get("/api/v1/lineage", params={"nodeId": "dataset:p:growth_100%_rate"})
    assert r.status_code == 200, r.text
    ids = {n["id"] for n in r.json()["graph"]}
    assert "dataset:p:growth_100%_rate" in ids
    for node_id in ids:
        assert api.get("/api/v1/lineage", params={"nodeId": node_id}).status_code == 200
