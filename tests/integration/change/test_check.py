"""The pre-deploy change check against the real server, on a scenario whose answers are known.

    raw_users(id, email, name) --IDENTITY--> copy1.email --IDENTITY--> copy2.email   (owner team:ml)
    raw_users.id --INDIRECT JOIN--> joined.total <--AGGREGATION-- orders.amount
    raw_users --(job report, no column lineage)--> report                               (coarse)
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.app import create_app
from api.cli import app
from api.render.check import check_markdown
from graph.db import Graph
from graph.settings import Settings, get_settings
from impact.change.check import check, widens
from impact.change.read import Change, CheckInputError, parse_change
from tests.helpers import dataset, ingest_events, new_run_id, point_cli_at_test_server, run_event

pytestmark = pytest.mark.integration
T = "2024-06-01T02:00:00Z"
NOW = datetime(2024, 6, 10, tzinfo=UTC)


@pytest.fixture
def scenario(graph: Graph) -> Graph:
    def job(name: str, outputs: list[dict], inputs: list[str], time: str = T) -> dict:  # type: ignore[type-arg]
        return run_event("COMPLETE", new_run_id(), name, time=time, inputs=[dataset(i) for i in inputs],
                         outputs=outputs)

    report = ingest_events(graph, [
        job("load", [dataset("raw_users", columns=["id", "email", "name"]),
                     dataset("orders", columns=["user_id", "amount"])], []),
        job("j1", [dataset("copy1", columns=["email"],
                           lineage={"email": [("raw_users", "email", "DIRECT", "IDENTITY")]})], ["raw_users"]),
        job("j2", [dataset("copy2", columns=["email"], ownership={"owners": [{"name": "team:ml"}]},
                           lineage={"email": [("copy1", "email", "DIRECT", "IDENTITY")]})], ["copy1"]),
        job("j3", [dataset("joined", columns=["total"], lineage={"total": [
            ("orders", "amount", "DIRECT", "AGGREGATION"), ("raw_users", "id", "INDIRECT", "JOIN")]})],
            ["orders", "raw_users"]),
        job("report", [dataset("report", columns=["n"])], ["raw_users"], time="2024-01-01T00:00:00Z"),
    ])
    assert not report.rejected
    return graph


def _by_consumer(report) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {f.consumer: f.severity for f in report.findings}


def test_dropping_a_column_copied_two_hops_away_is_breaking_with_the_path(scenario: Graph) -> None:
    report = check(scenario, [Change("drop_column", "ns", "raw_users", "email")], now=NOW)
    assert report.verdict == "BREAKING"
    found = {f.consumer: f for f in report.findings}
    far = found["ns:copy2.email"]
    assert far.severity == "BREAKING" and far.path == ("raw_users.email", "copy1.email", "copy2.email")
    assert far.transformation == "DIRECT IDENTITY -> DIRECT IDENTITY" and far.owners == ("team:ml",)
    assert far.job == "ns:j2" and far.last_run == datetime(2024, 6, 1, 2, tzinfo=UTC) and not far.stale
    assert found["ns:copy1.email"].severity == "BREAKING"
    # the coarse consumer (no column lineage) may read it: risky, and stale (no run since January)
    coarse = found["ns:report"]
    assert coarse.severity == "RISKY" and coarse.stale and "unknown" in coarse.note


def test_a_join_key_only_is_risky(scenario: Graph) -> None:
    report = check(scenario, [Change("drop_column", "ns", "raw_users", "id")], now=NOW)
    by = _by_consumer(report)
    assert by["ns:joined.total"] == "RISKY" and report.verdict == "RISKY"
    # leaving the stale coarse consumer out does not change that (the join is fresh)
    assert check(scenario, [Change("drop_column", "ns", "raw_users", "id")], now=NOW,
                 exclude_stale=True).verdict == "RISKY"


def test_stale_consumers_can_be_excluded_from_the_verdict(scenario: Graph) -> None:
    # name is read by no column lineage; only the stale coarse report job may read it
    change = [Change("drop_column", "ns", "raw_users", "name")]
    assert check(scenario, change, now=NOW).verdict == "RISKY"
    excluded = check(scenario, change, now=NOW, exclude_stale=True)
    assert excluded.verdict == "SAFE" and any(f.stale for f in excluded.findings)


def test_adding_a_column_is_safe_and_widening_is_not_breaking(scenario: Graph) -> None:
    assert check(scenario, [Change("add_column", "ns", "raw_users", "phone", "STRING")]).verdict == "SAFE"
    assert widens("int", "bigint") and widens("decimal(10,2)", "decimal(12,2)") and widens("varchar(20)", "text")
    assert not widens("bigint", "int") and not widens("decimal(10,2)", "decimal(10,1)")
    assert not widens("string", "int")


def test_renaming_a_dataset_breaks_its_readers(scenario: Graph) -> None:
    report = check(scenario, [Change("rename_dataset", "ns", "orders", to="sales_orders")], now=NOW)
    by = _by_consumer(report)
    assert report.verdict == "BREAKING" and by["ns:j3"] == "BREAKING" and by["ns:joined"] == "BREAKING"


def test_sql_that_stops_reading_a_table_shows_which_columns_lose_their_source(scenario: Graph) -> None:
    changes = parse_change({"job": {"namespace": "ns", "name": "j2"}, "namespace": "ns",
                            "sql": "INSERT INTO copy2 SELECT email FROM raw_users"}, scenario)
    assert [(c.op, c.dataset) for c in changes] == [("remove_input", "copy1")]
    report = check(scenario, changes, now=NOW)
    [lost] = [f for f in report.findings if f.note == "loses its source"]
    assert lost.consumer == "ns:copy2.email" and lost.severity == "BREAKING"
    assert lost.path == ("copy1.email", "copy2.email")


def test_a_proposed_schema_is_diffed_against_the_stored_one(scenario: Graph) -> None:
    changes = parse_change({"namespace": "ns", "dataset": "raw_users",
                            "columns": [{"name": "id", "type": "STRING"}, "name", "phone"]}, scenario)
    assert {(c.op, c.column) for c in changes} == {("drop_column", "email"), ("add_column", "phone")}
    event = {"eventTime": T, "producer": "x", "schemaURL": "x",
             "dataset": {"namespace": "ns", "name": "raw_users", "facets": {"schema": {"fields": [
                 {"name": "id", "type": "BIGINT"}, {"name": "email", "type": "STRING"}]}}}}
    assert [(c.op, c.column, c.to) for c in parse_change(event, scenario)] == [
        ("drop_column", "name", None), ("retype_column", "id", "BIGINT")]


def test_unknown_columns_and_datasets_are_input_errors(scenario: Graph) -> None:
    with pytest.raises(CheckInputError, match="unknown column ns:raw_users.nope"):
        check(scenario, [Change("drop_column", "ns", "raw_users", "nope")])
    with pytest.raises(CheckInputError, match="unknown dataset ns:ghost"):
        parse_change({"namespace": "ns", "dataset": "ghost", "columns": ["a"]}, scenario)
    with pytest.raises(CheckInputError, match="changes.0.op: Input should be 'drop_column'"):
        parse_change({"changes": [{"op": "explode", "namespace": "ns", "dataset": "raw_users"}]}, scenario)


def test_markdown_report_reads_as_a_pull_request_comment(scenario: Graph) -> None:
    md = check_markdown(check(scenario, [Change("drop_column", "ns", "raw_users", "email")], now=NOW))
    lines = md.splitlines()
    assert lines[0] == "### :x: lineage check: **BREAKING**"
    assert lines[2].startswith("2 breaking, 1 risky, 0 safe for 1 change(s): `drop column ns:raw_users.email`")
    # names outside code spans are escaped for Markdown (raw\_users renders as raw_users)
    assert "| BREAKING | drop column ns:raw\\_users.email | `ns:copy2.email` | DIRECT IDENTITY -> " \
           "DIRECT IDENTITY | team:ml | 2024-06-01 |" in md
    assert "<details><summary>paths</summary>" in md
    assert "raw\\_users.email → copy1.email → copy2.email" in md
    # what breaks, as a diagram the pull request renders: each hop once, consumers by severity
    diagram = md[md.index("```mermaid"):md.index("```", md.index("```mermaid") + 3)].splitlines()
    assert diagram[1] == "flowchart LR"
    node = {line.split('["')[1].rstrip('"]'): line.split("[")[0].strip() for line in diagram if '["' in line}
    assert f"  {node['raw_users.email']} --> {node['copy1.email']}" in diagram
    assert f"  {node['copy1.email']} --> {node['copy2.email']}" in diagram
    assert sum(line.endswith(f"--> {node['copy2.email']}") for line in diagram) == 1
    assert f"  class {node['copy2.email']} breaking" in diagram


@pytest.fixture
def cli(scenario: Graph, monkeypatch: pytest.MonkeyPatch) -> Iterator[CliRunner]:
    point_cli_at_test_server(monkeypatch)
    yield CliRunner()
    get_settings.cache_clear()


def test_cli_exit_codes_and_formats(cli: CliRunner, tmp_path: Path) -> None:
    drop = tmp_path / "drop.yaml"
    drop.write_text("changes:\n  - op: drop_column\n    namespace: ns\n    dataset: raw_users\n    column: email\n")
    r = cli.invoke(app, ["check", str(drop), "--format", "json"])
    assert r.exit_code == 1, r.output
    body = json.loads(r.stdout)
    assert body["verdict"] == "BREAKING" and body["counts"]["BREAKING"] == 2
    assert cli.invoke(app, ["check", str(drop), "--fail-on", "never"]).exit_code == 0
    join = tmp_path / "join.json"
    join.write_text(json.dumps({"changes": [{"op": "drop_column", "namespace": "ns", "dataset": "raw_users",
                                             "column": "id"}]}))
    assert cli.invoke(app, ["check", str(join)]).exit_code == 0           # risky passes by default
    r = cli.invoke(app, ["check", str(join), "--fail-on", "risky", "--format", "text"])
    assert r.exit_code == 1 and r.stdout.startswith("lineage check: RISKY")
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("changes:\n  - {op: drop_column, namespace: ns, dataset: raw_users, column: nope}\n")
    r = cli.invoke(app, ["check", str(unknown)])
    assert r.exit_code == 2 and "unknown column ns:raw_users.nope" in r.output
    garbage = tmp_path / "garbage.yaml"
    garbage.write_text("changes: [unclosed\n")
    assert cli.invoke(app, ["check", str(garbage)]).exit_code == 2
    assert cli.invoke(app, ["check", str(drop), "--format", "xml"]).exit_code == 2


def test_api_check(scenario: Graph) -> None:
    with TestClient(create_app(Settings(), scenario), client=("127.0.0.1", 1),
                    base_url="http://localhost") as c:
        r = c.post("/api/v1/impact/check", json={"changes": [
            {"op": "add_column", "namespace": "ns", "dataset": "raw_users", "column": "phone"}]})
        assert r.status_code == 200 and r.json()["verdict"] == "SAFE"
        r = c.post("/api/v1/impact/check", json={"changes": [
            {"op": "drop_column", "namespace": "ns", "dataset": "raw_users", "column": "nope"}]})
        assert r.status_code == 422 and "unknown column" in r.json()["errors"][0]["msg"]
