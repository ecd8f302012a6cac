"""End-to-end ingest: HTTP clients -> durable log -> worker -> queryable in Neo4j.

Starts a dedicated Neo4j (the bench one: its own state directory and ports), a `lineage serve` and a
`lineage worker` (real processes), then measures on generated, realistic events from
bench.generate: TABLES jobs, each running once a day (a START and a COMPLETE/FAIL event per run,
with schemas and column lineage, ~2 KB on average), day after day, in event-time order:

1. throughput: CLIENTS concurrent clients post EVENTS events (one event per request over a
   kept-alive connection, as OpenLineage's Python client does; --per-request N sends JSON arrays
   of N), and we time acceptance and the moment the worker has loaded them all;
2. lag: one client posts at a fixed RATE events/s for SECONDS; for every acknowledged event we take
   the time from its acknowledgement until the worker's committed position covers it;
3. the worker alone: WORKER_EVENTS events appended straight to the log, timed until loaded;
4. optionally (--spark N) the Spark bulk path: N events from a file with `lineage ingest --engine spark`.

    python -m bench.ingest                      # 30,000 events, 4 clients; 500 events/s for 20 s
    python -m bench.ingest --per-request 100    # the same, 100 events per request
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from bench.generate import JOB_NS, NS, tables
from bench.generate import events as gen_events
from bench.latency import bench_settings, emit, percentile
from bench.wire import Connection, payloads
from graph.db import Graph, connect
from graph.local_server import LocalServer
from graph.schema import apply_schema
from graph.settings import Settings
from ingest.log.sqlite import SQLiteLog


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_conn = threading.local()


def _post(url: str, event: dict[str, Any] | list[dict[str, Any]] | bytes) -> int:
    """POST over one kept-alive connection per thread, as OpenLineage's Python client does (it
    keeps a requests Session); ``event`` may come encoded already. Returns the log sequence
    number of the last event."""
    where = urllib.parse.urlsplit(url)
    conn = getattr(_conn, "http", None)
    if conn is None:
        conn = _conn.http = Connection(where.hostname or "127.0.0.1", where.port or 80, timeout=30)
    body = event if isinstance(event, bytes) else json.dumps(event).encode()
    status, data = conn.request("POST", where.path, body)
    if status != 201:
        raise RuntimeError(f"POST {url}: {status} {data[:300]!r}")
    return int(json.loads(data)["last_seq"])


def _lag(url: str, log: SQLiteLog, batch: list[dict[str, Any]], rate: int) -> dict[str, Any]:
    """Post ``batch`` at ``rate`` events/s; for each event, ack -> covered by the worker's position."""
    acks: list[tuple[int, float]] = []
    seen: list[tuple[float, int]] = []
    stop = threading.Event()
    lock = threading.Lock()

    def watch() -> None:
        while not stop.is_set():
            seen.append((time.perf_counter(), log.position("neo4j")))
            time.sleep(0.02)

    start = time.perf_counter()

    def sender(k: int, n: int) -> None:
        for i in range(k, len(batch), n):
            due = start + i / rate
            now = time.perf_counter()
            if due > now:
                time.sleep(due - now)
            seq = _post(url, batch[i])
            with lock:
                acks.append((seq, time.perf_counter()))

    watcher = threading.Thread(target=watch)
    watcher.start()
    together(lambda k: sender(k, 8), 8)
    sent_s = time.perf_counter() - start
    _drain(log)
    time.sleep(0.1)
    stop.set()
    watcher.join()
    lags, j = [], 0
    for seq, acked in sorted(acks):
        while j < len(seen) and seen[j][1] < seq:
            j += 1
        if j < len(seen):
            lags.append(max(0.0, seen[j][0] - acked))
    return {"target_rate": rate, "achieved_rate": len(batch) / sent_s, "events": len(batch),
            "p50_s": statistics.median(lags), "p95_s": percentile(lags, 95), "max_s": max(lags)}


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# Neo4j's threads by what they do (Linux thread names, digits dropped)
_JVM_THREADS = (("query execution (Bolt workers)", "neoNj.BoltWorke"),
                ("JIT compiler", "CN CompilerThre"), ("garbage collector", "GC Thread#N"))


