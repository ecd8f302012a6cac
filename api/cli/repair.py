"""``lineage rerun-plan``: from a bad run or a dataset's bad writes, what to rerun in which
order, the Airflow commands that do it, and the versions to roll back to (impact.repair).

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


@rerun_app.command("run")
def rerun_run_cmd(
    run_id: Annotated[str, typer.Argument(help="The bad (or failed) run's UUID, e.g. from "
                                               "`lineage root-cause`")],
    depth: Depth = None,
    fmt: PlanFormat = "text",
) -> None:
    """Plan the reruns after a bad or failed run (a DAG run: its task runs too).

    A failed run leaves its job's outputs stale: every run that read them after it read bad
    data.
    """
    from impact.repair.plan import rerun_plan_run

    show_plan(question(lambda g: rerun_plan_run(g, run_id, depth)), fmt)


@rerun_app.command("dataset")
def rerun_dataset_cmd(
    namespace: DatasetNs,
    name: DatasetName,
    since: Annotated[str | None, typer.Option(
        "--since", help="Bad since this ISO time: every write of it since then is bad (default: "
                        "its latest write)")] = None,
    depth: Depth = None,
    fmt: PlanFormat = "text",
) -> None:
    """Plan the reruns after bad writes of a dataset."""
    from impact.repair.plan import rerun_plan_dataset

    moment = when(since, "--since")
    show_plan(question(lambda g: rerun_plan_dataset(g, namespace, name, moment, depth)), fmt)


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
            table.add_row(str(r.step), r.job, ", ".join(r.after), ", ".join(r.runs),
                          ", ".join(r.read), r.task or "")
        fit(table, ("after", "runs that read bad data"))
    for c in plan.commands:
        out.print(c, highlight=False, markup=False, soft_wrap=True)
    for b in plan.rollbacks:
        out.print(f"roll back {b.dataset} to "
                  + (f"version {b.version} " if b.version else "")
                  + (f"written by run {b.run_id} at {stamp(b.time)} ({b.note})" if b.run_id
                     else b.note), highlight=False, markup=False)
