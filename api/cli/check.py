"""The pre-deploy check: ``lineage check CHANGE`` (exit 0 pass, 1 fail, 2 usage or input error).

It only reads the graph: a read-only Neo4j user is enough, and it never starts Neo4j.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from api.cli.app import app
from api.cli.common import (
    AsOf,
    Depth,
    Retired,
    err,
    fail,
    format_option,
    get_settings,
    reading_graph,
    when,
    write,
)
from graph.errors import LineageError

if TYPE_CHECKING:
    from graph.db import Graph
    from impact.policy.delta import PolicyDelta
    from impact.policy.rules import Policies

@app.command("check", rich_help_panel="Ask")
def check_cmd(
    change: Annotated[Path | None, typer.Argument(
        help="The proposed change: a change file (YAML or JSON with `changes:`), an OpenLineage "
             "DatasetEvent/JobEvent, a column list {namespace, dataset, columns}, or "
             "{job, namespace, sql} for a job's new SQL. '-' reads stdin. Not with --dbt-manifest.",
        allow_dash=True)] = None,
    fail_on: Annotated[str, typer.Option(help="Exit 1 when the verdict is at least: breaking, risky, "
                                              "or never.")] = "breaking",
    fmt: Annotated[str, format_option("text", "markdown", "json")] = "text",
    as_of: AsOf = None,
    retired: Retired = False,
    depth: Depth = None,
    stale_days: Annotated[int, typer.Option(min=0, max=36_500, help="A consumer whose job has not run "
                                                                   "for this many days is stale.")] = 30,
    exclude_stale: Annotated[bool, typer.Option(help="Leave stale consumers out of the verdict.")] = False,
    dbt_manifest: Annotated[Path | None, typer.Option(
        help="A dbt branch's target/manifest.json (after `dbt compile`): its models' columns and "
             "inputs, compared with what the graph knows of them now.")] = None,
    dbt_state: Annotated[Path | None, typer.Option(
        help="The deployed project's manifest.json: compare the branch with it instead of with the "
             "graph (models it has and the branch lacks are dropped datasets).")] = None,
    dbt_namespace: Annotated[str | None, typer.Option(
        help="The namespace openlineage-dbt reports the project's datasets under (found from the "
             "models' names when the graph has them in one namespace).")] = None,
    policies: Annotated[Path | None, typer.Option(
        "--policies", help="Also check these policy rules (docs/policies.md) on the graph as the "
                           "change would leave it: a new error-severity violation fails the "
                           "check. Default LINEAGE_POLICIES. For a dbt branch or an OpenLineage "
                           "event; needs a user that may write (the change is written in a "
                           "transaction that is rolled back).", dir_okay=False)] = None,
) -> None:
    """Pre-deploy check: would this change break a real downstream consumer? Exit 0 pass, 1 fail,
    2 usage or input error (unknown dataset or column, malformed change). With --dbt-manifest, a
    dbt branch is the change: its models compared with the graph (or with --dbt-state). With
    policy rules (--policies or LINEAGE_POLICIES), also what the change does to them: "new
    violation of rule pii-masked: ..." fails, a violation it removes is said."""
    from api.render.check import check_json, check_markdown, check_text
    from api.render.policy import delta_json, delta_markdown, delta_text
    from impact.answers import clamp_depth
    from impact.change.check import check
    from impact.change.read import CheckInputError

    if fail_on not in ("breaking", "risky", "never"):
        raise fail("--fail-on must be breaking, risky or never", code=2)
    moment = when(as_of)
    changes_of = _proposal(change, dbt_manifest, dbt_state, dbt_namespace)
    settings = get_settings()
    rules = _rules(policies or settings.policies)

    def ask(graph: Graph) -> Any:
        return check(graph, changes_of(graph), depth=clamp_depth(depth), as_of=moment,
                     stale_days=stale_days, exclude_stale=exclude_stale, include_retired=retired)

    try:
        with reading_graph(settings) as graph:
            report = ask(graph)
            delta = None
            if rules is not None:
                delta = _policies(graph, rules, change, dbt_manifest, dbt_namespace, depth)
    except CheckInputError as e:
        raise fail(str(e), code=2) from e
    except LineageError as e:
        raise fail(str(e)) from e
    if fmt == "json":
        body = json.loads(check_json(report))
        if delta is not None:
            body["policies"] = delta_json(delta)
        write(json.dumps(body, indent=2) + "\n")
    else:
        write({"text": check_text, "markdown": check_markdown}[fmt](report))
        if delta is not None:
            write((delta_markdown if fmt == "markdown" else delta_text)(delta))
    if report.fails(fail_on) or (delta is not None and delta.failed()):
        raise typer.Exit(1)


