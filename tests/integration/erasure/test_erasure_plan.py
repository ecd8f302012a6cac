"""Erasure plans with known answers (docs/graph-model.md, "Erasure"): the example shop, and an
estate with a copy renamed since, a masked copy with a second name (symlink), an aggregate and
what reads it, an export whose producer reported no transformation, a table holding a raw email
but no key, a model trained on the email, and a join that copies nothing. Every reached dataset
is classified as the rules say, the key column found in each, and nothing rebuilt comes before
a place it reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graph.db import Graph
from graph.errors import NotFound
from impact.erasure.plan import ErasurePlan, Key, erasure_plan
from tests.conftest import wipe
from tests.helpers import ingest_events, ingest_text, run_event

pytestmark = pytest.mark.integration

SHOP = Path(__file__).parents[3] / "examples" / "events" / "shop.ndjson"
WH = "postgres://warehouse:5432"
NS = "postgres://crm:5432"
LAKE = "s3://lake"


def _places(plan: ErasurePlan) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {p.dataset: (p.action, p.key_columns) for p in plan.places}


def _before(plan: ErasurePlan, first: str, then: str) -> bool:
    steps = {p.dataset: p.step for p in plan.places}
    return steps[first] < steps[then]


def test_the_example_shop_by_its_users_key_and_then_by_both_keys(graph: Graph) -> None:
    ingest_text(graph, SHOP.read_text())
    plan = erasure_plan(graph, [Key(WH, "raw.users", "id")])
    # the producer tags email and full_name PII: they are the personal columns of raw.users
    assert plan.personal == (f"{WH}:raw.users.email", f"{WH}:raw.users.full_name")
    assert _places(plan) == {
        f"{WH}:raw.users": ("delete by key", ("id",)),
        f"{WH}:staging.users_clean": ("delete by key", ("id",)),  # id copied, email masked
        f"{WH}:ml.user_features": ("delete by key", ("user_id",)),  # id and email copied raw
    }
    # orders are joined on the cleaned users' id: nothing of theirs is copied there
    assert plan.influenced == (f"{WH}:marts.orders_enriched",)
    [users] = [p for p in plan.places if p.dataset == f"{WH}:raw.users"]
    assert users.step == 1 and users.statement == 'DELETE FROM "raw"."users" WHERE "id" = :key'
    features = next(p for p in plan.places if p.dataset == f"{WH}:ml.user_features")
    assert features.after == (f"{WH}:raw.users",)
    assert features.statement == 'DELETE FROM "ml"."user_features" WHERE "user_id" = :key'

    # the orders carry the same person's key in their own column
    both = erasure_plan(graph, [Key(WH, "raw.users", "id"), Key(WH, "raw.orders", "user_id")])
    assert _places(both)[f"{WH}:raw.orders"] == ("delete by key", ("user_id",))
    assert _places(both)[f"{WH}:marts.orders_enriched"] == ("delete by key", ("user_id",))
    assert both.influenced == ()
    # revenue by country aggregates the orders' amounts: no personal column reaches it
    assert f"{WH}:marts.revenue_by_country" not in _places(both)


def _field(name: str, *sources: tuple[str, str, str, str | None, str | None, bool]
           ) -> dict[str, Any]:
    return {name: {"inputFields": [
        {"namespace": ns, "name": ds, "field": f,
         "transformations": [] if kind is None else [
             {"type": kind, "subtype": sub, "masking": masked}]}
        for ns, ds, f, kind, sub, masked in sources]}}


def _out(ns: str, name: str, columns: list[str], lineage: dict[str, Any] | None = None,
         **facets: Any) -> dict[str, Any]:
    f: dict[str, Any] = {"schema": {"fields": [{"name": c, "type": "STRING"} for c in columns]},
                         **facets}
    if lineage:
        f["columnLineage"] = {"fields": lineage}
    return {"namespace": ns, "name": name, "facets": f}


def _estate() -> list[dict[str, Any]]:
    people = (NS, "public.people")
    src = [_out(*people, ["person_id", "email", "full_name", "city"], tags={"tags": [
        {"key": "PII", "value": "true", "field": "email"}]})]
    runs = [
        ("load_people", [], src),
        # a raw copy, renamed since (below)
        ("mirror", [people], [_out(NS, "mirror.people", ["person_id", "email"], {
            **_field("person_id", (*people, "person_id", "DIRECT", "IDENTITY", False)),
            **_field("email", (*people, "email", "DIRECT", "IDENTITY", False))})]),
        # the email hashed, no key; the table has a second name in the metastore
        ("hash_emails", [people], [_out(LAKE, "people_hashed", ["email_hash", "city"], {
            **_field("email_hash", (*people, "email", "DIRECT", "TRANSFORMATION", True)),
            **_field("city", (*people, "city", "DIRECT", "IDENTITY", False))},
            symlinks={"identifiers": [{"namespace": "hive://metastore", "name": "lake.people_hashed",
                                       "type": "TABLE"}]})]),
        # people per city: the key aggregated; and a board that copies the count
        ("city_counts", [people], [_out(NS, "stats.city_counts", ["city", "people"], {
            **_field("city", (*people, "city", "DIRECT", "IDENTITY", False)),
            **_field("people", (*people, "person_id", "DIRECT", "AGGREGATION", False))})]),
        ("board", [(NS, "stats.city_counts")], [_out(NS, "dash.city_board", ["city", "people"], {
            **_field("people", (NS, "stats.city_counts", "people", "DIRECT", "IDENTITY", False))})]),
        # an export whose producer says nothing of how: maybe a raw copy
        ("export", [people], [_out("file", "/exports/people.csv", ["id", "mail"], {
            **_field("id", (*people, "person_id", None, None, False)),
            **_field("mail", (*people, "email", None, None, False))})]),
        # the raw email, without the key: rebuilt from cleaned sources, it is gone
        ("newsletter", [people], [_out(NS, "mail.newsletter", ["address"], {
            **_field("address", (*people, "email", "DIRECT", "IDENTITY", False))})]),
        # orders filtered by the person: nothing of theirs copied
        ("vip_orders", [people, (NS, "public.orders")], [_out(NS, "stats.vip_orders", ["order_id"], {
            **_field("order_id", (NS, "public.orders", "order_id", "DIRECT", "IDENTITY", False),
                     (*people, "person_id", "INDIRECT", "FILTER", False))})]),
        # a model trained on the email
        ("train_churn", [(NS, "mirror.people")], [_out("mlflow://models", "churn", ["score"], {
            **_field("score", (NS, "mirror.people", "email", "DIRECT", "TRANSFORMATION", False))},
            datasetType={"datasetType": "MODEL"}, version={"datasetVersion": "3"})]),
    ]
    events = []
    for i, (job, inputs, outputs) in enumerate(runs):
        events.append(run_event(
            "COMPLETE", f"00000000-0000-4000-8000-{i:012d}", job, ns="crm",
            time=f"2026-06-01T02:{i:02d}:00Z", outputs=outputs,
            inputs=[{"namespace": ns, "name": name} for ns, name in inputs]))
    # mirror.people is mirror.persons now
    events.append({"eventTime": "2026-06-02T00:00:00Z", "producer": "https://example.test",
                   "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
                   "dataset": {"namespace": NS, "name": "mirror.persons", "facets": {
                       "lifecycleStateChange": {"lifecycleStateChange": "RENAME",
                                                "previousIdentifier": {"namespace": NS,
                                                                       "name": "mirror.people"}}}}})
    return events


def test_an_estate_every_place_classified_as_the_rules_say(graph: Graph) -> None:
    ingest_events(graph, _estate())
    plan = erasure_plan(graph, [Key(NS, "public.people", "person_id")],
                        personal=("full_name", "no_such_column"))
    assert plan.personal == (f"{NS}:public.people.email", f"{NS}:public.people.full_name")
    assert _places(plan) == {
        f"{NS}:public.people": ("delete by key", ("person_id",)),
        f"{NS}:mirror.persons": ("delete by key", ("person_id",)),  # under its current name
        f"{LAKE}:people_hashed": ("rebuild", ()),
        f"{NS}:stats.city_counts": ("rebuild", ()),
        f"{NS}:dash.city_board": ("rebuild", ()),
        "file:/exports/people.csv": ("unverified", ()),
        f"{NS}:mail.newsletter": ("rebuild", ()),
    }
    assert plan.influenced == (f"{NS}:stats.vip_orders",)
    by_name = {p.dataset: p for p in plan.places}
    assert f"{NS}:mirror.people" in by_name[f"{NS}:mirror.persons"].other_names
    assert "hive://metastore:lake.people_hashed" in by_name[f"{LAKE}:people_hashed"].other_names
    assert by_name[f"{LAKE}:people_hashed"].producers == ("crm:hash_emails",)
    assert by_name["file:/exports/people.csv"].statement is None  # a file: no SQL
    assert by_name[f"{NS}:dash.city_board"].after == (f"{NS}:stats.city_counts",)
    assert _before(plan, f"{NS}:stats.city_counts", f"{NS}:dash.city_board")
    assert all(_before(plan, f"{NS}:public.people", p.dataset) for p in plan.places[1:])
    # the model trained on the mirrored email: retrained, not a place
    assert [(v.name, v.version) for v in plan.models] == [("churn", "3")]
    assert "mlflow://models:churn" not in by_name
    counts = plan.counts()
    assert counts == {"delete by key": 2, "unverified": 1, "rebuild": 4}


def test_an_unknown_key_column_is_not_found(graph: Graph) -> None:
    ingest_events(graph, _estate())
    with pytest.raises(NotFound):
        erasure_plan(graph, [Key(NS, "public.people", "no_such_key")])


def test_the_plan_in_every_format_on_the_cli_and_over_http(
        graph: Graph, monkeypatch: pytest.MonkeyPatch) -> None:
    import csv
    import io
    import json

    from fastapi.testclient import TestClient
    from typer.testing import CliRunner

    from api.app import create_app
    from api.cli import app
    from graph.settings import Settings
    from tests.helpers import point_cli_at_test_server

    ingest_text(graph, SHOP.read_text())
    plan = erasure_plan(graph, [Key(WH, "raw.users", "id"), Key(WH, "raw.orders", "user_id")])
    point_cli_at_test_server(monkeypatch)
    runner = CliRunner()
    keys = ["--key", WH, "raw.users", "id", "--key", WH, "raw.orders", "user_id"]

    def invoke(*args: str) -> str:
        done = runner.invoke(app, ["erasure", "plan", *args], env={"COLUMNS": "200"})
        assert done.exit_code == 0, done.output
        return done.stdout

    as_json = json.loads(invoke(*keys, "--format", "json"))
    assert [(p["dataset"], p["action"]) for p in as_json["places"]] == [
        (p.dataset, p.action) for p in plan.places]
    assert as_json["counts"] == plan.counts()
    rows = list(csv.DictReader(io.StringIO(invoke(*keys, "--format", "csv"))))
    assert [r["place"] for r in rows] == [p.dataset for p in plan.places]
    assert rows[0]["statement"] == plan.places[0].statement
    markdown = invoke(*keys, "--format", "markdown")
    assert markdown.startswith("# Erasure plan for ") and "delete by key" in markdown
    text = invoke(*keys)
    assert f"erasure from {WH}:raw.users.id, {WH}:raw.orders.user_id" in text
    assert 'DELETE FROM "raw"."users" WHERE "id" = :key' in text

    for wrong in (["--key", WH, "raw.users"], [], ["raw.users"]):
        refused = runner.invoke(app, ["erasure", "plan", *wrong])
        assert refused.exit_code == 2 and "--key" in refused.output, refused.output
    missing = runner.invoke(app, ["erasure", "plan", "--key", WH, "raw.users", "nope"])
    assert missing.exit_code != 0 and "no column" in missing.output

    with TestClient(create_app(Settings(), graph), base_url="http://localhost",
                    client=("127.0.0.1", 40001)) as api:
        body = {"keys": [{"namespace": WH, "dataset": "raw.users", "column": "id"},
                         {"namespace": WH, "dataset": "raw.orders", "column": "user_id"}]}
        got = api.post("/api/v1/erasure/plan", json=body)
        assert got.status_code == 200 and got.json()["places"] == as_json["places"]
        as_csv = api.post("/api/v1/erasure/plan", json=body, params={"format": "csv"})
        assert as_csv.status_code == 200 and as_csv.headers["content-type"].startswith("text/csv")
        assert api.post("/api/v1/erasure/plan", json={"keys": []}).status_code == 422
        assert api.post("/api/v1/erasure/plan", json={"keys": [
            {"namespace": WH, "dataset": "raw.users", "column": "nope"}]}).status_code == 404


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(order=st.permutations(range(len(_estate()))), batch=st.sampled_from([1, 3, 500]))
def test_the_plan_is_the_same_whatever_order_and_batches_the_events_came_in(
        graph: Graph, order: list[int], batch: int) -> None:
    """The estate's events in any order and any batching: the same plan, place for place (the
    graph they make is the same, docs/graph-model.md; the plan is read from it alone)."""
    events = _estate()
    wipe(graph)
    ingest_events(graph, events)
    expected = erasure_plan(graph, [Key(NS, "public.people", "person_id")], personal=("full_name",))
    wipe(graph)
    ingest_events(graph, [events[i] for i in order], batch_size=batch)
    found = erasure_plan(graph, [Key(NS, "public.people", "person_id")], personal=("full_name",))
    assert found == expected
