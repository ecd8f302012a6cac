"""Retention over 400 simulated days of daily runs (docs/graph-model.md, "Retention"): two Neo4j
servers of their own, one with retention and one without, each loaded with the same nights of
DATASETS generated tables (bench.generate: a run per table per day, time moved by the events'
own times), a night at a time through the real ingest path and an event log of its own. The one
with retention runs it after each night (as the worker's schedule would) and archives its log.

Every EVERY days it records, for each: nodes and relationships (Neo4j's count store), the event
log's size (and the archive's); on the ON_DISK days, the store's files after a clean stop; at the
end, the questions' p50/p95 on both, and the ingest rate of a night loaded while a retention run
works against one without.

From ``--retire-day`` on, one job in ten that reads two tables or more stops reading its last
one (its READS and column lineage from it retire), so that lineage past the summary window is
seen removed: those edges go on the first night after ``--retire-day`` + the summary window.

    python -m bench.retention                          # S: 1,000 datasets, 400 days
    python -m bench.retention --datasets 200 --days 200 --out docs/results/retention.json
    python -m bench.retention --datasets 10000 --batch 2500 --heap 2g --pagecache 3g \
        --state /tmp/retention-m      # M: hours; started again the same way, it goes on
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import statistics
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from bench.generate import NS, events, tables
from bench.latency import emit, percentile, tree_mb
from bench.stack import free_port, scratch
from graph.db import Graph, connect
from graph.local_server import LocalServer
from graph.probes import process_alive, read_pid
from graph.retention.run import retain
from graph.schema import apply_schema
from graph.settings import Settings
from impact.blast_radius import dataset_blast_radius
from impact.upstream import dataset_upstream
from ingest.log.archive import archive
from ingest.log.sqlite import SQLiteLog
from ingest.worker import CONSUMER, Worker


@dataclass
class Side:
    """One server and its log: with retention or without."""

    name: str
    settings: Settings
    server: LocalServer
    graph: Graph
    log: SQLiteLog
    retention: bool
    worker: Worker

    def load(self, night: list[dict[str, Any]]) -> float:
        """Append a night to the log and load it with the worker (``--batch``); its seconds."""
        started = time.perf_counter()
        self.log.append(night)
        while self.worker.run_once() is not None:
            pass
        return time.perf_counter() - started

    def appended(self, day: int, per_night: int) -> bool:
        """Whether the log holds night ``day`` already (appended before the bench was stopped)."""
        return self.log.last_seq() >= day * per_night

    def drain(self) -> float:
        """Load what the log holds and the worker has not loaded; its seconds."""
        started = time.perf_counter()
        while self.worker.run_once() is not None:
            pass
        return time.perf_counter() - started

    def keep(self, detailed: float, summary: float, pace: float = 0.0,
             busy: Callable[[], bool] = lambda: False) -> dict[str, Any]:
        done = retain(self.graph, detailed, summary, pace=pace, busy=busy)
        assert done.windows is not None
        moved = archive(self.log, self.settings.state_dir / "archive",
                        done.windows.detailed_since, self.log.position(CONSUMER))
        return {"folded": done.folded, "edges": done.edges, "nodes": sum(done.nodes.values()),
                "archived": moved.entries, "s": done.took}

    def sizes(self, on_disk: bool) -> dict[str, float]:
        """Nodes and relationships (Neo4j's count store), the log's and the archive's files;
        with ``on_disk``, the store's files too, after a clean stop (Neo4j Community writes its
        store files at a checkpoint, which a stop makes) and a start again."""
        [row] = self.graph.read("admin/graph_size")
        found = {"nodes": row["nodes"], "relationships": row["relationships"],
                 "log_mb": round(self.log.size_bytes() / 2**20, 1),
                 "archive_mb": round(tree_mb(self.settings.state_dir / "archive"), 1)}
        if on_disk:
            self.graph.close()
            self.server.stop()
            data = self.settings.state_dir / "neo4j" / "data"
            found["store_mb"] = round(tree_mb(data / "databases" / "neo4j"), 1)
            found["tx_logs_mb"] = round(tree_mb(data / "transactions" / "neo4j"), 1)
            self.server.start()
            self.graph = Graph(connect(self.settings))
            self.worker.graph = self.graph
        return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--days", type=int, default=400)
    parser.add_argument("--every", type=int, default=10, help="record sizes every N days")
    parser.add_argument("--on-disk", type=int, nargs="*", default=[120, 260, 400],
                        help="days to measure the store's files too (a stop and a start)")
    parser.add_argument("--detailed", type=float, default=90.0)
    parser.add_argument("--summary", type=float, default=365.0)
    parser.add_argument("--retire-day", type=int, default=20,
                        help="from this day on, a job in ten stops reading one of its inputs")
    parser.add_argument("--batch", type=int, default=500,
                        help="the worker's batches (events); larger loads M's nights faster")
    parser.add_argument("--heap", default="1g", help="each server's heap (M: 2g)")
    parser.add_argument("--pagecache", default="512m",
                        help="each server's page cache (M: 3g, the store without retention "
                             "reaches several GB)")
    parser.add_argument("--state", type=Path,
                        help="a directory of the bench's own, kept: a run stopped (killed, the "
                             "machine restarted) goes on from its last whole day when started "
                             "again with the same options and --state (progress.json there)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.state is not None:
        args.state.mkdir(parents=True, exist_ok=True)
    with (contextlib.nullcontext(args.state) if args.state is not None
          else scratch("lineage-retention-")) as work:
        progress = Progress.of(work, args)
        sides = [_side(work, "off", False, args.batch, args.heap, args.pagecache),
                 _side(work, "on", True, args.batch, args.heap, args.pagecache)]
        try:
            emit(_run(sides, args, progress), args.out)
        finally:
            for side in sides:
                side.graph.close()
                side.server.stop()


def _side(work: Path, name: str, retention: bool, batch: int = 500, heap: str = "1g",
          pagecache: str = "512m") -> Side:
    settings = Settings(state_dir=work / name, neo4j_bolt_port=free_port(),
                        neo4j_http_port=free_port(), neo4j_heap=heap, neo4j_pagecache=pagecache)
    server = LocalServer(settings)
    _stop_left(server)
    server.start()
    graph = Graph(connect(settings))
    apply_schema(graph)
    (work / name / "log").mkdir(parents=True, exist_ok=True)
    events = SQLiteLog(work / name / "log" / "events.db")
    return Side(name, settings, server, graph, events, retention, Worker(graph, events, batch))


@dataclass
class Progress:
    """How far a run with ``--state`` got: the last whole day and the rows recorded by then."""

    path: Path | None
    day: int = 0
    rows: list[dict[str, Any]] = field(default_factory=list)

    OPTIONS = ("datasets", "days", "every", "on_disk", "detailed", "summary", "retire_day",
               "batch")

    @classmethod
    def of(cls, work: Path, args: argparse.Namespace) -> Progress:
        if args.state is None:
            return cls(None)
        path = work / "progress.json"
        options = {k: getattr(args, k) for k in cls.OPTIONS}
        if not path.is_file():
            return cls(path)
        saved = json.loads(path.read_text(encoding="utf-8"))
        if saved["options"] != options:
            raise SystemExit(f"{path} is of a run with other options ({saved['options']}): "
                             "start it again with those, or give another --state")
        print(f"going on from day {saved['day']} ({path})", file=sys.stderr, flush=True)
        return cls(path, saved["day"], saved["rows"])

    def save(self, args: argparse.Namespace, day: int) -> None:
        self.day = day
        if self.path is not None:
            options = {k: getattr(args, k) for k in self.OPTIONS}
            self.path.write_text(json.dumps({"options": options, "day": day, "rows": self.rows},
                                            default=str), encoding="utf-8")


def _stop_left(server: LocalServer) -> None:
    """Stop a server a stopped run left on this state directory (``--state``): it answers on
    ports of that run's."""
    pid = read_pid(server.pid_file)
    if pid is None or not process_alive(pid):
        return
    os.kill(pid, signal.SIGTERM)
    for _ in range(600):
        if not process_alive(pid):
            return
        time.sleep(0.1)
    raise SystemExit(f"the Neo4j server {pid} of {server.pid_file} did not stop")


