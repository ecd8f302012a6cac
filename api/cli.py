"""The ``lineage`` command line."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from graph.errors import LineageError
from graph.private import PRIVATE_UMASK
from graph.settings import Settings, get_settings

if TYPE_CHECKING:
    from graph.db import Graph

T = TypeVar("T")

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
                raise _fail(f"--spark-conf {item!r}: expected KEY=VALUE", code=2)
            conf[key] = value
        _spark_ingest(settings, [str(p) for p in paths], master, show_rejected, conf)
        return
    if engine != "python":
        raise _fail("--engine must be python or spark", code=2)
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise _fail(f"no such file or folder: {', '.join(missing)}", code=2)
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


def _spark_ingest(settings: Settings, paths: list[str], master: str, show_rejected: int,
                  conf: dict[str, str] | None = None) -> None:
    import time

    try:
        from ingest.spark_ingest import spark_ingest
    except ImportError as e:
        raise _fail(f"--engine spark needs PySpark: pip install -e '.[spark]' ({e})", code=2) from e
    started = time.perf_counter()
    try:
        with _open_graph(settings):  # start the local Neo4j if needed, apply the schema
            pass
        with err.status("loading with Spark…"):
            report = spark_ingest(settings, paths, master, conf=conf)
    except LineageError as e:
        raise _fail(str(e)) from e
    took = time.perf_counter() - started
    out.print(f"spark: {report.partitions} partitions, {report.read} events in {took:.1f} s "
              f"({report.read / max(took, 1e-9):.0f} events/s): [green]{report.loaded} loaded[/], "
              f"{report.duplicates} duplicates, [red]{len(report.rejected)} rejected[/]")
    for where, reasons in report.rejected[:show_rejected]:
        out.print(f"  rejected {where}: {reasons}", highlight=False)
    if report.rejected and not report.loaded and not report.duplicates:
        raise typer.Exit(1)


def _ingester(graph, settings: Settings, batch_size: int | None):  # type: ignore[no-untyped-def]
    from ingest.pipeline import Ingester, relax_gc

    relax_gc()
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


impact_app = typer.Typer(help="Blast radius: what derives from a dataset, a column or a job.",
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


@impact_app.command("job")
def impact_job(
    namespace: Annotated[str, typer.Argument(help="Job namespace")],
    name: Annotated[str, typer.Argument(help="Job name")],
    depth: Annotated[int | None, _DEPTH] = None,
    as_of: Annotated[str | None, _AS_OF] = None,
    as_json: Annotated[bool, _JSON] = False,
) -> None:
    """What a job feeds: its outputs, everything derived from them, and the jobs reading them."""
    from impact.blast_radius import job_blast_radius

    _show_impact(lambda g, t: job_blast_radius(g, namespace, name, depth, t), as_of, as_json)


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


upstream_app = typer.Typer(help="Upstream lineage: what a dataset or a column derives from.",
                           no_args_is_help=True)
app.add_typer(upstream_app, name="upstream")


@upstream_app.command("dataset")
def upstream_dataset_cmd(
    namespace: Annotated[str, typer.Argument(help="Dataset namespace")],
    name: Annotated[str, typer.Argument(help="Dataset name")],
    depth: Annotated[int | None, _DEPTH] = None,
    as_of: Annotated[str | None, _AS_OF] = None,
    as_json: Annotated[bool, _JSON] = False,
) -> None:
    """Every dataset a dataset derives from, nearest first."""
    from impact.upstream import dataset_upstream

    _show_impact(lambda g, t: dataset_upstream(g, namespace, name, depth, t), as_of, as_json)


@upstream_app.command("column")
def upstream_column_cmd(
    namespace: Annotated[str, typer.Argument(help="Namespace of the column's dataset")],
    dataset: Annotated[str, typer.Argument(help="Name of the column's dataset")],
    column: Annotated[str, typer.Argument(help="Column name")],
    depth: Annotated[int | None, _DEPTH] = None,
    as_of: Annotated[str | None, _AS_OF] = None,
    as_json: Annotated[bool, _JSON] = False,
) -> None:
    """Every column whose data a column comes from, with each step's transformation."""
    from impact.upstream import column_upstream

    _show_impact(lambda g, t: column_upstream(g, namespace, dataset, column, depth, t), as_of, as_json)


