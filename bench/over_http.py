"""The ordinary questions over HTTP and in process, on the graph the bench Neo4j already holds.

Issue 22 asks for a p95 under 50 ms over HTTP for every ordinary question at L, and for the HTTP
path to cost within 2 ms of the same question asked in process. This bench starts a real ``lineage
serve`` on the bench Neo4j (with its warm-up, as a user gets it, and waits until it is done), then
asks each question of SAMPLES sampled nodes both ways, alternating which goes first, so that
neither always finds the other's pages cached. Hubs (the widest sources) are not ordinary
questions: ``--hubs N`` adds them as a question of their own (bench.hubs measures them in process
after a restart).

    python -m bench.ingest --spark 100000 --spark-only      # loads L into the bench Neo4j (11 min)
    python -m bench.over_http --datasets 100000 --seed 13 --json L-http.json

The graph must be the one ``tables(DATASETS, SEED)`` generates (bench.latency --keep, or bench.ingest
--spark N, which uses seed 13); a sampled node the graph lacks stops the bench.
"""

from __future__ import annotations

import argparse
import gc
import http.client
import random
import re
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from bench.generate import NS, tables
from bench.hubs import pick_hubs
from bench.ingest import free_port, services_env, start_services
from bench.latency import bench_settings, emit, percentile
from graph.db import Graph, connect
from graph.local_server import LocalServer
from impact.blast_radius import column_blast_radius, dataset_blast_radius
from impact.marquez.lineage import column_lineage, lineage
from impact.root_cause import root_cause_dataset
from impact.upstream import dataset_upstream
from impact.where import where

Ask = tuple[str, Callable[[], object]]  # the request's path and query, the same call in process


def questions(graph: Graph, datasets: int, seed: int, samples: int) -> dict[str, list[Ask]]:
    """Each ordinary question of SAMPLES nodes, as bench.latency samples them."""
    ts = tables(datasets, seed)
    rng = random.Random(seed)
    layer = {n: [t for t in ts if t.layer == n] for n in range(4)}
    sources = rng.sample(layer[0] + layer[1], samples)
    dashes = rng.sample(layer[3], samples)
    staging = rng.sample(layer[1], samples)
    cols = [(t.name, rng.choice(t.columns)) for t in rng.sample(layer[0], samples)]
    stg_cols = [(t.name, rng.choice(list(t.lineage))) for t in staging]
    q, ns = urllib.parse.quote, urllib.parse.quote(NS, safe="")

    def node(*parts: str) -> str:
        return q(":".join(parts), safe="")

    return {
        "blast radius, dataset, depth 20": [
            (f"/api/v1/impact/dataset?namespace={ns}&name={q(t.name)}&depth=20",
             partial(dataset_blast_radius, graph, NS, t.name, 20)) for t in sources],
        "blast radius, column, depth 20": [
            (f"/api/v1/impact/column?namespace={ns}&dataset={q(n)}&column={q(c)}&depth=20",
             partial(column_blast_radius, graph, NS, n, c, 20)) for n, c in cols],
        "upstream, dataset, depth 20": [
            (f"/api/v1/upstream/dataset?namespace={ns}&name={q(t.name)}&depth=20",
             partial(dataset_upstream, graph, NS, t.name, 20)) for t in dashes],
        "root cause, dataset, depth 20": [
            (f"/api/v1/root-cause/dataset?namespace={ns}&name={q(t.name)}&depth=20",
             partial(root_cause_dataset, graph, NS, t.name, 20)) for t in dashes],
        "GDPR where, column, depth 20": [
            (f"/api/v1/where?namespace={ns}&dataset={q(n)}&column={q(c)}&depth=20",
             partial(where, graph, NS, n, c, 20)) for n, c in cols],
        "Marquez-shaped lineage, depth 10": [
            (f"/api/v1/lineage?nodeId={node('dataset', NS, t.name)}&depth=10",
             partial(lineage, graph, f"dataset:{NS}:{t.name}", 10)) for t in staging],
        "Marquez-shaped column lineage (withDownstream), depth 10": [
            (f"/api/v1/column-lineage?nodeId={node('datasetField', NS, n, c)}&depth=10&withDownstream=true",
             partial(column_lineage, graph, f"datasetField:{NS}:{n}:{c}", 10, True))
            for n, c in stg_cols],
    }


