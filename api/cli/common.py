"""What every command group shares: the consoles, failing with a message, the options declared
once, and the two ways to reach the graph.

A question (``impact``, ``where``, ``check`` …) only reads: it never starts Neo4j and never changes
its schema, so it works with a read-only user; when the local Neo4j is not running it says so and
how to start it (exit 1). A command that writes (``ingest``, ``worker``, ``replay``, ``serve``) may
start the local Neo4j, saying so before it does, and makes sure the schema is there.
"""

from __future__ import annotations

import contextlib
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.segment import Segment

from graph.errors import LineageError

if TYPE_CHECKING:
    from graph.db import Graph
    from graph.errors import NotFound
    from graph.local_server import LocalServer
    from graph.settings import Settings

T = TypeVar("T")

def get_settings() -> Settings:
    """The settings (graph.settings.get_settings), imported when a command first needs them:
    ``lineage --help`` does without (pydantic's settings take a fifth of a second to import)."""
    from graph import settings

    return settings.get_settings()


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """Text as a terminal shows it without obeying it: control characters (ESC, CR, BS, BEL and
    the C1 controls; a name from an event may hold any) as visible escapes, ``\\x1b``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


class _Console(Console):
    """A console that writes every text it renders through :func:`printable` (its own styles
    and cursor moves are control segments, left as they are): whatever a command prints, no
    name can clear the screen, retitle the window or plant a link."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            s if s.control else Segment(printable(s.text), s.style) for s in buffer)


def write(text: str) -> None:
    """Write a report (text, Markdown, CSV, JSON) to standard output as it is, but for control
    characters (:func:`printable`)."""
    sys.stdout.write(printable(text))


out = _Console(soft_wrap=True)
err = _Console(stderr=True, soft_wrap=True)

DEPTH = typer.Option(help="Maximum DERIVED_FROM hops (default 20, at most 50).")
AS_OF = typer.Option("--as-of", help="The lineage current at this ISO time (first seen by then, "
                                      "not yet retired).")
RETIRED = typer.Option("--include-retired", help="Also walk retired lineage (edges the job's latest "
                                                 "completed run no longer states), marked RETIRED.")
Depth = Annotated[int | None, DEPTH]
AsOf = Annotated[str | None, AS_OF]
Retired = Annotated[bool, RETIRED]
DatasetNs = Annotated[str, typer.Argument(help="Dataset namespace, e.g. postgres://db:5432")]
DatasetName = Annotated[str, typer.Argument(help="Dataset name, e.g. public.orders")]
ColumnName = Annotated[str, typer.Argument(help="Column name, e.g. email")]
JobNs = Annotated[str, typer.Argument(help="Job namespace")]
JobName = Annotated[str, typer.Argument(help="Job name")]

FORMATS = {
    "text": "for people: a table where the answer is rows",
    "plain": "tab-separated, one row per line, for grep and cut",
    "markdown": "for a pull request comment or an audit file",
    "json": "for a script",
    "csv": "comma-separated, for a spreadsheet or as evidence",
    "sarif": "for code scanning",
    "airflow": "the Airflow commands that run it",
}
"""The one vocabulary of ``--format``: each command offers some of these words, none other."""


def format_option(*offered: str) -> Any:
    """The ``--format`` option of a command that offers ``offered`` (words of :data:`FORMATS`)."""
    unknown = set(offered) - set(FORMATS)
    assert not unknown, unknown

    def check(value: str) -> str:
        if value not in offered:
            raise typer.BadParameter(f"--format {value}: expected {_either(offered)}")
        return value

    return typer.Option("--format", callback=check, help="; ".join(
        f"{word} ({FORMATS[word]})" for word in offered) + ".")


def _either(words: Sequence[str]) -> str:
    return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]


