"""dbt as a real producer: the example project (examples/dbt_shop) built on DuckDB by the real
``dbt-ol`` (dbt-core, dbt-duckdb and openlineage-dbt from PyPI, in their own environment under the
test state directory), its events posted over HTTP to our endpoint, loaded by the worker into the
real Neo4j. Expectations come from dbt's own artifacts (manifest.json, run_results.json) and from
the events dbt-ol sent, not from a copy of them.

Two builds: one that passes, then one where a test fails on purpose (so its downstream model is
skipped), which root cause must name.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from api.cli import app
from api.local.producers import DBT_PROJECT, DbtRun, compile_dbt, run_dbt
from graph.db import Graph
from graph.settings import Settings, get_settings
from impact.blast_radius import dataset_blast_radius
from impact.root_cause import root_cause_dataset, root_cause_run
from impact.where import where
from ingest.log.sqlite import SQLiteLog
from tests.conftest import server_settings, wipe
from tests.helpers import live_api, point_cli_at_test_server, rows, wait_loaded

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "dbt_shop"))
import make_raw  # noqa: E402

pytestmark = pytest.mark.integration


@dataclass
class Build:
    run: DbtRun
    events: list[dict[str, Any]]
    manifest: dict[str, Any]
    results: dict[str, Any]


@dataclass
class Shop:
    graph: Graph
    ns: str
    passing: Build
    failing: Build


def _build(graph: Graph, log: SQLiteLog, url: str, wh: Path, work: Path,
           variables: dict[str, object] | None) -> Build:
    before = log.last_seq()
    run = run_dbt(Settings(state_dir=server_settings().state_dir), url, wh, work,
                  variables=variables)
    wait_loaded(log)
    target = work / "target"
    return Build(run, [e.event for e in log.read(before, 10_000)],
                 json.loads((target / "manifest.json").read_text("utf-8")),
                 json.loads((target / "run_results.json").read_text("utf-8")))


@pytest.fixture(scope="module")
def shop(session_graph: Graph, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shop]:
    wipe(session_graph)
    tmp = tmp_path_factory.mktemp("dbt")
    wh = tmp / "warehouse"
    make_raw.write(wh)
    with live_api(session_graph, tmp / "events.db") as (url, log):
        passing = _build(session_graph, log, url, wh, tmp / "dbt", None)
        assert passing.run.returncode == 0, passing.run.output[-3000:]
        failing = _build(session_graph, log, url, wh, tmp / "dbt", {"max_lifetime_value": 100})
        assert failing.run.returncode == 1, failing.run.output[-3000:]
        yield Shop(session_graph, passing.run.namespace, passing, failing)


def _models(manifest: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n["name"]: n for n in manifest["nodes"].values() if n["resource_type"] == "model"}


def _relation(node: dict[str, Any]) -> str:
    return f"{node['database']}.{node['schema']}.{node['alias']}"


def test_dbt_every_model_is_a_dataset_with_its_columns(shop: Shop) -> None:
    models = _models(shop.passing.manifest)
    assert len(models) == 6
    for node in models.values():
        found = rows(shop.graph, """
            MATCH (d:Dataset {namespace: $ns, name: $name})
            RETURN [(d)-[:HAS_COLUMN]->(c:Column) WHERE c.type IS NOT NULL | c.name] AS columns,
                   [(j:Job)-[:WRITES]->(d) | j.name] AS writers""", ns=shop.ns, name=_relation(node))
        assert found, f"model {node['name']} is not a dataset {shop.ns}:{_relation(node)}"
        assert sorted(found[0]["columns"]) == sorted(node["columns"]), node["name"]
        assert found[0]["writers"], node["name"]


def test_dbt_column_lineage_is_what_dbt_ol_reported(shop: Shop) -> None:
    # every (input field -> output field) pair of the events' columnLineage facets is an edge, with
    # the transformation the producer gave, UNKNOWN where it gave none (docs/graph-model.md)
    reported: dict[tuple[str, str, str, str], str] = {}
    for event in shop.passing.events:
        for out in event.get("outputs") or []:
            lineage = (out.get("facets") or {}).get("columnLineage") or {}
            for field, spec in (lineage.get("fields") or {}).items():
                for i in spec.get("inputFields") or []:
                    kinds = [t.get("type") or "UNKNOWN" for t in i.get("transformations") or []]
                    reported[(i["name"], i["field"], out["name"], field)] = ",".join(sorted(kinds)) or "UNKNOWN"
    assert ("shop.raw.users", "email", "shop.staging.stg_users", "email_hash") in reported
    assert ("shop.raw.users", "email", "shop.marts.crm_contacts", "email") in reported
    stored = {(r["src"], r["sf"], r["dst"], r["df"]): ",".join(sorted(r["types"])) for r in rows(shop.graph, """
        MATCH (d:Dataset {namespace: $ns})-[:HAS_COLUMN]->(c:Column)-[e:DERIVED_FROM]->(s:Column)
        WHERE e.alias IS NULL
        RETURN s.dataset AS src, s.name AS sf, d.name AS dst, c.name AS df, collect(e.type) AS types""",
        ns=shop.ns)}
    assert stored == reported


def test_dbt_tests_are_data_quality_assertions_on_their_models(shop: Shop) -> None:
    manifest = shop.passing.manifest
    tested: dict[str, set[str]] = {}
    for result in shop.passing.results["results"]:
        node = manifest["nodes"][result["unique_id"]]
        if node["resource_type"] != "test":
            continue
        model = manifest["nodes"][node.get("attached_node") or node["depends_on"]["nodes"][0]]
        tested.setdefault(_relation(model), set()).add(node["name"])
    assert len(tested) == 4
    for relation, names in tested.items():
        found = rows(shop.graph, "MATCH (d:Dataset {namespace: $ns, name: $name}) "
                     "RETURN d.assertions AS a, d.failedAssertions AS failed", ns=shop.ns, name=relation)
        # the failing build came later: its results are the ones kept
        assertions = json.loads(found[0]["a"])
        assert {a["name"] for a in assertions} == names, relation
    value = rows(shop.graph, "MATCH (d:Dataset {namespace: $ns, name: 'shop.marts.customer_value'}) "
                 "RETURN d.failedAssertions AS failed", ns=shop.ns)[0]
    assert value["failed"] == ["assert_lifetime_value_reasonable"]
    clean = rows(shop.graph, "MATCH (d:Dataset {namespace: $ns, name: 'shop.staging.stg_users'}) "
                 "RETURN d.failedAssertions AS failed", ns=shop.ns)[0]
    assert clean["failed"] == []


def test_dbt_failing_test_is_the_root_cause_downstream(shop: Shop) -> None:
    skipped = [r["unique_id"] for r in shop.failing.results["results"] if r["status"] == "skipped"]
    assert skipped == ["model.dbt_shop.vip_customers"]
    answer = root_cause_dataset(shop.graph, shop.ns, "shop.marts.vip_customers")
    top = answer.candidates[0]
    assert top.kind == "failed assertion"
    assert top.dataset == f"{shop.ns}:shop.marts.customer_value"
    assert "assert_lifetime_value_reasonable" in top.summary
    # the dbt invocation's own run (the parent of every model and test run) ended FAIL, and root
    # cause of it finds the same assertion through its child runs
    parents = [e for e in shop.failing.events
               if e["job"]["name"] == "dbt-run-dbt_shop" and e["eventType"] in ("COMPLETE", "FAIL")]
    assert [e["eventType"] for e in parents] == ["FAIL"]
    of_run = root_cause_run(shop.graph, parents[0]["run"]["runId"])
    assert any(c.kind == "failed assertion" and c.dataset.endswith("shop.marts.customer_value")
               for c in of_run.candidates), of_run.candidates


def test_dbt_blast_radius_and_gdpr_reach(shop: Shop) -> None:
    names = {i.name for i in dataset_blast_radius(shop.graph, shop.ns, "shop.raw.users").impacted
             if i.kind == "dataset"}
    assert names == {"shop.staging.stg_users", "shop.marts.customer_value",
                     "shop.marts.vip_customers", "shop.marts.crm_contacts"}
    reach = {f"{r.dataset}.{r.column}": r.label
             for r in where(shop.graph, shop.ns, "shop.raw.users", "email").reaches}
    assert reach == {"shop.staging.stg_users.email_hash": "unknown",
                     "shop.marts.customer_value.email_hash": "unknown",
                     "shop.marts.vip_customers.email_hash": "unknown",
                     "shop.marts.crm_contacts.email": "unknown"}


@pytest.fixture
def branch(shop: Shop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the dbt project to change like a pull request would; the CLI pointed at the test
    server."""
    point_cli_at_test_server(monkeypatch)
    copy = tmp_path / "dbt_shop"
    shutil.copytree(DBT_PROJECT, copy, ignore=shutil.ignore_patterns("target", "logs", "*.duckdb"))
    yield copy
    get_settings.cache_clear()


