"""Why the first batch after a Neo4j start is slower than the next: a Neo4j of its own loaded with
DATASETS generated tables (bench.generate, two nights), then trials of 8 batches of 3 events each
(an ingester of its own each: an empty cache of current versions), first against the median of
the last six: after a restart with the worker's rehearsal (ingest.pipeline.plan_ahead: rolled
back, then committed and removed), with the rolled-back half alone, without it, with the rolled-back
half run 21 times, and on the warm server.

    python -m bench.first_batch                    # 1,000 datasets, two rounds
    python -m bench.first_batch --out docs/results/first-batch.json
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from bench.generate import events, tables
from bench.latency import emit
from bench.stack import free_port, scratch
from graph.db import Graph, connect
from graph.local_server import LocalServer
from graph.schema import apply_schema
from graph.settings import Settings
from ingest.pipeline import Ingester, IngestReport, plan_ahead
from ingest.read import RawItem


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with scratch("lineage-first-batch-") as work:
        trials = _trials(Settings(state_dir=work, neo4j_bolt_port=free_port(),
                                  neo4j_http_port=free_port(), neo4j_heap="1g",
                                  neo4j_pagecache="512m"), args)
    emit({"datasets": args.datasets, "trials": trials}, args.out)


def _trials(settings: Settings, args: argparse.Namespace) -> list[dict[str, Any]]:
    server = LocalServer(settings)
    server.start()
    nights = events(tables(args.datasets), days=4 + 2 * args.rounds, starts=True)
    graph = Graph(connect(settings))
    apply_schema(graph)
    Ingester(graph, 500).ingest([RawItem(f"base-{i}", obj=next(nights))
                                 for i in range(4 * args.datasets)], IngestReport())
    graph.close()
    trials: list[dict[str, Any]] = []

    def trial(name: str, restart: bool, rehearsals: int, commit: bool = False) -> None:
        if restart:
            server.stop()
            server.start()
        graph = Graph(connect(settings))
        started = time.perf_counter()
        for _ in range(rehearsals):
            plan_ahead(graph, commit)
        rehearsed = time.perf_counter() - started
        ingester = Ingester(graph, 500)
        took = []
        for b in range(8):
            batch = [RawItem(f"{name}-{b}-{i}", obj=next(nights)) for i in range(3)]
            started = time.perf_counter()
            ingester.ingest(batch, IngestReport())
            took.append(time.perf_counter() - started)
        graph.close()
        later = statistics.median(took[2:])
        trials.append({"trial": name, "rehearsal s": round(rehearsed, 2),
                       "first s": round(took[0], 3), "second s": round(took[1], 3),
                       "later median s": round(later, 3), "ratio": round(took[0] / later, 2)})
        print(trials[-1], flush=True)

    try:
        for _ in range(args.rounds):
            trial("restart, rehearsed and committed", True, 1, commit=True)
            trial("restart, rehearsed", True, 1)
            trial("restart, not rehearsed", True, 0)
            trial("restart, rehearsed 21 times", True, 21)
            trial("warm server, new ingester", False, 1)
    finally:
        server.stop()
    return trials


if __name__ == "__main__":
    main()
