"""A slow or busy Neo4j is no fault of an event: the worker's writes are not bound by the
questions' time limit, a batch is never split for it, and nothing is dead-lettered for it.
Against the real server: another transaction holds a lock the worker's write needs."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

from graph.db import Graph
from ingest.log.sqlite import SQLiteLog
from ingest.worker import CONSUMER, BatchResult, Worker
from tests.helpers import dataset, new_run_id, rows, run_event

pytestmark = pytest.mark.integration


def test_a_write_waiting_past_the_query_timeout_loads_without_splitting_or_dead_letters(
        graph: Graph, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    log = SQLiteLog(tmp_path / "events.db")
    with graph.driver.session() as s:
        s.run("CREATE (:Dataset {namespace: 'ns', name: 'locked'})").consume()
    events = [run_event("COMPLETE", new_run_id(), f"job_{i}", outputs=[dataset("locked")])
              for i in range(3)]
    log.append(events)
    # questions may run 1 s; the lock below is held for 6 s (Neo4j checks timeouts every 2 s)
    impatient = Graph(graph.driver, timeout=1.0)
    results: list[BatchResult | None] = []
    with graph.driver.session() as holder:
        tx = holder.begin_transaction()
        tx.run("MATCH (d:Dataset {namespace: 'ns', name: 'locked'}) SET d.heldBy = 'test'").consume()
        with caplog.at_level(logging.INFO):
            worker = threading.Thread(target=lambda: results.append(Worker(impatient, log).run_once()))
            worker.start()
            worker.join(6.0)
            assert worker.is_alive()  # waiting for the lock, not failed
        tx.rollback()
    worker.join(60)
    assert not worker.is_alive()
    [result] = results
    assert result is not None and result.loaded == 3 and result.dead == 0
    assert log.dead_letter_count() == 0 and log.position(CONSUMER) == 3
    assert "splitting" not in caplog.text
    assert rows(graph, "MATCH (j:Job)<-[:OF]-(:Run)-[:WROTE]->(:Dataset {name: 'locked'}) "
                       "RETURN count(DISTINCT j) AS n")[0]["n"] == 3


def test_questions_take_turns_and_one_that_finds_none_in_time_is_a_timeout(graph: Graph) -> None:
    """With ``readers`` turns, a question beyond them waits; past the query timeout it ends as a
    QueryTimeout (504), not by piling onto Neo4j."""
    import time

    from graph.errors import QueryTimeout

    bounded = Graph(graph.driver, timeout=0.5, readers=1)

    def slow(tx: object) -> int:
        time.sleep(1.5)  # a long question holding the only turn
        return 1

    holder = threading.Thread(target=bounded._read_call, args=(slow, ["slow"]))
    holder.start()
    time.sleep(0.2)
    started = time.monotonic()
    with pytest.raises(QueryTimeout, match="waited 0.5 s for a turn"):
        bounded.read("lookup/namespaces")
    assert 0.4 < time.monotonic() - started < 1.4
    holder.join()
    assert bounded.read("lookup/namespaces") == []  # the turn is free again
