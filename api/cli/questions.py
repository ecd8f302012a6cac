"""Questions: blast radius (``impact``), ``upstream``, ``show``, ``root-cause`` (GDPR ``where``
is in ``gdpr``).

Each one only reads the graph (see :func:`api.cli.common.reading_graph`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from api.cli import render
from api.cli.app import app
from api.cli.common import (
    AsOf,
    ColumnName,
    DatasetName,
    DatasetNs,
    Depth,
    Format,
    JobName,
    JobNs,
    Retired,
    question,
    when,
)
from api.cli.render import dump

if TYPE_CHECKING:
    from graph.db import Graph

impact_app = typer.Typer(help="Blast radius: what derives from a dataset, a column or a job.",
                         no_args_is_help=True)
app.add_typer(impact_app, name="impact", rich_help_panel="Ask")



@impact_app.command("dataset")
def impact_dataset(
    namespace: DatasetNs,
    name: DatasetName,
    depth: Depth = None,
    as_of: AsOf = None,
    retired: Retired = False,
    fmt: Format = "text",
) -> None:
    """Every dataset derived from a dataset, and every job that reads them."""
    from impact.blast_radius import dataset_blast_radius

    ask_walk(lambda g, t: dataset_blast_radius(g, namespace, name, depth, t, retired), as_of,
                fmt)


@impact_app.command("job")
def impact_job(
    namespace: JobNs,
    name: JobName,
    depth: Depth = None,
    as_of: AsOf = None,
    retired: Retired = False,
    fmt: Format = "text",
) -> None:
    """What a job feeds: its outputs, everything derived from them, and the jobs reading them."""
    from impact.blast_radius import job_blast_radius

    ask_walk(lambda g, t: job_blast_radius(g, namespace, name, depth, t, retired), as_of,
                fmt)


@impact_app.command("column")
def impact_column(
    namespace: DatasetNs,
    dataset: DatasetName,
    column: ColumnName,
    depth: Depth = None,
    as_of: AsOf = None,
    retired: Retired = False,
    fmt: Format = "text",
) -> None:
    """Every column derived from a column, with the transformation of each step."""
    from impact.blast_radius import column_blast_radius

    ask_walk(lambda g, t: column_blast_radius(g, namespace, dataset, column, depth, t, retired),
                as_of, fmt)


upstream_app = typer.Typer(help="Upstream lineage: what a dataset or a column derives from.",
                           no_args_is_help=True)
app.add_typer(upstream_app, name="upstream", rich_help_panel="Ask")


@upstream_app.command("dataset")
def upstream_dataset_cmd(
    namespace: DatasetNs,
    name: DatasetName,
    depth: Depth = None,
    as_of: AsOf = None,
    retired: Retired = False,
    fmt: Format = "text",
) -> None:
    """Every dataset a dataset derives from, nearest first."""
    from impact.upstream import dataset_upstream

    ask_walk(lambda g, t: dataset_upstream(g, namespace, name, depth, t, retired), as_of,
                fmt)


@upstream_app.command("column")
def upstream_column_cmd(
    namespace: DatasetNs,
    dataset: DatasetName,
    column: ColumnName,
    depth: Depth = None,
    as_of: AsOf = None,
    retired: Retired = False,
    fmt: Format = "text",
) -> None:
    """Every column whose data a column comes from, with each step's transformation."""
    from impact.upstream import column_upstream

    ask_walk(lambda g, t: column_upstream(g, namespace, dataset, column, depth, t, retired), as_of,
                fmt)


def ask_walk(ask: Callable[[Graph, datetime | None], Any], as_of: str | None,
                fmt: str) -> None:
    moment = when(as_of)
    answer = question(lambda graph: ask(graph, moment))
    if fmt == "text":
        render.walk_table(answer)
    else:
        render.rows([{"kind": i.kind, "namespace": i.namespace, "name": i.name,
                      "distance": i.distance, "path": " -> ".join(i.path), "why": i.why}
                     for i in answer.impacted] if fmt == "plain" else answer,
                    ["kind", "namespace", "name", "distance", "path", "why"], fmt)


show_app = typer.Typer(help="Look at one dataset or job: neighbours, freshness, last runs.",
                       no_args_is_help=True)
