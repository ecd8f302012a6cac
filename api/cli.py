"""The ``lineage`` command line."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from graph.errors import LineageError
from graph.settings import Settings, get_settings

app = typer.Typer(
    help="lineage-graph: an OpenLineage lineage store on Neo4j, with impact analysis.\n\n"
    "Start here: `lineage ingest FILES` loads OpenLineage events (starting a local Neo4j the "
    "first time), then open the Neo4j Browser URL that `lineage neo4j status` prints.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
neo4j_app = typer.Typer(help="Run the local Neo4j server: start, stop, status.",
                        no_args_is_help=True)
app.add_typer(neo4j_app, name="neo4j")

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def _fail(message: str, code: int = 1) -> typer.Exit:
    err.print(f"[bold red]error:[/] {message}", highlight=False)
    return typer.Exit(code)


def _server(settings: Settings):  # type: ignore[no-untyped-def]
    from graph.local_server import LocalServer

    return LocalServer(settings)


@neo4j_app.command("start")
def neo4j_start() -> None:
    """Provision (first time) and start the local Neo4j; print how to connect."""
    settings = get_settings()
    if not settings.uses_local_server:
        raise _fail(f"NEO4J_URI is set ({settings.neo4j_uri}): that server is not ours to start")
    server = _server(settings)
    try:
        with err.status("starting Neo4j (the first start assembles it with Maven)…"):
            status, started = server.start()
    except LineageError as e:
        raise _fail(str(e)) from e
    out.print("Neo4j started." if started else "Neo4j is already running; nothing to do.")
    _print_status(status)


@neo4j_app.command("stop")
def neo4j_stop() -> None:
    """Stop the local Neo4j cleanly."""
    settings = get_settings()
    try:
        stopped = _server(settings).stop()
    except LineageError as e:
        raise _fail(str(e)) from e
    out.print("Neo4j stopped." if stopped else "Neo4j was not running.")


@neo4j_app.command("status")
def neo4j_status(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show whether Neo4j runs, its Bolt URI, Browser URL and login. Exit 1 if not running."""
    from graph.local_server import external_status

    settings = get_settings()
    status = (_server(settings).status() if settings.uses_local_server
              else external_status(settings))
    if as_json:
        print(status.to_json())
    else:
        _print_status(status)
    if status.state not in ("running", "external"):
        raise typer.Exit(1)


def _print_status(status) -> None:  # type: ignore[no-untyped-def]
    table = Table(show_header=False, box=None)
    table.add_row("state", status.state)
    table.add_row("bolt", status.bolt_uri)
    table.add_row("browser", status.browser_url)
    table.add_row("user", status.user)
    if status.password_file:
        table.add_row("password", f"in {status.password_file}")
    table.add_row("detail", status.detail)
    out.print(table)


