"""GDPR reach from a tag: every column tagged (say) PII and every column its data reaches.

Tags come from producers (the tags facet's entries that name a field) and from the API (Marquez's
field tags). Each tagged column is a source; its reaches are :func:`impact.where.where`'s, labelled
as there. The summary counts the raw copies of tagged data and lists those that carry no such tag
themselves: "should probably be tagged". Tags propagate as answers, never as writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from graph.db import Graph
from graph.errors import NotFound
from impact.answers import ModelVersion
from impact.where import LABELS, Reach, where


@dataclass(frozen=True)
class TaggedColumn:
    namespace: str
    dataset: str
    column: str
    tags: tuple[str, ...]
    """The tags as stored that matched, each with who set it: ``PII (api, 2026-11-24T...)``."""

    @property
    def key(self) -> str:
        return f"{self.namespace}:{self.dataset}.{self.column}"


@dataclass(frozen=True)
class TaggedSource:
    source: TaggedColumn
    reaches: tuple[Reach, ...]
    note: str | None = None
    models: tuple[ModelVersion, ...] = ()
    """The model versions trained on its data, each with the form it saw."""
    """Why there are no reaches to show, when the column is not in the graph."""


@dataclass(frozen=True)
class RawCopy:
    namespace: str
    dataset: str
    column: str
    source: str
    tagged: bool
    """The copy carries the tag itself; when False it "should probably be tagged"."""


@dataclass(frozen=True)
class TagReport:
    tag: str
    depth: int | None
    sources: tuple[TaggedSource, ...]
    raw_copies: tuple[RawCopy, ...]

    @property
    def models(self) -> tuple[ModelVersion, ...]:
        """Every model version trained on tagged data, once, with its most exposing form."""
        rank = {label: i for i, label in enumerate(LABELS)}
        best: dict[tuple[str, str, str], ModelVersion] = {}
        for s in self.sources:
            for v in s.models:
                key = (v.namespace, v.name, v.version)
                if key not in best or rank.get(v.saw or "", 9) < rank.get(best[key].saw or "", 9):
                    best[key] = v
        return tuple(best.values())

    @property
    def untagged_raw(self) -> tuple[RawCopy, ...]:
        return tuple(c for c in self.raw_copies if not c.tagged)

    def summary(self) -> str:
        untagged = self.untagged_raw
        text = (f"{len(self.sources)} columns tagged {self.tag}; {len(self.raw_copies)} raw copies "
                f"of their data elsewhere")
        if untagged:
            names = ", ".join(f"{c.namespace}:{c.dataset}.{c.column}" for c in untagged)
            text += f"; {len(untagged)} carry no {self.tag} tag and should probably be tagged: {names}"
        if self.models:
            text += "; models trained on it: " + ", ".join(
                f"{v.label} ({v.saw})" for v in self.models)
        return text


def tagged_columns(graph: Graph, tag: str) -> list[TaggedColumn]:
    """The columns carrying ``tag`` (by name, key or value, any case), one per column."""
    found: dict[tuple[str, str, str], list[str]] = {}
    for r in graph.read("impact/tagged_columns", tag=tag.strip().lower()):
        found.setdefault((r["namespace"], r["dataset"], r["column"]), []).append(
            f"{r['tag']} ({r['by']}, {r['at']})")
    return [TaggedColumn(ns, ds, col, tuple(tags)) for (ns, ds, col), tags in found.items()]


def tag_reach(graph: Graph, tag: str, depth: int | None = None, as_of: datetime | None = None,
              include_retired: bool = False) -> TagReport:
    """Where the data of every column tagged ``tag`` goes, grouped by tagged column."""
    columns = tagged_columns(graph, tag)
    keys = {(c.namespace, c.dataset, c.column) for c in columns}
    sources: list[TaggedSource] = []
    copies: dict[tuple[str, str, str], RawCopy] = {}
    for c in columns:
        try:
            report = where(graph, c.namespace, c.dataset, c.column, depth, as_of, include_retired)
        except NotFound:
            sources.append(TaggedSource(c, (), "tagged, but no such column in the graph yet"))
            continue
        sources.append(TaggedSource(c, report.reaches, models=report.models))
        depth = report.depth
        for r in report.reaches:
            at = (r.namespace, r.dataset, r.column)
            if r.label == "raw" and at not in copies:
                copies[at] = RawCopy(*at, source=c.key, tagged=at in keys)
    return TagReport(tag, depth, tuple(sources), tuple(copies.values()))
