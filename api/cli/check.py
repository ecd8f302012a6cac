"""The pre-deploy check: ``lineage check CHANGE`` (exit 0 pass, 1 fail, 2 usage or input error).

It only reads the graph: a read-only Neo4j user is enough, and it never starts Neo4j.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from api.cli.app import app
from api.cli.common import AsOf, Depth, Retired, fail, reading_graph, when
from graph.errors import LineageError
from graph.settings import get_settings

if TYPE_CHECKING:
    from graph.db import Graph

@app.command("check", rich_help_panel="Ask")
def check_cmd(
    change: Annotated[Path, typer.Argument(help="The proposed change: a change file (YAML or JSON with "
                                                "`changes:`), an OpenLineage DatasetEvent/JobEvent, a "
                                                "column list {namespace, dataset, columns}, or "
                                                "{job, namespace, sql} for a job's new SQL. '-' reads stdin.",
                                           allow_dash=True)],
    fail_on: Annotated[str, typer.Option(help="Exit 1 when the verdict is at least: breaking, risky, "
                                              "or never.")] = "breaking",
    fmt: Annotated[str, typer.Option("--format", help="text, markdown (for a PR comment) or json.")] = "text",
    as_of: AsOf = None,
    retired: Retired = False,
    depth: Depth = None,
    stale_days: Annotated[int, typer.Option(min=0, max=36_500, help="A consumer whose job has not run "
                                                                   "for this many days is stale.")] = 30,
    exclude_stale: Annotated[bool, typer.Option(help="Leave stale consumers out of the verdict.")] = False,
) -> None:
    """Pre-deploy check: would this change break a real downstream consumer? Exit 0 pass, 1 fail,
    2 usage or input error (unknown dataset or column, malformed change)."""
    from api.reports import check_json, check_markdown, check_text
    from impact.answers import clamp_depth
    from impact.changes import CheckInputError, parse_change
    from impact.check import check

    if fail_on not in ("breaking", "risky", "never"):
        raise fail("--fail-on must be breaking, risky or never", code=2)
    if fmt not in ("text", "markdown", "json"):
        raise fail("--format must be text, markdown or json", code=2)
    moment = when(as_of)
    try:
        text = sys.stdin.read() if str(change) == "-" else change.read_text(encoding="utf-8")
    except OSError as e:
        raise fail(f"cannot read {change}: {e}", code=2) from e
    doc = load_change(text, str(change))

    def ask(graph: Graph) -> Any:
        return check(graph, parse_change(doc, graph), depth=clamp_depth(depth), as_of=moment,
                     stale_days=stale_days, exclude_stale=exclude_stale, include_retired=retired)

    try:
        with reading_graph(get_settings()) as graph:
            report = ask(graph)
    except CheckInputError as e:
        raise fail(str(e), code=2) from e
    except LineageError as e:
        raise fail(str(e)) from e
    sys.stdout.write({"text": check_text, "markdown": check_markdown, "json": check_json}[fmt](report))
    if report.fails(fail_on):
        raise typer.Exit(1)


def load_change(text: str, where: str) -> Any:
    import json

    import yaml

    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise fail(f"{where}: neither JSON nor YAML: {e}", code=2) from e
