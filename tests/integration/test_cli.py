"""The ``lineage`` command line against the real server: answers, formats and exit codes."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli import app
from graph.db import Graph
from graph.settings import get_settings
from ingest.pipeline import Ingester, IngestReport
from ingest.read import read_file
from tests.helpers import point_cli_at_test_server, start_serve

pytestmark = pytest.mark.integration

SHOP = Path(__file__).parents[2] / "examples" / "events" / "shop.ndjson"
NS = "postgres://warehouse:5432"


@pytest.fixture
def cli(graph: Graph, monkeypatch: pytest.MonkeyPatch) -> Iterator[CliRunner]:
    """The CLI pointed at the test server, with the example graph loaded."""
    Ingester(graph).ingest(read_file(SHOP), IngestReport())
    monkeypatch.delenv("LINEAGE_API_TOKENS", raising=False)
    point_cli_at_test_server(monkeypatch)
    yield CliRunner()
    get_settings.cache_clear()


def test_where_json_and_csv(cli: CliRunner) -> None:
    r = cli.invoke(app, ["where", NS, "raw.users", "email", "--format", "json"])
    assert r.exit_code == 0, r.output
    body = json.loads(r.stdout)
    assert [(x["dataset"], x["label"]) for x in body["reaches"]] == [
        ("ml.user_features", "raw"), ("staging.users_clean", "masked")]
    r = cli.invoke(app, ["where", NS, "raw.users", "email", "--format", "csv"])
    assert r.exit_code == 0 and r.stdout.splitlines()[1].startswith(f"{NS},ml.user_features,email,raw")


def test_root_cause_and_show(cli: CliRunner) -> None:
    r = cli.invoke(app, ["root-cause", "dataset", NS, "dashboards.revenue", "--as-of",
                         "2024-06-01T03:00:00Z", "--format", "json"])
    assert r.exit_code == 0, r.output
    top = json.loads(r.stdout)["candidates"][0]
    assert top["kind"] == "failed run" and "amount_eur" in top["summary"]
    r = cli.invoke(app, ["show", "job", "shop-nightly", "revenue_by_country"], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "FAIL" in r.stdout and "amount_eur" in r.stdout
    assert "parent" in r.stdout and "shop-nightly:nightly" in r.stdout
    r = cli.invoke(app, ["show", "dataset", NS, "marts.revenue_by_country"], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "written by" in r.stdout and "last run" in r.stdout
    assert "COMPLETE" in r.stdout and "0:04:00" in r.stdout


def test_upstream_and_impact_text(cli: CliRunner) -> None:
    r = cli.invoke(app, ["upstream", "dataset", NS, "dashboards.revenue", "--depth", "1"],
                   env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "marts.revenue_by_country" in r.stdout
    assert "raw.users" not in r.stdout


@pytest.mark.parametrize(("args", "code", "message"), [
    (["where", NS, "raw.users", "nope"], 1, "no column"),
    (["show", "dataset", NS, "nope"], 1, "no dataset"),
    (["root-cause", "run", "00000000-0000-0000-0000-000000000000"], 1, "no run"),
    (["impact", "dataset", NS, "raw.users", "--as-of", "yesterday"], 2, "--as-of"),
])
def test_errors_have_clear_messages_and_exit_codes(cli: CliRunner, args: list[str], code: int,
                                                   message: str) -> None:
    r = cli.invoke(app, args)
    assert r.exit_code == code and message in r.output, r.output


def test_serve_refuses_a_public_address_without_tokens(cli: CliRunner) -> None:
    r = cli.invoke(app, ["serve", "--host", "0.0.0.0"])
    assert r.exit_code == 2 and "refusing to bind 0.0.0.0" in r.output


def test_serve_answers_over_real_http(cli: CliRunner, tmp_path: Path) -> None:
    import urllib.request

    proc, base = start_serve(os.environ.copy())
    try:
        with urllib.request.urlopen(f"{base}/api/v1/namespaces", timeout=5) as r:
            assert NS in [n["name"] for n in json.load(r)["namespaces"]]
        with urllib.request.urlopen(f"{base}/docs", timeout=5) as r:
            assert b"swagger" in r.read().lower()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_question_never_starts_neo4j(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After `lineage down` (here: a state directory whose Neo4j never ran) a question says Neo4j
    is not running and how to start it, exits 1, and starts nothing."""
    for name in ("NEO4J_URI", "LINEAGE_NEO4J_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LINEAGE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("LINEAGE_NEO4J_BOLT_PORT", "1")  # nothing answers there
    monkeypatch.setenv("LINEAGE_NEO4J_HTTP_PORT", "2")
    get_settings.cache_clear()
    try:
        for args in (["impact", "dataset", NS, "raw.users"], ["where", NS, "raw.users", "email"]):
            r = CliRunner().invoke(app, args)
            assert r.exit_code == 1, r.output
            assert "not running" in r.output and "lineage neo4j start" in r.output
        assert not (tmp_path / "state" / "neo4j" / "lib").exists()  # nothing was provisioned
    finally:
        get_settings.cache_clear()


def test_questions_only_read(cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Questions and the check run read transactions only (Neo4j refuses a write in one), and
    neither write nor apply the schema: a read-only user is enough. Neo4j Community has no roles,
    so the write paths are made to fail instead."""
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("a question tried to write")

    monkeypatch.setattr(Graph, "write", refuse)
    monkeypatch.setattr(Graph, "run_statements", refuse)
    change = tmp_path / "change.json"
    change.write_text(json.dumps({"namespace": NS, "dataset": "raw.users", "columns": [
        {"name": "id", "type": "BIGINT"}, {"name": "country", "type": "VARCHAR"}]}))
    for args, code in ((["impact", "dataset", NS, "raw.users"], 0), (["where", NS, "raw.users", "email"], 0),
                       (["root-cause", "dataset", NS, "dashboards.revenue"], 0),
                       (["show", "dataset", NS, "raw.users"], 0), (["check", str(change)], 1)):
        r = cli.invoke(app, args)
        assert r.exit_code == code, (args, r.output)


def test_ls_search_and_did_you_mean(cli: CliRunner) -> None:
    r = cli.invoke(app, ["ls", "datasets", "raw.*", "--format", "plain"])
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [f"{NS}\traw.orders", f"{NS}\traw.users"]
    r = cli.invoke(app, ["ls", "namespaces", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert any(n["name"] == NS and n["datasets"] > 0 for n in json.loads(r.stdout)), r.stdout
    r = cli.invoke(app, ["search", "USERS", "--format", "plain"])
    assert r.exit_code == 0, r.output
    names = [line.split("\t")[2] for line in r.stdout.splitlines()]
    assert {"raw.users", "staging.users_clean"} <= set(names)
    r = cli.invoke(app, ["impact", "dataset", NS, "raw.userz"])
    assert r.exit_code == 1 and "did you mean" in r.output and "raw.users" in r.output, r.output
    r = cli.invoke(app, ["ls", "tables"])
    assert r.exit_code == 2 and "namespaces, datasets, jobs" in r.output


def test_tables_never_cut_identifiers(cli: CliRunner) -> None:
    r = cli.invoke(app, ["show", "job", "shop-nightly", "revenue_by_country"], env={"COLUMNS": "60"})
    assert r.exit_code == 0, r.output
    run_ids = [line for line in r.stdout.splitlines() if "…" in line]
    assert not run_ids, run_ids


def test_questions_answer_in_plain_rows_for_grep(cli: CliRunner) -> None:
    r = cli.invoke(app, ["impact", "dataset", NS, "raw.users", "--format", "plain"])
    assert r.exit_code == 0, r.output
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert all(len(row) == 6 for row in rows) and rows
    assert ["dataset", NS, "ml.user_features", "1"] in [row[:4] for row in rows]
    same = cli.invoke(app, ["impact", "dataset", NS, "raw.users", "--format", "json"])
    assert json.loads(same.stdout)["impacted"], same.output
    for command in (["upstream", "dataset", NS, "raw.users"], ["where", NS, "raw.users", "email"],
                    ["show", "job", "shop-nightly", "revenue_by_country"]):
        r = cli.invoke(app, [*command, "--format", "yaml"])
        assert r.exit_code == 2 and "--format yaml" in r.output, (command, r.output)


def test_where_root_cause_and_show_answer_in_plain_rows(cli: CliRunner) -> None:
    r = cli.invoke(app, ["where", NS, "raw.users", "email", "--format", "plain"])
    assert r.exit_code == 0, r.output
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert [row[:3] for row in rows] == [["raw", "ml.user_features", "email"],
                                         ["masked", "staging.users_clean", "email_hash"]]
    r = cli.invoke(app, ["root-cause", "dataset", NS, "dashboards.revenue", "--as-of",
                         "2024-06-01T03:00:00Z", "--format", "plain"])
    assert r.exit_code == 0, r.output
    first = r.stdout.splitlines()[0].split("\t")
    assert first[0] == "1" and first[2] == "failed run" and "amount_eur" in first[4]
    r = cli.invoke(app, ["show", "dataset", NS, "raw.users", "--format", "plain"])
    assert r.exit_code == 0, r.output
    facts = [line.split("\t") for line in r.stdout.splitlines()]
    assert ["column", "email"] in [f[:2] for f in facts] and facts[-1][0] == "freshness"
    r = cli.invoke(app, ["show", "job", "shop-nightly", "revenue_by_country", "--format", "plain"])
    assert r.exit_code == 0, r.output
    kinds = {line.split("\t")[0] for line in r.stdout.splitlines()}
    assert {"reads", "writes", "parent", "run"} <= kinds
