"""Names from events are hostile until shown: in Markdown and Mermaid (the policy report, the
check's comment) and on the terminal (policy check, ls, impact), a name that holds a newline,
quotes, HTML, Mermaid statements or terminal control sequences is shown, never obeyed."""

from __future__ import annotations

import re
from typing import Any

import pytest
from typer.testing import CliRunner

from api.cli import app
from api.render.policy import policy_markdown
from graph.db import Graph
from impact.policy.check import check
from impact.policy.rules import parse_policies
from tests.helpers import dataset, ingest_events, new_run_id, point_cli_at_test_server, run_event

pytestmark = pytest.mark.integration

HOSTILE = ('x"]\nclick n0 call alert()\n%%{init: {"theme": "dark"}}%%\n<script>alert(1)</script>'
           "\x1b[2J\x1b]0;owned\x07\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\\r\b|`")
POLICY = """\
version: 1
rules:
  - id: nothing-leaves-src
    flow: {from: {dataset: src}, to: {dataset: "*"}, must: never}
"""
# what a line of the drawing may be: a node, an edge, a class (nothing a name could add)
MERMAID_LINE = re.compile(r'^(```(mermaid)?|flowchart LR|  n\d+\["[^"\n]*"\]'
                          r'|  n\d+ -->(\|"[^"\n]*"\|)? n\d+|  class n\d+ \w+|  classDef .*)$')


@pytest.fixture
def hostile(graph: Graph) -> Graph:
    out = dataset(HOSTILE, columns=["a"])
    out["facets"]["columnLineage"] = {"fields": {"a": {"inputFields": [{
        "namespace": "ns", "name": "src", "field": "a",
        "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}]}]}}}
    events: list[dict[str, Any]] = [run_event(
        "COMPLETE", new_run_id(), HOSTILE, inputs=[dataset("src", columns=["a"])], outputs=[out])]
    assert not ingest_events(graph, events).rejected
    return graph


def test_markdown_and_mermaid_show_hostile_names_as_text(hostile: Graph) -> None:
    text = policy_markdown(check(hostile, parse_policies(POLICY)))
    assert "<script>" not in text and "\x1b" not in text
    drawing = text[text.index("```mermaid"):]
    drawing = drawing[:drawing.index("```", 3) + 3]
    for line in drawing.splitlines():
        assert MERMAID_LINE.match(line), line
    # every bullet is one line: the name's newlines did not end it
    bullets = [line for line in text.splitlines() if line.startswith("- ")]
    assert len(bullets) == 1 and "click n0" in bullets[0]
    assert not any(line.startswith(("click", "%%")) for line in text.splitlines())


@pytest.mark.parametrize("args", [
    ["policy", "check", "--policies", "{policies}"],
    ["policy", "check", "--policies", "{policies}", "--format", "markdown"],
    ["ls", "datasets", "--format", "plain"],
    ["ls", "jobs", "--format", "text"],
    ["impact", "dataset", "ns", "src", "--format", "plain"],
    ["impact", "dataset", "ns", "src"],
])
def test_the_terminal_is_never_sent_a_control_character_from_a_name(
        hostile: Graph, monkeypatch: pytest.MonkeyPatch, tmp_path: Any, args: list[str]) -> None:
    point_cli_at_test_server(monkeypatch)
    policies = tmp_path / "policies.yaml"
    policies.write_text(POLICY)
    shown = CliRunner().invoke(app, [a.format(policies=policies) for a in args])
    assert shown.exit_code in (0, 1), shown.output
    assert "script" in shown.output or "x" in shown.output  # the name is shown
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", shown.output), repr(shown.output)


FORMULAS = ["=HYPERLINK(\"http://evil.example\",\"x\")", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)"]


def test_csv_evidence_never_holds_a_cell_a_spreadsheet_runs(
        graph: Graph, monkeypatch: pytest.MonkeyPatch) -> None:
    """A name that starts like a formula is written with a leading ' in every CSV (the GDPR
    reach over the CLI and HTTP, the erasure plan), so that opening the evidence runs nothing."""
    import csv
    import io

    from fastapi.testclient import TestClient

    from api.app import create_app
    from graph.settings import Settings

    outputs = [dataset(name, columns=["email"],
                       lineage={"email": [("users", "email", "DIRECT", "IDENTITY")]})
               for name in FORMULAS]
    copy = dataset("copy", ns="@evil", columns=["email"])  # its column lineage reads ns:users
    copy["facets"]["columnLineage"] = outputs[0]["facets"]["columnLineage"]
    outputs.append(copy)
    assert not ingest_events(graph, [run_event("COMPLETE", new_run_id(), "=copy", inputs=[
        dataset("users", columns=["id", "email"])], outputs=outputs)]).rejected
    point_cli_at_test_server(monkeypatch)
    shown = CliRunner().invoke(app, ["where", "ns", "users", "email", "--format", "csv"])
    assert shown.exit_code == 0, shown.output
    with TestClient(create_app(Settings(), graph), client=("127.0.0.1", 50000),
                    base_url="http://localhost") as client:
        answer = client.get("/api/v1/where", params={
            "namespace": "ns", "dataset": "users", "column": "email", "format": "csv"})
    assert answer.status_code == 200, answer.text
    erasure = CliRunner().invoke(app, ["erasure", "plan", "--key", "ns", "users", "id",
                                       "--personal", "email", "--format", "csv"])
    assert erasure.exit_code == 0, erasure.output
    for text, shown_as in ((shown.stdout, [*FORMULAS, "@evil"]), (answer.text, [*FORMULAS, "@evil"]),
                           (erasure.stdout, ["@evil:copy"])):  # the plan names places ns:name
        cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
        assert not [c for c in cells if c.startswith(("=", "+", "-", "@"))], cells
        assert {f"'{name}" for name in shown_as} <= set(cells), cells
