"""Lineage health: ``lineage health`` (the SLIs per tier, and what to act on) and ``lineage slo
check`` (exit 1 when an objective of the SLO file is violated). Both only read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from api.cli.app import app
from api.cli.common import TextOrJson, fail, get_settings, out, reading_graph, write
from graph.errors import LineageError

if TYPE_CHECKING:
    from impact.health.measure import Health

slo_app = typer.Typer(help="Objectives on lineage health (coverage of critical data >= 80%, "
                           "no silent critical job): check them, for a cron job or a CI step.",
                      no_args_is_help=True)
app.add_typer(slo_app, name="slo", rich_help_panel="Ask")

TiersOption = Annotated[Path | None, typer.Option(
    "--tiers", help="The tiers file (YAML, docs/health.md); default LINEAGE_TIERS. Datasets "
                    "tagged tier:NAME need none.", dir_okay=False)]


def _measure(tiers_path: Path | None) -> Health:
    from api.services.health_cache import ingest_figures
    from impact.health.measure import measure
    from impact.health.tiers import TiersError, read_tiers
    from ingest.log.sqlite import open_event_log

    settings = get_settings()
    try:
        tiers = read_tiers(tiers_path or settings.tiers)
    except TiersError as e:
        raise fail(str(e), code=2) from e
    ingest: dict[str, Any] = {}
    if settings.log != "sqlite" or settings.log_path.exists():
        events = open_event_log(settings)
        try:
            ingest = ingest_figures(events)
        finally:
            events.close()
    try:
        with reading_graph(settings) as graph:
            return measure(graph, tiers, ingest)
    except LineageError as e:
        raise fail(str(e)) from e


@app.command("health", rich_help_panel="Ask")
def health_cmd(tiers: TiersOption = None, fmt: TextOrJson = "text") -> None:
    """How good the lineage is, per tier: coverage (datasets with a known producer),
    completeness (schema, owner, column lineage; runs that ended), freshness (jobs heard from
    within their cadence), provenance (reads whose input has a producer), silent jobs, late
    datasets, lag; then the worst offenders to act on. Definitions: docs/health.md."""
    from impact.health.measure import RATIOS

    found = _measure(tiers)
    if fmt == "json":
        write(json.dumps(found.json(), indent=2) + "\n")
        return
    from rich.table import Table

    from api.cli.render import fit

    table = Table(title=f"lineage health ({found.tiers_source})")
    for column in ("tier", "datasets", *RATIOS, "silent jobs", "late", "unfinished runs"):
        table.add_column(column, justify="left" if column == "tier" else "right")
    for g in found.tiers:
        table.add_row(g.tier, str(g.datasets), *(_pct(g.ratio(k).value) for k in RATIOS),
                      str(g.silent_jobs), str(g.late_datasets), str(g.unfinished_runs))
    fit(table, drop=("unfinished runs", "late", "provenance"))
    if found.ingest:
        out.print(f"ingest: lag {found.ingest['lagSeconds']:.1f} s ({found.ingest['lagEvents']} "
                  f"events), {found.ingest['deadLetters']} dead letters of "
                  f"{found.ingest['events']} events", highlight=False)
    for kind, title in (("silentJobs", "silent jobs"), ("lateDatasets", "late datasets"),
                        ("unfinishedRuns", "runs that never ended"),
                        ("withoutProducer", "datasets without a producer"),
                        ("withoutOwner", "datasets without an owner"),
                        ("noColumnLineage", "jobs that emit no column lineage")):
        items = found.offenders.get(kind) or []
        if not items:
            continue
        total = found.offender_counts.get(kind, len(items))
        shown = f", the first {len(items)}" if total > len(items) else ""
        out.print(f"\n[bold]{title}[/] ({total}{shown}):")
        for o in items:
            out.print(f"  {o.get('dataset') or o.get('job')}  [dim]{o['tier']}[/]"
                      + (f"  due by {o['dueBy']}" if o.get("dueBy") else "")
                      + (f"  run {o['runId']} {o['state']} since {o['started']}"
                         if o.get("runId") else ""), highlight=False)


@slo_app.command("check")
def slo_check(
    slos: Annotated[Path | None, typer.Option(
        "--slos", help="The SLO file (YAML, docs/health.md); default LINEAGE_SLOS.",
        dir_okay=False)] = None,
    tiers: TiersOption = None,
    fmt: TextOrJson = "text",
    no_data_ok: Annotated[bool, typer.Option(
        "--no-data-ok", help="Exit 0 when the objectives that are not met have no data (a tier "
        "that holds nothing) rather than 3.")] = False,
) -> None:
    """Judge each objective of the SLO file against the lineage now, with the error budget left.
    Exit 0 when every one is met, 1 when one is violated, 3 when none is violated but some have
    no data (nothing in their tier to measure; --no-data-ok makes that 0), 2 on a bad file."""
    from impact.health.slo import SloError, judge, read_slos

    path = slos or get_settings().slos
    if path is None:
        raise fail("no SLO file: give --slos FILE or set LINEAGE_SLOS", code=2)
    try:
        objectives = read_slos(Path(path))
    except SloError as e:
        raise fail(str(e), code=2) from e
    verdicts = judge(objectives, _measure(tiers))
    if fmt == "json":
        write(json.dumps([v.json() for v in verdicts], indent=2) + "\n")
    else:
        for v in verdicts:
            budget = ("" if v.budget_left is None else
                      f"; budget left {v.budget_left:.0%}" if v.slo.objective is not None
                      else f"; room left {v.budget_left:g}")
            mark = {"met": "[green]met[/]", "violated": "[bold red]VIOLATED[/]",
                    "no data": "[yellow]NO DATA[/]"}[v.status]
            out.print(f"{mark}  {escape(v.slo.label)}: {escape(v.detail)}{budget}", highlight=False)
        met, empty = sum(v.met for v in verdicts), sum(v.no_data for v in verdicts)
        out.print(f"\n{met} of {len(verdicts)} objectives met"
                  + (f", {empty} with no data" if empty else ""), highlight=False)
    if any(v.status == "violated" for v in verdicts):
        raise typer.Exit(1)
    if any(v.no_data for v in verdicts) and not no_data_ok:
        raise typer.Exit(3)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"
