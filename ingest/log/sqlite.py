"""The durable event log: every accepted event is appended here before it is acknowledged.

Append-only, ordered by sequence number, replayable from the beginning. The embedded default is
SQLite in WAL mode with ``synchronous=FULL`` (a commit is on disk when ``append`` returns), safe
with several API processes (SQLite's locking, with a busy timeout). Concurrent requests in one
process share commits through :class:`ingest.log.group_commit.GroupCommitter`, so throughput does not
collapse to one fsync per request.

The worker's position and the dead letters live in the same file. ``LINEAGE_LOG=kafka://…`` puts
the log on a Kafka topic instead (:mod:`ingest.log.kafka`: append = produce with acks=all, read =
consume in a consumer group, the position = the group's committed offsets).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from graph.private import private_dir, private_file
from graph.settings import Settings
from ingest import codec
from ingest.log.protocol import Backlog, BulkLoad, Checked, DeadLetter, Entry, EventLog, LogError

__all__ = ["BulkLoad", "Checked", "DeadLetter", "Entry", "EventLog", "LogError", "SQLiteLog",
           "encode", "open_event_log", "open_log"]


def open_log(path: Path) -> EventLog:
    """The embedded SQLite log at ``path``."""
    return SQLiteLog(path)


def open_event_log(settings: Settings) -> EventLog:
    """The event log the settings name (``LINEAGE_LOG``): the embedded SQLite file, or a Kafka
    topic (ingest.log.kafka)."""
    if settings.log == "sqlite":
        return SQLiteLog(settings.log_path)
    from ingest.log.kafka import KafkaAddress, KafkaLog

    return KafkaLog(KafkaAddress.parse(settings.log, settings.kafka_port),
                    max_event_bytes=settings.max_body_bytes,
                    ledger=lambda: SQLiteLog(settings.log_path),
                    session_timeout=settings.kafka_session_timeout)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    received REAL NOT NULL,
    body TEXT NOT NULL,
    checked INTEGER NOT NULL DEFAULT 0,  -- ingest.log.protocol.Checked
    event_time REAL,
    job_namespace TEXT,
    kind TEXT NOT NULL DEFAULT 'event'  -- 'event', or 'command' (ingest.commands)
);
CREATE TABLE IF NOT EXISTS positions (
    consumer TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS stats (
    key TEXT PRIMARY KEY,
    value REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS bulk_loads (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    source TEXT NOT NULL,
    events INTEGER NOT NULL,
    loaded_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS dead_letters (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    seq INTEGER NOT NULL,
    body TEXT NOT NULL,
    reason TEXT NOT NULL,
    failed_at REAL NOT NULL,
    retries INTEGER NOT NULL DEFAULT 0,
    resolved INTEGER NOT NULL DEFAULT 0
);
"""


# a run event's eventTime in unix seconds (SQLite reads ISO-8601 with Z or an offset), for
# Marquez's windows of lineage events, which are run events: a JobEvent or DatasetEvent has none
_EVENT_TIME = ("CASE WHEN json_extract({body}, '$.run.runId') IS NOT NULL THEN "
               "(julianday(json_extract({body}, '$.eventTime')) - 2440587.5) * 86400.0 END")
# the log's layout: 1 since JobEvents and DatasetEvents have no event_time
_VERSION = 1
_JOB_NAMESPACE = "json_extract({body}, '$.job.namespace')"  # for Marquez's events by namespace
_INSERT = ("INSERT INTO events (received, body, checked, event_time, job_namespace) VALUES (?, ?, ?, "
           + _EVENT_TIME.format(body="?2") + ", " + _JOB_NAMESPACE.format(body="?2") + ")")
# a command has no eventTime nor job: Marquez's listings of events never show it
_INSERT_COMMAND = "INSERT INTO events (received, body, checked, kind) VALUES (?, ?, 0, 'command')"

_T = TypeVar("_T")


def _log_errors(method: Callable[..., _T]) -> Callable[..., _T]:
    """SQLite's errors (a locked or unwritable file) as LogError, which callers handle."""

    @functools.wraps(method)
    def guarded(self: SQLiteLog, *args: Any, **kwargs: Any) -> _T:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as e:
            raise LogError(f"event log {self.path}: {method.__name__} failed: {e}") from e
    return guarded


def encode(events: Sequence[dict[str, Any]]) -> list[str]:
    """Each event's canonical JSON, as the log stores it; ValueError for invalid Unicode text."""
    return [codec.canonical(e).decode("utf-8") for e in events]


