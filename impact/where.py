"""GDPR "where is this column": every column its data reaches, and in what form.

Each reach is labelled by its most exposing path (a path is as exposing as its weakest step):
``raw`` (only DIRECT IDENTITY copies, none with ``masking: true``), ``unknown`` (a step whose
producer reported no transformation: possibly raw), ``transformed`` (DIRECT steps, no masking),
``masked`` (a step with ``masking: true``), ``aggregated`` (an AGGREGATION on the way),
``influence`` (an INDIRECT step: filter, join, group by ...; the value itself is not copied).
Labels come from the column lineage facet's fields only: a description never lowers one (a
"NOT hashed" copy is raw). Each step says which facts it rests on (``basis``). Raw reaches come
first. Exportable as JSON or CSV, as evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from graph.db import Graph
from impact.answers import (
    ModelVersion,
    approximate,
    clamp_depth,
    native_time,
    require_column,
    retired_note,
    summary_note,
)
from impact.ml.models import trained_on_columns, with_forms

LABELS = ("raw", "unknown", "transformed", "masked", "aggregated", "influence")
"""Most exposing first; the Cypher query's levels 5..0."""


@dataclass(frozen=True)
class Hop:
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
    basis: str
    """The reported facts this step's label rests on (columnLineage transformations)."""
    job_namespace: str | None = None

    @property
    def job_key(self) -> str | None:
        """``namespace:name`` of the job (policy reports name jobs whole)."""
        return f"{self.job_namespace}:{self.job}" if self.job and self.job_namespace else self.job


def basis(kind: str | None, subtype: str | None, masking: bool) -> str:
    """Where a step's label comes from, in the facet's own words, or "not reported"."""
    if kind in (None, "UNKNOWN"):
        return "transformation not reported by the producer"
    shown = subtype if subtype not in (None, "UNKNOWN") else "not reported"
    reported = f"type {kind}, subtype {shown}"
    return reported + (", masking true" if masking else ", masking not true")


@dataclass(frozen=True)
class Reach:
    """A column the data reaches, how (label), how far, and the steps that carry it there."""

    namespace: str
    dataset: str
    column: str
    label: str
    distance: int
    steps: tuple[Hop, ...]
    last_flowed: datetime | None

    @property
    def jobs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.job for s in self.steps if s.job))


@dataclass(frozen=True)
class WhereReport:
    source: str
    depth: int
    reaches: tuple[Reach, ...]
    models: tuple[ModelVersion, ...] = ()
    """The model versions trained on the data, each with the form it saw (``saw``): the label of
    the column it was trained on (raw for the column itself), unknown when its training columns
    are not stated."""
    approximate: str | None = None
    """Why an answer as of a time before the detailed window of retention is approximate."""

    def counts(self) -> dict[str, int]:
        return {label: sum(1 for r in self.reaches if r.label == label) for label in LABELS}


def where(graph: Graph, namespace: str, dataset: str, column: str,
                      depth: int | None = None, as_of: datetime | None = None,
                      include_retired: bool = False) -> WhereReport:
    """Every column the data of ``namespace:dataset.column`` reaches, raw reaches first."""
    depth = clamp_depth(depth)
    rows = graph.read("impact/where", namespace=namespace, dataset=dataset, column=column,
                      depth=depth, asOf=as_of, includeRetired=include_retired)
    if not rows:  # an answer proves the column exists: a round trip fewer for most questions
        require_column(graph, namespace, dataset, column)
    # a column reached by a symlink hop last is another name of one listed already
    reaches = tuple(_reach(r) for r in rows if not (r["steps"] and r["steps"][-1]["alias"]))
    columns = [(namespace, dataset, column)] + [(r.namespace, r.dataset, r.column) for r in reaches]
    forms = {f"{namespace}:{dataset}.{column}": "raw"} | {
        f"{r.namespace}:{r.dataset}.{r.column}": r.label for r in reaches}
    models = with_forms(trained_on_columns(graph, columns), forms)
    return WhereReport(f"{namespace}:{dataset}.{column}", depth, reaches, models,
                       approximate(graph, as_of))


def _reach(r: dict[str, Any]) -> Reach:
    steps = tuple(Hop(s["from"], s["to"], s["job"], s["run"], s["type"], s["subtype"],
                       s["masking"] is True, s["description"], native_time(s["lastSeen"]),
                       basis(s["type"], s["subtype"], s["masking"] is True)
                       + retired_note(s.get("retired")) + summary_note(s.get("summary"), s["lastSeen"]),
                       s["jobNamespace"])
                  for s in r["steps"])
    return Reach(r["namespace"], r["dataset"], r["column"], r["label"], r["distance"], steps,
                 native_time(r["lastFlowed"]))
