"""What event logs offer, split by who uses it (the embedded log is
:class:`ingest.log.sqlite.SQLiteLog`, a Kafka topic :class:`ingest.log.kafka.KafkaLog`): the API
writes (:class:`LogWriter`), the worker consumes (:class:`LogConsumer`) and keeps dead letters
(:class:`DeadLetterStore`), replay and export read everything (:class:`Replayable`). Every log is
all four (:class:`EventLog`). What only some logs can do has a protocol of its own (:class:`History`,
:class:`SoleConsumer`, :class:`RetriedInPlace`, :class:`WorkerFigures`): a log that cannot do it
lacks the methods, rather than faking them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Literal, Protocol, runtime_checkable

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


@dataclass(frozen=True)
class Backlog:
    """What a consumer has still to load: how many entries, and how long the oldest of them has
    waited (0 when none waits)."""

    events: int
    oldest_seconds: float
    partitions: tuple[Any, ...] | None = None
    """On a log split in partitions (Kafka), each partition as the consumer group stands on it
    (:class:`ingest.log.kafka.PartitionState`); None on a log that is one sequence."""
    known: bool = True
    """False when the log could not say (a broker away): the figures are then 0."""
    last: int | None = None
    """The log's last sequence number (on Kafka the partitions' ends) as the backlog was
    measured, when the log learnt it doing so (one question to a broker, not two)."""


class LogWriter(Protocol):
    """What the API needs of a log: take events and commands durably before it acknowledges them.

    Whoever can write to a log can write anything to it (on Kafka, any client can produce to the
    topic): the worker checks every entry it reads again, whatever the writer checked (``checked``
    only says how far; see :class:`Checked`)."""

    def append(self, events: Sequence[dict[str, Any]],
               checked: Checked = Checked.RECEIVED) -> list[int]: ...
    def append_encoded(self, bodies: Sequence[str],
                       checked: Checked = Checked.RECEIVED) -> list[int]: ...
    def append_command(self, command: dict[str, Any]) -> int: ...
    def writable(self) -> bool: ...
    def close(self) -> None: ...


class LogConsumer(Protocol):
    """What the worker needs of a log: read entries after a position, commit a new position once
    Neo4j holds them, and say what is left (``lag``)."""

    def read(self, after: int, limit: int, max_bytes: int | None = None) -> list[Entry]: ...
    def position(self, consumer: str) -> int: ...
    def commit(self, consumer: str, seq: int) -> None: ...
    def advance(self, consumer: str, expected: int, seq: int) -> bool: ...
    def last_seq(self) -> int: ...
    def lag(self, consumer: str) -> Backlog: ...
    def close(self) -> None: ...


class DeadLetterStore(Protocol):
    """Where the entries the worker cannot load are kept, with the reason."""

    def add_dead_letter(self, seq: int, event: dict[str, Any], reason: str) -> None: ...
    def dead_letters(self, include_resolved: bool = False) -> list[DeadLetter]: ...
    def dead_letter_count(self) -> int: ...


class Replayable(Protocol):
    """What ``lineage replay`` and ``lineage export`` read: every entry from the first, and the
    ledger of bulk loads that did not pass through the log."""

    def scan(self, batch: int = 5000) -> Iterator[Entry]: ...
    def record_bulk_load(self, source: str, events: int) -> None: ...
    def bulk_loads(self) -> list[BulkLoad]: ...
    def forget_bulk_loads(self) -> None: ...


class EventLog(LogWriter, LogConsumer, DeadLetterStore, Replayable, Protocol):
    """What every log offers (:func:`ingest.log.sqlite.open_event_log` returns one). What only
    some logs can do is a protocol of its own below, asked for by what it can do
    (``isinstance(log, History)``), never by the kind of log."""


@runtime_checkable
class History(Protocol):
    """A log that keeps its entries by time and lets them go one by one (the SQLite log; a Kafka
    topic keeps them by partition and offset and lets them go by its retention)."""

    def between(self, after: float, before: float, newest_first: bool, limit: int,
                offset: int, namespace: str | None = None) -> tuple[list[dict[str, Any]], int]: ...
    def types_between(self, after: float, before: float) -> dict[str, int]: ...
    def count(self) -> int: ...
    def remove(self, seqs: Sequence[int]) -> int: ...
    def size_bytes(self) -> int: ...
    def older(self, before: float, up_to: int) -> Iterator[Entry]: ...


@runtime_checkable
class SoleConsumer(Protocol):
    """A log read by one process per consumer name (a lock beside the SQLite log); on Kafka the
    consumer group shares the partitions among its workers instead."""

    def claim(self, consumer: str) -> AbstractContextManager[None]: ...
    def consumed(self, consumer: str) -> bool: ...


@runtime_checkable
class RetriedInPlace(Protocol):
    """Dead letters that can be marked loaded or still failing where they are (on Kafka they stay
    in their topic: produce the event again)."""

    def resolve_dead_letter(self, id_: int, ok: bool, reason: str | None = None) -> None: ...


@runtime_checkable
class Partitioned(Protocol):
    """A log kept by partition and offset that lets entries go by its own retention (a Kafka
    topic's ``retention.ms``): the archive takes its old entries before it does, and a replay
    reads it from where the archive ends (docs/graph-model.md, "Retention")."""

    def keep_for(self, ms: int) -> bool: ...
    def loaded_before(self, before: float, start: Mapping[int, int]
                      ) -> Iterator[tuple[int, int, Entry]]: ...
    def scan(self, batch: int = 5000, start: Mapping[int, int] | None = None
             ) -> Iterator[Entry]: ...


@runtime_checkable
class WorkerFigures(Protocol):
    """A log where the worker leaves its figures (batches, events, timings) for the API's
    /metrics, another process (on Kafka each worker's figures stay in its log lines)."""

    def set_stats(self, values: dict[str, float], add: dict[str, float] | None = None) -> None: ...
    def stats(self) -> dict[str, float]: ...


def history(log: EventLog, what: str) -> History:
    """``log`` as a :class:`History`, or :class:`NotOffered` saying that ``what`` needs one."""
    if isinstance(log, History):
        return log
    raise NotOffered(f"{what} is not offered on this event log: it keeps no history by time (a "
                     "Kafka topic keeps its events by partition and offset; read it with a Kafka "
                     "consumer, or `lineage export`)")

