"""The event log's archive: entries older than the detailed window of retention
(docs/graph-model.md, "Retention"), moved out of the log once the worker has loaded them, as
date-partitioned Parquet in the layout ``lineage export`` writes (``DIR/date=YYYY-MM-DD/
part-<first seq>.parquet``; one row an entry: ``seq``, ``received``, ``event_time``, ``kind``
(event or command), the event's type, job and run, and the entry itself as JSON in ``event``).

``lineage replay`` reads the archive and the log as one sequence, by ``seq``; ``lineage delete
--purge`` removes what names the deleted dataset or job from both. An entry the worker has not
loaded, or that is a dead letter, stays in the log.

A Kafka topic lets its messages go by its own ``retention.ms`` (the detailed window and a day):
:func:`archive_topic` copies the messages the consumer group loaded that were produced before the
detailed window, each row with its ``partition`` and ``offset`` (its ``seq`` is ``partition *
2**40 + offset``, which stays when older messages go), and a replay reads the archive, then the
topic from where the archive ends in each partition."""

from __future__ import annotations

import heapq
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from itertools import chain
from pathlib import Path
from typing import Any

from ingest.export import entry_row
from ingest.log.protocol import Entry, EventLog, Partitioned, history
from ingest.times import parse_time

TOPIC_SEQ = 2**40
"""An archived Kafka message's ``seq``: its partition times this, plus its offset."""


@dataclass
class Archived:
    entries: int = 0
    files: int = 0
    kept: int = 0  # entries old enough but left in the log (not yet loaded, or dead letters)


def entry_time(entry: Entry) -> datetime | None:
    """The time retention judges an entry by: an event's eventTime, a command's ``at``."""
    value = entry.event.get("at") if entry.kind == "command" else entry.event.get("eventTime")
    try:
        return parse_time(value)
    except (ValueError, TypeError):
        return None


def archive(events: EventLog, directory: Path, before: datetime, loaded_up_to: int) -> Archived:
    """Move the entries of ``events`` older than ``before`` (and at most ``loaded_up_to``, the
    worker's position) into Parquet under ``directory``, then out of the log."""

    log = history(events, "archiving")  # a Kafka topic: archive_topic
    done = Archived()
    days: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for entry, when in _old(events, before, loaded_up_to, done):
        days[when.date().isoformat(), 0].append(entry_row(entry))
    moved = _write(directory, days, done)
    done.entries = log.remove(moved) if moved else 0
    return done


def archive_topic(topic: Partitioned, directory: Path, before: datetime) -> Archived:
    """Copy into Parquet under ``directory`` the messages of ``topic`` the consumer group has
    loaded that were produced before ``before`` and are not archived yet; the topic lets them go
    by its own retention."""
    done = Archived()
    # a file a day and partition, so that each file's footer says where its partition ends
    days: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for part, offset, entry in topic.loaded_before(before.timestamp(), topic_offsets(directory)):
        when = entry_time(entry) or datetime.fromtimestamp(entry.received, before.tzinfo)
        row = entry_row(replace(entry, seq=part * TOPIC_SEQ + offset))
        days[when.date().isoformat(), part].append(row | {"partition": part, "offset": offset})
    done.entries = len(_write(directory, days, done))
    return done


