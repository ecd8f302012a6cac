"""The ``lineage`` command line: one module per command group.

``server`` (the local Neo4j, the schema), ``load`` (``ingest``, ``alias``), ``discover`` (``ls``,
``search``), ``events`` (``replay``, ``dead-letters``, ``export``), ``questions`` (``impact``,
``upstream``, ``show``, ``root-cause``), ``gdpr`` (``where``), ``models`` (``mlflow``,
``provenance``), ``check``, ``policy``, ``serve`` (``serve``, ``worker``), ``demo`` (``demo``,
``spark-conf``), ``stack`` (``up``, ``down``, ``status``), ``kafka`` (the local broker),
``retention`` (``plan``, ``run``), ``repair`` (``changes``, ``rerun-plan``), ``erasure`` (``plan``); shared
options and the graph connections in ``common``, tables in ``render``.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys

import typer
from rich.markup import escape

from api.cli.app import app
from api.cli.common import err
from graph.errors import LineageError
from graph.private import PRIVATE_UMASK

__all__ = ["app", "main"]

# each group registers its commands on `app`, under a panel of `lineage --help`: the panels
# appear in the order of their first command (load, ask, find, run the services)
for _group in ("load", "questions", "gdpr", "check", "policy", "health", "models", "discover",
               "events", "server", "serve", "demo", "stack", "kafka", "retention", "repair", "erasure"):
    importlib.import_module(f"api.cli.{_group}")


def reflow(text: str) -> str:
    """A docstring as help the terminal wraps: each paragraph's lines joined into one (Typer's
    rich help keeps a docstring's line breaks, which at 80 columns make ragged half-lines);
    paragraphs with an indented line (examples) are kept as written."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(p if any(line.startswith(" ") for line in p.splitlines())
                       else " ".join(line.strip() for line in p.splitlines()) for p in paragraphs)


def _reflow_help(group: typer.Typer) -> None:
    if group.info.help:
        group.info.help = reflow(str(group.info.help))
    for command in group.registered_commands:
        text = command.help or (command.callback.__doc__ if command.callback else None)
        if text:
            command.help = reflow(text)
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _reflow_help(sub.typer_instance)


_reflow_help(app)


def main() -> None:
    """Entry point of the ``lineage`` console script: the command, run as the grant of
    LINEAGE_TOKEN when it is set (api.cli.access)."""
    from api.cli.access import answering_as, caller
    from api.cli.common import get_settings

    os.umask(PRIVATE_UMASK)  # state, logs and exports are private to this user (graph.private)
    argv = sys.argv[1:]
    try:
        who = caller(get_settings(), argv)
    except LineageError as e:
        err.print(f"[bold red]error:[/] {escape(str(e))}", highlight=False)
        sys.exit(2)
    except typer.Exit as e:  # the graph could not be read (said already)
        sys.exit(e.exit_code)
    except ValueError:  # a malformed setting: the command itself will say which
        who = None
    if who is None:
        _run(argv)
        return
    with answering_as(who, argv) as asked:
        _run(asked)


def _run(argv: list[str]) -> None:
    try:
        app(args=argv)
    except LineageError as e:
        err.print(f"[bold red]error:[/] {escape(str(e))}", highlight=False)
        sys.exit(1)
