"""Policy rules at scale: 20 rules of every kind on a generated graph (default 100,000 datasets,
about a million columns), checked in full, then kept checked after worker batches, and the
worker's ingest rate with the rules watched against without, alternately in one run.

The graph is ``bench.generate``'s, in the bench Neo4j (``bench.latency``'s state directory and
ports); with ``--keep`` an already loaded store is used as it is (``python -m bench.latency
--datasets 100000 --seed 13`` loads one). The batches are the generator's next days: every table's
job runs again, so each batch touches what a real night would.

    python -m bench.policies --keep --datasets 100000 --seed 13
    python -m bench.policies --datasets 10000             # loads M first (minutes)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.generate import Table, events, tables
from bench.latency import bench_settings, emit, percentile
from graph.db import Graph, connect
from graph.local_server import LocalServer
from graph.schema import apply_schema
from impact.policy.check import check_rule
from impact.policy.rules import parse_policies
from impact.policy.watch import PolicyWatch, Watching
from ingest.log.sqlite import SQLiteLog
from ingest.pipeline import Ingester, IngestReport
from ingest.read import RawItem
from ingest.worker import Worker

RULES = """\
version: 1
rules:
  - id: email-masked-in-dashboards
    flow: {from: {dataset: "src.*", column: email}, to: {dataset: "dash.*"}, must: masked}
  - id: email-masked-in-marts
    flow: {from: {dataset: "src.t0000*", column: email}, to: {dataset: "mart.*"}, must: masked,
           aggregation: masks}
  - id: email-never-in-staging-t01
    flow: {from: {dataset: "src.t0001*", column: email}, to: {dataset: "stg.t01*"}, must: never}
  - id: ids-masked-in-dash-t00
    flow: {from: {dataset: "src.t00000*", column: id}, to: {dataset: "dash.t00*"}, must: masked}
  - id: src-t00001-never-in-dashboards
    severity: warning
    flow: {from: {dataset: "src.t00001*"}, to: {dataset: "dash.*"}, must: never}
  - id: src-t00002-never-in-marts
    flow: {from: {dataset: "src.t00002*"}, to: {dataset: "mart.t000*"}, must: never}
  - id: src-through-staging-t0
    flow: {from: {dataset: "src.t00003*"}, to: {dataset: "dash.*"}, must: through,
           through: {dataset: "stg.t0*"}}
  - id: src-through-staging-jobs
    flow: {from: {dataset: "src.t00004*"}, to: {dataset: "mart.*"}, must: through,
           through: {job: "build_stg.*"}}
  - id: email-through-staging
    flow: {from: {dataset: "src.t0002*", column: email}, to: {dataset: "dash.*"},
           must: through, through: {dataset: "stg.*"}}
  - id: regions-t0000-t0001
    residency:
      regions: {eu: {dataset: "*.t0000*"}, us: {dataset: "*.t0001*"}}
      unregioned: allowed
  - id: regions-strict
    severity: warning
    residency:
      regions: {a: {dataset: "src.t00005*"}, b: {dataset: "stg.t00005*"}}
  - id: dashboards-from-sources
    sources: {sinks: {dataset: "dash.t0000*"}, allow: {dataset: "src.*"}}
  - id: dashboards-from-hub-sources
    severity: warning
    sources: {sinks: {dataset: "dash.t0001*"}, allow: {dataset: "src.t000*"}}
  - id: marts-owned
    metadata: {datasets: {dataset: "mart.*"}, require: [owner, schema, producer]}
  - id: dashboards-documented
    severity: warning
    metadata: {datasets: {dataset: "dash.*"}, require: [description]}
  - id: staging-traced
    metadata: {datasets: {dataset: "stg.*"}, require: [column-lineage]}
  - id: ids-present
    quality: {columns: {column: id}, metric: null-count, above: 0}
  - id: email-mostly-present
    quality: {columns: {column: email}, metric: null-ratio, above: 0.1}
  - id: c0-never-in-dash-t000
    flow: {from: {dataset: "src.t00006*", column: c0}, to: {dataset: "dash.t000*"}, must: never}
  - id: c1-masked-in-mart-t000
    flow: {from: {dataset: "src.t00007*", column: c1}, to: {dataset: "mart.t000*"},
           must: masked}
