"""The event log: ``replay`` it into an empty graph, its ``dead-letters``, ``export`` as Parquet."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from api.cli import render
from api.cli.app import app
from api.cli.common import JSON, err, fail, out, question, writing_graph
from api.cli.load import make_ingester, spark_ingest_files
from api.cli.render import dump
from graph.errors import LineageError
from graph.settings import get_settings


@app.command("replay", rich_help_panel="Load and keep events")
def replay_cmd(
    wipe: Annotated[bool, typer.Option("--wipe", help="Empty the graph first (it must be empty "
                                                       "otherwise).")] = False,
    forget_bulk_loads: Annotated[bool, typer.Option(
        "--forget-bulk-loads", help="With --wipe: drop what `lineage ingest --engine spark` "
                                    "loaded (the log holds only where it came from; load those "
                                    "paths again after the replay to keep it).")] = False,
    engine: Annotated[str, typer.Option(help="python, or spark (exports the log to Parquet and "
                                             "loads it in Spark partitions).")] = "python",
) -> None:
    """Rebuild the graph from the event log alone, from its first event.

    Everything the API, `lineage ingest` and `lineage alias` loaded is in the log. A Spark bulk
    load is not (the log records its paths): `--wipe` refuses to drop it unless
    `--forget-bulk-loads` says so."""
    import tempfile

    from ingest.commands import apply_all as apply_commands
    from ingest.export import export_parquet
    from ingest.log import open_log
    from ingest.pipeline import IngestReport
    from ingest.replay import commands_after_events, nodes_in, replay
    from ingest.replay import wipe as empty_graph
    from ingest.worker import CONSUMER

    settings = get_settings()
    events = open_log(settings.log_path)
    total = events.count()
    report = IngestReport()
    if engine not in ("python", "spark"):
        raise fail("--engine must be python or spark", code=2)
    try:
        with writing_graph(settings) as graph:
            nodes = nodes_in(graph)
            if nodes and not wipe:
                raise fail(f"the graph holds {nodes} nodes: replay rebuilds an empty graph; "
                           "add --wipe to empty it first", code=2)
            bulk = events.bulk_loads()
            if nodes and bulk and not forget_bulk_loads:
                raise fail("the graph holds events the log cannot rebuild, loaded with `lineage "
                           "ingest --engine spark` from: "
                           + "; ".join(f"{b.source} ({b.events} events)" for b in bulk)
                           + ". Add --forget-bulk-loads to replay without them (then load those "
                           "paths again), or keep this graph", code=2)
            if engine == "spark":
                later = commands_after_events(events)  # before anything is wiped
            if nodes:
                empty_graph(graph)
            events.forget_bulk_loads()  # the graph is empty now: it holds none of them
            if engine == "spark":
                last = events.last_seq()
                with tempfile.TemporaryDirectory() as tmp:
                    export_parquet(events, Path(tmp))
                    spark_ingest_files(settings, [tmp], "local[*]", 20, record=False)
                applied = apply_commands(graph, [e.event for e in later])
                events.commit(CONSUMER, last)
                if applied:
                    out.print(f"and {applied} metadata commands written through the API")
                return
            ingester = make_ingester(graph, settings, None)
            with Progress(TextColumn("replaying"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=err, transient=True) as bar:
                task = bar.add_task("entries", total=total)
                done = replay(graph, events, ingester, report,
                              progress=lambda n: bar.advance(task, n))
            events.commit(CONSUMER, done.last_seq)
    except LineageError as e:
        raise fail(str(e)) from e
    out.print(f"replayed {report.read} events: {report.loaded} loaded, {report.duplicates} duplicates, "
              f"{len(report.rejected)} rejected; {done.commands} metadata commands written "
              f"through the API")


@app.command("dead-letters", rich_help_panel="Load and keep events")
def dead_letters_cmd(
    retry: Annotated[bool, typer.Option("--retry", help="Try to load each one again.")] = False,
    as_json: Annotated[bool, JSON] = False,
) -> None:
    """Events that passed validation but could not be loaded, with the reason; --retry them."""
    from ingest.log import open_log
    from ingest.worker import retry_dead_letters

    settings = get_settings()
    events = open_log(settings.log_path)
    if retry:
        ok, failed = question(lambda g: retry_dead_letters(g, events, settings.facet_max_bytes))
        out.print(f"retried: {ok} loaded, {failed} still failing")
        return
    letters = events.dead_letters()
    if as_json:
        dump([{"id": d.id, "seq": d.seq, "reason": d.reason, "failedAt": d.failed_at,
                "retries": d.retries, "event": d.event} for d in letters])
        return
    if not letters:
        out.print("no dead letters")
        return
    render.show_dead_letters(letters)


@app.command("export", rich_help_panel="Load and keep events")
def export_cmd(
    directory: Annotated[Path, typer.Argument(help="Where to write date=YYYY-MM-DD/ partitions")],
    fmt: Annotated[str, typer.Option("--format", help="Only parquet for now.")] = "parquet",
) -> None:
    """Write the event log as date-partitioned Parquet (for a data lake, or `ingest --engine spark`)."""
    from ingest.export import export_parquet
    from ingest.log import open_log

    if fmt != "parquet":
        raise fail(f"--format {fmt}: only parquet is supported", code=2)
    events = open_log(get_settings().log_path)
    files, rows, skipped = export_parquet(events, directory)
    out.print(f"wrote {rows} events to {files} Parquet files under {directory}"
              + (f"; {skipped} metadata commands written through the API are not events and "
                 "stay in the log only" if skipped else ""))
