"""The API's memory under a burst of large bodies: many clients posting near-limit arrays at once.

Starts a `lineage serve` (from ``--code``, a checkout, to compare with another version) on the
bench Neo4j with an event log of its own, posts ``--clients`` bodies of about ``--mb`` MB each
(arrays of valid events) all at once, and reports the API process's resident memory before and
its high-water mark after (``VmHWM``), with the statuses the clients got.

    python -m bench.bodies --clients 16 --mb 7.9
    python -m bench.bodies --code /tmp/old-checkout     # the same against another version
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.generate import events as gen_events
from bench.generate import tables
from bench.ingest import free_port, services_env, start_services
from bench.latency import bench_settings, emit
from bench.wire import Connection
from graph.local_server import LocalServer


def _memory(pid: int) -> dict[str, float]:
    """The process's resident memory now and at its highest, in MB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                  if ":" in line)
    return {k: int(fields[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM")}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--mb", type=float, default=7.9, help="size of each body")
    p.add_argument("--code", type=Path, default=Path.cwd(), help="the checkout whose API to run")
    p.add_argument("--json", type=Path)
    a = p.parse_args()
    settings = bench_settings()
    LocalServer(settings).start()
    chosen: list[dict[str, Any]] = []
    size = 2
    for event in gen_events(tables(3000, seed=21), seed=21, starts=True):
        size += len(json.dumps(event)) + 1
        if size > a.mb * 1e6:
            break
        chosen.append(event)
    body = json.dumps(chosen).encode()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        port = free_port()
        env = services_env(settings, tmp, port) | {"LINEAGE_WARM_ON_START": "false",
                                                   "LINEAGE_PLAN_KEEPER_SECONDS": "0"}
        [api] = start_services(env, tmp, port, ("serve",), cwd=a.code)
        try:
            before = _memory(api.pid)
            statuses: list[int] = []
            lock = threading.Lock()

            def post(_: int) -> None:
                status, _answer = Connection("127.0.0.1", port, timeout=300).request(
                    "POST", "/api/v1/lineage", body)
                with lock:
                    statuses.append(status)

            started = time.perf_counter()
            threads = [threading.Thread(target=post, args=(k,)) for k in range(a.clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            took = time.perf_counter() - started
            after = _memory(api.pid)
        finally:
            api.terminate()
            api.wait(timeout=30)
    result: dict[str, Any] = {
        "code": str(a.code), "clients": a.clients, "body_mb": round(len(body) / 1e6, 2),
        "seconds": round(took, 2), "statuses": sorted(statuses),
        "rss_before_mb": round(before["VmRSS"]), "peak_rss_mb": round(after["VmHWM"])}
    print(f"{a.clients} x {result['body_mb']} MB: peak {result['peak_rss_mb']} MB "
          f"(from {result['rss_before_mb']}), {took:.1f} s, statuses {sorted(set(statuses))}",
          file=sys.stderr)
    emit(result, a.json)


if __name__ == "__main__":
    main()
