"""GDPR "where is this column": every column its data reaches, and in what form.

Each reach is labelled by its most exposing path (a path is as exposing as its weakest step):
``raw`` (only IDENTITY copies, no masking), ``transformed`` (DIRECT steps, no masking),
``masked`` (a masking step or a hash on the way), ``aggregated`` (an AGGREGATION on the way),
``influence`` (an INDIRECT step: filter, join, group by ...; the value itself is not copied).
Raw reaches come first. Exportable as JSON or CSV, as evidence.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from graph.db import Graph
from impact.blast_radius import _native, clamp_depth, require_column

LABELS = ("raw", "transformed", "masked", "aggregated", "influence")
"""Most exposing first; the Cypher query's levels 4..0."""


@dataclass(frozen=True)
class Step:
    """One move of the data: from a column to a column, by a job (and its latest run)."""

    source: str
    target: str
    job: str | None
    run: str | None
    type: str | None
    subtype: str | None
    masking: bool
    description: str | None
    last_seen: datetime | None


@dataclass(frozen=True)
class Reach:
    """A column the data reaches, how (label), how far, and the steps that carry it there."""

    namespace: str
    dataset: str
    column: str
    label: str
    distance: int
    steps: tuple[Step, ...]
    last_flowed: datetime | None

    @property
    def jobs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.job for s in self.steps if s.job))


@dataclass(frozen=True)
class WhereReport:
    source: str
    depth: int
    reaches: tuple[Reach, ...]

    def counts(self) -> dict[str, int]:
        return {label: sum(1 for r in self.reaches if r.label == label) for label in LABELS}

    def to_csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["namespace", "dataset", "column", "label", "distance", "path", "jobs",
                    "runs", "last_flowed"])
        for r in self.reaches:
            path = " -> ".join([r.steps[0].source, *(s.target for s in r.steps)])
            w.writerow([r.namespace, r.dataset, r.column, r.label, r.distance, path,
                        " ".join(r.jobs), " ".join(s.run for s in r.steps if s.run),
                        r.last_flowed.isoformat() if r.last_flowed else ""])
        return buf.getvalue()


def where_column_goes(graph: Graph, namespace: str, dataset: str, column: str,
                      depth: int | None = None, as_of: datetime | None = None) -> WhereReport:
    """Every column the data of ``namespace:dataset.column`` reaches, raw reaches first."""
    require_column(graph, namespace, dataset, column)
    depth = clamp_depth(depth)
    rows = graph.read("impact/gdpr_reach", namespace=namespace, dataset=dataset, column=column,
                      depth=depth, asOf=as_of)
    return WhereReport(f"{namespace}:{dataset}.{column}", depth, tuple(_reach(r) for r in rows))


def _reach(r: dict[str, Any]) -> Reach:
    steps = tuple(Step(s["from"], s["to"], s["job"], s["run"], s["type"], s["subtype"],
                       bool(s["masking"]), s["description"], _native(s["lastSeen"]))
                  for s in r["steps"])
    return Reach(r["namespace"], r["dataset"], r["column"], r["label"], r["distance"], steps,
                 _native(r["lastFlowed"]))
