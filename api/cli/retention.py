"""``lineage retention``: detailed lineage for LINEAGE_RETENTION_DETAILED_DAYS, summary lineage
for LINEAGE_RETENTION_SUMMARY_DAYS, removed past it unless current (docs/graph-model.md,
"Retention"). ``plan`` says what a run would do; ``run`` does it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from api.cli.app import app
from api.cli.common import TextOrJson, fail, get_settings, out, progress, write, writing_graph
from graph.errors import LineageError

if TYPE_CHECKING:
    from api.services.retention import Kept
    from graph.settings import Settings

retention_app = typer.Typer(
    help="Keep the graph's size bounded: runs older than the detailed window (90 days by "
         "default) fold into summary lineage (each edge keeps how many runs stated it and the "
         "last one; each job its run counts by state), and lineage no run has stated within "
         "the summary window (365 days) is removed; current lineage never is. Time is the "
         "graph's own: its latest event time. Settings: LINEAGE_RETENTION_DETAILED_DAYS, "
         "LINEAGE_RETENTION_SUMMARY_DAYS, LINEAGE_ARCHIVE. Rules: docs/graph-model.md, "
         "\"Retention\".",
    no_args_is_help=True)
app.add_typer(retention_app, name="retention", rich_help_panel="Run the services")

DetailedOption = Annotated[float | None, typer.Option(
    "--detailed-days", help="Days of detailed lineage (default: the setting, 90).",
    min=0.001)]
SummaryOption = Annotated[float | None, typer.Option(
    "--summary-days", help="Days of summary lineage (default: the setting, 365).",
    min=0.001)]


def _settings(detailed_days: float | None, summary_days: float | None) -> Settings:
    """The settings with the windows given; exit 2 for windows that cannot be."""
    from graph.errors import ConfigError
    from graph.retention.run import check_windows

    settings = get_settings()
    given = {k: v for k, v in (("retention_detailed_days", detailed_days),
                               ("retention_summary_days", summary_days)) if v is not None}
    settings = settings.model_copy(update=given) if given else settings
    try:
        check_windows(settings.retention_detailed_days, settings.retention_summary_days)
    except ConfigError as e:
        raise fail(str(e), code=2) from e
    return settings


@retention_app.command("plan")
def plan_cmd(detailed_days: DetailedOption = None, summary_days: SummaryOption = None,
             fmt: TextOrJson = "text") -> None:
    """What `lineage retention run` would do now: the runs it would fold, the edges and nodes
    it would remove, the log entries it would archive. The graph's part is done in one
    transaction that is rolled back: nothing changes."""
    from api.services.retention import Kept
    from graph.retention.run import plan
    from ingest.log.archive import archivable
    from ingest.log.protocol import WORKER, History
    from ingest.log.sqlite import open_event_log

    settings = _settings(detailed_days, summary_days)
    try:
        with writing_graph(settings) as graph, progress("planning…"):
            found = plan(graph, settings.retention_detailed_days,
                         settings.retention_summary_days)
        events = open_event_log(settings)
        try:
            log = None if found.windows is None or not isinstance(events, History) else \
                archivable(events, found.windows.detailed_since, events.position(WORKER))
        finally:
            events.close()
    except LineageError as e:
        raise fail(str(e)) from e
    _show(Kept(found, log), settings, fmt, planned=True)


@retention_app.command("run")
def run_cmd(detailed_days: DetailedOption = None, summary_days: SummaryOption = None,
            fmt: TextOrJson = "text") -> None:
    """Fold and remove as `lineage retention plan` says, in small transactions (ingest and
    questions go on meanwhile; a run stopped half-way is finished by the next), then move the
    event log's entries older than the detailed window to the archive (LINEAGE_ARCHIVE, Parquet
    by day; `lineage replay` reads it before the log)."""
    from api.services.retention import keep_windows
    from ingest.log.sqlite import open_event_log

    settings = _settings(detailed_days, summary_days)
    try:
        events = open_event_log(settings)
        try:
            with writing_graph(settings) as graph, progress("retention…") as say:
                found = keep_windows(graph, events, settings, say)
        finally:
            events.close()
    except LineageError as e:
        raise fail(str(e)) from e
    _show(found, settings, fmt, planned=False)


def _show(found: Kept, settings: Settings, fmt: str, planned: bool) -> None:
    if fmt == "json":
        write(json.dumps(found.as_dict(), indent=2) + "\n")
        return
    g, w = found.graph, found.graph.windows
    if w is None:
        out.print("the graph holds no job, so it has no time of its own: nothing to do")
        return
    fold, remove, move = ("would fold", "would remove", "would archive") if planned else (
        "folded", "removed", "archived")
    nodes = ", ".join(f"{n:,} {kind}" for kind, n in g.nodes.items() if n) or "no nodes"
    log = ("the event log keeps no history by time (a Kafka topic): its retention.ms lets "
           "entries go" if found.log is None else
           f"{move} {found.log.entries:,} event log entries to {settings.archive_dir}"
           + (f" ({found.log.kept:,} dead letters stay in the log)" if found.log.kept else ""))
    out.print(f"the graph's time: {w.now:%Y-%m-%d %H:%M} UTC (its latest event); detailed since "
              f"{w.detailed_since:%Y-%m-%d}, summary since {w.summary_since:%Y-%m-%d}\n"
              f"{fold} {g.folded:,} runs into summary lineage ({g.counted:,} edge counts)\n"
              f"{remove} {g.edges:,} retired edges last stated before "
              f"{w.summary_since:%Y-%m-%d}, and {nodes}\n{log}\n({g.took:.1f} s)",
              highlight=False)
