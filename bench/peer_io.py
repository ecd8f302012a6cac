"""The two sides of ``bench.peer``: our servers (started here) and the peer (only a URL), the HTTP
client both are spoken to with, and the memory sampler."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from bench.generate import NS
from bench.ingest import free_port, fresh_store, services_env, start_services, together
from bench.latency import bench_settings, tree_mb
from bench.wire import Connection
from graph.db import Graph, connect
from graph.local_server import LocalServer
from graph.schema import apply_schema
from impact.blast_radius import dataset_blast_radius
from impact.marquez.lineage import lineage
from impact.root_cause import root_cause_dataset
from impact.where import where

_conn = threading.local()


def _request(url: str, method: str, body: bytes | None, timeout: float) -> tuple[int, bytes]:
    """One request over this thread's kept-alive connection to that host (as OpenLineage's Python
    client and a browser keep theirs), opened again once when the server had closed it."""
    where_ = urllib.parse.urlsplit(url)
    key = (where_.hostname or "127.0.0.1", where_.port or 80)
    conns: dict[tuple[str, int], Connection] = getattr(_conn, "by_host", None) or {}
    _conn.by_host = conns
    conn = conns.get(key)
    if conn is None:
        conn = conns[key] = Connection(*key)
    # a request that timed out is not sent again (Connection.request): it may still be running
    # there (Marquez's query goes on in PostgreSQL), and asking again would run it twice at once
    conn.timeout = timeout
    return conn.request(method, where_.path + (f"?{where_.query}" if where_.query else ""), body)


def get(url: str, timeout: float) -> tuple[float, int, Any]:
    """GET ``url``: milliseconds until the whole body was read, status, parsed JSON (or None)."""
    t = time.perf_counter()
    try:
        status, data = _request(url, "GET", None, timeout)
    except (TimeoutError, OSError):
        return (time.perf_counter() - t) * 1000, 0, None
    ms = (time.perf_counter() - t) * 1000
    try:
        return ms, status, json.loads(data) if data else None
    except ValueError:
        return ms, status, None


def post_all(url: str, bodies: list[list[bytes]]) -> None:
    """Post each client's bodies, the clients concurrently; any refusal stops the bench."""
    def client(k: int) -> None:
        for body in bodies[k]:
            status, data = _request(url, "POST", body, 60)
            if status not in (200, 201):
                raise RuntimeError(f"POST {url}: {status} {data[:300]!r}")

    together(client, len(bodies))


class Ours:
    """lineage-graph on the bench Neo4j: a fresh store, ``lineage serve`` and ``lineage worker``."""

    name = "lineage-graph"
    timeout = 120.0

    def __init__(self) -> None:
        # the product's default memory (1 GiB heap, 512 MiB page cache), as peer.sh caps
        # Marquez's heap at 1 GiB
        self.settings = bench_settings().model_copy(update={"neo4j_heap": "1g", "neo4j_pagecache": "512m"})
        self.server = LocalServer(self.settings)
        self.tmp = Path(tempfile.mkdtemp(prefix="lineage-bench-peer-"))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> Ours:
        fresh_store(self.server)  # as the peer's empty database
        self.server.start()
        self.graph = Graph(connect(self.settings), timeout=self.settings.query_timeout)
        apply_schema(self.graph)
        self.procs = start_services(services_env(self.settings, self.tmp, self.port), self.tmp, self.port)
        print(f"lineage-graph on {self.url}, Neo4j in {self.settings.state_dir}", file=sys.stderr)
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        for proc in self.procs:
            proc.terminate()
            proc.wait(timeout=15)
        self.graph.close()
        self.server.stop()

    def pids(self) -> list[int]:
        neo4j = self.server.status().pid
        return [p.pid for p in self.procs] + ([neo4j] if neo4j else [])

    def disk_mb(self) -> dict[str, float]:
        home = self.settings.state_dir / "neo4j" / "data"
        return {"store": tree_mb(home / "databases" / "neo4j"),
                "transaction_logs": tree_mb(home / "transactions" / "neo4j"),
                "event_log": sum(f.stat().st_size for f in self.tmp.glob("events.db*")) / 2**20}

    def in_process(self, call: tuple[str, ...]) -> float:
        """The same question through the Python function the route calls: milliseconds."""
        asks: dict[str, Callable[[], object]] = {
            "blast": lambda: dataset_blast_radius(self.graph, NS, call[1], 20),
            "cause": lambda: root_cause_dataset(self.graph, NS, call[1], 20),
            "where": lambda: where(self.graph, NS, call[1], call[2], 20),
            "lineage": lambda: lineage(self.graph, f"dataset:{NS}:{call[1]}", 10),
        }
        t = time.perf_counter()
        asks[call[0]]()
        return (time.perf_counter() - t) * 1000


class Peer:
    """A server that speaks Marquez's API, known by its URL; its processes and database are found
    by a pattern and a connection string, when given."""

    name = "marquez"

    def __init__(self, url: str, processes: str, db: str, timeout: float) -> None:
        self.url, self.pattern, self.db, self.timeout = url.rstrip("/"), re.compile(processes), db, timeout

    def reachable(self) -> bool | str:
        _, status, _ = get(self.url + "/api/v1/namespaces", 10)
        return True if status == 200 else f"GET /api/v1/namespaces answered {status or 'nothing'}"

    def pids(self) -> list[int]:
        found = []
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit():
                try:
                    cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    continue
                if self.pattern.search(cmd):
                    found.append(int(proc.name))
        return found

    def cancel_abandoned(self) -> None:
        """Cancel the peer's database queries still running past our request timeout: a request
        we gave up on keeps running there (seen: Marquez's lineage query for 10 minutes), and
        would slow every later answer of the peer."""
        if self.db and shutil.which("psql"):
            subprocess.run(["psql", self.db, "-XAtc",
                            "select pg_cancel_backend(pid) from pg_stat_activity where "
                            "datname = current_database() and pid <> pg_backend_pid() and "
                            f"state = 'active' and now() - query_start > interval '{int(self.timeout)} s'"],
                           capture_output=True)

    def disk_mb(self) -> dict[str, float] | str:
        if not self.db or shutil.which("psql") is None:
            return "not measured (no --peer-db or no psql)"
        done = subprocess.run(["psql", self.db, "-XAtc", "select pg_database_size(current_database())"],
                              capture_output=True, text=True)
        if done.returncode:
            return f"not measured: {done.stderr.strip()[:200]}"
        return {"database": int(done.stdout.strip()) / 2**20}


def _pss_kb(pid: int) -> int:
    """Proportional set size: shared pages (PostgreSQL's shared buffers) counted once in all."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class Sampler:
    """Every second, the summed PSS of each side's processes; keeps each side's peak."""

    def __init__(self, sides: dict[str, Callable[[], list[int]]]) -> None:
        self.sides = sides
        self.peak = dict.fromkeys(sides, 0)
        self.seen: dict[str, int] = dict.fromkeys(sides, 0)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            for side, pids in self.sides.items():
                found = pids()
                self.seen[side] = max(self.seen[side], len(found))
                self.peak[side] = max(self.peak[side], sum(_pss_kb(p) for p in found))
            self.stop.wait(1.0)

    def __enter__(self) -> Sampler:
        self.thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.stop.set()
        self.thread.join()

    def peaks_mb(self) -> dict[str, float]:
        return {side: kb / 1024 for side, kb in self.peak.items()}
