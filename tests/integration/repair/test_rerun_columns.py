"""A rerun plan split by column lineage (docs/graph-model.md, "Repair"): when only some columns
of what the bad run wrote are bad (`--columns`), the jobs whose bad reads touch none of the
columns those feed are listed apart, "not affected by the changed columns", and what they write
is not bad; a job that reads the bad data without column lineage may copy any column: affected,
and all it writes is bad."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graph.db import Graph
from impact.repair.plan import rerun_plan_run
from tests.helpers import dataset, ingest_events, run_event

pytestmark = pytest.mark.integration

NIGHT0 = datetime(2026, 4, 1, 1, tzinfo=UTC)
D = "DIRECT"
# job -> (inputs, output, column lineage of the output: column -> [(input, field)]; None: none)
JOBS: dict[str, tuple[list[str], str, dict[str, list[tuple[str, str]]] | None]] = {
    "only_b": (["src"], "out1", {"x": [("src", "b")]}),
    "uses_a": (["src"], "out2", {"y": [("src", "a")], "z": [("src", "b")]}),
    "after_a": (["out2"], "out3", {"w": [("out2", "y")]}),
    "after_z": (["out2"], "out4", {"q": [("out2", "z")]}),
    "coarse": (["src"], "out5", None),
    "after_coarse": (["out5"], "out6", {"m": [("out5", "k")]}),
    "after_only_b": (["out1"], "out7", None),
}
ORDER = ["only_b", "uses_a", "coarse", "after_a", "after_z", "after_coarse", "after_only_b"]


def _id(*parts: object) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(map(str, parts))))


def _night(day: int) -> list[dict[str, Any]]:
    start = NIGHT0 + timedelta(days=day)
    events = [run_event("COMPLETE", _id("load", day), "load", time=start.isoformat(),
                        outputs=[dataset("src", columns=["a", "b"])])]
    for i, job in enumerate(ORDER, 1):
        inputs, output, lineage = JOBS[job]
        cols = sorted(lineage) if lineage else ["k"]
        out = dataset(output, columns=cols, lineage={
            c: [(src, f, D, "IDENTITY") for src, f in sources] for c, sources in lineage.items()}
            if lineage else None)
        t = (start + timedelta(minutes=10 * i)).isoformat()
        events.append(run_event("COMPLETE", _id(job, day), job, time=t,
                                inputs=[dataset(n) for n in inputs], outputs=[out]))
    return events


def test_only_the_jobs_the_bad_columns_feed_are_rerun_the_others_are_listed_apart(
        graph: Graph) -> None:
    ingest_events(graph, _night(0) + _night(1))
    whole = rerun_plan_run(graph, _id("load", 1))
    assert {r.job for r in whole.reruns} == {f"ns:{j}" for j in ORDER} and not whole.unaffected

    split = rerun_plan_run(graph, _id("load", 1), columns=("a",))
    assert split.columns == ("a",)
    assert {r.job for r in split.reruns} == {"ns:uses_a", "ns:after_a", "ns:coarse", "ns:after_coarse"}
    assert {r.job for r in split.unaffected} == {"ns:only_b", "ns:after_z", "ns:after_only_b"}
    assert {r.reason for r in split.unaffected} == {"not affected by the changed columns"}
    # still in an order that respects what they read, and naming only jobs of the plan
    steps = {r.job: r.step for r in split.reruns}
    assert steps["ns:uses_a"] < steps["ns:after_a"] and steps["ns:coarse"] < steps["ns:after_coarse"]
    assert sorted(steps.values()) == list(range(1, 5))
    assert all(set(r.after) <= set(steps) for r in split.reruns)
    # nothing to roll back where only unaffected jobs wrote
    assert {b.dataset for b in split.rollbacks} == {"ns:src", "ns:out2", "ns:out3", "ns:out5", "ns:out6"}

    # a bad column nothing reads by name: only the job without column lineage (and what reads
    # it) may have copied it
    nobody = rerun_plan_run(graph, _id("load", 1), columns=("no_such_column",))
    assert {r.job for r in nobody.reruns} == {"ns:coarse", "ns:after_coarse"}


def test_the_split_on_the_cli_and_over_http(graph: Graph, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from fastapi.testclient import TestClient
    from typer.testing import CliRunner

    from api.app import create_app
    from api.cli import app
    from graph.settings import Settings
    from tests.helpers import point_cli_at_test_server

    ingest_events(graph, _night(0) + _night(1))
    point_cli_at_test_server(monkeypatch)
    runner = CliRunner()
    done = runner.invoke(app, ["rerun-plan", "run", _id("load", 1), "--columns", "a",
                               "--format", "json"])
    assert done.exit_code == 0, done.output
    answer = json.loads(done.stdout)
    assert answer["columns"] == ["a"]
    assert {r["job"] for r in answer["unaffected"]} == {"ns:only_b", "ns:after_z", "ns:after_only_b"}
    text = runner.invoke(app, ["rerun-plan", "run", _id("load", 1), "--columns", "a"],
                         env={"COLUMNS": "200"})
    [line] = [x for x in text.stdout.splitlines() if x.startswith("not affected by the changed")]
    assert line.startswith("not affected by the changed columns (a): ")
    assert set(line.split(": ", 1)[1].split(", ")) == {"ns:only_b", "ns:after_z", "ns:after_only_b"}
    markdown = runner.invoke(app, ["rerun-plan", "run", _id("load", 1), "--columns", "a",
                                   "--format", "markdown"]).stdout
    assert "## Not affected by the changed columns (a)" in markdown and "- ns:after\\_z" in markdown
    empty = runner.invoke(app, ["rerun-plan", "run", _id("load", 1), "--columns", " , "])
    assert empty.exit_code == 2 and "--columns" in empty.output
    with TestClient(create_app(Settings(), graph), base_url="http://localhost",
                    client=("127.0.0.1", 40001)) as api:
        got = api.get(f"/api/v1/rerun-plan/run/{_id('load', 1)}", params={"columns": "a"})
        assert got.status_code == 200 and got.json()["unaffected"] == answer["unaffected"]
        assert api.get(f"/api/v1/rerun-plan/run/{_id('load', 1)}",
                       params={"columns": ","}).status_code == 422