def _show_impact(ask, as_of: str | None, as_json: bool) -> None:  # type: ignore[no-untyped-def]
    when = _when(as_of)
    answer = _ask(lambda graph: ask(graph, when))
    if as_json:
        _dump(answer)
        return
    table = Table(title=f"{answer.direction} of {answer.source} (depth {answer.depth})")
    for col in ("kind", "name", "distance", "why", "last seen", "owners", "beyond"):
        table.add_column(col)
    for i in answer.impacted:
        table.add_row(i.kind, i.name, str(i.distance), i.why,
                      f"{i.last_seen:%Y-%m-%d %H:%M}" if i.last_seen else "",
                      ", ".join(i.owners), "" if i.beyond is None else str(i.beyond))
    out.print(table)
    out.print("by kind: " + ", ".join(f"{k} {v}" for k, v in answer.summary["kind"].items())
              if answer.impacted else f"nothing {answer.direction} of it")
    if any(i.beyond for i in answer.impacted):
        out.print("beyond: how many impacted datasets lie downstream of that one", style="dim")


show_app = typer.Typer(help="Look at one dataset or job: neighbours, freshness, last runs.",
                       no_args_is_help=True)
app.add_typer(show_app, name="show")
root_app = typer.Typer(help="Root cause: which upstream run, input or schema change broke it.",
                       no_args_is_help=True)
app.add_typer(root_app, name="root-cause")


def _when(as_of: str | None) -> datetime | None:
    from ingest.times import parse_time

    try:
        return parse_time(as_of) if as_of else None
    except ValueError as e:
        raise _fail(f"--as-of: {e}", code=2) from e


def _ask(ask: Callable[[Graph], T]) -> T:
    try:
        with _open_graph(get_settings()) as graph:
            return ask(graph)
    except LineageError as e:
        raise _fail(str(e)) from e


def _dump(value) -> None:  # type: ignore[no-untyped-def]
    import dataclasses
    import json

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    print(json.dumps(value, default=_plain, indent=2))


def _plain(value):  # type: ignore[no-untyped-def]
    if hasattr(value, "to_native"):
        value = value.to_native()
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _t(value) -> str:  # type: ignore[no-untyped-def]
    if value is None:
        return ""
    value = value.to_native() if hasattr(value, "to_native") else value
    return f"{value:%Y-%m-%d %H:%M}"


@show_app.command("dataset")
def show_dataset(
    namespace: Annotated[str, typer.Argument(help="Dataset namespace")],
    name: Annotated[str, typer.Argument(help="Dataset name")],
    as_json: Annotated[bool, _JSON] = False,
) -> None:
    """Columns, writers and readers, upstream and downstream datasets, last run, freshness."""
    import dataclasses

    from graph.errors import NotFound
    from impact.freshness import freshness

    def ask(graph):  # type: ignore[no-untyped-def]
        rows = graph.read("lookup/dataset", namespace=namespace, name=name)
        if not rows:
            raise NotFound("dataset", f"{namespace}:{name}")
        return rows[0], freshness(graph, namespace, name)

    row, fresh = _ask(ask)
    if as_json:
        _dump({**row, "props": {k: v for k, v in row["props"].items() if k != "events"},
               "freshness": {**dataclasses.asdict(fresh), "verdict": fresh.verdict}})
        return
    out.print(f"[bold]{namespace}:{name}[/]", highlight=False)
    p = row["props"]
    info = Table(show_header=False, box=None)
    for label, value in (("description", p.get("description")), ("owners", ", ".join(p.get("owners") or [])),
                         ("written by", ", ".join(row["writers"])), ("read by", ", ".join(row["readers"])),
                         ("upstream", ", ".join(u["dataset"] for u in row["upstream"])),
                         ("downstream", ", ".join(d["dataset"] for d in row["downstream"])),
                         ("freshness", fresh.verdict)):
        if value:
            info.add_row(label, value)
    run = row["lastRun"]
    if run:
        took = (run["end"].to_native() - run["start"].to_native()) if run["end"] and run["start"] else None
        info.add_row("last run", f"{run['state']} {run['job']} started {_t(run['start'])}, ended "
                     f"{_t(run['end']) or '-'}" + (f" ({took})" if took else "")
                     + (f": {run['errorMessage']}" if run["errorMessage"] else ""))
    out.print(info)
    cols = Table(title="columns")
    for c in ("name", "type", "description"):
        cols.add_column(c)
    for c in row["columns"]:
        cols.add_row(c["name"], c["type"] or "", c["description"] or "")
    out.print(cols)


