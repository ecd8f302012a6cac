"""The services: the HTTP API (``serve``), the ``worker``, ``up`` / ``down`` / ``status`` for all
three with Neo4j, the Spark ``demo`` and the Spark settings (``spark-conf``)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from api.cli.app import app
from api.cli.common import err, fail, get_settings, local_server, out, progress, write, writing_graph
from api.cli.render import facts, fit
from graph.errors import LineageError

if TYPE_CHECKING:
    from api.services.webhook import Webhook
    from graph.db import Graph
    from graph.settings import Settings
    from impact.policy.rules import Policies
    from impact.policy.watch import Watching
    from ingest.log.protocol import EventLog

log = logging.getLogger("lineage.services")


@app.command("serve", rich_help_panel="Run the services")
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
        raise fail(str(e), code=2) from e
    if not tokens.enabled and not is_loopback(host):
        raise fail(f"refusing to bind {host}: no LINEAGE_API_TOKENS are set, so the API would be "
                    "open to the network. Set tokens (TOKEN:read,TOKEN:write) or bind 127.0.0.1.",
                    code=2)
    with writing_graph(settings):  # start the local Neo4j if needed, apply the schema
        pass
    application = create_app(settings, run_in_background=True)  # the warm-up, the plan keeper
    # what is alive now lives as long as the process: keep it out of the collector's passes, and
    # collect rarely (a one-event request costs less CPU)
    gc.collect()
    gc.freeze()
    relax_gc()
    err.print(f"lineage-graph API on http://{host}:{port} (docs at /docs)")
    # log_config=None: uvicorn's own lines go through our handler too (api.logs)
    uvicorn.run(application, host=host, port=port, log_level="warning", log_config=None,
                http=limited(settings.api_head_bytes, settings.api_max_headers,
                             settings.api_idle_seconds))


@app.command("worker", rich_help_panel="Run the services")
def worker_cmd(
    once: Annotated[bool, typer.Option("--once", help="Load what the log holds now, then exit.")] = False,
) -> None:
    """Consume the event log into Neo4j (what `lineage up` runs). Stops cleanly on Ctrl-C/SIGTERM.

    With LINEAGE_POLICIES set, it also keeps the policy rules checked: all of them at start, then
    after each batch what the batch could change (docs/policies.md, "Kept checked"), and POSTs
    each violation that appears or clears to LINEAGE_POLICY_WEBHOOK if set."""
    import signal
    import threading

    from ingest.log.sqlite import open_event_log
    from ingest.pipeline import relax_gc
    from ingest.worker import CONSUMER, BatchResult, Worker

    logging.getLogger().setLevel(logging.INFO)  # a line per batch
    relax_gc()
    settings = get_settings()
    lower_priority(settings.worker_nice)
    events = open_event_log(settings)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    from impact.policy.rules import read_policies

    try:
        rules = read_policies(settings.policies) if settings.policies else None
    except LineageError as e:
        raise fail(f"{e} (LINEAGE_POLICIES)", code=2) from e
    try:
        with events.claim(CONSUMER), writing_graph(settings) as graph:
            worker = Worker(graph, events, settings.worker_batch,
                            facet_max_bytes=settings.facet_max_bytes,
                            batch_bytes=settings.worker_batch_bytes)

            if once:
                while worker.run_once() is not None:
                    pass  # each batch is logged (api.logs)
                if rules is not None:
                    _check_policies_once(graph, rules, settings.policy_webhook)
                return
            log.info("consuming %s (lag %d events)",
                     settings.log_path if settings.log == "sqlite" else settings.log, worker.lag())
            _plan_ahead(graph)
            watching, webhook = _watch_policies(graph, rules, settings.policy_webhook, events)

            def on_batch(result: BatchResult) -> None:
                if watching is not None:
                    watching.offer(result.datasets, result.handoffs, result.commands)

            with contextlib.suppress(KeyboardInterrupt):
                worker.run(stop, settings.worker_poll, on_batch)
            if watching is not None:
                watching.stop()
            if webhook is not None:
                webhook.close(wait=5.0)
            log.info("stopped")
    except LineageError as e:
        raise fail(str(e)) from e


def _watch_policies(graph: Graph, rules: Policies | None, url: str | None, events: EventLog
                    ) -> tuple[Watching | None, Webhook | None]:
    """The policy rules kept checked on a thread of their own, their changes sent to ``url``
    (documents dropped for too many waiting are counted in the log's stats, for /metrics)."""
    from api.services.webhook import Webhook
    from impact.policy.watch import PolicyWatch, Watching

    if rules is None:
        return None, None

    def dropped(count: int) -> None:
        with contextlib.suppress(LineageError):
            events.set_stats({"policy_webhook_dropped_total": count})

    webhook = Webhook(url, rules, on_drop=dropped) if url else None
    log.info("keeping %d policy rules of %s checked%s", len(rules.rules), rules.path,
             f"; changes go to {url}" if url else "")
    watching = Watching(PolicyWatch(graph, rules),
                        notify=webhook.send if webhook else lambda changes: None).start()
    return watching, webhook


def _check_policies_once(graph: Graph, rules: Policies, url: str | None) -> None:
    """``--once``: the rules checked in full after the load, the changes sent before exiting."""
    from api.services.webhook import Webhook
    from impact.policy.watch import PolicyWatch

    done = PolicyWatch(graph, rules).full()
    log.info("policy rules checked: %d appeared, %d cleared",
             sum(c.event == "appeared" for c in done.changes),
             sum(c.event == "cleared" for c in done.changes))
    if url and done.changes:
        webhook = Webhook(url, rules)
        webhook.send(done.changes)
        webhook.close(wait=30.0)


def lower_priority(nice: int) -> None:
    """Run this process ``nice`` steps below its current CPU priority (Unix; nothing elsewhere)."""
    if nice and hasattr(os, "nice"):
        os.nice(nice)


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


@app.command("up", rich_help_panel="Run the services")
def up_cmd(
    log: Annotated[str | None, typer.Option(
        "--log", help="Where accepted events are kept: sqlite (the default, LINEAGE_LOG), kafka "
                      "(a local broker, started here: docs/kafka.md) or kafka://HOST:PORT/TOPIC "
                      "(your own cluster)")] = None,
    workers: Annotated[int | None, typer.Option(
        help="Worker processes sharing a Kafka log's partitions (LINEAGE_WORKERS)")] = None,
) -> None:
    """Start Neo4j, the API and the worker (each its own process); print where they are. With a
    Kafka log, the broker too when it is the local one, and several workers if asked."""
    import os

    from api.local import processes

    # the processes started below read the same settings from their environment
    for key, value in (("LINEAGE_LOG", log), ("LINEAGE_WORKERS", workers)):
        if value is not None:
            os.environ[key] = str(value)
    from graph.settings import get_settings as read_settings

    read_settings.cache_clear()
    settings = get_settings()
    if settings.log != "sqlite":
        from ingest.log.kafka import KafkaAddress
        from ingest.log.sqlite import LogError

        try:
            KafkaAddress.parse(settings.log, settings.kafka_port)
        except LogError as e:
            raise fail(str(e), code=2) from e
    try:
        with writing_graph(settings):  # starts the local Neo4j if needed, applies the schema once
            pass
        if settings.log != "sqlite":
            _kafka_up(settings)
    except LineageError as e:
        raise fail(str(e)) from e
    api_proc = processes.start(settings, "api")
    worker_proc = [processes.start(settings, name) for name in processes.worker_names(settings)][0]
    if settings.mlflow_uri:  # keeps MLflow's runs and models in the lineage (`lineage mlflow sync`)
        processes.start(settings, "mlflow-sync")
    processes.record_up(settings)
    url = f"http://{settings.api_host}:{settings.api_port}"
    if not processes.wait_http(f"{url}/health"):
        raise fail(f"the API did not answer at {url}; see {api_proc.log}")
    with progress("warming Neo4j (so that the first questions answer at full speed)…"):
        if not processes.wait_warmed(url):
            err.print(f"Neo4j is still warming; questions answer meanwhile, slower (see {api_proc.log})")
    print_up(settings)
    out.print(f"send OpenLineage events to {url}/api/v1/lineage; logs in {worker_proc.log.parent}")


def _plan_ahead(graph: Graph) -> None:
    """The ingest queries planned before the first batch (ingest.load.plan_ahead): an
    optimisation, so a failure is logged and the worker goes on."""
    from ingest.load import plan_ahead

    started = time.monotonic()
    try:
        plan_ahead(graph)
    except LineageError as e:
        log.warning("planning the ingest queries ahead failed (%s); the first batch plans them", e)
        return
    log.info("ingest queries planned in %.1f s", time.monotonic() - started)


def _kafka_up(settings: Settings) -> None:
    """The Kafka log's broker (started when it is the local one) and its topics."""
    from api.cli.kafka import ensure_topics
    from ingest.log.kafka import KafkaAddress
    from ingest.log.kafka_broker import LocalBroker

    address = KafkaAddress.parse(settings.log, settings.kafka_port)
    broker = LocalBroker(settings)
    if address.bootstrap == broker.bootstrap:
        with progress("starting Kafka…") as say:
            broker.start(say=say)
    ensure_topics()


@app.command("down", rich_help_panel="Run the services")
def down_cmd() -> None:
    """Stop everything `lineage up` or a demo started: the workers, the API, MLflow's sync and
    tracking server, the local Kafka broker and the local Neo4j."""
    from api.local import mlflow_server, processes

    settings = processes.as_started(get_settings())
    extra = [f"worker-{i}" for i in range(2, 65)]
    for name in ("mlflow-sync", *extra, "worker", "api"):
        stopped = processes.stop(settings, name)
        if stopped or name in ("worker", "api"):
            out.print(f"{name}: {'stopped' if stopped else 'was not running'}")
    processes.forget_up(settings)
    if mlflow_server.stop(settings):
        out.print("mlflow: stopped")
    from ingest.log.kafka_broker import LocalBroker

    if LocalBroker(settings).stop():
        out.print("kafka: stopped")
    if settings.uses_local_server:
        out.print("neo4j: " + ("stopped" if local_server(settings).stop() else "was not running"))


@app.command("status", rich_help_panel="Run the services")
def status_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="As JSON, for a script.")] = False,
) -> None:
    """Neo4j, the API and the workers (as `lineage up` started them: its log, its workers):
    running or not, where, and the workers' lag. Exit 1 if any is down."""
    from api.local import processes

    settings = processes.as_started(get_settings())
    state = up_state(settings)
    if as_json:
        print(json.dumps(state, indent=2))
    else:
        print_up(settings, state)
    if not state["ok"]:
        raise typer.Exit(1)


