"""`lineage rerun-plan` and `/api/v1/rerun-plan` on a generated pipeline: the same plan in every
format (text, JSON, Markdown, the Airflow commands), an unknown run a clear error."""

from __future__ import annotations

import json
import random

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.app import create_app
from api.cli import app
from api.render.markup import md
from graph.db import Graph
from graph.settings import Settings
from impact.repair.plan import rerun_plan_run
from tests.helpers import point_cli_at_test_server
from tests.integration.repair.test_rerun_plan import DAG, _id, _load, night, pipeline

pytestmark = pytest.mark.integration


def test_the_plan_in_every_format_on_the_cli_and_over_http(
        graph: Graph, monkeypatch: pytest.MonkeyPatch) -> None:
    jobs = pipeline(random.Random(2))
    bad = "j0_2"
    _load(graph, night(jobs, 0) + night(jobs, 1, bad))
    plan = rerun_plan_run(graph, _id(bad, 1))
    assert plan.reruns and plan.commands
    point_cli_at_test_server(monkeypatch)
    runner = CliRunner()

    def invoke(*args: str) -> str:
        done = runner.invoke(app, ["rerun-plan", *args])
        assert done.exit_code == 0, done.output
        return done.stdout

    as_json = json.loads(invoke("run", _id(bad, 1), "--format", "json"))
    assert [r["job"] for r in as_json["reruns"]] == [r.job for r in plan.reruns]
    assert as_json["commands"] == list(plan.commands)
    assert invoke("run", _id(bad, 1), "--format", "airflow") == "".join(c + "\n" for c in plan.commands)
    markdown = invoke("run", _id(bad, 1), "--format", "markdown")
    assert markdown.startswith(f"# Rerun plan for run {_id(bad, 1)}")
    assert all(md(r.job) in markdown for r in plan.reruns) and plan.commands[0] in markdown
    text = invoke("run", _id(bad, 1))
    assert f"ns:{DAG}.{bad}" in text and plan.commands[0] in text
    assert all(f"roll back {b.dataset}" in text for b in plan.rollbacks)

    missing = runner.invoke(app, ["rerun-plan", "run", "8c2d3a0e-0000-4000-8000-000000000000"])
    assert missing.exit_code != 0 and "no run 8c2d3a0e" in missing.output
    bad_time = runner.invoke(app, ["rerun-plan", "dataset", "ns", f"d_{bad}", "--since", "soon"])
    assert bad_time.exit_code == 2 and "--since" in bad_time.output

    with TestClient(create_app(Settings(), graph), base_url="http://localhost",
                    client=("127.0.0.1", 40001)) as api:
        answer = api.get(f"/api/v1/rerun-plan/run/{_id(bad, 1)}")
        assert answer.status_code == 200
        assert answer.json()["reruns"] == as_json["reruns"]
        by_dataset = api.get("/api/v1/rerun-plan/dataset", params={
            "namespace": "ns", "name": f"d_{bad}"})
        assert by_dataset.status_code == 200
        assert by_dataset.json()["reruns"] == as_json["reruns"]
        by_markdown = api.get(f"/api/v1/rerun-plan/run/{_id(bad, 1)}", params={"format": "markdown"})
        assert by_markdown.status_code == 200 and by_markdown.text == markdown
        assert api.get("/api/v1/rerun-plan/run/nowhere").status_code == 404
        refused = api.get("/api/v1/rerun-plan/dataset", params={
            "namespace": "ns", "name": f"d_{bad}", "since": "soon"})
        assert refused.status_code == 422 and "since" in refused.text
