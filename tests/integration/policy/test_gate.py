"""Gates a pipeline waits on (impact.policy.gate), against the real Neo4j: each cause that closes a
dataset's gate (a failed upstream run with no success after it, failed data-quality assertions,
a quality rule's bounds, a late input, a policy violation), with its path; the gate opens again
when the cause goes; the datasets downstream say "quality at risk"; the API and the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.app import create_app
from api.cli import app
from graph.db import Graph
from graph.settings import Settings
from impact.policy.gate import gate
from impact.policy.rules import parse_policies
from ingest.log.sqlite import SQLiteLog
from tests.helpers import dataset, ingest_events, new_run_id, point_cli_at_test_server, run_event

pytestmark = pytest.mark.integration


def _day(n: int) -> str:
    return f"2024-05-{n:02d}T02:00:00Z"


def _pipeline(graph: Graph, *, raw_facets: dict[str, Any] | None = None,
              input_facets: dict[str, Any] | None = None) -> None:
    """raw (written by load) -> clean (by clean) -> mart (by build), one good night."""
    raw = dataset("raw", columns=["id", "email"], **(raw_facets or {}))
    read_raw = dataset("raw")
    if input_facets:
        read_raw["inputFacets"] = input_facets
    events = [
        run_event("COMPLETE", new_run_id(), "load", time=_day(1), outputs=[raw]),
        run_event("COMPLETE", new_run_id(), "clean", time=_day(1), inputs=[read_raw],
                  outputs=[dataset("clean", columns=["id", "email"], lineage={
                      "email": [("raw", "email", "DIRECT", "IDENTITY")]})]),
        run_event("COMPLETE", new_run_id(), "build", time=_day(1), inputs=[dataset("clean")],
                  outputs=[dataset("mart", columns=["email"], lineage={
                      "email": [("clean", "email", "DIRECT", "IDENTITY")]})]),
    ]
    report = ingest_events(graph, events)
    assert report.loaded == 3, report.rejected


NOW = datetime(2024, 5, 2, 3, 0, tzinfo=UTC)


def test_a_good_night_opens_the_gate(graph: Graph) -> None:
    _pipeline(graph)
    answer = gate(graph, "ns", "mart", now=NOW)
    assert answer.open and answer.causes == () and answer.upstream == 2
    assert answer.why() == "open: ns:mart may be consumed"


def test_a_failed_upstream_run_closes_it_until_a_success_comes_after(graph: Graph) -> None:
    _pipeline(graph)
    failed = new_run_id()
    ingest_events(graph, [run_event("START", failed, "clean", time=_day(2), inputs=[dataset("raw")],
                                    outputs=[dataset("clean")]),
                          run_event("FAIL", failed, "clean", time="2024-05-02T02:10:00Z",
                                    inputs=[dataset("raw")], outputs=[dataset("clean")])])
    answer = gate(graph, "ns", "mart", now=NOW)
    assert not answer.open
    [cause] = answer.causes
    assert (cause.kind, cause.dataset, cause.job, cause.run) == ("failed-run", "ns:clean",
                                                                 "ns:clean", failed)
    assert cause.path == ("ns:clean", "ns:mart")
    assert "the latest run of ns:clean failed at 2024-05-02 02:10" in cause.what
    # the rerun succeeds: open again
    ingest_events(graph, [run_event("COMPLETE", new_run_id(), "clean", time="2024-05-02T02:30:00Z",
                                    inputs=[dataset("raw")], outputs=[dataset("clean")])])
    assert gate(graph, "ns", "mart", now=NOW).open


def test_failed_assertions_and_quality_bounds_upstream(graph: Graph) -> None:
    assertions = {"dataQualityAssertions": {"assertions": [
        {"assertion": "not_null", "success": False, "column": "email"},
        {"assertion": "unique", "success": True, "column": "id"}]},
        "dataQualityMetrics": {"rowCount": 100, "columnMetrics": {
            "email": {"nullCount": 30, "distinctCount": 60}, "id": {"nullCount": 0}}}}
    _pipeline(graph, input_facets=assertions,
              raw_facets={"tags": {"tags": [{"key": "PII", "value": "true", "field": "email"}]}})
    rules = parse_policies("""\
version: 1
rules:
  - id: pii-mostly-present
    quality: {columns: {tag: PII}, metric: null-ratio, above: 0.1}
  - id: ids-present
    severity: warning
    quality: {columns: {column: id}, metric: null-count, above: 0}
  - id: enough-rows
    severity: warning
    quality: {columns: {dataset: raw}, metric: row-count, below: 1000}
