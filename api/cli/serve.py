"""Running the services one by one: the HTTP API (``serve``) and the ``worker`` (what ``lineage up``
starts, each its own process)."""
from __future__ import annotations

import contextlib
import logging
import os
import time
from typing import TYPE_CHECKING, Annotated

import typer

from api.cli.app import app
from api.cli.common import err, fail, get_settings, writing_graph
from graph.errors import LineageError

if TYPE_CHECKING:
    from api.services.webhook import Webhook
    from graph.db import Graph
    from graph.settings import Settings
    from impact.policy.kept import LogState
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
    from impact.access.grants import AccessError, read_access
    from ingest.pipeline import relax_gc

    settings = get_settings()
    host = host or settings.api_host
    port = port or settings.api_port
    try:
        access = read_access(settings.access) if settings.access else None
        tokens = parse_tokens(settings.api_tokens, access)
    except (TokenConfigError, AccessError) as e:
        raise fail(str(e), code=2) from e
    signs_in = access is not None and access.signs_in  # callers an identity provider names
    if not tokens.enabled and not signs_in and not is_loopback(host):
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
    each violation that appears or clears to LINEAGE_POLICY_WEBHOOK if set.

    Every LINEAGE_RETENTION_INTERVAL seconds (an hour) it keeps the retention windows too
    (`lineage retention run`; docs/graph-model.md, "Retention")."""
    import signal
    import threading

    from api.services.retention import Keeping
    from impact.policy.kept import LogState
    from ingest.log.protocol import SoleConsumer
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
        # one worker per SQLite log; on Kafka the consumer group shares the partitions
        sole = events.claim(CONSUMER) if isinstance(events, SoleConsumer) else contextlib.nullcontext()
        with sole, writing_graph(settings) as graph:
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
            _say_ready(settings)
            watching, webhook = _watch_policies(
                graph, rules, settings.policy_webhook, events,
                # a sole consumer's position is the whole log's: gates may read the store
                LogState.of(events, CONSUMER) if isinstance(events, SoleConsumer) else None)
            keeping = Keeping(graph, events, settings, worker.activity.busy).start() \
                if settings.retention_interval > 0 else None

            def on_batch(result: BatchResult) -> None:
                if watching is not None:
                    watching.offer(result)

            with contextlib.suppress(KeyboardInterrupt):
                worker.run(stop, settings.worker_poll, on_batch)
            if keeping is not None:
                keeping.stop()
            if watching is not None:
                watching.stop()
            if webhook is not None:
                webhook.close(wait=5.0)
            log.info("stopped")
    except LineageError as e:
        raise fail(str(e)) from e


def _watch_policies(graph: Graph, rules: Policies | None, url: str | None, events: EventLog,
                    through: LogState | None = None) -> tuple[Watching | None, Webhook | None]:
    """The policy rules kept checked on a thread of their own, their changes sent to ``url``
    (documents dropped for too many waiting are counted in the log's stats, for /metrics)."""
    from api.services.webhook import Webhook
    from impact.policy.watch import PolicyWatch, Watching
    from ingest.log.protocol import WorkerFigures

    if rules is None:
        return None, None

    def dropped(count: int) -> None:
        if isinstance(events, WorkerFigures):
            with contextlib.suppress(LineageError):
                events.set_stats({"policy_webhook_dropped_total": count})

    webhook = Webhook(url, rules, on_drop=dropped) if url else None
    log.info("keeping %d policy rules of %s checked%s", len(rules.rules), rules.path,
             f"; changes go to {url}" if url else "")
    watching = Watching(PolicyWatch(graph, rules),
                        notify=webhook.send if webhook else lambda changes: None,
                        through=through).start()
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


def _say_ready(settings: Settings) -> None:
    """Leave the marker ``lineage up`` waits for (api.local.processes.ready_marker)."""
    from api.local.processes import ready_marker

    marker = ready_marker(settings, os.getpid())
    with contextlib.suppress(OSError):  # a state directory not ours to write: nobody waits
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("ready\n")


def _plan_ahead(graph: Graph) -> None:
    """The ingest queries planned before the first batch (ingest.pipeline.plan_ahead): an
    optimisation, so a failure is logged and the worker goes on."""
    from ingest.pipeline import plan_ahead

    started = time.monotonic()
    try:
        plan_ahead(graph)
    except LineageError as e:
        log.warning("planning the ingest queries ahead failed (%s); the first batch plans them", e)
        return
    log.info("ingest queries planned in %.1f s", time.monotonic() - started)
