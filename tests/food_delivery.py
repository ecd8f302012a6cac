"""A food-delivery pipeline as OpenLineage events, in the shape Marquez's demo and clients use.

Marquez's UI, its clients and its own tests are exercised on a small pipeline of Postgres tables
(``food_delivery``: loaders of menus, orders, customers … then 7-day aggregates and a job that
only reads). The Marquez compatibility tests run on this one, written here, so that they run on
every clone: each job sends a START with its documentation and SQL, its run's nominal time, and
its datasets with their source (a URI with credentials, which the store must scrub), schema and
documentation; the aggregates' outputs carry column lineage, one of them data-quality
assertions; each run ends with a bare COMPLETE.
"""

from __future__ import annotations

import uuid
from typing import Any

NS = "food_delivery"
PRODUCER = "https://example.test/lineage-graph/tests/food_delivery.py"
SOURCE = {"name": "food_delivery_db",
          "uri": "postgres://food_delivery:not-a-real-password@postgres:5432/food_delivery"}
STARTED = "2020-02-22T22:42:42.000Z"
NOMINAL = "2020-02-22T22:00:00.000Z"

TABLES: dict[str, list[tuple[str, str]]] = {
    "public.menus": [("id", "INTEGER"), ("name", "VARCHAR"), ("restaurant_id", "INTEGER"),
                     ("description", "TEXT")],
    "public.categories": [("id", "INTEGER"), ("name", "VARCHAR"), ("menu_id", "INTEGER"),
                          ("description", "TEXT")],
    "public.menu_items": [("id", "INTEGER"), ("name", "VARCHAR"), ("price", "NUMERIC"),
                          ("category_id", "INTEGER"), ("description", "TEXT")],
    "public.orders": [("id", "INTEGER"), ("placed_on", "TIMESTAMP"), ("menu_item_id", "INTEGER"),
                      ("quantity", "INTEGER"), ("discount_id", "INTEGER"), ("comment", "TEXT")],
    "public.customers": [("id", "INTEGER"), ("created_at", "TIMESTAMP"), ("name", "VARCHAR"),
                         ("email", "VARCHAR"), ("address", "VARCHAR"), ("phone", "VARCHAR")],
    "public.order_status": [("id", "INTEGER"), ("transitioned_at", "TIMESTAMP"),
                            ("status", "VARCHAR"), ("order_id", "INTEGER"),
                            ("customer_id", "INTEGER"), ("driver_id", "INTEGER")],
    "public.drivers": [("id", "INTEGER"), ("created_at", "TIMESTAMP"), ("name", "VARCHAR"),
                       ("phone", "VARCHAR"), ("car_license_plate", "VARCHAR")],
    "public.restaurants": [("id", "INTEGER"), ("name", "VARCHAR"), ("address", "VARCHAR"),
                           ("phone", "VARCHAR"), ("description", "TEXT")],
    "public.orders_7_days": [("order_id", "INTEGER"), ("placed_on", "TIMESTAMP"),
                             ("menu_id", "INTEGER"), ("menu_item_id", "INTEGER"),
                             ("category_id", "INTEGER")],
    "public.delivery_7_days": [("order_id", "INTEGER"), ("order_placed_on", "TIMESTAMP"),
                               ("order_delivered_on", "TIMESTAMP"),
                               ("customer_email", "VARCHAR"), ("customer_address", "VARCHAR"),
                               ("restaurant_id", "INTEGER"), ("driver_id", "INTEGER")],
    "public.top_delivery_times": [("order_id", "INTEGER"), ("order_placed_on", "TIMESTAMP"),
                                  ("order_delivery_time", "DOUBLE"),
                                  ("customer_email", "VARCHAR")],
    "public.discounts": [("id", "INTEGER"), ("amount_off", "INTEGER"),
                         ("customer_email", "VARCHAR"), ("starts_on", "TIMESTAMP")],
    "public.popular_orders_day_of_week": [("order_day_of_week", "VARCHAR"),
                                          ("orders_placed", "INTEGER")],
}

# each output field of the aggregates: the (table, field) it is computed from
LINEAGE: dict[str, dict[str, list[tuple[str, str]]]] = {
    "public.orders_7_days": {
        "order_id": [("public.orders", "id")], "placed_on": [("public.orders", "placed_on")],
        "menu_id": [("public.menus", "id")], "menu_item_id": [("public.menu_items", "id")],
        "category_id": [("public.categories", "id")]},
    "public.delivery_7_days": {
        "order_id": [("public.orders_7_days", "order_id")],
        "order_placed_on": [("public.orders_7_days", "placed_on")],
        "order_delivered_on": [("public.order_status", "transitioned_at")],
        "customer_email": [("public.customers", "email")],
        "customer_address": [("public.customers", "address")],
        "restaurant_id": [("public.restaurants", "id")],
        "driver_id": [("public.drivers", "id")]},
    "public.top_delivery_times": {
        "order_id": [("public.delivery_7_days", "order_id")],
        "order_placed_on": [("public.delivery_7_days", "order_placed_on")],
        "order_delivery_time": [("public.delivery_7_days", "order_placed_on"),
                                ("public.delivery_7_days", "order_delivered_on")],
        "customer_email": [("public.delivery_7_days", "customer_email")]},
    "public.discounts": {"customer_email": [("public.delivery_7_days", "customer_email")]},
    "public.popular_orders_day_of_week": {
        "order_day_of_week": [("public.top_delivery_times", "order_placed_on")],
        "orders_placed": [("public.top_delivery_times", "order_id")]},
}

