"""The graph's one writer (ingest.handoff): what a process other than the worker appends to the
event log (a file load, an alias, Marquez's legacy writes) is loaded by the worker that consumes
the log; with none, by the process itself, which then moves the worker's position past it."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from graph.db import Graph
from ingest.log.sqlite import SQLiteLog
from ingest.pipeline import Ingester, IngestReport
from ingest.read import RawItem
from ingest.worker import CONSUMER, BatchResult, Worker
from tests.helpers import dataset, new_run_id, rows, run_event

pytestmark = pytest.mark.integration


def _items(jobs: list[str]) -> list[RawItem]:
    return [RawItem(f"file.json:{i}", obj=run_event("COMPLETE", new_run_id(), job,
                                                     inputs=[dataset("src")],
                                                     outputs=[dataset(f"out_{job}")]))
            for i, job in enumerate(jobs)]


def _jobs(graph: Graph) -> set[str]:
    return {r["name"] for r in rows(graph, "MATCH (j:Job) RETURN j.name AS name")}


def test_a_journaled_load_is_the_running_workers_to_write(graph: Graph, tmp_path: Path) -> None:
    log = SQLiteLog(tmp_path / "events.db")
    loaded_by_worker: list[int] = []

    def on_batch(result: BatchResult) -> None:
        loaded_by_worker.append(result.loaded)

    stop = threading.Event()
    with log.claim(CONSUMER):
        thread = threading.Thread(target=Worker(graph, log).run, args=(stop, 0.05, on_batch),
                                  daemon=True)
        thread.start()
        try:
            report = Ingester(graph, journal=log, handoff_wait=30).ingest(
                _items(["a", "b", "c"]), IngestReport())
        finally:
            stop.set()
            thread.join(timeout=30)
    assert (report.by_worker, report.loaded, report.rejected) == (3, 0, [])
    assert sum(loaded_by_worker) == 3  # the worker wrote them, and nothing else did
    assert _jobs(graph) == {"a", "b", "c"}
    assert log.position(CONSUMER) == log.last_seq() == 3

    # no worker consumes the log: the load writes itself, and takes the worker's position along
    report = Ingester(graph, journal=log, handoff_wait=30).ingest(_items(["d", "e"]),
                                                                   IngestReport())
    assert (report.loaded, report.by_worker) == (2, 0)
    assert _jobs(graph) == {"a", "b", "c", "d", "e"}
    assert log.position(CONSUMER) == log.last_seq() == 5