@show_app.command("job")
def show_job(
    namespace: Annotated[str, typer.Argument(help="Job namespace")],
    name: Annotated[str, typer.Argument(help="Job name")],
    runs: Annotated[int, typer.Option(help="How many recent runs to list.")] = 10,
    as_json: Annotated[bool, _JSON] = False,
) -> None:
    """What a job reads and writes, its parent job, and its latest runs with status and duration."""
    from graph.errors import NotFound

    def ask(graph):  # type: ignore[no-untyped-def]
        rows = graph.read("lookup/job", namespace=namespace, name=name, runs=runs)
        if not rows:
            raise NotFound("job", f"{namespace}:{name}")
        return rows[0]

    row = _ask(ask)
    if as_json:
        _dump(row)
        return
    out.print(f"[bold]job {namespace}:{name}[/]", highlight=False)
    info = Table(show_header=False, box=None)
    info.add_row("reads", ", ".join(row["reads"]) or "-")
    info.add_row("writes", ", ".join(row["writes"]) or "-")
    if row["parents"]:
        info.add_row("parent", ", ".join(row["parents"]))
    out.print(info)
    table = Table(title="latest runs")
    for c in ("run", "state", "start", "end", "duration", "error"):
        table.add_column(c)
    for r in row["runs"]:
        took = (r["end"].to_native() - r["start"].to_native()) if r["end"] and r["start"] else ""
        table.add_row(r["runId"], r["state"] or "", _t(r["start"]), _t(r["end"]), str(took),
                      r["errorMessage"] or "")
    out.print(table)


@root_app.command("dataset")
def root_cause_dataset_cmd(
    namespace: Annotated[str, typer.Argument(help="Namespace of the wrong dataset")],
    name: Annotated[str, typer.Argument(help="Name of the wrong dataset, e.g. a dashboard's table")],
    depth: Annotated[int | None, _DEPTH] = None,
    as_of: Annotated[str | None, _AS_OF] = None,
    as_json: Annotated[bool, _JSON] = False,
) -> None:
    """Rank upstream causes: failed runs, failed assertions, stale inputs, schema changes."""
    from impact.root_cause import root_cause_dataset

    when = _when(as_of)
    _show_root_cause(_ask(lambda g: root_cause_dataset(g, namespace, name, depth, when)), as_json)


@root_app.command("run")
def root_cause_run_cmd(
    run_id: Annotated[str, typer.Argument(help="The run's UUID")],
    depth: Annotated[int | None, _DEPTH] = None,
    as_of: Annotated[str | None, _AS_OF] = None,
    as_json: Annotated[bool, _JSON] = False,
) -> None:
    """Rank causes for a failed or wrong run: the run itself, then upstream of what it read."""
    from impact.root_cause import root_cause_run

    when = _when(as_of)
    _show_root_cause(_ask(lambda g: root_cause_run(g, run_id, depth, when)), as_json)