# job: (inputs, outputs, the COMPLETE's time)
JOBS: dict[str, tuple[list[str], list[str], str]] = {
    "etl_menus": ([], ["public.menus"], "2020-02-22T22:45:52.000Z"),
    "etl_categories": ([], ["public.categories"], "2020-02-22T22:44:52.000Z"),
    "etl_menu_items": ([], ["public.menu_items"], "2020-02-22T22:44:54.000Z"),
    "etl_orders": ([], ["public.orders"], "2020-02-22T22:44:52.000Z"),
    "etl_orders_7_days": (["public.menus", "public.menu_items", "public.orders",
                           "public.categories"], ["public.orders_7_days"],
                          "2020-02-22T22:44:02.000Z"),
    "etl_customers": ([], ["public.customers"], "2020-02-22T22:44:55.000Z"),
    "etl_order_status": ([], ["public.order_status"], "2020-02-22T22:44:52.000Z"),
    "etl_drivers": ([], ["public.drivers"], "2020-02-22T22:44:52.000Z"),
    "etl_restaurants": ([], ["public.restaurants"], "2020-02-22T22:44:56.000Z"),
    "etl_delivery_7_days": (["public.orders_7_days", "public.customers", "public.order_status",
                             "public.drivers", "public.restaurants"], ["public.delivery_7_days"],
                            "2020-02-22T22:48:12.000Z"),
    "delivery_times_7_days": (["public.delivery_7_days"],
                              ["public.top_delivery_times", "public.discounts"],
                              "2020-02-22T22:58:02.000Z"),
    "orders_popular_day_of_week": (["public.top_delivery_times", "public.customers"],
                                   ["public.popular_orders_day_of_week"],
                                   "2020-02-22T22:46:12.000Z"),
    "email_discounts": (["public.discounts", "public.customers"], [], "2020-02-22T22:56:01.000Z"),
}


def _facet(name: str, version: str, body: dict[str, Any]) -> dict[str, Any]:
    kind = {"documentation": "DocumentationDatasetFacet"}.get(name, name[0].upper() + name[1:])
    return {"_producer": PRODUCER,
            "_schemaURL": f"https://openlineage.io/spec/facets/{version}/{kind}.json", **body}


def _dataset(name: str, output: bool) -> dict[str, Any]:
    short = name.split(".")[-1].replace("_", " ")
    facets: dict[str, Any] = {
        "dataSource": _facet("dataSource", "1-0-0", dict(SOURCE)),
        "schema": _facet("schema", "1-0-0", {"fields": [
            {"name": field, "type": kind} for field, kind in TABLES[name]]}),
        "documentation": _facet("documentation", "1-0-0", {
            "description": f"The {short} of the food delivery service."}),
    }
    if output and name in LINEAGE:
        facets["columnLineage"] = _facet("columnLineageDatasetFacet", "1-0-1", {"fields": {
            field: {"inputFields": [{"namespace": NS, "name": table, "field": source}
                                    for table, source in sources],
                    "transformationDescription": f"{field} from {', '.join(s for _, s in sources)}",
                    "transformationType": "IDENTITY" if len(sources) == 1 else "TRANSFORMATION"}
            for field, sources in LINEAGE[name].items()}})
    if output and name == "public.delivery_7_days":
        facets["dataQualityAssertions"] = _facet("dataQualityAssertions", "1-0-0", {"assertions": [
            {"assertion": "not_null", "success": True, "column": "customer_email"},
            {"assertion": "is_string", "success": True, "column": "customer_address"}]})
    return {"namespace": NS, "name": name, "facets": facets}


def run_id(job: str) -> str:
    """The run of ``job`` (one each), the same in every process."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{PRODUCER}#{job}"))


def events() -> list[dict[str, Any]]:
    """The pipeline's events: each job's START, then its COMPLETE."""
    found = []
    for job, (inputs, outputs, completed) in JOBS.items():
        run: dict[str, Any] = {"runId": run_id(job)}
        sql = (f"INSERT INTO {outputs[0]} SELECT * FROM {', '.join(inputs) or 'staging.' + job}"
               if outputs else f"SELECT customer_email FROM {', '.join(inputs)}")
        found.append({
            "eventType": "START", "eventTime": STARTED, "producer": PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": run | {"facets": {"nominalTime": _facet("nominalTimeRunFacet", "1-0-0", {
                "nominalStartTime": NOMINAL, "nominalEndTime": NOMINAL})}},
            "job": {"namespace": NS, "name": job, "facets": {
                "documentation": _facet("documentation", "1-0-0", {
                    "description": f"Job {job.replace('_', ' ')} of the food delivery service."}),
                "sql": _facet("sqlJobFacet", "1-0-0", {"query": sql})}},
            "inputs": [_dataset(name, False) for name in inputs],
            "outputs": [_dataset(name, True) for name in outputs]})
        found.append({
            "eventType": "COMPLETE", "eventTime": completed, "producer": PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": run, "job": {"namespace": NS, "name": job}, "inputs": [], "outputs": []})
    return found