def _run(sides: list[Side], args: argparse.Namespace, progress: Progress) -> dict[str, Any]:
    ts = tables(args.datasets)
    per_night = len(ts)
    nights = events(ts, days=args.days + 11)  # and eleven for the ingest beside a retention run
    for _ in islice(nights, progress.day * per_night):  # the days done before a stop
        pass
    days = progress.rows
    dropped = {f"build_{t.name}": t.inputs[-1] for t in ts[::10] if len(t.inputs) >= 2}
    for day in range(progress.day + 1, args.days + 1):
        night = list(islice(nights, per_night))
        if day >= args.retire_day:
            night = [_without_input(e, dropped.get(e["job"]["name"])) for e in night]
        row: dict[str, Any] = {"day": day}
        for side in sides:  # alternated, night by night, on the same machine
            loaded = side.drain() if side.appended(day, per_night) else side.load(night)
            row[f"{side.name} load s"] = round(loaded, 3)
            if side.retention:
                row["retention"] = side.keep(args.detailed, args.summary)
        if day % args.every == 0 or day == args.days or day in args.on_disk:
            for side in sides:
                row[side.name] = side.sizes(day in args.on_disk or day == args.days)
            days.append(row)
            print(row, flush=True)
        progress.save(args, day)
    found: dict[str, Any] = {"datasets": args.datasets, "days": args.days, "batch": args.batch,
                             "heap": args.heap, "pagecache": args.pagecache,
                             "detailed days": args.detailed, "summary days": args.summary,
                             "events per night": per_night, "retire day": args.retire_day,
                             "jobs that stop reading an input": len(dropped), "sizes": days}
    on = [d["on"] for d in days if d["day"] >= min(120, args.days)]
    found["on, from day 120: store MB min/max"] = [min(d["store_mb"] for d in on if "store_mb" in d),
                                                   max(d["store_mb"] for d in on if "store_mb" in d)]
    found["on, from day 120: nodes min/max"] = [min(d["nodes"] for d in on),
                                                max(d["nodes"] for d in on)]
    found["latency"] = _latency(sides, ts)
    found["ingest while retention runs"] = _ingest_beside_retention(sides[1], nights, per_night,
                                                                    args)
    return found


