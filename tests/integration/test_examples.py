"""Every example file of examples/ that the README and the docs point at, run as they say, on the
example's graph (examples/events): what a user copies first works on the example."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli import app
from graph.db import Graph
from graph.settings import get_settings
from ingest.pipeline import Ingester, IngestReport
from ingest.read import read_file
from tests.helpers import point_cli_at_test_server

pytestmark = pytest.mark.integration

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples"
NS = "postgres://warehouse:5432"


@pytest.fixture
def cli(graph: Graph, monkeypatch: pytest.MonkeyPatch) -> Iterator[CliRunner]:
    Ingester(graph).ingest(read_file(EXAMPLES / "events" / "shop.ndjson"), IngestReport())
    point_cli_at_test_server(monkeypatch)
    yield CliRunner()
    get_settings.cache_clear()


def _run(cli: CliRunner, *args: str) -> tuple[int, str]:
    done = cli.invoke(app, list(args))
    return done.exit_code, done.output


def test_the_change_files_give_the_verdicts_their_comments_promise(cli: CliRunner) -> None:
    code, output = _run(cli, "check", str(EXAMPLES / "changes" / "drop_email.yaml"), "--format", "json")
    assert code == 1, output
    report = json.loads(output)
    breaking = {f["consumer"] for f in report["findings"] if f["severity"] == "BREAKING"}
    assert any("ml.user_features" in c for c in breaking), report["findings"]
    code, output = _run(cli, "check", str(EXAMPLES / "changes" / "add_phone.yaml"))
    assert code == 0, output
    code, output = _run(cli, "check", str(EXAMPLES / "changes" / "every_kind.yaml"))
    assert code == 1, output


def test_the_change_file_docs_ci_shows_is_the_example_and_checks_on_it(cli: CliRunner,
                                                                         tmp_path: Path) -> None:
    shown = re.search(r"```yaml\n(changes:.*?)```", (ROOT / "docs" / "ci.md").read_text(), re.S)
    assert shown is not None
    kept = (EXAMPLES / "changes" / "every_kind.yaml").read_text()
    assert shown.group(1) in kept
    doc = tmp_path / "from-docs.yaml"
    doc.write_text(shown.group(1))
    code, output = _run(cli, "check", str(doc))
    assert code == 1, output  # breaking, never "unknown column" (exit 2)


def test_an_unknown_column_or_dataset_says_what_was_meant(cli: CliRunner, tmp_path: Path) -> None:
    doc = tmp_path / "typo.yaml"
    doc.write_text("changes:\n  - {op: drop_column, namespace: 'postgres://warehouse:5432', "
                   "dataset: raw.users, column: name}\n")
    code, output = _run(cli, "check", str(doc))
    assert code == 2 and "did you mean" in output and "raw.users.full_name" in output, output
    code, output = _run(cli, "gate", NS, "dashboards.revenu")
    assert code == 2 and "did you mean" in output and "dashboards.revenue" in output, output


def test_a_malformed_change_is_said_before_whether_neo4j_answers(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:9")  # nothing answers there
    get_settings.cache_clear()
    doc = tmp_path / "bad.yaml"
    doc.write_text("changes:\n  - {op: explode_column, namespace: n, dataset: d, column: c}\n")
    done = CliRunner().invoke(app, ["check", str(doc)])
    assert done.exit_code == 2 and "changes.0.op" in done.output, done.output
    get_settings.cache_clear()


def test_the_tiers_and_slo_files_measure_the_example(cli: CliRunner,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    tiers = EXAMPLES / "health" / "tiers.yaml"
    code, output = _run(cli, "health", "--tiers", str(tiers), "--format", "json")
    assert code == 0, output
    health = json.loads(output)
    assert {"critical", "bronze"} <= {t["tier"] for t in health["tiers"]}, health["tiers"]
    monkeypatch.setenv("LINEAGE_TIERS", str(tiers))
    get_settings.cache_clear()
    code, output = _run(cli, "slo", "check", "--slos", str(EXAMPLES / "health" / "slos.yaml"))
    assert code in (0, 1), output  # judged: no bad file (2), and no objective without data (3)
    assert "coverage" in output


def test_the_policy_file_finds_what_the_readme_says(cli: CliRunner) -> None:
    code, output = _run(cli, "policy", "check", "--policies", str(EXAMPLES / "policies" / "shop.yaml"))
    assert code == 1, output  # README: on the example, 1 error, 1 warning, exit 1
    assert "1 error" in output and "1 warning" in output, output
