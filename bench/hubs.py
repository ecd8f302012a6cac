"""Hub tables right after a restart: the blast radius people ask for when something big breaks.

Needs the bench graph already loaded (``python -m bench.latency --datasets N --seed S`` or, for L,
``python -m bench.ingest --spark 100000 --spark-only``). For each mode it restarts the bench Neo4j,
then asks the blast radius (depth 20) of each hub twice, through the function the API and the CLI
call: the first ask is what a user meets after a restart, the second what they meet later. Modes:

* ``restart``: Neo4j restarted; the operating system still caches the store files;
* ``restart-warmed``: the same, then ``impact.warm`` (what ``lineage serve`` does at start), timed;
* ``cold``: the operating system's file cache dropped too (needs root), as after a reboot;
* ``cold-warmed``: the same, then ``impact.warm``.

    python -m bench.hubs --datasets 100000 --seed 13 --json hubs-L.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import networkx as nx

from bench.generate import NS, tables
from bench.latency import bench_settings, ground_truth, percentile
from graph.db import Graph, connect
from graph.local_server import LocalServer
from impact.blast_radius import dataset_blast_radius
from impact.warm import warm

MODES = ("restart", "restart-warmed", "cold", "cold-warmed")


def drop_os_cache() -> bool:
    """Drop the kernel's page cache (root only); False when not allowed."""
    try:
        subprocess.run(["sync"], check=True)
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def pick_hubs(datasets: int, seed: int, n: int) -> list[str]:
    """The ``n`` sources with the most datasets downstream, by the generator's own graph."""
    flow, _ = ground_truth(tables(datasets, seed))
    sources = [node for node in flow if flow.in_degree(node) == 0]
    # count descendants of the 4n most-read only, keep the largest
    wide = sorted(sources, key=lambda s: -flow.out_degree(s))[:n * 4]
    below = {s: len(nx.descendants(flow, s)) for s in wide}
    hubs = sorted(wide, key=lambda s: -below[s])[:n]
    print(f"{len(hubs)} hubs, {min(below[h] for h in hubs)}-{max(below[h] for h in hubs)} "
          "datasets downstream", file=sys.stderr)
    return hubs


def summary(ms: list[float]) -> dict[str, float]:
    return {"p50_ms": statistics.median(ms), "p95_ms": percentile(ms, 95), "max_ms": max(ms)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--hubs", type=int, default=40, help="how many hubs (the sources with most downstream)")
    p.add_argument("--modes", default=",".join(MODES), help=f"comma-separated, of {', '.join(MODES)}")
    p.add_argument("--json", type=Path, help="also write the results here")
    a = p.parse_args()
    modes = [m for m in a.modes.split(",") if m]
    if unknown := set(modes) - set(MODES):
        sys.exit(f"unknown modes: {', '.join(sorted(unknown))}")

    hubs = pick_hubs(a.datasets, a.seed, a.hubs)
    # the generator's graph was millions of objects: a full collection of them took 1.5 s, which
    # landed inside a timed question now and then; none of it is needed any more
    gc.collect()
    gc.freeze()

    settings = bench_settings()
    server = LocalServer(settings)
    results: dict[str, Any] = {}
    for mode in modes:
        server.stop()
        if mode.startswith("cold") and not drop_os_cache():
            print(f"{mode}: cannot drop the OS cache (not root); skipped", file=sys.stderr)
            continue
        t0 = time.perf_counter()
        server.start()
        started_s = time.perf_counter() - t0
        graph = Graph(connect(settings), timeout=settings.query_timeout)
        row: dict[str, Any] = {"start_s": started_s}
        if mode.endswith("warmed"):
            done = warm(graph)
            row["warm_s"] = done.seconds
            row["warm_steps"] = {what: round(s, 2) for what, s in done.steps}
            row["warm_read"] = done.read
        first: list[float] = []
        second: list[float] = []
        sizes: list[int] = []
        for hub in hubs:
            for asks in (first, second):
                t = time.perf_counter()
                ans = dataset_blast_radius(graph, NS, hub, 20)
                asks.append((time.perf_counter() - t) * 1000)
            sizes.append(len(ans.impacted))
        graph.close()
        row |= {"first": summary(first), "second": summary(second), "first_ms": first,
                "median_answer_size": statistics.median(sizes)}
        results[mode] = row
        print(f"{mode:15s} start {started_s:5.1f} s"
              + (f"  warm {row['warm_s']:5.1f} s" if "warm_s" in row else " " * 13)
              + f"  first p50 {row['first']['p50_ms']:7.1f} p95 {row['first']['p95_ms']:7.1f}"
              f" max {row['first']['max_ms']:7.1f} ms | second p50 {row['second']['p50_ms']:6.1f}"
              f" p95 {row['second']['p95_ms']:6.1f} ms", file=sys.stderr)
    meta = {"datasets": a.datasets, "seed": a.seed, "hubs": len(hubs),
            "neo4j_heap": settings.neo4j_heap, "neo4j_pagecache": settings.neo4j_pagecache,
            "machine": f"{os.cpu_count()} cores"}
    if a.json:
        a.json.write_text(json.dumps({"meta": meta, "results": results}, indent=2))


if __name__ == "__main__":
    main()
