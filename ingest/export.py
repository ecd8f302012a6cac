"""Export the event log as date-partitioned Parquet: ``DIR/date=YYYY-MM-DD/part-<first seq>.parquet``.

Each row is one event: its log sequence number, when the log received it, its eventTime, kind
(``event``; the archive of ingest.log.archive keeps commands too), type, job, run id, and the
event itself as JSON text (``event``), so nothing is lost and
``lineage ingest --engine spark`` can read it back.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from ingest.log.protocol import Entry, EventLog
from ingest.times import parse_time


def entry_row(entry: Entry) -> dict[str, Any]:
    """One log entry as a row (the archive keeps commands too, as ``kind`` = command)."""
    import json

    event = entry.event
    try:
        when = parse_time(event.get("eventTime" if entry.kind == "event" else "at"))
    except (ValueError, TypeError):
        when = None
    job: dict[str, Any] = event["job"] if isinstance(event.get("job"), dict) else {}
    run: dict[str, Any] = event["run"] if isinstance(event.get("run"), dict) else {}
    return {"seq": entry.seq, "received": entry.received, "event_time": when, "kind": entry.kind,
            "event_type": event.get("eventType"), "job_namespace": job.get("namespace"),
            "job_name": job.get("name"), "run_id": run.get("runId"),
            "event": json.dumps(event, separators=(",", ":"))}


def export_parquet(events: EventLog, directory: Path,
                   rows_per_file: int = 100_000) -> tuple[int, int, int]:
    """Write every event; returns (files written, rows written, commands left out: the metadata
    writes of the API, ingest.commands, are not OpenLineage events)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory = Path(directory)
    buckets: dict[str, list[dict[str, Any]]] = defaultdict(list)
    files = rows = skipped = 0

    def flush(day: str) -> None:
        nonlocal files
        part = buckets.pop(day)
        target = directory / f"date={day}"
        target.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(part), target / f"part-{part[0]['seq']:012d}.parquet")
        files += 1

    for entry in events.scan():
        if entry.kind == "command":
            skipped += 1
            continue
        row = entry_row(entry)
        day = row["event_time"].date().isoformat() if row["event_time"] else "unknown"
        buckets[day].append(row)
        rows += 1
        if len(buckets[day]) >= rows_per_file:
            flush(day)
    for day in list(buckets):
        flush(day)
    return files, rows, skipped
