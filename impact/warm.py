"""Warming Neo4j after a restart, so that the first questions answer as fast as the later ones.

A Neo4j that has just started has an empty page cache, no query plans and a JVM that has compiled
nothing yet, so the first questions after a restart are many times slower than later ones
(measured in docs/benchmarks.md, "Hubs after a restart"). Warming does what those first
questions would have done, before anyone waits for them:

1. reads the records the questions touch (``cypher/admin/warm.cypher``: runs and what they read
   and wrote, for root cause; columns and their lineage edges, then datasets, their lineage edges
   with the properties the walks read, and jobs' reads and writes), so the page cache holds them;
   the datasets' last, as what a page cache too small for the whole store keeps;
2. asks each question once (blast radius, upstream, root cause, GDPR reach, the Marquez-shaped
   lineage) of the widest hub, so that Neo4j plans each query, then the blast radius of the ten
   widest hubs twice, so that the JVM compiles the walk's code (after a restart without this,
   the hubs' blast radius was several times slower over the first asks: docs/benchmarks.md,
   "Measurements behind the code").

Neo4j also plans a query again, at its next run, once the graph has grown enough since the plan
was made; :class:`PlanKeeper` asks the questions again when the graph has changed, so that the
planning falls on it rather than on a user (``lineage serve`` runs it every
``LINEAGE_PLAN_KEEPER_SECONDS``, 2 by default).

Only reads: it never changes the graph. ``lineage serve`` runs it in the background at start
(``LINEAGE_WARM_ON_START``); ``lineage neo4j warm`` runs it by hand.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from graph.db import Graph
from graph.errors import LineageError
from impact import lookups
from impact.blast_radius import column_blast_radius, dataset_blast_radius
from impact.marquez import catalog as marquez
from impact.marquez.lineage import column_lineage, lineage
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

Node = dict[str, str]  # {namespace, name} of a dataset, or {namespace, dataset, name} of a column


def ask_questions(graph: Graph, dataset: tuple[str, str], derived: Node | None, column: Node | None,
                  derived_column: Node | None, at_once: int = 1, job: Node | None = None
                  ) -> Iterator[tuple[str, float]]:
    """Ask each question once, so that Neo4j has a plan for each query they use: of ``dataset``
    (blast radius, lineage, Marquez's dataset and its namespace's datasets), of ``column``
    (column blast radius, GDPR reach, column lineage), of ``derived`` (upstream, root cause:
    something with an upstream), of
    ``derived_column`` (column upstream) and of ``job`` (``show job``, Marquez's job and its
    namespace's jobs), each when
    given, ``at_once`` at a time. Yields each question's name and
    seconds, in that order; a question that fails (a timeout) is named with why, and the others
    are still asked."""
    ns, name = dataset
    questions: list[tuple[str, Callable[[], Any]]] = [
        ("blast radius", lambda: dataset_blast_radius(graph, ns, name)),
        ("lineage", lambda: lineage(graph, f"dataset:{ns}:{name}")),
        ("Marquez's dataset", lambda: marquez.dataset(graph, ns, name)),
        # the first page Marquez's UI shows: the same query as one dataset's, planned apart
        # (Neo4j keys a plan by its parameters' types: no name here)
        ("Marquez's datasets", lambda: marquez.datasets(graph, ns, 25, 0)),
    ]
    if job is not None:
        questions += [("job", lambda: lookups.job(graph, job["namespace"], job["name"], 10)),
                      ("Marquez's job", lambda: marquez.job(graph, job["namespace"], job["name"])),
                      ("Marquez's jobs", lambda: marquez.jobs(graph, job["namespace"], 25, 0, None))]
    if column is not None:
        c_ns, c_ds, c_name = column["namespace"], column["dataset"], column["name"]
        questions += [
            ("column blast radius", lambda: column_blast_radius(graph, c_ns, c_ds, c_name)),
            ("GDPR reach", lambda: where(graph, c_ns, c_ds, c_name)),
            ("column lineage", lambda: column_lineage(graph, f"datasetField:{c_ns}:{c_ds}:{c_name}",
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

    def timed(question: tuple[str, Callable[[], Any]]) -> tuple[str, float]:
        what, ask = question
        started = time.perf_counter()
        try:
            ask()
        except LineageError as e:  # e.g. a timeout: the other questions are still worth asking
            what = f"{what} (stopped: {e})"
        return what, time.perf_counter() - started

    if at_once <= 1:
        yield from map(timed, questions)
        return
    with ThreadPoolExecutor(at_once, thread_name_prefix="ask") as pool:
        yield from pool.map(timed, questions)


def warm(graph: Graph, timeout: float = 600.0,
         progress: Callable[[str, float], None] | None = None) -> Warmed:
    """Read the store into the page cache, then ask each question of the widest hub once and the
    blast radius of the widest hubs a few times.

    ``timeout`` bounds each store read (seconds); ``progress`` hears each step as it ends."""
    done = Warmed()

    def record(what: str, took: float) -> None:
        done.steps.append((what, took))
        if progress:
            progress(what, took)

    def step(what: str, started: float) -> None:
        record(what, time.perf_counter() - started)

    started = time.perf_counter()
    for rows in graph.read_each("admin/warm", timeout=timeout):
        for row in rows:
            done.read += int(row["records"] or 0)
            step(str(row["what"]), started)
        started = time.perf_counter()
    hub = graph.read("admin/warm_sample", hubs=HUBS)[0]
    if hub["namespace"] is None:
        return done  # an empty graph: nothing to plan against
    ns, name = hub["namespace"], hub["name"]
    done.hub = f"{ns}:{name}"
    column = hub["column"]
    for what, took in ask_questions(
            graph, (ns, name), hub["derived"],
            {"namespace": ns, "dataset": name, "name": column} if column is not None else None,
            hub["derivedColumn"], job=hub["job"]):
        record(what, took)
    started = time.perf_counter()
    for _ in range(ROUNDS):
        for h in hub["hubs"]:
            dataset_blast_radius(graph, h["namespace"], h["name"])
    step(f"blast radius of the {len(hub['hubs'])} widest, {ROUNDS} times", started)
    return done


@dataclass
class PlanKeeper:
    """Keeps the question queries' plans fresh away from the users.

    Neo4j plans a query again when the counts its plan was made with (nodes per label,
    relationships per type) have moved by more than a share since (75% at first, shrinking to 10%
    over the seven hours after the plan: ``dbms.cypher.statistics_divergence_threshold``), at the
    next run of that query, and that run pays for the planning (up to seconds: docs/benchmarks.md,
    "Planning", and "The plan keeper's reach"). Every lineage store grows, so
    it gets there now and then. The keeper is ticked often (``lineage serve``: every
    ``LINEAGE_PLAN_KEEPER_SECONDS``); each tick reads the graph's size from the count store, and
    asks each question of a small sample (a few milliseconds each while the plans are fresh), so
    that most of those plannings fall on it:

    * when the size has changed since it last asked and the load has ended: the size held still
      since the previous tick and, given ``backlog`` (events received, events loaded: the event
      log's last sequence number and the worker's position), the worker has loaded every event
      received and none has arrived since the previous tick. The size alone is not enough: two
      ticks often see the same size in the middle of a load (a batch that outlasts a tick, or
      runs of known jobs that add nothing), and rounds asked then cost the load its CPU;
    * every ``every`` seconds (60) otherwise, changed or not, when the worker has loaded every
      event received: during a steady stream the worker keeps up, and the plans that go stale
      with time alone (the share shrinks as a plan ages) are asked again too. While the worker
      is behind (a bulk load), the keeper waits for the load's end: its rounds would take their
      CPU from the worker (at M, rounds once a minute during a load took a tenth to a sixth off
      the rate at which events became queryable). A backlog that has not moved for ``every``
      seconds means that no worker runs: the keeper stops waiting for it.

    A user who asks between a share being crossed and the keeper's next round still pays: it
    makes that rarer, not impossible.
    """

    graph: Graph
    every: float = 60.0
    at_once: int = 2  # questions asked at once: a round that plans every query ends sooner
    backlog: Callable[[], tuple[int, int]] | None = None  # (events received, events loaded)
    last: tuple[int, int] | None = None  # the size when the keeper last asked
    seen: tuple[int, ...] | None = None  # the size and backlog at the last tick
    changed_at: float = float("-inf")  # when they last changed
    asked_at: float = float("-inf")

    def tick(self, now: float | None = None) -> list[str] | None:
        """One tick: None when nothing was asked (the worker is behind; or the size is what it was
        when the keeper last asked, or it is still changing, and the keeper asked less than
        ``every`` seconds ago); else the questions asked (none when the graph has no lineage to
        ask of)."""
        now = time.monotonic() if now is None else now
        row = self.graph.read("admin/graph_size")[0]
        size = (int(row["nodes"]), int(row["relationships"]))
        received, loaded = self.backlog() if self.backlog else (0, 0)
        state = (*size, received, loaded)
        held_still = state == self.seen
        if not held_still:
            self.seen, self.changed_at = state, now
        if received > loaded and now - self.changed_at < self.every:
            return None  # the worker is behind: a load goes on (a backlog still for a period: no
            # worker runs, and the graph may change by other ways, ``lineage ingest``)
        if now - self.asked_at < self.every and (size == self.last or not held_still):
            return None
        sample = self.graph.read("admin/plan_sample")[0]
        asked: list[str] = []
        if sample["namespace"] is not None:
            asked = [what for what, _ in ask_questions(
                self.graph, (sample["namespace"], sample["name"]), sample["derived"], sample["column"],
                sample["derivedColumn"], at_once=self.at_once, job=sample["job"])]
        self.last, self.asked_at = size, now
        return asked
