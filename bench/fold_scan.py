"""Retention's scan for the runs to fold (cypher/retention/foldable_runs.cypher) against the same
query at another commit, and ingest with the indexes the scan uses against without them.

Two Neo4j servers of their own, loaded night by night (alternated, which one first changing
every night) with the same nights of DATASETS generated tables (bench.generate, a run per table
per day); one has the indexes ``run_last_seen`` and ``run_stub`` dropped. Then, on the server
with them, each version of the scan is timed (alternated, the first ask of each left out) with
the detailed window's start where one night of runs is past it (what a nightly retention run
finds) and where ten are; both must find the same runs. Database hits from PROFILE.

    python -m bench.fold_scan --against 9814170                      # S: 1,000 datasets, 100 nights
    python -m bench.fold_scan --datasets 10000 --nights 100 --against 9814170   # M
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from datetime import timedelta
from itertools import islice
from pathlib import Path
from typing import Any

from bench.generate import events, tables
from bench.latency import emit
from bench.retention import Side, _side
from bench.stack import scratch
from graph.queries import parse_query, query
from graph.retention.run import windows

QUERY = "retention/foldable_runs"
INDEXES = ("run_last_seen", "run_stub")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--nights", type=int, default=100, help="more than the detailed window")
    parser.add_argument("--detailed", type=float, default=90.0)
    parser.add_argument("--asks", type=int, default=6)
    parser.add_argument("--against", required=True, help="the commit whose scan to compare with")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    then = subprocess.run(["git", "show", f"{args.against}:cypher/{QUERY}.cypher"],
                          capture_output=True, text=True, check=True).stdout
    queries = {"this": query(QUERY).text, args.against: parse_query(QUERY, then).text}
    with scratch("lineage-fold-scan-") as work:
        sides = {"with": _side(work, "with", False, 2500),
                 "without": _side(work, "without", False, 2500)}
        try:
            with sides["without"].graph.driver.session() as session:
                for index in INDEXES:
                    session.run(f"DROP INDEX {index} IF EXISTS").consume()
            emit(_run(sides, queries, args), args.out)
        finally:
            for side in sides.values():
                side.graph.close()
                side.server.stop()


def _run(sides: dict[str, Side], queries: dict[str, str],
         args: argparse.Namespace) -> dict[str, Any]:
    ts = tables(args.datasets)
    nights = events(ts, days=args.nights)
    took: dict[str, list[float]] = {name: [] for name in sides}
    for night_no in range(args.nights):
        night = list(islice(nights, len(ts)))
        order = list(sides) if night_no % 2 == 0 else list(sides)[::-1]
        for name in order:
            took[name].append(sides[name].load(night))
    loads = {name: statistics.median(t[2:]) for name, t in took.items()}  # the first two warm
    found: dict[str, Any] = {
        "datasets": args.datasets, "nights": args.nights, "detailed days": args.detailed,
        "load s per night, median from the third, with / without the indexes":
            [round(loads["with"], 3), round(loads["without"], 3)],
        "ingest with the indexes / without": round(loads["without"] / loads["with"], 3),
        "scans": {}}
    side = sides["with"]
    w = windows(side.graph, args.detailed, 365)
    assert w is not None
    past = args.nights - args.detailed
    for nights_past in (1, min(10, int(past))):
        before = w.detailed_since - timedelta(days=past - nights_past)
        found["scans"][f"{nights_past} nights past the window"] = _scans(side, queries, before,
                                                                         args.asks)
    return found


def _scans(side: Side, queries: dict[str, str], before: Any, asks: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    runs: dict[str, list[str]] = {}
    times: dict[str, list[float]] = {name: [] for name in queries}
    with side.graph.driver.session() as session:
        for name, text in queries.items():
            result = session.run("PROFILE " + text, before=before, limit=20_000)
            runs[name] = sorted(r["runId"] for r in result)
            profile = result.consume().profile
            assert profile is not None
            out[name] = {"runs": len(runs[name]), "db hits": _hits(profile)}
        for _ in range(asks):
            for name, text in queries.items():
                started = time.perf_counter()
                session.run(text, before=before, limit=20_000).consume()
                times[name].append((time.perf_counter() - started) * 1000)
    for name in queries:
        out[name]["ms"] = [round(t) for t in times[name]]
        out[name]["p50 ms"] = round(statistics.median(times[name][1:]), 1)
    first, second = queries
    out["same runs"] = runs[first] == runs[second]
    return out


def _hits(plan: dict[str, Any]) -> int:
    return int(plan.get("dbHits", 0)) + sum(_hits(c) for c in plan.get("children", []))


if __name__ == "__main__":
    main()
