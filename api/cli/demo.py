"""The demos (``demo``: the Spark pipeline, ``--stack`` with dbt and Airflow, ``--ml`` with MLflow)
and the Spark settings that point a job at us (``spark-conf``)."""
from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from api.cli.app import app
from api.cli.common import err, fail, get_settings, local_server, out, progress, write
from graph.errors import LineageError

if TYPE_CHECKING:
    from graph.settings import Settings

log = logging.getLogger("lineage.services")



@app.command("spark-conf", rich_help_panel="Run the services")
def spark_conf_cmd(
    url: Annotated[str | None, typer.Option(help="lineage-graph's URL (default: this API).")] = None,
    namespace: Annotated[str, typer.Option(help="Namespace for your Spark jobs.")] = "spark",
    token: Annotated[str | None, typer.Option(help="A write-scoped API token, if needed.")] = None,
    out_file: Annotated[Path | None, typer.Option("--out", help="Write a properties file.")] = None,
) -> None:
    """The Spark settings that make any job report lineage here (fetching the listener jar once).

    Use them as `spark-submit --properties-file FILE job.py`, or pass them to SparkSession.builder
    (`ingest.spark.env.openlineage_conf` builds the same dictionary in Python)."""
    from ingest.spark.env import listener_jar, openlineage_conf, properties_text

    settings = get_settings()
    try:
        jar = listener_jar(settings)
    except LineageError as e:
        raise fail(str(e)) from e
    text = properties_text(openlineage_conf(url or f"http://{settings.api_host}:{settings.api_port}",
                                            namespace, token, jar))
    if out_file:
        out_file.write_text(text)
        out.print(f"wrote {out_file}: spark-submit --properties-file {out_file} your_job.py")
    else:
        write(text)


