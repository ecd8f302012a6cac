"""``lineage changes``: what changed upstream since the last good run; ``lineage rerun-plan``:
from a bad run or a dataset's bad writes, what to rerun in which order, the Airflow commands that
do it, and the versions to roll back to (impact.repair).

It only reads the graph (see :func:`api.cli.common.reading_graph`).
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

import typer

from api.cli.app import app
from api.cli.common import (
    DatasetName,
    DatasetNs,
    Depth,
    JobName,
    JobNs,
    fail,
    format_option,
    out,
    question,
    when,
    write,
)
from api.cli.render import dump, stamp

rerun_app = typer.Typer(
    help="What to rerun after bad data, in which order, and what to roll back to: every "
         "downstream run that read it, the jobs ordered so that each runs after what it reads, "
         "grouped by their DAG run with the `airflow tasks clear` command, and for each dataset "
         "holding bad data the last version a clean run wrote (docs/graph-model.md, \"Repair\").",
    no_args_is_help=True)
app.add_typer(rerun_app, name="rerun-plan", rich_help_panel="Ask")

PlanFormat = Annotated[str, format_option("text", "json", "markdown", "airflow")]
Columns = Annotated[str | None, typer.Option(
    "--columns", help="Only these columns (comma-separated) of what went bad are bad: jobs that "
                      "read none of what they feed, by column lineage, are listed apart")]

changes_app = typer.Typer(
    help="What changed upstream since the last good run (or in a window), nearest first: "
         "schema changes, lineage added or lost, job facets (SQL, source code, job type) and "
         "run facets (parameters) that differ, failed runs, late datasets, failing assertions; "
         "each with the runs that stated it (docs/graph-model.md, \"What changed\").",
    no_args_is_help=True)
app.add_typer(changes_app, name="changes", rich_help_panel="Ask")

ChangesFormat = Annotated[str, format_option("text", "json", "markdown")]
Since = Annotated[str | None, typer.Option(
    "--since", help="A run id (compare with that run) or an ISO time (changes after it); "
                    "default: the last completed run before the latest")]
Until = Annotated[str | None, typer.Option("--until", help="ISO time: changes up to it (default: now)")]


@changes_app.command("job")
def changes_job_cmd(namespace: JobNs, name: JobName, since: Since = None, until: Until = None,
                    depth: Depth = None, fmt: ChangesFormat = "text") -> None:
    """What changed for a job: its own runs, its outputs' schema, and everything upstream of
    what it reads.

    A failing job's answer is the list a reviewer reads first:

        lineage changes job shop marts_revenue_by_country
    """
    _changes("job", namespace, name, since, until, depth, fmt)


@changes_app.command("dataset")
def changes_dataset_cmd(namespace: DatasetNs, name: DatasetName, since: Since = None,
                        until: Until = None, depth: Depth = None,
                        fmt: ChangesFormat = "text") -> None:
    """What changed for a dataset: its schema, its writers' runs, and everything upstream."""
    _changes("dataset", namespace, name, since, until, depth, fmt)


def _changes(kind: str, namespace: str, name: str, since: str | None, until: str | None,
             depth: int | None, fmt: str) -> None:
    from impact.repair.changes import changes

    start = since if since is None or _is_run_id(since) else when(since, "--since")
    end = when(until, "--until")
    show_changes(question(lambda g: changes(g, kind, namespace, name, start, end, depth)), fmt)


def _is_run_id(text: str) -> bool:
    import uuid

    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def show_changes(answer: Any, fmt: str) -> None:
    if fmt == "json":
        dump(dataclasses.asdict(answer))
        return
    if fmt == "markdown":
        from api.render.repair import changes_markdown

        write(changes_markdown(answer))
        return
    from rich.table import Table
    from rich.text import Text

    from api.cli.render import fit
    from impact.repair.changes import describe

    window = (f"since {stamp(answer.since)}" if answer.since else "from the beginning") + (
        f" until {stamp(answer.until)}" if answer.until else "")
    out.print(f"what changed for {answer.subject} {window}"
              + (f", compared with run {answer.baseline}" if answer.baseline else "")
              + (f"; latest run {answer.latest}" if answer.latest else ""),
              highlight=False, markup=False)
    if not answer.changes:
        out.print(f"nothing changed ({answer.examined} datasets and jobs examined)")
        return
    table = Table(title=f"{len(answer.changes)} changes, nearest first")
    for c in ("distance", "kind", "on", "what", "when", "runs"):
        table.add_column(c)
    for c in answer.changes:
        table.add_row(*map(Text, (str(c.distance), c.kind, c.on, c.what, stamp(c.time),
                                  ", ".join(c.runs))))
    fit(table, ("runs", "on"))
    for c in answer.changes:
        lines = list(describe(c))
        if lines:
            out.print(f"{c.on}: {c.what}", highlight=False, markup=False)
            for line in lines:
                out.print("  " + line, highlight=False, markup=False)


