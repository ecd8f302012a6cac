"""Lineage health at scale: the time of one measure (every SLI, a pass over the datasets and
jobs) on a generated graph, default 100,000 datasets, in the bench Neo4j (``bench.latency``'s
state directory and ports). With ``--keep`` an already loaded store is used as it is (``python
-m bench.ingest --spark 100000 --spark-only`` loads L). The cost on ingest is measured by
``python -m bench.ingest --scrape 1`` with ``LINEAGE_HEALTH_INTERVAL`` set (docs/benchmarks.md,
"Lineage health").

    python -m bench.health --keep --datasets 100000 --seed 13
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.generate import events, tables
from bench.latency import bench_settings, emit
from graph.db import Graph, connect
from graph.local_server import LocalServer
from graph.schema import apply_schema
from impact.health.measure import RUNS_READ, measure, summarize
from impact.health.tiers import Pattern, Tiers
from ingest.pipeline import Ingester, IngestReport
from ingest.read import RawItem

# the generator's layers as tiers: dashboards and marts critical, staging silver, sources bronze
TIERS = Tiers((("critical", (Pattern(name="dash.*"), Pattern(name="mart.*"))),
               ("silver", (Pattern(name="stg.*"),)), ("bronze", (Pattern(name="src.*"),))),
              "bench.health")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--keep", action="store_true", help="use the loaded bench graph as it is")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json", type=Path, help="also write the results here")
    a = p.parse_args()
    settings = bench_settings()
    server = LocalServer(settings)
    server.start()
    graph = Graph(connect(settings), timeout=600)
    apply_schema(graph)
    if not a.keep:
        graph.run_statements("admin/wipe")
        Ingester(graph, batch_size=500).ingest(
            (RawItem("bench", obj=e) for e in events(tables(a.datasets, seed=a.seed),
                                                      seed=a.seed)), IngestReport())
    results: dict[str, Any] = {"datasets_asked": a.datasets, "seed": a.seed}
    took = []
    found = None
    for _ in range(a.rounds):
        t0 = time.perf_counter()
        found = measure(graph, TIERS, now=datetime.now(UTC))
        took.append(time.perf_counter() - t0)
    assert found is not None
    # where one measure's time goes: the two queries (Neo4j and the driver), then Python
    t0 = time.perf_counter()
    datasets = graph.read("health/datasets")
    t1 = time.perf_counter()
    jobs = graph.read("health/jobs", runs=RUNS_READ)
    t2 = time.perf_counter()
    summarize(datasets, jobs, TIERS, {}, datetime.now(UTC))
    t3 = time.perf_counter()
    results["parts_s"] = {"datasets_query": round(t1 - t0, 2), "jobs_query": round(t2 - t1, 2),
                          "summarize": round(t3 - t2, 2)}
    results["datasets"] = sum(g.datasets for g in found.tiers)
    results["jobs"] = sum(g.jobs for g in found.tiers)
    results["measure_seconds"] = [round(t, 2) for t in took]
    results["measure_median_s"] = round(statistics.median(took), 2)
    results["tiers"] = {g.tier: {"datasets": g.datasets,
                                 "coverage": g.ratio("coverage").value,
                                 "completeness": g.ratio("completeness").value}
                        for g in found.tiers}
    emit(results, a.json)
    graph.close()


if __name__ == "__main__":
    main()
