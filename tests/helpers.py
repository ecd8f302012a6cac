"""Helpers for tests: build events, ingest them through the real pipeline, read graph state."""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from graph.db import Graph
from ingest.log.sqlite import SQLiteLog
from ingest.pipeline import Ingester, IngestReport
from ingest.read import RawItem, read_payload

PRODUCER = "https://example.test/lineage-graph-tests"


def run_event(event_type: str | None, run_id: str, job: str = "job", *, ns: str = "ns",
              time: str = "2024-05-01T02:00:00Z", inputs: list[dict[str, Any]] | None = None,
              outputs: list[dict[str, Any]] | None = None,
              run_facets: dict[str, Any] | None = None,
              job_facets: dict[str, Any] | None = None) -> dict[str, Any]:
    event: dict[str, Any] = {
        "eventTime": time, "producer": PRODUCER,
        "run": {"runId": run_id, "facets": run_facets or {}},
        "job": {"namespace": ns, "name": job, "facets": job_facets or {}},
        "inputs": inputs or [], "outputs": outputs or [],
    }
    if event_type is not None:
        event["eventType"] = event_type
    return event


def dataset(name: str, ns: str = "ns", columns: list[str] | None = None,
            lineage: dict[str, list[tuple[str, str, str, str]]] | None = None,
            **facets: Any) -> dict[str, Any]:
    """A dataset; ``lineage`` maps an output column to (input dataset, field, type, subtype)."""
    all_facets = dict(facets)
    if columns is not None:
        all_facets["schema"] = {"fields": [{"name": c, "type": "STRING"} for c in columns]}
    if lineage is not None:
        all_facets["columnLineage"] = {"fields": {
            out: {"inputFields": [
                {"namespace": ns, "name": src, "field": field,
                 "transformations": [{"type": kind, "subtype": subtype,
                                      "masking": subtype == "MASKED"}]}
                for src, field, kind, subtype in sources]}
            for out, sources in lineage.items()}}
    return {"namespace": ns, "name": name, "facets": all_facets}


def new_run_id() -> str:
    return str(uuid.uuid4())


def ingest_events(graph: Graph, events: list[Any], batch_size: int = 500) -> IngestReport:
    items = [RawItem(f"test[{i}]", obj=e) for i, e in enumerate(events)]
    return Ingester(graph, batch_size=batch_size).ingest(items, IngestReport())


def ingest_text(graph: Graph, text: str, source: str = "test") -> IngestReport:
    return Ingester(graph).ingest(read_payload(text, source), IngestReport())


def ndjson(events: list[Any]) -> str:
    return "\n".join(json.dumps(e) for e in events)


def rows(graph: Graph, cypher: str, **params: Any) -> list[dict[str, Any]]:
    with graph.driver.session() as session:
        return session.run(cypher, params).data()


def nodes(graph: Graph) -> set[tuple[Any, ...]]:
    """Every node as (label, natural key...)."""
    return {tuple(r["k"]) for r in rows(graph, """
        MATCH (n) RETURN CASE
          WHEN n:Run THEN ['Run', n.runId]
          WHEN n:Column THEN ['Column', n.namespace, n.dataset, n.name]
          ELSE [labels(n)[0], n.namespace, n.name] END AS k""")}


def edges(graph: Graph) -> set[tuple[Any, ...]]:
    """Every relationship as (type, start key, end key, job, type, subtype, coarse)."""
    found = rows(graph, """
        MATCH (a)-[e]->(b)
        WITH e, [coalesce(a.runId, a.namespace), coalesce(a.dataset, ''), coalesce(a.name, '')] AS s,
             [coalesce(b.runId, b.namespace), coalesce(b.dataset, ''), coalesce(b.name, '')] AS t
        RETURN [type(e)] + s + t + [coalesce(e.jobName, ''), coalesce(e.type, ''),
               coalesce(e.subtype, ''), coalesce(toString(e.coarse), '')] AS k""")
    return {tuple(r["k"]) for r in found}


BOOKKEEPING = ("events", "schemaSince", "lineageSince", "takenAt")
"""Properties only the loader reads (event digests, when the current schema or lineage began,
which only decides whether a repeated version is a touch, and when the log took the latest event
naming a dataset or job, which only a soft delete compares with)."""


