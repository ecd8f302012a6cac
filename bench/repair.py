"""Rerun plans and what changed at scale: two nights of the generated estate (bench.generate:
layered pipelines, hub tables read by many jobs, parent runs, 3% failures), loaded into the bench
Neo4j; then the rerun plan of the second night's run of each hub (the worst case: the largest
blast radius) and of random staging tables, timed, and each plan checked against the generator's
own data flow (the jobs of the tables downstream of it); and what changed for the jobs of the
marts with the most upstream (the widest walk) and of random marts, timed.

    python -m bench.repair --datasets 1000              # S
    python -m bench.repair --datasets 10000 --json docs/results/repair-m.json
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from typing import Any

import networkx as nx

from bench.generate import JOB_NS, NS
from bench.latency import emit, estate_options, ground_truth, loaded_estate, percentile
from impact.repair.changes import changes
from impact.repair.plan import rerun_plan_run


def main() -> None:
    a = estate_options(__doc__)
    graph, ts, evs, loaded_s = loaded_estate(a.datasets, a.seed, days=2)
    flow, _ = ground_truth(ts)
    second = {e["job"]["name"]: e["run"]["runId"] for e in evs[len(evs) // 2:]}
    rng = random.Random(a.seed)
    by_layer = {layer: [t for t in ts if t.layer == layer] for layer in range(4)}
    # the hubs: the staging tables with the most downstream (a source has no job of its own)
    hubs = sorted(by_layer[1], key=lambda t: -len(nx.descendants(flow, t.name)))[:max(3, a.samples // 4)]
    staging = rng.sample(by_layer[1], min(a.samples, len(by_layer[1])))
    results: dict[str, Any] = {"datasets": a.datasets, "events": len(evs),
                               "load s": round(loaded_s, 1)}
    wrong = 0
    for kind, picked in (("hub", hubs), ("staging table", staging)):
        took, sizes = [], []
        for t in picked:
            run_id = second[f"build_{t.name}"]
            rerun_plan_run(graph, run_id)  # planned once: the first ask is warm-up
            began = time.perf_counter()
            plan = rerun_plan_run(graph, run_id)
            took.append((time.perf_counter() - began) * 1000)
            expected = {f"{JOB_NS}:build_{n}" for n in nx.descendants(flow, t.name)}
            wrong += {r.job for r in plan.reruns} != expected
            sizes.append(len(plan.reruns))
        results[f"rerun plan of a {kind}'s run"] = {
            "p50 ms": round(statistics.median(took), 1), "p95 ms": round(percentile(took, 95), 1),
            "median jobs": statistics.median(sizes), "max jobs": max(sizes)}
        print(kind, results[f"rerun plan of a {kind}'s run"], file=sys.stderr)
    results["plans not exactly the downstream jobs"] = wrong
    last = max(by_layer)
    widest = sorted(by_layer[last], key=lambda t: -len(nx.ancestors(flow, t.name)))
    for kind, picked in (("mart with the most upstream", widest[:max(3, a.samples // 4)]),
                         ("mart", rng.sample(by_layer[last], min(a.samples, len(by_layer[last]))))):
        took, found, examined = [], [], []
        for t in picked:
            changes(graph, "job", JOB_NS, f"build_{t.name}")  # the first ask is warm-up
            began = time.perf_counter()
            answer = changes(graph, "job", JOB_NS, f"build_{t.name}")
            took.append((time.perf_counter() - began) * 1000)
            found.append(len(answer.changes))
            examined.append(answer.examined)
        results[f"what changed for a {kind}'s job"] = {
            "p50 ms": round(statistics.median(took), 1), "p95 ms": round(percentile(took, 95), 1),
            "median changes": statistics.median(found),
            "median datasets and jobs examined": statistics.median(examined),
            "max examined": max(examined)}
        print(kind, results[f"what changed for a {kind}'s job"], file=sys.stderr)
    results["namespace"] = NS
    emit(results, a.json)
    graph.close()


if __name__ == "__main__":
    main()
