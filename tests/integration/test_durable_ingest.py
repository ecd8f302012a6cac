"""POST /api/v1/lineage, the durable log, the worker, dead letters, replay and export, against
the real server. Nothing acknowledged may be lost; bad input gets a 4xx with a reason."""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from neo4j import GraphDatabase

import api.routes.lineage as ingest_routes
from api.app import create_app
from graph.db import Graph
from graph.errors import DatabaseUnavailable
from graph.settings import Settings
from ingest.log.sqlite import Checked, LogError, SQLiteLog
from ingest.worker import CONSUMER, Worker, retry_dead_letters
from tests.conftest import server_settings, wipe
from tests.helpers import dataset, edges, ndjson, new_run_id, nodes, rows, run_event

pytestmark = pytest.mark.integration
LOCAL = ("127.0.0.1", 40001)
INVALID = Path("OpenLineage__OpenLineage/proxy/fluentd/events")


@pytest.fixture
def log(tmp_path: Path) -> SQLiteLog:
    return SQLiteLog(tmp_path / "events.db")


def _client(graph: Graph, log: SQLiteLog, tokens: str | None = None, limit: int = 1024 * 1024,
            client: tuple[str, int] = LOCAL) -> TestClient:
    return TestClient(create_app(Settings(api_tokens=tokens, max_body_bytes=limit), graph, log),
                      base_url="http://localhost",
                      client=client)


@pytest.fixture
def api(graph: Graph, log: SQLiteLog) -> Iterator[TestClient]:
    with _client(graph, log) as c:
        yield c


def _events(n: int, job: str = "job") -> list[dict[str, Any]]:
    return [run_event("COMPLETE", new_run_id(), f"{job}_{i}",
                      outputs=[dataset(f"out_{i}", lineage={"c": [(f"in_{i}", "c", "DIRECT", "IDENTITY")]})])
            for i in range(n)]


