"""Group commit: the appends of concurrent requests share one commit of the event log."""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future
from typing import Any

from ingest.log import EventLog, encode


class GroupCommitter:
    """Shares one log commit among the appends of concurrent requests (group commit).

    ``enqueue`` hands events to a writer thread and returns a future completed once they are
    durable; the thread writes whatever has queued up meanwhile in one transaction, so N concurrent
    requests cost one fsync.
    """

    def __init__(self, log: EventLog, max_batch: int = 5000, scrubbed: bool = False) -> None:
        """``scrubbed``: the events enqueued were scrubbed of secrets (the API's, unless
        ``LINEAGE_LOG_RAW_EVENTS``), so the worker need not scrub them again. Off unless said:
        an event marked scrubbed that was not would reach the graph as it came."""
        self.log = log
        self.scrubbed = scrubbed
        self.max_batch = max_batch
        self._queue: queue.Queue[tuple[list[str], Future[list[int]]] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="log-group-commit", daemon=True)
        self._thread.start()

    def enqueue(self, events: list[dict[str, Any]]) -> Future[list[int]]:
        """Append ``events`` with the next group: the future gets their sequence numbers once
        they are durable (an event loop awaits it without a thread hop)."""
        bodies = encode(events)  # ValueError here fails this request alone, before any group
        future: Future[list[int]] = Future()
        self._queue.put((bodies, future))
        return future

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            group = [item]
            size = len(item[0])
            while size < self.max_batch:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    self._queue.put(None)
                    break
                group.append(nxt)
                size += len(nxt[0])
            try:
                # the API validated every event it enqueues: the worker will not validate them again
                seqs = self.log.append_encoded([b for bodies, _ in group for b in bodies],
                                               checked=True, scrubbed=self.scrubbed)
            except Exception as e:  # every waiter learns the append failed; nothing was acked
                for _, future in group:
                    if not future.done():
                        future.set_exception(e)
                continue
            start = 0
            for bodies, future in group:
                if not future.done():
                    future.set_result(seqs[start:start + len(bodies)])
                start += len(bodies)