@app.command("ingest")
def ingest_cmd(
    paths: Annotated[list[Path], typer.Argument(
        help="Files or folders of OpenLineage events: one JSON object, a JSON array, or NDJSON "
             "per file (*.json, *.ndjson, *.jsonl in folders).", exists=True)],
    batch_size: Annotated[int | None, typer.Option(help="Events per Neo4j transaction.")] = None,
    show_rejected: Annotated[int, typer.Option(help="How many rejections to list.")] = 20,
) -> None:
    """Load OpenLineage events from files into the graph, with a progress bar and a report."""
    from ingest.pipeline import IngestReport
    from ingest.read import iter_paths, read_file

    settings = get_settings()
    files = list(iter_paths(paths))
    report = IngestReport()
    try:
        with _open_graph(settings) as graph:
            ingester = _ingester(graph, settings, batch_size)
            with Progress(TextColumn("ingesting files"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=err, transient=True) as bar:
                task = bar.add_task("files", total=len(files))
                for f in files:  # one file in memory at a time
                    ingester.ingest(read_file(f), report)
                    bar.advance(task)
    except LineageError as e:
        raise _fail(str(e)) from e
    out.print(f"{len(files)} files, {report.read} events: [green]{report.loaded} loaded[/], "
              f"{report.duplicates} duplicates, [red]{len(report.rejected)} rejected[/]")
    for rejection in report.rejected[:show_rejected]:
        out.print(f"  rejected {rejection.where}: {'; '.join(rejection.reasons)}",
                  highlight=False)
    if len(report.rejected) > show_rejected:
        out.print(f"  … and {len(report.rejected) - show_rejected} more")
    if report.rejected and not report.loaded and not report.duplicates:
        raise typer.Exit(1)


def _ingester(graph, settings: Settings, batch_size: int | None):  # type: ignore[no-untyped-def]
    from ingest.pipeline import Ingester

    return Ingester(graph, batch_size or settings.batch_size, settings.facet_max_bytes)


class _open_graph:
    """Connect (starting the local server if it is the default and not running), apply schema."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def __enter__(self):  # type: ignore[no-untyped-def]
        from graph.db import Graph, connect
        from graph.schema import apply_schema

        if self.settings.uses_local_server:
            server = _server(self.settings)
            if server.status().state != "running":
                with err.status("starting the local Neo4j (first start assembles it)…"):
                    server.start()
                err.print(f"started the local Neo4j: Browser at {server.http_url}/browser/")
        self.graph = Graph(connect(self.settings), timeout=self.settings.query_timeout)
        apply_schema(self.graph)
        return self.graph

    def __exit__(self, *exc: object) -> None:
        self.graph.close()


impact_app = typer.Typer(help="Blast radius: what derives from a dataset or a column.",
                         no_args_is_help=True)
app.add_typer(impact_app, name="impact")

_DEPTH = typer.Option(help="Maximum DERIVED_FROM hops (default 20, at most 50).")
_AS_OF = typer.Option("--as-of", help="Only lineage first seen at or before this ISO time.")
_JSON = typer.Option("--json", help="Machine-readable output.")


@impact_app.command("dataset")
def impact_dataset(
    namespace: Annotated[str, typer.Argument(help="Dataset namespace, e.g. postgres://db:5432")],
    name: Annotated[str, typer.Argument(help="Dataset name, e.g. public.orders")],
    depth: Annotated[int | None, _DEPTH] = None,
    as_of: Annotated[str | None, _AS_OF] = None,
    as_json: Annotated[bool, _JSON] = False,
) -> None:
    """Every dataset derived from a dataset, and every job that reads them."""
    from impact.blast_radius import dataset_blast_radius

    _show_impact(lambda g, t: dataset_blast_radius(g, namespace, name, depth, t), as_of, as_json)


@impact_app.command("column")
def impact_column(
    namespace: Annotated[str, typer.Argument(help="Namespace of the column's dataset")],
    dataset: Annotated[str, typer.Argument(help="Name of the column's dataset")],
    column: Annotated[str, typer.Argument(help="Column name")],
    depth: Annotated[int | None, _DEPTH] = None,
    as_of: Annotated[str | None, _AS_OF] = None,
    as_json: Annotated[bool, _JSON] = False,
) -> None:
    """Every column derived from a column, with the transformation of each step."""
    from impact.blast_radius import column_blast_radius

    _show_impact(lambda g, t: column_blast_radius(g, namespace, dataset, column, depth, t),
                 as_of, as_json)


def _show_impact(ask, as_of: str | None, as_json: bool) -> None:  # type: ignore[no-untyped-def]
    import dataclasses
    import json

    from ingest.times import parse_time

    try:
        when = parse_time(as_of) if as_of else None
    except ValueError as e:
        raise _fail(f"--as-of: {e}", code=2) from e
    settings = get_settings()
    try:
        with _open_graph(settings) as graph:
            answer = ask(graph, when)
    except LineageError as e:
        raise _fail(str(e)) from e
    if as_json:
        print(json.dumps(dataclasses.asdict(answer), default=str, indent=2))
        return
    table = Table(title=f"downstream of {answer.source} (depth {answer.depth})")
    for col in ("kind", "name", "distance", "why", "last seen", "owners"):
        table.add_column(col)
    for i in answer.impacted:
        table.add_row(i.kind, i.name, str(i.distance), i.why,
                      f"{i.last_seen:%Y-%m-%d %H:%M}" if i.last_seen else "",
                      ", ".join(i.owners))
    out.print(table)
    out.print("by kind: " + ", ".join(f"{k} {v}" for k, v in answer.summary["kind"].items())
              if answer.impacted else "nothing derives from it")


def main() -> None:
    """Entry point of the ``lineage`` console script."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        app()
    except LineageError as e:
        err.print(f"[bold red]error:[/] {e}")
        sys.exit(1)


if __name__ == "__main__":
    main()