""")
    answer = gate(graph, "ns", "mart", rules, now=NOW)
    assert not answer.open
    kinds = [(c.kind, c.dataset, c.severity) for c in answer.causes]
    assert kinds == [("failed-assertion", "ns:raw", "error"), ("quality", "ns:raw", "error"),
                     ("quality", "ns:raw", "warning")]
    assertion, quality, rows = answer.causes
    assert "not_null(email)" in assertion.what and "unique" not in assertion.what
    assert quality.what == "rule pii-mostly-present: ns:raw.email: null-ratio 0.3 is above 0.1"
    assert quality.path == ("ns:raw", "ns:clean", "ns:mart")
    assert rows.what == "rule enough-rows: ns:raw: row-count 100 is below 1000"


def test_a_late_input_closes_it(graph: Graph) -> None:
    _pipeline(graph)
    ingest_events(graph, [run_event("COMPLETE", new_run_id(), "load", time=_day(d),
                                    outputs=[dataset("raw")]) for d in (2, 3, 4, 5)])
    on_time = gate(graph, "ns", "mart", now=datetime(2024, 5, 6, 2, tzinfo=UTC))
    assert on_time.open
    late = gate(graph, "ns", "mart", now=datetime(2024, 5, 9, tzinfo=UTC))
    [cause] = late.causes
    assert cause.kind == "late" and cause.dataset == "ns:raw"
    assert "last written 2024-05-05 02:00, due by 2024-05-06 14:00" in cause.what


def test_an_error_violation_touching_it_closes_it_a_warning_does_not(graph: Graph) -> None:
    _pipeline(graph)
    rule = """\
version: 1
rules:
  - id: nothing-raw-in-marts
    severity: %s
    flow: {from: {dataset: raw}, to: {dataset: mart}, must: never}
"""
    closed = gate(graph, "ns", "mart", parse_policies(rule % "error"), now=NOW)
    [cause] = closed.causes
    assert (cause.kind, cause.rule) == ("violation", "nothing-raw-in-marts") and not closed.open
    warned = gate(graph, "ns", "mart", parse_policies(rule % "warning"), now=NOW)
    assert warned.open and [c.severity for c in warned.causes] == ["warning"]
    # the rule is about mart: clean's gate is open
    assert gate(graph, "ns", "clean", parse_policies(rule % "error"), now=NOW).open


def test_the_api_the_cli_and_quality_at_risk(graph: Graph, tmp_path: Any,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    _pipeline(graph)
    failed = new_run_id()
    ingest_events(graph, [run_event("FAIL", failed, "clean", time=_day(2),
                                    inputs=[dataset("raw")], outputs=[dataset("clean")])])
    api = TestClient(create_app(Settings(), graph, SQLiteLog(tmp_path / "events.db")),
                     base_url="http://localhost", client=("127.0.0.1", 40001))
    body = api.get("/api/v1/gate", params={"namespace": "ns", "name": "mart"}).json()
    assert body["open"] is False and body["causes"][0]["kind"] == "failed-run"
    assert body["causes"][0]["path"] == ["ns:clean", "ns:mart"]
    assert body["why"].startswith("closed: ns:mart should not be consumed: the latest run of ns:clean")
    assert api.get("/api/v1/gate", params={"namespace": "ns", "name": "raw"}).json()["open"]
    missing = api.get("/api/v1/gate", params={"namespace": "ns", "name": "nope"})
    assert missing.status_code == 404
    risk = api.get("/api/v1/dataset", params={"namespace": "ns", "name": "mart"}).json()
    assert [c["dataset"] for c in risk["qualityAtRisk"]] == ["ns:clean"]
    point_cli_at_test_server(monkeypatch)
    runner = CliRunner()
    r = runner.invoke(app, ["gate", "ns", "mart"])
    assert r.exit_code == 1 and r.stdout.startswith("CLOSED: ns:mart"), r.output
    assert "path: ns:clean -> ns:mart" in r.stdout
    r = runner.invoke(app, ["gate", "ns", "raw", "--format", "json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["open"] is True
    assert runner.invoke(app, ["gate", "ns", "nope"]).exit_code == 2
    shown = runner.invoke(app, ["show", "dataset", "ns", "mart", "--format", "plain"])
    assert shown.exit_code == 0, shown.output
    assert "quality at risk\tfailed-run\tthe latest run of ns:clean failed" in shown.stdout
    # a cause that happened long ago is no less a cause: the gate does not expire it
    assert not gate(graph, "ns", "mart", now=NOW + timedelta(days=365)).open
