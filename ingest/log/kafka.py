"""The event log on a Kafka topic (``LINEAGE_LOG=kafka://HOST:PORT/TOPIC``, docs/kafka.md).

An :class:`ingest.log.protocol.EventLog` (writer, consumer, dead letters, replay) on a topic:

- **append** produces each event to the topic, keyed the way OpenLineage's clients key
  (:func:`message_key`: a run event by its root parent job, else its parent job, else its job; a
  job or dataset event by ``job:`` / ``dataset:`` and its name), so that the API and the clients
  put a pipeline's events in one partition, in order. It returns once the broker acknowledged
  every event with all in-sync replicas (``acks=all``, an idempotent producer): what the API
  acknowledges is on the broker. Its "sequence numbers" are the events' offsets.
- **lag** is the consumer group's, as the broker says it (every worker's partitions).
- **read / commit / position**: a worker is one consumer of a consumer group (the group is the
  consumer name); the group shares the partitions among the workers. ``read`` hands out what
  the consumer polled, each entry with a sequence number of this process; ``commit(seq)``
  commits, partition by partition, the offsets up to that entry, synchronously. The worker
  commits only after Neo4j committed the batch (ingest.worker): a worker killed at any point
  leaves its uncommitted events to the next owner of the partition, which loads them again
  (idempotent writes: exactly-once effect). Partitions taken away in a rebalance are dropped
  from what is handed out; their uncommitted events are loaded by their new owner.
- **scan** (``lineage replay``) reads every partition from its earliest offset to its end, with no
  consumer group.
- **Dead letters** are produced to ``TOPIC.dead-letters``, with the reason, and the source
  partition and offset, as headers; ``dead_letters`` reads that topic, each source message once
  (a message is dead-lettered again when its worker stops before committing past it).
- Commands (Marquez's metadata writes) are entries of the topic too (header ``lineage-kind:
  command``), keyed by their namespace.

What a topic does not keep, this log lacks rather than fakes (the protocol's
:class:`~ingest.log.protocol.History`, :class:`~ingest.log.protocol.SoleConsumer`,
:class:`~ingest.log.protocol.RetriedInPlace`, :class:`~ingest.log.protocol.WorkerFigures`):
removing entries (``lineage delete --purge``), resolving a dead letter in place, Marquez's listing
and counting of events by time, one process per consumer (the group shares the partitions), the
worker's figures for another process (each worker's stay in its log lines). The records of Spark bulk loads
(which ``lineage replay --wipe`` must not drop unknowingly) are kept in a ``ledger``: the local
SQLite log, when one is given.
"""

from __future__ import annotations

import contextlib
import heapq
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ingest import codec
from ingest.limits import loads
from ingest.log.protocol import (
    RAW,
    UNREADABLE,
    Backlog,
    BulkLoad,
    Checked,
    DeadLetter,
    Entry,
    EntryKind,
    EventLog,
    LogError,
)

DEFAULT_TOPIC = "openlineage"
KIND = "lineage-kind"
REASON = "lineage-reason"
SOURCE = "lineage-source"
_ACK_TIMEOUT = 30.0  # seconds the broker has to acknowledge an append
# a commit refused because the group moved on (a rebalance): the partitions' new owners load
# those events again
_REASSIGNED = ("REBALANCE", "UNKNOWN_MEMBER", "ILLEGAL_GENERATION", "FENCED")
# the group's coordinator not elected or still loading (a broker just started): ask again
_COORDINATOR_MOVING = ("NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS",
                       "COORDINATOR_NOT_AVAILABLE")
# a broker away is retried every half second at first, then less often
_CLIENT = {"reconnect.backoff.ms": 500, "reconnect.backoff.max.ms": 10_000}
log = logging.getLogger(__name__)


