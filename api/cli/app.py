"""The root of the ``lineage`` command; each command group registers its commands on it."""

from __future__ import annotations

from typing import Annotated

import typer

app = typer.Typer(
    help="lineage-graph: an OpenLineage lineage store on Neo4j, with impact analysis.\n\n"
    "Start here: `lineage ingest FILES` loads OpenLineage events (starting a local Neo4j the "
    "first time), then ask `lineage impact dataset NAMESPACE NAME`, or open the Neo4j Browser "
    "URL that `lineage neo4j status` prints.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _version(asked: bool) -> None:
    if asked:
        from importlib.metadata import PackageNotFoundError, version

        try:
            print(f"lineage-graph {version('lineage-graph')}")
        except PackageNotFoundError:  # run from a checkout that is not installed
            print("lineage-graph (not installed)")
        raise typer.Exit()


@app.callback()
def start(
    version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_version,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Before any command (not for --help or --version): the logs' format from the settings."""
    from api import logs
    from api.cli.common import get_settings

    try:
        fmt = get_settings().log_format
    except ValueError:  # a malformed setting: the command itself will say which
        fmt = "auto"
    logs.configure(fmt)