def _show_root_cause(answer, as_json: bool) -> None:  # type: ignore[no-untyped-def]
    if as_json:
        _dump(answer)
        return
    table = Table(title=f"root-cause candidates for {answer.target} "
                        f"(reference time {answer.reference_time:%Y-%m-%d %H:%M})")
    for c in ("#", "score", "kind", "distance", "what", "path"):
        table.add_column(c)
    for i, c in enumerate(answer.candidates, 1):
        table.add_row(str(i), str(c.score), c.kind, str(c.distance), c.summary, " <- ".join(c.path))
    out.print(table)
    if answer.choke_points:
        out.print("every upstream path passes through: " + ", ".join(answer.choke_points),
                  highlight=False)
    if not answer.candidates:
        out.print(f"no candidate found among {answer.examined} datasets examined upstream")


@app.command("where")
def where_cmd(
    namespace: Annotated[str, typer.Argument(help="Namespace of the column's dataset")],
    dataset: Annotated[str, typer.Argument(help="Dataset of the column, e.g. public.users")],
    column: Annotated[str, typer.Argument(help="The column, e.g. email")],
    depth: Annotated[int | None, _DEPTH] = None,
    as_of: Annotated[str | None, _AS_OF] = None,
    as_json: Annotated[bool, _JSON] = False,
    csv_out: Annotated[bool, typer.Option("--csv", help="CSV, as evidence for a GDPR request.")] = False,
) -> None:
    """GDPR: where the data of a column ends up: raw, transformed, masked, aggregated or influence."""
    import dataclasses

    from impact.gdpr import where_column_goes

    when = _when(as_of)
    report = _ask(lambda g: where_column_goes(g, namespace, dataset, column, depth, when))
    if csv_out:
        sys.stdout.write(report.to_csv())
        return
    if as_json:
        _dump({**dataclasses.asdict(report), "counts": report.counts()})
        return
    table = Table(title=f"where the data of {report.source} goes (depth {report.depth})")
    for c in ("label", "column", "distance", "via jobs", "last flowed"):
        table.add_column(c)
    style = {"raw": "bold red", "transformed": "yellow", "masked": "green"}
    for r in report.reaches:
        table.add_row(f"[{style.get(r.label, 'dim')}]{r.label}[/]", f"{r.dataset}.{r.column}",
                      str(r.distance), ", ".join(r.jobs), _t(r.last_flowed))
    out.print(table)
    counts = report.counts()
    out.print(", ".join(f"{v} {k}" for k, v in counts.items() if v) or "its data goes nowhere else")