@app.command("demo", rich_help_panel="Run the services")
def demo_cmd(
    failing: Annotated[bool, typer.Option("--fail", help="Run two nights; on the second the revenue job "
                                                      "reads a bad column and fails.")] = False,
    users: Annotated[int, typer.Option(help="Rows of raw users.")] = 2000,
    orders: Annotated[int, typer.Option(help="Rows of raw orders.")] = 8000,
    stack: Annotated[bool, typer.Option("--stack", help="The whole stack instead: an Airflow 3 DAG "
                                                       "runs the Spark jobs, a dbt build over what "
                                                       "Spark wrote and a SQL task, all reporting "
                                                       "here (dbt and Airflow are installed into "
                                                       "the state directory on first use: a few "
                                                       "minutes).")] = False,
    ml: Annotated[bool, typer.Option("--ml", help="Then models: a churn model trained on the "
                                                 "pipeline's feature table and logged to a local "
                                                 "MLflow (examples/ml_shop), twice, synced into "
                                                 "the lineage (MLflow is installed into the state "
                                                 "directory on first use).")] = False,
    log: Annotated[str | None, typer.Option(
        "--log", help="kafka: the Spark listener sends to a Kafka topic with OpenLineage's Kafka "
                      "transport, and workers load it (a local broker is started: docs/kafka.md)"
    )] = None,
) -> None:
    """Run the example PySpark pipeline with the OpenLineage listener pointed at lineage-graph
    (starting `lineage up` if needed), then print what to ask. With --stack, the same pipeline
    scheduled by Airflow with dbt models on top (examples/airflow_shop, examples/dbt_shop)."""
    from api.auth import parse_tokens
    from api.local import processes
    from api.local.demo import NAMESPACE, demo

    if log is not None:
        import os

        from graph.settings import get_settings as read_settings

        os.environ["LINEAGE_LOG"] = log
        read_settings.cache_clear()
    settings = get_settings()
    url = f"http://{settings.api_host}:{settings.api_port}"
    if not processes.wait_http(f"{url}/health", timeout=1):
        from api.cli.stack import up_cmd

        err.print("lineage-graph is not up: starting it (`lineage up`)")
        up_cmd(log=log, workers=None)
    # the listener needs a write-scoped token when the API requires tokens
    scopes = parse_tokens(settings.api_tokens).scopes
    token = next((t for t, scope in scopes.items() if scope == "write"), None)
    if stack:
        _demo_stack(settings, url, failing, token)
        return
    if ml:
        _demo_ml(settings, url, token)
        return
    try:
        with progress("running the PySpark pipeline (a JVM starts first)…") as say:
            run = demo(settings, url, failing, users, orders, token,
                       progress=lambda s, events, jobs: say(
                           f"running the PySpark pipeline: {s:.0f} s, {events} OpenLineage events "
                           f"received, {jobs} runs ended…"))
    except LineageError as e:
        raise fail(str(e)) from e
    wh = run.warehouse
    sent = (f"sent {run.events} OpenLineage events ({len(run.events_per_job)} jobs)"
            if settings.log == "sqlite" else f"sent its events to Kafka ({settings.log})")
    out.print(f"Spark ran for {run.spark_seconds:.0f} s and {sent}; " + (
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
    out.print(f"\nNeo4j Browser: {local_server(settings).browser_url} (password: `lineage neo4j "
              "password`), then paste:", highlight=False)
    out.print(f"  MATCH p = (c:Column)-[:DERIVED_FROM*1..6]->(:Column {{dataset: '{wh}/raw/users', "
              "name: 'email'}) RETURN p", highlight=False)
    out.print(f"Jobs are in namespace '{NAMESPACE}'; datasets in namespace 'file'.")


def _demo_stack(settings: Settings, url: str, failing: bool, token: str | None) -> None:
    from api.local.demo import run_stack
    from api.local.producers import DAG_ID
    from ingest.worker import caught_up

    try:
        with err.status("running the stack…") as status:
            def say(line: str) -> None:
                err.print(line)
                status.update(line)

            run = run_stack(settings, url, settings.state_dir / "demo" / "stack", fail=failing,
                            api_key=token, say=say)
    except LineageError as e:
        raise fail(str(e)) from e
    out.print("all loaded." if caught_up(settings)
              else "the worker has not caught up yet (`lineage status`).")
    wh, duck = run.warehouse, run.namespace
    out.print("\nTry:")
    for line in (f"lineage impact dataset file {wh}/raw/users          # Spark, dbt and Airflow",
                 f"lineage where file {wh}/raw/users email",
                 f"lineage impact job airflow_shop {DAG_ID}",
                 f"lineage show job airflow_shop {DAG_ID}",
                 f"lineage root-cause dataset {duck} shop.marts.country_kpis",
                 f"lineage gate {duck} shop.marts.country_kpis   # may the overview read it?",
                 f"lineage upstream dataset {duck} shop.dashboards.shop_overview",
                 "lineage alias --list"):
        out.print(f"  {line}", highlight=False)
    out.print("Jobs are in namespaces airflow_shop (the DAG and its tasks), shop (Spark) and dbt_shop; "
              f"datasets in 'file' (Spark) and '{duck}' (dbt, the overview).", highlight=False)


def _demo_ml(settings: Settings, url: str, token: str | None) -> None:
    from api.local.ml_demo import run_ml

    try:
        with err.status("running the ML demo…") as status:
            def say(line: str) -> None:
                err.print(line, highlight=False)
                status.update(line)

            run = run_ml(settings, url, api_key=token, say=say)
    except LineageError as e:
        raise fail(str(e)) from e
    for line in run.trained:
        out.print(line, highlight=False)
    runs = sum(r.sent - r.registries for r in run.syncs)
    out.print(f"MLflow at {run.tracking_uri}: {runs} training runs synced; "
              + ("all loaded." if run.loaded else "the worker has not caught up yet (`lineage status`)."),
              highlight=False)
    wh = run.warehouse
    out.print("\nTry:")
    for line in (f"lineage impact column file {wh}/raw/users email     # the model versions it reaches",
                 f"lineage where file {wh}/raw/users email              # did they see the raw e-mail?",
                 f"lineage impact dataset file {wh}/raw/orders",
                 "lineage provenance model churn                        # the newest version's audit",
                 "lineage provenance model churn 1 --format markdown    # for the audit file",
                 "lineage root-cause model churn 2",
                 f"lineage mlflow sync --tracking-uri {run.tracking_uri}   # again: nothing changes"):
        out.print(f"  {line}", highlight=False)
    out.print(f"MLflow's UI: {run.tracking_uri}; `lineage mlflow stop` stops it.", highlight=False)