"""


def estate_graph(datasets: int, seed: int, keep: bool) -> tuple[Graph, list[Table]]:
    """The bench Neo4j (started if it is not) holding the generated estate: loaded now, or with
    ``keep`` as it is already."""
    settings = bench_settings()
    LocalServer(settings).start()
    graph = Graph(connect(settings), timeout=settings.query_timeout)
    apply_schema(graph)
    graph.driver.execute_query("CALL db.awaitIndexes(600)")
    ts = tables(datasets, seed)
    if not keep:
        graph.run_statements("admin/wipe")
        report = Ingester(graph, batch_size=500).ingest(
            (RawItem(f"gen[{i}]", obj=e) for i, e in enumerate(events(ts, seed))), IngestReport())
        assert not report.rejected, report.rejected[:3]
    return graph, ts


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--keep", action="store_true", help="use the loaded bench graph as it is")
    p.add_argument("--batch", type=int, default=500, help="events per worker batch")
    p.add_argument("--batches", type=int, default=10, help="batches timed one by one")
    p.add_argument("--rounds", type=int, default=4, help="ingest rounds, off and on alternately")
    p.add_argument("--round-events", type=int, default=5000)
    p.add_argument("--day", type=int, default=2,
                   help="the generator's day whose runs make the batches (2 = the day after the "
                        "loaded one; a later run of the bench takes the next, so that its events "
                        "are new to the graph)")
    p.add_argument("--json", type=Path)
    a = p.parse_args()
    policies = parse_policies(RULES, "bench/policies.py")
    assert len(policies.rules) == 20

    graph, ts = estate_graph(a.datasets, a.seed, a.keep)
    graph.driver.execute_query("MATCH (v:PolicyViolation) DETACH DELETE v")
    size = graph.driver.execute_query(
        "MATCH (d:Dataset) WITH count(d) AS datasets MATCH (c:Column) "
        "RETURN datasets, count(c) AS columns").records[0]
    print(f"{size['datasets']} datasets, {size['columns']} columns", file=sys.stderr)

    watch = PolicyWatch(graph, policies)
    t0 = time.perf_counter()
    first = watch.full()
    full_first = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = watch.full()
    full_again = time.perf_counter() - t0
    per_rule = {}
    for rule in policies.rules:
        t0 = time.perf_counter()
        checked = check_rule(graph, rule, None, watch.today())
        per_rule[rule.id] = {"seconds": time.perf_counter() - t0, "sources": checked.sources,
                             "violations": len(checked.violations)}
        print(f"  {rule.id:34s} {per_rule[rule.id]['seconds']:7.2f} s  "
              f"{checked.sources:6d} sources  {len(checked.violations):6d} violations",
              file=sys.stderr)
    print(f"full check: {full_first:.1f} s (first, {len(first.changes)} violations stored), "
          f"{full_again:.1f} s (again, {len(again.changes)} changes)", file=sys.stderr)

    # the next days' runs, in the generator's order (every table's job once a day)
    day = f"2024-06-{a.day:02d}"
    later = [e for e in events(ts, a.seed, days=a.day) if e["eventTime"] >= day]
    batches = [later[i * a.batch:(i + 1) * a.batch] for i in range(a.batches)]
    rest = later[a.batches * a.batch:]
    per_batch: list[dict[str, Any]] = []
    load_s: list[float] = []
    check_s: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        log = SQLiteLog(Path(tmp) / "events.db")
        worker = Worker(graph, log, batch=a.batch)
        for batch in batches:
            log.append(batch)
            t0 = time.perf_counter()
            result = worker.run_once()
            load_s.append(time.perf_counter() - t0)
            assert result is not None
            t0 = time.perf_counter()
            done = watch.after(result)
            check_s.append(time.perf_counter() - t0)
            per_batch.append({"events": result.events, "load_seconds": load_s[-1],
                              "check_seconds": check_s[-1], "touched": len(result.datasets),
                              "anchors": done.anchors, "changes": len(done.changes),
                              "scope_seconds": done.scope_seconds,
                              "printed": done.printed,
                              "changed": done.changed,
                              "print_seconds": done.print_seconds})
            print(f"  batch of {result.events}: load {load_s[-1]:.2f} s, rules "
                  f"{check_s[-1]:.2f} s (scope {done.scope_seconds:.2f} s, {done.anchors} anchors, "
                  f"{len(done.changes)} changes, {done.changed} of "
                  f"{done.printed} printed changed)", file=sys.stderr)

        # ingest with the rules watched (on their thread) against without, alternately
        rounds = []
        for r in range(a.rounds):
            on = r % 2 == 1
            chunk = rest[r::a.rounds][:a.round_events]
            log.append(chunk)
            # the store agrees with the graph already: no full check first
            watching = Watching(watch, check_all_first=False).start() if on else None
            stop = threading.Event()
            started = time.perf_counter()

            def offer(result: Any, watching: Watching | None = watching,
                      stop: threading.Event = stop) -> None:
                if watching is not None:
                    watching.offer(result)
                if worker.lag() == 0:
                    stop.set()

            worker.run(stop, 0.05, offer)
            seconds = time.perf_counter() - started
            caught_up = 0.0
            if watching is not None:
                t0 = time.perf_counter()
                watching.wait_idle(3600)
                caught_up = time.perf_counter() - t0
                watching.stop()
            rounds.append({"policies": on, "events": len(chunk), "seconds": seconds,
                           "events_per_second": len(chunk) / seconds,
                           "rules_caught_up_after_s": caught_up})
            print(f"  round {r + 1} ({'on' if on else 'off'}): {len(chunk) / seconds:.0f} events/s"
                  + (f", rules caught up {caught_up:.1f} s later" if on else ""), file=sys.stderr)
    off = [x["events_per_second"] for x in rounds if not x["policies"]]
    on_ = [x["events_per_second"] for x in rounds if x["policies"]]
    emit({"datasets": size["datasets"], "columns": size["columns"], "rules": 20,
          "full_check_first_seconds": full_first, "full_check_again_seconds": full_again,
          "violations": len(first.changes), "per_rule": per_rule,
          "per_batch": per_batch, "per_batch_check_p50_s": statistics.median(check_s),
          "per_batch_check_p95_s": percentile(check_s, 95),
          "per_batch_load_p50_s": statistics.median(load_s),
          "ingest_rounds": rounds,
          "ingest_on_over_off": statistics.mean(on_) / statistics.mean(off) if on_ and off else None},
         a.json)
    graph.close()
    LocalServer(bench_settings()).stop()


if __name__ == "__main__":
    main()
