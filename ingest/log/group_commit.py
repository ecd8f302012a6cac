"""Group commit: the appends of concurrent requests share one commit of the event log.

Requests hand their events to a writer thread from the event loop; the thread commits whatever
queued up meanwhile in one durable transaction, so N concurrent requests cost one fsync, and then
wakes the loop once per group to settle its requests' futures. The loop never waits for the disk
or for a lock held by another process. (Handing each request a concurrent Future wrapped for the
loop would cost one wake-up per request.)
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Sequence
from typing import Any

from ingest.log.sqlite import Checked, EventLog, encode

_Group = list[tuple[list[str], "asyncio.Future[list[int]]"]]


class GroupCommitter:
    """Shares one log commit among the appends of concurrent requests (group commit)."""

    def __init__(self, log: EventLog, max_batch: int = 5000,
                 checked: Checked = Checked.VALIDATED) -> None:
        """``checked``: how far the API checked the events it submits (validated always;
        scrubbed of secrets unless ``LINEAGE_LOG_RAW_EVENTS``), so that the worker does only the
        rest. Validated unless said: an event marked scrubbed that was not would reach the graph
        as it came."""
        self.log = log
        self.checked = checked
        self.max_batch = max_batch
        self._pending: dict[asyncio.AbstractEventLoop, _Group] = {}  # each loop's next group
        self._queue: queue.SimpleQueue[tuple[_Group, asyncio.AbstractEventLoop] | None] = (
            queue.SimpleQueue())
        self._thread = threading.Thread(target=self._run, name="log-group-commit", daemon=True)
        self._thread.start()

    def submit(self, events: list[dict[str, Any]], texts: Sequence[str | None] | None = None
               ) -> asyncio.Future[list[int]]:
        """On the event loop: append ``events`` with the current group; the future gets their
        sequence numbers once they are durable, or the log's error (LogError). ``texts``: the
        events' log bodies (``ingest.log.sqlite.encode``) where already made, None where not."""
        # ValueError here fails this request alone, before any group
        bodies = encode(events) if texts is None else [
            text if text is not None else encode([event])[0]
            for event, text in zip(events, texts, strict=True)]
        loop = asyncio.get_running_loop()
        future: asyncio.Future[list[int]] = loop.create_future()
        group = self._pending.setdefault(loop, [])
        group.append((bodies, future))
        if len(group) == 1:
            loop.call_soon(self._flush, loop)  # once the round's other requests joined
        return future

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=10)

    def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        self._queue.put((self._pending.pop(loop), loop))

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            handed = [item]
            size = sum(len(bodies) for bodies, _ in item[0])
            while size < self.max_batch:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    self._queue.put(None)
                    break
                handed.append(nxt)
                size += sum(len(bodies) for bodies, _ in nxt[0])
            error: Exception | None = None
            try:
                # the API validated every event it submits: the worker will not validate them again
                seqs = self.log.append_encoded(
                    [b for group, _ in handed for bodies, _ in group for b in bodies],
                    self.checked)
            except Exception as e:
                seqs, error = [], e
            start = 0
            for group, loop in handed:
                share = sum(len(bodies) for bodies, _ in group)
                self._settle_later(loop, group, seqs[start:start + share], error)
                start += share

    def _settle_later(self, loop: asyncio.AbstractEventLoop, group: _Group, seqs: list[int],
                      error: Exception | None) -> None:
        """Settle a group's futures on their loop: one wake-up per group."""
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody waits for these any more
            loop.call_soon_threadsafe(_settle, group, seqs, error)


def _settle(group: _Group, seqs: list[int], error: Exception | None) -> None:
    start = 0
    for bodies, future in group:
        if not future.done():  # a waiter that gave up cancelled its future
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(seqs[start:start + len(bodies)])
        start += len(bodies)

