"""Questions and ingest at once: a crowd of hub readers while a burst of events comes in.

Sixteen clients ask the blast radius of hub tables over HTTP without pause while four producers
post a burst of events (arrays of 100) to the same `lineage serve`, which a `lineage worker`
loads. Measured both sides: how long until the burst is queryable (the worker's position past
its last event) and the readers' latency during it; with ``LINEAGE_API_MAX_QUESTIONS`` at 16
(every reader in Neo4j at once) and at its default 2, alternated.

Needs the bench graph loaded (``python -m bench.latency --datasets N --seed S``); the burst's
events are new daily runs of a 1,000-table stream (its first day, loaded before the measured
runs, makes the tables), in namespaces of their own, so that the graph the other benches check
against their ground truth is left as it was.

    python -m bench.readers --datasets 10000 --seed 7 --burst 20000 --runs 2
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

from bench.generate import NS, tables
from bench.generate import events as gen_events
from bench.hubs import pick_hubs
from bench.ingest import free_port, send, services_env, start_services
from bench.latency import bench_settings, emit, percentile
from bench.peer import renamed
from bench.wire import Connection, payloads
from graph.local_server import LocalServer
from ingest.log.sqlite import SQLiteLog

STREAM_TABLES = 1000  # a day of the stream: 2,000 events (a START and an end per table)


def one_run(settings: Any, tmp: Path, cap: int, hubs: list[str], burst: list[dict[str, Any]],
            readers: int) -> dict[str, Any]:
    """A fresh API and worker with ``cap`` questions at once; readers ask until the burst they
    see posted is queryable."""
    port = free_port()
    env = services_env(settings, tmp, port) | {"LINEAGE_API_MAX_QUESTIONS": str(cap),
                                               "LINEAGE_PLAN_KEEPER_SECONDS": "0",
                                               "LINEAGE_WARM_ON_START": "false"}
    procs = start_services(env, tmp, port)
    log = SQLiteLog(tmp / "events.db")
    stop = threading.Event()
    answers: list[tuple[float, float]] = []  # (when, seconds)
    lock = threading.Lock()

    def reader(k: int) -> None:
        conn = Connection("127.0.0.1", port, timeout=120)
        i = k
        while not stop.is_set():
            query = urllib.parse.urlencode({"namespace": NS, "name": hubs[i % len(hubs)]})
            t = time.perf_counter()
            status, _ = conn.request("GET", f"/api/v1/impact/dataset?{query}", None)
            with lock:
                answers.append((t, time.perf_counter() - t) if status == 200 else (t, -1.0))
            i += readers

    try:
        threads = [threading.Thread(target=reader, args=(k,)) for k in range(readers)]
        for t in threads:
            t.start()
        time.sleep(3.0)  # the readers in full swing
        started = time.perf_counter()
        send(f"http://127.0.0.1:{port}/api/v1/lineage", payloads(burst, 4, 100))
        acknowledged = time.perf_counter() - started
        last = log.last_seq()
        while log.position("neo4j") < last:
            time.sleep(0.05)
        queryable = time.perf_counter() - started
        stop.set()
        for t in threads:
            t.join()
    finally:
        for p in procs:
            p.terminate()
            p.wait(timeout=30)
    during = [s for at, s in answers if started <= at <= started + queryable and s >= 0]
    return {"max_questions": cap, "events": len(burst), "acknowledged_s": round(acknowledged, 2),
            "queryable_s": round(queryable, 2),
            "answers_during": len(during), "failed": sum(1 for _, s in answers if s < 0),
            "reader_p50_ms": round(statistics.median(during) * 1000, 1) if during else None,
            "reader_p95_ms": round(percentile(during, 95) * 1000, 1) if during else None}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--burst", type=int, default=20_000, help="events per measured burst")
    p.add_argument("--readers", type=int, default=16)
    p.add_argument("--runs", type=int, default=2, help="rounds of each cap, alternated")
    p.add_argument("--json", type=Path)
    a = p.parse_args()
    settings = bench_settings()
    hubs = pick_hubs(a.datasets, a.seed, 10)
    days = 1 + -(-a.burst // (2 * STREAM_TABLES)) * 2 * a.runs
    stream = renamed(list(gen_events(tables(STREAM_TABLES, seed=11), seed=11, days=days,
                                      starts=True)), "readers")
    first, rest = stream[:2 * STREAM_TABLES], stream[2 * STREAM_TABLES:]
    server = LocalServer(settings)
    server.start()
    runs = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        port = free_port()
        procs = start_services(services_env(settings, tmp, port), tmp, port)
        send(f"http://127.0.0.1:{port}/api/v1/lineage", payloads(first, 4, 100))
        log = SQLiteLog(tmp / "events.db")
        while log.position("neo4j") < log.last_seq():
            time.sleep(0.1)
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=30)
        for i in range(a.runs):
            for cap in (a.readers, 2):
                burst, rest = rest[:a.burst], rest[a.burst:]
                run = one_run(settings, tmp, cap, hubs, burst, a.readers)
                runs.append(run)
                print(f"round {i + 1}, {cap} questions at once: {run['events']} events queryable "
                      f"after {run['queryable_s']} s (acknowledged in {run['acknowledged_s']} s); "
                      f"readers p50 {run['reader_p50_ms']} ms, p95 {run['reader_p95_ms']} ms, "
                      f"{run['answers_during']} answers meanwhile", file=sys.stderr)
    server.stop()
    emit({"datasets": a.datasets, "seed": a.seed, "readers": a.readers, "runs": runs}, a.json)


if __name__ == "__main__":
    main()