Format = Annotated[str, format_option("text", "plain", "json")]
"""The format of a question's answer: rows for people, for grep, for a script."""
TextOrJson = Annotated[str, format_option("text", "json")]


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print ``message`` as an error; raise what this returns to exit with ``code``."""
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False)
    return typer.Exit(code)


@contextlib.contextmanager
def progress(what: str) -> Iterator[Callable[[str], None]]:
    """Progress of long work (a local service starting, a demo running): ``what`` it says at
    first, then each line given to the callable; a spinner on a terminal, a line per step
    elsewhere (_Steps). A LineageError is the command's failure."""
    try:
        if err.is_interactive:
            with err.status(what) as shown:
                yield lambda line: shown.update(line)
        else:  # a pipe, a log, a dumb terminal: a line per step, and the count every 10 s
            yield _Steps(what)
    except LineageError as e:
        raise fail(str(e)) from e


class _Steps:
    """Progress where nothing can be redrawn: each step's line when the step changes (its text
    but for the figures), and again every ``every`` seconds while it lasts."""

    def __init__(self, first: str, every: float = 10.0) -> None:
        self.every = every
        self.step, self.said = "", float("-inf")
        self(first)

    def __call__(self, line: str) -> None:
        step, now = re.sub(r"\d+", "#", line), time.monotonic()
        if step != self.step or now - self.said >= self.every:
            err.print(escape(line), highlight=False)
            self.step, self.said = step, now


def local_server(settings: Settings) -> LocalServer:
    from graph.local_server import LocalServer

    return LocalServer(settings)


def when(as_of: str | None, option: str = "--as-of") -> datetime | None:
    """A time option (``--as-of``) as a time (exit 2 when it is not one)."""
    from ingest.times import parse_time

    try:
        return parse_time(as_of) if as_of else None
    except ValueError as e:
        raise fail(f"{option}: {e}", code=2) from e


def _connect(settings: Settings) -> Graph:
    from graph.db import open_graph

    return open_graph(settings)


@contextlib.contextmanager
def reading_graph(settings: Settings) -> Iterator[Graph]:
    """The graph for a question: never starts Neo4j, never writes (not even the schema)."""
    if settings.uses_local_server and local_server(settings).status().state != "running":
        raise fail("the local Neo4j is not running: start it with `lineage neo4j start` (or "
                   "`lineage up` for the API and the worker too), or set NEO4J_URI")
    graph = _connect(settings)
    try:
        yield graph
    finally:
        graph.close()


@contextlib.contextmanager
def writing_graph(settings: Settings) -> Iterator[Graph]:
    """The graph for a command that writes: starts the local Neo4j if it is the default and not
    running (saying so first), and makes sure the schema is there (idempotent)."""
    from graph.schema import apply_schema

    if settings.uses_local_server:
        server = local_server(settings)
        if server.status().state != "running":
            err.print("the local Neo4j is not running: starting it (`lineage neo4j start`; the "
                      "first start assembles it with Maven)")
            with progress("starting Neo4j…") as say:
                server.start(say=lambda line: say(f"{line}…"))
            err.print(f"started the local Neo4j: Browser at {server.http_url}/browser/")
    graph = _connect(settings)
    try:
        apply_schema(graph)
        yield graph
    finally:
        graph.close()


def question(ask: Callable[[Graph], T]) -> T:
    """Answer a question on the graph; a lineage error becomes a message and exit 1, and an
    unknown dataset or job comes with the closest names the graph holds."""
    from graph.errors import NotFound

    try:
        with reading_graph(get_settings()) as graph:
            try:
                return ask(graph)
            except NotFound as e:
                raise fail(str(e) + suggestions(graph, e)) from e
    except LineageError as e:
        raise fail(str(e)) from e


def suggestions(graph: Graph, e: NotFound) -> str:
    """"; did you mean: ..." with the names closest to what was not found, or nothing."""
    from impact.discover import closest

    close = closest(graph, e)
    return ("; did you mean: " + ", ".join(f"{f.namespace} {f.name}" for f in close)) if close else ""
