"""The ingest worker: consumes the event log into Neo4j, in micro-batches.

Each batch goes through the same validation, transform and loader as ``lineage ingest``. The
worker records its position in the log only after Neo4j has committed the batch: a crash at any
point means the batch is applied again, and since every write is an idempotent MERGE on natural
keys (with event digests recognising re-sent events) the graph ends the same (at-least-once
delivery, exactly-once effect). Neo4j down or restarting, or the log briefly unwritable: the
worker waits with backoff and holds its position; nothing is dropped. An event that validates but
cannot be loaded goes to the dead letters with its reason, and the rest of its batch goes on.

No event can stop the worker: a batch Neo4j refuses is split until the refused event is alone (see
:mod:`ingest.pipeline`), and if anything else goes wrong with a batch the worker bisects it: the
next batches are half as large, halving again at each failure, until the event that fails is
alone and dead-lettered; then full batches again at once (a poison event costs about log2 of the
batch in retries, not the batch one event at a time).

Metadata commands (ingest.commands, Marquez's namespace and tag writes and soft deletes) are
entries of the log too: a batch holds events or commands, never both, so each command is applied
in its place among the events. A batch refused for its size makes
the worker's batches smaller (as large as the largest part of it that loaded, at most half of it);
they grow back a quarter at a time after batches that pass.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from graph.db import Graph
from graph.errors import DatabaseUnavailable
from graph.log_context import bound
from graph.settings import WORKER_BATCH, WORKER_BATCH_BYTES, Settings
from ingest import commands
from ingest.load import SeenCurrent
from ingest.log.protocol import WORKER, NotOffered, RetriedInPlace, WorkerFigures
from ingest.log.sqlite import Entry, EventLog, LogError, open_event_log
from ingest.pipeline import Ingester, IngestReport, Prepared
from ingest.read import RawItem, from_log

log = logging.getLogger(__name__)

CONSUMER = WORKER
# for BUSY_SECONDS after a batch the worker looks for new events every BUSY_POLL seconds, not
# every `poll`: a client waiting for its event to load waits a quarter as long, and an idle
# worker costs what it did (docs/benchmarks.md, "Visible when acknowledged")
BUSY_SECONDS = 10.0
BUSY_POLL = 0.02


class Activity:
    """When the worker last wrote to Neo4j, for work that gives way to ingest (a retention run
    waits while :meth:`busy`: graph.retention.run)."""

    QUIET = 1.0
    """Seconds after a batch's write before the worker counts as idle: between the batches of a
    backlog the worker is back at Neo4j within milliseconds."""

    def __init__(self) -> None:
        self._writing = 0
        self._wrote_at = float("-inf")
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        with self._lock:
            self._writing += 1
        try:
            yield
        finally:
            with self._lock:
                self._writing -= 1
                self._wrote_at = time.monotonic()

    def busy(self) -> bool:
        """A batch is being written, or one was less than QUIET seconds ago."""
        with self._lock:
            return self._writing > 0 or time.monotonic() - self._wrote_at < self.QUIET


def caught_up(settings: Settings, timeout: float = 120.0) -> bool:
    """Wait up to ``timeout`` seconds for the worker (or the workers of a Kafka log) to load
    every entry the settings' event log holds now; whether they did."""
    events = open_event_log(settings)
    try:
        last, started = events.last_seq(), time.monotonic()
        while events.position(CONSUMER) < last and time.monotonic() - started < timeout:
            time.sleep(0.2)
        return events.position(CONSUMER) >= last
    finally:
        events.close()


# How long a thread may hold the GIL while another waits for it (Python's default: 5 ms); see run().
SWITCH_INTERVAL = 0.0005


class _ShortSwitches:
    """The switch interval is the process's: while any worker loop runs it is SWITCH_INTERVAL,
    and the interval from before the first loop comes back when the last loop ends (loops that
    overlap, as several workers in one process do, must not restore each other's setting)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loops = 0
        self._before = 0.0

    def __enter__(self) -> None:
        with self._lock:
            if self._loops == 0:
                self._before = sys.getswitchinterval()
                sys.setswitchinterval(SWITCH_INTERVAL)
            self._loops += 1

    def __exit__(self, *_: object) -> None:
        with self._lock:
            self._loops -= 1
            if self._loops == 0:
                sys.setswitchinterval(self._before)


_short_switches = _ShortSwitches()


@dataclass
class BatchResult:
    events: int
    loaded: int
    duplicates: int
    dead: int
    seconds: float
    datasets: frozenset[tuple[str, str]] = frozenset()
    """The datasets the batch's events touched (ingest.rows.Rows.touched)."""
    handoffs: frozenset[tuple[str, str]] = frozenset()
    """The jobs its explicit lineage joined to others (ingest.rows.Rows.handoffs)."""
    commands: bool = False
    """The batch applied metadata commands (ingest.commands)."""
    jobs: frozenset[tuple[str, str]] = frozenset()
    """The jobs its events named (ingest.rows.Rows.jobs_named)."""
    began: float = 0.0
    """When its writes began (``time.monotonic()``): they were visible no earlier."""
    unprinted: frozenset[tuple[str, str]] = frozenset()
    """Datasets it gave lineage no print tells (ingest.rows.Rows.unprinted)."""
    through: int = 0
    """The log's seq of its last entry: the worker's position once it is loaded."""


