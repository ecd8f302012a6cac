"""Models: ``mlflow`` (sync an MLflow tracking server, start a local one), ``provenance model``
(the audit of a model version), ``root-cause model``."""

from __future__ import annotations

import time
from typing import Annotated

import typer

from api.cli.app import app
from api.cli.common import (
    AsOf,
    Depth,
    Format,
    err,
    fail,
    format_option,
    get_settings,
    out,
    printable,
    progress,
    question,
    when,
    writing_graph,
)
from api.cli.questions import root_app, show_root_cause
from graph.errors import LineageError

mlflow_app = typer.Typer(
    help="MLflow as a producer: its runs, logged datasets and registered model versions become "
         "lineage (docs/producers.md, \"MLflow\").", no_args_is_help=True)
app.add_typer(mlflow_app, name="mlflow", rich_help_panel="Load and keep events")
provenance_app = typer.Typer(help="Provenance: everything a model version's training data came "
                                  "from, for an audit.", no_args_is_help=True)
app.add_typer(provenance_app, name="provenance", rich_help_panel="Ask")

ModelName = Annotated[str, typer.Argument(
    help="The model's name: MLflow's registered name (churn), or the dataset's whole name "
         "(models/churn)")]
ModelVersionArg = Annotated[str | None, typer.Argument(
    help="The version (MLflow's version number, or the run id of an unversioned write); the "
         "newest when left out")]
ModelNs = Annotated[str | None, typer.Option(
    "--namespace", help="The model's namespace, when several models share the name")]


@mlflow_app.command("sync")
def sync_cmd(
    tracking_uri: Annotated[str | None, typer.Option(
        "--tracking-uri", help="The tracking server, http://HOST:PORT (default: LINEAGE_MLFLOW_URI, "
                               "else the local server `lineage mlflow start` runs)")] = None,
    since: Annotated[str | None, typer.Option(
        help="Only runs that started or ended at or after this time (ISO 8601), or still run, and "
             "runs whose model versions changed since")] = None,
    namespace: Annotated[str | None, typer.Option(
        help="Namespace of the experiments (jobs) and models (default mlflow://HOST:PORT)")] = None,
    table_namespace: Annotated[str | None, typer.Option(
        help="Namespace of datasets MLflow knows only by a table name (Delta, Spark, Unity "
             "Catalog tables), e.g. the one your Spark jobs' lineage uses")] = None,
    resend: Annotated[bool, typer.Option(
        help="Send every run's events, even those sent before unchanged")] = False,
    watch: Annotated[float | None, typer.Option(
        help="Keep syncing every this many seconds (what `lineage up` runs with LINEAGE_MLFLOW_URI)"
    )] = None,
) -> None:
    """Read an MLflow tracking server's experiments, runs, logged datasets and model versions, and
    load them as OpenLineage events (into the event log and the graph). Syncing again changes
    nothing unless MLflow's records changed.

    Example: lineage mlflow sync --tracking-uri http://127.0.0.1:5055
    """
    from api.local.mlflow_server import MlflowServer
    from ingest.log.sqlite import open_event_log
    from ingest.mlflow.records import MlflowError, Tracking
    from ingest.mlflow.sync import sync
    from ingest.pipeline import IngestReport
    from ingest.read import RawItem
    from ingest.times import parse_time

    settings = get_settings()
    uri = tracking_uri or settings.mlflow_uri or MlflowServer(settings).url
    try:
        Tracking(uri)  # a URI that names no server is a bad option, not a failure
    except MlflowError as e:
        raise fail(f"--tracking-uri: {e}", code=2) from e
    try:
        moment = parse_time(since) if since else None
    except ValueError as e:
        raise fail(f"--since: {e}", code=2) from e
    journal = open_event_log(settings)
    try:
        with writing_graph(settings) as graph:
            from api.cli.load import make_ingester

            ingester = make_ingester(graph, settings, None, journal)

            def deliver(items: list[RawItem], report: IngestReport) -> IngestReport:
                return ingester.ingest(items, report)

            while True:
                started = time.time()
                report = sync(uri, deliver, settings.state_dir, since=moment, namespace=namespace,
                              table_namespace=table_namespace, resend=resend,
                              say=lambda line: err.print(line, highlight=False))
                out.print(f"MLflow {uri}: {report.runs} runs read, {report.sent} sent "
                          f"({report.sent - report.registries} runs and {report.registries} "
                          f"registered models: {report.events} events, {report.models} model "
                          "versions), "
                          f"{report.unchanged} unchanged; "
                          f"[green]{report.ingest.loaded + report.ingest.by_worker} loaded[/], "
                          f"[red]{len(report.ingest.rejected)} rejected[/]", highlight=False)
                for rejection in report.ingest.rejected[:20]:
                    out.print(f"  rejected {rejection.where}: {'; '.join(rejection.reasons)}",
                              highlight=False)
                if watch is None:
                    break
                # the next pass: what changed since this one began (a minute of overlap for clocks)
                moment = parse_time(time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                  time.gmtime(started - 60)))
                resend = False
                time.sleep(watch)
    except LineageError as e:
        raise fail(str(e)) from e
    finally:
        journal.close()
    if report.ingest.rejected:
        raise typer.Exit(1)