def test_one_event_an_array_and_ndjson_are_logged_then_loaded(api: TestClient, graph: Graph,
                                                              log: SQLiteLog) -> None:
    one, arr, lines = _events(1, "one"), _events(3, "arr"), _events(2, "nd")
    r = api.post("/api/v1/lineage", json=one[0])
    assert r.status_code == 201 and r.json()["accepted"] == 1 and r.json()["rejected"] == []
    assert api.post("/api/v1/lineage", json=arr).json()["accepted"] == 3
    r = api.post("/api/v1/lineage", content=ndjson(lines), headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 201 and r.json()["accepted"] == 2
    assert log.count() == 6 and log.position(CONSUMER) == 0   # logged, not yet loaded
    worker = Worker(graph, log)
    assert worker.run_once().events == 6  # type: ignore[union-attr]
    assert worker.run_once() is None and worker.lag() == 0
    jobs = {r["name"] for r in rows(graph, "MATCH (j:Job) RETURN j.name AS name")}
    assert jobs == {"one_0", "arr_0", "arr_1", "arr_2", "nd_0", "nd_1"}


def test_rejected_events_say_index_and_reason_and_do_not_drop_neighbours(api: TestClient,
                                                                         log: SQLiteLog) -> None:
    good = _events(2)
    bad = {"eventType": "COMPLETE", "eventTime": "yesterday", "run": {"runId": "nope"},
           "job": {"namespace": "ns", "name": "j"}, "producer": "x"}
    r = api.post("/api/v1/lineage", json=[good[0], bad, good[1]])
    assert r.status_code == 201
    body = r.json()
    assert body["accepted"] == 2 and [x["index"] for x in body["rejected"]] == [1]
    assert any("runId" in reason for reason in body["rejected"][0]["reasons"])
    assert any("eventTime" in reason for reason in body["rejected"][0]["reasons"])
    text = json.dumps(good[0]) + "\n{not json\n" + json.dumps(good[1])
    r = api.post("/api/v1/lineage", content=text, headers={"content-type": "application/x-ndjson"})
    assert r.json()["accepted"] == 2 and r.json()["rejected"][0]["index"] == 1
    assert "invalid JSON" in r.json()["rejected"][0]["reasons"][0]
    assert log.count() == 4


@pytest.mark.parametrize(("body", "ctype", "status", "says"), [
    (b'{"eventType": "START",', "application/json", 400, "invalid JSON at line 1, column 23"),
    (b"[" * 100_000 + b"]" * 100_000, "application/json", 400, "nested too deeply"),
    (b"", "application/json", 400, "nothing to read"),
    (b"[]", "application/json", 400, "empty array"),
    (b"42", "application/json", 400, "expected a JSON object or array"),
    (b"\xff\xfe garbage", "application/json", 400, "not UTF-8"),
    (b"<event/>", "application/xml", 415, "unsupported content type application/xml"),
    (b"{}", "", 415, "unsupported content type"),
    (b'{"job": 1}', "application/json", 422, None),  # JSON, not a valid event: 422 as Marquez
])
def test_bad_bodies_get_4xx_with_a_reason(api: TestClient, log: SQLiteLog, body: bytes, ctype: str,
                                          status: int, says: str | None) -> None:
    r = api.post("/api/v1/lineage", content=body, headers={"content-type": ctype})
    assert r.status_code == status, r.text
    assert says is None or says in r.text
    assert log.count() == 0


def test_every_gzip_member_is_read_and_trailing_bytes_are_refused(api: TestClient,
                                                                  log: SQLiteLog) -> None:
    """`cat a.gz b.gz c.gz` is one gzip body of three members: all three events are taken."""
    events = _events(3, "member")
    body = b"".join(gzip.compress((json.dumps(e) + "\n").encode()) for e in events)
    r = api.post("/api/v1/lineage", content=body,
                 headers={"content-type": "application/x-ndjson", "content-encoding": "gzip"})
    assert r.status_code == 201 and r.json()["accepted"] == 3, r.text
    assert log.count() == 3
    trailing = gzip.compress(ndjson(events).encode()) + b"not gzip at all"
    r = api.post("/api/v1/lineage", content=trailing,
                 headers={"content-type": "application/x-ndjson", "content-encoding": "gzip"})
    assert r.status_code == 400 and "gzip" in r.json()["detail"], r.text
    assert log.count() == 3  # nothing of the refused body was acknowledged


def test_a_body_over_the_limit_is_413_and_the_limit_is_never_below_1_mib(api: TestClient) -> None:
    big = json.dumps(_events(1)[0] | {"padding": "x" * (1024 * 1024)})
    r = api.post("/api/v1/lineage", content=big, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "limit" in r.json()["detail"]
    with pytest.raises(ValueError, match="1048576"):
        Settings(max_body_bytes=1000)


def test_gzip_bodies_are_accepted_and_bounded_after_decompression(api: TestClient,
                                                                   log: SQLiteLog) -> None:
    events = json.dumps(_events(3)).encode()
    r = api.post("/api/v1/lineage", content=gzip.compress(events),
                 headers={"content-type": "application/json", "content-encoding": "gzip"})
    assert r.status_code == 201 and r.json()["accepted"] == 3, r.text
    bomb = gzip.compress(b"[" + b" " * (9 * 1024 * 1024) + b"]")  # 9 MiB of blanks, ~9 KB sent
    r = api.post("/api/v1/lineage", content=bomb,
                 headers={"content-type": "application/json", "content-encoding": "gzip"})
    assert r.status_code == 413 and "once decompressed" in r.json()["detail"], r.text
    r = api.post("/api/v1/lineage", content=gzip.compress(events)[:-12],
                 headers={"content-type": "application/json", "content-encoding": "gzip"})
    assert r.status_code == 400 and "gzip" in r.json()["detail"], r.text
    r = api.post("/api/v1/lineage", content=events,
                 headers={"content-type": "application/json", "content-encoding": "br"})
    assert r.status_code == 415 and "gzip" in r.json()["detail"], r.text
    assert log.count() == 3


def test_the_corpus_invalid_events_are_refused_with_reasons(api: TestClient, corpus: Path) -> None:
    files = sorted((corpus / INVALID).glob("event_invalid_*.json"))
    assert len(files) == 5
    for f in files:
        r = api.post("/api/v1/lineage", content=f.read_bytes(), headers={"content-type": "application/json"})
        assert r.status_code == 422, f
        assert r.json()["rejected"][0]["reasons"] and r.json()["errors"], f


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                     lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
                     max_leaves=20)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode),
                      _JSON.map(lambda v: json.dumps(v).encode())))