def up_state(settings: Settings) -> dict[str, Any]:
    """Neo4j, each service and the event log, as ``lineage status --json`` says them."""
    from api.local import processes
    from graph.local_server import external_status
    from ingest.log.sqlite import open_log
    from ingest.worker import CONSUMER

    neo = local_server(settings).status() if settings.uses_local_server else external_status(settings)
    state: dict[str, Any] = {"neo4j": {"state": neo.state, "bolt": neo.bolt_uri,
                                       "browser": neo.browser_url}}
    ok = neo.state in ("running", "external")
    names = ["api", *processes.worker_names(settings)] + (["mlflow-sync"] if settings.mlflow_uri
                                                           else [])
    for name in names:
        p = processes.status(settings, name)
        state[name] = {"running": p.running, "pid": p.pid if p.running else None,
                       "log": str(p.log)}
        if name == "api":
            state[name]["url"] = f"http://{settings.api_host}:{settings.api_port}"
        ok = ok and p.running
    if settings.log != "sqlite":
        from ingest.log.kafka import KafkaAddress
        from ingest.log.kafka_broker import LocalBroker

        broker = LocalBroker(settings)
        if KafkaAddress.parse(settings.log, settings.kafka_port).bootstrap == broker.bootstrap:
            b = broker.status()  # the local broker `lineage up` started
            state["kafka"] = {"state": b.state, "bootstrap": b.bootstrap, "pid": b.pid,
                              "detail": b.detail}
            ok = ok and b.state == "running"
        state["log"] = _kafka_state(settings, state)
        state["ok"] = ok and "error" not in state["log"]
        return state
    events = open_log(settings.log_path)
    try:
        state["log"] = {"path": str(settings.log_path), "events": events.last_seq(),
                        "workerLag": events.last_seq() - events.position(CONSUMER),
                        "deadLetters": events.dead_letter_count()}
    finally:
        events.close()
    state["ok"] = ok
    return state


