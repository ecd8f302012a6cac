"""Policy rules against the real Neo4j, on the example shop pipeline (examples/events) whose
answers are known: PII (raw.users.email, full_name) reaches staging only masked (email_hash) and
the ML features raw (ml.user_features.email); orders reach the revenue mart aggregated and the
dashboard through it. Every rule kind held and broken, waivers in force and expired, unverified
hops, and the CLI's formats and exit codes."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from api.cli import app
from graph.db import Graph
from impact.policy.check import check
from impact.policy.rules import parse_policies, read_policies
from ingest.pipeline import Ingester, IngestReport
from ingest.read import RawItem, read_file
from tests.helpers import (
    dataset,
    ingest_events,
    new_run_id,
    point_cli_at_test_server,
    run_event,
)

pytestmark = pytest.mark.integration
ROOT = Path(__file__).parents[3]
SHOP = ROOT / "examples" / "events" / "shop.ndjson"
EXAMPLE = ROOT / "examples" / "policies" / "shop.yaml"
WH = "postgres://warehouse:5432"


@pytest.fixture
def shop(graph: Graph) -> Graph:
    report = Ingester(graph).ingest(read_file(SHOP), IngestReport())
    assert report.loaded == 28 and not report.rejected
    return graph


def _rules(body: str) -> str:
    return "version: 1\nrules:\n" + body


def test_the_example_policies_on_the_shop(shop: Graph) -> None:
    report = check(shop, read_policies(EXAMPLE))
    staging, features, dashboards, marts = report.results
    # email reaches staging.users_clean.email_hash masked; full_name goes nowhere
    assert staging.holds and staging.sources == 2 and staging.violations == ()
    # ... and ml.user_features.email raw: the hop that copies it, by the job that does it
    [v] = features.violations
    assert (v.source, v.target, v.label) == (f"{WH}:raw.users.email", f"{WH}:ml.user_features.email",
                                             "raw")
    [hop] = v.steps
    assert hop.type == "DIRECT" and hop.subtype == "IDENTITY" and not hop.masking
    assert hop.job is not None and hop.run is not None
    assert dashboards.holds and dashboards.sources == 1
    # of the two marts, the enriched orders have no owner (revenue_by_country has team:finance)
    assert marts.sources == 2
    assert [v.what() for v in marts.violations] == [
        f"{WH}:marts.orders_enriched lacks owner"]
    assert report.failed()


def test_a_waiver_accepts_until_its_day_then_the_violation_counts_again(shop: Graph) -> None:
    policies = parse_policies(_rules("""\
  - id: pii-features
    flow: {from: {tag: PII}, to: {dataset: "ml.*"}, must: masked}
    waivers:
      - {dataset: ml.user_features, reason: the hashed feature ships next sprint, until: 2026-12-31}
"""))
    [held] = check(shop, policies, today=date(2026, 12, 31)).results
    [v] = held.violations
    assert held.holds and v.waiver is not None and not v.counts
    [after] = check(shop, policies, today=date(2027, 1, 1)).results
    [v] = after.violations
    assert not after.holds and v.waiver is None and v.expired is not None and v.counts


def test_a_waiver_of_one_path_covers_only_that_path(shop: Graph) -> None:
    rule = _rules("""\
  - id: pii-features
    flow: {from: {tag: PII}, to: {dataset: "ml.*"}, must: masked}
    waivers:
      - {dataset: ml.user_features, from: {dataset: raw.users, column: %s},
         reason: the hashed feature ships next sprint}
""")
    [covered] = check(shop, parse_policies(rule % "email")).results
    [v] = covered.violations
    assert covered.holds and v.waiver is not None and v.source == f"{WH}:raw.users.email"
    [other] = check(shop, parse_policies(rule % "full_name")).results
    assert not other.holds and other.violations[0].waiver is None


def test_aggregation_violates_unless_the_rule_says_it_masks(shop: Graph) -> None:
    rule = """\
  - id: amounts
    flow: {from: {dataset: raw.orders, column: amount}, to: {dataset: marts.revenue_by_country},
           must: masked%s}
