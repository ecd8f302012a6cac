"""Discovery: ``lineage ls [namespaces|datasets|jobs] [PATTERN]`` and ``lineage search TEXT``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from api.cli import render
from api.cli.app import app
from api.cli.common import Format, fail, question

_WHAT = ("namespaces", "datasets", "jobs")


@app.command("ls", rich_help_panel="Find")
def ls_cmd(
    what: Annotated[str, typer.Argument(help="namespaces, datasets or jobs.")] = "datasets",
    pattern: Annotated[str | None, typer.Argument(
        help="Only names matching this glob, any case: 'raw.*', '*orders*'.")] = None,
    fmt: Format = "text",
) -> None:
    """List namespaces, datasets or jobs (with what each holds), optionally by a name pattern."""
    from impact.discover import glob_regex, listing

    if what not in _WHAT:
        raise fail(f"ls {what}: expected one of {', '.join(_WHAT)}", code=2)
    if what == "namespaces":
        import re

        rows: list[dict[str, Any]] = question(lambda g: g.read("lookup/namespaces"))
        if pattern:
            wanted = re.compile(glob_regex(pattern).removeprefix("(?i)"), re.IGNORECASE)
            rows = [r for r in rows if wanted.fullmatch(r["name"] or "")]
        render.rows(rows, ["name", "datasets", "jobs"], fmt, title="namespaces")
        return
    found = question(lambda g: listing(g, what.removesuffix("s"), pattern))
    columns = ["namespace", "name"] + (["also named"] if any(f.aliases for f in found) else [])
    render.rows([{"namespace": f.namespace, "name": f.name, "also named": ", ".join(f.aliases)}
                 for f in found], columns, fmt, title=what)


@app.command("search", rich_help_panel="Find")
def search_cmd(
    text: Annotated[str, typer.Argument(help="Part of a dataset's or job's name or namespace.")],
    kind: Annotated[str | None, typer.Option(help="Only dataset or job.")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many.")] = 20,
    fmt: Format = "text",
) -> None:
    """Find datasets and jobs by part of their name or namespace: exact and suffix matches first."""
    from api.cli.access import hidden_now
    from impact.discover import search

    if kind not in (None, "dataset", "job"):
        raise fail("--kind must be dataset or job", code=2)
    found = question(lambda g: search(g, text, kind, limit))
    hidden = hidden_now()  # a restricted caller's search finds nothing it may not see
    if hidden is not None:
        found = [f for f in found if not hidden.node_hidden(f.namespace, f.name)]
    if not found and fmt == "text":
        raise fail(f"nothing is named like {text!r}")
    render.rows([{"kind": f.kind, "namespace": f.namespace, "name": f.name} for f in found],
                ["kind", "namespace", "name"], fmt, title=f"matching {text!r}")
