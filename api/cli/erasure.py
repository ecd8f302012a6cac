"""``lineage erasure plan|open|status``: where one person's data lives and how each place is
cleaned, the request recorded (under a salted hash of the subject's reference), and the evidence
that each place was cleaned (impact.erasure, api.services.erasure).

``plan`` and ``status`` only read the graph; ``open`` appends a command to the event log.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

import typer

from api.cli.app import app
from api.cli.common import (
    Depth,
    fail,
    format_option,
    get_settings,
    out,
    question,
    when,
    write,
    writing_graph,
)
from api.cli.render import dump

erasure_app = typer.Typer(
    help="Erasure requests (GDPR's right to be forgotten): every place one person's data "
         "reaches, found by their key, and how each is cleaned: delete by key (with the "
         "column and a statement), rebuild (run its producers again, in order), unverified "
         "(for a human), models to retrain (docs/graph-model.md, \"Erasure\").",
    no_args_is_help=True)
app.add_typer(erasure_app, name="erasure", rich_help_panel="Ask")


@erasure_app.command("plan", context_settings={"allow_extra_args": True,
                                               "ignore_unknown_options": True})
def plan_cmd(
    ctx: typer.Context,
    pii_tag: Annotated[str, typer.Option(
        "--pii-tag", help="The tag of the key tables' personal columns (empty: none)")] = "PII",
    personal: Annotated[list[str] | None, typer.Option(
        "--personal", help="Another column of the key tables holding their data (repeat it)")] = None,
    depth: Depth = None,
    fmt: Annotated[str, format_option("text", "json", "csv", "markdown")] = "text",
) -> None:
    """Plan an erasure from the subject's key columns: --key NAMESPACE DATASET COLUMN, once per
    key table (three words each; repeat it).

        lineage erasure plan --key postgres://warehouse:5432 raw.users id

    Each place is deleted by key (a raw copy of the key reaches it: the column that carries it
    there), rebuilt (personal data reaches it transformed, masked or aggregated: run its
    producers again after the places before it), or unverified (a hop did not report its
    transformation). Models trained on a reached column are listed to retrain.
    """
    from impact.erasure.plan import Key, erasure_plan

    keys = [Key(*k) for k in _keys(ctx.args)]
    found = question(lambda g: erasure_plan(g, keys, pii_tag or None, tuple(personal or ()), depth))
    show_plan(found, fmt)


@erasure_app.command("open", context_settings={"allow_extra_args": True,
                                               "ignore_unknown_options": True})
def open_cmd(
    ctx: typer.Context,
    subject_ref: Annotated[str, typer.Option(
        "--subject-ref", help="Your reference of the request (a ticket id, or the subject's key): "
                              "stored only as a salted hash (LINEAGE_ERASURE_SALT)")],
    pii_tag: Annotated[str, typer.Option("--pii-tag", help="As for `erasure plan`")] = "PII",
    personal: Annotated[list[str] | None, typer.Option(
        "--personal", help="As for `erasure plan`")] = None,
    deadline_days: Annotated[float | None, typer.Option(
        "--deadline-days", min=0.01, help="Days until it is overdue (default "
                                          "LINEAGE_ERASURE_DEADLINE_DAYS, 30)")] = None,
    depth: Depth = None,
) -> None:
    """Open an erasure request: the plan of --key NAMESPACE DATASET COLUMN (as for `erasure
    plan`), recorded in the event log now, under a salted hash of --subject-ref.

        lineage erasure open --key postgres://warehouse:5432 raw.users id --subject-ref REQ-2041

    Then `lineage erasure status REQ-2041` says, place by place, what is done and what waits.
    """
    from api.services.erasure import open_request
    from graph.errors import LineageError
    from impact.erasure.plan import Key, erasure_plan
    from ingest.log.sqlite import open_event_log

    keys = [Key(*k) for k in _keys(ctx.args)]
    settings = get_settings()
    try:
        with writing_graph(settings) as graph:
            plan = erasure_plan(graph, keys, pii_tag or None, tuple(personal or ()), depth)
            events = open_event_log(settings)
            try:
                opened = open_request(graph, events, settings, plan, subject_ref, deadline_days)
            finally:
                events.close()
    except LineageError as e:
        raise fail(str(e)) from e
    counts = plan.counts()
    if not opened.created:
        out.print("a request with that reference is open already: kept as it was recorded",
                  highlight=False, markup=False)
        return
    out.print(f"opened the erasure request ({len(plan.places)} places: "
              f"{counts['delete by key']} to delete by key, {counts['rebuild']} to rebuild, "
              f"{counts['unverified']} unverified; {len(plan.models)} models to retrain); "
              f"`lineage erasure status` with your reference says what is done",
              highlight=False, markup=False)


@erasure_app.command("status")
def status_cmd(
    subject_ref: Annotated[str, typer.Argument(help="The reference given to `erasure open`")],
    as_of: Annotated[str | None, typer.Option(
        "--as-of", help="Judge overdue as of this ISO time (default: now)")] = None,
    fmt: Annotated[str, format_option("text", "json", "markdown")] = "text",
) -> None:
    """Evidence, place by place: done (by which run, when), pending (waiting for what), overdue.

    A place is done at the end of the first completed run that wrote it after the request and
    after every place before it was done.
    """
    from api.services.erasure import subject_hash
    from impact.erasure.evidence import erasure_status

    moment = when(as_of)
    ref = subject_hash(get_settings(), subject_ref)
    found = question(lambda g: erasure_status(g, ref, moment))
    show_status(found, fmt)


def show_status(status: Any, fmt: str) -> None:
    if fmt == "json":
        dump({**dataclasses.asdict(status), "state": status.state})
        return
    if fmt == "markdown":
        from api.render import erasure

        write(erasure.status_markdown(status))
        return
    from rich.table import Table
    from rich.text import Text

    from api.cli.render import fit, stamp

    done = sum(1 for p in status.places if p.state == "done")
    out.print(f"erasure request opened {stamp(status.opened_at)}, due {stamp(status.deadline)}: "
              f"{status.state}, {done} of {len(status.places)} done",
              highlight=False, markup=False)
    table = Table()
    for c in ("step", "place", "action", "state", "by run", "at", "waits for"):
        table.add_column(c)
    for p in status.places:
        state = p.state + (" (overdue)" if p.overdue else "")
        table.add_row(*map(Text, (str(p.step), p.dataset, p.action, state, p.run_id or "",
                                  stamp(p.done_at), "; ".join(p.waits_for))))
    fit(table, ("by run",))


def _keys(args: list[str]) -> list[tuple[str, str, str]]:
    """The --key triples among the command's extra words."""
    keys, rest = [], list(args)
    while rest:
        word = rest.pop(0)
        if word != "--key":
            raise fail(f"unexpected {word!r}: give each key as --key NAMESPACE DATASET COLUMN", 2)
        if len(rest) < 3 or any(w.startswith("--") for w in rest[:3]):
            raise fail("--key takes three words: NAMESPACE DATASET COLUMN", 2)
        keys.append((rest[0], rest[1], rest[2]))
        del rest[:3]
    if not keys:
        raise fail("give the subject's key column: --key NAMESPACE DATASET COLUMN", 2)
    return keys


