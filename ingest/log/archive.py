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
    days: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry, when in _old(events, before, loaded_up_to, done):
        days[when.date().isoformat()].append(entry_row(entry))
    moved = _write(directory, days, done)
    done.entries = log.remove(moved) if moved else 0
    return done


def archive_topic(topic: Partitioned, directory: Path, before: datetime) -> Archived:
    """Copy into Parquet under ``directory`` the messages of ``topic`` the consumer group has
    loaded that were produced before ``before`` and are not archived yet; the topic lets them go
    by its own retention."""
    done = Archived()
    days: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for part, offset, entry in topic.loaded_before(before.timestamp(), topic_offsets(directory)):
        when = entry_time(entry) or datetime.fromtimestamp(entry.received, before.tzinfo)
        row = entry_row(replace(entry, seq=part * TOPIC_SEQ + offset))
        days[when.date().isoformat()].append(row | {"partition": part, "offset": offset})
    done.entries = len(_write(directory, days, done))
    return done


def _write(directory: Path, days: dict[str, list[dict[str, Any]]], done: Archived) -> list[int]:
    """A file a day of ``days``' rows; the seqs written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    written: list[int] = []
    for day, rows in sorted(days.items()):
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
    """Where the archive of a Kafka topic ends: partition -> the first offset it lacks."""
    import pyarrow.parquet as pq

    ends: dict[int, int] = {}
    for part in sorted(directory.glob("date=*/part-*.parquet")) if directory.is_dir() else []:
        if "partition" not in pq.read_schema(part).names:
            continue
        for row in pq.read_table(part, columns=["partition", "offset"]).to_pylist():
            ends[row["partition"]] = max(ends.get(row["partition"], 0), row["offset"] + 1)
    return ends


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
    then partition and offset, as a replay of the topic reads them)."""
    import pyarrow.parquet as pq

    found: list[Entry] = []
    for part in sorted(directory.glob("date=*/part-*.parquet")) if directory.is_dir() else []:
        for row in pq.read_table(part, columns=["seq", "received", "kind", "event"]).to_pylist():
            found.append(Entry(row["seq"], row["received"], json.loads(row["event"]),
                               kind=row["kind"] or "event"))
    topic = bool(topic_offsets(directory))
    yield from sorted(found, key=lambda e: (e.received, e.seq) if topic else (0, e.seq))


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


def archived(directory: Path | None) -> int:
    """How many entries the archive holds."""
    import pyarrow.parquet as pq

    if directory is None or not directory.is_dir():
        return 0
    return sum(pq.read_metadata(p).num_rows for p in directory.glob("date=*/part-*.parquet"))


def purge(directory: Path, names: Callable[[dict[str, Any]], bool]) -> int:
    """Rewrite the archive without the entries ``names`` says yes to (``lineage delete
    --purge``: a deletion reaches the archive too); how many were removed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    removed = 0
    for part in sorted(directory.glob("date=*/part-*.parquet")) if directory.is_dir() else []:
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
