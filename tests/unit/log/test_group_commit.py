"""The log's group commit (ingest.log.group_commit): concurrent requests' appends share commits, each
request gets the sequence numbers of its own events in order, the mark of how far they were
checked reaches the log, and a failing log fails the requests of that commit, not later ones."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from ingest.log.group_commit import GroupCommitter
from ingest.log.sqlite import Checked, LogError, SQLiteLog


def _event(i: int) -> dict[str, Any]:
    return {"eventType": "START", "eventTime": "2024-06-01T00:00:00Z", "producer": "p",
            "run": {"runId": f"3f1a2c1e-0000-4000-8000-{i:012d}"},
            "job": {"namespace": "ns", "name": f"j{i}"}}


def test_concurrent_requests_get_their_own_sequence_numbers(tmp_path: Path) -> None:
    log = SQLiteLog(tmp_path / "events.db")
    committer = GroupCommitter(log, checked=Checked.SCRUBBED)

    async def requests() -> list[list[int]]:
        return await asyncio.gather(*(committer.submit([_event(3 * i), _event(3 * i + 1),
                                                        _event(3 * i + 2)]) for i in range(20)))

    try:
        answers = asyncio.run(requests())
    finally:
        committer.close()
    assert all(len(seqs) == 3 and seqs == list(range(seqs[0], seqs[0] + 3)) for seqs in answers)
    assert sorted(s for seqs in answers for s in seqs) == list(range(1, 61))
    entries = {e.seq: e for e in log.read(0, 100)}
    for i, seqs in enumerate(answers):  # each request's events, in its order
        assert [entries[s].event["job"]["name"] for s in seqs] == [f"j{3 * i + k}" for k in range(3)]
    # scrubbed events are stored canonical: the worker takes their digest from the body
    assert {e.checked for e in entries.values()} == {Checked.CANONICAL}


class _Failing(SQLiteLog):
    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.fail = True

    def append_encoded(self, bodies: Any, checked: Checked = Checked.RECEIVED) -> list[int]:
        if self.fail:
            raise LogError("disk full")
        return super().append_encoded(bodies, checked)


def test_a_failing_commit_fails_its_requests_and_the_next_commit_succeeds(tmp_path: Path) -> None:
    log = _Failing(tmp_path / "events.db")
    committer = GroupCommitter(log)

    async def one(i: int) -> list[int]:
        return await committer.submit([_event(i)])

    try:
        with pytest.raises(LogError, match="disk full"):
            asyncio.run(one(1))
        log.fail = False
        assert asyncio.run(one(2)) == [1]
    finally:
        committer.close()
    assert [e.checked for e in log.read(0, 10)] == [Checked.VALIDATED]


def test_an_event_that_cannot_be_encoded_fails_its_request_alone(tmp_path: Path) -> None:
    committer = GroupCommitter(SQLiteLog(tmp_path / "events.db"))
    try:
        with pytest.raises(ValueError):
            committer.submit([{"bad": "\ud800"}])  # a lone surrogate: not UTF-8
    finally:
        committer.close()
