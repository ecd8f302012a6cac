"""Rebuilding the graph from the event log alone: every entry in order, events in batches and
each metadata command (ingest.commands) in its place among them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from graph.db import Graph
from graph.errors import LineageError
from ingest import commands
from ingest.log.archive import with_archive
from ingest.log.protocol import Entry, EventLog
from ingest.pipeline import Ingester, IngestReport
from ingest.read import from_log

CHUNK = 5000


def nodes_in(graph: Graph) -> int:
    """How many nodes the graph holds (replay rebuilds an empty graph)."""
    return int(graph.read("admin/count_nodes")[0]["nodes"])


def wipe(graph: Graph) -> None:
    """Empty the graph (its schema stays)."""
    graph.run_statements("admin/wipe")


@dataclass
class Replayed:
    last_seq: int = 0
    commands: int = 0
    archived: int = 0  # entries read from the archive (ingest.log.archive), not the log


def replay(graph: Graph, events: EventLog, ingester: Ingester, report: IngestReport,
           progress: Callable[[int], None] = lambda n: None,
           archive_dir: Path | None = None) -> Replayed:
    """Load every entry of the archive in ``archive_dir`` (if any) and of ``events``, by their
    place in the log, into ``graph`` (which the caller emptied); ``report`` counts the events,
    the result the commands, the archived entries and the last entry."""
    done = Replayed()
    batch: list[Entry] = []

    def flush() -> None:
        if batch:
            ingester.ingest([from_log(e) for e in batch], report, progress=progress)
            batch.clear()

    for entry, archived in with_archive(archive_dir, events):
        if entry.kind == "command":
            flush()
            commands.apply(graph, commands.Command.of(entry.event))
            done.commands += 1
            progress(1)
        else:
            batch.append(entry)
            if len(batch) >= CHUNK:
                flush()
        done.archived += archived
        done.last_seq = entry.seq
    flush()
    return done


class OrderMatters(LineageError):
    """Commands lie between events: a bulk load of the events cannot keep their place."""


def commands_after_events(events: EventLog) -> list[Entry]:
    """The log's commands when they all come after its last event (a bulk load of the events
    followed by the commands in order then builds the same graph); raises OrderMatters when
    one comes before an event (a soft delete, then the event that reports the dataset again)."""
    found: list[Entry] = []
    for entry in events.scan(CHUNK):
        if entry.kind == "command":
            found.append(entry)
        elif found:
            raise OrderMatters(
                f"the event log holds metadata commands written through the API between its "
                f"events (the first at seq {found[0].seq}, before the event at seq {entry.seq}); "
                f"their order among the events matters, which a Spark load cannot keep: replay "
                f"with --engine python")
    return found
