"""Warming Neo4j after a restart (impact.warm, `lineage neo4j warm`, `lineage serve` at start):
it reads the lineage records and asks every question of the widest hub, and changes nothing."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli import app
from api.cli.server import warm_in_background
from graph.db import Graph
from graph.settings import get_settings
from impact.blast_radius import dataset_blast_radius
from impact.warm import warm
from ingest.pipeline import Ingester, IngestReport
from ingest.read import read_file
from tests.helpers import point_cli_at_test_server

pytestmark = pytest.mark.integration

SHOP = Path(__file__).parents[2] / "examples" / "events" / "shop.ndjson"
STORE_READS = ["runs", "runs read and wrote", "columns", "column edges", "datasets", "dataset edges, downstream",
               "dataset edges, upstream", "reads and writes"]
QUESTIONS = {"blast radius", "lineage", "column blast radius", "GDPR reach", "column lineage",
             "upstream", "root cause", "column upstream"}


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

    warm_in_background(the_apis_graph)
    [thread] = [t for t in threading.enumerate() if t.name == "warm"]
    thread.join(timeout=120)
    assert not thread.is_alive() and asked == [graph]
    # still open, and the questions it warmed still answer
    assert dataset_blast_radius(graph, "postgres://warehouse:5432", "raw.orders").impacted
