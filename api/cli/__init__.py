"""The ``lineage`` command line: one module per command group.

``server`` (the local Neo4j, the schema), ``load`` (``ingest``, ``alias``), ``discover`` (``ls``,
``search``), ``events`` (``replay``, ``dead-letters``, ``export``), ``questions`` (``impact``,
``upstream``, ``show``, ``root-cause``), ``gdpr`` (``where``), ``models`` (``mlflow``,
``provenance``), ``check``, ``policy``, ``services`` (``serve``, ``worker``, ``up``, ``down``,
``status``, ``demo``, ``spark-conf``), ``kafka`` (the local broker); shared options and the
graph connections in ``common``, tables in ``render``.
"""

from __future__ import annotations

import importlib
import os
import sys

from rich.markup import escape

from api.cli.app import app
from api.cli.common import err
from graph.errors import LineageError
from graph.private import PRIVATE_UMASK

__all__ = ["app", "main"]

# each group registers its commands on `app`, under a panel of `lineage --help`: the panels
# appear in the order of their first command (load, ask, find, run the services)
for _group in ("load", "questions", "gdpr", "check", "policy", "health", "models", "discover",
               "events", "server", "services", "kafka"):
    importlib.import_module(f"api.cli.{_group}")


def main() -> None:
    """Entry point of the ``lineage`` console script."""
    os.umask(PRIVATE_UMASK)  # state, logs and exports are private to this user (graph.private)
    try:
        app()
    except LineageError as e:
        err.print(f"[bold red]error:[/] {escape(str(e))}", highlight=False)
        sys.exit(1)
