"""A soak: `lineage up` under a steady load for a long time, with kill -9 of its parts early on,
every process's memory sampled. What it proves: nothing acknowledged is lost or loaded twice, and
memory stays flat once the services have warmed up.

Starts the stack (`lineage up`, its own state directory and free ports; `--log kafka` for a local
broker and `--workers` workers), then posts arrays of ARRAY events at RATE events/s over HTTP for
MINUTES, each array re-sent until acknowledged (as a producer's retrying transport does). During
the first part it kills -9 the worker, the API and Neo4j (each restarted by `lineage up` again, as
an operator or a supervisor would). Every SAMPLE seconds it reads the resident memory of each
process (API, workers, Neo4j, the broker). At the end it waits for the workers, then checks that
every acknowledged run is in the graph with exactly its events, and judges memory: for each
process that was not restarted after WARM minutes, its largest RSS over the rest of the soak
against its RSS at WARM minutes (flat: within 10%).

    python -m bench.soak                                 # 60 minutes, 200 events/s, SQLite log
    python -m bench.soak --minutes 20 --log kafka --workers 2 --out docs/results/soak.json
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from bench.generate import events, tables
from bench.latency import emit
from bench.stack import Stack, scratch
from graph.db import Graph, connect

ARRAY = 10


def _rss_mb(pid: int | None) -> float | None:
    """The resident memory of ``pid`` in MB (None when it is not running)."""
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _post(url: str, body: bytes) -> bool:
    request = urllib.request.Request(f"{url}/api/v1/lineage", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return bool(200 <= response.status < 300)
    except (urllib.error.URLError, OSError):
        return False


def load(stack: Stack, rate: float, until: float, acked: Counter[str], stop: threading.Event,
         stats: dict[str, int]) -> None:
    """Post arrays of ARRAY events at ``rate`` events/s until ``until`` (monotonic); count the
    acknowledged events per run id in ``acked``."""
    stream = events(tables(300), days=100_000, starts=True)
    pace = ARRAY / rate
    due = time.monotonic()
    while time.monotonic() < until and not stop.is_set():
        batch = [next(stream) for _ in range(ARRAY)]  # each day's runs have fresh run ids
        body = json.dumps(batch).encode()
        while not _post(stack.url, body):  # re-sent until acknowledged
            stats["retries"] += 1
            if stop.is_set():
                return
            time.sleep(0.5)
        acked.update(e["run"]["runId"] for e in batch)
        stats["arrays"] += 1
        due += pace
        time.sleep(max(0.0, due - time.monotonic()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--rate", type=float, default=200, help="events per second")
    parser.add_argument("--log", default="sqlite", help="sqlite or kafka (a local broker)")
    parser.add_argument("--workers", type=int, default=1, help="workers on a Kafka log")
    parser.add_argument("--warm", type=float, default=10, help="minutes before memory is judged")
    parser.add_argument("--sample", type=float, default=10, help="seconds between samples")
    parser.add_argument("--no-kills", action="store_true", help="a steady load only")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    with scratch("lineage-soak-") as work:
        results = soak(Stack(work / "state", args.log, args.workers), args)
    emit({k: v for k, v in results.items() if k != "samples"}, None)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))


def soak(stack: Stack, args: argparse.Namespace) -> dict[str, Any]:
    """The soak itself on ``stack``: its results, samples included."""
    stack.lineage("up")
    began = time.monotonic()
    until = began + args.minutes * 60
    acked: Counter[str] = Counter()
    stats = {"arrays": 0, "retries": 0}
    stop = threading.Event()
    loader = threading.Thread(target=load, args=(stack, args.rate, until, acked, stop, stats))
    loader.start()
    kills = [] if args.no_kills else [("worker", 0.25), ("api", 0.45), ("neo4j", 0.65)]
    kills = [(name, began + share * args.warm * 60) for name, share in kills]
    samples: list[dict[str, Any]] = []
    restarted: dict[str, float] = {}
    try:
        while loader.is_alive():
            now = time.monotonic()
            if kills and now >= kills[0][1]:
                name, _ = kills.pop(0)
                pid = stack.pids().get(name)
                if pid:
                    os.kill(pid, signal.SIGKILL)
                    time.sleep(1)
                    stack.lineage("up")  # starts again what is not running
                    restarted[name] = time.monotonic() - began
            pids = stack.pids()
            samples.append({"s": round(now - began, 1), "pids": pids,
                            "rssMB": {k: _rss_mb(p) for k, p in pids.items() if p is not None},
                            "acked": sum(acked.values())})
            print(f"{samples[-1]['s']:7.0f} s  acked {samples[-1]['acked']:8d}  " + "  ".join(
                f"{k} {v:.0f} MB" for k, v in samples[-1]["rssMB"].items() if v is not None),
                file=sys.stderr, flush=True)
            time.sleep(args.sample)
    finally:
        stop.set()
        loader.join()
    results = {"minutes": args.minutes, "rate": args.rate, "log": args.log, "workers": args.workers,
               "acknowledged": sum(acked.values()), "runs": len(acked), "retries": stats["retries"],
               "restarted": restarted, "memory": judge(samples, args.warm * 60, restarted),
               "samples": samples}
    results["loaded"] = check_loaded(stack, acked)
    stack.lineage("down")
    return results


def judge(samples: list[dict[str, Any]], warm: float, restarted: dict[str, float]
          ) -> dict[str, Any]:
    """Per process: RSS at ``warm`` seconds, the largest after it, their ratio."""
    verdicts: dict[str, Any] = {}
    after = [s for s in samples if s["s"] >= warm]
    if not after:
        return verdicts
    for name, first in after[0]["rssMB"].items():
        if first is None or restarted.get(name, 0) > warm:
            continue
        same = [s["rssMB"][name] for s in after
                if s["pids"].get(name) == after[0]["pids"][name] and s["rssMB"].get(name)]
        top = max(same)
        verdicts[name] = {"atWarmMB": round(first, 1), "maxAfterMB": round(top, 1),
                          "lastMB": round(same[-1], 1), "growth": round(top / first - 1, 3),
                          "flat": top <= first * 1.10}
    return verdicts


def check_loaded(stack: Stack, acked: Counter[str]) -> dict[str, Any]:
    """Wait until the workers loaded everything; then every acknowledged run with exactly its
    events (the digests on its Run node)."""
    graph = Graph(connect(stack.settings))
    try:
        deadline, found = time.monotonic() + 900, {}
        while time.monotonic() < deadline:
            with graph.driver.session() as session:
                found = {r["id"]: r["n"] for r in session.run(
                    "MATCH (r:Run) WHERE NOT coalesce(r.stub, false) "
                    "RETURN r.runId AS id, size(coalesce(r.events, [])) AS n")}
            if all(found.get(run) == n for run, n in acked.items()):
                break
            time.sleep(5)
        missing = [run for run in acked if run not in found]
        wrong = [run for run, n in acked.items() if run in found and found[run] != n]
        return {"runsInGraph": len(found), "missing": len(missing), "wrongCount": len(wrong),
                "ok": not missing and not wrong}
    finally:
        graph.close()


if __name__ == "__main__":
    main()