@rerun_app.command("run")
def rerun_run_cmd(
    run_id: Annotated[str, typer.Argument(help="The bad (or failed) run's UUID, e.g. from "
                                               "`lineage root-cause`")],
    depth: Depth = None,
    columns: Columns = None,
    fmt: PlanFormat = "text",
) -> None:
    """Plan the reruns after a bad or failed run (a DAG run: its task runs too).

    A failed run leaves its job's outputs stale: every run that read them after it read bad
    data. With --columns, only those columns of what it wrote are bad: the jobs that read none
    of what they feed (column lineage decides) are listed apart.
    """
    from impact.repair.plan import rerun_plan_run

    bad = _columns(columns)
    show_plan(question(lambda g: rerun_plan_run(g, run_id, depth, bad)), fmt)


@rerun_app.command("dataset")
def rerun_dataset_cmd(
    namespace: DatasetNs,
    name: DatasetName,
    since: Annotated[str | None, typer.Option(
        "--since", help="Bad since this ISO time: every write of it since then is bad (default: "
                        "its latest write)")] = None,
    depth: Depth = None,
    columns: Columns = None,
    fmt: PlanFormat = "text",
) -> None:
    """Plan the reruns after bad writes of a dataset (with --columns: of those columns only)."""
    from impact.repair.plan import rerun_plan_dataset

    moment = when(since, "--since")
    bad = _columns(columns)
    show_plan(question(lambda g: rerun_plan_dataset(g, namespace, name, moment, depth, bad)), fmt)


def _columns(given: str | None) -> tuple[str, ...]:
    found = tuple(dict.fromkeys(c.strip() for c in (given or "").split(",") if c.strip()))
    if given is not None and not found:
        raise fail("--columns: name at least one column, e.g. --columns revenue,country", code=2)
    return found


def show_plan(plan: Any, fmt: str) -> None:
    if fmt == "json":
        dump({**dataclasses.asdict(plan), "commands": list(plan.commands)})
        return
    if fmt == "markdown":
        from api.render.repair import plan_markdown

        write(plan_markdown(plan))
        return
    if fmt == "airflow":
        write("".join(c + "\n" for c in plan.commands) or "# no Airflow task to clear\n")
        return
    from rich.table import Table
    from rich.text import Text

    from api.cli.render import fit

    out.print(f"bad data began {stamp(plan.since)} with "
              + (", ".join(plan.origin_jobs) or "a write in place")
              + ": fix it and run it again first", highlight=False, markup=False)
    if not plan.reruns:
        out.print(f"no downstream run read bad data ({plan.examined} datasets examined)")
    else:
        table = Table(title=f"rerun plan for {plan.source}")
        for c in ("step", "job", "after", "runs that read bad data", "bad inputs", "task"):
            table.add_column(c)
        for r in plan.reruns:
            # names are text, never markup
            table.add_row(*map(Text, (str(r.step), r.job, ", ".join(r.after), ", ".join(r.runs),
                                      ", ".join(r.read), r.task or "")))
        fit(table, ("after", "runs that read bad data"))
    if plan.unaffected:
        out.print(f"not affected by the changed columns ({', '.join(plan.columns)}): "
                  + ", ".join(r.job for r in plan.unaffected), highlight=False, markup=False)
    for c in plan.commands:
        out.print(c, highlight=False, markup=False, soft_wrap=True)
    for b in plan.rollbacks:
        out.print(f"roll back {b.dataset} to "
                  + (f"version {b.version} " if b.version else "")
                  + (f"written by run {b.run_id} at {stamp(b.time)} ({b.note})" if b.run_id
                     else b.note), highlight=False, markup=False)