def _compile(project: Path, work: Path) -> Path:
    wh = work / "warehouse"
    make_raw.write(wh)
    return compile_dbt(Settings(state_dir=server_settings().state_dir), project, wh, work / "dbt")


def test_dbt_pull_request_dropping_a_column_is_checked_from_the_manifest(
        shop: Shop, branch: Path, tmp_path: Path) -> None:
    # the pull request: stg_users no longer has email_hash (in its SQL and in its YAML)
    sql = branch / "models" / "staging" / "stg_users.sql"
    sql.write_text(sql.read_text("utf-8").replace("    sha256(lower(email)) as email_hash,\n", ""), "utf-8")
    yml = branch / "models" / "schema.yml"
    text = yml.read_text("utf-8")
    hashed = ("      - name: email_hash\n        data_type: varchar\n"
              "        description: sha256 of the lower-cased e-mail address\n")
    assert hashed in text
    yml.write_text(text.replace(hashed, ""), "utf-8")
    manifest = _compile(branch, tmp_path)
    runner = CliRunner()
    r = runner.invoke(app, ["check", "--dbt-manifest", str(manifest), "--format", "json"])
    # dbt-ol reports no transformation types: the consumers may copy it, so the change is RISKY
    assert r.exit_code == 0, r.output
    body = json.loads(r.stdout)
    assert body["verdict"] == "RISKY"
    assert body["changes"] == [f"drop column {shop.ns}:shop.staging.stg_users.email_hash"]
    consumers = {f["consumer"] for f in body["findings"] if f["severity"] == "RISKY"}
    assert consumers == {f"{shop.ns}:shop.marts.customer_value.email_hash",
                         f"{shop.ns}:shop.marts.vip_customers.email_hash"}
    r = runner.invoke(app, ["check", "--dbt-manifest", str(manifest), "--fail-on", "risky",
                            "--format", "markdown"])
    assert r.exit_code == 1
    assert "```mermaid" in r.stdout and "shop.marts.vip_customers.email_hash" in r.stdout