@app.command("check")
def check_cmd(
    change: Annotated[Path, typer.Argument(help="The proposed change: a change file (YAML or JSON with "
                                                "`changes:`), an OpenLineage DatasetEvent/JobEvent, a "
                                                "column list {namespace, dataset, columns}, or "
                                                "{job, namespace, sql} for a job's new SQL. '-' reads stdin.",
                                           allow_dash=True)],
    fail_on: Annotated[str, typer.Option(help="Exit 1 when the verdict is at least: breaking, risky, "
                                              "or never.")] = "breaking",
    fmt: Annotated[str, typer.Option("--format", help="text, markdown (for a PR comment) or json.")] = "text",
    as_of: Annotated[str | None, _AS_OF] = None,
    depth: Annotated[int | None, _DEPTH] = None,
    stale_days: Annotated[int, typer.Option(min=0, max=36_500, help="A consumer whose job has not run "
                                                                   "for this many days is stale.")] = 30,
    exclude_stale: Annotated[bool, typer.Option(help="Leave stale consumers out of the verdict.")] = False,
) -> None:
    """Pre-deploy check: would this change break a real downstream consumer? Exit 0 pass, 1 fail,
    2 usage or input error (unknown dataset or column, malformed change)."""
    from impact.blast_radius import clamp_depth
    from impact.check import CheckInputError, check, parse_change, to_json, to_markdown, to_text

    if fail_on not in ("breaking", "risky", "never"):
        raise _fail("--fail-on must be breaking, risky or never", code=2)
    if fmt not in ("text", "markdown", "json"):
        raise _fail("--format must be text, markdown or json", code=2)
    when = _when(as_of)
    try:
        text = sys.stdin.read() if str(change) == "-" else change.read_text(encoding="utf-8")
    except OSError as e:
        raise _fail(f"cannot read {change}: {e}", code=2) from e
    doc = _load_change(text, str(change))

    def ask(graph: Graph) -> Any:
        return check(graph, parse_change(doc, graph), depth=clamp_depth(depth), as_of=when,
                     stale_days=stale_days, exclude_stale=exclude_stale)

    try:
        with _open_graph(get_settings()) as graph:
            report = ask(graph)
    except CheckInputError as e:
        raise _fail(str(e), code=2) from e
    except LineageError as e:
        raise _fail(str(e)) from e
    sys.stdout.write({"text": to_text, "markdown": to_markdown, "json": to_json}[fmt](report))
    if report.fails(fail_on):
        raise typer.Exit(1)


def _load_change(text: str, where: str):  # type: ignore[no-untyped-def]
    import json

    import yaml

    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise _fail(f"{where}: neither JSON nor YAML: {e}", code=2) from e


@app.command("serve")
def serve_cmd(
    host: Annotated[str | None, typer.Option(help="Address to bind (default 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default 5000).")] = None,
) -> None:
    """Serve the HTTP API (docs at /docs). Without LINEAGE_API_TOKENS, binds loopback only."""
    import gc

    import uvicorn

    from api.app import create_app
    from api.auth import TokenConfigError, is_loopback, parse_tokens
    from api.http_server import limited
    from ingest.pipeline import relax_gc

    settings = get_settings()
    host = host or settings.api_host
    port = port or settings.api_port
    try:
        tokens = parse_tokens(settings.api_tokens)
    except TokenConfigError as e:
        raise _fail(str(e), code=2) from e
    if not tokens.enabled and not is_loopback(host):
        raise _fail(f"refusing to bind {host}: no LINEAGE_API_TOKENS are set, so the API would be "
                    "open to the network. Set tokens (TOKEN:read,TOKEN:write) or bind 127.0.0.1.",
                    code=2)
    with _open_graph(settings):  # start the local Neo4j if needed, apply the schema
        pass
    application = create_app(settings)
    # what is alive now lives as long as the process: keep it out of the collector's passes, and
    # collect rarely (one-event requests: 483-510 us of CPU each instead of 513-555)
    gc.collect()
    gc.freeze()
    relax_gc()
    err.print(f"lineage-graph API on http://{host}:{port} (docs at /docs)")
    uvicorn.run(application, host=host, port=port, log_level="warning",
                http=limited(settings.api_head_bytes, settings.api_max_headers,
                             settings.api_idle_seconds))


@app.command("worker")
def worker_cmd(
    once: Annotated[bool, typer.Option("--once", help="Load what the log holds now, then exit.")] = False,
) -> None:
    """Consume the event log into Neo4j (what `lineage up` runs). Stops cleanly on Ctrl-C/SIGTERM."""
    import signal
    import threading

    from ingest.log import SQLiteLog
    from ingest.pipeline import relax_gc
    from ingest.worker import Worker

    relax_gc()
    settings = get_settings()
    events = SQLiteLog(settings.log_path)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        with _open_graph(settings) as graph:
            worker = Worker(graph, events, settings.worker_batch,
                            facet_max_bytes=settings.facet_max_bytes,
                            batch_bytes=settings.worker_batch_bytes)

            def report(r) -> None:  # type: ignore[no-untyped-def]
                err.print(f"batch: {r.events} events, {r.loaded} loaded, {r.duplicates} duplicates, "
                          f"{r.dead} dead letters, {r.seconds:.2f} s; lag {worker.lag()}",
                          highlight=False)

            if once:
                while (r := worker.run_once()) is not None:
                    report(r)
                return
            err.print(f"worker: consuming {settings.log_path} (lag {worker.lag()} events)")
            with contextlib.suppress(KeyboardInterrupt):
                worker.run(stop, settings.worker_poll, report)
            err.print("worker: stopped")
    except LineageError as e:
        raise _fail(str(e)) from e


