"""The workers on a Kafka log: events/s loaded into Neo4j by 1, 2 and 4 `lineage worker` processes
of one consumer group, against one worker on the SQLite log, in one run (ratios: these machines
are noisy).

Starts the bench Neo4j (its own state directory and ports) and a local Kafka broker (from Maven
Central, under the bench state directory), then for each setting: a fresh graph, WORKER_EVENTS
generated events (bench.generate: daily runs of TABLES jobs, with schemas and column lineage)
put in the log first, then the workers started and timed until they have loaded everything.
The graph each setting builds is compared (node and relationship counts) with the SQLite one's.

    python -m bench.kafka                          # 20,000 events; 1, 2, 4 workers; 8 partitions
    python -m bench.kafka --events 50000 --workers 1 2 4 8
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.generate import events as gen_events
from bench.generate import tables
from bench.ingest import fresh_store, machine_speed
from bench.latency import bench_settings, emit
from graph.db import Graph, connect
from graph.local_server import LocalServer
from graph.schema import apply_schema
from graph.settings import Settings
from ingest.log.kafka import KafkaAddress, KafkaLog, create_topics, group_lag
from ingest.log.kafka_broker import LocalBroker
from ingest.log.sqlite import SQLiteLog
from ingest.worker import CONSUMER


def _env(settings: Settings, log: str, tmp: Path) -> dict[str, str]:
    return os.environ | {"LINEAGE_STATE_DIR": str(settings.state_dir),
                         "LINEAGE_NEO4J_BOLT_PORT": str(settings.neo4j_bolt_port),
                         "LINEAGE_NEO4J_HTTP_PORT": str(settings.neo4j_http_port),
                         "LINEAGE_LOG": log, "LINEAGE_LOG_FILE": str(tmp / "events.db"),
                         "LINEAGE_WORKER_POLL": "0.05", "LINEAGE_WORKER_NICE": "0"}


def _counts(graph: Graph) -> tuple[int, int]:
    with graph.driver.session() as s:
        nodes = s.run("MATCH (n) RETURN count(n) AS c").single()
        edges = s.run("MATCH ()-[r]->() RETURN count(r) AS c").single()
    return (nodes["c"] if nodes else 0, edges["c"] if edges else 0)


def _workers(env: dict[str, str], tmp: Path, count: int) -> list[subprocess.Popen[bytes]]:
    procs = []
    for i in range(count):
        with (tmp / f"worker-{i}.log").open("wb") as out:
            procs.append(subprocess.Popen([sys.executable, "-m", "api.cli", "worker"], env=env,
                                          stdout=out, stderr=subprocess.STDOUT))
    return procs


def _consuming(tmp: Path, count: int) -> None:
    """Wait until each worker logged that it consumes."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if all("consuming " in (tmp / f"worker-{i}.log").read_text("utf-8", "replace")
               for i in range(count)):
            return
        time.sleep(0.1)
    raise RuntimeError(f"the workers did not start; see {tmp}")


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait(timeout=60)


def _round(a: argparse.Namespace, settings: Settings, server: LocalServer, events: list[dict[str, Any]],
           tmp: Path, log: str, workers: int) -> dict[str, Any]:
    """One setting on a fresh store: the events put in the log, then the workers timed."""
    fresh_store(server)
    server.start()
    graph = Graph(connect(settings))
    try:
        apply_schema(graph)
        env = _env(settings, log, tmp)
        # the workers start first, on an empty log (their start-up is not timed), then the events
        # are put in the log at once and the clock runs until the last is loaded
        if log == "sqlite":
            (tmp / "events.db").unlink(missing_ok=True)
            sqlite = SQLiteLog(tmp / "events.db")
            procs = _workers(env, tmp, 1)
            _consuming(tmp, 1)
            t0 = time.perf_counter()
            sqlite.append(events)
            last = sqlite.last_seq()
            while sqlite.position(CONSUMER) < last:
                time.sleep(0.05)
            took = time.perf_counter() - t0
            sqlite.close()
        else:
            address = KafkaAddress.parse(log)
            create_topics(address, a.partitions)
            procs = _workers(env, tmp, workers)
            _consuming(tmp, workers)
            time.sleep(3)  # the group's first assignment
            t0 = time.perf_counter()
            producer = KafkaLog(address)
            for start in range(0, len(events), 1000):
                producer.append(events[start:start + 1000])
            producer.close()
            while group_lag(address) > 0:
                time.sleep(0.1)
            took = time.perf_counter() - t0
        _stop(procs)
        logs = [(tmp / f"worker-{i}.log").read_text("utf-8", "replace") for i in range(len(procs))]
        # writes Neo4j failed as transient (deadlocks between the workers) and retried (graph.db)
        retries = sum(text.count("; retrying") for text in logs)
        deadlocks = sum(text.count("DeadlockDetected") for text in logs)
        nodes, edges = _counts(graph)
        result = {"log": "sqlite" if log == "sqlite" else "kafka", "workers": workers,
                  "events": len(events), "seconds": round(took, 2),
                  "per_s": round(len(events) / took, 1), "nodes": nodes, "relationships": edges,
                  "write_retries": retries, "deadlocks": deadlocks}
        print(result, file=sys.stderr)
        return result
    finally:
        graph.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=20_000)
    p.add_argument("--tables", type=int, default=1000)
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument("--partitions", type=int, default=8)
    p.add_argument("--json", type=Path)
    a = p.parse_args()

    settings = bench_settings()
    broker_settings = Settings(state_dir=settings.state_dir, kafka_port=29092,
                               kafka_controller_port=29093)
    broker = LocalBroker(broker_settings)
    broker.start()
    server = LocalServer(settings)
    events = []
    days = -(-a.events // (2 * a.tables))  # each table's job runs daily: a START and an end
    for e in gen_events(tables(a.tables, seed=21), seed=21, days=days, starts=True):
        events.append(e)
        if len(events) >= a.events:
            break
    tmp = Path(tempfile.mkdtemp(prefix="lineage-bench-kafka-"))
    results: dict[str, Any] = {"machine": f"{os.cpu_count()} cores",
                               "machine_ms_before": machine_speed(), "rounds": []}
    try:
        results["rounds"].append(_round(a, settings, server, events, tmp, "sqlite", 1))
        for n in a.workers:
            topic = f"kafka://{broker.bootstrap}/bench-{uuid.uuid4().hex[:8]}"
            results["rounds"].append(_round(a, settings, server, events, tmp, topic, n))
    finally:
        server.stop()
        broker.stop()
    results["machine_ms_after"] = machine_speed()
    base = results["rounds"][0]["per_s"]
    for r in results["rounds"]:
        r["vs_sqlite_worker"] = round(r["per_s"] / base, 2)
    emit(results, a.json)


if __name__ == "__main__":
    main()
