"""`lineage retention plan|run` through the real CLI on the 400-day history of test_retention:
the plan changes nothing; the run folds, then moves the event log's entries older than the
detailed window to the archive; `lineage replay --wipe` rebuilds the same graph from archive and
log, saying which it read; `lineage delete --purge` reaches the archive; /metrics says it all."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.app import create_app
from api.cli import app
from graph.db import Graph
from graph.settings import Settings
from ingest.log.archive import archived
from ingest.log.sqlite import SQLiteLog
from tests.helpers import ndjson, rows
from tests.integration.retention.test_retention import DETAILED_SINCE, _dump, _events, _folded, history

pytestmark = pytest.mark.integration


def _invoke(*args: str) -> str:
    """What the command printed on stdout (its progress goes to stderr), once it succeeded."""
    done = CliRunner().invoke(app, list(args))
    assert done.exit_code == 0, done.output
    return done.stdout


def _runs(graph: Graph) -> int:
    return int(rows(graph, "MATCH (r:Run) RETURN count(r) AS n")[0]["n"])


def test_retention_run_archives_the_log_and_replay_rebuilds_from_both(graph: Graph,
                                                                      log_path: Path) -> None:
    paths = log_path.parent
    runs = history()
    events = _events(runs, seed=None)
    (paths / "history.ndjson").write_text(ndjson(events))
    _invoke("ingest", str(paths / "history.ndjson"))
    old = sum(1 for e in events
              if datetime.fromisoformat(e["eventTime"].replace("Z", "+00:00")) < DETAILED_SINCE)
    folded = sum(1 for r in runs if _folded(r, runs))

    said = _invoke("retention", "plan")
    assert f"would fold {folded:,} runs into summary lineage" in said
    assert f"would archive {old:,} event log entries" in said
    assert _runs(graph) == len(runs) and archived(paths / "archive") == 0  # nothing changed

    done = json.loads(_invoke("retention", "run", "--format", "json"))
    assert done["folded"] == folded and done["log"]["archived"] == old
    log = SQLiteLog(paths / "events.db")
    assert log.count() == len(events) - old
    assert archived(paths / "archive") == old
    assert sorted(p.name for p in (paths / "archive").iterdir())[0] == "date=2025-01-01"
    retained = _dump(graph)

    api = TestClient(create_app(Settings(), graph, log), base_url="http://localhost",
                     client=("127.0.0.1", 40001))
    metrics = api.get("/metrics").text
    assert f"lineage_retention_last_run_folded_runs {folded}" in metrics
    assert f"lineage_archive_entries {old}" in metrics

    said = _invoke("replay", "--wipe")
    assert f"{old:,} entries from the archive" in said
    assert f"retention folded {folded:,} runs into summary lineage again" in said
    assert _dump(graph) == retained

    # a purge reaches the archive: the job's events go from both, and the graph is rebuilt
    said = _invoke("delete", "job", "ns", "stopped", "--purge", "--yes")
    assert "and its archive" in said
    assert not any(e.event["job"]["name"] == "stopped"
                   for e in SQLiteLog(paths / "events.db").scan())
    assert not rows(graph, "MATCH (j:Job {name: 'stopped'}) RETURN j")
    assert archived(paths / "archive") == old - sum(
        1 for e in events if e["job"]["name"] == "stopped"
        and datetime.fromisoformat(e["eventTime"].replace("Z", "+00:00")) < DETAILED_SINCE)


def test_windows_that_cannot_be_are_refused_before_anything_is_touched() -> None:
    for command in ("plan", "run"):
        done = CliRunner().invoke(app, ["retention", command, "--detailed-days", "400",
                                        "--summary-days", "90"])
        assert done.exit_code == 2
        assert "the summary window (90 days" in done.output and "at least as long" in done.output
