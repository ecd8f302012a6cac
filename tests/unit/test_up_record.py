"""`lineage status` and `down` describe what `lineage up` started, not what the asking shell has
set: after `up --log kafka --workers 2`, a plain `lineage status` lists both workers and the
Kafka log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli import app
from api.local import processes
from graph.settings import Settings


def test_status_describes_what_up_started(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started = Settings(state_dir=tmp_path, log="kafka://127.0.0.1:1/lineage", workers=2)
    processes.record_up(started)
    plain = Settings(state_dir=tmp_path)
    assert (plain.log, plain.workers) == ("sqlite", 1)
    again = processes.as_started(plain)
    assert (again.log, again.workers) == ("kafka://127.0.0.1:1/lineage", 2)
    assert processes.worker_names(again) == ["worker", "worker-2"]
    monkeypatch.setenv("LINEAGE_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("LINEAGE_NEO4J_BOLT_PORT", "1")  # nothing runs: status says so, exit 1
    shown = CliRunner().invoke(app, ["status", "--format", "json"])
    state = json.loads(shown.stdout[:shown.stdout.rindex("}") + 1])
    assert shown.exit_code == 1 and "worker-2" in state
    assert state["log"]["path"] == "kafka://127.0.0.1:1/lineage"
    processes.forget_up(plain)
    assert processes.as_started(plain).log == "sqlite"