def _kafka_state(settings: Settings, state: dict[str, Any]) -> dict[str, Any]:
    """A Kafka log as its broker says it: the topic's events, the consumer group's lag and dead
    letters, and which partitions each worker holds (added to the workers' entries of ``state``;
    ``members`` has every member of the group, started here or elsewhere)."""
    from ingest.log.kafka import KafkaAddress, describe_group, worker_client_id
    from ingest.log.protocol import LogError

    address = KafkaAddress.parse(settings.log, settings.kafka_port)
    try:
        group = describe_group(address, timeout=5)
    except LogError as e:
        return {"path": settings.log, "error": str(e)}
    held = group.held()
    for name in [k for k in state if k.startswith("worker") and state[k]["running"]]:
        mine = held.get(worker_client_id(state[name]["pid"]), [])
        state[name]["partitions"] = [p.partition for p in mine]
        state[name]["lag"] = sum(p.lag for p in mine)
    return {"path": settings.log, "topic": group.topic, "group": group.state,
            "partitions": len(group.partitions), "events": sum(p.end for p in group.partitions),
            "workerLag": group.lag, "waitingSeconds": round(group.oldest_wait(time.time()), 1),
            "deadLetters": group.dead_letters,
            "members": {member or "(none)": [p.partition for p in parts]
                        for member, parts in sorted(held.items())}}