def test_dbt_pull_request_removing_models_against_the_deployed_manifest(
        shop: Shop, branch: Path, tmp_path: Path) -> None:
    deployed = _compile(DBT_PROJECT, tmp_path / "prod")
    # the pull request deletes customer_value and what is built on it
    for path in ("models/marts/customer_value.sql", "models/marts/vip_customers.sql",
                 "tests/assert_lifetime_value_reasonable.sql"):
        (branch / path).unlink()
    manifest = _compile(branch, tmp_path / "branch")
    r = CliRunner().invoke(app, ["check", "--dbt-manifest", str(manifest), "--dbt-state", str(deployed),
                                 "--format", "json"])
    assert r.exit_code == 1, r.output
    body = json.loads(r.stdout)
    assert sorted(body["changes"]) == [f"drop dataset {shop.ns}:shop.marts.customer_value",
                                       f"drop dataset {shop.ns}:shop.marts.vip_customers"]
    breaking = {f["consumer"] for f in body["findings"] if f["severity"] == "BREAKING"}
    assert f"{shop.ns}:shop.marts.vip_customers" in breaking
    # a manifest whose models the graph has never seen is an input error (exit 2), said plainly
    other = json.loads(manifest.read_text("utf-8"))
    for node in other["nodes"].values():
        node["database"] = "elsewhere"
    stray = tmp_path / "stray.json"
    stray.write_text(json.dumps(other), "utf-8")
    r = CliRunner().invoke(app, ["check", "--dbt-manifest", str(stray)])
    assert r.exit_code == 2 and "none of the branch's" in r.output


