"""The root of the ``lineage`` command; each command group registers its commands on it."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="lineage-graph: an OpenLineage lineage store on Neo4j, with impact analysis.\n\n"
    "Start here: `lineage ingest FILES` loads OpenLineage events (starting a local Neo4j the "
    "first time), then ask `lineage impact dataset NAMESPACE NAME`, or open the Neo4j Browser "
    "URL that `lineage neo4j status` prints.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