def _jvm_thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds of a JVM's threads so far, grouped as _JVM_THREADS (the rest: "other")."""
    found: dict[str, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:  # the thread ended
            continue
        name = re.sub(r"[0-9]+", "N", stat.split("(", 1)[1].rsplit(")", 1)[0])
        fields = stat.rsplit(")", 1)[1].split()
        group = next((g for g, prefix in _JVM_THREADS if name.startswith(prefix)), "other")
        found[group] = found.get(group, 0.0) + (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return found


def together(work: Callable[[int], object], n: int) -> None:
    """Run ``work(0)`` .. ``work(n - 1)`` in n threads and wait for all of them."""
    threads = [threading.Thread(target=work, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def send(url: str, bodies: list[list[bytes]]) -> None:
    """Post each client's bodies (``bodies[k]``) from a thread of its own, all clients at once."""

    def client(k: int) -> None:
        for body in bodies[k]:
            _post(url, body)

    together(client, len(bodies))


def _drain(log: SQLiteLog) -> None:
    """Wait until the worker's committed position covers everything in the log now."""
    last = log.last_seq()
    while log.position("neo4j") < last:
        time.sleep(0.05)


def _warm_up(a: argparse.Namespace, url: str, log: SQLiteLog) -> dict[str, Any]:
    """Small batches for ``a.warmup_seconds``, then one burst of the measured shape (a.events
    by a.clients clients, a.per_request per request): the worker's batches of a backlog are
    larger than a steady stream's, and with only small ones before, Neo4j's JIT compiler would
    compile for them during the measurement."""
    warm_iter = iter(gen_events(tables(a.tables, seed=99), seed=99, days=100, starts=True))

    def warm(n: int) -> list[dict[str, Any]]:
        return [json.loads(json.dumps(e).replace(NS, "warehouse://warmup:5432")
                           .replace(f'"namespace": "{JOB_NS}"', '"namespace": "warmup"'))
                for e in itertools.islice(warm_iter, n)]

    sent, t_warm = 0, time.perf_counter()
    while time.perf_counter() - t_warm < a.warmup_seconds:
        chunk = warm(2000)
        if not chunk:
            break
        for i in range(0, len(chunk), 100):
            _post(url, chunk[i:i + 100])
        _drain(log)
        sent += len(chunk)
    events = warm(a.events)
    burst = payloads(events, a.clients, a.per_request)
    send(url, burst)
    _drain(log)
    return {"events": sent, "burst": len(events), "seconds": round(time.perf_counter() - t_warm, 1)}


def fresh_store(server: LocalServer) -> None:
    """Stop the bench Neo4j and delete its store: deleting a previous graph through Cypher leaves
    Neo4j busy for minutes (seen: the first batches 3-5x slower after wiping 100k events)."""
    server.stop()
    for part in ("databases", "transactions"):
        shutil.rmtree(server.settings.state_dir / "neo4j" / "data" / part, ignore_errors=True)


def services_env(settings: Settings, tmp: Path, port: int) -> dict[str, str]:
    """The environment of a `lineage serve` and `lineage worker` on the bench Neo4j, with their
    event log in ``tmp`` and the API on ``port``."""
    return os.environ | {"LINEAGE_STATE_DIR": str(settings.state_dir),
                         "LINEAGE_NEO4J_BOLT_PORT": str(settings.neo4j_bolt_port),
                         "LINEAGE_NEO4J_HTTP_PORT": str(settings.neo4j_http_port),
                         "LINEAGE_LOG_FILE": str(tmp / "events.db"), "LINEAGE_API_PORT": str(port),
                         "LINEAGE_WORKER_POLL": "0.05"}


class _Scraper:
    """GETs ``url`` every ``every`` seconds on a thread, as Prometheus would; ``stop`` says how
    many scrapes there were and how many new measures of lineage health they saw."""

    def __init__(self, url: str, every: float) -> None:
        self.url, self.every = url, every
        self.done = threading.Event()
        self.scrapes, self.measures, self._last = 0, 0, ""
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.done.wait(self.every):
            with urllib.request.urlopen(self.url, timeout=30) as r:
                text = r.read().decode()
            self.scrapes += 1
            took = re.search(r"^lineage_health_measure_seconds (\S+)$", text, re.M)
            if took and took.group(1) != self._last:  # a new measure (its time differs)
                self.measures += 1
                self._last = took.group(1)

    def stop(self) -> dict[str, int]:
        self.done.set()
        self.thread.join(timeout=60)
        return {"scrapes": self.scrapes, "new_measures_seen": self.measures}


def start_services(env: dict[str, str], tmp: Path, port: int,
                   commands: tuple[str, ...] = ("serve", "worker"),
                   cwd: Path | None = None) -> list[subprocess.Popen[bytes]]:
    """`lineage serve` and `lineage worker` (or only ``commands``) as processes (logs in ``tmp``),
    once /health answers; ``cwd``: the checkout whose code they run (this one by default)."""
    procs = []
    for cmd in commands:
        with (tmp / f"{cmd}.log").open("wb") as out:
            procs.append(subprocess.Popen([sys.executable, "-m", "api.cli", cmd], env=env, stdout=out,
                                          stderr=subprocess.STDOUT, cwd=cwd))
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
            break
        except OSError:
            time.sleep(0.1)
    return procs


def _http(a: argparse.Namespace, env: dict[str, str], tmp: Path, port: int, neo4j_pid: int,
          results: dict[str, Any]) -> None:
    """Parts 1 and 2: a real API and worker, fed over HTTP."""
    procs = start_services(env, tmp, port)
    url = f"http://127.0.0.1:{port}/api/v1/lineage"
    log = SQLiteLog(tmp / "events.db")
    try:
        total = a.events + (a.rate + max(1, a.rate // 5)) * a.seconds + a.worker_events
        days = -(-total // (2 * a.tables))
        evs = list(gen_events(tables(a.tables, seed=11), seed=11, days=days, starts=True))
        size = statistics.mean(len(json.dumps(e)) for e in evs)
        results["event_bytes_mean"] = round(size)
        results["stream"] = {"tables": a.tables, "days": days, "events": len(evs),
                             "kinds": "START + COMPLETE/FAIL per daily run"}

        # 0. warm-up: the JVM compiles Neo4j's hot paths and the queries get planned. Measured
        # on this machine: for the first minute of load, Neo4j's JIT compiler threads used 40-55%
        # of its CPU (the first batches of a cold server took 7-15 s); a long-running server has
        # that behind it. The warm-up lineage lives in other namespaces and stays (deleting it
        # left Neo4j busy and the next batches 2x slower).
        if a.warmup_seconds > 0:
            results["warmup"] = _warm_up(a, url, log)
        # a Prometheus: /metrics scraped every --scrape seconds from here on, so that the API
        # measures lineage health each LINEAGE_HEALTH_INTERVAL (docs/health.md)
        scraper = _Scraper(f"http://127.0.0.1:{port}/metrics", a.scrape) if a.scrape else None
        # 1. throughput with concurrent clients
        first = evs[:a.events]
        bodies = payloads(first, a.clients, a.per_request)  # encoded before the clock starts
        speed = machine_speed()
        pids = {"api": procs[0].pid, "worker": procs[1].pid, "neo4j": neo4j_pid}
        cpu0 = {k: _cpu_seconds(pid) for k, pid in pids.items()} | {"clients": time.process_time()}
        jvm0 = _jvm_thread_cpu(neo4j_pid)
        t0 = time.perf_counter()

        send(url, bodies)
        accepted_s = time.perf_counter() - t0
        _drain(log)
        loaded_s = time.perf_counter() - t0
        cpu1 = {k: _cpu_seconds(pid) for k, pid in pids.items()} | {"clients": time.process_time()}
        jvm1 = _jvm_thread_cpu(neo4j_pid)
        results["throughput"] = {"events": a.events, "clients": a.clients, "per_request": a.per_request,
                                 "accepted_per_s": a.events / accepted_s,
                                 "end_to_end_per_s": a.events / loaded_s, "seconds": loaded_s,
                                 # the same loop's CPU just before and after: a slower machine
                                 # shows as larger numbers (see machine_speed)
                                 "machine_speed_ms": [speed, machine_speed()],
                                 # where the 2 cores went: CPU time of each process per event
                                 "cpu_us_per_event": {k: round((cpu1[k] - cpu0[k]) / a.events * 1e6)
                                                      for k in cpu0},
                                 # and Neo4j's share by thread: is it running queries or compiling?
                                 "neo4j_cpu_us_per_event": {
                                     k: round((v - jvm0.get(k, 0.0)) / a.events * 1e6)
                                     for k, v in sorted(jvm1.items())}}
        print(json.dumps(results["throughput"]), file=sys.stderr)

        # 2. lag at fixed rates (senders in parallel so the rate is what we ask for)
        rest = evs[a.events:]
        results["lag"] = []
        for rate in (a.rate, max(1, a.rate // 5)):
            count = min(len(rest), rate * a.seconds)
            batch, rest = rest[:count], rest[count:]
            results["lag"].append(_lag(url, log, batch, rate))
            print(json.dumps(results["lag"][-1]), file=sys.stderr)

        # 3. the worker alone: events appended straight to the log (no HTTP), time to load them
        if a.worker_events:
            alone = rest[:a.worker_events]
            t0 = time.perf_counter()
            log.append(alone)
            _drain(log)
            took = time.perf_counter() - t0
            results["worker_alone"] = {"events": len(alone), "seconds": took,
                                       "per_s": len(alone) / took}
            print(json.dumps(results["worker_alone"]), file=sys.stderr)
        if scraper is not None:
            results["scrapes"] = scraper.stop()
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=15)



def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=30_000)
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--tables", type=int, default=1000, help="jobs (one output table each) in the stream")
    p.add_argument("--per-request", type=int, default=1, help="events per request in the throughput test")
    p.add_argument("--rate", type=int, default=500)
    p.add_argument("--seconds", type=int, default=20)
    p.add_argument("--worker-events", type=int, default=10_000,
                   help="events appended straight to the log to time the worker alone (0: skip)")
    p.add_argument("--spark", type=int, default=0, help="also time a Spark bulk load of this many events")
    p.add_argument("--spark-only", action="store_true", help="skip the HTTP parts")
    p.add_argument("--warmup-seconds", type=float, default=90,
                   help="load other events for this long, then one burst of the measured shape, "
                        "before measuring, so that Neo4j's JIT compiler has done its work, as on a "
                        "long-running server (0: no warm-up)")
    p.add_argument("--keep-store", action="store_true",
                   help="wipe the bench graph instead of starting from an empty store")
    p.add_argument("--scrape", type=float, default=0,
                   help="GET /metrics every this many seconds while measuring, as Prometheus "
                        "would (0: no scrapes): the API then measures lineage health every "
                        "LINEAGE_HEALTH_INTERVAL seconds")
    p.add_argument("--json", type=Path, help="also write the results here")
    a = p.parse_args()

    settings = bench_settings()
    server = LocalServer(settings)
    if not a.keep_store:
        fresh_store(server)
    server.start()
    graph = Graph(connect(settings))
    try:
        results = _measure(a, settings, server, graph)
    finally:
        # the store stays (bench.latency --keep asks the graph loaded here); its 2 GiB server
        # does not outlive the bench
        graph.close()
        server.stop()
    emit(results, a.json)


def _measure(a: argparse.Namespace, settings: Settings, server: LocalServer, graph: Graph
             ) -> dict[str, Any]:
    apply_schema(graph)
    graph.run_statements("admin/wipe")
    tmp = Path(tempfile.mkdtemp(prefix="lineage-bench-ingest-"))
    try:
        results = _parts(a, settings, tmp, cast(int, server.status().pid), graph)
    except BaseException:
        print(f"the event log and the services' logs are kept in {tmp}", file=sys.stderr)
        raise
    shutil.rmtree(tmp, ignore_errors=True)  # its event log alone is ~200 MB
    return results


def machine_speed() -> float:
    """Milliseconds of CPU a fixed pure-Python loop takes (best of 5): these machines' speed
    drifts by half within minutes, so each run says how fast the machine was around it."""
    best = float("inf")
    for _ in range(5):
        t, x = time.process_time(), 0
        for i in range(2_000_000):
            x += i % 7
        best = min(best, time.process_time() - t)
    return round(best * 1000, 1)


def _parts(a: argparse.Namespace, settings: Settings, tmp: Path, neo4j_pid: int, graph: Graph
           ) -> dict[str, Any]:
    port = free_port()
    env = services_env(settings, tmp, port)
    results: dict[str, Any] = {"machine": f"{os.cpu_count()} cores"}
    if not a.spark_only:
        _http(a, env, tmp, port, neo4j_pid, results)
    if a.spark:
        graph.run_statements("admin/wipe")
        path = tmp / "spark.ndjson"
        with path.open("w") as f:
            for e in gen_events(tables(a.spark, seed=13), seed=13):
                f.write(json.dumps(e) + "\n")
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "api.cli", "ingest", "--engine", "spark", str(path)],
                              env=env, capture_output=True, text=True)
        took = time.perf_counter() - t0
        results["spark"] = {"events": a.spark, "seconds": took, "per_s": a.spark / took,
                            "output": done.stdout.strip()[-300:]}
        print(json.dumps(results["spark"]), file=sys.stderr)
    return results


if __name__ == "__main__":
    main()