def test_dbt_pull_request_renaming_a_column_is_a_rename(shop: Shop, branch: Path, tmp_path: Path) -> None:
    # crm_contacts' full_name becomes contact_name: same input column, new name
    sql = branch / "models" / "marts" / "crm_contacts.sql"
    sql.write_text(sql.read_text("utf-8").replace("full_name,", "full_name as contact_name,"), "utf-8")
    yml = branch / "models" / "schema.yml"
    text = yml.read_text("utf-8")
    old = "      - name: full_name\n        data_type: varchar\n      - name: country\n"
    assert text.count(old) == 1
    yml.write_text(text.replace(old, old.replace("full_name", "contact_name")), "utf-8")
    manifest = _compile(branch, tmp_path)
    r = CliRunner().invoke(app, ["check", "--dbt-manifest", str(manifest), "--format", "json"])
    assert r.exit_code == 0, r.output
    body = json.loads(r.stdout)
    assert body["changes"] == [f"rename column {shop.ns}:shop.marts.crm_contacts.full_name -> contact_name"]
    assert body["verdict"] == "SAFE"  # nothing reads the CRM export


DBT_RULES = """\
version: 1
rules:
  - id: email-masked-for-marketing
    description: The e-mail address reaches the marketing schema only masked
    flow:
      from: {dataset: shop.raw.users, column: email}
      to: {dataset: "shop.marketing.*"}
      must: masked
      unverified: allowed     # dbt-ol reports no transformations: its hops are unverified
  - id: email-masked-in-marts
    severity: warning
    flow:
      from: {dataset: shop.raw.users, column: email}
      to: {dataset: "shop.marts.*"}
      must: masked
"""

LEADS = """\
{{ config(schema='marketing', materialized='table') }}
-- Leads for the marketing team.
select user_id, %s, country
from {{ source('raw', 'users') }}
"""


def test_dbt_pull_request_copying_email_raw_into_marketing_fails_the_policy_check(
        shop: Shop, branch: Path, tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(DBT_RULES, "utf-8")
    (branch / "models" / "marketing").mkdir()
    leads = branch / "models" / "marketing" / "leads.sql"
    leads.write_text(LEADS % "email", "utf-8")
    runner = CliRunner()
    raw = _compile(branch, tmp_path / "raw")
    r = runner.invoke(app, ["check", "--dbt-manifest", str(raw), "--policies", str(rules)])
    assert r.exit_code == 1, r.output
    assert (f"new violation of rule email-masked-for-marketing (error): {shop.ns}:shop.raw.users.email "
            f"reaches {shop.ns}:shop.marketing.leads.email raw") in r.stdout
    # the CRM export copies the address into the marts already: not this branch's doing
    assert "violations the graph has now are not the change's" in r.stdout
    # hashed, the branch passes
    leads.write_text(LEADS % "sha256(lower(email)) as email_hash", "utf-8")
    hashed = _compile(branch, tmp_path / "hashed")
    r = runner.invoke(app, ["check", "--dbt-manifest", str(hashed), "--policies", str(rules),
                            "--format", "json"])
    assert r.exit_code == 0, r.output
    body = json.loads(r.stdout)
    assert body["policies"]["new"] == [] and body["policies"]["removed"] == []
    # a branch that hashes the CRM export's address removes the marts' violation, and says so
    crm = branch / "models" / "marts" / "crm_contacts.sql"
    crm.write_text(crm.read_text("utf-8").replace(
        "select user_id, email,", "select user_id, sha256(lower(email)) as email_hash,"), "utf-8")
    yml = branch / "models" / "schema.yml"
    text = yml.read_text("utf-8")
    start = text.index("  - name: crm_contacts")
    section = text[start:]
    yml.write_text(text[:start] + section.replace("      - name: email\n",
                                                  "      - name: email_hash\n", 1), "utf-8")
    fixed = _compile(branch, tmp_path / "fixed")
    r = runner.invoke(app, ["check", "--dbt-manifest", str(fixed), "--policies", str(rules)])
    assert r.exit_code == 0, r.output
    assert (f"removes the violation of rule email-masked-in-marts: {shop.ns}:shop.raw.users.email "
            f"reaches {shop.ns}:shop.marts.crm_contacts.email") in r.stdout