"""
    [strict] = check(shop, parse_policies(_rules(rule % ""))).results
    assert [(v.target, v.label) for v in strict.violations] == [
        (f"{WH}:marts.revenue_by_country.revenue", "aggregated")]
    [lenient] = check(shop, parse_policies(_rules(rule % ", aggregation: masks"))).results
    assert lenient.holds and lenient.violations == ()


def test_never_between_datasets_is_a_path_of_jobs(shop: Graph) -> None:
    [result] = check(shop, parse_policies(_rules("""\
  - id: orders-off-dashboards
    severity: warning
    flow: {from: {dataset: raw.orders}, to: {dataset: "dashboards.*"}, must: never}
"""))).results
    [v] = result.violations
    assert (v.source, v.target, v.label) == (f"{WH}:raw.orders", f"{WH}:dashboards.revenue",
                                             "reaches")
    assert len(v.path) >= 3  # raw.orders, through the marts, to the dashboard


def test_a_hop_without_a_reported_transformation_is_unverified(graph: Graph) -> None:
    hop = run_event("COMPLETE", new_run_id(), "copy_job", outputs=[dataset(
        "leads", columns=["contact"], lineage={"contact": [("crm", "email", "", "")]})])
    tagged = run_event("COMPLETE", new_run_id(), "crm_load", outputs=[dataset(
        "crm", columns=["email"], tags={"tags": [{"key": "PII", "value": "true", "field": "email"}]})])
    report = Ingester(graph).ingest([RawItem("tagged", obj=tagged), RawItem("hop", obj=hop)],
                                    IngestReport())
    assert report.loaded == 2, report.rejected
    rule = _rules("""\
  - id: pii
    flow: {from: {tag: PII}, to: {dataset: leads}, must: masked%s}
""")
    [strict] = check(graph, parse_policies(rule % "")).results
    assert [v.label for v in strict.violations] == ["unverified"]
    [allowed] = check(graph, parse_policies(rule % ", unverified: allowed")).results
    assert allowed.holds


def test_metadata_by_tag_and_what_a_dataset_lacks(shop: Graph, tmp_path: Path) -> None:
    from ingest import commands
    from ingest.log.sqlite import SQLiteLog

    rule = _rules("""\
  - id: critical
    metadata:
      datasets: {tag: tier:critical}
      require: [owner, description, schema, producer, column-lineage]
""")
    [nothing] = check(shop, parse_policies(rule)).results
    assert nothing.sources == 0 and nothing.holds
    # tagged through Marquez's API: the rule selects it
    log = SQLiteLog(tmp_path / "events.db")
    for name in ("raw.orders", "staging.users_clean"):
        commands.tag(shop, log, "dataset", WH, name, "tier:critical", True)
    [result] = check(shop, parse_policies(rule)).results
    assert result.sources == 2
    # raw.orders has an owner and is loaded by a job that reads nothing (no lineage is asked of
    # it, as lineage health asks none); the staging table has column lineage but no owner;
    # neither has a description
    assert sorted(v.what() for v in result.violations) == [
        f"{WH}:raw.orders lacks description",
        f"{WH}:staging.users_clean lacks owner, description"]


def test_a_metadata_rule_and_lineage_health_agree_on_column_lineage(graph: Graph) -> None:
    """One definition of "has the column lineage it should": asked of a derived dataset only
    (a writer of it reads something), by the metadata rule and by health's completeness alike."""
    from impact.health.measure import measure
    from impact.health.tiers import Tiers

    owned: dict[str, Any] = {"ownership": {"owners": [{"name": "team:a"}]}}
    ingest_events(graph, [
        run_event("COMPLETE", new_run_id(), "loader", outputs=[
            dataset("loaded", columns=["x"], ownership=owned["ownership"])]),
        run_event("COMPLETE", new_run_id(), "copier", inputs=[dataset("loaded")], outputs=[
            dataset("copied", columns=["x"], ownership=owned["ownership"])])])
    rule = parse_policies("""version: 1
rules:
  - id: lineage-everywhere
    metadata: {datasets: {dataset: "*"}, require: [owner, schema, column-lineage]}
""")
    [result] = check(graph, rule).results
    assert [v.what() for v in result.violations] == ["ns:copied lacks column-lineage"]
    group = measure(graph, Tiers()).group("untiered")
    assert group is not None
    part = group.ratio("completeness")
    assert (part.good, part.valid) == (1, 2)