def test_generated_garbage_never_gets_a_5xx(api: TestClient, body: bytes) -> None:
    r = api.post("/api/v1/lineage", content=body, headers={"content-type": "application/json"})
    assert r.status_code in (400, 422, 201), (body, r.text)


_FIELDS = ["eventType", "eventTime", "producer", "run", "job", "inputs", "outputs"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(_FIELDS + ["run.runId", "job.namespace", "job.name"]),
       value=st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.booleans(), st.none(),
                       st.lists(st.integers(), max_size=2)))
def test_wrong_types_in_the_envelope_are_refused_or_harmless(api: TestClient, field: str, value: Any) -> None:
    event = _events(1)[0]
    holder, _, key = field.rpartition(".")
    target = event[holder] if holder else event
    target[key] = value
    r = api.post("/api/v1/lineage", json=event)
    assert r.status_code in (201, 422), r.text
    if field in ("eventTime", "run", "job", "run.runId", "job.namespace", "job.name"):
        assert r.status_code == 422 and r.json()["rejected"][0]["reasons"]


def test_writes_need_a_write_token(graph: Graph, log: SQLiteLog) -> None:
    tokens = "reader-token-1:read,writer-token-1:write"
    with _client(graph, log, tokens=tokens, client=("198.51.100.7", 9)) as c:
        event = _events(1)[0]
        assert c.post("/api/v1/lineage", json=event).status_code == 401
        r = c.post("/api/v1/lineage", json=event, headers={"Authorization": "Bearer reader-token-1"})
        assert r.status_code == 403 and "write" in r.json()["detail"]
        r = c.post("/api/v1/lineage", json=event, headers={"Authorization": "Bearer writer-token-1"})
        assert r.status_code == 201
    assert log.count() == 1