class Worker:
    def __init__(self, graph: Graph, events: EventLog, batch: int = WORKER_BATCH,
                 facet_max_bytes: int = 16_384, consumer: str = CONSUMER,
                 batch_bytes: int = WORKER_BATCH_BYTES) -> None:
        self.graph = graph
        self.log = events
        self.batch = batch  # the configured bounds of a micro-batch
        self.batch_bytes = batch_bytes
        self.facet_max_bytes = facet_max_bytes
        self.consumer = consumer
        self.limit = batch  # the bounds in force: smaller after a batch refused for its size
        self.limit_bytes = batch_bytes
        # after an unexpected failure: batches of at most _suspect_size up to this seq (a bisection)
        self._suspect_until = 0
        self._suspect_size = batch
        self.seen = SeenCurrent()  # versions seen current, across batches (ingest.load)
        self.activity = Activity()

    def lag(self) -> int:
        return self.log.last_seq() - self.log.position(self.consumer)

    def run_once(self) -> BatchResult | None:
        """Load the next micro-batch, if any. Raises DatabaseUnavailable with the position held."""
        return self._guarded(lambda: self._prepare(self.log.position(self.consumer)))

    def _guarded(self, prepare: Callable[[], _Pending | None],
                 apply: Callable[[_Pending], BatchResult] | None = None) -> BatchResult | None:
        """Prepare and apply one batch; an unexpected error (a bug, not Neo4j being away) makes
        the worker bisect the batch (see the module's doc), and a single event that still fails
        is dead-lettered: no event stops the worker."""
        pending: _Pending | None = None
        try:
            pending = prepare()
            return None if pending is None else (apply or self._apply)(pending)
        except (DatabaseUnavailable, LogError):
            raise
        except Exception as e:
            position = self.log.position(self.consumer)
            if pending is None or len(pending.entries) > 1:
                size = len(pending.entries) if pending else self._batch_limit(position)
                end = pending.entries[-1].seq if pending else position + size
                log.exception("a batch of %d events after seq %d failed; trying halves of it",
                              size, position)
                self._suspect_until = max(self._suspect_until, end)
                self._suspect_size = max(1, size // 2)
                return None
            entry = pending.entries[0]
            log.exception("event seq %d could not be loaded; dead-lettered", entry.seq)
            self.log.add_dead_letter(entry.seq, entry.event,
                                     f"could not be loaded: {type(e).__name__}: {e}"[:2000])
            self.log.commit(self.consumer, entry.seq)
            self._suspect_until = 0  # found: full batches again
            return BatchResult(1, 0, 0, 1, 0.0, through=entry.seq)

    def _batch_limit(self, position: int) -> int:
        """The events the next batch may hold: fewer while a failed batch is being bisected."""
        return min(self.limit, self._suspect_size) if position < self._suspect_until else self.limit

    def bisecting(self, position: int) -> bool:
        return position < self._suspect_until

    def _prepare(self, position: int) -> _Pending | None:
        """Read the micro-batch after ``position`` and do its CPU work (validate, transform)."""
        # bounded in events and in bytes: a backlog of large events stays a transaction Neo4j's
        # heap can hold
        entries = _same_kind(self.log.read(position, self._batch_limit(position),
                                           self.limit_bytes))
        if not entries:
            return None
        started = time.perf_counter()
        report = IngestReport()
        # one Neo4j transaction per micro-batch
        ingester = Ingester(self.graph, self.batch, self.facet_max_bytes, seen=self.seen)
        items = [from_log(e) for e in entries if e.kind == "event"]
        prepared = list(ingester.prepare(items, report))
        return _Pending(entries, report, ingester, prepared, time.perf_counter() - started)

    def _apply(self, pending: _Pending) -> BatchResult:
        """Write a prepared micro-batch, then record dead letters and the new position."""
        with bound(batch=f"{pending.entries[0].seq}-{pending.entries[-1].seq}"), \
                self.activity.writing():
            result = self._write(pending)
            log.info("loaded %d events: %d new, %d duplicates, %d dead letters, %.2f s; lag %d",
                     result.events, result.loaded, result.duplicates, result.dead, result.seconds,
                     self.lag())
        return result

    def _write(self, pending: _Pending) -> BatchResult:
        started = time.perf_counter()
        entries, report = pending.entries, pending.report
        began = time.monotonic()
        for prepared in pending.prepared:
            pending.ingester.load(prepared, report)  # DatabaseUnavailable propagates
        if entries[0].kind == "command":
            report.loaded += commands.apply_all(self.graph, (e.event for e in entries))
        by_seq = {e.seq: e for e in entries}
        for rejection in report.rejected:
            seq = int(rejection.where.removeprefix("log#"))
            self.log.add_dead_letter(seq, by_seq[seq].event, "; ".join(rejection.reasons))
        self.log.commit(self.consumer, entries[-1].seq)  # only after Neo4j committed
        self._adapt(len(entries), report.too_large, report.largest_load)
        # the batch's own work: its preparation (perhaps done ahead, while the previous batch was
        # written) and its write, not the time it waited for its turn
        seconds = pending.prepare_seconds + time.perf_counter() - started
        self._record(
            {"last_batch_events": len(entries), "last_batch_seconds": seconds,
             "last_commit_unix": time.time()},
            add={"batches_total": 1, "events_total": len(entries),
                 "dead_letters_total": len(report.rejected),
                 "batch_seconds_total": seconds})
        rows = [prepared.plan.rows for prepared in pending.prepared]
        return BatchResult(len(entries), report.loaded, report.duplicates, len(report.rejected),
                           seconds, frozenset(d for r in rows for d in r.touched()),
                           frozenset(j for r in rows for j in r.handoffs()),
                           entries[0].kind == "command",
                           frozenset(j for r in rows for j in r.jobs_named()), began,
                           frozenset(d for r in rows for d in r.unprinted()), entries[-1].seq)

    def _adapt(self, events: int, too_large: int, largest_load: int) -> None:
        """After a batch Neo4j refused for its size, shrink the batch bounds to the largest part
        of it that loaded (at most half of it); grow them back by a quarter after a full batch
        that passed whole."""
        if too_large:
            self.limit = max(1, min(events // 2, largest_load or 1))
            share = self.limit / max(1, events)
            self.limit_bytes = max(64 * 1024, int(self.limit_bytes * min(0.5, share)))
            log.warning("Neo4j refused a batch of %d events for its size: batches are now at most "
                        "%d events and %d bytes", events, self.limit, self.limit_bytes)
        elif events >= self.limit and (self.limit < self.batch or self.limit_bytes < self.batch_bytes):
            self.limit = min(self.batch, self.limit + max(1, self.limit // 4))
            self.limit_bytes = min(self.batch_bytes, self.limit_bytes + self.limit_bytes // 4)

    def run(self, stop: threading.Event, poll: float = 0.05,
            on_batch: Callable[[BatchResult], None] = lambda r: None) -> None:
        """Consume until ``stop`` is set; back off while Neo4j is unavailable.

        While Neo4j writes one micro-batch, a second thread reads and transforms the next, so the
        Python work and the database work overlap. The position still moves one committed batch
        at a time; a prepared batch is thrown away when its predecessor fails.

        The two threads share the GIL. Each time the writing thread comes back from the socket it
        must wait for the preparing thread to give the GIL up, 5 ms by default, and a batch makes
        dozens of such trips: while the loop runs, the switch interval is 0.5 ms, which made the
        worker alone faster (docs/benchmarks.md, "Measurements behind the code").
        """
        with _short_switches:
            self._run(stop, poll, on_batch)

    def _run(self, stop: threading.Event, poll: float,
             on_batch: Callable[[BatchResult], None]) -> None:
        failures = 0
        last_batch = float("-inf")
        ahead: Future[_Pending | None] | None = None
        with ThreadPoolExecutor(1, thread_name_prefix="worker-prepare") as pool:
            while not stop.is_set():
                loop = _Turn(self, pool, ahead)
                try:
                    result = self._guarded(loop.prepare, loop.apply)
                except (DatabaseUnavailable, LogError) as e:
                    loop.drop_ahead()
                    ahead = None
                    failures += 1
                    wait = min(30.0, 0.5 * 2 ** min(failures, 6))
                    what = "Neo4j" if isinstance(e, DatabaseUnavailable) else "the event log"
                    log.warning("%s unavailable (%s); holding position, retrying in %.1f s",
                                what, e, wait)
                    if isinstance(e, DatabaseUnavailable):
                        self._set_stats_quietly({"neo4j_unavailable": 1})
                    stop.wait(wait)
                    continue
                if result is None:
                    loop.drop_ahead()  # nothing to do, or the batch is bisected
                    ahead = None
                    if loop.found is None:
                        # soon after a batch, more events usually follow (clients that wait for
                        # their writes to load: docs/benchmarks.md, "Visible when acknowledged"):
                        # look again at once; an idle worker looks every ``poll``
                        busy = time.monotonic() - last_batch < BUSY_SECONDS
                        stop.wait(min(poll, BUSY_POLL) if busy else poll)
                    continue
                last_batch = time.monotonic()
                ahead = loop.ahead
                if failures:
                    log.warning("resuming")
                    self._set_stats_quietly({"neo4j_unavailable": 0})
                    failures = 0
                on_batch(result)

    def _record(self, values: dict[str, float], add: dict[str, float] | None = None) -> None:
        """Leave the worker's figures where the API's /metrics reads them, if the log keeps
        them (on Kafka they stay in the worker's log lines)."""
        if isinstance(self.log, WorkerFigures):
            self.log.set_stats(values, add)

    def _set_stats_quietly(self, values: dict[str, float]) -> None:
        with contextlib.suppress(LogError):
            self._record(values)


class _Turn:
    """One turn of the run loop: the batch prepared ahead (or read now), applied while the next
    one is prepared in the pool, unless the worker is bisecting a batch that failed."""

    def __init__(self, worker: Worker, pool: ThreadPoolExecutor,
                 given: Future[_Pending | None] | None) -> None:
        self.worker, self.pool, self.given = worker, pool, given
        self.found: _Pending | None = None
        self.ahead: Future[_Pending | None] | None = None

    def prepare(self) -> _Pending | None:
        w = self.worker
        self.found = (self.given.result() if self.given is not None
                      else w._prepare(w.log.position(w.consumer)))
        return self.found

    def apply(self, pending: _Pending) -> BatchResult:
        w = self.worker
        if not w.bisecting(pending.entries[-1].seq):
            self.ahead = self.pool.submit(w._prepare, pending.entries[-1].seq)
        return w._apply(pending)

    def drop_ahead(self) -> None:
        if self.ahead is not None:
            self.ahead.cancel()  # a running preparation finishes and is dropped
            self.ahead = None


def _same_kind(entries: list[Entry]) -> list[Entry]:
    """The first entries up to the first of another kind: a batch of events, or of commands,
    so that each command is applied in its place among the events."""
    for i, entry in enumerate(entries):
        if entry.kind != entries[0].kind:
            return entries[:i]
    return entries


@dataclass
class _Pending:
    """A micro-batch read from the log and prepared, not yet written."""

    entries: list[Entry]
    report: IngestReport
    ingester: Ingester
    prepared: list[Prepared]
    prepare_seconds: float


def retry_dead_letters(graph: Graph, events: EventLog, facet_max_bytes: int = 16_384) -> tuple[int, int]:
    """Try each unresolved dead letter again; returns (now loaded, still failing). A log whose
    dead letters cannot be resolved in place (a Kafka topic) raises NotOffered."""
    if not isinstance(events, RetriedInPlace):
        raise NotOffered("dead letters of a Kafka log stay in their topic: produce an event "
                         "again to load it")
    ok = failed = 0
    for dl in events.dead_letters():
        if commands.is_command(dl.event):
            try:
                commands.apply(graph, commands.Command.of(dl.event))
            except commands.UnknownCommand as e:
                events.resolve_dead_letter(dl.id, False, str(e))
                failed += 1
                continue
            events.resolve_dead_letter(dl.id, True)
            ok += 1
            continue
        report = Ingester(graph, 1, facet_max_bytes).ingest(
            [RawItem(f"dead-letter#{dl.id}", obj=dl.event)], IngestReport())
        if report.rejected:
            events.resolve_dead_letter(dl.id, False, "; ".join(report.rejected[0].reasons))
            failed += 1
        else:
            events.resolve_dead_letter(dl.id, True)
            ok += 1
    return ok, failed
