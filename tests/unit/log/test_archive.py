"""The event log's archive (ingest.log.archive) read back in the log's order: files a day whose
``seq`` ranges overlap (an event that arrived late for a day already archived), a Kafka topic's
files a day and partition, and where a topic's archive ends, from the files' footers or, for a
file of several partitions, from its rows."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from ingest.log import archive as archive_module
from ingest.log.archive import (
    Archived,
    _write,
    archive,
    archive_topic,
    archived,
    purge,
    read_archive,
    topic_offsets,
    with_archive,
)
from ingest.log.protocol import Entry, Partitioned
from ingest.log.sqlite import SQLiteLog


def _event(day: int, n: int) -> dict[str, Any]:
    return {"eventType": "COMPLETE", "eventTime": f"2024-06-{day:02d}T02:00:00Z", "producer": "p",
            "run": {"runId": f"3f1a2c1e-0000-4000-8000-{n:012d}"}, "job": {"namespace": "ns", "name": "j"}}


def test_files_whose_seqs_overlap_are_read_back_in_seq_order(tmp_path: Path) -> None:
    log = SQLiteLog(tmp_path / "events.db")
    log.append([_event(1 + n % 3, n) for n in range(9)])  # days interleaved: every file overlaps
    before = datetime(2024, 7, 1, tzinfo=UTC)
    assert archive(log, tmp_path / "archive", before, log.last_seq()).entries == 9
    log.append([_event(1, 9), _event(20, 10)])  # late for day 1, and a day of its own
    log.append([_event(30, 11)])  # stays in the log: newer than the window's start below
    assert archive(log, tmp_path / "archive", datetime(2024, 6, 25, tzinfo=UTC),
                   log.last_seq()).entries == 2
    assert len(list((tmp_path / "archive").glob("date=*/part-*.parquet"))) == 5
    seqs = [e.seq for e in read_archive(tmp_path / "archive")]
    assert seqs == sorted(seqs) and len(seqs) == 11
    assert [e.event["run"]["runId"][-2:] for e in read_archive(tmp_path / "archive")] == [
        f"{n:02d}" for n in range(11)]
    both = list(with_archive(tmp_path / "archive", log))
    assert [e.seq for e, _ in both] == list(range(1, 13))
    assert [from_archive for _, from_archive in both] == [True] * 11 + [False]


class _Topic:
    """The part of a partitioned log archive_topic reads: messages by partition and offset."""

    def __init__(self, messages: list[tuple[int, int, Entry]]) -> None:
        self.messages = messages

    def loaded_before(self, before: float, start: Mapping[int, int]
                      ) -> Iterator[tuple[int, int, Entry]]:
        for part, offset, entry in self.messages:
            if entry.received < before and offset >= start.get(part, 0):
                yield part, offset, entry


def test_a_topic_archive_ends_where_each_partition_ends_and_reads_in_produce_order(
        tmp_path: Path) -> None:
    base = datetime(2024, 6, 1, tzinfo=UTC).timestamp()
    messages = [(part, offset, Entry(0, base + 3600 * (offset * 2 + part), _event(1 + offset, 10 * part + offset)))
                for part in (0, 1) for offset in range(4)]
    topic = cast(Partitioned, _Topic(messages))  # only loaded_before is read
    directory = tmp_path / "archive"
    taken = archive_topic(topic, directory, datetime(2024, 6, 1, 5, tzinfo=UTC))  # offsets 0-2 of p0, 0-1 of p1
    assert taken.entries == 5
    assert topic_offsets(directory) == {0: 3, 1: 2}
    assert archive_topic(topic, directory, datetime(2024, 6, 1, 5, tzinfo=UTC)).entries == 0
    assert archive_topic(topic, directory, datetime(2024, 6, 2, tzinfo=UTC)).entries == 3
    assert topic_offsets(directory) == {0: 4, 1: 4}
    read = list(read_archive(directory))
    assert [e.received for e in read] == sorted(m[2].received for m in messages)
    assert [e.seq for e in read] == [part * 2**40 + offset for part, offset, _ in
                                     sorted(messages, key=lambda m: m[2].received)]


def test_a_file_of_several_partitions_is_read_for_where_the_archive_ends(tmp_path: Path) -> None:
    rows = [{"seq": part * 2**40 + offset, "received": 1.0, "event_time": None, "kind": "event",
             "event_type": None, "job_namespace": None, "job_name": None, "run_id": None,
             "event": "{}", "partition": part, "offset": offset}
            for part, offset in ((0, 0), (0, 1), (1, 0), (2, 5))]
    _write(tmp_path, {("2024-06-01", 0): rows}, written := Archived())
    assert written.files == 1
    assert topic_offsets(tmp_path) == {0: 2, 1: 1, 2: 6}


def test_a_file_is_read_only_when_the_merge_reaches_it(tmp_path: Path, monkeypatch: Any) -> None:
    log = SQLiteLog(tmp_path / "events.db")
    log.append([_event(day, 10 * day + n) for day in (1, 2, 3) for n in range(3)])  # day by day
    assert archive(log, tmp_path / "archive", datetime(2024, 7, 1, tzinfo=UTC), log.last_seq()).entries == 9
    opened: list[Path] = []
    real = archive_module._entries

    def entries_of(part: Path) -> list[Entry]:
        opened.append(part)
        return real(part)

    monkeypatch.setattr(archive_module, "_entries", entries_of)
    entries = read_archive(tmp_path / "archive")
    assert [next(entries).seq for _ in range(3)] == [1, 2, 3] and len(opened) == 1
    assert next(entries).seq == 4 and len(opened) == 2
    assert len(list(entries)) == 5 and len(opened) == 3


def test_the_count_reads_a_footer_again_only_when_its_file_changed(tmp_path: Path, monkeypatch: Any) -> None:
    import pyarrow.parquet as pq

    log = SQLiteLog(tmp_path / "events.db")
    log.append([_event(day, 10 * day + n) for day in (1, 2, 3) for n in range(3)])
    archive(log, tmp_path / "archive", datetime(2024, 7, 1, tzinfo=UTC), log.last_seq())
    reads: list[Path] = []
    real = pq.read_metadata

    def counted(path: Any, *args: Any, **kwargs: Any) -> Any:
        reads.append(Path(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(pq, "read_metadata", counted)
    assert archived(tmp_path / "archive") == 9 and len(reads) == 3
    assert archived(tmp_path / "archive") == 9 and len(reads) == 3  # nothing changed: no footer read
    assert purge(tmp_path / "archive", lambda event: event["run"]["runId"].endswith("20")) == 1
    assert archived(tmp_path / "archive") == 8 and len(reads) == 4  # the rewritten day's file
