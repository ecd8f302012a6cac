"""Latency of the four questions on a generated graph, against an in-memory floor.

Generates lineage with ``bench.generate`` (default 10,000 datasets, about 100,000 columns), loads it
through the real ingest path into a dedicated Neo4j (its own state directory and ports, so your data
is never touched), then times each question over sampled nodes through the same Python functions
the API and CLI call (driver round trip included, HTTP excluded). For each question it reports
p50/p95 in milliseconds, and for the traversals the ratio to the same walk done by networkx in
memory on the generator's own graph (the floor). Blast-radius answers are checked against that
ground truth.

    python -m bench.latency                     # 10k datasets
    python -m bench.latency --datasets 1000     # quicker
"""

from __future__ import annotations

import argparse
import difflib
import gc
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import networkx as nx
import platformdirs

from bench.generate import NS, Table, events, tables
from graph.db import Graph, connect
from graph.local_server import LocalServer
from graph.schema import apply_schema
from graph.settings import Settings
from impact.blast_radius import column_blast_radius, dataset_blast_radius
from impact.discover import did_you_mean
from impact.marquez.lineage import column_lineage, lineage
from impact.root_cause import root_cause_dataset
from impact.upstream import dataset_upstream
from impact.where import where
from ingest.pipeline import Ingester, IngestReport
from ingest.read import RawItem


def bench_settings() -> Settings:
    state = os.environ.get("LINEAGE_BENCH_STATE_DIR") or platformdirs.user_cache_dir(
        "lineage-graph-bench", appauthor=False)
    # 2 GiB heap and 1 GiB page cache up to L; a larger graph is measured with more
    # (LINEAGE_BENCH_NEO4J_HEAP, LINEAGE_BENCH_NEO4J_PAGECACHE), as its deployment would have
    return Settings(state_dir=Path(state), neo4j_bolt_port=27687, neo4j_http_port=27474,
                    neo4j_heap=os.environ.get("LINEAGE_BENCH_NEO4J_HEAP", "2g"),
                    neo4j_pagecache=os.environ.get("LINEAGE_BENCH_NEO4J_PAGECACHE", "1g"),
                    query_timeout=120)


def estate_options(doc: str) -> argparse.Namespace:
    """The options of a bench over the generated estate: its size, seed, samples per kind and
    where to write the figures."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--datasets", type=int, default=1000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--samples", type=int, default=20)
    p.add_argument("--json", type=Path)
    return p.parse_args()


def loaded_estate(datasets: int, seed: int, days: int
                  ) -> tuple[Graph, list[Table], list[dict[str, Any]], float]:
    """The bench Neo4j (started if it is not), wiped and loaded with ``days`` nights of the
    generated estate of ``datasets`` tables: the graph, the tables, the events, and the seconds
    the load took."""
    settings = bench_settings()
    LocalServer(settings).start()
    graph = Graph(connect(settings), timeout=settings.query_timeout)
    apply_schema(graph)
    ts = tables(datasets, seed)
    evs = list(events(ts, seed, days=days))
    graph.run_statements("admin/wipe")
    started = time.perf_counter()
    report = Ingester(graph, batch_size=500).ingest(
        (RawItem(f"gen[{i}]", obj=e) for i, e in enumerate(evs)), IngestReport())
    assert report.loaded == len(evs), report.rejected[:3]
    return graph, ts, evs, time.perf_counter() - started


def emit(results: dict[str, Any], path: Path | None) -> None:
    """A bench's results as JSON on stdout, and in ``path`` when given."""
    text = json.dumps(results, indent=2)
    print(text)
    if path:
        path.write_text(text)


def percentile(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(p / 100 * (len(xs) - 1))))]


def timed(fn: Callable[..., Any], repeat: int = 1) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best * 1000, out


def job_centric(ts: list[Table]) -> nx.DiGraph:
    """Dataset -> dataset through one job (an input of a table's job -> the table it writes)."""
    g = nx.DiGraph()
    for t in ts:
        g.add_node(t.name)
        g.add_edges_from((src, t.name) for src in t.inputs)
    return g


