"""The ingest pipeline: read → validate → transform → combine → load, in batches, with a report.

An invalid event is rejected alone with its reasons. If Neo4j refuses a batch because of one
event's data, the batch is split until that event is isolated; its neighbours still load.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from graph.db import Graph
from graph.errors import QueryError
from ingest.batch import combine
from ingest.load import Plan, load
from ingest.read import RawItem
from ingest.transform import Rows, transform
from ingest.validate import ValidEvent, validate

log = logging.getLogger(__name__)

# Collect the youngest generation every 1,000,000 allocations (Python's default: 700).
GC_THRESHOLDS = (1_000_000, 20, 100)


def relax_gc() -> None:
    """Make Python's cyclic garbage collector run far less often in a process that ingests.

    A batch allocates hundreds of thousands of small dicts and lists and frees them as a whole;
    they form no reference cycles, so the collector's passes over them find nothing and, with the
    default thresholds, took about a third of the time to prepare a batch (bench events, 5,000 per
    batch: 340 us/event with the defaults, 225 with a young generation of 50,000, 222 with the
    collector off). Measured again in session 7 (20,000 bench events, one run each): 228 us/event
    at 50,000, 220 at 200,000, 201 at 1,000,000, 201-207 with the collector off. Only cyclic
    garbage waits longer; everything else is still freed by reference counting at once.
    """
    gc.set_threshold(*GC_THRESHOLDS)


@dataclass(frozen=True)
class Rejection:
    """An event that was not loaded: where it was and why."""

    where: str
    reasons: tuple[str, ...]


@dataclass
class IngestReport:
    """What an ingest did: events read, loaded, duplicates (already there), rejections."""

    read: int = 0
    loaded: int = 0
    duplicates: int = 0
    rejected: list[Rejection] = field(default_factory=list)
    jobs: set[tuple[str, str]] = field(default_factory=set)
    """Jobs whose reads or writes this ingest touched (their coarse edges depend on them)."""

    def merge(self, other: IngestReport) -> None:
        self.read += other.read
        self.loaded += other.loaded
        self.duplicates += other.duplicates
        self.rejected.extend(other.rejected)
        self.jobs |= other.jobs


@dataclass(frozen=True)
class Located:
    """A valid event and where it came from."""

    where: str
    event: ValidEvent


def validate_items(items: Iterable[RawItem], report: IngestReport) -> Iterator[Located]:
    """Valid events of ``items``; every invalid one is added to ``report.rejected``."""
    for item in items:
        report.read += 1
        if item.error is not None:
            report.rejected.append(Rejection(item.where, (item.error,)))
            continue
        result = validate(item.obj)
        if isinstance(result, ValidEvent):
            yield Located(item.where, result)
        else:
            report.rejected.append(Rejection(item.where, tuple(result)))


@dataclass(frozen=True)
class Prepared:
    """A batch of valid events and the plan of its writes, ready to load."""

    batch: list[Located]
    plan: Plan


class Ingester:
    """Loads valid events into the graph in batches; remembers digests seen in this session."""

    def __init__(self, graph: Graph, batch_size: int = 500, facet_max_bytes: int = 16_384) -> None:
        self.graph = graph
        self.batch_size = batch_size
        self.facet_max_bytes = facet_max_bytes
        self._seen: set[str] = set()

    def ingest(self, items: Iterable[RawItem], report: IngestReport,
               progress: Callable[[int], None] = lambda n: None) -> IngestReport:
        """Validate and load ``items``; ``progress`` is called with the count of each batch."""
        for prepared in self.prepare(items, report, progress):
            self.load(prepared, report)
            progress(len(prepared.batch))
        return report

    def prepare(self, items: Iterable[RawItem], report: IngestReport,
                progress: Callable[[int], None] = lambda n: None) -> Iterator[Prepared]:
        """The CPU part, no I/O: valid, not yet seen events in batches with their combined rows.

        Invalid events go to ``report.rejected``; events seen before in this session count as
        duplicates (and are passed to ``progress``).
        """
        batch: list[Located] = []
        for located in validate_items(items, report):
            if located.event.digest in self._seen:
                report.duplicates += 1
                progress(1)
                continue
            self._seen.add(located.event.digest)
            batch.append(located)
            if len(batch) >= self.batch_size:
                yield self._rows(batch)
                batch = []
        if batch:
            yield self._rows(batch)

    def _rows(self, batch: list[Located]) -> Prepared:
        rows = Rows()
        for located in batch:
            rows.extend(transform(located.event, self.facet_max_bytes))
        return Prepared(batch, Plan(combine(rows)))

    def load(self, prepared: Prepared, report: IngestReport) -> None:
        """Write one prepared batch in one transaction (split until a refused event is alone)."""
        self._load(prepared.batch, report, prepared.plan)

    def _load(self, batch: list[Located], report: IngestReport, plan: Plan | None = None) -> None:
        if plan is None:
            plan = self._rows(batch).plan
        try:
            duplicates = load(self.graph, plan)
        except QueryError as e:
            if len(batch) == 1:
                log.warning("event at %s could not be loaded: %s", batch[0].where, e)
                report.rejected.append(Rejection(batch[0].where, (f"could not be loaded: {e}",)))
                return
            half = len(batch) // 2
            self._load(batch[:half], report)
            self._load(batch[half:], report)
            return
        report.duplicates += duplicates
        report.loaded += len(batch) - duplicates
        report.jobs |= {(r["jobNamespace"], r["jobName"])
                        for r in plan.rows.job_reads + plan.rows.job_writes}
