"""What every event log offers (the embedded one is :class:`ingest.log.sqlite.SQLiteLog`): entries,
dead letters and the protocol the API, the worker, metrics, replay and export use."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Literal, Protocol

from graph.errors import LineageError


class LogError(LineageError):
    """The event log cannot be written or read."""


class NotOffered(LogError):
    """What is asked is not kept by this kind of log (a Kafka topic lists no events by time):
    the API answers 501 saying so."""


WORKER = "neo4j"
"""The consumer whose position says how far the graph holds the log: the worker's, and also
that of ``lineage ingest``, which loads what it appends itself."""


class Checked(IntEnum):
    """How far an event was checked before the log took it: the worker does only the rest, so
    that each event is validated once (the API validates what it acknowledges)."""

    RECEIVED = 0
    """As received: the worker validates and scrubs it (a log an earlier version wrote)."""
    VALIDATED = 1
    """Validated, kept as received (``LINEAGE_LOG_RAW_EVENTS``): the worker scrubs it."""
    SCRUBBED = 2
    """Validated and scrubbed of secrets: the worker reads its envelope only."""
    CANONICAL = 3
    """Scrubbed and stored as its canonical JSON: its digest is its body's (the log's own mark)."""


UNREADABLE = "_lineageUnreadable"
"""In an entry read as received (a Kafka message a client produced): why it is not an event (not
JSON, not an object); the worker dead-letters it with that reason. ``RAW`` holds what came."""
RAW = "_lineageRaw"

EntryKind = Literal["event", "command"]
"""What an entry holds: an OpenLineage event, or a metadata command (:mod:`ingest.commands`), a
write the API takes that is not an event (Marquez's namespaces, tags and soft deletes)."""


@dataclass(frozen=True)
class Entry:
    seq: int
    received: float  # unix time the log accepted it
    event: dict[str, Any]
    checked: Checked = Checked.RECEIVED
    digest: str | None = None
    """Its identity digest (ingest.validate.event_digest), when the log knows it without encoding
    the event again."""
    kind: EntryKind = "event"
    """A command's body is in ``event`` too; only the worker, replay and export tell them apart."""


@dataclass(frozen=True)
class BulkLoad:
    """Events loaded into the graph without passing through the log (``lineage ingest --engine
    spark``): the log records where they came from, since a replay cannot rebuild them."""

    id: int
    source: str
    events: int
    loaded_at: float


@dataclass(frozen=True)
class DeadLetter:
    id: int
    seq: int
    event: dict[str, Any]
    reason: str
    failed_at: float
    retries: int


class EventLog(Protocol):
    """What the API, the worker, metrics, replay and export need of a log: SQLiteLog is the
    embedded one; another (Kafka) implements these and is returned by :func:`open_log`."""

    def append(self, events: Sequence[dict[str, Any]],
               checked: Checked = Checked.RECEIVED) -> list[int]: ...
    def append_encoded(self, bodies: Sequence[str],
                       checked: Checked = Checked.RECEIVED) -> list[int]: ...
    def append_command(self, command: dict[str, Any]) -> int: ...
    def read(self, after: int, limit: int, max_bytes: int | None = None) -> list[Entry]: ...
    def scan(self, batch: int = 5000) -> Iterator[Entry]: ...
    def between(self, after: float, before: float, newest_first: bool, limit: int,
                offset: int, namespace: str | None = None) -> tuple[list[dict[str, Any]], int]: ...
    def types_between(self, after: float, before: float) -> dict[str, int]: ...
    def last_seq(self) -> int: ...
    def count(self) -> int: ...
    def received_at(self, seq: int) -> float | None: ...
    def position(self, consumer: str) -> int: ...
    def commit(self, consumer: str, seq: int) -> None: ...
    def advance(self, consumer: str, expected: int, seq: int) -> bool: ...
    def record_bulk_load(self, source: str, events: int) -> None: ...
    def bulk_loads(self) -> list[BulkLoad]: ...
    def forget_bulk_loads(self) -> None: ...
    def remove(self, seqs: Sequence[int]) -> int: ...
    def add_dead_letter(self, seq: int, event: dict[str, Any], reason: str) -> None: ...
    def dead_letters(self, include_resolved: bool = False) -> list[DeadLetter]: ...
    def dead_letter_count(self) -> int: ...
    def resolve_dead_letter(self, id_: int, ok: bool, reason: str | None = None) -> None: ...
    def set_stats(self, values: dict[str, float], add: dict[str, float] | None = None) -> None: ...
    def stats(self) -> dict[str, float]: ...
    def claim(self, consumer: str) -> AbstractContextManager[None]: ...
    def consumed(self, consumer: str) -> bool: ...
    def writable(self) -> bool: ...
    def size_bytes(self) -> int: ...
    def close(self) -> None: ...