def test_through_every_path_passes_a_checkpoint(shop: Graph) -> None:
    [datasets, columns, held] = check(shop, parse_policies(_rules("""\
  - id: users-cleaned-first
    flow:
      from: {dataset: raw.users}
      to: {dataset: "*"}
      must: through
      through: [{job: clean_users}]
  - id: pii-cleaned-first
    flow:
      from: {tag: PII}
      to: {dataset: "ml.*"}
      must: through
      through: {job: "clean_*", namespace: shop-nightly}
  - id: orders-through-the-mart
    flow:
      from: {dataset: raw.orders}
      to: {dataset: "dashboards.*"}
      must: through
      through: [{dataset: marts.revenue_by_country}]
"""))).results
    # raw.users reaches the features without the cleaning job; staging is written by it
    assert [(v.target, v.label) for v in datasets.violations] == [
        (f"{WH}:ml.user_features", "around job clean_users")]
    [hop] = datasets.violations[0].steps
    assert hop.job == "shop-nightly:ml_user_features" and hop.run is not None
    # column lineage: email and full_name are PII; only email reaches the features, raw
    [v] = columns.violations
    assert (v.source, v.target) == (f"{WH}:raw.users.email", f"{WH}:ml.user_features.email")
    assert [(s.job, s.subtype) for s in v.steps] == [("shop-nightly:ml_user_features", "IDENTITY")]
    assert held.holds and held.sources == 1


def _regions_graph(graph: Graph) -> Graph:
    """eu_raw -> eu_clean (both EU); eu_clean -> us_mart (US); eu_clean -> scratch (no region)
    -> us_report (US); us_raw (US) -> us_mart."""
    def region(name: str, where: str | None) -> dict[str, Any]:
        if where is None:
            return dataset(name)
        return dataset(name, tags={"tags": [{"key": "region", "value": where}]})

    steps = [("copy_eu", ["eu_raw"], region("eu_clean", "eu")),
             ("export", ["eu_clean", "us_raw"], region("us_mart", "us")),
             ("tmp", ["eu_clean"], region("scratch", None)),
             ("push", ["scratch"], region("us_report", "us"))]
    events = [run_event("COMPLETE", new_run_id(), "seed", outputs=[
        region("eu_raw", "eu"), region("us_raw", "us")])]
    events += [run_event("COMPLETE", new_run_id(), job, inputs=[dataset(i) for i in inputs],
                         outputs=[out]) for job, inputs, out in steps]
    report = ingest_events(graph, events)
    assert report.loaded == len(events), report.rejected
    return graph


def test_residency_between_regions_and_datasets_of_no_region(graph: Graph) -> None:
    _regions_graph(graph)
    rule = _rules("""\
  - id: eu-in-eu
    residency:
      regions:
        eu: {tag: region:eu}
        us: [{tag: region:us}]%s
""")
    [strict] = check(graph, parse_policies(rule % "")).results
    assert strict.sources == 5  # every dataset of a region
    # us_raw -> us_mart stays in the US; eu_raw -> eu_clean in the EU; past the scratch table
    # (a violation of its own) the US table where the data lands is named too
    assert sorted((v.source, v.target, v.label) for v in strict.violations) == [
        ("ns:eu_clean", "ns:scratch", "from eu to a dataset of no region"),
        ("ns:eu_clean", "ns:us_mart", "from eu to us"),
        ("ns:eu_clean", "ns:us_report", "from eu to us")]
    [lenient] = check(graph, parse_policies(rule % "\n      unregioned: allowed")).results
    found = sorted((v.source, v.target, v.label) for v in lenient.violations)
    assert found == [("ns:eu_clean", "ns:us_mart", "from eu to us"),
                     ("ns:eu_clean", "ns:us_report", "from eu to us")]
    through_scratch = next(v for v in lenient.violations if v.target == "ns:us_report")
    assert [(s.source, s.target, s.job) for s in through_scratch.steps] == [
        ("ns:eu_clean", "ns:scratch", "ns:tmp"), ("ns:scratch", "ns:us_report", "ns:push")]


def test_sources_every_root_of_a_sink_is_allowed(shop: Graph) -> None:
    rule = _rules("""\
  - id: dashboard-from-orders
    sources:
      sinks: {dataset: "dashboards.*"}
      allow: [{dataset: raw.orders}%s]
""")
    [result] = check(shop, parse_policies(rule % "")).results
    assert result.sources == 1
    assert [v.what() for v in result.violations] == [
        f"{WH}:dashboards.revenue derives from {WH}:raw.users, not an allowed source"]
    assert result.violations[0].steps[0].source == f"{WH}:raw.users"
    [allowed] = check(shop, parse_policies(rule % ", {dataset: raw.users}")).results
    assert allowed.holds


