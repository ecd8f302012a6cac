"""The ingest pipeline: read → validate → transform → combine → load, in batches, with a report.

An invalid event is rejected alone with its reasons. No exception caused by one event's content
leaves the pipeline: an event whose preparation fails is rejected alone, and if Neo4j (or the
driver) refuses a batch, for its data or for its size, the batch is split until the refused event
is alone; its neighbours still load. Only an unreachable Neo4j stops a batch (the caller retries).
"""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from graph.db import Graph, QueryStep
from graph.errors import DatabaseUnavailable, TooLarge
from ingest import sample_events as sample
from ingest.combine import combine
from ingest.handoff import applied_by_worker, took_over
from ingest.load import Plan, SeenCurrent, load
from ingest.log.protocol import Checked, EventLog
from ingest.log.sqlite import encode
from ingest.read import RawItem
from ingest.rows import Rows
from ingest.transform import transform
from ingest.validate import ValidEvent, logged, validate

log = logging.getLogger(__name__)

# Collect the youngest generation every 100,000 allocations (Python's default: 700), the older
# ones every 10 collections of the younger (as the default)
GC_THRESHOLDS = (100_000, 10, 10)


def relax_gc() -> None:
    """Make Python's cyclic garbage collector run less often in a process that ingests or serves.

    A batch allocates many small dicts and lists and frees them as a whole; they form no cycles,
    so the collector's passes over them find nothing, and at the default thresholds those passes
    were a large share of preparing a batch. What does form cycles (the Neo4j driver's objects of
    each query, a request's) still waits for only one young-generation threshold: a larger one
    let that garbage grow a worker and the API far past what they use. Both measured in
    docs/benchmarks.md ("Ingest, end to end", "A worker's memory").
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
    too_large: int = 0
    """Batches Neo4j refused for their size (and that were split): the worker shrinks its batches."""
    largest_load: int = 0
    """The most events one transaction of this ingest loaded: after a refusal for size, the
    worker's batches shrink to it."""
    by_worker: int = 0
    """Events this ingest appended to the log and the running worker loaded (ingest.handoff); its
    own figures count their duplicates and dead letters."""

    def merge(self, other: IngestReport) -> None:
        self.read += other.read
        self.loaded += other.loaded
        self.by_worker += other.by_worker
        self.duplicates += other.duplicates
        self.rejected.extend(other.rejected)
        self.jobs |= other.jobs
        self.too_large += other.too_large
        self.largest_load = max(self.largest_load, other.largest_load)


@dataclass(frozen=True)
class Located:
    """A valid event and where it came from."""

    where: str
    event: ValidEvent
    received: float | None = None
    """When the event log took it, if it came from the log (see ingest.transform)."""


def validate_items(items: Iterable[RawItem], report: IngestReport) -> Iterator[Located]:
    """Valid events of ``items``; every invalid one is added to ``report.rejected``.

    An item the API already validated (``checked``, read back from the event log) is only read
    again (:func:`ingest.validate.logged`): each event is validated once."""
    for item in items:
        report.read += 1
        if item.error is not None:
            report.rejected.append(Rejection(item.where, (item.error,)))
            continue
        try:
            result = (logged(item.obj, item.checked, item.digest)
                      if item.checked >= Checked.VALIDATED else validate(item.obj))
        except Exception as e:  # a validator bug must not stop the others: reject this one
            log.exception("validating the event at %s failed", item.where)
            result = [f"could not be validated: {_describe(e)}"]
        if isinstance(result, ValidEvent):
            yield Located(item.where, result, item.received)
        else:
            report.rejected.append(Rejection(item.where, tuple(result)))


@dataclass(frozen=True)
class Prepared:
    """A batch of valid events and the plan of its writes, ready to load."""

    batch: list[Located]
    plan: Plan
    seqs: list[int] = field(default_factory=list)
    """Where the journal appended the batch's events (one per event), when there is one."""


