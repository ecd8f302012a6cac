"""The worker's preparation alone: validate, transform, combine and plan, in batches of 500, on
bench.generate's events, with no Neo4j and no log. The CPU time per event of one process, best of
``--repeat``: nothing here waits on another process, so a profile of it (cProfile) shows where the
worker's own time goes and whether two commits do the same work; its figure still moves between
processes on a shared machine (docs/benchmarks.md, "Before and after the house's third pass").

    python -m bench.prepare                        # 1,000 jobs, 6 days, START + COMPLETE
    PYTHONPATH=<worktree> python -m bench.prepare  # another commit's code, for an alternation
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import orjson

from bench.generate import events, tables
from ingest.combine import combine
from ingest.load import Plan, SeenCurrent
from ingest.pipeline import relax_gc
from ingest.rows import Rows
from ingest.transform import transform
from ingest.validate import validate

BATCH = 500


def prepare_all(raws: list[dict[str, Any]]) -> tuple[float, float]:
    """CPU seconds per event of preparing ``raws`` as the worker does, and the bytes per event of
    the first round's parameters (what the driver would send), as JSON."""
    seen = SeenCurrent()
    received = time.time()  # as the log stamps an event it took
    sent = 0
    started = time.process_time()
    for i in range(0, len(raws), BATCH):
        rows = Rows()
        for raw in raws[i:i + BATCH]:
            event = validate(raw)
            if isinstance(event, list):  # the generator's events are valid: a refusal is a bug
                raise ValueError(f"bench.generate made an invalid event: {event}")
            rows.extend(transform(event, 16_384, received))
        for _, params in Plan(combine(rows), seen).first:
            sent += len(orjson.dumps(params, default=str))
    return (time.process_time() - started) / len(raws), sent / len(raws)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tables", type=int, default=1000, help="jobs (one output table each)")
    p.add_argument("--days", type=int, default=6, help="daily runs of every job")
    p.add_argument("--repeat", type=int, default=3, help="passes over the events; the best is kept")
    a = p.parse_args()
    relax_gc()  # as the worker runs
    # the events as a worker reads them back from the log: parsed JSON
    raws = [orjson.loads(orjson.dumps(e)) for e in events(tables(a.tables), days=a.days, starts=True)]
    best = min(prepare_all(raws) for _ in range(a.repeat))
    print(json.dumps({"events": len(raws), "cpu_us_per_event": round(best[0] * 1e6, 1),
                      "first_round_bytes_per_event": round(best[1])}))


if __name__ == "__main__":
    main()
