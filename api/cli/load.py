"""Loading events from files: ``lineage ingest`` (Python, or Spark partitions for big archives)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from api.cli.app import app
from api.cli.common import err, fail, out, writing_graph
from graph.errors import LineageError
from graph.settings import Settings, get_settings

if TYPE_CHECKING:
    from graph.db import Graph
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
    """Load OpenLineage events from files into the graph, with a progress bar and a report."""
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
    try:
        with writing_graph(settings) as graph:
            ingester = make_ingester(graph, settings, batch_size)
            with Progress(TextColumn("ingesting files"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=err, transient=True) as bar:
                task = bar.add_task("files", total=len(files))
                for f in files:  # one file in memory at a time
                    ingester.ingest(read_file(f), report)
                    bar.advance(task)
    except LineageError as e:
        raise fail(str(e)) from e
    out.print(f"{len(files)} files, {report.read} events: [green]{report.loaded} loaded[/], "
              f"{report.duplicates} duplicates, [red]{len(report.rejected)} rejected[/]")
    for rejection in report.rejected[:show_rejected]:
        out.print(f"  rejected {rejection.where}: {'; '.join(rejection.reasons)}",
                  highlight=False)
    if len(report.rejected) > show_rejected:
        out.print(f"  … and {len(report.rejected) - show_rejected} more")
    if report.rejected and not report.loaded and not report.duplicates:
        raise typer.Exit(1)


def spark_ingest_files(settings: Settings, paths: list[str], master: str, show_rejected: int,
                  conf: dict[str, str] | None = None) -> None:
    try:
        from ingest.spark_ingest import spark_ingest
    except ImportError as e:
        raise fail(f"--engine spark needs PySpark: pip install -e '.[spark]' ({e})", code=2) from e
    started = time.perf_counter()
    try:
        with writing_graph(settings):  # start the local Neo4j if needed, apply the schema
            pass
        with err.status("loading with Spark…"):
            report = spark_ingest(settings, paths, master, conf=conf)
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


def make_ingester(graph: Graph, settings: Settings, batch_size: int | None) -> Ingester:
    from ingest.pipeline import Ingester, relax_gc

    relax_gc()
    return Ingester(graph, batch_size or settings.batch_size, settings.facet_max_bytes)
