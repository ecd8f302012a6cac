"""Marquez's lineage answer read in one transaction, against the same answer read one transaction
per query (the lookup of the node id, the walk, the datasets' and jobs' data), in process.

The bench Neo4j holds one night of the generated estate (bench.generate), or, with ``--keep``,
whatever it holds already. Each sampled dataset or job is asked both ways, which one first
alternating from one sample to the next, after a round of both to warm them; the answers must be
equal. An empty read transaction is timed as well: what each transaction costs before any query.

    python -m bench.one_read --datasets 10000 --json docs/results/one-read-m.json   # M
    python -m bench.one_read --keep --samples 100                    # the graph as it is
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.latency import bench_settings, emit, loaded_estate, percentile
from graph.db import Graph, connect
from graph.local_server import LocalServer
from impact.marquez import lineage as lg


def options() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", type=int, default=1000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--samples", type=int, default=100, help="datasets and jobs asked, each")
    p.add_argument("--keep", action="store_true", help="ask the bench graph as it is, no load")
    p.add_argument("--json", type=Path)
    return p.parse_args()


def ms(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    out = fn()
    return (time.perf_counter() - started) * 1000, out


def figures(xs: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(xs), 2), "p95_ms": round(percentile(xs, 95), 2)}


def main() -> None:
    a = options()
    if a.keep:
        settings = bench_settings()
        LocalServer(settings).start()
        graph = Graph(connect(settings), timeout=settings.query_timeout)
    else:
        graph, *_ = loaded_estate(a.datasets, a.seed, days=1)
    rng = random.Random(a.seed)
    nodes = [f"dataset:{r['ns']}:{r['name']}" for r in graph.driver.execute_query(
        "MATCH (d:Dataset) RETURN d.namespace AS ns, d.name AS name").records]
    jobs = [f"job:{r['ns']}:{r['name']}" for r in graph.driver.execute_query(
        "MATCH (j:Job) RETURN j.namespace AS ns, j.name AS name").records]
    asked = rng.sample(nodes, min(a.samples, len(nodes))) + rng.sample(jobs, min(a.samples, len(jobs)))

    def one(node: str) -> dict[str, Any]:
        return lg.lineage(graph, node)

    def each(node: str) -> dict[str, Any]:
        return lg._lineage(graph, node, None, False)  # every graph.read its own transaction

    for node in asked[:20]:  # warm both: plans, the page cache
        one(node), each(node)
    times: dict[str, list[float]] = {"one": [], "each": []}
    for i, node in enumerate(asked):
        ways: list[tuple[str, Callable[[str], dict[str, Any]]]] = [("one", one), ("each", each)]
        answers = []
        for name, way in ways[:: 1 if i % 2 else -1]:
            started = time.perf_counter()
            answers.append(way(node))
            times[name].append((time.perf_counter() - started) * 1000)
        assert answers[0] == answers[1], f"{node}: the two ways answer differently"
        if i % 50 == 49:
            print(f"{i + 1} of {len(asked)} asked", file=sys.stderr)

    def nothing() -> None:
        with graph.driver.session() as session:
            session.execute_read(lambda tx: None)

    empty = [ms(nothing)[0] for _ in range(200)]
    results = {"datasets_and_jobs_asked": len(asked),
               "one_read_transaction": figures(times["one"]),
               "a_transaction_per_query": figures(times["each"]),
               "ratio_p50": round(statistics.median(times["one"]) / statistics.median(times["each"]), 3),
               "empty_read_transaction": figures(empty)}
    emit(results, a.json)
    graph.close()


if __name__ == "__main__":
    main()
