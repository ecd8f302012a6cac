"""Loading events from files: ``lineage ingest`` (Python, or Spark partitions for big archives);
declaring two names of one table: ``lineage alias``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from api.cli.app import app
from api.cli.common import Format, err, fail, get_settings, out, writing_graph
from graph.errors import LineageError

if TYPE_CHECKING:
    from graph.db import Graph
    from graph.settings import Settings
    from ingest.log.protocol import EventLog
    from ingest.pipeline import Ingester

@app.command("ingest", rich_help_panel="Load and keep events")
def ingest_cmd(
    paths: Annotated[list[Path], typer.Argument(
        help="Files or folders of OpenLineage events (one JSON object, a JSON array, or NDJSON "
             "per file; *.json, *.ndjson, *.jsonl in folders); with --engine spark also Parquet "
             "from `lineage export`, and any Hadoop file system URI.")],
    batch_size: Annotated[int | None, typer.Option(help="Events per Neo4j transaction.")] = None,
    show_rejected: Annotated[int, typer.Option(help="How many rejections to list.")] = 20,
    engine: Annotated[str, typer.Option(help="python (default) or spark: PySpark partitions, each "
                                             "with its own Neo4j driver, for big archives and "
                                             "Parquet from `lineage export`.")] = "python",
    master: Annotated[str, typer.Option(help="Spark master for --engine spark.")] = "local[*]",
    spark_conf: Annotated[list[str] | None, typer.Option(
        "--spark-conf", help="KEY=VALUE Spark setting for --engine spark (repeatable), e.g. "
                             "spark.submit.pyFiles=dist/lineage_graph.whl on a cluster.")] = None,
) -> None:
    """Load OpenLineage events from files into the graph, with a progress bar and a report.

    Each valid event is also appended to the event log (scrubbed of secrets), so that `lineage
    replay` rebuilds what was loaded and Marquez's event listing shows it. With --engine spark
    the events are not copied into the log; it records which paths were loaded, and `lineage
    replay --wipe` refuses to drop them unknowingly."""
    from ingest.log.sqlite import open_event_log
    from ingest.pipeline import IngestReport
    from ingest.read import iter_paths, read_file

    settings = get_settings()
    if engine == "spark":
        conf = {}
        for item in spark_conf or []:
            key, sep, value = item.partition("=")
            if not sep or not key:
                raise fail(f"--spark-conf {item!r}: expected KEY=VALUE", code=2)
            conf[key] = value
        spark_ingest_files(settings, [str(p) for p in paths], master, show_rejected, conf)
        return
    if engine != "python":
        raise fail("--engine must be python or spark", code=2)
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise fail(f"no such file or folder: {', '.join(missing)}", code=2)
    files = list(iter_paths(paths))
    report = IngestReport()
    journal = open_event_log(settings)
    try:
        with writing_graph(settings) as graph:
            ingester = make_ingester(graph, settings, batch_size, journal)
            with Progress(TextColumn("ingesting files"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=err, transient=True) as bar:
                task = bar.add_task("files", total=len(files))
                for f in files:  # one file in memory at a time
                    ingester.ingest(read_file(f), report)
                    bar.advance(task)
    except LineageError as e:
        raise fail(str(e)) from e
    finally:
        journal.close()
    by_worker = f" ({report.by_worker} by the running worker)" if report.by_worker else ""
    out.print(f"{len(files)} files, {report.read} events: [green]{report.loaded + report.by_worker} "
              f"loaded[/]{by_worker}, {report.duplicates} duplicates, "
              f"[red]{len(report.rejected)} rejected[/]")
    for rejection in report.rejected[:show_rejected]:
        out.print(f"  rejected {rejection.where}: {'; '.join(rejection.reasons)}",
                  highlight=False)
    if len(report.rejected) > show_rejected:
        out.print(f"  … and {len(report.rejected) - show_rejected} more")
    if report.rejected and not (report.loaded or report.by_worker or report.duplicates):
        raise typer.Exit(1)


def spark_ingest_files(settings: Settings, paths: list[str], master: str, show_rejected: int,
                       conf: dict[str, str] | None = None, record: bool = True) -> None:
    """Load ``paths`` with Spark; ``record``: note the load in the event log, whose replay cannot
    rebuild it (False when the paths are the log's own export)."""
    try:
        from ingest.spark.load import spark_ingest
    except ImportError as e:
        raise fail(f"--engine spark needs PySpark: pip install -e '.[spark]' ({e})", code=2) from e
    from ingest.log.sqlite import open_event_log

    started = time.perf_counter()
    try:
        with writing_graph(settings):  # start the local Neo4j if needed, apply the schema
            pass
        with err.status("loading with Spark…"):
            report = spark_ingest(settings, paths, master, conf=conf)
        if record and report.loaded:
            events = open_event_log(settings)
            try:
                events.record_bulk_load(" ".join(paths), report.loaded)
            finally:
                events.close()
    except LineageError as e:
        raise fail(str(e)) from e
    took = time.perf_counter() - started
    out.print(f"spark: {report.partitions} partitions, {report.read} events in {took:.1f} s "
              f"({report.read / max(took, 1e-9):.0f} events/s): [green]{report.loaded} loaded[/], "
              f"{report.duplicates} duplicates, [red]{len(report.rejected)} rejected[/]")
    for where, reasons in report.rejected[:show_rejected]:
        out.print(f"  rejected {where}: {reasons}", highlight=False)
    if report.rejected and not report.loaded and not report.duplicates:
        raise typer.Exit(1)


def make_ingester(graph: Graph, settings: Settings, batch_size: int | None,
                  journal: EventLog | None = None) -> Ingester:
    """The ingester of the commands; ``journal``: the event log its events are appended to."""
    from ingest.pipeline import Ingester, relax_gc

    relax_gc()
    return Ingester(graph, batch_size or settings.batch_size, settings.facet_max_bytes, journal,
                    handoff_wait=settings.command_wait)


@app.command("alias", rich_help_panel="Load and keep events")
def alias_cmd(
    names: Annotated[list[str] | None, typer.Argument(
        metavar="NAMESPACE NAME = NAMESPACE NAME",
        help="The canonical name (the one its writer reports), '=', and the other name, e.g. "
             "file /lake/raw/users = duckdb:///data/shop.duckdb shop.raw.users")] = None,
    list_: Annotated[bool, typer.Option("--list", help="List every table's names: producers' "
                                                       "symlinks and declared aliases.")] = False,
    fmt: Format = "text",
) -> None:
    """Declare two names of one table that no producer links (a Spark file path and the DuckDB
    view dbt reads it through): every question then answers for both, as for a symlink.

    The alias is an OpenLineage DatasetEvent with a symlinks facet (identifier type ALIAS): it is
    loaded now, and appended to the event log so that `lineage replay` keeps it. A producer that
    can send such a facet itself needs no alias. Aliases only add: a table's names stay linked.
    """
    from api.cli import render
    from api.cli.common import question
    from ingest.aliases import alias_event
    from ingest.log.sqlite import open_event_log
    from ingest.pipeline import IngestReport
    from ingest.read import RawItem

    settings = get_settings()
    if list_:
        if names:
            raise fail("--list takes no names", code=2)
        found = question(lambda g: g.read("lookup/aliases", declaredOnly=False))
        render.rows([{"name": f"{r['namespace']}:{r['name']}",
                      "also named": f"{r['aliasNamespace']}:{r['aliasName']}",
                      "by": "lineage alias" if r["declared"] else f"symlinks facet ({r['type']})",
                      "since": render.stamp(r["firstSeen"])} for r in found],
                    ["name", "also named", "by", "since"], fmt, title="aliases")
        return
    if not names or len(names) != 5 or names[2] != "=":
        raise fail("expected NAMESPACE NAME = NAMESPACE NAME (5 words, '=' in the middle), or "
                   "--list; got " + (" ".join(names) if names else "nothing"), code=2)
    try:
        event = alias_event(names[0], names[1], names[3], names[4])
    except ValueError as e:
        raise fail(str(e), code=2) from e
    report = IngestReport()
    journal = open_event_log(settings)
    try:
        with writing_graph(settings) as graph:
            make_ingester(graph, settings, None, journal).ingest(
                [RawItem("lineage alias", obj=event)], report)
        if report.rejected:
            raise fail("; ".join(report.rejected[0].reasons), code=2)
    except LineageError as e:
        raise fail(str(e)) from e
    finally:
        journal.close()
    out.print(f"{names[0]}:{names[1]} is also named {names[3]}:{names[4]}: every question answers "
              "for both")