def print_up(settings: Settings, state: dict[str, Any] | None = None) -> bool:
    """The state of Neo4j, the services and the log as a table that fits the terminal; whether
    every part is up. Addresses are printed whole, never broken (a copy of a URL works)."""
    state = state or up_state(settings)
    neo, log = state["neo4j"], state["log"]
    table = facts(3)
    table.add_row("neo4j", neo["state"], f"{neo['bolt']}  Browser {neo['browser']}")
    if "kafka" in state:
        table.add_row("kafka", state["kafka"]["state"], state["kafka"]["detail"])
    for name in [k for k in state if k == "api" or k.startswith("worker") or k == "mlflow-sync"]:
        p = state[name]
        where = f"{p['url']} (docs at /docs)  " if p.get("url") else ""
        held = (f"partitions {','.join(map(str, p['partitions'])) or 'none'}, lag {p['lag']}  "
                if "partitions" in p else "")
        table.add_row(name, "running" if p["running"] else "stopped",
                      f"pid {p['pid']}  {where}{held}log {p['log']}" if p["running"]
                      else f"log {p['log']}")
    if "error" in log:
        table.add_row("log", "unreachable", log["error"])
    elif "topic" in log:
        unheld = log["members"].get("(none)", [])
        table.add_row("log", f"{log['events']} events",
                      f"worker lag {log['workerLag']} events"
                      + (f" (oldest {log['waitingSeconds']} s)" if log["workerLag"] else "")
                      + f", {log['deadLetters']} dead letters; group {log['group']}, "
                      f"{log['partitions']} partitions"
                      + (f" ({len(unheld)} held by no worker)" if unheld else "")
                      + f"  ({log['path']})")
    else:
        table.add_row("log", f"{log['events']} events", f"worker lag {log['workerLag']} events, "
                      f"{log['deadLetters']} dead letters  ({log['path']})")
    fit(table)
    return bool(state["ok"])
