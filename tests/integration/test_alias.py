"""`lineage alias`: two names of one table that no producer links, declared from the CLI, honoured
by the questions, listed, logged for replay, and refused with exit 2 when malformed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli import app
from graph.db import Graph
from graph.settings import get_settings
from impact.blast_radius import dataset_blast_radius
from impact.upstream import dataset_upstream
from ingest.aliases import alias_event
from ingest.log.sqlite import SQLiteLog
from tests.helpers import dataset, ingest_events, new_run_id, point_cli_at_test_server, run_event

pytestmark = pytest.mark.integration

DUCK = "duckdb:///data/shop.duckdb"


@pytest.fixture
def cli(graph: Graph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CliRunner]:
    point_cli_at_test_server(monkeypatch)
    monkeypatch.setenv("LINEAGE_LOG_FILE", str(tmp_path / "events.db"))
    get_settings.cache_clear()
    # Spark writes the file; dbt reads it through a DuckDB view and builds a mart
    spark = run_event("COMPLETE", new_run_id(), "load_users", ns="spark",
                      outputs=[dataset("/lake/raw/users", "file", ["id", "email"])])
    dbt = run_event("COMPLETE", new_run_id(), "stg_users", ns="dbt",
                    inputs=[dataset("shop.raw.users", DUCK, ["id", "email"])],
                    outputs=[dataset("shop.staging.stg_users", DUCK, ["id"])])
    ingest_events(graph, [spark, dbt])
    yield CliRunner()
    get_settings.cache_clear()


def _reached(graph: Graph) -> set[str]:
    return {f"{i.namespace}:{i.name}" for i in dataset_blast_radius(graph, "file", "/lake/raw/users").impacted
            if i.kind == "dataset"}


def test_alias_joins_the_names_for_every_question(graph: Graph, cli: CliRunner, tmp_path: Path) -> None:
    assert _reached(graph) == set()
    r = cli.invoke(app, ["alias", "file", "/lake/raw/users", "=", DUCK, "shop.raw.users"])
    assert r.exit_code == 0, r.output
    assert "every question answers for both" in r.stdout
    assert _reached(graph) == {f"{DUCK}:shop.staging.stg_users"}
    listed = cli.invoke(app, ["alias", "--list", "--format", "json"])
    assert listed.exit_code == 0, listed.output
    assert '"also named": "duckdb:///data/shop.duckdb:shop.raw.users"' in listed.stdout
    assert '"by": "lineage alias"' in listed.stdout
    # the declaration is an event in the log, so that replay keeps it
    log = SQLiteLog(tmp_path / "events.db")
    try:
        [entry] = log.read(0, 10)
    finally:
        log.close()
    expected = alias_event("file", "/lake/raw/users", DUCK, "shop.raw.users")
    assert entry.event["dataset"] == expected["dataset"]
    # declaring it again changes nothing
    assert cli.invoke(app, ["alias", "file", "/lake/raw/users", "=", DUCK, "shop.raw.users"]).exit_code == 0
    assert _reached(graph) == {f"{DUCK}:shop.staging.stg_users"}


@pytest.mark.parametrize("args", [["a", "b", "c", "d"], ["a", "b", "x", "c", "d"], ["a", "b", "=", "a", "b"],
                                  ["a", " ", "=", "c", "d"]])
def test_alias_refuses_malformed_declarations(cli: CliRunner, args: list[str]) -> None:
    r = cli.invoke(app, ["alias", *args])
    assert r.exit_code == 2, r.output


def test_a_table_reached_under_two_names_is_listed_once(graph: Graph, cli: CliRunner) -> None:
    # the overview reads what Spark made of the file and what dbt made of its view: the table is
    # two lineage steps away under both names, by different paths
    clean = run_event("COMPLETE", new_run_id(), "clean_users", ns="spark",
                      inputs=[dataset("/lake/raw/users", "file", ["id"])],
                      outputs=[dataset("/lake/staging/users", "file", ["id"])])
    both = run_event("COMPLETE", new_run_id(), "overview", ns="airflow",
                     inputs=[dataset("/lake/staging/users", "file", ["id"]),
                             dataset("shop.staging.stg_users", DUCK, ["id"])],
                     outputs=[dataset("shop.dash.overview", DUCK, ["id"])])
    ingest_events(graph, [clean, both])
    assert cli.invoke(app, ["alias", "file", "/lake/raw/users", "=", DUCK, "shop.raw.users"]).exit_code == 0
    answer = dataset_upstream(graph, DUCK, "shop.dash.overview")
    listed = [f"{i.namespace}:{i.name}" for i in answer.impacted if i.kind == "dataset"]
    raw = [name for name in listed if name in ("file:/lake/raw/users", f"{DUCK}:shop.raw.users")]
    assert len(raw) == 1, listed
    [users] = [i for i in answer.impacted if f"{i.namespace}:{i.name}" == raw[0]]
    assert set(users.aliases) == {"file:/lake/raw/users", f"{DUCK}:shop.raw.users"} - {raw[0]}
    assert len(listed) == 3  # the staging file, stg_users and the raw table once
    # downstream of the raw table, the overview is listed once
    radius = dataset_blast_radius(graph, "file", "/lake/raw/users")
    assert f"{DUCK}:shop.raw.users" in radius.aliases
    assert [f"{i.namespace}:{i.name}" for i in radius.impacted if i.kind == "dataset"].count(
        f"{DUCK}:shop.dash.overview") == 1