class SQLiteLog:
    """The embedded event log. One connection per thread; open it in each process."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        # private before SQLite writes anything: its -wal and -shm files take the file's mode
        private_dir(self.path.parent)
        for existing in (self.path.with_name(self.path.name + "-wal"),
                         self.path.with_name(self.path.name + "-shm")):
            if existing.exists():  # left by an earlier version with the default mode
                private_file(existing)
        private_file(self.path)
        self._local = threading.local()
        with self._conn() as c:
            c.executescript(_SCHEMA)
            columns = {row[1] for row in c.execute("PRAGMA table_info(events)")}
            if "checked" not in columns:  # a log of an earlier version: its events count as unchecked
                c.execute("ALTER TABLE events ADD COLUMN checked INTEGER NOT NULL DEFAULT 0")
            if "event_time" not in columns:  # an earlier version's log: its events' times, once
                c.execute("ALTER TABLE events ADD COLUMN event_time REAL")
                c.execute(f"UPDATE events SET event_time = {_EVENT_TIME.format(body='body')}")
            if "job_namespace" not in columns:  # an earlier version's log: once
                c.execute("ALTER TABLE events ADD COLUMN job_namespace TEXT")
                c.execute(f"UPDATE events SET job_namespace = {_JOB_NAMESPACE.format(body='body')}")
            if "kind" not in columns:  # an earlier version's log: all its entries are events
                c.execute("ALTER TABLE events ADD COLUMN kind TEXT NOT NULL DEFAULT 'event'")
            if c.execute("PRAGMA user_version").fetchone()[0] < _VERSION:
                # an earlier version's log: its JobEvents and DatasetEvents leave the windows, once
                c.execute("UPDATE events SET event_time = NULL WHERE event_time IS NOT NULL "
                          "AND json_extract(body, '$.run.runId') IS NULL")
                c.execute(f"PRAGMA user_version = {_VERSION}")
            c.execute("CREATE INDEX IF NOT EXISTS events_time ON events (event_time)")
            c.execute("CREATE INDEX IF NOT EXISTS events_namespace_time "
                      "ON events (job_namespace, event_time)")

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None,
                                       check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
                conn.execute("PRAGMA busy_timeout=30000")
            except sqlite3.Error as e:
                raise LogError(f"cannot open the event log {self.path}: {e}") from e
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def append(self, events: Sequence[dict[str, Any]],
               checked: Checked = Checked.RECEIVED) -> list[int]:
        """Append in one durable transaction; returns the sequence numbers, in order.

        ``checked``: how far the events were checked (Checked), so that the worker does only the
        rest. Raises ValueError, before anything is written, for an event that cannot be
        encoded."""
        return self.append_encoded(encode(events), checked)

    def append_encoded(self, bodies: Sequence[str],
                       checked: Checked = Checked.RECEIVED) -> list[int]:
        """Append bodies made by :func:`encode` (only), in one durable transaction."""
        if not bodies:
            return []
        now = time.time()
        # a scrubbed event's body is its canonical JSON (encode): its digest is the body's
        mark = int(Checked.CANONICAL if checked >= Checked.SCRUBBED else checked)
        conn = self._conn()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                first = None
                for body in bodies:
                    cur = conn.execute(_INSERT, (now, body, mark))
                    first = first if first is not None else cur.lastrowid
                conn.execute("COMMIT")
            except BaseException:
                # whatever went wrong, the transaction never stays open: the next append of this
                # connection, and every other process, must find the log usable
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as e:
            raise LogError(f"cannot append to the event log {self.path}: {e}") from e
        assert first is not None
        return list(range(first, first + len(bodies)))

    @_log_errors
    def append_command(self, command: dict[str, Any]) -> int:
        """Append one metadata command (ingest.commands), durably; returns its sequence number."""
        cur = self._conn().execute(_INSERT_COMMAND, (time.time(), encode([command])[0]))
        assert cur.lastrowid is not None
        return int(cur.lastrowid)

    @_log_errors
    def read(self, after: int, limit: int, max_bytes: int | None = None) -> list[Entry]:
        """Up to ``limit`` entries after ``after``; with ``max_bytes``, stop once their bodies
        reach that size (the first entry always comes, however large)."""
        cur = self._conn().execute("SELECT seq, received, body, checked, kind FROM events "
                                   "WHERE seq > ? ORDER BY seq LIMIT ?", (after, limit))
        entries: list[Entry] = []
        size = 0
        for seq, received, body, checked, kind in cur:
            if kind == "command":
                entries.append(Entry(seq, received, json.loads(body), kind="command"))
                size += len(body)
                continue
            if max_bytes is not None and entries and size + len(body) > max_bytes:
                break
            size += len(body)
            mark = Checked(checked)
            canonical = mark == Checked.CANONICAL
            event = codec.read_checked(body) if canonical else json.loads(body)
            entries.append(Entry(seq, received, event, mark,
                                 hashlib.sha256(body.encode()).hexdigest() if canonical else None))
        return entries

    @_log_errors
    def between(self, after: float, before: float, newest_first: bool, limit: int,
                offset: int, namespace: str | None = None) -> tuple[list[dict[str, Any]], int]:
        """A page of the run events whose eventTime is in [after, before) (and whose job is in
        ``namespace``), by eventTime, and how many there are in all (Marquez's
        ``GET /events/lineage``, which lists run events only)."""
        window = "FROM events WHERE event_time >= ? AND event_time < ?"
        params: tuple[Any, ...] = (after, before)
        if namespace is not None:
            window += " AND job_namespace = ?"
            params += (namespace,)
        conn = self._conn()
        total = conn.execute(f"SELECT count(*) {window}", params).fetchone()[0]
        order = "DESC" if newest_first else "ASC"
        cur = conn.execute(f"SELECT body {window} ORDER BY event_time {order}, seq {order} "
                           "LIMIT ? OFFSET ?", (*params, limit, offset))
        return [json.loads(body) for (body,) in cur], int(total)

    @_log_errors
    def types_between(self, after: float, before: float) -> dict[str, int]:
        """How many run events of each eventType have an eventTime in [after, before)."""
        cur = self._conn().execute(
            "SELECT json_extract(body, '$.eventType'), count(*) FROM events "
            "WHERE event_time >= ? AND event_time < ? GROUP BY 1", (after, before))
        return {str(kind): int(n) for kind, n in cur if kind is not None}

    @_log_errors
    def older(self, before: float, up_to: int) -> Iterator[Entry]:
        """The entries up to ``up_to`` that may be older than ``before`` (unix s), in order: run
        events by their indexed eventTime (a second of slack: the caller judges each exactly), and
        every entry without one (commands, JobEvents, DatasetEvents), for the caller to judge."""
        cur = self._conn().execute(
            "SELECT seq, received, body, kind FROM events WHERE seq <= ? "
            "AND (event_time < ? OR event_time IS NULL) ORDER BY seq", (up_to, before + 1.0))
        for seq, received, body, kind in cur.fetchall():
            yield Entry(seq, received, json.loads(body), kind=kind)

    def scan(self, batch: int = 5000) -> Iterator[Entry]:
        """Every entry from the beginning, in order."""
        after = 0
        while entries := self.read(after, batch):
            yield from entries
            after = entries[-1].seq

    @_log_errors
    def last_seq(self) -> int:
        row = self._conn().execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()
        return int(row[0])

    @_log_errors
    def count(self) -> int:
        return int(self._conn().execute("SELECT count(*) FROM events").fetchone()[0])

    @_log_errors
    def lag(self, consumer: str) -> Backlog:
        """The entries after ``consumer``'s position, and the age of the first of them."""
        position = self.position(consumer)
        first = self._conn().execute("SELECT received FROM events WHERE seq > ? ORDER BY seq "
                                     "LIMIT 1", (position,)).fetchone()
        last = self.last_seq()
        if first is None:
            return Backlog(0, 0.0, last=last)
        return Backlog(last - position, max(0.0, time.time() - float(first[0])), last=last)

    @_log_errors
    def position(self, consumer: str) -> int:
        row = self._conn().execute("SELECT seq FROM positions WHERE consumer = ?", (consumer,)).fetchone()
        return int(row[0]) if row else 0

    @_log_errors
    def commit(self, consumer: str, seq: int) -> None:
        self._conn().execute(
            "INSERT INTO positions (consumer, seq, updated) VALUES (?, ?, ?) "
            "ON CONFLICT(consumer) DO UPDATE SET seq = excluded.seq, updated = excluded.updated",
            (consumer, seq, time.time()))

    @_log_errors
    def advance(self, consumer: str, expected: int, seq: int) -> bool:
        """Move ``consumer``'s position from ``expected`` to ``seq``, only if it is still at
        ``expected``: a loader that appended and loaded entries itself takes the worker's
        position past them without ever moving it back past what the worker did meanwhile."""
        conn = self._conn()
        if expected == 0:
            conn.execute("INSERT OR IGNORE INTO positions (consumer, seq, updated) VALUES (?, 0, ?)",
                         (consumer, time.time()))
        cur = conn.execute("UPDATE positions SET seq = ?, updated = ? WHERE consumer = ? AND seq = ?",
                           (seq, time.time(), consumer, expected))
        return cur.rowcount == 1

    @_log_errors
    def record_bulk_load(self, source: str, events: int) -> None:
        self._conn().execute("INSERT INTO bulk_loads (source, events, loaded_at) VALUES (?, ?, ?)",
                             (source, events, time.time()))

    @_log_errors
    def bulk_loads(self) -> list[BulkLoad]:
        cur = self._conn().execute("SELECT id, source, events, loaded_at FROM bulk_loads ORDER BY id")
        return [BulkLoad(*row) for row in cur]

    @_log_errors
    def remove(self, seqs: Sequence[int]) -> int:
        """Remove the entries ``seqs`` and their dead letters (``lineage delete --purge``: test
        data loaded by mistake); how many were removed. Sequence numbers are never reused."""
        conn = self._conn()
        removed = 0
        for i in range(0, len(seqs), 500):
            part = list(seqs[i:i + 500])
            marks = ",".join("?" * len(part))
            conn.execute("BEGIN IMMEDIATE")
            try:
                removed += conn.execute(f"DELETE FROM events WHERE seq IN ({marks})",
                                        part).rowcount
                conn.execute(f"DELETE FROM dead_letters WHERE seq IN ({marks})", part)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        return removed

    @_log_errors
    def forget_bulk_loads(self) -> None:
        self._conn().execute("DELETE FROM bulk_loads")

    @_log_errors
    def add_dead_letter(self, seq: int, event: dict[str, Any], reason: str) -> None:
        self._conn().execute(
            "INSERT INTO dead_letters (seq, body, reason, failed_at) VALUES (?, ?, ?, ?)",
            (seq, json.dumps(event, separators=(",", ":")), reason, time.time()))

    @_log_errors
    def dead_letters(self, include_resolved: bool = False) -> list[DeadLetter]:
        where = "" if include_resolved else "WHERE resolved = 0"
        cur = self._conn().execute(
            f"SELECT id, seq, body, reason, failed_at, retries FROM dead_letters {where} ORDER BY id")
        return [DeadLetter(i, s, json.loads(b), r, f, n) for i, s, b, r, f, n in cur]

    @_log_errors
    def dead_letter_count(self) -> int:
        """Unresolved dead letters (without reading their events)."""
        return int(self._conn().execute("SELECT count(*) FROM dead_letters WHERE resolved = 0").fetchone()[0])

    @_log_errors
    def resolve_dead_letter(self, id_: int, ok: bool, reason: str | None = None) -> None:
        sql, params = (("resolved = 1", (id_,)) if ok else
                       ("reason = ?, failed_at = ?", (reason, time.time(), id_)))
        self._conn().execute(f"UPDATE dead_letters SET retries = retries + 1, {sql} WHERE id = ?", params)

    @_log_errors
    def set_stats(self, values: dict[str, float], add: dict[str, float] | None = None) -> None:
        """Record worker statistics (set some, add to others) for /metrics in another process."""
        conn = self._conn()
        for k, v in values.items():
            conn.execute("INSERT INTO stats (key, value) VALUES (?, ?) "
                         "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (k, v))
        for k, v in (add or {}).items():
            conn.execute("INSERT INTO stats (key, value) VALUES (?, ?) "
                         "ON CONFLICT(key) DO UPDATE SET value = value + excluded.value", (k, v))

    @_log_errors
    def stats(self) -> dict[str, float]:
        return {k: float(v) for k, v in self._conn().execute("SELECT key, value FROM stats")}

    @contextlib.contextmanager
    def claim(self, consumer: str) -> Iterator[None]:
        """Be the only process consuming as ``consumer`` while the block runs (a lock file
        beside the log, released when the process ends however it ends): two workers on one log
        would each load every event. Raises LogError naming the holder."""
        path = self.path.with_name(f"{self.path.name}.{consumer}.lock")
        with open(path, "a+", encoding="utf-8") as held:
            private_file(path)
            try:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as e:
                held.seek(0)
                holder = held.read().strip() or "another process"
                raise LogError(f"the event log {self.path} is already consumed by {holder} "
                               f"(lock {path}): one worker per log") from e
            held.seek(0)
            held.truncate()
            held.write(f"lineage worker pid {os.getpid()}")
            held.flush()
            try:
                yield
            finally:
                fcntl.flock(held, fcntl.LOCK_UN)

    def consumed(self, consumer: str) -> bool:
        """Whether a process consumes the log as ``consumer`` now (holds :meth:`claim`)."""
        path = self.path.with_name(f"{self.path.name}.{consumer}.lock")
        if not path.exists():
            return False
        with open(path, "a+", encoding="utf-8") as probe:
            try:
                fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(probe, fcntl.LOCK_UN)
            return False

    def writable(self) -> bool:
        try:
            conn = self._conn()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("ROLLBACK")
            return True
        except sqlite3.Error:
            return False

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())