class Repeats(logging.Filter):
    """librdkafka's own log goes to ours (``client_log``), and while a broker is away each of a
    client's connections says it failed again every few hundred milliseconds: a line once per
    ``every`` seconds for each thing said (its first ``KEY`` characters), with how many times it
    was said meanwhile."""

    KEY = 100
    KEPT = 1000

    def __init__(self, every: float = 30.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.every, self.clock = every, clock
        self._said: dict[str, float] = {}
        self._hidden: dict[str, int] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        key, now = text[:self.KEY], self.clock()
        with self._lock:
            if now - self._said.get(key, -self.every) < self.every:
                self._hidden[key] = self._hidden.get(key, 0) + 1
                return False
            if len(self._said) >= self.KEPT:
                self._said.clear()
            self._said[key] = now
            hidden = self._hidden.pop(key, 0)
        if hidden:
            record.msg, record.args = f"{text} (and {hidden} times more in {self.every:.0f} s)", ()
        return True


client_log = logging.getLogger(f"{__name__}.client")
client_log.addFilter(Repeats())


@dataclass(frozen=True)
class KafkaAddress:
    """Where the log is: the brokers to bootstrap from and the topic."""

    bootstrap: str
    topic: str

    @property
    def dead_letters(self) -> str:
        return f"{self.topic}.dead-letters"

    @classmethod
    def parse(cls, value: str, local_port: int = 9092) -> KafkaAddress:
        """``kafka://HOST:PORT[,HOST:PORT]/TOPIC``; ``kafka`` alone (or ``kafka://``) is the local
        broker and topic ``openlineage``."""
        if value in ("kafka", "kafka://"):
            return cls(f"127.0.0.1:{local_port}", DEFAULT_TOPIC)
        parts = urlsplit(value)
        if parts.scheme != "kafka" or not parts.netloc:
            raise LogError(f"LINEAGE_LOG={value!r}: expected sqlite, kafka, or "
                           "kafka://HOST:PORT[,HOST:PORT...]/TOPIC")
        topic = parts.path.strip("/") or DEFAULT_TOPIC
        if "/" in topic:
            raise LogError(f"LINEAGE_LOG={value!r}: a topic name has no '/'")
        return cls(parts.netloc, topic)


def message_key(event: dict[str, Any]) -> str | None:
    """The key OpenLineage's Kafka transport gives an event: ``run:NS/NAME`` of the root parent
    job, else of the parent job, else of the job; ``job:NS/NAME``; ``dataset:NS/NAME``. A
    command: ``command:NAMESPACE``."""
    if "command" in event and "eventTime" not in event:
        return f"command:{event.get('namespace') or ''}"
    if "dataset" in event and "job" not in event:
        ds = event["dataset"]
        return f"dataset:{ds.get('namespace')}/{ds.get('name')}"
    job = event.get("job") or {}
    if "run" not in event:
        return f"job:{job.get('namespace')}/{job.get('name')}"
    parent = ((event.get("run") or {}).get("facets") or {}).get("parent") or {}
    for holder in ((parent.get("root") or {}).get("job"), parent.get("job"), job):
        if isinstance(holder, dict) and holder.get("namespace") and holder.get("name"):
            return f"run:{holder['namespace']}/{holder['name']}"
    return f"run:{job.get('namespace')}/{job.get('name')}"


def worker_client_id(pid: int | None = None) -> str:
    """The Kafka client id of this process (or of process ``pid`` on this host)."""
    return f"lineage-graph-{socket.gethostname()}-{pid or os.getpid()}"


def _client() -> Any:
    try:
        import confluent_kafka
        import confluent_kafka.admin  # noqa: F401 - AdminClient, NewTopic
    except ImportError as e:  # the kafka extra
        raise LogError("a Kafka log needs confluent-kafka: pip install 'lineage-graph[kafka]'") from e
    return confluent_kafka


@dataclass
class _Polled:
    seq: int
    partition: int
    offset: int
    entry: Entry
    value: bytes  # the message's value as it came: a dead letter keeps it, whatever it is

    @property
    def size(self) -> int:
        return len(self.value)


class KafkaLog:
    """An :class:`EventLog` on a Kafka topic (see the module's docstring)."""

    def __init__(self, address: KafkaAddress, client_id: str | None = None,
                 max_event_bytes: int = 8 * 2**20,
                 ledger: Callable[[], EventLog] | None = None,
                 session_timeout: float = 45.0) -> None:
        self.address = address
        self.session_timeout = session_timeout  # LINEAGE_KAFKA_SESSION_TIMEOUT
        self.ledger = ledger  # opens where bulk loads are recorded (the SQLite log), if anywhere
        self.max_event_bytes = max_event_bytes  # a larger message is dead-lettered, as the API
        # refuses a larger body (LINEAGE_MAX_BODY_BYTES)
        # the group's members are told apart by it (describe_group, `lineage status`)
        self.client_id = client_id or worker_client_id()
        self._producer: Any = None
        self._consumers: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._pending: list[_Polled] = []  # polled, not yet committed, in the order handed out
        self._next_seq = 0
        self._committed_seq = 0
        self._loaded: dict[int, int] = {}  # partition -> highest offset loaded, not yet committed
        self._assigned: set[int] = set()
        # entries handed out whose partition was then revoked: the partition's next owner reads
        # them again and dead-letters them if need be, this process does not
        self._revoked: set[int] = set()
        # the dead-letter topic as counted so far: where each partition was read to, and the
        # source messages met (dead_letter_count)
        self._dead_read: dict[int, int] = {}
        self._dead_sources: set[bytes] = set()
        self._dead_count = 0

    # -- producing -----------------------------------------------------------------------------
    def producer(self) -> Any:
        if self._producer is None:
            kafka = _client()
            self._producer = kafka.Producer({
                "bootstrap.servers": self.address.bootstrap, "client.id": self.client_id,
                "acks": "all", "enable.idempotence": True, "linger.ms": 5,
                "compression.type": "zstd", "message.max.bytes": 10_000_000,
                "delivery.timeout.ms": int(_ACK_TIMEOUT * 1000), **_CLIENT}, logger=client_log)
        return self._producer

    def _produce(self, items: Sequence[tuple[str | None, bytes, list[tuple[str, bytes]]]],
                 topic: str | None = None) -> list[int]:
        """Produce and wait until the broker acknowledged each (all in-sync replicas); the
        offsets, in order. Raises LogError when any was not acknowledged."""
        producer = self.producer()
        offsets: list[int | None] = [None] * len(items)
        failures: list[str] = []

        def delivered(index: int) -> Any:
            def report(error: Any, message: Any) -> None:
                if error is not None:
                    failures.append(str(error))
                else:
                    offsets[index] = message.offset()
            return report

        for i, (key, value, headers) in enumerate(items):
            while True:
                try:
                    producer.produce(topic or self.address.topic, value=value, key=key,
                                     headers=headers, on_delivery=delivered(i))
                    break
                except BufferError:  # the client's queue is full: let it drain
                    producer.poll(0.05)
        left = producer.flush(_ACK_TIMEOUT)
        if left or failures or any(o is None for o in offsets):
            raise LogError(f"Kafka at {self.address.bootstrap} did not acknowledge "
                           f"{left or len(failures) or offsets.count(None)} of {len(items)} "
                           f"events: {'; '.join(failures[:3]) or 'timed out'}")
        return [int(o) for o in offsets if o is not None]

    def append(self, events: Sequence[dict[str, Any]],
               checked: Checked = Checked.RECEIVED) -> list[int]:
        return self.append_encoded([codec.canonical(e).decode("utf-8") for e in events], checked,
                                   [message_key(e) for e in events])

    def append_encoded(self, bodies: Sequence[str], checked: Checked = Checked.RECEIVED,
                       keys: Sequence[str | None] | None = None) -> list[int]:
        if keys is None:
            keys = [message_key(codec.read_checked(b)) for b in bodies]
        return self._produce([(k, b.encode("utf-8"), []) for k, b in zip(keys, bodies, strict=True)])

    def append_command(self, command: dict[str, Any]) -> int:
        return self._produce([(message_key({"command": 1, **command}),
                               codec.canonical(command), [(KIND, b"command")])])[0]

    # -- consuming -----------------------------------------------------------------------------
    def _consumer(self, group: str) -> Any:
        consumer = self._consumers.get(group)
        if consumer is None:
            kafka = _client()
            consumer = kafka.Consumer({
                "bootstrap.servers": self.address.bootstrap, "group.id": group,
                "client.id": self.client_id, "enable.auto.commit": False,
                "auto.offset.reset": "earliest", "enable.partition.eof": False,
                "fetch.message.max.bytes": 10_000_000, "max.poll.interval.ms": 600_000,
                "session.timeout.ms": int(self.session_timeout * 1000),
                # librdkafka's 3 s, or a third of a shorter session: two heartbeats may be lost
                "heartbeat.interval.ms": int(min(3.0, self.session_timeout / 3) * 1000),
                "partition.assignment.strategy": "cooperative-sticky", **_CLIENT}, logger=client_log)
            consumer.subscribe([self.address.topic], on_assign=self._on_assign,
                               on_revoke=self._on_revoke, on_lost=self._on_revoke)
            self._consumers[group] = consumer
        return consumer

    def _on_assign(self, consumer: Any, partitions: list[Any]) -> None:
        with self._lock:
            self._assigned |= {p.partition for p in partitions}

    def _on_revoke(self, consumer: Any, partitions: list[Any]) -> None:
        gone = {p.partition for p in partitions}
        with self._lock:
            self._assigned -= gone
            # their uncommitted events go to the partitions' next owner
            self._revoked |= {p.seq for p in self._pending if p.partition in gone}
            self._pending = [p for p in self._pending if p.partition not in gone]
            self._loaded = {k: v for k, v in self._loaded.items() if k not in gone}

    def read(self, after: int, limit: int, max_bytes: int | None = None,
             consumer: str = "neo4j") -> list[Entry]:
        """Entries after ``after`` (this process's sequence numbers), polling for more when fewer
        than ``limit`` are waiting."""
        kafka_consumer = self._consumer(consumer)
        if self._loaded:  # a commit that failed (the broker was away, a rebalance): again first
            self._commit_loaded(consumer)
        with self._lock:
            waiting = sum(1 for p in self._pending if p.seq > after)
        if waiting < limit:
            for message in kafka_consumer.consume(limit - waiting, timeout=0.2 if waiting else 0.5):
                if message.error():
                    raise LogError(f"Kafka at {self.address.bootstrap}: {message.error()}")
                self._take(message)
        out: list[Entry] = []
        size = 0
        with self._lock:
            for p in self._pending:
                if p.seq <= after:
                    continue
                size += p.size
                out.append(p.entry)
                if len(out) >= limit or (max_bytes is not None and size > max_bytes):
                    break
        return out

    def _take(self, message: Any) -> None:
        headers = dict(message.headers() or [])
        kind: EntryKind = "command" if headers.get(KIND) == b"command" else "event"
        # whoever can write to the topic is a producer: every message is validated and scrubbed
        # by the worker, whatever its headers say
        checked = Checked.RECEIVED
        with self._lock:
            if message.partition() not in self._assigned:
                return
            self._next_seq += 1
            seq = self._next_seq
        value = message.value() or b""
        if len(value) > self.max_event_bytes:
            event: Any = {UNREADABLE: f"too large: {len(value)} bytes, over the limit of "
                                      f"{self.max_event_bytes} (LINEAGE_MAX_BODY_BYTES)",
                          RAW: value[:2000].decode("utf-8", "replace")}
            checked = Checked.RECEIVED
        else:
            event = self._decode(value)
        _, stamp = message.timestamp()
        entry = Entry(seq, stamp / 1000 if stamp > 0 else time.time(), event, checked, None, kind)
        with self._lock:
            self._pending.append(_Polled(seq, message.partition(), message.offset(), entry, value))

    @staticmethod
    def _decode(value: bytes) -> dict[str, Any]:
        """A message's event; a message that is not one keeps why (UNREADABLE) and what came."""
        try:
            event = _loads(value)
        except (UnicodeDecodeError, ValueError) as e:  # limits.NotJson too: nested too deeply
            return {UNREADABLE: f"not JSON: {e}"[:2000],
                    RAW: value[:100_000].decode("utf-8", "replace")}
        if not isinstance(event, dict):
            return {UNREADABLE: f"not a JSON object but {type(event).__name__}",
                    RAW: value[:100_000].decode("utf-8", "replace")}
        return event

    def commit(self, consumer: str, seq: int) -> None:
        """Commit, synchronously, each partition's offset up to entry ``seq`` (and any left from
        a commit that failed: the broker was away)."""
        with self._lock:
            for p in self._pending:
                if p.seq <= seq:
                    self._loaded[p.partition] = max(self._loaded.get(p.partition, -1), p.offset)
            self._pending = [p for p in self._pending if p.seq > seq]
            self._revoked = {s for s in self._revoked if s > seq}
            self._committed_seq = max(self._committed_seq, seq)
        self._commit_loaded(consumer)

    def _commit_loaded(self, consumer: str) -> None:
        """Commit the offsets loaded and not yet committed. One that fails stays to be committed
        with the next batch, or before the next read (or is loaded again by the partition's next
        owner if this process dies first: the writes are idempotent)."""
        kafka = _client()
        with self._lock:
            upto = {part: off for part, off in self._loaded.items() if part in self._assigned}
        if not upto:
            return
        offsets = [kafka.TopicPartition(self.address.topic, part, off + 1)
                   for part, off in sorted(upto.items())]
        try:
            self._consumer(consumer).commit(offsets=offsets, asynchronous=False)
        except kafka.KafkaException as e:
            if not any(code in str(e).upper() for code in _REASSIGNED):
                raise LogError(f"Kafka at {self.address.bootstrap}: commit failed: {e}") from e
            # the group moved on (a rebalance): what this process still holds is committed next
            # time; what it lost, its new owner loads again
            log.info("commit refused during a rebalance (%s); retried with the next read", e)
            return
        with self._lock:
            for part, off in upto.items():
                if self._loaded.get(part) == off:
                    del self._loaded[part]

    def position(self, consumer: str) -> int:
        """In a worker: this process's sequence number of the last entry committed. Elsewhere
        (the API): the events the consumer group committed, all partitions."""
        if not self._consumers:
            return self._group(consumer, lambda g: g.committed)
        return self._committed_seq

    def advance(self, consumer: str, expected: int, seq: int) -> bool:
        if self._committed_seq != expected:
            return False
        self.commit(consumer, seq)
        return True

    def last_seq(self) -> int:
        """In a worker: this process's sequence number of the last entry handed out, plus what
        the group has still to consume of the partitions this process holds (its lag). Elsewhere
        (the API): the events produced to the topic, all partitions; so ``last_seq() -
        position()`` is the group's lag in both."""
        if not self._consumers:
            return self._group("neo4j", lambda g: sum(p.end for p in g.partitions))
        with self._lock:
            handed = self._pending[-1].seq if self._pending else self._committed_seq
        return handed + self._held_lag()

    def _group(self, group: str, figure: Callable[[GroupState], int]) -> int:
        """A figure of the consumer group's state; 0 while the broker cannot say (metrics and
        health must not fail on a broker away)."""
        with contextlib.suppress(LogError):
            return figure(describe_group(self.address, group, waits=False))
        return 0

    def lag(self, consumer: str) -> Backlog:
        """The consumer group's backlog, all workers' (they are other processes), as the broker
        says it; 0, not known, while the broker cannot say (metrics must not fail)."""
        try:
            group = describe_group(self.address, consumer)
        except LogError:
            return Backlog(0, 0.0, (), known=False)
        return Backlog(group.lag, group.oldest_wait(time.time()), group.partitions,
                       last=sum(p.end for p in group.partitions))

    def _held_lag(self, consumer: str = "neo4j") -> int:
        """Events of this process's partitions not yet consumed by the group."""
        kafka_consumer = self._consumers.get(consumer)
        if kafka_consumer is None:
            return 0
        kafka = _client()
        with self._lock:
            parts = [kafka.TopicPartition(self.address.topic, p) for p in sorted(self._assigned)]
            polled: dict[int, int] = {}
            for p in self._pending:
                polled[p.partition] = max(polled.get(p.partition, -1), p.offset)
        if not parts:
            return 0
        total = 0
        with contextlib.suppress(kafka.KafkaException):
            for tp in kafka_consumer.position(parts):
                _, high = kafka_consumer.get_watermark_offsets(tp, timeout=2, cached=True)
                mark = tp.offset if tp.offset >= 0 else polled.get(tp.partition, -1) + 1
                total += max(0, high - mark)
        return total

    def scan(self, batch: int = 5000, start: Mapping[int, int] | None = None) -> Iterator[Entry]:
        """Every entry of the topic from the earliest offsets (or from ``start``'s, partition ->
        offset, where later: what the archive does not hold) to the end as it was when asked
        (``lineage replay``), with no consumer group: the partitions merged in the order of their
        messages' timestamps, each partition's own order kept. So a command keyed by its
        namespace (a soft delete) keeps its place among the events of other partitions, as on
        the SQLite log; partition by partition, the events naming a job again would come after
        its deletion or before it by the partitions' numbers."""
        kafka = _client()
        readers: list[Any] = []
        try:
            readers.append(self._reader(kafka))
            meta = readers[0].list_topics(self.address.topic, timeout=10).topics[self.address.topic]
            if meta.error is not None:
                raise LogError(f"Kafka topic {self.address.topic}: {meta.error}")
            streams = []
            chunk = max(100, batch // max(1, len(meta.partitions)))  # memory: ~batch messages
            for part in sorted(meta.partitions):  # a reader each, read side by side
                readers.append(self._reader(kafka))
                streams.append(self._partition(kafka, readers[-1], part, chunk,
                                               (start or {}).get(part, 0)))
            for seq, (stamp, _, _, kind, event) in enumerate(
                    heapq.merge(*streams, key=lambda m: m[:3]), start=1):
                yield Entry(seq, stamp / 1000, event, Checked.RECEIVED, None, kind)
        finally:
            for reader in readers:
                reader.close()

    def _reader(self, kafka: Any) -> Any:
        return kafka.Consumer({"bootstrap.servers": self.address.bootstrap,
                               "group.id": f"lineage-replay-{time.time_ns()}",
                               "enable.auto.commit": False,
                               "fetch.message.max.bytes": 10_000_000, **_CLIENT}, logger=client_log)

    def _partition(self, kafka: Any, reader: Any, part: int, chunk: int, first: int = 0,
                   end: int | None = None
                   ) -> Iterator[tuple[int, int, int, EntryKind, dict[str, Any]]]:
        """One partition's messages from ``first`` (or its earliest kept) up to ``end`` (or its
        end when asked): (timestamp in ms, partition, offset, kind, event); a message that is
        not JSON is skipped (a dead letter already)."""
        low, high = reader.get_watermark_offsets(kafka.TopicPartition(self.address.topic, part),
                                                 timeout=10)
        low, high = max(low, first), high if end is None else min(high, end)
        if high <= low:
            return
        reader.assign([kafka.TopicPartition(self.address.topic, part, low)])
        position = low
        while position < high:
            for message in reader.consume(min(chunk, high - position), timeout=5):
                if message.error():
                    raise LogError(f"Kafka: {message.error()}")
                if message.offset() >= high:
                    position = high
                    break
                position = message.offset() + 1
                headers = dict(message.headers() or [])
                kind: EntryKind = "command" if headers.get(KIND) == b"command" else "event"
                try:
                    event = _loads(message.value() or b"")
                except ValueError:
                    continue
                _, stamp = message.timestamp()
                yield stamp, part, message.offset(), kind, event if isinstance(event, dict) else {}

    # -- retention (docs/graph-model.md, "Retention") -------------------------------------------
    def keep_for(self, ms: int) -> bool:
        """Set the topic's ``retention.ms`` (how long the broker keeps a message after it was
        produced) to ``ms`` unless it is already; whether it changed."""
        kafka = _client()
        admin = kafka.admin.AdminClient({"bootstrap.servers": self.address.bootstrap, **_CLIENT},
                                        logger=client_log)
        topic = kafka.admin.ConfigResource(kafka.admin.ResourceType.TOPIC, self.address.topic)
        try:
            now = admin.describe_configs([topic])[topic].result(timeout=30)
            if now.get("retention.ms") is not None and now["retention.ms"].value == str(ms):
                return False
            wanted = kafka.admin.ConfigResource(
                kafka.admin.ResourceType.TOPIC, self.address.topic, incremental_configs=[
                    kafka.admin.ConfigEntry("retention.ms", str(ms), incremental_operation=(
                        kafka.admin.AlterConfigOpType.SET))])
            admin.incremental_alter_configs([wanted])[wanted].result(timeout=30)
        except kafka.KafkaException as e:
            raise LogError(f"could not set retention.ms of Kafka topic {self.address.topic}: "
                           f"{e}") from e
        return True

    def loaded_before(self, before: float, start: Mapping[int, int], group: str = "neo4j"
                      ) -> Iterator[tuple[int, int, Entry]]:
        """The messages the consumer group has loaded (below its committed offsets) that were
        produced before ``before`` (epoch seconds), each partition read from ``start``'s offset
        (partition -> the first one the archive lacks) up to its first message produced later:
        (partition, offset, entry), the entry's ``received`` its message's time."""
        kafka = _client()
        for p in describe_group(self.address, group, waits=False).partitions:
            reader = self._reader(kafka)  # one a partition: nothing of another is prefetched
            try:
                for stamp, part, offset, kind, event in self._partition(
                        kafka, reader, p.partition, 1000, start.get(p.partition, 0), p.committed):
                    if stamp >= before * 1000:
                        break
                    yield part, offset, Entry(0, stamp / 1000, event, Checked.RECEIVED, None, kind)
            finally:
                reader.close()

    # -- dead letters --------------------------------------------------------------------------
    def add_dead_letter(self, seq: int, event: dict[str, Any], reason: str) -> None:
        """Produce the message to the dead-letter topic with its original bytes (a message the
        worker read: whatever they are, a lone surrogate or no JSON at all), its reason and its
        partition and offset. An entry whose partition was revoked since it was read is left to
        the partition's next owner, which reads it again: dead-lettered here too, it would be two
        dead letters, one of them naming no source."""
        with self._lock:
            if seq in self._revoked:
                return
            polled = next((p for p in self._pending if p.seq == seq), None)
        source = f"{polled.partition}:{polled.offset}" if polled else ""
        value = polled.value if polled else _bytes_of(event)
        self._produce([(None, value, [(REASON, reason.encode("utf-8", "backslashreplace")[:4000]),
                                      (SOURCE, f"{self.address.topic}:{source}".encode())])],
                      topic=self.address.dead_letters)

    def dead_letters(self, include_resolved: bool = False) -> list[DeadLetter]:
        """Each message dead-lettered, once: the first copy the dead-letter topic keeps of it."""
        found = []
        seen: set[bytes] = set()
        for part, message in self._dead_messages({}):
            headers = dict(message.headers() or [])
            if not _first_copy(headers, seen):
                continue
            try:
                event = _loads(message.value() or b"")
            except ValueError:
                event = {RAW: (message.value() or b"")[:2000].decode("utf-8", "replace")}
            _, stamp = message.timestamp()
            found.append(DeadLetter(part * 1_000_000_000 + message.offset(), 0,
                                    event if isinstance(event, dict) else {"_value": event},
                                    headers.get(REASON, b"").decode("utf-8", "replace"),
                                    stamp / 1000, 0))
        return found

    def dead_letter_count(self) -> int:
        """The messages dead-lettered, each once however many copies the topic keeps of it; the
        topic is read from where this log last stopped. 0 while the broker cannot say (metrics
        must not fail on a broker away)."""
        with contextlib.suppress(LogError):
            for _, message in self._dead_messages(self._dead_read):
                self._dead_read[message.partition()] = message.offset() + 1
                if _first_copy(dict(message.headers() or []), self._dead_sources):
                    self._dead_count += 1
        return self._dead_count

    def _dead_messages(self, start: dict[int, int]) -> Iterator[tuple[int, Any]]:
        """The dead-letter topic's messages, partition by partition, from ``start`` (a partition's
        next offset; its earliest kept one when absent) to its end as it was when asked."""
        kafka = _client()
        topic = self.address.dead_letters
        reader = kafka.Consumer({"bootstrap.servers": self.address.bootstrap,
                                 "group.id": f"lineage-dead-{time.time_ns()}",
                                 "enable.auto.commit": False,
                                 "fetch.message.max.bytes": 10_000_000, **_CLIENT}, logger=client_log)
        try:
            meta = reader.list_topics(topic, timeout=10).topics.get(topic)
            if meta is None or meta.error is not None:
                return
            for part in sorted(meta.partitions):
                low, high = reader.get_watermark_offsets(kafka.TopicPartition(topic, part),
                                                         timeout=10)
                position = max(low, start.get(part, low))
                if position >= high:
                    continue
                reader.assign([kafka.TopicPartition(topic, part, position)])
                while position < high:
                    batch = reader.consume(high - position, timeout=5)
                    if not batch:
                        raise LogError(f"Kafka at {self.address.bootstrap}: {topic} partition "
                                       f"{part} not read to its end ({position} of {high})")
                    for message in batch:
                        if message.error():
                            raise LogError(f"Kafka: {message.error()}")
                        position = message.offset() + 1
                        yield part, message
        except kafka.KafkaException as e:
            raise LogError(f"Kafka at {self.address.bootstrap}: {e}") from e
        finally:
            reader.close()

    # -- the bulk-load ledger (kept beside the topic) --------------------------------------------
    def _ledger(self) -> EventLog:
        if self.ledger is None:
            raise LogError("this Kafka log has no ledger to record bulk loads in")
        return self.ledger()

    def record_bulk_load(self, source: str, events: int) -> None:
        ledger = self._ledger()
        try:
            ledger.record_bulk_load(source, events)
        finally:
            ledger.close()

    def bulk_loads(self) -> list[BulkLoad]:
        if self.ledger is None:
            return []
        ledger = self._ledger()
        try:
            return ledger.bulk_loads()
        finally:
            ledger.close()

    def forget_bulk_loads(self) -> None:
        if self.ledger is not None:
            ledger = self._ledger()
            try:
                ledger.forget_bulk_loads()
            finally:
                ledger.close()

    def writable(self) -> bool:
        try:
            self.producer().list_topics(self.address.topic, timeout=5)
        except Exception:  # noqa: BLE001 - any client error means: not writable now
            return False
        return True

    def close(self) -> None:
        for consumer in self._consumers.values():
            with contextlib.suppress(Exception):
                consumer.close()
        self._consumers.clear()
        if self._producer is not None:
            self._producer.flush(5)
            self._producer = None


def _bytes_of(event: dict[str, Any]) -> bytes:
    """An event not read from the topic as bytes: a message that was not an event as it came,
    else its canonical JSON (a lone surrogate kept as its escape)."""
    raw = event.get(RAW)
    if isinstance(raw, str):
        return raw.encode("utf-8", "backslashreplace")
    try:
        return codec.canonical(event)
    except (UnicodeEncodeError, TypeError, ValueError):
        return json.dumps(event, default=str).encode()


def _loads(value: bytes) -> Any:
    """What anyone may produce is read as the API reads a body (ingest.limits: no NaN, no
    Infinity, no integer past what Python reads)."""
    return loads(value.decode("utf-8"))


def create_topics(address: KafkaAddress, partitions: int, retention_ms: int | None = None) -> None:
    """Create the topic (keeping messages ``retention_ms``, or the broker's default) and its
    dead-letter topic (the broker's default) if missing (the local broker does not create topics
    on first use)."""
    kafka = _client()
    admin = kafka.admin.AdminClient({"bootstrap.servers": address.bootstrap, **_CLIENT}, logger=client_log)
    existing = admin.list_topics(timeout=10).topics
    kept = {address.topic: {"retention.ms": str(retention_ms)}} if retention_ms else {}
    wanted = [kafka.admin.NewTopic(t, partitions, 1, config=kept.get(t, {}))
              for t in (address.topic, address.dead_letters) if t not in existing]
    for topic, future in (admin.create_topics(wanted).items() if wanted else []):
        try:
            future.result(timeout=30)
        except kafka.KafkaException as e:
            if "TOPIC_ALREADY_EXISTS" not in str(e):
                raise LogError(f"could not create Kafka topic {topic}: {e}") from e


# -- the consumer group, seen from outside it (the API's /metrics, `lineage status`) ----------
@dataclass(frozen=True)
class PartitionState:
    """One partition of the topic as the consumer group stands on it."""

    partition: int
    committed: int  # the group's next offset: the earliest kept one when it never committed
    end: int  # the partition's high watermark: the offset the next event will have
    worker: str  # the client id of the group member holding it, "" when none does
    waiting_since: float | None  # when the oldest uncommitted event was produced (epoch s)

    @property
    def lag(self) -> int:
        return max(0, self.end - self.committed)


@dataclass(frozen=True)
class GroupState:
    """The workers' consumer group on the topic: per partition, what is loaded and who holds it."""

    topic: str
    state: str  # as the broker says it: STABLE, EMPTY, PREPARING_REBALANCE, ...
    partitions: tuple[PartitionState, ...]

    @property
    def lag(self) -> int:
        """Events produced and not yet committed by the group (loaded into Neo4j)."""
        return sum(p.lag for p in self.partitions)

    @property
    def committed(self) -> int:
        """Events the group committed since the topic began (a counter: it only grows)."""
        return sum(p.committed for p in self.partitions)

    def oldest_wait(self, now: float) -> float:
        """Seconds the oldest uncommitted event has waited (0 when none waits)."""
        since = [p.waiting_since for p in self.partitions if p.lag and p.waiting_since]
        return max(0.0, now - min(since)) if since else 0.0

    def held(self) -> dict[str, list[PartitionState]]:
        """The partitions by the client id of the worker holding them ("" : nobody)."""
        out: dict[str, list[PartitionState]] = {}
        for p in self.partitions:
            out.setdefault(p.worker, []).append(p)
        return out


def describe_group(address: KafkaAddress, group: str = "neo4j", timeout: float = 10,
                   waits: bool = True) -> GroupState:
    """The consumer group's state on the topic (raises LogError when the broker cannot say);
    ``waits``: also read when each partition's oldest uncommitted event was produced."""
    kafka = _client()
    admin = kafka.admin.AdminClient({"bootstrap.servers": address.bootstrap, **_CLIENT}, logger=client_log)
    probe = kafka.Consumer({"bootstrap.servers": address.bootstrap, "group.id": group,
                            "enable.auto.commit": False, **_CLIENT}, logger=client_log)
    try:
        topics = probe.list_topics(timeout=timeout).topics
        meta = topics.get(address.topic)
        if meta is None or meta.error is not None:
            raise LogError(f"Kafka topic {address.topic} on {address.bootstrap}: "
                           f"{meta.error if meta else 'no such topic'}")
        described = _described(admin, group, timeout)
        holder = {tp.partition: m.client_id for m in described.members
                  for tp in m.assignment.topic_partitions if tp.topic == address.topic}
        parts = [kafka.TopicPartition(address.topic, p) for p in sorted(meta.partitions)]
        states = []
        for tp in probe.committed(parts, timeout=timeout):
            low, high = probe.get_watermark_offsets(tp, timeout=timeout)
            committed = tp.offset if tp.offset >= 0 else low
            states.append(PartitionState(tp.partition, committed, high,
                                         holder.get(tp.partition, ""), None))
        waiting = _produced_at(probe, address.topic, {p.partition: p.committed for p in states
                                                      if p.lag and waits}, timeout)
        states = [PartitionState(p.partition, p.committed, p.end, p.worker,
                                 waiting.get(p.partition)) for p in states]
        return GroupState(address.topic, described.state.name, tuple(states))
    except kafka.KafkaException as e:
        raise LogError(f"Kafka at {address.bootstrap}: {e}") from e
    finally:
        probe.close()


def _described(admin: Any, group: str, timeout: float) -> Any:
    """The group's description, asked again while the broker says to retry (a coordinator not
    elected or still loading, as on a broker just started)."""
    kafka = _client()
    deadline = time.monotonic() + timeout
    while True:
        try:
            return admin.describe_consumer_groups([group])[group].result(timeout=timeout)
        except kafka.KafkaException as e:
            error = e.args[0] if e.args else None
            again = isinstance(error, kafka.KafkaError) and (
                error.retriable() or error.name() in _COORDINATOR_MOVING)
            if not again or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _produced_at(reader: Any, topic: str, offsets: dict[int, int], timeout: float
                 ) -> dict[int, float]:
    """When the message at each partition's offset was produced (epoch seconds), for as many
    of them as the broker returns within ``timeout``."""
    if not offsets:
        return {}
    kafka = _client()
    reader.assign([kafka.TopicPartition(topic, p, o) for p, o in offsets.items()])
    found: dict[int, float] = {}
    deadline = time.monotonic() + timeout
    while len(found) < len(offsets) and time.monotonic() < deadline:
        for message in reader.consume(len(offsets), timeout=0.5):
            if not message.error() and message.partition() not in found:
                found[message.partition()] = message.timestamp()[1] / 1000
    return found


def _first_copy(headers: dict[str, bytes], seen: set[bytes]) -> bool:
    """Whether a dead letter is the first copy met of its source message (``seen`` is updated).
    A message is dead-lettered again when its worker stopped, or the broker went away, after the
    dead letter was produced and before the message's offset was committed; its copies name one
    source partition and offset. A dead letter with no source (none was known) is its own."""
    source = headers.get(SOURCE, b"")
    if source.endswith(b":"):
        return True
    if source in seen:
        return False
    seen.add(source)
    return True


def group_lag(address: KafkaAddress, group: str = "neo4j") -> int:
    """Events of the topic the consumer group has not committed yet (all partitions): 0 when the
    group has loaded everything produced so far."""
    return describe_group(address, group, waits=False).lag