@mlflow_app.command("start")
def start_cmd() -> None:
    """Start a local MLflow tracking server (SQLite store under the state directory, on loopback;
    MLflow is installed into the state directory on first use)."""
    from api.local.mlflow_server import MlflowServer

    server = MlflowServer(get_settings())
    with progress("starting MLflow…") as say:
        server.start(say=say)
    out.print(f"MLflow's tracking server: {server.url} (store and artifacts in {server.home})",
              highlight=False)


@mlflow_app.command("stop")
def stop_cmd() -> None:
    """Stop the local MLflow tracking server."""
    from api.local.mlflow_server import MlflowServer

    out.print("stopped" if MlflowServer(get_settings()).stop() else "it was not running")


@mlflow_app.command("status")
def status_cmd() -> None:
    """Whether the local MLflow tracking server runs, and where."""
    from api.local.mlflow_server import MlflowServer

    status = MlflowServer(get_settings()).status()
    out.print(f"MLflow {status.state}: {status.address} ({status.detail})", highlight=False)


@provenance_app.command("model")
def provenance_model_cmd(
    name: ModelName,
    version: ModelVersionArg = None,
    namespace: ModelNs = None,
    depth: Depth = None,
    fmt: Annotated[str, format_option("text", "markdown", "json")] = "text",
) -> None:
    """Every source a model version's training data came from: through which jobs and runs, with
    owners, tags (PII), transformations and masking, run times and statuses, and the versions of
    the inputs read, as the lineage stood when it was trained.

    Example: lineage provenance model churn 2 --format markdown > churn-v2-provenance.md
    """
    from api.render.provenance import provenance_json, provenance_markdown, provenance_text
    from impact.ml.provenance import provenance

    writers = {"text": provenance_text, "markdown": provenance_markdown, "json": provenance_json}
    answer = question(lambda g: provenance(g, name, version, namespace, depth))
    print(writers[fmt](answer) if fmt == "json" else printable(writers[fmt](answer)), end="")


@root_app.command("model")
def root_cause_model_cmd(
    name: ModelName,
    version: ModelVersionArg = None,
    namespace: ModelNs = None,
    depth: Depth = None,
    as_of: AsOf = None,
    fmt: Format = "text",
) -> None:
    """Rank causes for a bad model version: its training run, then upstream of what it read, as
    the lineage stood when it was trained."""
    from impact.ml.provenance import find_version
    from impact.root_cause import root_cause_run

    moment = when(as_of)

    def ask(graph):  # type: ignore[no-untyped-def]
        row, _ = find_version(graph, name, version, namespace)
        return root_cause_run(graph, row["runId"], depth, moment)

    show_root_cause(question(ask), fmt)