def _rules(path: Path | None) -> Policies | None:
    from impact.policy.rules import PolicyError, read_policies

    if path is None:
        return None
    try:
        return read_policies(Path(path))
    except PolicyError as e:
        raise fail(str(e), code=2) from e


def _policies(graph: Graph, rules: Policies, change: Path | None, dbt_manifest: Path | None,
              dbt_namespace: str | None, depth: int | None) -> PolicyDelta:
    """The rules before and after the change: its events rehearsed (api.services.rehearsal)."""
    from api.services.rehearsal import rehearse_policies
    from impact.change.dbt import branch_events

    events: list[dict[str, Any]] = []
    if dbt_manifest is not None:
        events, _ = branch_events(graph, json.loads(_read(dbt_manifest)), dbt_namespace)
    elif change is not None:
        doc = load_change(_read(change), str(change)) if str(change) != "-" else None
        if isinstance(doc, dict) and ("eventTime" in doc and ("job" in doc or "dataset" in doc)):
            events = [doc]
        else:
            err.print("note: the policy rules are checked on the graph as a change leaves it for "
                      "a dbt branch (--dbt-manifest) or an OpenLineage event; this change is "
                      "checked against the rules as the graph is now", highlight=False)
    return rehearse_policies(graph, rules, events, depth)


def _proposal(change: Path | None, dbt_manifest: Path | None, dbt_state: Path | None,
              dbt_namespace: str | None) -> Callable[[Graph], Any]:
    """How to get the changes, once the graph is at hand: from a change document, or from a dbt
    branch's manifest (its notes to stderr)."""
    import json

    from impact.change.read import CheckInputError, check_shape, parse_change

    if (change is None) == (dbt_manifest is None):
        raise fail("give either a CHANGE file or --dbt-manifest", code=2)
    if dbt_state is not None and dbt_manifest is None:
        raise fail("--dbt-state needs --dbt-manifest", code=2)
    if change is not None:
        doc = load_change(_read(change), str(change))
        try:
            check_shape(doc)  # a malformed change is said before whether Neo4j answers
        except CheckInputError as e:
            raise fail(f"{change}: {e}", code=2) from e
        return lambda graph: parse_change(doc, graph)
    assert dbt_manifest is not None
    try:
        branch = json.loads(_read(dbt_manifest))
        state = json.loads(_read(dbt_state)) if dbt_state is not None else None
    except json.JSONDecodeError as e:
        raise fail(f"a dbt manifest is not JSON: {e}", code=2) from e

    def from_dbt(graph: Graph) -> Any:
        from impact.change.dbt import dbt_changes

        found = dbt_changes(graph, branch, state, dbt_namespace)
        for note in found.notes:
            err.print(f"note: {note}", highlight=False)
        if not found.changes:
            err.print(f"the branch changes no column or input of a model the graph knows "
                      f"(namespace {found.namespace})", highlight=False)
        return found.changes

    return from_dbt


def _read(path: Path) -> str:
    try:
        return sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
    except OSError as e:
        raise fail(f"cannot read {path}: {e}", code=2) from e


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