@app.command("replay")
def replay_cmd(
    wipe: Annotated[bool, typer.Option("--wipe", help="Empty the graph first (it must be empty "
                                                       "otherwise).")] = False,
    engine: Annotated[str, typer.Option(help="python, or spark (exports the log to Parquet and "
                                             "loads it in Spark partitions).")] = "python",
) -> None:
    """Rebuild the graph from the event log alone, from its first event."""
    import tempfile

    from ingest.export import export_parquet
    from ingest.log import SQLiteLog
    from ingest.pipeline import IngestReport
    from ingest.read import RawItem
    from ingest.worker import CONSUMER

    settings = get_settings()
    events = SQLiteLog(settings.log_path)
    total = events.count()
    report = IngestReport()
    if engine not in ("python", "spark"):
        raise _fail("--engine must be python or spark", code=2)
    try:
        with _open_graph(settings) as graph:
            with graph.driver.session() as session:
                nodes = session.run("MATCH (n) RETURN count(n) AS n").single(strict=True)["n"]
                if nodes and not wipe:
                    raise _fail(f"the graph holds {nodes} nodes: replay rebuilds an empty graph; "
                                "add --wipe to empty it first", code=2)
                if nodes:
                    session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS"
                                ).consume()
            if engine == "spark":
                last = events.last_seq()
                with tempfile.TemporaryDirectory() as tmp:
                    export_parquet(events, Path(tmp))
                    _spark_ingest(settings, [tmp], "local[*]", 20)
                events.commit(CONSUMER, last)
                return
            ingester = _ingester(graph, settings, None)
            with Progress(TextColumn("replaying"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=err, transient=True) as bar:
                task = bar.add_task("events", total=total)
                last = 0
                for chunk in _chunks(events.scan(), 5000):
                    ingester.ingest([RawItem(f"log#{e.seq}", obj=e.event) for e in chunk], report,
                                    progress=lambda n: bar.advance(task, n))
                    last = chunk[-1].seq
            events.commit(CONSUMER, last)
    except LineageError as e:
        raise _fail(str(e)) from e
    out.print(f"replayed {report.read} events: {report.loaded} loaded, {report.duplicates} duplicates, "
              f"{len(report.rejected)} rejected")


def _chunks(it, size: int):  # type: ignore[no-untyped-def]
    chunk = []
    for x in it:
        chunk.append(x)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


@app.command("dead-letters")
def dead_letters_cmd(
    retry: Annotated[bool, typer.Option("--retry", help="Try to load each one again.")] = False,
    as_json: Annotated[bool, _JSON] = False,
) -> None:
    """Events that passed validation but could not be loaded, with the reason; --retry them."""
    from ingest.log import SQLiteLog
    from ingest.worker import retry_dead_letters

    settings = get_settings()
    events = SQLiteLog(settings.log_path)
    if retry:
        ok, failed = _ask(lambda g: retry_dead_letters(g, events, settings.facet_max_bytes))
        out.print(f"retried: {ok} loaded, {failed} still failing")
        return
    letters = events.dead_letters()
    if as_json:
        _dump([{"id": d.id, "seq": d.seq, "reason": d.reason, "failedAt": d.failed_at,
                "retries": d.retries, "event": d.event} for d in letters])
        return
    if not letters:
        out.print("no dead letters")
        return
    table = Table(title="dead letters")
    for c in ("id", "log seq", "reason", "retries"):
        table.add_column(c)
    for d in letters:
        table.add_row(str(d.id), str(d.seq), d.reason, str(d.retries))
    out.print(table)


@app.command("export")
def export_cmd(
    directory: Annotated[Path, typer.Argument(help="Where to write date=YYYY-MM-DD/ partitions")],
    fmt: Annotated[str, typer.Option("--format", help="Only parquet for now.")] = "parquet",
) -> None:
    """Write the event log as date-partitioned Parquet (for a data lake, or `ingest --engine spark`)."""
    from ingest.export import export_parquet
    from ingest.log import SQLiteLog

    if fmt != "parquet":
        raise _fail(f"--format {fmt}: only parquet is supported", code=2)
    events = SQLiteLog(get_settings().log_path)
    files, rows = export_parquet(events, directory)
    out.print(f"wrote {rows} events to {files} Parquet files under {directory}")


@app.command("spark-conf")
def spark_conf_cmd(
    url: Annotated[str | None, typer.Option(help="lineage-graph's URL (default: this API).")] = None,
    namespace: Annotated[str, typer.Option(help="Namespace for your Spark jobs.")] = "spark",
    token: Annotated[str | None, typer.Option(help="A write-scoped API token, if needed.")] = None,
    out_file: Annotated[Path | None, typer.Option("--out", help="Write a properties file.")] = None,
) -> None:
    """The Spark settings that make any job report lineage here (fetching the listener jar once).

    Use them as `spark-submit --properties-file FILE job.py`, or pass them to SparkSession.builder
    (`ingest.spark_env.openlineage_conf` builds the same dictionary in Python)."""
    from ingest.spark_env import listener_jar, openlineage_conf, properties_text

    settings = get_settings()
    try:
        jar = listener_jar(settings)
    except LineageError as e:
        raise _fail(str(e)) from e
    text = properties_text(openlineage_conf(url or f"http://{settings.api_host}:{settings.api_port}",
                                            namespace, token, jar))
    if out_file:
        out_file.write_text(text)
        out.print(f"wrote {out_file}: spark-submit --properties-file {out_file} your_job.py")
    else:
        sys.stdout.write(text)


@app.command("demo")
def demo_cmd(
    fail: Annotated[bool, typer.Option("--fail", help="Run two nights; on the second the revenue job "
                                                      "reads a bad column and fails.")] = False,
    users: Annotated[int, typer.Option(help="Rows of raw users.")] = 2000,
    orders: Annotated[int, typer.Option(help="Rows of raw orders.")] = 8000,
) -> None:
    """Run the example PySpark pipeline with the OpenLineage listener pointed at lineage-graph
    (starting `lineage up` if needed), then print what to ask."""
    from api import processes
    from api.auth import parse_tokens
    from api.demo import NAMESPACE, demo

    settings = get_settings()
    url = f"http://{settings.api_host}:{settings.api_port}"
    if not processes.wait_http(f"{url}/health", timeout=1):
        err.print("lineage-graph is not up: starting it (`lineage up`)")
        up_cmd()
    # the listener needs a write-scoped token when the API requires tokens
    scopes = parse_tokens(settings.api_tokens).scopes
    token = next((t for t, scope in scopes.items() if scope == "write"), None)
    try:
        with err.status("running the PySpark pipeline (a JVM starts; about half a minute)…"):
            run = demo(settings, url, fail, users, orders, token)
    except LineageError as e:
        raise _fail(str(e)) from e
    wh = run.warehouse
    out.print(f"Spark ran for {run.spark_seconds:.0f} s and sent {run.events} OpenLineage events "
              f"({len(run.events_per_job)} jobs); " + (
                  f"all queryable {run.queryable_after:.1f} s after the job ended."
                  if run.queryable_after is not None else "the worker has not caught up yet "
                  "(`lineage status`)."))
    if run.failed_jobs:
        out.print(f"failed as asked: {', '.join(run.failed_jobs)}")
    out.print("\nTry:")
    out.print(f"  lineage impact dataset file {wh}/raw/users", highlight=False)
    out.print(f"  lineage where file {wh}/raw/users email", highlight=False)
    out.print(f"  lineage root-cause dataset file {wh}/dashboards/revenue", highlight=False)
    out.print(f"  lineage show dataset file {wh}/marts/revenue_by_country", highlight=False)
    out.print(f"\nNeo4j Browser: http://127.0.0.1:{settings.neo4j_http_port}/browser/ , then paste:",
              highlight=False)
    out.print(f"  MATCH p = (c:Column)-[:DERIVED_FROM*1..6]->(:Column {{dataset: '{wh}/raw/users', "
              "name: 'email'}) RETURN p", highlight=False)
    out.print(f"Jobs are in namespace '{NAMESPACE}'; datasets in namespace 'file'.")


@app.command("up")
def up_cmd() -> None:
    """Start Neo4j, the API and the worker (each its own process); print where they are."""
    from api import processes

    settings = get_settings()
    try:
        with _open_graph(settings):  # starts the local Neo4j if needed, applies the schema once
            pass
    except LineageError as e:
        raise _fail(str(e)) from e
    api_proc = processes.start(settings, "api")
    worker_proc = processes.start(settings, "worker")
    url = f"http://{settings.api_host}:{settings.api_port}"
    if not processes.wait_http(f"{url}/health"):
        raise _fail(f"the API did not answer at {url}; see {api_proc.log}")
    _print_up(settings)
    out.print(f"send OpenLineage events to {url}/api/v1/lineage; logs in {worker_proc.log.parent}")


@app.command("down")
def down_cmd() -> None:
    """Stop the worker, the API and the local Neo4j."""
    from api import processes

    settings = get_settings()
    for name in ("worker", "api"):
        out.print(f"{name}: {'stopped' if processes.stop(settings, name) else 'was not running'}")
    if settings.uses_local_server:
        out.print("neo4j: " + ("stopped" if _server(settings).stop() else "was not running"))


@app.command("status")
def status_cmd() -> None:
    """Neo4j, the API and the worker: running or not, where, and the worker's lag. Exit 1 if any is down."""
    if not _print_up(get_settings()):
        raise typer.Exit(1)


def _print_up(settings: Settings) -> bool:
    from api import processes
    from graph.local_server import external_status
    from ingest.log import SQLiteLog
    from ingest.worker import CONSUMER

    neo = _server(settings).status() if settings.uses_local_server else external_status(settings)
    table = Table(show_header=False, box=None)
    table.add_row("neo4j", neo.state, f"{neo.bolt_uri}  Browser {neo.browser_url}")
    ok = neo.state in ("running", "external")
    for name in processes.SERVICES:
        p = processes.status(settings, name)
        where = f"http://{settings.api_host}:{settings.api_port} (docs at /docs)" if name == "api" else ""
        table.add_row(name, "running" if p.running else "stopped",
                      f"pid {p.pid}  {where}  log {p.log}" if p.running else f"log {p.log}")
        ok = ok and p.running
    events = SQLiteLog(settings.log_path)
    lag = events.last_seq() - events.position(CONSUMER)
    table.add_row("log", f"{events.last_seq()} events", f"worker lag {lag} events, "
                  f"{events.dead_letter_count()} dead letters  ({settings.log_path})")
    out.print(table)
    return ok


def main() -> None:
    """Entry point of the ``lineage`` console script."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    os.umask(PRIVATE_UMASK)  # state, logs and exports are private to this user (graph.private)
    try:
        app()
    except LineageError as e:
        err.print(f"[bold red]error:[/] {e}")
        sys.exit(1)


if __name__ == "__main__":
    main()
