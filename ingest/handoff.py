"""The graph's one writer: the worker that consumes the event log.

Whatever else appends to the log (the API's metadata commands and Marquez's legacy writes, the
CLI's file loads, aliases, MLflow syncs and deletes) hands what it appended to that worker and
waits for it to apply the entries in their place among the events (so its policy watch sees them
too). Only when no worker consumes the log, or it did not reach them within the wait, does the
process apply them itself, and it then moves the worker's position past them if nothing came
between (a worker that comes later applies them again otherwise: events and commands are
idempotent). On a log with no sole consumer (a Kafka topic) the writer applies what it appended,
and the group's workers apply it again from the topic.
"""

from __future__ import annotations

import asyncio
import time

from ingest.log.protocol import WORKER, EventLog, SoleConsumer

POLL_S = 0.02


def worker_consumes(events: EventLog) -> bool:
    """Whether a worker consumes the log now (a sole consumer that holds it)."""
    return isinstance(events, SoleConsumer) and events.consumed(WORKER)


def worker_passed(events: EventLog, seq: int) -> bool:
    return events.position(WORKER) >= seq


def applied_by_worker(events: EventLog, seq: int, wait: float) -> bool:
    """Whether a worker consumes the log and its position passes ``seq`` within ``wait`` s."""
    if not worker_consumes(events):
        return False
    deadline = time.monotonic() + wait
    while not worker_passed(events, seq):
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_S)
    return True


async def loaded_by_worker(events: EventLog, seq: int, wait: float) -> bool:
    """Whether the worker's position passes ``seq`` within ``wait`` seconds, polled without
    holding a thread (many producers may wait at once)."""
    deadline = time.monotonic() + wait
    while not worker_passed(events, seq):
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(POLL_S)
    return True


def took_over(events: EventLog, first: int, last: int) -> None:
    """After applying entries ``first``..``last`` itself: move the worker's position past them,
    if no worker consumes the log and nothing came before them that it has not loaded."""
    if not worker_consumes(events):
        events.advance(WORKER, first - 1, last)
