"""GDPR ``where``: where the data of one column goes, or of every column carrying a tag.

It only reads the graph (see :func:`api.cli.common.reading_graph`).
"""

from __future__ import annotations

import dataclasses
from typing import Annotated

import typer

from api.cli import render
from api.cli.app import app
from api.cli.common import AsOf, Depth, Retired, format_option, out, question, when, write
from api.cli.render import dump


@app.command("where", rich_help_panel="Ask")
def where_cmd(
    namespace: Annotated[str | None, typer.Argument(
        help="Dataset namespace, e.g. postgres://db:5432")] = None,
    dataset: Annotated[str | None, typer.Argument(
        help="Dataset of the column, e.g. public.users")] = None,
    column: Annotated[str | None, typer.Argument(help="Column name, e.g. email")] = None,
    tag: Annotated[str | None, typer.Option(
        "--tag", help="Instead of one column: every column tagged TAG (e.g. PII) by a producer's "
                      "tags facet or through the API, and where each one's data goes.")] = None,
    depth: Depth = None,
    as_of: AsOf = None,
    retired: Retired = False,
    fmt: Annotated[str, format_option("text", "plain", "json", "csv")] = "text",
) -> None:
    """GDPR: where the data of a column ends up: raw, transformed, masked, aggregated or influence.

    `lineage where NAMESPACE DATASET COLUMN` for one column; `lineage where --tag PII` for every
    column tagged PII, with the raw copies that carry no PII tag ("should probably be tagged").
    """
    if tag is not None:
        if namespace or dataset or column:
            raise typer.BadParameter("give either --tag or NAMESPACE DATASET COLUMN, not both")
        _tagged(tag, depth, as_of, retired, fmt)
        return
    if not (namespace and dataset and column):
        raise typer.BadParameter("give NAMESPACE DATASET COLUMN (or --tag TAG)")
    from impact.where import where

    moment = when(as_of)
    report = question(lambda g: where(g, namespace, dataset, column, depth, moment, retired))
    if fmt == "csv":
        from api.render import check as reports

        write(reports.where_csv(report))
        return
    if fmt == "json":
        dump({**dataclasses.asdict(report), "counts": report.counts()})
        return
    if fmt == "plain":
        render.rows([{"label": r.label, "dataset": r.dataset, "column": r.column,
                      "distance": r.distance, "jobs": ",".join(r.jobs),
                      "last flowed": render.stamp(r.last_flowed)} for r in report.reaches],
                    ["label", "dataset", "column", "distance", "jobs", "last flowed"], "plain")
        return
    render.show_where(report)


def _tagged(tag: str, depth: int | None, as_of: str | None, retired: bool, fmt: str) -> None:
    from impact.tag_reach import tag_reach

    moment = when(as_of)
    report = question(lambda g: tag_reach(g, tag, depth, moment, retired))
    if fmt == "csv":
        from api.render import check as reports

        write(reports.tag_reach_csv(report))
        return
    if fmt == "json":
        dump({**dataclasses.asdict(report), "summary": report.summary(),
              "untaggedRaw": [dataclasses.asdict(c) for c in report.untagged_raw]})
        return
    rows = [{"source": s.source.key, "label": r.label, "reaches": f"{r.namespace}:{r.dataset}.{r.column}",
             "distance": r.distance, "jobs": ",".join(r.jobs)}
            for s in report.sources for r in s.reaches]
    rows += [{"source": s.source.key, "label": "-", "reaches": s.note or "nothing", "distance": 0,
              "jobs": ""} for s in report.sources if not s.reaches]
    render.rows(rows, ["source", "label", "reaches", "distance", "jobs"],
                fmt)
    out.print(report.summary(), highlight=False)
