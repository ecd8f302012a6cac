"""Side by side with a running Marquez: the same events, the same questions, over HTTP, in one run.

Generates spec-complete lineage with ``bench.generate`` (every facet with ``_producer`` and
``_schemaURL``, which Marquez requires), starts lineage-graph on the bench Neo4j (a fresh store, its
own ports, a ``lineage serve`` and a ``lineage worker``), and talks to the peer only through its URL:

1. ingest: CLIENTS clients post every event, one per request (what producers send), to each server
   in turn; events/s until acknowledged, and until the last run of each client is queryable through
   Marquez's run endpoint on that server;
2. ``GET /api/v1/lineage`` at depths 2, 5, 10, 20 and ``GET /api/v1/column-lineage`` with
   ``withDownstream=true`` from the same sampled nodes, the two servers alternating request by
   request; p50/p95, and each answer's datasets (or fields) against the generator's ground truth;
3. questions Marquez does not answer (blast radius, root cause, GDPR reach) on ours, over HTTP and
   in process, so the HTTP path's own cost shows;
4. memory (peak proportional set size of each side's processes, sampled every second) and disk
   (Neo4j's store and our event log; Marquez's database through ``psql``, when reachable);
5. ours with arrays of 100 events per request, as an extra row (into other namespaces, after the
   questions, so that both servers answered over the same graph).

    peer.sh start                                         # ../shared/peers/marquez (Marquez's README)
    python -m bench.peer --peer-url http://127.0.0.1:5100 --datasets 1000 --json s.json

The peer's database should be empty (``peer.sh stop && peer.sh reset-db && peer.sh start``):
the bench's namespace must hold only this run's events on both sides.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import re
import statistics
import sys
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Any

import networkx as nx

from bench.generate import NS, Table, spec_complete, tables
from bench.generate import events as gen_events
from bench.latency import emit, ground_truth, job_centric, percentile
from bench.peer_io import Ours, Peer, Sampler, get, post_all
from bench.wire import payloads

DEPTHS = (2, 5, 10, 20)


def _ingest(side: Ours | Peer, evs: list[dict[str, Any]], clients: int,
            per_request: int = 1, quiet: bool = False) -> dict[str, Any]:
    """Post every event, then wait until the last run of each client is queryable there."""
    bodies = payloads(evs, clients, per_request)
    t0 = time.perf_counter()
    post_all(side.url + "/api/v1/lineage", bodies)
    acked = time.perf_counter() - t0
    # each client's last event that ends a run (its run is then COMPLETED or FAILED there)
    last_runs = {next(e for e in reversed(evs[k::clients]) if e["eventType"] in ("COMPLETE", "FAIL"))
                 ["run"]["runId"] for k in range(clients)}
    deadline = time.perf_counter() + 3600
    for run_id in last_runs:
        while True:
            _, status, body = get(f"{side.url}/api/v1/jobs/runs/{run_id}", timeout=30)
            if status == 200 and body.get("state") in ("COMPLETED", "FAILED"):
                break
            if time.perf_counter() > deadline:
                raise SystemExit(f"{side.name}: run {run_id} not ended an hour after its events")
            time.sleep(0.05)
    queryable = time.perf_counter() - t0
    row = {"events": len(evs), "clients": clients, "per_request": per_request,
           "acknowledged_per_s": len(evs) / acked, "queryable_per_s": len(evs) / queryable,
           "seconds_to_acknowledge": acked, "seconds_to_queryable": queryable}
    if not quiet:
        print(f"ingest {side.name} ({per_request}/request): {row['acknowledged_per_s']:.0f} "
              f"events/s acknowledged, {row['queryable_per_s']:.0f}/s queryable", file=sys.stderr)
    return row


def _warm(side: Ours | Peer, datasets: int, events: int, seconds: float, clients: int) -> int:
    """Load ``events`` events of other namespaces, then more, WARMUP_CHUNK at a time, until
    ``seconds`` have passed; returns how many were loaded."""
    t0, done, chunk = time.perf_counter(), 0, 0
    while (events and done < events) or time.perf_counter() - t0 < seconds:
        size = min(events - done, WARMUP_CHUNK) if events and done < events else WARMUP_CHUNK
        source = (spec_complete(e) for e in gen_events(tables(datasets, 99 + chunk), 99 + chunk,
                                                        starts=True))
        warm = renamed(list(itertools.islice(source, size)), f"warmup{chunk}" if chunk else "warmup")
        _ingest(side, warm, clients, quiet=True)
        done, chunk = done + len(warm), chunk + 1
    print(f"warm-up {side.name}: {done} events in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return done


def _depths(text: str) -> tuple[int, ...]:
    """``2,5,10`` as depths (argparse reports the error as a usage error)."""
    try:
        depths = tuple(int(d) for d in text.split(",") if d.strip())
    except ValueError:
        depths = ()
    if not depths or min(depths) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give depths of 1 or more, comma-separated, "
                                         "e.g. 2,5,10")
    return depths


def _per_million(mb: dict[str, float] | str, events: int) -> dict[str, Any]:
    """Disk use, and per million events loaded (not counting preallocated transaction logs)."""
    if isinstance(mb, str):
        return {"not_measured": mb}
    kept = sum(v for k, v in mb.items() if k != "transaction_logs")
    return {"mb": mb, "events": events, "mb_per_million_events": kept * 1e6 / events}


WARMUP_CHUNK = 400
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def renamed(evs: list[dict[str, Any]], to: str) -> list[dict[str, Any]]:
    """The same events in other namespaces (``warehouse://TO:5432``, ``bench-TO``), with run ids
    of their own (each derived from the original's): with the same ids, the runs would be the
    original ones, already ended, and answer "queryable" before the worker loads the copies."""
    def run_id(m: re.Match[str]) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_OID, f"{to}:{m.group(0)}"))

    return [json.loads(_UUID.sub(run_id, json.dumps(e).replace(NS, f"warehouse://{to}:5432")
                                 .replace('"namespace": "bench"', f'"namespace": "bench-{to}"')))
            for e in evs]


def _node(*parts: str) -> str:
    """A Marquez node id (``dataset:NS:NAME``), encoded as a query value."""
    return urllib.parse.quote(":".join(parts), safe="")


def _summary(ms: list[float], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    if not ms:  # nothing answered: still say how many were asked and timed out
        return {"n": 0, **(extra or {})}
    return {"n": len(ms), "p50_ms": statistics.median(ms), "p95_ms": percentile(ms, 95), **(extra or {})}


def _walks(sides: list[Ours | Peer], ts: list[Table], rng: random.Random, samples: int,
           budget_s: float, depths: tuple[int, ...] = DEPTHS) -> dict[str, Any]:
    """Marquez's two lineage operations on both servers, alternating, checked against the truth."""
    job_flow = job_centric(ts)
    _, col_flow = ground_truth(ts)
    staging = rng.sample([t for t in ts if t.layer == 1], samples)
    src_cols = [(t.name, rng.choice(t.columns)) for t in rng.sample([t for t in ts if t.layer == 0], samples)]
    stg_cols = [(t.name, rng.choice(list(t.lineage))) for t in staging]
    out: dict[str, Any] = {}

    def dataset_truth(name: str, depth: int) -> set[str]:
        down = nx.single_source_shortest_path_length(job_flow, name, cutoff=depth)
        up = nx.single_source_shortest_path_length(job_flow.reverse(copy=False), name, cutoff=depth)
        return set(down) | set(up)

    def field_truth(key: tuple[str, str], depth: int) -> set[tuple[str, str]]:
        if key not in col_flow:
            return {key}
        down = col_flow.reach(key, depth)
        up = col_flow.reach(key, depth, upstream=True)
        return set(down) | set(up)

    for depth in depths:
        out[f"lineage, depth {depth}"] = _compare(
            sides, budget_s,
            [(f"/api/v1/lineage?nodeId={_node('dataset', NS, t.name)}&depth={depth}",
              dataset_truth(t.name, depth))
             for t in staging],
            lambda body: {n["data"]["name"] for n in body.get("graph", []) if n["type"] == "DATASET"})
    for label, cols in (("a source column", src_cols), ("a staging column", stg_cols)):
        out[f"column lineage, downstream, depth 10, {label}"] = _compare(
            sides, budget_s,
            [(f"/api/v1/column-lineage?nodeId={_node('datasetField', NS, n, c)}&depth=10&withDownstream=true",
              field_truth((n, c), 10)) for n, c in cols],
            lambda body: {(n["data"]["dataset"], n["data"]["field"]) for n in body.get("graph", [])
                          if n["type"] == "DATASET_FIELD"})
    return out


def _compare(sides: list[Ours | Peer], budget_s: float, asks: list[tuple[str, set[Any]]],
             names: Any) -> dict[str, Any]:
    """Each ask on each side in turn; a side that spent ``budget_s`` on this question stops."""
    times: dict[str, list[float]] = {s.name: [] for s in sides}
    diff: dict[str, dict[str, list[int]]] = {s.name: {"missing": [], "extra": [], "size": []} for s in sides}
    errors: dict[str, int] = {s.name: 0 for s in sides}
    spent: dict[str, float] = {s.name: 0.0 for s in sides}  # seconds, timed-out requests included
    for path, truth in asks:
        for side in sides:
            if spent[side.name] > budget_s:
                continue
            ms, status, body = get(side.url + path, timeout=side.timeout)
            spent[side.name] += ms / 1000
            if status != 200:
                errors[side.name] += 1
                if status == 0 and isinstance(side, Peer):  # timed out
                    side.cancel_abandoned()
                continue
            times[side.name].append(ms)
            got = names(body)
            diff[side.name]["missing"].append(len(truth - got))
            diff[side.name]["extra"].append(len(got - truth))
            diff[side.name]["size"].append(len(got))
    row = {}
    for side in sides:
        d = diff[side.name]
        row[side.name] = _summary(times[side.name], {
            "errors_or_timeouts": errors[side.name], "asked": len(asks),
            "answers_differing": sum(1 for m, e in zip(d["missing"], d["extra"], strict=True) if m or e),
            "missing_median": statistics.median(d["missing"]) if d["missing"] else None,
            "extra_median": statistics.median(d["extra"]) if d["extra"] else None,
            "extra_max": max(d["extra"], default=None),
            "answer_size_median": statistics.median(d["size"]) if d["size"] else None,
            # in the order asked: a slow first answer (a cold cache, a query planned again) shows
            "ms": [round(ms, 1) for ms in times[side.name]]})
    return row


def _ours_only(ours: Ours, ts: list[Table], rng: random.Random, samples: int) -> dict[str, Any]:
    """Questions Marquez has no equivalent of, and Marquez's lineage, over HTTP and in process."""
    srcs = rng.sample([t for t in ts if t.layer == 0], samples)
    dashes = rng.sample([t for t in ts if t.layer == 3], samples)
    staging = rng.sample([t for t in ts if t.layer == 1], samples)
    cols = [(t.name, rng.choice(t.columns)) for t in srcs]
    q = urllib.parse.quote
    ns = q(NS, safe="")
    asks: dict[str, list[tuple[str, tuple[str, ...]]]] = {
        "blast radius, dataset, depth 20": [
            (f"/api/v1/impact/dataset?namespace={ns}&name={q(t.name)}&depth=20", ("blast", t.name))
            for t in srcs],
        "root cause, dataset, depth 20": [
            (f"/api/v1/root-cause/dataset?namespace={ns}&name={q(t.name)}&depth=20", ("cause", t.name))
            for t in dashes],
        "GDPR where, column, depth 20": [
            (f"/api/v1/where?namespace={ns}&dataset={q(n)}&column={q(c)}&depth=20", ("where", n, c))
            for n, c in cols],
        "lineage, depth 10": [
            (f"/api/v1/lineage?nodeId={q(f'dataset:{NS}:{t.name}', safe='')}&depth=10", ("lineage", t.name))
            for t in staging],
    }
    out = {}
    for question, items in asks.items():
        http, local = [], []
        for i, (path, call) in enumerate(items):
            # alternate which goes first: the second finds the node's pages already cached
            if i % 2:
                local.append(ours.in_process(call))
            http.append(get(ours.url + path, timeout=ours.timeout)[0])
            if not i % 2:
                local.append(ours.in_process(call))
        out[question] = _summary(http, {"in_process_p50_ms": statistics.median(local),
                                        "in_process_p95_ms": percentile(local, 95),
                                        "ms": [round(ms, 1) for ms in http],
                                        "in_process_ms": [round(ms, 1) for ms in local]})
        row = out[question]
        print(f"{question:34s} HTTP p50 {row['p50_ms']:7.1f} p95 {row['p95_ms']:7.1f} ms, "
              f"in process p50 {row['in_process_p50_ms']:7.1f} ms", file=sys.stderr)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--peer-url", default="http://127.0.0.1:5100", help="a server speaking Marquez's API")
    p.add_argument("--peer-processes", default=r"marquez-api-.*\.jar|^postgres",
                   help="regular expression over /proc/*/cmdline: the peer's processes, for memory")
    p.add_argument("--peer-db", default="postgresql://marquez:marquez@127.0.0.1:5432/marquez",
                   help="the peer's PostgreSQL, for its disk use (psql); '' to skip")
    p.add_argument("--peer-timeout", type=float, default=300, help="seconds per request to the peer")
    p.add_argument("--peer-budget", type=float, default=600,
                   help="seconds the peer may spend on one question before its samples stop")
    p.add_argument("--datasets", type=int, default=1000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--samples", type=int, default=30, help="nodes sampled per question")
    p.add_argument("--warmup-events", type=int, default=400,
                   help="events of other namespaces posted to both servers first, not measured (0: none)")
    p.add_argument("--warmup-seconds", type=float, default=0,
                   help="then more such events, 400 at a time (each batch queryable before the "
                        "next), until each server has had this long under load: a freshly "
                        "started JVM spends its first minute compiling its hot paths")
    p.add_argument("--depths", type=_depths, default=DEPTHS,
                   help="the depths of GET /api/v1/lineage, comma-separated (default 2,5,10,20); "
                        "at 10,000 datasets one depth-10 request to Marquez takes many minutes, "
                        "so a run for that one ratio asks it alone, with --peer-timeout to match")
    p.add_argument("--json", type=Path, help="also write the results here")
    a = p.parse_args()

    ts = tables(a.datasets, a.seed)
    evs = [spec_complete(e) for e in gen_events(ts, a.seed, starts=True)]
    peer = Peer(a.peer_url, a.peer_processes, a.peer_db, a.peer_timeout)
    reachable = peer.reachable()
    if reachable is not True:
        print(f"the peer at {a.peer_url} is not reachable ({reachable}): measuring ours alone",
              file=sys.stderr)
    started = time.perf_counter()
    results: dict[str, Any] = {"meta": {
        "datasets": len(ts), "columns": sum(len(t.columns) for t in ts), "events": len(evs),
        "peer_url": a.peer_url, "peer_reachable": reachable is True,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"}}
    with Ours() as ours:
        sides: list[Ours | Peer] = [ours] + ([peer] if reachable is True else [])
        sampler = Sampler({s.name: s.pids for s in sides})
        with sampler:
            warmed: dict[str, int] = {}
            if a.warmup_events or a.warmup_seconds:
                # both JVMs compile their hot paths and plan their queries first
                warmed = {s.name: _warm(s, a.datasets, a.warmup_events, a.warmup_seconds, a.clients)
                          for s in sides}
                results["warmup"] = {"events": warmed, "seconds_each": a.warmup_seconds}
            results["ingest"] = {s.name: _ingest(s, evs, a.clients) for s in sides}
            results["lineage"] = _walks(sides, ts, random.Random(a.seed), a.samples, a.peer_budget,
                                        a.depths)
            results["ours_only"] = _ours_only(ours, ts, random.Random(a.seed + 1), a.samples)
        results["memory_peak_mb"] = sampler.peaks_mb()
        results["memory_processes"] = sampler.seen
        if reachable is True:
            results["disk"] = {peer.name: _per_million(peer.disk_mb(),
                                                       warmed.get(peer.name, 0) + len(evs))}
        copies = renamed(evs, "arrays")
        results["ingest"]["ours, arrays of 100"] = _ingest(ours, copies, a.clients, per_request=100)
    # after a clean stop, which checkpoints the store (while running, it is mostly in the logs)
    results.setdefault("disk", {})[ours.name] = _per_million(
        ours.disk_mb(), warmed.get(ours.name, 0) + len(evs) + len(copies))
    results["meta"]["seconds"] = time.perf_counter() - started
    emit(results, a.json)


if __name__ == "__main__":
    main()
