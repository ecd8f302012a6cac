"""What the plan keeper takes off the users: the first questions after a graph has grown.

Neo4j plans a query again, at its next run, once the graph's counts have moved enough since the
plan was made; that run pays for the planning (docs/benchmarks.md, "Planning"). This bench
empties the bench Neo4j's graph (its own state directory and ports), loads a generated graph
through the real ingest path with or without :class:`impact.warm.PlanKeeper` ticking on a thread
beside the load (as ``lineage serve`` runs it with ``LINEAGE_PLAN_KEEPER_SECONDS``), then asks
each question of fresh nodes three times over and reports each answer's milliseconds: without the
keeper the first answers carry the planning.
Runs alternate without and with the keeper.

    python -m bench.plan_keeper                          # 10,000 datasets, 2 runs of each
    python -m bench.plan_keeper --datasets 3000 --runs 1
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.generate import NS, events, tables
from bench.latency import bench_settings, emit
from graph.db import Graph, connect
from graph.local_server import LocalServer
from graph.schema import apply_schema
from impact.warm import PlanKeeper, ask_questions
from ingest.pipeline import Ingester, IngestReport
from ingest.read import RawItem


def one_run(graph: Graph, datasets: int, seed: int, every: float | None,
            wait: float = 5.0) -> dict[str, Any]:
    """Empty the graph and Neo4j's plan cache, load, then ask ``wait`` seconds after the load;
    ``every``: the keeper's tick, as ``LINEAGE_PLAN_KEEPER_SECONDS`` (None: no keeper)."""
    graph.run_statements("admin/wipe")
    with graph.driver.session() as s:
        s.run("CALL db.clearQueryCaches()").consume()
    ts = tables(datasets, seed)
    stop = threading.Event()
    backlog = [0, 0]  # events read from the generator, events loaded (or found duplicates)
    rounds: list[dict[str, Any]] = []

    def keep() -> None:
        assert every is not None
        # as lineage serve makes it, with the load's own counts standing for the event log's last
        # sequence number and the worker's position (there is no log in process)
        keeper = PlanKeeper(graph, backlog=lambda: (backlog[0], backlog[1]))
        while not stop.wait(every):
            t = time.perf_counter()
            asked = keeper.tick()
            if asked is not None:  # the rounds that asked
                rounds.append({"at_s": round(t - t0, 1), "seconds": round(time.perf_counter() - t, 3),
                               "asked": len(asked)})

    t0 = time.perf_counter()
    thread = threading.Thread(target=keep, daemon=True) if every is not None else None
    if thread:
        thread.start()
    def read() -> Iterator[RawItem]:
        for i, e in enumerate(events(ts, seed)):
            backlog[0] += 1
            yield RawItem(f"gen[{i}]", obj=e)

    def loaded(n: int) -> None:
        backlog[1] += n

    report = Ingester(graph, batch_size=500).ingest(read(), IngestReport(), loaded)
    load_s = time.perf_counter() - t0
    # the users ask ``wait`` seconds after the load, with or without a keeper (whose tick after
    # the load sees the graph held still, and asks); at 0 they ask while its round may be under way
    time.sleep(wait)
    stop.set()
    assert not report.rejected, report.rejected[:3]
    rng = random.Random(seed + 1)
    sources = [t for t in ts if t.layer == 0]
    staging = [t for t in ts if t.layer == 1]
    asks = []
    for _ in range(3):
        src, derived = rng.choice(sources), rng.choice(staging)
        column = {"namespace": NS, "dataset": src.name, "name": src.columns[0]}
        asks.append({what: round(s * 1000, 1) for what, s in ask_questions(
            graph, (NS, src.name), {"namespace": NS, "name": derived.name}, column, None)})
    if thread:
        thread.join()
    return {"keeper_every_s": every, "wait_s": wait, "load_s": round(load_s, 1),
            "keeper_rounds": rounds, "asks_ms": asks}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--every", type=float, default=2.0,
                   help="the keeper's tick, seconds (LINEAGE_PLAN_KEEPER_SECONDS)")
    p.add_argument("--runs", type=int, default=2, help="runs of each, alternated: without, with")
    p.add_argument("--wait", type=float, default=5.0,
                   help="seconds between the load's end and the first question (0: at once)")
    p.add_argument("--json", type=Path, help="also write the results here")
    a = p.parse_args()
    settings = bench_settings()
    LocalServer(settings).start()
    graph = Graph(connect(settings), timeout=settings.query_timeout)
    apply_schema(graph)
    runs = []
    for i in range(a.runs):
        for every in (None, a.every):
            run = one_run(graph, a.datasets, a.seed, every, a.wait)
            runs.append(run)
            first = run["asks_ms"][0]
            print(f"run {i + 1}, keeper {f'every {every:g} s' if every else 'off'}, asked "
                  f"{a.wait:g} s after: load {run['load_s']} s; "
                  f"first answers {min(first.values()):.0f}-{max(first.values()):.0f} ms "
                  f"(then {min(run['asks_ms'][1].values()):.0f}-{max(run['asks_ms'][1].values()):.0f})",
                  file=sys.stderr)
    emit({"datasets": a.datasets, "seed": a.seed, "runs": runs}, a.json)
    graph.close()


if __name__ == "__main__":
    main()
