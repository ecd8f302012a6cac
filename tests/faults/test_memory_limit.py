"""A backlog batch over Neo4j's transaction memory limit: split, loaded whole, batches shrink.

A Neo4j of its own runs with a small ``db.memory.transaction.max`` (LINEAGE_NEO4J_TX_MEMORY, 4
MiB), so a worker batch of 1,500 events is refused by the real server for its size
(``Neo.TransientError.General.MemoryPoolOutOfMemoryError``), as a 5,000-event backlog batch was on
a 1 GiB heap. Every event must still reach the graph, none may be dead-lettered, and the worker's
next batches must be smaller than the one refused.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.db import Graph, connect
from graph.errors import TooLarge
from graph.local_server import LocalServer
from graph.schema import apply_schema
from graph.settings import Settings
from ingest.load import load
from ingest.log.sqlite import SQLiteLog
from ingest.pipeline import Ingester, IngestReport
from ingest.read import RawItem
from ingest.worker import Worker
from tests.faults.test_crash_recovery import _events
from tests.helpers import free_port, rows

pytestmark = [pytest.mark.integration, pytest.mark.faults]

EVENTS = 1500


@pytest.fixture(scope="module")
def small_graph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Graph]:
    if os.environ.get("NEO4J_URI"):
        pytest.skip("needs a Neo4j started with a small transaction memory limit")
    state = tmp_path_factory.mktemp("small-neo4j")
    settings = Settings(state_dir=state, neo4j_bolt_port=free_port(), neo4j_http_port=free_port(),
                        neo4j_heap="512m", neo4j_pagecache="128m", neo4j_tx_memory="4m")
    server = LocalServer(settings)
    server.start()
    graph = Graph(connect(settings))
    try:
        apply_schema(graph)
        yield graph
    finally:
        graph.close()
        # a throwaway store: killed, not stopped (a clean stop checkpoints it for nothing;
        # docs/benchmarks.md, "The test suite")
        pid = server.status().pid
        if pid is not None:
            os.kill(pid, signal.SIGKILL)


def test_the_server_refuses_a_large_batch_for_its_size(small_graph: Graph) -> None:
    """The premise, on the real server: one load of the whole backlog is refused as TooLarge."""
    ingester = Ingester(small_graph, EVENTS)
    report = IngestReport()
    prepared = list(ingester.prepare([RawItem(f"e{i}", obj=e) for i, e in enumerate(_events(EVENTS))],
                                     report))
    with pytest.raises(TooLarge):
        load(small_graph, prepared[0].plan)


def test_a_batch_over_the_limit_is_split_loaded_and_the_worker_shrinks(
        small_graph: Graph, tmp_path: Path) -> None:
    events = SQLiteLog(tmp_path / "events.db")
    events.append(_events(EVENTS))
    worker = Worker(small_graph, events, batch=EVENTS)
    first = worker.run_once()
    assert first is not None and first.events == EVENTS
    assert first.dead == 0 and first.loaded + first.duplicates == EVENTS
    assert worker.limit < EVENTS, "a batch refused for its size must make the next ones smaller"
    shrunk = worker.limit

    more = EVENTS // 2
    events.append(_events(EVENTS + more)[EVENTS:])
    sizes = []
    while (done := worker.run_once()) is not None:
        sizes.append(done.events)
        assert done.dead == 0
    assert sizes and sizes[0] <= shrunk
    assert events.dead_letter_count() == 0
    runs = rows(small_graph, "MATCH (r:Run) RETURN count(r) AS n")[0]["n"]
    assert runs == EVENTS + more
