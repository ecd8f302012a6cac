"""Erasure plans at scale: one night of the generated estate (bench.generate: layered pipelines,
hub tables read by many jobs), loaded into the bench Neo4j; then the erasure plan keyed by the
``id`` of the source tables whose ``id`` reaches the most columns (the hubs: the widest plan),
with their ``email`` as a personal column where they have one, and of random source tables,
each asked twice (the second timed).

    python -m bench.erasure --datasets 1000              # S
    python -m bench.erasure --datasets 10000 --json docs/results/erasure-m.json
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from typing import Any

import networkx as nx

from bench.generate import NS
from bench.latency import emit, estate_options, loaded_estate, percentile
from impact.erasure.plan import Key, erasure_plan


def main() -> None:
    a = estate_options(__doc__)
    graph, ts, evs, loaded_s = loaded_estate(a.datasets, a.seed, days=1)
    # the generator's column flow: which columns each source's id reaches (any transformation)
    flow: nx.DiGraph[tuple[str, str]] = nx.DiGraph()
    for t in ts:
        for col, edges in t.lineage.items():
            flow.add_edges_from(((src, c), (t.name, col)) for src, c, *_ in edges)
    sources = [t for t in ts if t.layer == 0]
    reach = {t.name: len(nx.descendants(flow, (t.name, "id"))) if (t.name, "id") in flow else 0
             for t in sources}
    hubs = sorted(sources, key=lambda t: -reach[t.name])[:max(3, a.samples // 4)]
    rng = random.Random(a.seed)
    picked = {"hub": hubs, "source table": rng.sample(sources, min(a.samples, len(sources)))}
    results: dict[str, Any] = {"datasets": a.datasets, "events": len(evs),
                               "load s": round(loaded_s, 1)}
    for kind, chosen in picked.items():
        took, places, reached = [], [], []
        for t in chosen:
            personal = ("email",) if "email" in t.columns else ()
            keys = [Key(NS, t.name, "id")]
            erasure_plan(graph, keys, None, personal)  # the first ask is warm-up
            began = time.perf_counter()
            plan = erasure_plan(graph, keys, None, personal)
            took.append((time.perf_counter() - began) * 1000)
            places.append(len(plan.places))
            reached.append(reach[t.name])
        results[f"erasure plan of a {kind}"] = {
            "p50 ms": round(statistics.median(took), 1), "p95 ms": round(percentile(took, 95), 1),
            "median places": statistics.median(places), "max places": max(places),
            "median columns the id reaches": statistics.median(reached)}
        print(kind, results[f"erasure plan of a {kind}"], file=sys.stderr)
    results["namespace"] = NS
    emit(results, a.json)
    graph.close()


if __name__ == "__main__":
    main()
