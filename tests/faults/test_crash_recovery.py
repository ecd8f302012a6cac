"""Crash recovery, scripted and bounded in time, on loopback only.

Concurrent clients post LINEAGE_FAULT_EVENTS (default 3,000) events to a real `lineage serve`
while a real `lineage worker` loads them into the test process's Neo4j (tests/conftest.py; running
again after each test). During the load we kill -9 the API, then the worker, then Neo4j, and start
each again. Clients behave like OpenLineage producers with retries: a batch is re-sent until it is
acknowledged. Afterwards the graph must equal the
graph of a clean load of the same events (every node and edge with its key properties, and every
run's state), and every acknowledged event must be in it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest

from graph.db import Graph
from graph.local_server import LocalServer
from graph.schema import apply_schema
from ingest.log.sqlite import SQLiteLog
from ingest.pipeline import Ingester, IngestReport
from ingest.read import RawItem
from tests.conftest import wipe
from tests.faults.conftest import services_env
from tests.helpers import edges, free_port, nodes, rows

pytestmark = [pytest.mark.integration, pytest.mark.faults]

EVENTS = int(os.environ.get("LINEAGE_FAULT_EVENTS", "3000"))
BATCH = 25
CLIENTS = 4


def _events(n: int) -> list[dict[str, Any]]:
    """Small realistic events: 300 jobs over 1,000 datasets, schemas and column lineage."""
    out = []
    for i in range(n):
        src, dst = f"public.t{i % 1000:04d}", f"public.t{(i * 7 + 1) % 1000:04d}"
        out.append({
            "eventType": "COMPLETE" if i % 10 else "FAIL", "eventTime": f"2024-06-{1 + i % 28:02d}T02:00:00Z",
            "producer": "https://example.test/faults", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json",
            "run": {"runId": str(uuid.UUID(int=i + 1, version=4)), "facets": {}},
            "job": {"namespace": "faults", "name": f"job_{i % 300}", "facets": {}},
            "inputs": [{"namespace": "pg://db:5432", "name": src}],
            "outputs": [{"namespace": "pg://db:5432", "name": dst, "facets": {
                "schema": {"fields": [{"name": c, "type": "BIGINT"} for c in ("id", "amount", "ts")]},
                "columnLineage": {"fields": {c: {"inputFields": [
                    {"namespace": "pg://db:5432", "name": src, "field": c,
                     "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}]}]}
                    for c in ("id", "amount")}}}}]})
    return out


def _graph_state(graph: Graph) -> tuple[set[Any], set[Any], set[Any]]:
    runs = {(r["id"], r["state"]) for r in rows(graph, "MATCH (r:Run) RETURN r.runId AS id, r.state AS state")}
    return nodes(graph), edges(graph), runs


class Proc:
    def __init__(self, args: list[str], env: dict[str, str], log: Path) -> None:
        self.args, self.env, self.log = args, env, log
        self.p: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.p = subprocess.Popen([sys.executable, "-m", "api.cli", *self.args], env=self.env,
                                      stdout=out, stderr=subprocess.STDOUT)

    def kill9(self) -> None:
        assert self.p is not None
        os.kill(self.p.pid, signal.SIGKILL)
        self.p.wait()

    def stop(self) -> None:
        if self.p and self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.p.kill()


def test_kill_9_of_api_worker_and_neo4j_loses_nothing(server: LocalServer, session_graph: Graph,
                                                        tmp_path: Path) -> None:
    graph = session_graph
    log_path = tmp_path / "events.db"
    api_port = free_port()
    env = services_env(server, log_path, api_port)
    api = Proc(["serve"], env, tmp_path / "api.log")
    worker = Proc(["worker"], env, tmp_path / "worker.log")
    events = _events(EVENTS)
    batches = [events[i:i + BATCH] for i in range(0, len(events), BATCH)]
    acked: list[int] = []
    lock = threading.Lock()
    url = f"http://127.0.0.1:{api_port}/api/v1/lineage"
    deadline = time.monotonic() + 600
    try:
        apply_schema(graph)
        wipe(graph)
        api.start()
        worker.start()

        def client(k: int) -> None:
            for b in range(k, len(batches), CLIENTS):
                body = json.dumps(batches[b]).encode()
                while time.monotonic() < deadline:  # re-send until acknowledged, like a producer
                    try:
                        req = urllib.request.Request(url, data=body, headers={"content-type": "application/json"})
                        with urllib.request.urlopen(req, timeout=10) as r:
                            if r.status == 201:
                                with lock:
                                    acked.append(b)
                                break
                    except OSError:
                        time.sleep(0.2)

        threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
        for t in threads:
            t.start()

        def wait_acked(fraction: float) -> None:
            while len(acked) < fraction * len(batches) and time.monotonic() < deadline:
                time.sleep(0.05)

        log = SQLiteLog(log_path)
        wait_acked(0.25)
        api.kill9()
        time.sleep(0.5)
        api.start()
        wait_acked(0.5)
        while log.position("neo4j") == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        worker.kill9()
        time.sleep(0.5)
        worker.start()
        # the restarted worker must be consuming before Neo4j dies (else it would start Neo4j itself)
        while worker.log.read_text().count("consuming /") < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        wait_acked(0.75)
        neo4j_pid = int(server.pid_file.read_text())
        os.kill(neo4j_pid, signal.SIGKILL)
        time.sleep(1)
        assert server.status().state == "crashed"
        time.sleep(2)  # the worker backs off and the API keeps accepting while Neo4j is down
        server.start()
        for t in threads:
            t.join(timeout=max(1.0, deadline - time.monotonic()))
        assert sorted(acked) == list(range(len(batches))), "clients gave up before every batch was acked"
        last = log.last_seq()
        while log.position("neo4j") < last and time.monotonic() < deadline:
            time.sleep(0.2)
        assert log.position("neo4j") >= last, f"worker stuck at {log.position('neo4j')} of {last}"
        assert log.dead_letter_count() == 0  # Neo4j being away is no fault of an event
        assert log.count() >= len(events)  # re-sent batches may be logged twice; never fewer
        after_faults = _graph_state(graph)
        run_ids = {r for r, _ in after_faults[2]}
        assert {e["run"]["runId"] for e in events} <= run_ids   # every acknowledged event is in

        wipe(graph)
        # in the worker's backlog batches: any batching gives the same graph (docs/graph-model.md)
        Ingester(graph, batch_size=5000).ingest([RawItem(f"e{i}", obj=e) for i, e in enumerate(events)],
                                                 IngestReport())
        clean = _graph_state(graph)
        assert len(after_faults[0]) == len(clean[0]) and len(after_faults[1]) == len(clean[1])
        assert after_faults == clean
    finally:
        api.stop()
        worker.stop()


def test_events_posted_while_neo4j_is_stopped_load_when_it_is_back(
        server: LocalServer, session_graph: Graph, tmp_path: Path) -> None:
    """`lineage neo4j stop`, events acknowledged meanwhile, `lineage neo4j start`: the worker
    loads them by itself, none dead-lettered (they were once, as timed-out queries)."""
    graph = session_graph
    wipe(graph)
    api_port = free_port()
    env = services_env(server, tmp_path / "events.db", api_port)
    api = Proc(["serve"], env, tmp_path / "api.log")
    worker = Proc(["worker"], env, tmp_path / "worker.log")
    log = SQLiteLog(tmp_path / "events.db")
    try:
        apply_schema(graph)
        api.start()
        worker.start()
        while "consuming /" not in worker.log.read_text():
            time.sleep(0.1)
        # the API too must be up (it applies the schema as it starts) before Neo4j goes away
        for _ in range(300):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{api_port}/health", timeout=2):
                    break
            except OSError:
                time.sleep(0.1)
        server.stop()
        body = json.dumps(_events(2)).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{api_port}/api/v1/lineage", data=body,
                                     headers={"content-type": "application/json"})
        for _ in range(100):
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    assert r.status == 201
                    break
            except OSError:
                time.sleep(0.2)  # the API is still starting
        time.sleep(3)  # the worker backs off while Neo4j is away
        server.start()
        deadline = time.monotonic() + 180
        while log.position("neo4j") < log.last_seq() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert log.position("neo4j") == log.last_seq() == 2, worker.log.read_text()[-3000:]
        assert log.dead_letter_count() == 0
        assert {r["name"] for r in rows(graph, "MATCH (j:Job) RETURN j.name AS name")} == {
            "job_0", "job_1"}
    finally:
        api.stop()
        worker.stop()
