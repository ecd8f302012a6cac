"""The event log's archive: entries older than the detailed window of retention
(docs/graph-model.md, "Retention"), moved out of the log once the worker has loaded them, as
date-partitioned Parquet in the layout ``lineage export`` writes (``DIR/date=YYYY-MM-DD/
part-<first seq>.parquet``; one row an entry: ``seq``, ``received``, ``event_time``, ``kind``
(event or command), the event's type, job and run, and the entry itself as JSON in ``event``).

``lineage replay`` reads the archive and the log as one sequence, by ``seq``; ``lineage delete
--purge`` removes what names the deleted dataset or job from both. An entry the worker has not
loaded, or that is a dead letter, stays in the log."""

from __future__ import annotations

import heapq
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ingest.export import entry_row
from ingest.log.protocol import Entry, EventLog, history
from ingest.times import parse_time


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
    import pyarrow as pa
    import pyarrow.parquet as pq

    log = history(events, "archiving")  # a Kafka topic lets entries go by its own retention
    done = Archived()
    days: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry, when in _old(events, before, loaded_up_to, done):
        days[when.date().isoformat()].append(entry_row(entry))
    moved: list[int] = []
    for day, rows in sorted(days.items()):
        target = directory / f"date={day}"
        target.mkdir(parents=True, exist_ok=True)
        part = target / f"part-{rows[0]['seq']:012d}.parquet"
        tmp = part.with_suffix(".parquet.tmp")
        pq.write_table(pa.Table.from_pylist(rows), tmp)
        tmp.replace(part)  # a file is whole or absent: a stop half-way leaves the log as it was
        done.files += 1
        moved += [r["seq"] for r in rows]
    done.entries = log.remove(moved) if moved else 0
    return done


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
    """Every archived entry, by ``seq``."""
    import pyarrow.parquet as pq

    found: list[Entry] = []
    for part in sorted(directory.glob("date=*/part-*.parquet")) if directory.is_dir() else []:
        for row in pq.read_table(part, columns=["seq", "received", "kind", "event"]).to_pylist():
            found.append(Entry(row["seq"], row["received"], json.loads(row["event"]),
                               kind=row["kind"] or "event"))
    yield from sorted(found, key=lambda e: e.seq)


def with_archive(directory: Path | None, events: EventLog) -> Iterable[tuple[Entry, bool]]:
    """The archive's entries and the log's as one sequence by ``seq``, each with whether it
    came from the archive."""
    logged = ((e, False) for e in events.scan())
    if directory is None:
        return logged
    return heapq.merge(((e, True) for e in read_archive(directory)), logged,
                       key=lambda pair: pair[0].seq)


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
