"""The whole local stack: ``up`` (Neo4j, the API, the workers, and Kafka's broker for a Kafka log),
``down`` and ``status``."""
from __future__ import annotations

import json
import logging
import os
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer

from api.cli.app import app
from api.cli.common import TextOrJson, err, fail, get_settings, local_server, out, progress, writing_graph
from api.cli.render import facts, fit
from graph.errors import LineageError

if TYPE_CHECKING:
    from graph.settings import Settings

log = logging.getLogger("lineage.services")



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
    api = processes.Process(settings, "api")
    loaders = [processes.Process(settings, name) for name in processes.worker_names(settings)]
    for process in [api, *loaders]:
        process.start()
    if settings.mlflow_uri:  # keeps MLflow's runs and models in the lineage (`lineage mlflow sync`)
        processes.Process(settings, "mlflow-sync").start()
    processes.record_up(settings)
    url = f"http://{settings.api_host}:{settings.api_port}"
    if not processes.wait_http(f"{url}/health"):
        raise fail(f"the API did not answer at {url}; see {api.log}")
    with progress("warming Neo4j (so that the first questions answer at full speed)…"):
        if not processes.wait_warmed(url):
            err.print(f"Neo4j is still warming; questions answer meanwhile, slower (see {api.log})")
    with progress("the worker is planning its writes (so that the first batch loads at full speed)…"):
        for worker in loaders:
            if not processes.wait_ready(settings, worker.status()):
                err.print(f"{worker.name} is not ready yet; events are logged meanwhile and "
                          f"loaded when it is (see {worker.log})")
    print_up(settings)
    out.print(f"send OpenLineage events to {url}/api/v1/lineage; logs in {api.log.parent}")


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
    from api.local import processes
    from api.local.mlflow_server import MlflowServer
    from graph.local_service import LocalService
    from ingest.log.kafka_broker import LocalBroker

    settings = processes.as_started(get_settings())
    extra = [f"worker-{i}" for i in range(2, 65)]
    services: list[LocalService] = [
        *(processes.Process(settings, name) for name in ("mlflow-sync", *extra, "worker", "api")),
        MlflowServer(settings), LocalBroker(settings),
        *([local_server(settings)] if settings.uses_local_server else [])]
    for service in services:
        stopped = service.stop()
        if stopped or service.name in ("worker", "api", "neo4j"):
            out.print(f"{service.name}: {'stopped' if stopped else 'was not running'}")
        if service.name == "api":
            processes.forget_up(settings)


@app.command("status", rich_help_panel="Run the services")
def status_cmd(
    fmt: TextOrJson = "text",
) -> None:
    """Neo4j, the API and the workers (as `lineage up` started them: its log, its workers):
    running or not, where, and the workers' lag. Exit 1 if any is down."""
    from api.local import processes

    settings = processes.as_started(get_settings())
    state = up_state(settings)
    if fmt == "json":
        print(json.dumps(state, indent=2))
    else:
        print_up(settings, state)
    if not state["ok"]:
        raise typer.Exit(1)


def up_state(settings: Settings) -> dict[str, Any]:
    """Neo4j, each service and the event log, as ``lineage status --format json`` says them."""
    from api.local import processes
    from graph.local_server import external_status
    from ingest.log.protocol import History
    from ingest.log.sqlite import open_log
    from ingest.worker import CONSUMER

    neo = local_server(settings).status() if settings.uses_local_server else external_status(settings)
    state: dict[str, Any] = {"neo4j": {"state": neo.state, "bolt": neo.bolt_uri,
                                       "browser": neo.browser_url}}
    ok = neo.state in ("running", "external")
    names = ["api", *processes.worker_names(settings)] + (["mlflow-sync"] if settings.mlflow_uri
                                                           else [])
    for name in names:
        p = processes.Process(settings, name).status()
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
            state["kafka"] = {"state": b.state, "bootstrap": b.address, "pid": b.pid,
                              "detail": b.detail}
            ok = ok and b.state == "running"
        state["log"] = _kafka_state(settings, state)
        state["ok"] = ok and "error" not in state["log"]
        return state
    events = open_log(settings.log_path)
    try:
        state["log"] = {"path": str(settings.log_path), "events": events.last_seq(),
                        "workerLag": events.last_seq() - events.position(CONSUMER),
                        "deadLetters": events.dead_letter_count(),
                        "bytes": events.size_bytes() if isinstance(events, History) else None}
    finally:
        events.close()
    state["retention"] = _retention_state(settings, neo.state in ("running", "external"))
    state["ok"] = ok
    return state


def _retention_state(settings: Settings, answering: bool) -> dict[str, Any] | None:
    """The store's size, the archive and the last retention run; None when Neo4j is down."""
    from api.services.retention import figures
    from graph.db import open_graph

    if not answering:
        return None
    try:
        graph = open_graph(settings, retry_time=2.0)
        try:
            return figures(graph, settings).as_dict()
        finally:
            graph.close()
    except LineageError as e:
        return {"error": str(e)}


def _kafka_state(settings: Settings, state: dict[str, Any]) -> dict[str, Any]:
    """A Kafka log as its broker says it: the topic's events, the consumer group's lag and dead
    letters, and which partitions each worker holds (added to the workers' entries of ``state``;
    ``members`` has every member of the group, started here or elsewhere)."""
    from ingest.log.kafka import KafkaAddress, KafkaLog, describe_group, worker_client_id
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
            "deadLetters": KafkaLog(address).dead_letter_count(),
            "members": {member or "(none)": [p.partition for p in parts]
                        for member, parts in sorted(held.items())}}


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


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
                      f"{log['deadLetters']} dead letters"
                      + (f", {_mb(log['bytes'])}" if log.get("bytes") is not None else "")
                      + f"  ({log['path']})")
    kept = state.get("retention")
    if kept is not None and "error" not in kept:
        last = kept["lastRun"]
        store = f"store {_mb(kept['storeBytes'])}, " if kept["storeBytes"] is not None else ""
        table.add_row("retention", "ran" if last else "not run yet",
                      store + f"archive {kept['archive']['entries']} entries "
                      f"({_mb(kept['archive']['bytes'])})"
                      + (f"; last run {last['ranAt'][:19]}: detailed since "
                         f"{last['detailedSince'][:10]}, summary since "
                         f"{last['summarySince'][:10]}, folded {last['folded']} runs, removed "
                         f"{last['removedEdges']} edges and {last['removedNodes']} nodes"
                         if last else ""))
    fit(table)
    return bool(state["ok"])