def timed_get(conn: http.client.HTTPConnection, path: str) -> tuple[float, float, int]:
    """GET over a kept-alive connection: milliseconds until the whole body was read, the server's
    own milliseconds (its ``Server-Timing``), the body's size."""
    t = time.perf_counter()
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read()
    ms = (time.perf_counter() - t) * 1000
    if r.status != 200:
        raise SystemExit(f"GET {path}: {r.status} {body[:300]!r}")
    server = re.search(r"app;dur=([\d.]+)", r.headers.get("server-timing") or "")
    return ms, float(server.group(1)) if server else float("nan"), len(body)


def measure(conn: http.client.HTTPConnection, asks: list[Ask]) -> dict[str, Any]:
    http_, server, local, sizes = [], [], [], []
    for i, (path, call) in enumerate(asks):
        t = time.perf_counter()
        if i % 2:  # alternate which goes first
            call()
            local.append((time.perf_counter() - t) * 1000)
        ms, app_ms, size = timed_get(conn, path)
        http_.append(ms)
        server.append(app_ms)
        sizes.append(size)
        if not i % 2:
            t = time.perf_counter()
            call()
            local.append((time.perf_counter() - t) * 1000)
    median = statistics.median
    return {"n": len(http_), "http_p50_ms": median(http_), "http_p95_ms": percentile(http_, 95),
            "http_max_ms": max(http_), "in_process_p50_ms": median(local),
            "in_process_p95_ms": percentile(local, 95), "server_p50_ms": median(server),
            # per sample: the whole HTTP path, and the part of it outside the server's application
            "http_minus_in_process_p50_ms": median(h - w for h, w in zip(http_, local, strict=True)),
            "http_minus_server_p50_ms": median(h - a for h, a in zip(http_, server, strict=True)),
            "answer_kb_median": median(sizes) / 1024}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", type=int, default=1000, help="the size the graph was generated at")
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--samples", type=int, default=30)
    p.add_argument("--rounds", type=int, default=2, help="each question is asked this many times over")
    p.add_argument("--hubs", type=int, default=0,
                   help="also the blast radius of the N widest sources (hubs: not an ordinary question)")
    p.add_argument("--pagecache", help="Neo4j's page cache for this run (the bench's own otherwise); "
                   "stop the bench Neo4j first, as a running one keeps its own")
    p.add_argument("--json", type=Path)
    a = p.parse_args()
    settings = bench_settings()
    if a.pagecache:
        settings = settings.model_copy(update={"neo4j_pagecache": a.pagecache})
    server = LocalServer(settings)
    server.start()
    graph = Graph(connect(settings), timeout=settings.query_timeout)
    tmp = Path(tempfile.mkdtemp(prefix="lineage-bench-http-"))
    port = free_port()
    # the API only: no worker, nothing is posted
    procs = start_services(services_env(settings, tmp, port), tmp, port, ("serve",))
    t0 = time.perf_counter()
    while "warmed" not in (tmp / "serve.log").read_text() and time.perf_counter() - t0 < 600:
        time.sleep(0.5)
    print(f"lineage serve warmed Neo4j in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    results: dict[str, Any] = {"meta": {"datasets": a.datasets, "seed": a.seed, "samples": a.samples,
                                        "rounds": a.rounds, "heap": settings.neo4j_heap,
                                        "pagecache": settings.neo4j_pagecache}, "rounds": []}
    try:
        asks = questions(graph, a.datasets, a.seed, a.samples)
        if a.hubs:
            ns = urllib.parse.quote(NS, safe="")
            asks["blast radius, dataset, hubs, depth 20"] = [
                (f"/api/v1/impact/dataset?namespace={ns}&name={urllib.parse.quote(h)}&depth=20",
                 partial(dataset_blast_radius, graph, NS, h, 20))
                for h in pick_hubs(a.datasets, a.seed, a.hubs)]
        gc.collect()  # the generator's graph, gone before anything is timed
        gc.freeze()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        for r in range(a.rounds):
            row = {}
            for name, items in asks.items():
                row[name] = m = measure(conn, items)
                print(f"round {r} {name:56s} HTTP p50 {m['http_p50_ms']:6.1f} p95 {m['http_p95_ms']:6.1f} "
                      f"| in process p50 {m['in_process_p50_ms']:6.1f} p95 {m['in_process_p95_ms']:6.1f} "
                      f"| +{m['http_minus_in_process_p50_ms']:.1f} ms (outside the app "
                      f"{m['http_minus_server_p50_ms']:.1f}), {m['answer_kb_median']:.0f} KB",
                      file=sys.stderr)
            results["rounds"].append(row)
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=15)
        graph.close()
    emit(results, a.json)


if __name__ == "__main__":
    main()
