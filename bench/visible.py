"""What "visible when acknowledged" costs: events posted one per request by concurrent clients, as
Marquez's clients post them, to a stack `lineage up` started, with and without ``Lineage-Wait:
loaded`` (the API answers once the worker has loaded the request's events; docs/marquez.md).

Phases of SECONDS each alternate, plain then waiting, ROUNDS times over, so that the machine's
drift falls on both alike; each starts once the worker has loaded everything before it. Each phase
reports the events acknowledged per second, the events loaded per second (up to when the worker
had loaded the phase's last event: a plain phase leaves a backlog) and each request's time at p50
and p95; the summary gives the waiting phases' loaded rate as a ratio of the plain phases'.

    python -m bench.visible --clients 8 --seconds 20 --rounds 2 --out visible.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from bench.generate import events, tables
from bench.latency import emit, percentile
from bench.stack import Stack, scratch
from ingest.worker import caught_up


def _phase(stack: Stack, url: str, feed: Any, lock: threading.Lock, clients: int,
           seconds: float, wait: bool) -> dict[str, Any]:
    """CLIENTS threads post one event per request for SECONDS; their rate and latencies."""
    took: list[float] = []
    done = threading.Event()
    headers = {"Content-Type": "application/json"} | ({"Lineage-Wait": "loaded"} if wait else {})

    def client() -> None:
        mine: list[float] = []
        while not done.is_set():
            with lock:
                event = next(feed)
            request = urllib.request.Request(url, data=json.dumps(event).encode(), headers=headers,
                                             method="POST")
            started = time.perf_counter()
            with urllib.request.urlopen(request, timeout=60) as answer:
                body = json.loads(answer.read())
            mine.append(time.perf_counter() - started)
            if wait and not body.get("loaded"):
                raise AssertionError(f"the worker did not load within the wait: {body}")
        with lock:
            took.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(seconds)
    done.set()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    if not caught_up(stack.settings, timeout=600):
        raise AssertionError("the worker did not catch up within 10 minutes")
    loaded = time.perf_counter() - started
    return {"wait": wait, "requests": len(took), "events_per_s": round(len(took) / elapsed, 1),
            "loaded_per_s": round(len(took) / loaded, 1),
            "p50_ms": round(percentile(took, 50) * 1000, 1),
            "p95_ms": round(percentile(took, 95) * 1000, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients")
    parser.add_argument("--seconds", type=float, default=20, help="the length of each phase")
    parser.add_argument("--rounds", type=int, default=2, help="plain-then-waiting pairs")
    parser.add_argument("--datasets", type=int, default=1000, help="the generated warehouse's size")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    feed = events(tables(args.datasets), days=10_000, starts=True)
    lock = threading.Lock()
    with scratch("lineage-visible-") as work:
        stack = Stack(work / "state", "sqlite", 1)
        url = f"{stack.url}/api/v1/lineage"
        phases = []
        try:
            stack.lineage("up")
            _phase(stack, url, feed, lock, args.clients, 5, False)  # warm: plans, connections, caches
            for _ in range(args.rounds):
                for wait in (False, True):
                    phases.append(_phase(stack, url, feed, lock, args.clients, args.seconds, wait))
        finally:
            stack.lineage("down")

    def summary(wait: bool) -> dict[str, float]:
        mine = [p for p in phases if p["wait"] == wait]
        return {k: round(statistics.mean(p[k] for p in mine), 1)
                for k in ("events_per_s", "loaded_per_s", "p50_ms", "p95_ms")}

    plain, waiting = summary(False), summary(True)
    emit({"clients": args.clients, "seconds": args.seconds, "phases": phases, "plain": plain,
          "waiting": waiting,
          "loaded_rate_ratio": round(waiting["loaded_per_s"] / plain["loaded_per_s"], 2)},
         args.out)


if __name__ == "__main__":
    main()