app.add_typer(show_app, name="show", rich_help_panel="Ask")
root_app = typer.Typer(help="Root cause: which upstream run, input or schema change broke it.",
                       no_args_is_help=True)
app.add_typer(root_app, name="root-cause", rich_help_panel="Ask")



@show_app.command("dataset")
def show_dataset(
    namespace: DatasetNs,
    name: DatasetName,
    fmt: Format = "text",
) -> None:
    """Columns, writers and readers, upstream and downstream datasets, last run, freshness.

    --format plain prints one fact per line (column, writer, reader, upstream, downstream,
    freshness), tab-separated, for grep and cut."""
    import dataclasses

    from api.cli.policy import configured_policies, watched_position
    from api.render.policy import at_risk
    from graph.bookkeeping import public
    from impact import lookups
    from impact.health.freshness import freshness
    from impact.policy.gate import gate

    rules = configured_policies()
    position = watched_position() if rules is not None else None

    def ask(graph):  # type: ignore[no-untyped-def]
        return (lookups.dataset(graph, namespace, name), freshness(graph, namespace, name),
                at_risk(gate(graph, namespace, name, rules, position=position)))

    row, fresh, risk = question(ask)
    if fmt == "plain":
        render.rows(render.dataset_facts(row, fresh.verdict, risk), ["fact", "value", "detail"],
                    "plain")
        return
    if fmt == "json":
        dump({**row, "props": public(row["props"]),
               "freshness": {**dataclasses.asdict(fresh), "verdict": fresh.verdict},
               "qualityAtRisk": risk})
        return
    render.show_dataset(f"{namespace}:{name}", row, fresh.verdict, risk)


@show_app.command("job")
def show_job(
    namespace: JobNs,
    name: JobName,
    runs: Annotated[int, typer.Option(help="How many recent runs to list.")] = 10,
    fmt: Format = "text",
) -> None:
    """What a job reads and writes, its parent job, and its latest runs with status and duration.

    --format plain prints one fact per line (reads, writes, parent, run), tab-separated."""
    from graph.bookkeeping import public
    from impact import lookups

    def ask(graph):  # type: ignore[no-untyped-def]
        return lookups.job(graph, namespace, name, runs)

    row = question(ask)
    if fmt == "plain":
        render.rows(render.job_facts(row), ["fact", "value", "detail"], "plain")
        return
    if fmt == "json":
        dump({**row, "props": public(row["props"])})
        return
    render.show_job(f"{namespace}:{name}", row)


@root_app.command("dataset")
def root_cause_dataset_cmd(
    namespace: Annotated[str, typer.Argument(help="Namespace of the wrong dataset")],
    name: Annotated[str, typer.Argument(help="Name of the wrong dataset, e.g. a dashboard's table")],
    depth: Depth = None,
    as_of: AsOf = None,
    fmt: Format = "text",
) -> None:
    """Rank upstream causes: failed runs, failed assertions, stale inputs, schema changes."""
    from impact.root_cause import root_cause_dataset

    moment = when(as_of)
    show_root_cause(question(lambda g: root_cause_dataset(g, namespace, name, depth, moment)),
                    fmt)


@root_app.command("run")
def root_cause_run_cmd(
    run_id: Annotated[str, typer.Argument(help="The run's UUID")],
    depth: Depth = None,
    as_of: AsOf = None,
    fmt: Format = "text",
) -> None:
    """Rank causes for a failed or wrong run: the run itself, then upstream of what it read."""
    from impact.root_cause import root_cause_run

    moment = when(as_of)
    show_root_cause(question(lambda g: root_cause_run(g, run_id, depth, moment)),
                    fmt)


def show_root_cause(answer: Any, fmt: str) -> None:
    if fmt == "text":
        render.show_root_cause(answer)
        return
    render.rows([{"rank": i, "score": c.score, "kind": c.kind, "distance": c.distance,
                  "what": c.summary, "path": " <- ".join(c.path), "score is": c.score_is()}
                 for i, c in enumerate(answer.candidates, 1)] if fmt == "plain" else answer,
                ["rank", "score", "kind", "distance", "what", "path", "score is"], fmt)