def canonical_dump(graph: Graph) -> list[str]:
    """The whole graph as sorted lines of JSON, as the questions read it: every node (labels,
    properties) and relationship (type, its ends' properties, its own), without bookkeeping
    (BOOKKEEPING, '@' stamps). A column or column edge of its dataset's or job's current version
    (a touch does not rewrite them) is read as the queries read it: last seen when that version
    was, and marked current instead of carrying the version's digest."""
    def clean(props: dict[str, Any]) -> dict[str, Any]:
        return {k: _plain(v) for k, v in sorted(props.items())
                if k not in BOOKKEEPING and not k.startswith("@")}

    lines = []
    for r in rows(graph, """
            MATCH (n) OPTIONAL MATCH (d:Dataset)-[:HAS_COLUMN]->(n)
            RETURN labels(n) AS labels, properties(n) AS props, d.schemaDigest AS version,
                   d.schemaLastSeen AS versionSeen"""):
        props = r["props"]
        if "Column" in r["labels"]:
            props = _effective(props, "schemaDigest", r["version"], r["versionSeen"],
                               ("lastSeen", "writtenLastSeen"))
        lines.append(json.dumps(["node", sorted(r["labels"]), clean(props)], sort_keys=True))
    for r in rows(graph, """
            MATCH (a)-[e]->(b)
            OPTIONAL MATCH (j:Job {namespace: e.jobNamespace, name: e.jobName})
            WHERE a:Column AND type(e) = 'DERIVED_FROM'
            RETURN type(e) AS type, properties(a) AS a, properties(b) AS b, properties(e) AS props,
                   a:Column AS columnEdge, j.lineageDigest AS version,
                   j.lineageLastSeen AS versionSeen, j.lineageRunId AS versionRun"""):
        props = r["props"]
        if r["columnEdge"] and r["type"] == "DERIVED_FROM":
            props = _effective(props, "lineageDigest", r["version"], r["versionSeen"],
                               ("lastSeen",))
            if props["current"] and r["versionRun"] is not None \
                    and r["versionSeen"] >= r["props"]["lastSeen"]:
                props["runId"] = r["versionRun"]
        a, b = _identity(r["a"]), _identity(r["b"])
        lines.append(json.dumps(["rel", r["type"], clean(a), clean(b), clean(props)],
                                sort_keys=True))
    return sorted(lines)


def _effective(props: dict[str, Any], key: str, version: Any, seen: Any,
               times: tuple[str, ...]) -> dict[str, Any]:
    """A column's or column edge's ``props`` with its version digest ``key`` replaced by whether
    it is the current version, and ``times`` moved to when that version was last seen if so."""
    out = dict(props)
    digest = out.pop(key, None)
    out["current"] = digest is not None and digest == version
    if out["current"]:
        for t in times:
            if out.get(t) is not None and seen is not None and seen > out[t]:
                out[t] = seen
    return out


def _identity(props: dict[str, Any]) -> dict[str, Any]:
    """An end of a relationship by what identifies it (its own line holds the rest)."""
    keys = ("namespace", "dataset", "name", "runId")
    return {k: props[k] for k in keys if k in props}


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value.isoformat() if hasattr(value, "isoformat") else value


def point_cli_at_test_server(monkeypatch: Any) -> None:
    """Environment for the CLI (in process) to reach the tests' Neo4j: the one NEO4J_URI names,
    else the local test server's state directory and ports."""
    import os

    from graph.settings import get_settings
    from tests.conftest import server_settings

    if not os.environ.get("NEO4J_URI"):
        s = server_settings()
        monkeypatch.setenv("LINEAGE_STATE_DIR", str(s.state_dir))
        monkeypatch.setenv("LINEAGE_NEO4J_BOLT_PORT", str(s.neo4j_bolt_port))
        monkeypatch.setenv("LINEAGE_NEO4J_HTTP_PORT", str(s.neo4j_http_port))
    get_settings.cache_clear()


def free_port() -> int:
    """A free loopback TCP port."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_serve(env: dict[str, str]) -> tuple[Any, str]:
    """`lineage serve` in a subprocess on a free loopback port, once it answers /health:
    (the process, its base URL). Terminate the process when done."""
    import subprocess
    import sys
    import time
    import urllib.request

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "api.cli", "serve", "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            urllib.request.urlopen(f"{base}/health", timeout=1)
            break
        except OSError:
            time.sleep(0.1)
    return proc, base


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """An ASGI app (our API) served by uvicorn in a thread on a free loopback port: its URL."""
    import threading
    import time

    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextlib.contextmanager
def live_api(graph: Graph, log_path: Path) -> Iterator[tuple[str, SQLiteLog]]:
    """Our HTTP API (uvicorn, in a thread, on a free loopback port) over a fresh event log at
    ``log_path`` and a worker loading it into ``graph``: (the base URL, the log), for real
    producers to post to."""
    import threading

    from api.app import create_app
    from graph.settings import Settings
    from ingest.worker import Worker

    log = SQLiteLog(log_path)
    stop = threading.Event()
    worker = threading.Thread(target=Worker(graph, log).run, args=(stop, 0.05), daemon=True)
    worker.start()
    try:
        with serving(create_app(Settings(), graph, log)) as url:
            yield url, log
    finally:
        stop.set()
        worker.join(timeout=10)


def wait_loaded(log: SQLiteLog, timeout: float = 120.0) -> float:
    """Wait until the worker has loaded everything in ``log``; the seconds it took."""
    import time

    from ingest.worker import CONSUMER

    started = time.perf_counter()
    last = log.last_seq()
    while log.position(CONSUMER) < last:
        if time.perf_counter() - started > timeout:
            raise AssertionError(f"the worker did not load the log within {timeout:.0f} s "
                                 f"(at {log.position(CONSUMER)} of {last})")
        time.sleep(0.05)
    return time.perf_counter() - started
