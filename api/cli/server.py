"""The local Neo4j (``lineage neo4j start|stop|status``) and its schema (``lineage schema apply``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from api.cli.app import app
from api.cli.common import TextOrJson, err, fail, get_settings, local_server, out, progress
from api.cli.render import print_status
from graph.errors import LineageError

if TYPE_CHECKING:
    from graph.settings import Settings

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
    with progress("starting Neo4j (the first start assembles it with Maven)…") as say:
        started = server.start(say=lambda line: say(f"{line}…"))
    status = server.status()
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
    fmt: TextOrJson = "text",
) -> None:
    """Show whether Neo4j runs, its Bolt URI, Browser URL and login. Exit 1 if not running."""
    from graph.local_server import external_status

    settings = get_settings()
    status = (local_server(settings).status() if settings.uses_local_server
              else external_status(settings))
    if fmt == "json":
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