def show_plan(plan: Any, fmt: str) -> None:
    if fmt == "json":
        dump({**dataclasses.asdict(plan), "counts": plan.counts()})
        return
    if fmt in ("markdown", "csv"):
        from api.render import erasure

        write(erasure.plan_markdown(plan) if fmt == "markdown" else erasure.plan_csv(plan))
        return
    from rich.table import Table
    from rich.text import Text

    from api.cli.render import fit

    counts = plan.counts()
    out.print(f"erasure from {', '.join(plan.keys)}: {counts['delete by key']} to delete by key, "
              f"{counts['rebuild']} to rebuild, {counts['unverified']} unverified, "
              f"{len(plan.models)} model versions to retrain", highlight=False, markup=False)
    if plan.personal:
        out.print("personal columns of the key tables: " + ", ".join(plan.personal),
                  highlight=False, markup=False)
    table = Table(title="in this order")
    for c in ("step", "place", "action", "key column", "after", "how"):
        table.add_column(c)
    for p in plan.places:
        table.add_row(*map(Text, (str(p.step), p.dataset, p.action, ", ".join(p.key_columns),
                                  ", ".join(p.after), p.statement or p.note)))
    fit(table, ("after",))
    for v in plan.models:
        out.print(f"retrain {v.label}: trained on {v.via} ({v.saw or 'unknown'})",
                  highlight=False, markup=False)
    if plan.influenced:
        out.print("reached only by influence (no value copied): " + ", ".join(plan.influenced),
                  highlight=False, markup=False)
