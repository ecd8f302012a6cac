"""Warming Neo4j after a restart, so that the first questions answer as fast as the later ones.

A Neo4j that has just started has an empty page cache, no query plans and a JVM that has compiled
nothing yet: on the 100,000-dataset graph the first blast radius of a hub table after a restart
took 6-8 s, and the hubs asked after it 150-600 ms until the JVM had compiled the walk, against
about 120 ms later on (docs/benchmarks.md, "Hubs after a restart"). Warming does what those first
questions would have done, before anyone waits for them:

1. reads the records the questions touch (``cypher/admin/warm.cypher``: runs and what they read
   and wrote, for root cause; columns and their lineage edges, then datasets, their lineage edges
   with the properties the walks read, and jobs' reads and writes), so the page cache holds them;
   the datasets' last, as what a page cache too small for the whole store keeps;
2. asks each question once (blast radius, upstream, root cause, GDPR reach, the Marquez-shaped
   lineage) of the widest hub, so that Neo4j plans each query, then the blast radius of the ten
   widest hubs twice, so that the JVM compiles the walk's code (after a restart without this, the
   hubs' blast radius took 600 ms, then fell to 130 ms over the first 30 asks).

Only reads: it never changes the graph. ``lineage serve`` runs it in the background at start
(``LINEAGE_WARM_ON_START``); ``lineage neo4j warm`` runs it by hand.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from graph.db import Graph
from graph.errors import LineageError
from impact.blast_radius import column_blast_radius, dataset_blast_radius
from impact.marquez_lineage import column_lineage, lineage
from impact.root_cause import root_cause_dataset
from impact.upstream import column_upstream, dataset_upstream
from impact.where import where


@dataclass
class Warmed:
    """What warming did: each step with its seconds, a measure of what the store reads read
    (records and characters), and the hub the questions were asked of."""

    steps: list[tuple[str, float]] = field(default_factory=list)
    read: int = 0
    hub: str | None = None

    @property
    def seconds(self) -> float:
        return sum(s for _, s in self.steps)


HUBS = 10
ROUNDS = 2


def warm(graph: Graph, timeout: float = 600.0,
         progress: Callable[[str, float], None] | None = None) -> Warmed:
    """Read the store into the page cache, then ask each question of the widest hub once and the
    blast radius of the widest hubs a few times.

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
            done.read += int(row["records"] or 0)
            step(str(row["what"]), started)
        started = time.perf_counter()
    hub = graph.read("admin/warm_sample", hubs=HUBS)[0]
    if hub["namespace"] is None:
        return done  # an empty graph: nothing to plan against
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
        try:
            ask()
        except LineageError as e:  # e.g. a timeout: the other questions are still worth warming
            what = f"{what} (stopped: {e})"
        step(what, started)
    started = time.perf_counter()
    for _ in range(ROUNDS):
        for h in hub["hubs"]:
            dataset_blast_radius(graph, h["namespace"], h["name"])
    step(f"blast radius of the {len(hub['hubs'])} widest, {ROUNDS} times", started)
    return done
