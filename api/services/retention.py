"""Retention of the graph and of the event log together (docs/graph-model.md, "Retention"): the
graph folds and removes by its windows (graph.retention.run), then the log's entries older than
the detailed window that the worker has loaded move to the archive (ingest.log.archive). A
Kafka topic lets entries go by its own retention (``retention.ms``), which each run sets to the
detailed window and a day: the run first copies to the archive what the consumer group loaded
that was produced before the detailed window."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from graph.db import Graph
from graph.errors import LineageError
from graph.retention.run import Retained, last_run, retain, store_bytes
from graph.settings import Settings
from ingest.log.archive import Archived, archive, archive_topic, archived
from ingest.log.protocol import WORKER, EventLog, History, Partitioned

log = logging.getLogger(__name__)

TOPIC_MARGIN = timedelta(days=1)
"""How much longer than the detailed window a Kafka topic keeps its messages: retention runs
(hourly by default) have a day to archive a message before the broker lets it go."""


def topic_retention_ms(settings: Settings) -> int:
    """The ``retention.ms`` of the log's Kafka topic: the detailed window and a day."""
    window = timedelta(days=settings.retention_detailed_days) + TOPIC_MARGIN
    return int(window.total_seconds() * 1000)


@dataclass
class Kept:
    graph: Retained
    log: Archived | None  # None: nothing of the log was archived (no windows yet)

    def as_dict(self) -> dict[str, Any]:
        found = self.graph.as_dict()
        found["log"] = None if self.log is None else {
            "archived": self.log.entries, "files": self.log.files, "keptInLog": self.log.kept}
        return found


def keep_windows(graph: Graph, events: EventLog, settings: Settings,
                 say: Callable[[str], None] = lambda line: None, pace: float = 0.0,
                 busy: Callable[[], bool] = lambda: False) -> Kept:
    """One retention run over the graph (giving way to ingest while ``busy()``, its
    transactions paced by ``pace``: graph.retention.run), then the log."""
    done = retain(graph, settings.retention_detailed_days, settings.retention_summary_days, say,
                  pace, busy)
    if isinstance(events, Partitioned):  # by when the broker received them, as it lets them go
        if events.keep_for(topic_retention_ms(settings)):
            say(f"the Kafka topic keeps messages {settings.retention_detailed_days} days and one")
        before = datetime.now(UTC) - timedelta(days=settings.retention_detailed_days)
        taken = archive_topic(events, settings.archive_dir, before)
        if taken.entries:
            say(f"archived {taken.entries:,} Kafka messages to {settings.archive_dir}")
        return Kept(done, taken)
    if done.windows is None or not isinstance(events, History):
        return Kept(done, None)
    moved = archive(events, settings.archive_dir, done.windows.detailed_since,
                    events.position(WORKER))
    if moved.entries:
        say(f"archived {moved.entries:,} log entries to {settings.archive_dir}")
    return Kept(done, moved)


class Keeping:
    """Retention on a schedule (LINEAGE_RETENTION_INTERVAL seconds), on a thread of the worker's
    process: its small transactions wait while the worker writes (``busy``, the worker's
    Activity), so that they fill the gaps between batches and hold none up for long. Several
    workers (a Kafka consumer group) each keep it: the runs they fold are taken one transaction
    at a time under one lock (cypher/retention/fold_runs.cypher), so a run is folded once."""

    def __init__(self, graph: Graph, events: EventLog, settings: Settings,
                 busy: Callable[[], bool] = lambda: False) -> None:
        self.graph, self.events, self.settings, self.busy = graph, events, settings, busy
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="retention", daemon=True)
        self.last: Kept | None = None

    def start(self) -> Keeping:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=30)

    def _loop(self) -> None:
        while not self.stopping.wait(self.settings.retention_interval):
            try:
                self.last = keep_windows(self.graph, self.events, self.settings,
                                         pace=self.settings.retention_pace, busy=self.busy)
            except LineageError as e:
                log.warning("retention: a run failed (%s); the next one finishes it", e)
                continue
            g = self.last.graph
            log.info("retention: folded %d runs, removed %d edges and %d nodes%s in %.1f s",
                     g.folded, g.edges, sum(g.nodes.values()),
                     f", archived {self.last.log.entries} log entries"
                     if self.last.log is not None and self.last.log.entries else "", g.took)


@dataclass(frozen=True)
class Figures:
    """Retention as ``/metrics``, ``/status`` and ``lineage status`` say it."""

    last: dict[str, Any] | None  # the last run (graph.retention.run.last_run), None before one
    archive_entries: int
    archive_bytes: int
    store_bytes: int | None  # the local Neo4j's files; None for a server of your own

    def as_dict(self) -> dict[str, Any]:
        last = None if self.last is None else {
            k: v.isoformat() if hasattr(v, "isoformat") else v for k, v in self.last.items()
            if k in ("now", "detailedSince", "summarySince", "ranAt", "folded", "removedEdges",
                     "removedNodes", "took")}
        return {"lastRun": last, "archive": {"entries": self.archive_entries,
                                             "bytes": self.archive_bytes},
                "storeBytes": self.store_bytes}


def figures(graph: Graph, settings: Settings) -> Figures:
    directory = settings.archive_dir
    files = list(directory.glob("date=*/part-*.parquet")) if directory.is_dir() else []
    return Figures(last_run(graph), archived(directory), sum(p.stat().st_size for p in files),
                   store_bytes(settings.neo4j_home) if settings.uses_local_server else None)
