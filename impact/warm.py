"""Warming Neo4j after a restart, so that the first questions answer as fast as the later ones.

A Neo4j that has just started has an empty page cache, no query plans and a JVM that has compiled
nothing yet: the first blast radius of a hub table on the 100,000-dataset graph took 0.4-5 s where
the same question asked again took 0.1-0.2 s (docs/benchmarks.md, "Hubs after a restart"). Warming
does what those first questions would have done, before anyone waits for them:

1. reads the records the walks touch (``cypher/admin/warm.cypher``: datasets, their lineage edges
   and those edges' properties, jobs' reads and writes, then columns), so the page cache holds
   them, most needed first;
2. asks each question once (blast radius, upstream, root cause, GDPR reach, the Marquez-shaped
   lineage) of the largest hub, so that Neo4j plans and compiles each query.

Only reads: it never changes the graph. ``lineage serve`` runs it in the background at start
(``LINEAGE_WARM_ON_START``); ``lineage neo4j warm`` runs it by hand.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from graph.db import Graph
from impact.blast_radius import column_blast_radius, dataset_blast_radius
from impact.marquez_lineage import column_lineage, lineage
from impact.root_cause import root_cause_dataset
from impact.upstream import column_upstream, dataset_upstream
from impact.where import where


@dataclass
class Warmed:
    """What warming did: each step with its seconds, and the records the store reads touched."""

    steps: list[tuple[str, float]] = field(default_factory=list)
    records: int = 0
    hub: str | None = None

    @property
    def seconds(self) -> float:
        return sum(s for _, s in self.steps)


def warm(graph: Graph, timeout: float = 600.0,
         progress: Callable[[str, float], None] | None = None) -> Warmed:
    """Read the store into the page cache, then ask each question of the largest hub once.

    ``timeout`` bounds each store read (seconds); ``progress`` hears each step as it ends."""
    done = Warmed()

    def step(what: str, started: float) -> None:
        took = time.perf_counter() - started
        done.steps.append((what, took))
        if progress:
            progress(what, took)

    started = time.perf_counter()
    for rows in graph.read_each("admin/warm", timeout=timeout):
        for row in rows:
            done.records += int(row["records"] or 0)
            step(str(row["what"]), started)
        started = time.perf_counter()
    sample = graph.read("admin/warm_sample")
    if not sample:
        return done  # an empty graph: nothing to plan against
    hub = sample[0]
    ns, name, column, derived = hub["namespace"], hub["name"], hub["column"], hub["derived"]
    derived_column = hub["derivedColumn"]
    done.hub = f"{ns}:{name}"
    questions: list[tuple[str, Callable[[], Any]]] = [
        ("blast radius", lambda: dataset_blast_radius(graph, ns, name)),
        ("lineage", lambda: lineage(graph, f"dataset:{ns}:{name}")),
    ]
    if column is not None:
        questions += [
            ("column blast radius", lambda: column_blast_radius(graph, ns, name, column)),
            ("GDPR reach", lambda: where(graph, ns, name, column)),
            ("column lineage", lambda: column_lineage(graph, f"datasetField:{ns}:{name}:{column}",
                                                      with_downstream=True)),
        ]
    if derived is not None:
        up_ns, up_name = derived["namespace"], derived["name"]
        questions += [
            ("upstream", lambda: dataset_upstream(graph, up_ns, up_name)),
            ("root cause", lambda: root_cause_dataset(graph, up_ns, up_name)),
        ]
    if derived_column is not None:
        questions.append(("column upstream", lambda: column_upstream(
            graph, derived_column["namespace"], derived_column["dataset"], derived_column["name"])))
    for what, ask in questions:
        started = time.perf_counter()
        ask()
        step(what, started)
    return done
