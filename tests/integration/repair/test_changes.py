"""What changed (docs/graph-model.md, "What changed"), on a pipeline with known answers: five
nights of `load_orders` and `load_users` -> `enrich` -> `revenue`; on the sixth, `load_orders`
adds, drops and retypes columns, `enrich` runs new SQL with a new input, another engine setting
and failing assertions, `load_users` stopped two nights before (late), and `revenue` reads the country instead
of the amount and fails. Each change is found once, at its distance, with the run that stated it;
what varies every night (a run's nominal time, an attempt id) is not a change; the answer is the
same in any arrival order and in a window before the bad night nothing changed."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graph.db import Graph
from graph.errors import NotFound
from impact.repair.changes import Change, Changes, changes
from tests.conftest import wipe
from tests.helpers import ingest_events, run_event

pytestmark = pytest.mark.integration

NS = "warehouse"
DAY0 = datetime(2026, 5, 1, 2, tzinfo=UTC)
BAD = 5  # the sixth night
OLD_SQL = "SELECT o.*, u.country FROM raw.orders o JOIN raw.users u USING (user_id)"
NEW_SQL = ("SELECT o.*, u.country, d.discount FROM raw.orders o JOIN raw.users u USING (user_id)\n"
           "LEFT JOIN raw.discounts d USING (order_id)")


def _id(*parts: object) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(map(str, parts))))


def _ds(name: str, columns: list[tuple[str, str]] | None = None,
        lineage: dict[str, list[tuple[str, str]]] | None = None, **facets: Any) -> dict[str, Any]:
    f: dict[str, Any] = dict(facets)
    if columns is not None:
        f["schema"] = {"fields": [{"name": c, "type": t} for c, t in columns]}
    if lineage is not None:
        f["columnLineage"] = {"fields": {out: {"inputFields": [
            {"namespace": NS, "name": src, "field": col,
             "transformations": [{"type": "DIRECT", "subtype": "AGGREGATION"}]}
            for src, col in sources]} for out, sources in lineage.items()}}
    return {"namespace": NS, "name": name, "facets": f}


def _run(job: str, day: int, hour: float, inputs: list[dict[str, Any]],
         outputs: list[dict[str, Any]], fail: bool = False, sql: str | None = None,
         run_facets: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    start = DAY0 + timedelta(days=day, hours=hour)
    run_id = _id(job, day)
    facets = {"nominalTime": {"nominalStartTime": start.isoformat()}, **(run_facets or {})}
    job_facets = {"sql": {"query": sql}} if sql else {}
    return [run_event("START", run_id, job, ns=NS, time=start.isoformat(), inputs=inputs,
                      run_facets=facets, job_facets=job_facets),
            run_event("FAIL" if fail else "COMPLETE", run_id, job, ns=NS,
                      time=(start + timedelta(minutes=10)).isoformat(), inputs=inputs,
                      outputs=outputs, run_facets=facets, job_facets=job_facets)]


def nights() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for day in range(BAD + 1):
        bad = day == BAD
        orders = [("order_id", "BIGINT"), ("user_id", "BIGINT"),
                  ("amount", "DECIMAL(12,2)" if bad else "DOUBLE")]
        orders += [("discount", "DOUBLE")] if bad else [("coupon", "STRING")]
        events += _run("load_orders", day, 0, [], [_ds("raw.orders", orders)])
        if day < BAD - 1:  # load_users stopped: raw.users is late on the bad night
            events += _run("load_users", day, 0, [], [_ds("raw.users", [("user_id", "BIGINT"),
                                                                         ("country", "STRING")])])
        inputs = [_ds("raw.orders"), _ds("raw.users")] + ([_ds("raw.discounts")] if bad else [])
        enriched = _ds("marts.orders_enriched", [("order_id", "BIGINT"), ("amount", "DOUBLE"),
                                                 ("country", "STRING")])
        if bad:
            enriched["facets"]["dataQualityAssertions"] = {"assertions": [
                {"assertion": "not_null", "column": "country", "success": False}]}
        events += _run("enrich", day, 1, inputs, [enriched], sql=NEW_SQL if bad else OLD_SQL,
                       run_facets={
                           "spark_properties": {"properties": {
                               "spark.master": "local", "spark.sql.ansi.enabled": str(bad).lower()}},
                           "attempt": {"id": _id("attempt", day), "mode": "batch"}})
        source = "country" if bad else "amount"
        events += _run("revenue", day, 2, [_ds("marts.orders_enriched")],
                       [_ds("marts.revenue", [("country", "STRING"), ("total", "DOUBLE")],
                            {"total": [("marts.orders_enriched", source)],
                             "country": [("marts.orders_enriched", "country")]})], fail=bad)
    return events


def _key(c: Change) -> tuple[str, int, str, str]:
    return c.kind, c.distance, c.on, c.what


def _load(graph: Graph, order: str) -> None:
    events = nights()
    if order == "reversed":
        events.reverse()
    elif order == "shuffled":
        random.Random(7).shuffle(events)
    wipe(graph)
    ingest_events(graph, events, batch_size=7)


def _expected() -> set[tuple[str, int, str]]:
    """(kind, distance, on) of every change the rules name, for the failing job."""
    enrich, orders = f"{NS}:enrich", f"{NS}:raw.orders"
    return {
        ("failed run", 0, f"{NS}:revenue"),
        ("lineage", 0, f"{NS}:revenue"),  # total: now from country, no longer from amount
        ("lineage", 1, enrich),  # new input raw.discounts
        ("job facet", 1, enrich),  # the SQL
        ("run facet", 1, enrich),  # spark_properties (ansi), attempt.mode not: it did not change
        ("assertions", 1, f"{NS}:marts.orders_enriched"),
        ("schema", 2, orders),  # discount added, coupon dropped, amount retyped
        ("late", 2, f"{NS}:raw.users"),
    }


@pytest.mark.parametrize("order", ["in order", "reversed", "shuffled"])
def test_what_changed_before_the_failing_run_is_found_once_at_its_distance(
        session_graph: Graph, order: str) -> None:
    _load(session_graph, order)
    answer = changes(session_graph, "job", NS, "revenue")
    assert answer.baseline is not None and answer.baseline.startswith(_id("revenue", BAD - 1))
    assert answer.latest is not None and answer.latest.startswith(_id("revenue", BAD))
    assert {(c.kind, c.distance, c.on) for c in answer.changes} == _expected(), answer
    by_what = {c.what: c for c in answer.changes}
    # nearest first
    assert [c.distance for c in answer.changes] == sorted(c.distance for c in answer.changes)
    # the column lineage the failed run stated against its baseline's, with both runs
    [column] = [c for c in answer.changes if c.evidence.get("change") == "column lineage"]
    assert column.what == (f"column marts.revenue.total: now from {NS}:marts.orders_enriched.country"
                           f" (DIRECT AGGREGATION); no longer from {NS}:marts.orders_enriched.amount"
                           " (DIRECT AGGREGATION)")
    assert column.runs == (_id("revenue", BAD), _id("revenue", BAD - 1))
    assert by_what[f"new input {NS}:raw.discounts"].runs == (_id("enrich", BAD),)
    # the schema of raw.orders, each change with the run that wrote it
    schema = {c.what: c for c in answer.changes if c.kind == "schema"}
    assert set(schema) == {"column discount added (DOUBLE)",
                           "column coupon dropped (last written 2026-05-05 02:10)",
                           "column amount retyped DOUBLE -> DECIMAL(12,2)"}
    assert {c.runs for c in schema.values()} == {(_id("load_orders", BAD),)}
    # the SQL, with its diff; the engine setting, and not what varies every night
    [sql] = [c for c in answer.changes if c.kind == "job facet"]
    assert sql.what == "job facet sql changed: query"
    assert "+LEFT JOIN raw.discounts d USING (order_id)" in sql.evidence["changes"][0]["diff"]
    [props] = [c for c in answer.changes if c.kind == "run facet"]
    assert props.what == "run facet spark_properties changed: properties.spark.sql.ansi.enabled"
    assert props.evidence["changes"][0]["before"] == "false"
    assert props.evidence["changes"][0]["after"] == "true"
    late = next(c for c in answer.changes if c.kind == "late")
    assert late.what.startswith("late: last written 2026-05-04 02:10")


def test_a_dataset_answers_from_its_writers_and_a_window_before_the_bad_night_is_quiet(
        session_graph: Graph) -> None:
    _load(session_graph, "in order")
    answer = changes(session_graph, "dataset", NS, "marts.revenue")
    assert {(c.kind, c.distance, c.on) for c in answer.changes} == _expected()
    # the nights before: nothing changed between the third and the fourth
    quiet = changes(session_graph, "job", NS, "revenue", since=_id("revenue", BAD - 2),
                    until=DAY0 + timedelta(days=BAD - 1, hours=3))
    assert quiet.changes == (), quiet
    assert quiet.baseline is not None and quiet.baseline.startswith(_id("revenue", BAD - 2))
    # since a time: the same changes as against the baseline run
    timed = changes(session_graph, "job", NS, "revenue",
                    since=DAY0 + timedelta(days=BAD - 1, hours=2))
    assert {_key(c) for c in timed.changes} == {_key(c) for c in answer.changes}


def test_a_job_that_never_changed_says_so_and_an_unknown_one_is_not_found(
        session_graph: Graph) -> None:
    _load(session_graph, "in order")
    # load_users last ran on the fourth night, the same way as on the third
    steady: Changes = changes(session_graph, "job", NS, "load_users")
    assert steady.changes == () and steady.examined >= 1
    with pytest.raises(NotFound):
        changes(session_graph, "job", NS, "no_such_job")
    with pytest.raises(NotFound):
        changes(session_graph, "job", NS, "revenue", since=str(uuid.uuid4()))


def test_what_changed_in_every_format_on_the_cli_and_over_http(
        session_graph: Graph, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from fastapi.testclient import TestClient
    from typer.testing import CliRunner

    from api.app import create_app
    from api.cli import app
    from api.render.markup import md
    from graph.settings import Settings
    from tests.helpers import point_cli_at_test_server

    _load(session_graph, "in order")
    answer = changes(session_graph, "job", NS, "revenue")
    point_cli_at_test_server(monkeypatch)
    runner = CliRunner()

    def invoke(*args: str) -> str:
        done = runner.invoke(app, ["changes", *args], env={"COLUMNS": "200"})
        assert done.exit_code == 0, done.output
        return done.stdout

    as_json = json.loads(invoke("job", NS, "revenue", "--format", "json"))
    assert [(c["kind"], c["on"], c["what"]) for c in as_json["changes"]] == [
        (c.kind, c.on, c.what) for c in answer.changes]
    markdown = invoke("job", NS, "revenue", "--format", "markdown")
    assert markdown.startswith(f"# What changed for job {md(NS)}:revenue")
    assert all(md(c.what) in markdown for c in answer.changes)
    assert "+LEFT JOIN raw.discounts d USING (order_id)" in markdown
    text = invoke("job", NS, "revenue")
    assert "10 changes, nearest first" in text and "retyped DOUBLE ->" in text
    assert "-SELECT o.*, u.country FROM raw.orders" in text  # the SQL's diff under the table
    by_run = json.loads(invoke("dataset", NS, "marts.revenue", "--since", _id("revenue", BAD - 1),
                               "--format", "json"))
    assert {c["what"] for c in by_run["changes"]} == {c.what for c in answer.changes}

    missing = runner.invoke(app, ["changes", "job", NS, "nothing_here"])
    assert missing.exit_code != 0 and "no job" in missing.output
    bad_time = runner.invoke(app, ["changes", "job", NS, "revenue", "--until", "soon"])
    assert bad_time.exit_code == 2 and "--until" in bad_time.output

    with TestClient(create_app(Settings(), session_graph), base_url="http://localhost",
                    client=("127.0.0.1", 40001)) as api:
        got = api.get("/api/v1/changes/job", params={"namespace": NS, "name": "revenue"})
        assert got.status_code == 200 and got.json()["changes"] == as_json["changes"]
        by_dataset = api.get("/api/v1/changes/dataset", params={
            "namespace": NS, "name": "marts.revenue", "since": _id("revenue", BAD - 1)})
        assert by_dataset.status_code == 200
        assert by_dataset.json()["changes"] == by_run["changes"]
        as_markdown = api.get("/api/v1/changes/job", params={
            "namespace": NS, "name": "revenue", "format": "markdown"})
        assert as_markdown.status_code == 200 and as_markdown.text == markdown
        assert api.get("/api/v1/changes/job", params={
            "namespace": NS, "name": "nothing_here"}).status_code == 404
        refused = api.get("/api/v1/changes/job", params={
            "namespace": NS, "name": "revenue", "since": "soon"})
        assert refused.status_code == 422 and "since" in refused.text