def tree_mb(path: Path) -> float:
    """MiB of the files under ``path`` (0 when it does not exist)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20 if path.exists() else 0.0


def server_footprint(server: LocalServer, settings: Settings, events_loaded: int) -> dict[str, Any]:
    """Peak resident memory of the Neo4j JVM, then (after a clean stop, which checkpoints the store)
    its disk use, also per million events. Stops the bench server."""
    home = settings.state_dir / "neo4j"
    pid = (home / "run" / "neo4j.pid").read_text().strip()
    status = Path(f"/proc/{pid}/status").read_text()
    peak_kb = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM")))
    server.stop()
    store = tree_mb(home / "data" / "databases" / "neo4j")
    per_m = 1e6 / max(1, events_loaded)
    return {"peak_rss_mb": peak_kb / 1024, "store_mb": store,
            "tx_logs_mb": tree_mb(home / "data" / "transactions" / "neo4j"),
            "store_mb_per_million_events": store * per_m,
            "note": "peak RSS since the server started (heap and page cache are capped by settings); "
                    "transaction logs are preallocated 256 MiB files kept by the retention policy"}


def ground_truth(ts: list[Table]) -> tuple[nx.DiGraph, ColumnFlow]:
    """Data-flow graphs (source -> derived) of datasets and columns, from the generator itself.

    Every input of a table's job feeds the table (docs/graph-model.md: an input its column
    lineage never names keeps a coarse edge, read with no column lineage); columns feed columns
    as the column lineage says."""
    ds = nx.DiGraph()
    for t in ts:
        ds.add_node(t.name)
        for src in t.inputs:
            ds.add_edge(src, t.name)
        for edges in t.lineage.values():
            for src, *_ in edges:
                ds.add_edge(src, t.name)
    return ds, ColumnFlow(ts)


Col = tuple[str, str]


class ColumnFlow:
    """The columns' data flow in plain dicts: a networkx graph of ten million columns (1,000,000
    datasets) would not fit beside Neo4j on this machine. Downstream edges are kept; upstream
    ones are the tables' own column lineage."""

    def __init__(self, ts: list[Table]) -> None:
        self.tables = {t.name: t for t in ts}
        self.down: dict[Col, list[Col]] = {}
        for t in ts:
            for col, edges in t.lineage.items():
                for src, field, *_ in edges:
                    self.down.setdefault((src, field), []).append((t.name, col))

    def __contains__(self, node: Col) -> bool:
        return node in self.down or bool(self.up(node))

    def up(self, node: Col) -> list[Col]:
        t = self.tables.get(node[0])
        return [(src, field) for src, field, *_ in (t.lineage.get(node[1], []) if t else [])]

    def reach(self, start: Col, cutoff: int, upstream: bool = False) -> dict[Col, int]:
        """Every column within ``cutoff`` edges of ``start`` (itself at 0), with its distance:
        a breadth-first walk, as networkx's single_source_shortest_path_length."""
        seen, frontier = {start: 0}, [start]
        for depth in range(1, cutoff + 1):
            nxt = []
            for node in frontier:
                for other in (self.up(node) if upstream else self.down.get(node, [])):
                    if other not in seen:
                        seen[other] = depth
                        nxt.append(other)
            if not nxt:
                break
            frontier = nxt
        return seen


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--samples", type=int, default=40, help="nodes sampled per question")
    p.add_argument("--json", type=Path, help="also write the results here")
    p.add_argument("--keep", action="store_true", help="reuse an already loaded bench graph")
    a = p.parse_args()
    rng = random.Random(a.seed)

    settings = bench_settings()
    server = LocalServer(settings)
    print(f"bench Neo4j in {settings.state_dir} (bolt {settings.neo4j_bolt_port})", file=sys.stderr)
    server.start()
    graph = Graph(connect(settings), timeout=settings.query_timeout)
    apply_schema(graph)
    graph.driver.execute_query("CALL db.awaitIndexes(600)")  # an index new to a kept store

    ts = tables(a.datasets, a.seed)
    n_columns = sum(len(t.columns) for t in ts)
    n_events = len(ts)  # one run a table, one event a run (events(): one day, no START events)
    ingest_s = None
    if not a.keep:
        evs = list(events(ts, a.seed))
        graph.run_statements("admin/wipe")
        t0 = time.perf_counter()
        report = Ingester(graph, batch_size=500).ingest(
            (RawItem(f"gen[{i}]", obj=e) for i, e in enumerate(evs)), IngestReport(),
            progress=lambda n: print(".", end="", file=sys.stderr, flush=True))
        ingest_s = time.perf_counter() - t0
        print(file=sys.stderr)
        assert report.loaded == len(evs) == n_events, report.rejected[:3]
        del evs
    counts = graph.driver.execute_query(
        "MATCH (n) WITH count(n) AS nodes MATCH ()-[r]->() RETURN nodes, count(r) AS rels").records[0]

    ds_flow, col_flow = ground_truth(ts)
    # millions of objects live on (tables, ground truth): out of the collector's passes, whose full
    # collection of them (1.5 s at L) would otherwise land inside a timed question now and then
    gc.collect()
    gc.freeze()
    by_layer = {layer: [t for t in ts if t.layer == layer] for layer in range(4)}
    sources = rng.sample(by_layer[0] + by_layer[1], a.samples)
    dashes = rng.sample(by_layer[3], a.samples)
    staging = rng.sample(by_layer[1], a.samples)
    # the hubs: the sources with the most downstream datasets (the worst case for blast radius)
    hubs = sorted(by_layer[0], key=lambda t: -len(nx.descendants(ds_flow, t.name)))[:max(5, a.samples // 4)]
    src_cols = [(t.name, rng.choice(t.columns)) for t in rng.sample(by_layer[0], a.samples)]

    results: dict[str, dict[str, Any]] = {}
    mismatches = checked = 0

    def record(name: str, ours: list[float], floor: list[float] | None, sizes: list[int]) -> None:
        row = {"p50_ms": statistics.median(ours), "p95_ms": percentile(ours, 95),
               "median_answer_size": statistics.median(sizes), "max_answer_size": max(sizes)}
        if floor:
            row["floor_p50_ms"] = statistics.median(floor)
            row["ratio_p50"] = row["p50_ms"] / max(row["floor_p50_ms"], 1e-6)
        results[name] = row
        print(f"{name:38s} p50 {row['p50_ms']:8.1f} ms  p95 {row['p95_ms']:8.1f} ms"
              + (f"  floor {row['floor_p50_ms']:7.2f} ms  x{row['ratio_p50']:.0f}" if floor else ""),
              file=sys.stderr)

    for depth in (5, 10, 20):
        ours, floor, sizes = [], [], []
        for t in sources:
            ms, ans = timed(lambda t=t, d=depth: dataset_blast_radius(graph, NS, t.name, d))
            fl, truth = timed(lambda t=t, d=depth: nx.single_source_shortest_path_length(
                ds_flow, t.name, cutoff=d))
            got = {i.name: i.distance for i in ans.impacted if i.kind == "dataset"}
            mismatches += got != {k: v for k, v in truth.items() if k != t.name}
            checked += 1
            ours.append(ms)
            floor.append(fl)
            sizes.append(len(ans.impacted))
        record(f"blast radius, dataset, depth {depth}", ours, floor, sizes)

    ours, floor, sizes = [], [], []
    for t in hubs:
        ms, ans = timed(lambda t=t: dataset_blast_radius(graph, NS, t.name, 20))
        fl, truth = timed(lambda t=t: nx.single_source_shortest_path_length(ds_flow, t.name, cutoff=20))
        mismatches += {i.name for i in ans.impacted if i.kind == "dataset"} != set(truth) - {t.name}
        checked += 1
        ours.append(ms)
        floor.append(fl)
        sizes.append(len(ans.impacted))
    record("blast radius, dataset, hubs, depth 20", ours, floor, sizes)

    ours, floor, sizes = [], [], []
    for name, col in src_cols:
        ms, ans = timed(lambda n=name, c=col: column_blast_radius(graph, NS, n, c, 20))
        fl, truth = timed(lambda n=name, c=col: col_flow.reach((n, c), 20)
                          if (n, c) in col_flow else {})
        expected = {f"{d}.{c}" for (d, c) in truth if (d, c) != (name, col)}
        mismatches += {i.name for i in ans.impacted} != expected
        checked += 1
        ours.append(ms)
        floor.append(fl)
        sizes.append(len(ans.impacted))
    record("blast radius, column, depth 20", ours, floor, sizes)

    rev = ds_flow.reverse(copy=False)
    ours, floor, sizes = [], [], []
    for t in dashes:
        ms, ans = timed(lambda t=t: dataset_upstream(graph, NS, t.name, 20))
        fl, truth = timed(lambda t=t: nx.single_source_shortest_path_length(rev, t.name, cutoff=20))
        mismatches += {i.name for i in ans.impacted} != set(truth) - {t.name}
        checked += 1
        ours.append(ms)
        floor.append(fl)
        sizes.append(len(ans.impacted))
    record("upstream, dataset, depth 20", ours, floor, sizes)

    ours, sizes = [], []
    for t in dashes:
        ms, ans = timed(lambda t=t: root_cause_dataset(graph, NS, t.name, 20))
        ours.append(ms)
        sizes.append(ans.examined)
    record("root cause, dataset, depth 20", ours, None, sizes)

    ours, sizes = [], []
    for name, col in src_cols:
        ms, ans = timed(lambda n=name, c=col: where(graph, NS, n, c, 20))
        ours.append(ms)
        sizes.append(len(ans.reaches))
    record("GDPR where, column, depth 20", ours, None, sizes)

    # Marquez's GET /api/v1/lineage: the dataset set is checked against the job-centric ground
    # truth (datasets within DEPTH jobs up or down the data flow); `undirected` counts the datasets
    # a walk that ignores direction (readers of inputs, siblings) would add on the same graph
    job_flow = job_centric(ts)
    both = job_flow.to_undirected(as_view=True)
    undirected_extra: dict[int, list[int]] = {}
    for depth in (5, 10, 20):
        ours, floor, sizes = [], [], []
        for t in staging:
            ms, ans = timed(lambda t=t, d=depth: lineage(graph, f"dataset:{NS}:{t.name}", d))
            fl, reach = timed(lambda t=t, d=depth: set(nx.single_source_shortest_path_length(
                job_flow, t.name, cutoff=d)) | set(nx.single_source_shortest_path_length(
                    job_flow.reverse(copy=False), t.name, cutoff=d)))
            names = {n["data"]["name"] for n in ans["graph"] if n["type"] == "DATASET"}
            mismatches += names != reach
            checked += 1
            undirected_extra.setdefault(depth, []).append(
                len(set(nx.single_source_shortest_path_length(both, t.name, cutoff=depth)) - reach))
            ours.append(ms)
            floor.append(fl)
            sizes.append(len(ans["graph"]))
        record(f"Marquez-shaped lineage, depth {depth}", ours, floor, sizes)

    # Marquez's GET /api/v1/column-lineage?withDownstream=true around a source column
    ours, floor, sizes = [], [], []
    for name, col in src_cols:
        ms, ans = timed(lambda n=name, c=col: column_lineage(
            graph, f"datasetField:{NS}:{n}:{c}", 10, with_downstream=True))
        fl, fields = timed(lambda n=name, c=col: (set(col_flow.reach((n, c), 10)) | set(
            col_flow.reach((n, c), 10, upstream=True))) if (n, c) in col_flow else set())
        pairs = {(n_["data"]["dataset"], n_["data"]["field"]) for n_ in ans["graph"]}
        if fields:  # a sampled column without any lineage has nothing to compare
            mismatches += pairs != fields
            checked += 1
        ours.append(ms)
        floor.append(fl)
        sizes.append(len(ans["graph"]))
    record("Marquez-shaped column lineage, downstream, depth 10", ours, floor, sizes)

    # "did you mean" for a misspelt dataset name (a letter dropped): the best suggestion must be
    # as close as the closest of all names (difflib over every name in memory: several names are
    # often equally close to a typo, the intended one among them)
    ours, sizes = [], []
    every_name = [t.name.lower() for t in ts]
    for t in staging:
        cut = len(t.name) // 2
        typo = t.name[:cut] + t.name[cut + 1:]
        ms, found = timed(lambda n=typo: did_you_mean(graph, "dataset", n))
        best = difflib.get_close_matches(typo.lower(), every_name, n=1, cutoff=0.6)
        closeness = [difflib.SequenceMatcher(None, typo.lower(), n).ratio()
                     for n in best + [f.name.lower() for f in found[:1]]]
        mismatches += bool(best) and (not found or closeness[1] < closeness[0])
        checked += 1
        ours.append(ms)
        sizes.append(len(found))
    record("did you mean, dataset", ours, None, sizes)

    meta = {"datasets": len(ts), "columns": n_columns, "events": n_events,
            "nodes": counts["nodes"], "relationships": counts["rels"], "samples": a.samples,
            "ingest_s": ingest_s, "ingest_events_per_s": n_events / ingest_s if ingest_s else None,
            "answers_checked_against_ground_truth": checked,
            "answers_differing_from_ground_truth": mismatches,
            "undirected_walk_extra_datasets_median": {
                d: statistics.median(v) for d, v in undirected_extra.items()},
            "server": server_footprint(server, settings, n_events),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            "neo4j": settings.neo4j_version}
    print(json.dumps(meta, indent=2), file=sys.stderr)
    print("| question | p50 ms | p95 ms | in-memory floor p50 ms | ours / floor | answer size median (max) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        floor_s = f"{r['floor_p50_ms']:.2f}" if "floor_p50_ms" in r else "-"
        ratio = f"{r['ratio_p50']:.0f}x" if "ratio_p50" in r else "-"
        print(f"| {name} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {floor_s} | {ratio} "
              f"| {r['median_answer_size']:.0f} ({r['max_answer_size']}) |")
    if a.json:
        a.json.write_text(json.dumps({"meta": meta, "results": results}, indent=2))
    graph.close()
    if mismatches:
        sys.exit(f"{mismatches} answers differ from the generator's ground truth")


if __name__ == "__main__":
    main()
