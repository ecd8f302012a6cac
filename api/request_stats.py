"""What the API's requests took, for ``/metrics``: a latency histogram per route (the question
asked: ``/api/v1/impact/dataset``, ``/api/v1/lineage`` ...), and the calls refused as
unauthenticated (401) or forbidden (403). Recorded by :class:`api.logs.RequestContext` when a
response starts."""

from __future__ import annotations

import bisect
import threading
from collections import Counter
from dataclasses import dataclass, field

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Upper bounds (seconds) of the latency histogram's buckets; the questions' target is p95 below
0.5 s (docs/health.md)."""


@dataclass
class Histogram:
    counts: list[int] = field(default_factory=lambda: [0] * (len(BUCKETS) + 1))
    total: float = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(BUCKETS, seconds)] += 1
        self.total += seconds


class RequestStats:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.latency: dict[tuple[str, str], Histogram] = {}
        self.denied: Counter[int] = Counter()

    def observe(self, method: str, route: str | None, status: int, seconds: float) -> None:
        """One response: its route's path template (None for a path no route serves, which is
        not timed: its cardinality is the client's to choose), status and time."""
        with self._lock:
            if status in (401, 403):
                self.denied[status] += 1
            if route is not None:
                self.latency.setdefault((method, route), Histogram()).observe(seconds)

    def snapshot(self) -> tuple[dict[tuple[str, str], Histogram], dict[int, int]]:
        with self._lock:
            return ({k: Histogram(list(h.counts), h.total) for k, h in self.latency.items()},
                    dict(self.denied))
