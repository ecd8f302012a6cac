"""Rules lineage must keep: ``lineage policy check`` (exit 0 every error-severity rule holds,
1 a violation counts, 2 a bad policy file). It only reads the graph."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from api.cli.app import app
from api.cli.common import (
    DatasetName,
    DatasetNs,
    Depth,
    TextOrJson,
    fail,
    format_option,
    get_settings,
    reading_graph,
    suggestions,
    write,
)
from graph.errors import LineageError, NotFound

if TYPE_CHECKING:
    from impact.policy.kept import LogState
    from impact.policy.rules import Policies

policy_app = typer.Typer(help="Rules lineage must keep (PII only masked, no path from A to B): "
                              "check them against the graph.", no_args_is_help=True)
app.add_typer(policy_app, name="policy", rich_help_panel="Ask")


@policy_app.command("check")
def policy_check(
    policies: Annotated[Path | None, typer.Option(
        "--policies", help="The policy file (YAML; docs/policies.md); default LINEAGE_POLICIES.",
        exists=False, dir_okay=False)] = None,
    fmt: Annotated[str, format_option("text", "markdown", "json", "sarif")] = "text",
    depth: Depth = None,
    today: Annotated[str | None, typer.Option(
        help="The day waivers are judged on (YYYY-MM-DD; default today).")] = None,
) -> None:
    """Every rule of the policy file against the graph: each violation with its rule, severity
    and the offending path hop by hop (job, transformation, masking, run). Exit 1 on an
    error-severity violation no waiver accepts, 0 otherwise, 2 on a bad policy file."""
    from api.render.policy import policy_json, policy_markdown, policy_sarif, policy_text
    from impact.policy.check import check
    from impact.policy.rules import PolicyError, read_policies

    settings = get_settings()
    path = policies or settings.policies
    if path is None:
        raise fail("no policy file: give --policies FILE or set LINEAGE_POLICIES", code=2)
    try:
        day = date.fromisoformat(today) if today else None
    except ValueError as e:
        raise fail(f"--today {today}: expected YYYY-MM-DD", code=2) from e
    try:
        rules = read_policies(Path(path))
    except PolicyError as e:
        raise fail(str(e), code=2) from e
    try:
        with reading_graph(settings) as graph:
            report = check(graph, rules, depth, day)
    except LineageError as e:
        raise fail(str(e)) from e
    render = {"text": policy_text, "markdown": policy_markdown, "json": policy_json,
              "sarif": policy_sarif}[fmt]
    write(render(report) + ("" if fmt == "markdown" else "\n"))
    if report.failed():
        raise typer.Exit(1)


@app.command("gate", rich_help_panel="Ask")
def gate_cmd(
    namespace: DatasetNs,
    name: DatasetName,
    policies: Annotated[Path | None, typer.Option(
        "--policies", help="The policy file whose error-severity rules (quality bounds, "
                           "violations) close the gate; default LINEAGE_POLICIES.",
        dir_okay=False)] = None,
    fmt: TextOrJson = "text",
    depth: Depth = None,
) -> None:
    """May a job consume this dataset now? Exit 0 open, 1 closed (and why), 2 bad input.

    Closed by anything upstream (or in it): a job whose latest run failed with no successful
    write after it, failed data-quality assertions, an error-severity quality rule out of bounds,
    a late input, or an error-severity policy violation touching the dataset. Each cause with
    its path. For a scheduler: `lineage gate NS NAME || exit 1`, or the Airflow sensor
    api.airflow.sensor.LineageGateSensor."""
    import json

    from api.render.policy import gate_json, gate_text
    from impact.policy.gate import gate
    from impact.policy.rules import PolicyError, read_policies

    path = policies or get_settings().policies
    try:
        rules = read_policies(Path(path)) if path else None
    except PolicyError as e:
        raise fail(str(e), code=2) from e
    try:
        with reading_graph(get_settings()) as graph:
            try:
                answer = gate(graph, namespace, name, rules, depth, position=watched_position())
            except NotFound as e:
                raise fail(str(e) + suggestions(graph, e), code=2) from e
    except LineageError as e:
        raise fail(str(e)) from e
    write((json.dumps(gate_json(answer), indent=2) if fmt == "json"
                      else gate_text(answer)) + "\n")
    if not answer.open:
        raise typer.Exit(1)


def watched_position() -> LogState | None:
    """The worker's position in the local SQLite event log and its last bulk load, for a gate to
    read the policy watch's store when the watch has checked through it (impact.policy.kept);
    None without one."""
    from impact.policy.kept import LogState
    from ingest.log.protocol import WORKER
    from ingest.log.sqlite import SQLiteLog

    settings = get_settings()
    if settings.log != "sqlite" or not settings.log_path.is_file():
        return None
    events = SQLiteLog(settings.log_path)
    try:
        return LogState.of(events, WORKER)
    finally:
        events.close()


def configured_policies() -> Policies | None:
    """LINEAGE_POLICIES' rules, None without it; a bad file stops the command (exit 2)."""
    from impact.policy.rules import PolicyError, read_policies

    path = get_settings().policies
    if path is None:
        return None
    try:
        return read_policies(Path(path))
    except PolicyError as e:
        raise fail(f"{e} (LINEAGE_POLICIES)", code=2) from e