class Ingester:
    """Loads valid events into the graph in batches; remembers the digests it has seen.

    With a ``journal`` (an ingest that does not read the event log: files, aliases, Marquez's
    legacy writes) each batch's events are appended to the log first, so that the log stays the
    record of what the graph holds and a replay rebuilds it; then the running worker loads them
    (ingest.handoff: the graph's one writer), or, with none, this ingester does, moving the
    worker's position past them if nothing else came between and dead-lettering an event Neo4j
    refused as the worker would."""

    def __init__(self, graph: Graph, batch_size: int = 500, facet_max_bytes: int = 16_384,
                 journal: EventLog | None = None, seen: SeenCurrent | None = None,
                 handoff_wait: float = 10.0) -> None:
        self.graph = graph
        self.batch_size = batch_size
        self.facet_max_bytes = facet_max_bytes
        self.journal = journal
        self.handoff_wait = handoff_wait
        """With a journal: how long to wait for a running worker to load what was appended
        before loading it here (ingest.handoff)."""
        self.seen = seen if seen is not None else SeenCurrent()  # versions seen current (ingest.load)
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

        Invalid events go to ``report.rejected``; events this ingester has seen before count as
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
                yield self._journaled(self._rows(batch, report))
                batch = []
        if batch:
            yield self._journaled(self._rows(batch, report))

    def _journaled(self, prepared: Prepared) -> Prepared:
        if self.journal is None or not prepared.batch:
            return prepared
        seqs = self.journal.append_encoded(
            [located.event.text or encode([located.event.raw])[0] for located in prepared.batch],
            Checked.SCRUBBED)
        return Prepared(prepared.batch, prepared.plan, seqs)

    def _rows(self, batch: list[Located], report: IngestReport | None = None) -> Prepared:
        """The batch's combined rows. An event whose transform fails is left out and rejected
        (into ``report``); if combining the batch fails, each event is combined alone to find
        the ones that cannot be."""
        rows = Rows()
        kept: list[Located] = []
        for located in batch:
            try:
                rows.extend(transform(located.event, self.facet_max_bytes, located.received))
            except Exception as e:
                self._reject(report, located, "could not be transformed", e)
                continue
            kept.append(located)
        try:
            return Prepared(kept, Plan(combine(rows), self.seen))
        except Exception:
            log.exception("combining a batch of %d events failed; combining each alone", len(kept))
        alone = []
        for located in kept:
            try:
                Plan(combine(transform(located.event, self.facet_max_bytes, located.received)),
                     self.seen)
            except Exception as e:
                self._reject(report, located, "could not be combined", e)
                continue
            alone.append(located)
        rows = Rows()
        for located in alone:
            rows.extend(transform(located.event, self.facet_max_bytes, located.received))
        return Prepared(alone, Plan(combine(rows), self.seen))

    @staticmethod
    def _reject(report: IngestReport | None, located: Located, what: str, e: Exception) -> None:
        log.exception("the event at %s %s", located.where, what)
        if report is not None:
            report.rejected.append(Rejection(located.where, (f"{what}: {_describe(e)}",)))

    def load(self, prepared: Prepared, report: IngestReport) -> None:
        """Write one prepared batch in one transaction (split until a refused event is alone)."""
        if self.journal is not None and prepared.seqs and applied_by_worker(
                self.journal, prepared.seqs[-1], self.handoff_wait):
            report.by_worker += len(prepared.batch)  # the graph's one writer (ingest.handoff)
            return
        refused = len(report.rejected)
        self._load(prepared.batch, report, prepared.plan)
        if self.journal is not None and prepared.seqs:
            seq_of = {located.where: (seq, located.event.raw)
                      for located, seq in zip(prepared.batch, prepared.seqs, strict=True)}
            for rejection in report.rejected[refused:]:
                if rejection.where in seq_of:
                    seq, raw = seq_of[rejection.where]
                    self.journal.add_dead_letter(seq, raw, "; ".join(rejection.reasons))
            took_over(self.journal, prepared.seqs[0], prepared.seqs[-1])

    def _load(self, batch: list[Located], report: IngestReport, plan: Plan | None = None) -> None:
        if not batch:
            return
        if plan is None:
            prepared = self._rows(batch, report)
            batch, plan = prepared.batch, prepared.plan
            if not batch:
                return
        try:
            duplicates = load(self.graph, plan)
        except DatabaseUnavailable:
            raise  # nothing is wrong with the events: the caller holds them and retries
        except Exception as e:  # the driver's OverflowError and TypeError too, not only Neo4j's
            if isinstance(e, TooLarge):
                report.too_large += 1
            if len(batch) == 1:
                log.warning("event at %s could not be loaded: %s", batch[0].where, _describe(e))
                report.rejected.append(Rejection(batch[0].where,
                                                 (f"could not be loaded: {_describe(e)}",)))
                return
            log.warning("a batch of %d events was refused (%s); splitting it", len(batch),
                        type(e).__name__)
            half = len(batch) // 2
            self._load(batch[:half], report)
            self._load(batch[half:], report)
            return
        report.duplicates += duplicates
        report.loaded += len(batch) - duplicates
        report.largest_load = max(report.largest_load, len(batch))
        report.jobs |= {(r["jobNamespace"], r["jobName"])
                        for r in plan.rows.job_reads + plan.rows.job_writes}


def _describe(e: BaseException) -> str:
    """An exception as a reason: its kind and message, bounded (a message may quote the event)."""
    text = f"{type(e).__name__}: {e}"
    return text if len(text) <= 1000 else text[:1000] + "…"


def plan_ahead(graph: Graph, commit: bool = True) -> list[str]:
    """Have Neo4j plan every ingest query before the first batch: the sample events
    (ingest.sample_events) prepared as a batch is, written and rolled back in one transaction.
    A server just started plans them all at the first batch otherwise, which made it many times
    slower than the next (docs/benchmarks.md, "The first answers after a start"). With
    ``commit``, the sample is then written again and committed, and removed: the first commit
    after a start was still slower than the next. Nothing of the sample is kept. Returns the
    queries the rehearsal ran."""
    ran: list[str] = []
    prepared = _sample_batch(graph)

    def then(results: list[list[dict[str, Any]]]) -> Sequence[QueryStep]:
        steps = prepared.plan.then(results)
        ran.extend(name for name, _ in steps)
        return steps

    ran.extend(name for name, _ in prepared.plan.first)
    graph.rehearse(prepared.plan.first, then, lambda _: None)
    if commit:
        forget: QueryStep = ("admin/forget_sample", {
            "namespace": sample.NS, "datasets": list(sample.DATASETS), "jobs": list(sample.JOBS),
            "runs": list(sample.RUNS)})
        graph.write([forget])  # what a worker stopped between the two writes left
        committed = _sample_batch(graph)  # a step's rows are spent once run (graph.db._run)
        graph.write(committed.plan.first, committed.plan.then)
        graph.write([forget])
    return ran


def _sample_batch(graph: Graph) -> Prepared:
    report = IngestReport()
    [prepared] = Ingester(graph).prepare([RawItem(f"sample#{i}", obj=e)
                                          for i, e in enumerate(sample.sample_events())], report)
    if report.rejected:  # the sample is ours: a rejection is a bug in it, said plainly
        raise ValueError(f"the rehearsal sample was refused: {report.rejected}")
    return prepared
