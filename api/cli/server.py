"""The local Neo4j (``lineage neo4j start|stop|status``) and its schema (``lineage schema apply``)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated

import typer

from api.cli.app import app
from api.cli.common import err, fail, local_server, out
from api.cli.render import print_status
from graph.errors import LineageError
from graph.settings import Settings, get_settings

if TYPE_CHECKING:
    from api.deps import Services
    from graph.db import Graph
    from impact.warm import PlanKeeper

neo4j_app = typer.Typer(help="Run the local Neo4j server: start, stop, status.",
                        no_args_is_help=True)
app.add_typer(neo4j_app, name="neo4j", rich_help_panel="Run the services")
schema_app = typer.Typer(help="The graph's constraints and indexes.", no_args_is_help=True)
app.add_typer(schema_app, name="schema", rich_help_panel="Run the services")


@neo4j_app.command("start")
def neo4j_start() -> None:
    """Provision (first time) and start the local Neo4j; print how to connect."""
    settings = get_settings()
    if not settings.uses_local_server:
        raise fail(f"NEO4J_URI is set ({settings.neo4j_uri}): that server is not ours to start")
    server = local_server(settings)
    try:
        with err.status("starting Neo4j (the first start assembles it with Maven)…"):
            status, started = server.start()
    except LineageError as e:
        raise fail(str(e)) from e
    out.print("Neo4j started." if started else "Neo4j is already running; nothing to do.")
    _apply_schema(settings)
    print_status(status)


@neo4j_app.command("stop")
def neo4j_stop() -> None:
    """Stop the local Neo4j cleanly."""
    settings = get_settings()
    try:
        stopped = local_server(settings).stop()
    except LineageError as e:
        raise fail(str(e)) from e
    out.print("Neo4j stopped." if stopped else "Neo4j was not running.")


@neo4j_app.command("password")
def neo4j_password() -> None:
    """Print the local Neo4j's password, to paste into Neo4j Browser (user neo4j)."""
    settings = get_settings()
    if not settings.uses_local_server:
        raise fail("NEO4J_URI is set: that server's password is the one in NEO4J_PASSWORD")
    try:
        print(local_server(settings).password())
    except LineageError as e:
        raise fail(str(e)) from e


@neo4j_app.command("status")
def neo4j_status(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show whether Neo4j runs, its Bolt URI, Browser URL and login. Exit 1 if not running."""
    from graph.local_server import external_status

    settings = get_settings()
    status = (local_server(settings).status() if settings.uses_local_server
              else external_status(settings))
    if as_json:
        print(status.to_json())
    else:
        print_status(status)
    if status.state not in ("running", "external"):
        raise typer.Exit(1)


@neo4j_app.command("warm")
def neo4j_warm() -> None:
    """Warm Neo4j after a restart: read the lineage into its page cache and plan each question once.

    `lineage serve` does this in the background when it starts (LINEAGE_WARM_ON_START=false turns
    that off); run it by hand after restarting Neo4j under a running API. Only reads."""
    from api.cli.common import reading_graph
    from impact.warm import warm

    settings = get_settings()
    with reading_graph(settings) as graph:
        try:
            done = warm(graph, progress=lambda what, s: err.print(f"  {what}: {s:.1f} s"))
        except LineageError as e:
            raise fail(str(e)) from e
    hub = f"; questions planned on {done.hub}" if done.hub else "; the graph is empty"
    out.print(f"Neo4j warmed in {done.seconds:.1f} s{hub}.")


def in_background(settings: Settings, services: Services) -> None:
    """What ``lineage serve`` runs beside the API, each on a thread of its own, as ``settings``
    say: the warm-up (``warm_on_start``) and the plan keeper (``plan_keeper_seconds``), which
    reads from the event log how far the worker has loaded what the API received."""
    from ingest.worker import CONSUMER

    if settings.warm_on_start:
        warm_in_background(services.graph)
    if settings.plan_keeper_seconds > 0:
        def backlog() -> tuple[int, int]:
            events = services.log()
            return events.last_seq(), events.position(CONSUMER)

        keep_plans_in_background(services.graph, settings.plan_keeper_seconds, backlog)


def warm_in_background(graph: Callable[[], Graph]) -> None:
    """Warm Neo4j (impact.warm) on a thread of its own, through ``graph``, the API's own
    connection (opened here if it is not yet), saying when it is done; questions asked meanwhile
    are answered as usual, only not yet at their warm speed.

    Through the API's own connection, the first question a user asks finds the driver open, its
    pool holding a connection, and this process's code for each question already run once
    (measured in docs/benchmarks.md, "The first question after a start")."""

    from impact.warm import warm

    def run() -> None:
        try:
            done = warm(graph())
        except Exception as e:  # warming is an optimisation: never take the API down with it
            err.print(f"warming Neo4j stopped: {e}")
            return
        err.print(f"Neo4j warmed in {done.seconds:.1f} s" + (f" (questions planned on {done.hub})"
                                                           if done.hub else ""))

    threading.Thread(target=run, name="warm", daemon=True).start()


@dataclass
class Keeping:
    """What the plan keeper's thread has done: its rounds (failed ones too), and its keeper once
    the API's graph could be opened; ``stop`` ends the thread after the round under way."""

    rounds: int = 0
    keeper: PlanKeeper | None = None
    stop: threading.Event = field(default_factory=threading.Event)


def keep_plans_in_background(graph: Callable[[], Graph], every: float,
                             backlog: Callable[[], tuple[int, int]] | None = None) -> Keeping:
    """Tick the plan keeper (impact.warm.PlanKeeper, with ``backlog``) every ``every`` seconds on
    a thread of its own, through the API's own connection (it asks once a load has ended, and once
    a minute while the worker keeps up). A failed round (Neo4j away) is said once for as long
    as the failure lasts, not at every round, and the keeper goes on."""
    from impact.warm import PlanKeeper

    state = Keeping()

    def run() -> None:
        said: str | None = None
        while not state.stop.wait(every):
            try:
                state.keeper = state.keeper or PlanKeeper(graph(), backlog=backlog)
                state.keeper.tick()
                said = None
            except Exception as e:  # an optimisation: never take the API down with it
                if str(e) != said:
                    err.print(f"plan keeper: a round failed ({e}); it will try again")
                    said = str(e)
            finally:
                state.rounds += 1

    threading.Thread(target=run, name="plan-keeper", daemon=True).start()
    return state


@schema_app.command("apply")
def schema_apply() -> None:
    """Create the constraints and indexes (idempotent). `lineage neo4j start` and `lineage up` do it
    for the local Neo4j; run it once on your own Neo4j (NEO4J_URI) with a user that may."""
    _apply_schema(get_settings())
    out.print("schema applied")


def _apply_schema(settings: Settings) -> None:
    from graph.db import open_graph
    from graph.schema import apply_schema

    try:
        graph = open_graph(settings)
        try:
            apply_schema(graph)
        finally:
            graph.close()
    except LineageError as e:
        raise fail(str(e)) from e
