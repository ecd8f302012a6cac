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
from impact.change.check import check
from impact.change.read import Change
from impact.discover import listing
from impact.health.freshness import freshness
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


def _marquez_ids(answer: dict[str, Any]) -> dict[str, tuple[set[str], set[str]]]:
    return {n["id"]: ({e["origin"] for e in n["inEdges"]}, {e["destination"] for e in n["outEdges"]})
            for n in answer["graph"]}


def test_marquez_lineage_crosses_a_tables_names_and_lists_it_once(graph: Graph) -> None:
    from impact.marquez.lineage import lineage

    for _ in _every_load(graph, _events()):
        # asked by the catalog name of the job's input, which the job reads by its path
        got = _marquez_ids(lineage(graph, f"dataset:{HIVE}:default.raw_orders", depth=5))
        orders = f"dataset:{HDFS}:/warehouse/orders"
        assert got == {
            f"dataset:{HIVE}:default.raw_orders": (set(), {"job:spark:spark_orders"}),
            "job:spark:spark_orders": ({f"dataset:{HIVE}:default.raw_orders"}, {orders}),
            # written by its path, read by its catalog name: one node, under the canonical name
            orders: ({"job:spark:spark_orders"}, {"job:airflow:trino_daily"}),
            "job:airflow:trino_daily": ({orders}, {f"dataset:{HIVE}:default.orders_daily"}),
            f"dataset:{HIVE}:default.orders_daily": ({"job:airflow:trino_daily"}, set()),
        }
        # from the far end, upstream, the same table under its name asked for nowhere
        up = _marquez_ids(lineage(graph, f"dataset:{HIVE}:default.orders_daily", depth=5))
        assert set(up) == set(got) - {f"dataset:{HIVE}:default.raw_orders"} | {
            f"dataset:{HDFS}:/warehouse/raw_orders"}
        fields = {n["id"]: [f["name"] for f in n["data"]["fields"]] for n in
                  lineage(graph, f"dataset:{HIVE}:default.orders", depth=1)["graph"]
                  if n["type"] == "DATASET"}
        assert fields[f"dataset:{HIVE}:default.orders"] == ["id", "email", "amount"]


def test_marquez_lineage_from_a_symlink_name_of_a_read_table(graph: Graph) -> None:
    from impact.marquez.lineage import lineage

    src = dataset("/wh/src", "hdfs://nn:8020", symlinks={"identifiers": [
        {"namespace": "hive://ms:9083", "name": "db.src", "type": "TABLE"}]})
    assert ingest_events(graph, [run_event("COMPLETE", new_run_id(), "copy", ns="spark",
                                           inputs=[src], outputs=[dataset("db.out", "ch://h:8123")])
                                 ]).rejected == []
    got = _marquez_ids(lineage(graph, "dataset:hive://ms:9083:db.src", depth=5))
    assert got == {"dataset:hive://ms:9083:db.src": (set(), {"job:spark:copy"}),
                   "job:spark:copy": ({"dataset:hive://ms:9083:db.src"}, {"dataset:ch://h:8123:db.out"}),
                   "dataset:ch://h:8123:db.out": ({"job:spark:copy"}, set())}


def test_marquez_lineage_fields_are_the_current_schema_in_its_order(graph: Graph) -> None:
    from impact.marquez.lineage import lineage

    run = new_run_id()
    later = run_event("COMPLETE", run, "w", outputs=[dataset("t", columns=["a", "b"])],
                      time="2024-06-02T00:00:00Z")
    earlier = run_event("COMPLETE", new_run_id(), "w", outputs=[dataset("t", columns=["a", "b", "c"])],
                        time="2024-06-01T00:00:00Z")
    for order in ([later, earlier], [earlier, later]):
        wipe(graph)
        for e in order:
            assert ingest_events(graph, [e]).rejected == []
        [node] = [n for n in lineage(graph, "dataset:ns:t", depth=1)["graph"] if n["type"] == "DATASET"]
        assert [f["name"] for f in node["data"]["fields"]] == ["a", "b"]


def test_a_column_reached_under_two_names_of_its_table_is_listed_once(graph: Graph) -> None:
    from impact.upstream import column_upstream

    src = dataset("/wh/src", "hdfs://nn:8020", columns=["id"], symlinks={"identifiers": [
        {"namespace": "hive://ms:9083", "name": "db.src", "type": "TABLE"}]})

    def out(source_ns: str, source: str) -> dict[str, Any]:
        o = dataset("db.out", "ch://h:8123", columns=["id"])
        o["facets"]["columnLineage"] = {"fields": {"id": {"inputFields": [
            {"namespace": source_ns, "name": source, "field": "id",
             "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}]}]}}}
        return o

    events = [run_event("COMPLETE", new_run_id(), "from_path", ns="spark", inputs=[src],
                        outputs=[out("hdfs://nn:8020", "/wh/src")]),
              run_event("COMPLETE", new_run_id(), "from_table", ns="trino",
                        inputs=[dataset("db.src", "hive://ms:9083")],
                        outputs=[out("hive://ms:9083", "db.src")])]
    for _ in _every_load(graph, events):
        answer = column_upstream(graph, "ch://h:8123", "db.out", "id")
        found = [(i.namespace, i.name, i.aliases) for i in answer.impacted]
        assert len(found) == 1, found
        [(ns, name, aliases)] = found
        names = {f"{ns}:{name}", *aliases}
        assert names == {"hdfs://nn:8020:/wh/src.id", "hive://ms:9083:db.src.id"}