def test_receiving_answers_errors_as_every_route_does(
        graph: Graph, log: SQLiteLog, monkeypatch: pytest.MonkeyPatch) -> None:
    # POST /api/v1/lineage is a plain Starlette route (api.routes.lineage); what it raises still gets
    # the application's handlers: a 401/403 above; a bug's 500 here, answered (not raised) with
    # the request id the user will quote, as every route's
    def broken(*_: Any, **__: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(ingest_routes, "parse", broken)
    app = create_app(Settings(), graph, log)
    with TestClient(app, base_url="http://localhost", client=LOCAL) as c:
        r = c.post("/api/v1/lineage", json=_events(1)[0], headers={"X-Request-ID": "hot-500"})
        assert r.status_code == 500 and r.json()["detail"] == "RuntimeError"
        assert r.headers["X-Request-ID"] == "hot-500"
        # the route is still described
        assert "/api/v1/lineage" in c.get("/openapi.json").json()["paths"]
    assert log.count() == 0


class _StuckLog(SQLiteLog):
    """A log whose appends wait for ``release`` (a disk that stops answering), or fail."""

    def __init__(self, path: Path, fail: bool = False) -> None:
        super().__init__(path)
        self.release = threading.Event()
        self.fail = fail

    def append_encoded(self, bodies: Any, checked: Checked = Checked.RECEIVED) -> list[int]:
        if self.fail:
            raise LogError("disk full")
        self.release.wait(10)
        return super().append_encoded(bodies, checked)


def test_a_log_that_fails_or_does_not_confirm_in_time_is_503_never_201(
        graph: Graph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ingest_routes, "LOG_APPEND_TIMEOUT_S", 0.3)
    event = _events(1)[0]
    with _client(graph, _StuckLog(tmp_path / "failing.db", fail=True)) as c:
        r = c.post("/api/v1/lineage", json=event)
        assert r.status_code == 503 and "nothing was accepted" in r.json()["detail"]
        assert r.headers["Retry-After"]
    stuck = _StuckLog(tmp_path / "stuck.db")
    with _client(graph, stuck) as c:
        r = c.post("/api/v1/lineage", json=event)
        assert r.status_code == 503 and "send the events again" in r.json()["detail"]
        stuck.release.set()  # the disk answers again: the same event, re-sent, is acknowledged
        r = c.post("/api/v1/lineage", json=event)
        assert r.status_code == 201 and r.json()["accepted"] == 1
    assert stuck.count() >= 1


def test_worker_holds_its_position_while_neo4j_is_down(graph: Graph, log: SQLiteLog) -> None:
    log.append(_events(3))
    dead = Graph(GraphDatabase.driver("bolt://127.0.0.1:1", auth=("neo4j", "x"), connection_timeout=1,
                                      max_transaction_retry_time=0.5), retry_time=0.5)
    with pytest.raises(DatabaseUnavailable):
        Worker(dead, log).run_once()
    assert log.position(CONSUMER) == 0
    assert Worker(graph, log).run_once().events == 3  # type: ignore[union-attr]
    assert log.position(CONSUMER) == 3


def test_worker_run_loop_backs_off_then_resumes(graph: Graph, log: SQLiteLog) -> None:
    log.append(_events(2))
    stop = threading.Event()
    seen: list[int] = []
    thread = threading.Thread(target=Worker(graph, log).run,
                              args=(stop, 0.05, lambda r: seen.append(r.events)))
    thread.start()
    deadline = time.monotonic() + 20
    while log.position(CONSUMER) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    log.append(_events(1, "later"))
    while log.position(CONSUMER) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    thread.join(timeout=10)
    assert seen == [2, 1] and not thread.is_alive()


def test_the_prefetching_run_loop_builds_the_graph_batch_after_batch_loads(graph: Graph, log: SQLiteLog,
                                                                          corpus: Path) -> None:
    marquez = json.loads((corpus / "MarquezProject__marquez/docker/metadata.json").read_text())
    log.append(marquez + _events(5) + marquez[:10])
    last = log.last_seq()
    while Worker(graph, log, batch=7).run_once():
        pass
    one_by_one = nodes(graph), edges(graph)
    wipe(graph)
    log.commit(CONSUMER, 0)
    stop = threading.Event()
    sizes: list[int] = []
    thread = threading.Thread(target=Worker(graph, log, batch=7).run,
                              args=(stop, 0.05, lambda r: sizes.append(r.events)))
    thread.start()
    deadline = time.monotonic() + 60
    while log.position(CONSUMER) < last and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    thread.join(timeout=20)
    assert sum(sizes) == last and len(sizes) == -(-last // 7)  # every batch once, in order
    assert (nodes(graph), edges(graph)) == one_by_one



def test_a_micro_batch_is_bounded_in_bytes_and_takes_a_large_event_alone(graph: Graph,
                                                                        log: SQLiteLog) -> None:
    small = _events(6, job="small")
    big = run_event("COMPLETE", new_run_id(), "big",
                    outputs=[dataset("wide", columns=[f"column_{i:04d}" for i in range(400)])])
    log.append(small[:3] + [big] + small[3:])
    sizes = [len(json.dumps(e)) for e in small]
    assert len(json.dumps(big)) > 3 * max(sizes)
    budget = sum(sizes[:3]) + 50  # room for three small events, not for the big one
    worker = Worker(graph, log, batch_bytes=budget)
    loaded = []
    while (result := worker.run_once()) is not None:
        loaded.append(result.events)
    assert loaded == [3, 1, 3]  # the big event alone: a batch always takes its first event
    assert log.position(CONSUMER) == log.last_seq()
    assert rows(graph, "MATCH (:Dataset {name: 'wide'})-[:HAS_COLUMN]->(c) RETURN count(c) AS n")[0]["n"] == 400
def test_an_event_neo4j_refuses_becomes_a_dead_letter_and_the_batch_goes_on(graph: Graph,
                                                                            log: SQLiteLog) -> None:
    # refused at the door today (ingest.limits.MAX_NAME_BYTES): as a log an earlier version wrote
    huge = run_event("COMPLETE", new_run_id(), "huge", outputs=[dataset("x" * 40_000)])
    log.append([_events(1, "before")[0], huge, _events(1, "after")[0]], checked=Checked.SCRUBBED)
    result = Worker(graph, log).run_once()
    assert result is not None and result.loaded == 2 and result.dead == 1
    [letter] = log.dead_letters()
    assert letter.seq == 2 and "could not be loaded" in letter.reason
    assert log.dead_letter_count() == 1
    assert log.position(CONSUMER) == 3
    assert retry_dead_letters(graph, log) == (0, 1)
    assert log.dead_letters()[0].retries == 1


def test_replay_rebuilds_the_same_graph_from_the_log_alone(graph: Graph, log: SQLiteLog,
                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           corpus: Path) -> None:
    from typer.testing import CliRunner

    from api.cli import app
    from graph.settings import get_settings

    marquez = json.loads((corpus / "MarquezProject__marquez/docker/metadata.json").read_text())
    log.append(marquez + _events(5))
    log.append(marquez[:10])  # re-sent events
    Worker(graph, log, batch=7).run_once()
    while Worker(graph, log, batch=7).run_once():
        pass
    before_nodes, before_edges = nodes(graph), edges(graph)
    wipe(graph)
    if not os.environ.get("NEO4J_URI"):
        s = server_settings()
        monkeypatch.setenv("LINEAGE_STATE_DIR", str(s.state_dir))
        monkeypatch.setenv("LINEAGE_NEO4J_BOLT_PORT", str(s.neo4j_bolt_port))
        monkeypatch.setenv("LINEAGE_NEO4J_HTTP_PORT", str(s.neo4j_http_port))
    monkeypatch.setenv("LINEAGE_LOG_FILE", str(log.path))
    get_settings.cache_clear()
    try:
        r = CliRunner().invoke(app, ["replay"])
        assert r.exit_code == 0, r.output
        assert nodes(graph) == before_nodes and edges(graph) == before_edges
        r = CliRunner().invoke(app, ["replay"])
        assert r.exit_code == 2 and "--wipe" in r.output
        r = CliRunner().invoke(app, ["export", str(tmp_path / "lake")])
        assert r.exit_code == 0, r.output
    finally:
        get_settings.cache_clear()
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "lake")
    assert table.num_rows == log.count()
    assert sorted(table.column("seq").to_pylist()) == list(range(1, log.count() + 1))
    assert any(p.name.startswith("date=") for p in (tmp_path / "lake").iterdir())


def test_metrics_and_readiness(api: TestClient, log: SQLiteLog, graph: Graph) -> None:
    api.post("/api/v1/lineage", json=_events(2))
    api.post("/api/v1/lineage", content=b"{", headers={"content-type": "application/json"})
    text = api.get("/metrics").text
    assert "lineage_events_accepted_total 2" in text
    assert 'lineage_events_rejected_total{reason="invalid_body"} 1' in text
    assert "lineage_worker_lag_events 2" in text
    Worker(graph, log).run_once()
    text = api.get("/metrics").text
    assert "lineage_worker_lag_events 0" in text and "lineage_worker_events_total 2" in text
    ready = api.get("/ready")
    assert ready.status_code == 200 and ready.json()["checks"] == {"log": True, "neo4j": True}
    assert ready.json()["warmed"] is False  # this app runs no warm-up (run_in_background off)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_openlineage_python_client_with_only_our_url(graph: Graph, log: SQLiteLog) -> None:
    import uvicorn
    from openlineage.client import OpenLineageClient
    from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
    from openlineage.client.transport.http import HttpConfig, HttpTransport

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(Settings(), graph, log), host="127.0.0.1",
                                           port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        client = OpenLineageClient(transport=HttpTransport(HttpConfig(url=f"http://127.0.0.1:{port}")))
        run_id = new_run_id()
        client.emit(RunEvent(eventType=RunState.START, eventTime="2024-06-01T00:00:00Z",
                             run=Run(runId=run_id), job=Job(namespace="pyclient", name="demo"),
                             producer="https://example.test/client"))
        client.emit(RunEvent(eventType=RunState.COMPLETE, eventTime="2024-06-01T00:01:00Z",
                             run=Run(runId=run_id), job=Job(namespace="pyclient", name="demo"),
                             producer="https://example.test/client"))
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    assert log.count() == 2
    Worker(graph, log).run_once()
    [run] = rows(graph, "MATCH (r:Run {runId: $id})-[:OF]->(j:Job) RETURN r.state AS s, j.name AS j",
                 id=run_id)
    assert run == {"s": "COMPLETE", "j": "demo"}


def test_acknowledged_events_survive_kill_9_of_the_api(tmp_path: Path) -> None:
    """Concurrent clients post to a real `lineage serve`; it is killed mid-load; every event it
    acknowledged is in the log afterwards."""
    port = _free_port()
    env = os.environ | {"LINEAGE_LOG_FILE": str(tmp_path / "events.db"), "LINEAGE_API_PORT": str(port)}
    if not os.environ.get("NEO4J_URI"):
        s = server_settings()
        env |= {"LINEAGE_STATE_DIR": str(s.state_dir), "LINEAGE_NEO4J_BOLT_PORT": str(s.neo4j_bolt_port),
                "LINEAGE_NEO4J_HTTP_PORT": str(s.neo4j_http_port)}
    proc = subprocess.Popen([sys.executable, "-m", "api.cli", "serve"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/api/v1/lineage"
    acked: list[str] = []
    lock = threading.Lock()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except OSError:
                time.sleep(0.1)

        def client(k: int) -> None:
            for i in range(400):
                event = _events(1, f"c{k}_{i}")[0]
                req = urllib.request.Request(url, data=json.dumps(event).encode(),
                                             headers={"content-type": "application/json"})
                try:
                    with urllib.request.urlopen(req, timeout=5) as r:
                        if r.status == 201:
                            with lock:
                                acked.append(event["run"]["runId"])
                except (OSError, urllib.error.HTTPError):
                    return

        threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        while len(acked) < 300 and any(t.is_alive() for t in threads):
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        for t in threads:
            t.join(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert len(acked) >= 300
    logged = {e.event["run"]["runId"] for e in SQLiteLog(tmp_path / "events.db").scan()}
    assert set(acked) <= logged


def test_spark_engine_loads_ndjson_and_exported_parquet_into_the_same_graph(
        graph: Graph, log: SQLiteLog, tmp_path: Path, corpus: Path) -> None:
    pytest.importorskip("pyspark")
    from ingest.export import export_parquet
    from ingest.pipeline import Ingester, IngestReport
    from ingest.read import read_file
    from ingest.spark.load import spark_ingest

    marquez = corpus / "MarquezProject__marquez/docker/metadata.json"
    shop = Path(__file__).parents[2] / "examples/events/shop.ndjson"
    Ingester(graph).ingest(read_file(marquez) + read_file(shop), IngestReport())
    expected_nodes, expected_edges = nodes(graph), edges(graph)
    wipe(graph)
    # the Marquez events go through the log and its Parquet export; the shop file is read as NDJSON
    log.append(json.loads(marquez.read_text()))
    export_parquet(log, tmp_path / "lake")
    s = server_settings() if not os.environ.get("NEO4J_URI") else Settings()
    report = spark_ingest(s, [str(tmp_path / "lake"), str(shop)], master="local[2]")
    assert report.read == log.count() + 28 and not report.rejected
    assert nodes(graph) == expected_nodes and edges(graph) == expected_edges


def test_per_event_limits_are_checked_at_the_door(graph: Graph, log: SQLiteLog) -> None:
    """What the API acknowledges must be loadable: names Neo4j's index can hold, and a bounded
    number of datasets and fields per event (ingest.limits)."""
    from ingest.limits import MAX_DATASETS, MAX_FIELDS, MAX_NAME_BYTES

    long_job = run_event("COMPLETE", new_run_id(), "j" * (MAX_NAME_BYTES + 1))
    many = run_event("COMPLETE", new_run_id(), "many",
                     inputs=[dataset(f"in_{i}") for i in range(MAX_DATASETS + 1)])
    wide = run_event("COMPLETE", new_run_id(), "wide", outputs=[dataset(
        "wide", columns=[f"c{i}" for i in range(MAX_FIELDS + 1)])])
    long_column = run_event("COMPLETE", new_run_id(), "col",
                            outputs=[dataset("t", columns=["c" * (MAX_NAME_BYTES + 1)])])
    fine = _events(1, "fine")[0]
    with _client(graph, log, limit=8 * 1024 * 1024) as api:
        r = api.post("/api/v1/lineage", json=[long_job, many, wide, long_column, fine])
    assert r.status_code == 201 and r.json()["accepted"] == 1, r.text
    reasons = {x["index"]: " ".join(x["reasons"]) for x in r.json()["rejected"]}
    assert f"over the limit of {MAX_NAME_BYTES} bytes" in reasons[0] and "job.name" in reasons[0]
    assert f"over the limit of {MAX_DATASETS} per event" in reasons[1]
    assert f"over the limit of {MAX_FIELDS} per event" in reasons[2]
    assert "schema.fields[0].name" in reasons[3] and "over the limit" in reasons[3]
    assert log.count() == 1


@pytest.mark.parametrize("ctype", ["application/json", "application/x-ndjson"])
def test_an_integer_too_long_to_read_is_400_not_500(api: TestClient, log: SQLiteLog,
                                                   ctype: str) -> None:
    body = json.dumps(_events(1)[0])[:-1] + ', "big": ' + "9" * 5000 + "}"
    r = api.post("/api/v1/lineage", content=body, headers={"content-type": ctype})
    assert r.status_code == 400 and "too long" in r.text, r.text
    assert log.count() == 0


def test_a_second_worker_on_one_log_is_refused(graph: Graph, tmp_path: Path) -> None:
    env = os.environ | {"LINEAGE_LOG_FILE": str(tmp_path / "events.db")}
    if not os.environ.get("NEO4J_URI"):
        s = server_settings()
        env |= {"LINEAGE_STATE_DIR": str(s.state_dir), "LINEAGE_NEO4J_BOLT_PORT": str(s.neo4j_bolt_port),
                "LINEAGE_NEO4J_HTTP_PORT": str(s.neo4j_http_port)}
    out = tmp_path / "first.log"
    with out.open("wb") as sink:
        first = subprocess.Popen([sys.executable, "-m", "api.cli", "worker"], env=env,
                                 stdout=sink, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while "consuming" not in out.read_text() and time.monotonic() < deadline:
            assert first.poll() is None, out.read_text()
            time.sleep(0.1)
        second = subprocess.run([sys.executable, "-m", "api.cli", "worker"], env=env,
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 1
        assert "already consumed by lineage worker pid" in second.stderr + second.stdout
        assert "one worker per log" in second.stderr + second.stdout
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=30)
    # the lock goes with its process: a worker starts again
    again = subprocess.run([sys.executable, "-m", "api.cli", "worker", "--once"], env=env,
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr


def test_bodies_take_turns_within_the_process_budget(graph: Graph, log: SQLiteLog) -> None:
    """While other bodies hold the whole budget, a request waits, then gets 503 with
    Retry-After (nothing logged); with room again it is taken."""
    from api.receive import BodyBudget

    with _client(graph, log) as api:
        services = api.app.state.context  # type: ignore[attr-defined]
        services.bodies = BodyBudget(4 * 1024 * 1024, wait=0.3)
        services.bodies.free = 0  # as if four bodies of the largest size were being read
        r = api.post("/api/v1/lineage", json=_events(1)[0])
        assert r.status_code == 503 and r.headers["retry-after"], r.text
        assert "send again" in r.json()["detail"] and log.count() == 0
        services.bodies.free = services.bodies.total
        assert api.post("/api/v1/lineage", json=_events(1)[0]).status_code == 201
        assert services.bodies.free == services.bodies.total  # given back after the request