def _without_input(event: dict[str, Any], name: str | None) -> dict[str, Any]:
    """``event`` as its job states it once it no longer reads ``name``: the input gone, and the
    column lineage from it (a column left with none has no lineage entry)."""
    if name is None:
        return event
    outputs = []
    for out in event.get("outputs", []):
        lineage = out["facets"].get("columnLineage")
        if lineage is not None:
            fields = {col: {"inputFields": kept} for col, f in lineage["fields"].items()
                      if (kept := [i for i in f["inputFields"] if i["name"] != name])}
            out = {**out, "facets": {**out["facets"], "columnLineage": {"fields": fields}}}
        outputs.append(out)
    return {**event, "inputs": [i for i in event.get("inputs", []) if i["name"] != name],
            "outputs": outputs}


def _latency(sides: list[Side], ts: list[Any], asks: int = 200,
             warm: int = 20) -> dict[str, dict[str, dict[str, float]]]:
    """p50/p95 of each question on each side, the same names asked of both sides in turn (so
    that the machine's moods fall on both alike), after ``warm`` asks not counted."""
    rng = random.Random(3)
    sources = [t.name for t in ts if t.layer == 0]
    sinks = [t.name for t in ts if t.layer == 3]
    found: dict[str, dict[str, dict[str, float]]] = {side.name: {} for side in sides}
    for name, ask, names in (("blast radius", dataset_blast_radius, sources),
                             ("upstream", dataset_upstream, sinks)):
        took: dict[str, list[float]] = {side.name: [] for side in sides}
        for _ in range(warm + asks):
            asked = rng.choice(names)
            for side in sides:
                started = time.perf_counter()
                ask(side.graph, NS, asked)
                took[side.name].append((time.perf_counter() - started) * 1000)
        for side in sides:
            counted = took[side.name][warm:]
            found[side.name][name] = {"p50 ms": round(statistics.median(counted), 2),
                                      "p95 ms": round(percentile(counted, 95), 2)}
    return found


def _ingest_beside_retention(side: Side, nights: Any, per_night: int,
                             args: argparse.Namespace, pairs: int = 5) -> dict[str, Any]:
    """A night alone, then a night that arrives while a retention run works (one that has
    folding to do: a detailed window a day shorter), the run as the worker keeps it (its pace,
    LINEAGE_RETENTION_PACE, and giving way while the worker writes), alternated ``pairs``
    times after a night untimed (the store was just stopped and started); events per second
    each, and how long the runs took."""
    side.load(list(islice(nights, per_night)))
    alone, beside, took = [], [], []
    detailed = args.detailed
    pace = Settings().retention_pace
    for _ in range(pairs):
        night = list(islice(nights, per_night))
        alone.append(per_night / side.load(night))
        detailed -= 1  # the next run folds a day's runs
        kept: list[dict[str, Any]] = []
        keeper = threading.Thread(target=_keep_into, args=(
            kept, side, detailed, max(detailed, args.summary), pace))
        night = list(islice(nights, per_night))
        keeper.start()
        time.sleep(0.2)  # the night arrives once the run is at work
        beside.append(per_night / side.load(night))
        keeper.join()
        took.append(kept[0]["s"])
    return {"pace": pace, "alone events/s": [round(x) for x in alone],
            "beside a retention run events/s": [round(x) for x in beside],
            "retention run s": took,
            "ratio of medians": round(statistics.median(beside) / statistics.median(alone), 3)}


def _keep_into(kept: list[dict[str, Any]], side: Side, detailed: float, summary: float,
               pace: float) -> None:
    kept.append(side.keep(detailed, summary, pace, side.worker.activity.busy))


if __name__ == "__main__":
    main()
