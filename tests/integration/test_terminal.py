"""The terminal, against the real Neo4j and the real CLI: an unknown column gets "did you mean"
(the CLI and the API), `show dataset` shows each column's tags, root cause explains its score,
`status --format json`, `--version`, and `lineage delete` (Marquez's soft delete, and --purge)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.app import create_app
from api.cli import app
from graph.db import Graph
from graph.settings import Settings, get_settings
from ingest.log.sqlite import SQLiteLog
from tests.helpers import canonical_dump, dataset, new_run_id, point_cli_at_test_server, run_event

pytestmark = pytest.mark.integration
SHOP = Path(__file__).parents[2] / "examples" / "events"
WH = "postgres://warehouse:5432"


@pytest.fixture
def cli(graph: Graph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    point_cli_at_test_server(monkeypatch)
    monkeypatch.setenv("LINEAGE_LOG_FILE", str(tmp_path / "events.db"))
    get_settings.cache_clear()
    runner = CliRunner()
    loaded = runner.invoke(app, ["ingest", str(SHOP)])
    assert loaded.exit_code == 0, loaded.output
    return runner


def test_an_unknown_column_gets_did_you_mean(cli: CliRunner, graph: Graph, tmp_path: Path) -> None:
    r = cli.invoke(app, ["where", WH, "raw.users", "emial"])
    assert r.exit_code == 1
    assert "did you mean:" in r.output and "raw.users.email" in r.output
    api = TestClient(create_app(Settings(), graph, SQLiteLog(tmp_path / "api.db")),
                     base_url="http://localhost", client=("127.0.0.1", 40001))
    answer = api.get("/api/v1/where", params={"namespace": WH, "dataset": "raw.users",
                                              "column": "emial"})
    assert answer.status_code == 404
    assert {"namespace": WH, "name": "raw.users.email"} in answer.json()["didYouMean"]
    # a column of an unknown dataset: the datasets named like it
    r = cli.invoke(app, ["where", WH, "raw.userz", "email"])
    assert r.exit_code == 1 and "raw.users" in r.output


def test_show_dataset_has_its_columns_tags(cli: CliRunner) -> None:
    r = cli.invoke(app, ["show", "dataset", WH, "raw.users", "--format", "plain"])
    assert r.exit_code == 0, r.output
    assert "column tag\temail\tPII" in r.stdout
    r = cli.invoke(app, ["show", "dataset", WH, "raw.users", "--format", "json"])
    columns = {c["name"]: c["tags"] for c in json.loads(r.stdout)["columns"]}
    assert columns["email"] == ["PII"] and columns["country"] == []


def test_root_cause_explains_its_scores(cli: CliRunner, tmp_path: Path) -> None:
    # the revenue job fails the next night
    failed = run_event("FAIL", new_run_id(), "revenue_by_country", ns="shop-nightly",
                       time="2024-06-02T02:30:00Z", inputs=[dataset("marts.orders_enriched", WH)],
                       outputs=[dataset("marts.revenue_by_country", WH)])
    (tmp_path / "fail.json").write_text(json.dumps(failed))
    assert cli.invoke(app, ["ingest", str(tmp_path / "fail.json")]).exit_code == 0
    r = cli.invoke(app, ["root-cause", "dataset", WH, "dashboards.revenue", "--format", "plain"])
    assert r.exit_code == 0, r.output
    assert "failed run" in r.stdout and "hop" in r.stdout, r.stdout
    for line in r.stdout.splitlines():
        rank, score, *_, score_is = line.split("\t")
        parts = score_is.split(" ")
        total = int(parts[0]) + sum(int(parts[i + 1]) * (1 if parts[i] == "+" else -1)
                                    for i in range(2, len(parts) - 1)
                                    if parts[i] in "+-" and parts[i + 1].isdigit())
        assert total == int(score), line


def test_status_as_json_and_the_version(cli: CliRunner) -> None:
    r = cli.invoke(app, ["status", "--format", "json"])
    state = json.loads(r.stdout)
    assert state["neo4j"]["state"] == "running" and state["log"]["events"] > 0
    assert r.exit_code == (0 if state["ok"] else 1)
    r = cli.invoke(app, ["--version"])
    assert r.exit_code == 0 and r.stdout.startswith("lineage-graph ")


def test_delete_hides_and_purge_removes_its_events(cli: CliRunner, graph: Graph) -> None:
    r = cli.invoke(app, ["delete", "dataset", WH, "ml.user_features"])
    assert r.exit_code == 0 and "hid dataset" in r.output, r.output
    listed = cli.invoke(app, ["ls", "datasets", "--format", "plain"])
    assert "ml.user_features" not in listed.stdout and "raw.users" in listed.stdout
    # hidden from the questions' answers, and not found when asked for
    reach = cli.invoke(app, ["impact", "dataset", WH, "raw.users", "--format", "plain"])
    assert reach.exit_code == 0 and "staging.users_clean" in reach.stdout
    assert "ml.user_features" not in reach.stdout
    where = cli.invoke(app, ["where", WH, "raw.users", "email", "--format", "json"])
    assert where.exit_code == 0 and "ml.user_features" not in where.stdout
    assert cli.invoke(app, ["impact", "dataset", WH, "ml.user_features"]).exit_code == 1
    before = canonical_dump(graph)
    r = cli.invoke(app, ["delete", "job", "shop-nightly", "ml_user_features", "--purge", "--yes"])
    assert r.exit_code == 0, r.output
    assert "removed" in r.output and "replayed" in r.output
    after = canonical_dump(graph)
    assert after != before
    assert not any('"ml_user_features"' in line for line in after)
    assert cli.invoke(app, ["delete", "job", "shop-nightly", "ml_user_features", "--purge",
                            "--yes"]).exit_code == 2
    assert cli.invoke(app, ["delete", "table", WH, "x"]).exit_code == 2


@pytest.mark.parametrize("width", [40, 60, 80])
def test_answers_in_blocks_show_styles_not_markup(cli: CliRunner, width: int) -> None:
    """A narrow terminal gets a block per row: its labels are styled (or plain), never printed as
    markup ("[bold red]raw[/]")."""
    from api.cli.common import out

    before = out._width
    out.width = width
    try:
        shown = cli.invoke(app, ["where", WH, "raw.users", "email"])
    finally:
        out._width = before
    assert shown.exit_code == 0, shown.output
    assert "raw" in shown.output and "masked" in shown.output
    assert "[/]" not in shown.output and "[bold" not in shown.output and "[green" not in shown.output


def test_an_error_keeps_its_bracketed_text(cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich markup must not eat what an error says: `pip install -e '.[kafka]'`, a name in []."""
    shown = cli.invoke(app, ["impact", "dataset", WH, "raw.[users]"])
    assert shown.exit_code != 0 and "raw.[users]" in shown.output, shown.output