def _write(directory: Path, days: dict[tuple[str, int], list[dict[str, Any]]],
           done: Archived) -> list[int]:
    """A file for each (day, partition) of ``days``' rows; the seqs written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    written: list[int] = []
    for (day, _), rows in sorted(days.items()):
        target = directory / f"date={day}"
        target.mkdir(parents=True, exist_ok=True)
        part = target / f"part-{rows[0]['seq']:015d}.parquet"
        tmp = part.with_suffix(".parquet.tmp")
        pq.write_table(pa.Table.from_pylist(rows), tmp)
        tmp.replace(part)  # a file is whole or absent: a stop half-way leaves the log as it was
        done.files += 1
        written += [r["seq"] for r in rows]
    return written


def topic_offsets(directory: Path) -> dict[int, int]:
    """Where the archive of a Kafka topic ends: partition -> the first offset it lacks. Read
    from the files' footers (a file holds one partition); a file of several partitions, as
    archives written before 2026-12-07 have, is read whole."""
    import pyarrow.parquet as pq

    ends: dict[int, int] = {}
    for part in _files(directory):
        meta = pq.read_metadata(part)
        if "partition" not in meta.schema.names:
            continue
        low, high = _range(meta, "partition")
        if low is not None and low == high:
            last = _range(meta, "offset")[1]
            if last is not None:
                ends[low] = max(ends.get(low, 0), last + 1)
                continue
        for row in pq.read_table(part, columns=["partition", "offset"]).to_pylist():
            ends[row["partition"]] = max(ends.get(row["partition"], 0), row["offset"] + 1)
    return ends


def _files(directory: Path) -> list[Path]:
    return sorted(directory.glob("date=*/part-*.parquet")) if directory.is_dir() else []


def _range(meta: Any, column: str) -> tuple[Any, Any]:
    """The least and the greatest value of ``column`` in a Parquet file, from its footer's
    statistics; (None, None) when a row group has none."""
    index = meta.schema.names.index(column)
    lows, highs = [], []
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(index).statistics
        if stats is None or not stats.has_min_max:
            return None, None
        lows.append(stats.min)
        highs.append(stats.max)
    return (min(lows), max(highs)) if lows else (None, None)


def archivable(events: EventLog, before: datetime, loaded_up_to: int) -> Archived:
    """What :func:`archive` would move now (``entries``; ``files`` is left 0)."""
    history(events, "archiving")
    done = Archived()
    done.entries = sum(1 for _ in _old(events, before, loaded_up_to, done))
    return done


def _old(events: EventLog, before: datetime, loaded_up_to: int,
         done: Archived) -> Iterator[tuple[Entry, datetime]]:
    """The entries to archive, each with its time; counts in ``done.kept`` the dead letters
    old enough but left in the log."""
    dead = {d.seq for d in events.dead_letters()}
    for entry in history(events, "archiving").older(before.timestamp(), loaded_up_to):
        when = entry_time(entry)
        if when is None or when >= before:
            continue
        if entry.seq in dead:
            done.kept += 1
            continue
        yield entry, when


def read_archive(directory: Path) -> Iterator[Entry]:
    """Every archived entry, by ``seq`` (a Kafka topic's: by the time its message was produced,
    then partition and offset, as a replay of the topic reads them).

    A merge of the files, each opened only when the merge reaches the least key its footer
    states: what is held at once is the files whose ranges overlap (the log's entries are
    archived in ``seq`` order, a file a day), not the archive."""
    import pyarrow.parquet as pq

    files = _files(directory)
    topic = bool(topic_offsets(directory))

    def key(entry: Entry) -> tuple[float, int]:
        return (entry.received, entry.seq) if topic else (0, entry.seq)

    def first_key(part: Path) -> tuple[float, int]:
        meta = pq.read_metadata(part)
        seq = _range(meta, "seq")[0]
        received = _range(meta, "received")[0] if topic else 0
        if seq is None or received is None:  # no statistics: the file's first row decides
            return min((key(e) for e in _entries(part)), default=(0, 0))
        return (received, seq)

    waiting = sorted((first_key(part), n, part) for n, part in enumerate(files))
    heap: list[tuple[tuple[float, int], int, Entry, Iterator[Entry]]] = []
    opened = 0
    while opened < len(waiting) or heap:
        # open every file that may hold an entry before the least one held
        while opened < len(waiting) and (not heap or waiting[opened][0] <= heap[0][0]):
            _, n, part = waiting[opened]
            opened += 1
            rows = iter(sorted(_entries(part), key=key))
            first = next(rows, None)
            if first is not None:
                heapq.heappush(heap, (key(first), n, first, rows))
        _, n, entry, rows = heapq.heappop(heap)
        yield entry
        following = next(rows, None)
        if following is not None:
            heapq.heappush(heap, (key(following), n, following, rows))


def _entries(part: Path) -> list[Entry]:
    """One archive file's entries."""
    import pyarrow.parquet as pq

    return [Entry(row["seq"], row["received"], json.loads(row["event"]), kind=row["kind"] or "event")
            for row in pq.read_table(part, columns=["seq", "received", "kind", "event"]).to_pylist()]


def with_archive(directory: Path | None, events: EventLog) -> Iterable[tuple[Entry, bool]]:
    """The archive's entries and the log's as one sequence by ``seq``, each with whether it
    came from the archive; a Kafka topic's archive first, then the topic from where the archive
    ends in each partition."""
    if directory is None:
        return ((e, False) for e in events.scan())
    if isinstance(events, Partitioned):
        return chain(((e, True) for e in read_archive(directory)),
                     ((e, False) for e in events.scan(start=topic_offsets(directory))))
    return heapq.merge(((e, True) for e in read_archive(directory)),
                       ((e, False) for e in events.scan()), key=lambda pair: pair[0].seq)


_ROWS: dict[Path, tuple[tuple[int, int], int]] = {}
"""Each archive file's ((modification time, size), rows) as last read: ``/metrics`` asks on every scrape,
and a footer is read again only when its file changed."""


def archived(directory: Path | None) -> int:
    """How many entries the archive holds."""
    import pyarrow.parquet as pq

    if directory is None or not directory.is_dir():
        return 0
    total = 0
    for part in _files(directory):
        stat = part.stat()
        changed = (stat.st_mtime_ns, stat.st_size)
        known = _ROWS.get(part)
        if known is None or known[0] != changed:
            known = _ROWS[part] = (changed, pq.read_metadata(part).num_rows)
        total += known[1]
    return total


def purge(directory: Path, names: Callable[[dict[str, Any]], bool]) -> int:
    """Rewrite the archive without the entries ``names`` says yes to (``lineage delete
    --purge``: a deletion reaches the archive too); how many were removed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    removed = 0
    for part in _files(directory):
        rows = pq.read_table(part).to_pylist()
        kept = [r for r in rows if not names(json.loads(r["event"]))]
        if len(kept) == len(rows):
            continue
        removed += len(rows) - len(kept)
        if kept:
            tmp = part.with_suffix(".parquet.tmp")
            pq.write_table(pa.Table.from_pylist(kept), tmp)
            tmp.replace(part)
        else:
            part.unlink()
    return removed
