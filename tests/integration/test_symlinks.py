"""Symlinks (issue 19, part 3): one table, several names. Spark reports a Hive table by its
storage path with a symlinks facet naming the catalog table; another producer reads it by the
catalog name. Every question answers the same by either name, lineage continues across the names,
and a table is listed once with its other names; in every order, in one batch and in several."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from graph.db import Graph
from impact.blast_radius import column_blast_radius, dataset_blast_radius
from impact.changes import Change
from impact.check import check
from impact.discover import listing
from impact.freshness import freshness
from impact.upstream import dataset_upstream
from impact.where import where
from tests.conftest import wipe
from tests.helpers import canonical_dump, dataset, ingest_events, new_run_id, run_event

pytestmark = pytest.mark.integration

HDFS, HIVE = "hdfs://namenode:8020", "hive://metastore:9083"


def _every_load(graph: Graph, events: list[dict[str, Any]]) -> Any:
    first: list[str] | None = None
    for order in itertools.permutations(events):
        for batches in ([list(order)], [[e] for e in order]):
            wipe(graph)
            for batch in batches:
                assert ingest_events(graph, batch).rejected == []
            dump = canonical_dump(graph)
            first = first or dump
            assert dump == first, "the graph depends on the order or batching of the events"
            yield


def _spark_table(path: str, table: str, columns: list[str]) -> dict[str, Any]:
    return dataset(path, HDFS, columns=columns, symlinks={"identifiers": [
        {"namespace": HIVE, "name": table, "type": "TABLE"}]})


def _events() -> list[dict[str, Any]]:
    raw = _spark_table("/warehouse/raw_orders", "default.raw_orders", ["id", "email", "amount"])
    orders = _spark_table("/warehouse/orders", "default.orders", ["id", "email", "amount"])
    orders["facets"]["columnLineage"] = {"fields": {c: {"inputFields": [
        {"namespace": HDFS, "name": "/warehouse/raw_orders", "field": c,
         "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}]}]}
        for c in ("id", "email", "amount")}}
    daily = dataset("default.orders_daily", HIVE, columns=["email", "total"])
    daily["facets"]["columnLineage"] = {"fields": {
        "email": {"inputFields": [{"namespace": HIVE, "name": "default.orders", "field": "email",
                                   "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}]}]},
        "total": {"inputFields": [{"namespace": HIVE, "name": "default.orders", "field": "amount",
                                   "transformations": [{"type": "DIRECT",
                                                        "subtype": "AGGREGATION"}]}]}}}
    return [
        run_event("COMPLETE", new_run_id(), "spark_orders", ns="spark", inputs=[raw],
                  outputs=[orders], time="2024-06-01T02:00:00Z"),
        run_event("COMPLETE", new_run_id(), "trino_daily", ns="airflow",
                  inputs=[dataset("default.orders", HIVE)], outputs=[daily],
                  time="2024-06-01T03:00:00Z"),
    ]


def test_a_table_is_one_identity_under_its_names(graph: Graph) -> None:
    for _ in _every_load(graph, _events()):
        # lineage enters by the path and continues by the catalog name
        radius = dataset_blast_radius(graph, HDFS, "/warehouse/raw_orders")
        listed = [(i.namespace, i.name, i.aliases) for i in radius.impacted if i.kind == "dataset"]
        assert listed == [(HDFS, "/warehouse/orders", (f"{HIVE}:default.orders",)),
                          (HIVE, "default.orders_daily", ())]
        assert {i.name for i in radius.impacted if i.kind == "job"} == {"spark_orders",
                                                                         "trino_daily"}
        assert radius.aliases == (f"{HIVE}:default.raw_orders",)
        # asked by the other name: the same tables
        by_table = dataset_blast_radius(graph, HIVE, "default.raw_orders")
        assert {i.name for i in by_table.impacted if i.kind == "dataset"} == {
            "/warehouse/orders", "default.orders_daily"}
        up = dataset_upstream(graph, HIVE, "default.orders_daily")
        assert [(i.name, i.distance) for i in up.impacted] == [("default.orders", 1),
                                                               ("/warehouse/raw_orders", 2)]
        # dropping a column under the writer's name breaks the reader of the catalog name
        report = check(graph, [Change("drop_column", HDFS, "/warehouse/orders", "amount")])
        assert report.verdict == "BREAKING"
        assert {f.consumer for f in report.findings} == {f"{HIVE}:default.orders_daily.total"}
        col = column_blast_radius(graph, HDFS, "/warehouse/raw_orders", "email")
        assert [(i.name, i.distance) for i in col.impacted] == [
            ("/warehouse/orders.email", 1), ("default.orders_daily.email", 2)]
        reach = where(graph, HIVE, "default.raw_orders", "email")
        assert {(r.dataset, r.column, r.label) for r in reach.reaches} == {
            ("/warehouse/orders", "email", "raw"), ("default.orders_daily", "email", "raw")}
        # the catalog name was written (by the path): not "never written"
        fresh = freshness(graph, HIVE, "default.orders")
        assert fresh.successes == 1 and fresh.latest_runs[0].job == "spark:spark_orders"
        # listings count a table once, under the name carrying the symlink, with its other names
        tables = {(f.namespace, f.name): f.aliases for f in listing(graph, "dataset")}
        assert tables == {(HDFS, "/warehouse/raw_orders"): (f"{HIVE}:default.raw_orders",),
                          (HDFS, "/warehouse/orders"): (f"{HIVE}:default.orders",),
                          (HIVE, "default.orders_daily"): ()}
        page = graph.read("lookup/datasets", namespace=None, skip=0, limit=50)
        assert {(r["namespace"], r["name"]) for r in page} == set(tables)
        assert page[0]["total"] == 3
