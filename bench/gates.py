"""Gates at scale: a gate that checks the 20 rules of bench.policies against one that reads the
policy watch's store (impact.policy.kept), on the same sampled datasets, in process.

The graph is ``bench.generate``'s in the bench Neo4j (``--keep``: as loaded, e.g. by ``python -m
bench.latency --datasets 100000 --seed 13``). A full check stores the violations and marks the
store current through position 0 of an empty log; then each sampled dataset (every layer alike)
is gated both ways, which one first alternating, after a round that warms both. The answers must
have the same causes.

    python -m bench.gates --keep --datasets 100000 --seed 13      # L, loaded before
    python -m bench.gates --datasets 10000                         # loads M first (minutes)
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.generate import NS
from bench.latency import emit, percentile
from bench.policies import RULES, estate_graph
from graph.db import Graph
from impact.policy import kept
from impact.policy.gate import gate
from impact.policy.rules import parse_policies
from impact.policy.watch import PolicyWatch


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--keep", action="store_true", help="use the loaded bench graph as it is")
    p.add_argument("--samples", type=int, default=100, help="datasets gated, each both ways")
    p.add_argument("--json", type=Path)
    a = p.parse_args()
    policies = parse_policies(RULES, "bench/policies.py")
    graph, ts = estate_graph(a.datasets, a.seed, a.keep)
    started = time.perf_counter()
    full = PolicyWatch(graph, policies).full()
    print(f"full check: {time.perf_counter() - started:.1f} s, {len(full.changes)} changes",
          file=sys.stderr)
    kept.mark(graph, policies, kept.LogState(0), datetime.now(UTC))
    try:
        emit(_run(graph, policies, ts, a), a.json)
    finally:
        graph.close()


def _run(graph: Graph, policies: Any, ts: list[Any], a: argparse.Namespace) -> dict[str, Any]:
    now = datetime.now(UTC)
    picked = random.Random(a.seed).sample(ts, min(a.samples, len(ts)))
    # the position given: None checks every rule
    ways: dict[str, kept.LogState | None] = {"checked": None, "stored": kept.LogState(0)}

    def ask(way: str, name: str) -> tuple[float, Any]:
        started = time.perf_counter()
        answer = gate(graph, NS, name, policies, now=now, position=ways[way])
        return (time.perf_counter() - started) * 1000, answer

    for t in picked[:5]:
        for way in ways:
            ask(way, t.name)
    took: dict[str, list[float]] = {way: [] for way in ways}
    differ, closed = 0, 0
    for i, t in enumerate(picked):
        answers = {}
        for way in (list(ways) if i % 2 == 0 else list(ways)[::-1]):
            ms, answers[way] = ask(way, t.name)
            took[way].append(ms)
        differ += answers["checked"].causes != answers["stored"].causes
        closed += not answers["stored"].open
    found: dict[str, Any] = {"datasets": a.datasets, "samples": len(picked), "rules":
                             len(policies.rules), "answers differing": differ,
                             "gates closed": closed}
    for way, times in took.items():
        found[way] = {"p50 ms": round(statistics.median(times), 2),
                      "p95 ms": round(percentile(times, 95), 2)}
        print(f"{way:8s} p50 {found[way]['p50 ms']:8.2f} ms  p95 {found[way]['p95 ms']:8.2f} ms",
              file=sys.stderr)
    return found


if __name__ == "__main__":
    main()
