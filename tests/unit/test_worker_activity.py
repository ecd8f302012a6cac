"""The worker's Activity: busy while a batch is written and for QUIET seconds after, for the
work that gives way to ingest (a retention run)."""

from __future__ import annotations

import threading
import time

import pytest

from ingest.worker import Activity


def test_busy_while_writing_and_for_a_moment_after(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Activity, "QUIET", 1.0)
    activity = Activity()
    assert not activity.busy()  # never wrote
    entered, leave = threading.Event(), threading.Event()

    def write() -> None:
        with activity.writing():
            entered.set()
            leave.wait(5)

    writer = threading.Thread(target=write)
    writer.start()
    entered.wait(5)
    time.sleep(1.2)  # longer than QUIET: still busy, the batch is not written yet
    assert activity.busy()
    leave.set()
    writer.join()
    assert activity.busy()  # just wrote
    time.sleep(1.2)
    assert not activity.busy()


def test_a_failed_write_ends_the_work_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Activity, "QUIET", 1.0)
    activity = Activity()
    with pytest.raises(RuntimeError), activity.writing():
        raise RuntimeError("Neo4j refused the batch")
    assert activity.busy()
    time.sleep(1.2)
    assert not activity.busy()  # not left writing for ever
