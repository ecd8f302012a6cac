"""Warming Neo4j after a restart (impact.warm, `lineage neo4j warm`, `lineage serve` at start):
it reads the lineage records and asks every question of the widest hub, and changes nothing."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli import app
from api.services.background import keep_plans_in_background, warm_in_background
from graph.db import Graph
from graph.errors import LineageError
from graph.queries import library
from graph.settings import get_settings
from impact.blast_radius import dataset_blast_radius
from impact.warm import PlanKeeper, warm
from ingest.pipeline import Ingester, IngestReport, plan_ahead
from ingest.read import RawItem, read_file
from tests.helpers import edges, nodes, point_cli_at_test_server

pytestmark = pytest.mark.integration

SHOP = Path(__file__).parents[2] / "examples" / "events" / "shop.ndjson"
STORE_READS = ["runs", "runs read and wrote", "columns", "column edges", "datasets", "dataset edges, downstream",
               "dataset edges, upstream", "reads and writes"]
QUESTIONS = {"blast radius", "lineage", "column blast radius", "GDPR reach", "column lineage",
             "upstream", "root cause", "column upstream", "Marquez's dataset",
             "Marquez's datasets", "job", "Marquez's job", "Marquez's jobs"}


def _shape(graph: Graph) -> tuple[int, int, int]:
    """Nodes, relationships and properties: what a write of any kind would change."""
    row = graph.driver.execute_query(
        "MATCH (n) WITH count(n) AS nodes, sum(size(keys(n))) AS np "
        "OPTIONAL MATCH ()-[r]->() WITH nodes, np, count(r) AS rels, sum(size(keys(r))) AS rp "
        "RETURN nodes, rels, np + rp AS props"
    ).records[0]
    return row["nodes"], row["rels"], row["props"]


def test_warm_reads_the_lineage_and_asks_every_question_of_the_widest_hub(graph: Graph) -> None:
    Ingester(graph).ingest(read_file(SHOP), IngestReport())
    before = _shape(graph)
    heard: list[str] = []
    done = warm(graph, progress=lambda what, _: heard.append(what))
    # raw.orders and raw.users each feed two datasets; the tie goes to the first by name
    assert done.hub == "postgres://warehouse:5432:raw.orders"
    steps = [what for what, _ in done.steps]
    assert steps[:len(STORE_READS)] == STORE_READS
    assert set(steps[len(STORE_READS):-1]) == QUESTIONS
    # the shop's datasets with something derived from them: raw.users, raw.orders,
    # staging.users_clean, marts.orders_enriched, marts.revenue_by_country
    assert steps[-1] == "blast radius of the 5 widest, 2 times"
    assert heard == steps
    assert done.read > 0 and done.seconds >= 0
    assert _shape(graph) == before


def test_warm_on_an_empty_graph_reads_and_plans_nothing(graph: Graph) -> None:
    done = warm(graph)
    assert done.hub is None
    assert [what for what, _ in done.steps] == STORE_READS
    assert done.read == 0


def test_lineage_neo4j_warm(graph: Graph, monkeypatch: pytest.MonkeyPatch) -> None:
    Ingester(graph).ingest(read_file(SHOP), IngestReport())
    point_cli_at_test_server(monkeypatch)
    try:
        result = CliRunner().invoke(app, ["neo4j", "warm"])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    assert "Neo4j warmed in" in result.output
    assert "questions planned on postgres://warehouse:5432:raw.orders" in result.output
    assert "blast radius:" in result.output  # each step as it ends


def test_serve_warms_through_the_apis_own_connection_and_leaves_it_open(graph: Graph) -> None:
    # `lineage serve` hands its app's graph to the warm-up, so the first question a user asks
    # finds the driver open and its pool holding connections: the warm-up must not close it
    Ingester(graph).ingest(read_file(SHOP), IngestReport())
    asked: list[Graph] = []

    def the_apis_graph() -> Graph:
        asked.append(graph)
        return graph

    warmed = threading.Event()
    warm_in_background(the_apis_graph, warmed)
    [thread] = [t for t in threading.enumerate() if t.name == "warm"]
    thread.join(timeout=120)
    assert not thread.is_alive() and asked == [graph]
    assert warmed.is_set()  # what /ready reports and `lineage up` waits for
    # still open, and the questions it warmed still answer
    assert dataset_blast_radius(graph, "postgres://warehouse:5432", "raw.orders").impacted


NEW_RUN = {
    "eventType": "COMPLETE", "eventTime": "2026-11-26T10:00:00Z",
    "run": {"runId": "0193a2a5-6f4e-7c1a-9a55-6d3c1f0e0b01"},
    "job": {"namespace": "airflow", "name": "export_orders"},
    "inputs": [{"namespace": "postgres://warehouse:5432", "name": "raw.orders"}],
    "outputs": [{"namespace": "s3://exports", "name": "orders.csv"}],
    "producer": "https://example.com/test", "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json",
}


def _new_run(graph: Graph, n: int) -> None:
    """A run of a job the graph did not hold, writing a dataset it did not hold: the graph grows."""
    event = NEW_RUN | {"run": {"runId": f"0193a2a5-6f4e-7c1a-9a55-6d3c1f0e0b{n:02d}"},
                       "job": {"namespace": "airflow", "name": f"export_{n}"},
                       "outputs": [{"namespace": "s3://exports", "name": f"export_{n}.csv"}]}
    Ingester(graph).ingest(iter([RawItem(f"new {n}", obj=event)]), IngestReport())


def test_plan_keeper_asks_every_question_when_the_graph_has_changed_and_only_then(graph: Graph) -> None:
    Ingester(graph).ingest(read_file(SHOP), IngestReport())
    before = _shape(graph)
    keeper = PlanKeeper(graph)
    assert set(keeper.tick() or []) == QUESTIONS  # nothing planned yet: every question is asked
    assert keeper.tick() is None  # the graph is as it was: nothing is asked
    assert keeper.tick() is None
    assert _shape(graph) == before  # the keeper only reads
    _new_run(graph, 1)
    assert _shape(graph) != before
    assert keeper.tick() is None  # changed since the last tick: the load may go on
    assert set(keeper.tick() or []) == QUESTIONS  # held still: asked
    assert keeper.tick() is None


def test_plan_keeper_asks_once_a_load_has_ended_and_every_period_otherwise(graph: Graph) -> None:
    Ingester(graph).ingest(read_file(SHOP), IngestReport())
    keeper = PlanKeeper(graph, every=10)
    assert keeper.tick(now=100.0)  # the first tick asks
    _new_run(graph, 1)
    assert keeper.tick(now=102.0) is None  # changed since the last tick, and asked 2 s ago: wait
    _new_run(graph, 2)
    assert keeper.tick(now=104.0) is None  # still changing
    _new_run(graph, 3)
    assert set(keeper.tick(now=110.0) or []) == QUESTIONS  # still changing, but 10 s have passed
    _new_run(graph, 4)
    assert keeper.tick(now=112.0) is None  # changing, asked 2 s ago
    assert set(keeper.tick(now=114.0) or []) == QUESTIONS  # held still for a tick: the load ended
    assert keeper.tick(now=116.0) is None  # nothing changed since
    assert keeper.tick(now=123.0) is None
    # unchanged, but a period has passed: asked again, for the plans that go stale with time
    assert set(keeper.tick(now=124.0) or []) == QUESTIONS
    assert keeper.tick(now=126.0) is None


def test_plan_keeper_waits_for_the_worker_to_load_what_was_received(graph: Graph) -> None:
    """With the event log's backlog, a size that held still is not the end of a load while events
    wait to be loaded or keep arriving."""
    Ingester(graph).ingest(read_file(SHOP), IngestReport())
    backlog = [(10, 10)]  # (events received, events loaded)
    keeper = PlanKeeper(graph, every=60, backlog=lambda: backlog[-1])
    assert keeper.tick(now=100.0)
    _new_run(graph, 1)
    backlog.append((40, 30))
    assert keeper.tick(now=102.0) is None  # changing
    assert keeper.tick(now=104.0) is None  # the size held still, but ten events wait
    backlog.append((60, 60))
    assert keeper.tick(now=106.0) is None  # all loaded, but twenty arrived since the last tick
    assert set(keeper.tick(now=108.0) or []) == QUESTIONS  # nothing arrived, all loaded: ended
    assert keeper.tick(now=110.0) is None
    backlog.append((70, 65))
    assert keeper.tick(now=200.0) is None  # a period has passed, but the worker is behind
    backlog.append((80, 80))
    assert set(keeper.tick(now=202.0) or []) == QUESTIONS  # caught up (events still arriving)
    backlog.append((90, 80))  # ten events no worker loads
    _new_run(graph, 2)  # the graph changes by another way (lineage ingest)
    assert keeper.tick(now=204.0) is None
    assert keeper.tick(now=263.0) is None  # the backlog has not moved for 59 s
    assert set(keeper.tick(now=264.0) or []) == QUESTIONS  # 60 s: no worker runs; asked


def test_plan_keeper_on_a_graph_without_lineage_asks_nothing(graph: Graph) -> None:
    keeper = PlanKeeper(graph)
    assert keeper.tick() == []  # the first round: nothing to ask of
    assert keeper.tick() is None


def test_the_serves_plan_keeper_goes_on_after_a_failed_round_and_says_so_once(
        graph: Graph, capsys: pytest.CaptureFixture[str]) -> None:
    Ingester(graph).ingest(read_file(SHOP), IngestReport())
    calls: list[int] = []

    def flaky() -> Graph:
        calls.append(1)
        if len(calls) <= 3:
            raise LineageError("Neo4j is not reachable")
        return graph

    keeping = keep_plans_in_background(flaky, 0.02)
    deadline = time.monotonic() + 60
    try:
        while (keeping.keeper is None or keeping.keeper.last is None) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        keeping.stop.set()
    [thread] = [t for t in threading.enumerate() if t.name == "plan-keeper"]
    thread.join(timeout=60)
    assert not thread.is_alive()
    # after three failed rounds, the fourth opened the graph and asked the questions
    assert keeping.keeper is not None and keeping.keeper.last is not None
    assert len(calls) == 4 and keeping.rounds >= 4
    assert keeping.keeper.tick() is None  # and that round saw the graph as it is now
    said = capsys.readouterr().err
    assert said.count("plan keeper: a round failed (Neo4j is not reachable)") == 1


def test_the_worker_plans_its_queries_ahead_and_writes_nothing(graph: Graph) -> None:
    # what a worker does before its first batch (ingest.pipeline.plan_ahead): every ingest query
    # run with the sample's rows, on an empty graph and on a loaded one; the graph is left as it was
    ran = plan_ahead(graph)
    assert set(ran) == {name for name in library() if name.startswith("ingest/")}
    assert not nodes(graph)
    Ingester(graph).ingest(read_file(SHOP), IngestReport())
    before = (nodes(graph), edges(graph))
    plan_ahead(graph)
    assert (nodes(graph), edges(graph)) == before