def test_the_cli_formats_and_exit_codes(shop: Graph, monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Path) -> None:
    point_cli_at_test_server(monkeypatch)
    runner = CliRunner()
    text = runner.invoke(app, ["policy", "check", "--policies", str(EXAMPLE)])
    assert text.exit_code == 1, text.output
    assert "pii-masked-in-features (error): 1 violation" in text.output
    assert "ml.user_features.email raw" in text.output
    sarif = runner.invoke(app, ["policy", "check", "--policies", str(EXAMPLE), "--format", "sarif"])
    document = json.loads(sarif.stdout)
    [run] = document["runs"]
    result, warning = run["results"]
    assert result["ruleId"] == "pii-masked-in-features" and result["level"] == "error"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 14
    assert warning["ruleId"] == "marts-owned-and-traced" and warning["level"] == "warning"
    markdown = runner.invoke(app, ["policy", "check", "--policies", str(EXAMPLE), "--format",
                                   "markdown"])
    assert "```mermaid" in markdown.stdout and "class" in markdown.stdout
    warnings_only = tmp_path / "warn.yaml"
    warnings_only.write_text(EXAMPLE.read_text().replace("severity: error", "severity: warning"))
    assert runner.invoke(app, ["policy", "check", "--policies", str(warnings_only)]).exit_code == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nrules:\n  - id: x\n    flow: {from: {tag: PII}, must: masked}\n")
    refused = runner.invoke(app, ["policy", "check", "--policies", str(bad)])
    assert refused.exit_code == 2 and f"{bad}:4: rule x: flow.to: required" in refused.output
    missing = runner.invoke(app, ["policy", "check"])
    assert missing.exit_code == 2 and "LINEAGE_POLICIES" in missing.output


def _change(tmp_path: Path, name: str, event: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(event))
    return path


def test_check_rehearses_a_change_against_the_rules_and_keeps_nothing(
        shop: Graph, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tests.helpers import canonical_dump

    point_cli_at_test_server(monkeypatch)
    rules = tmp_path / "rules.yaml"
    rules.write_text(_rules("""\
  - id: pii-masked-in-marketing
    flow: {from: {tag: PII}, to: {dataset: "marketing.*"}, must: masked}
  - id: pii-masked-in-features
    flow: {from: {tag: PII}, to: {dataset: "ml.*"}, must: masked}
"""))
    graph_before = canonical_dump(shop)
    # a new job would copy the e-mail address raw into a marketing table
    copy = run_event("COMPLETE", new_run_id(), "contacts_export", ns="shop-nightly",
                     time="2030-01-01T00:00:00Z",
                     inputs=[dataset("raw.users", WH)],
                     outputs=[dataset("marketing.contacts", WH, ["email"], lineage={
                         "email": [("raw.users", "email", "DIRECT", "IDENTITY")]})])
    copy["outputs"][0]["facets"]["columnLineage"]["fields"]["email"]["inputFields"][0][
        "namespace"] = WH
    runner = CliRunner()
    r = runner.invoke(app, ["check", str(_change(tmp_path, "copy.json", copy)), "--policies",
                            str(rules)])
    assert r.exit_code == 1, r.output
    assert (f"new violation of rule pii-masked-in-marketing (error): {WH}:raw.users.email "
            f"reaches {WH}:marketing.contacts.email raw") in r.stdout
    assert "1 violation the graph has now is not the change's" in r.stdout
    # the features job would hash the address (masking: true): it removes a violation
    hashed = run_event("COMPLETE", new_run_id(), "ml_user_features", ns="shop-nightly",
                       time="2030-01-01T00:00:00Z", inputs=[dataset("raw.users", WH)],
                       outputs=[dataset("ml.user_features", WH, ["email_hash"], lineage={
                           "email_hash": [("raw.users", "email", "DIRECT", "MASKED")]})])
    r = runner.invoke(app, ["check", str(_change(tmp_path, "hash.json", hashed)), "--policies",
                            str(rules), "--format", "json"])
    assert r.exit_code == 0, r.output
    body = json.loads(r.stdout)
    assert body["policies"]["new"] == [] and not body["policies"]["failed"]
    assert [v["rule"] for v in body["policies"]["removed"]] == ["pii-masked-in-features"]
    # rehearsed, not written: the graph is as it was
    assert canonical_dump(shop) == graph_before
