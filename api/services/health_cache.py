"""Lineage health, kept by the API between requests: measured at most once per
``health_interval`` seconds (a full pass over the graph's datasets and jobs), never by a scrape.

``/metrics`` reads the latest measure and, when it is older than the interval, starts the next
one on a thread of its own; ``GET /api/v1/health/lineage`` and ``/status`` wait for a measure
when there is none yet or the one there is too old.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graph.db import Graph
from graph.errors import LineageError
from impact.health.measure import Health, Ratio, measure
from impact.health.slo import Slo, Verdict, judge, read_slos
from impact.health.tiers import Tiers, read_tiers
from ingest.log.protocol import WORKER, EventLog

log = logging.getLogger(__name__)

BUSY_HOLD = 5
"""While the worker is loading, a due measure waits up to this many intervals."""


class HealthCache:
    def __init__(self, graph: Callable[[], Graph], log: Callable[[], EventLog], interval: float,
                 tiers: Path | None, slos: Path | None) -> None:
        self._graph, self._log = graph, log
        self.interval = interval
        self._tiers_path, self._slos_path = tiers, slos
        self._lock = threading.Lock()  # guards _measuring
        self._one = threading.Lock()  # one measure at a time
        self._latest: tuple[float, Health, list[Verdict], float] | None = None
        self._measuring = False

    def tiers(self) -> Tiers:
        return read_tiers(self._tiers_path)

    def slos(self) -> list[Slo]:
        return read_slos(self._slos_path) if self._slos_path is not None else []

    def latest(self) -> tuple[Health, list[Verdict], float, float] | None:
        """The latest measure without waiting: (health, SLO verdicts, its age in seconds, the
        seconds measuring took); starts the next one when it is due. None before the first.

        While the worker has events to load, a measure waits, up to BUSY_HOLD intervals: a
        measure is a pass over the graph, and measuring during a burst slowed ingest
        (docs/benchmarks.md, "Lineage health")."""
        found = self._latest
        age = None if found is None else time.monotonic() - found[0]
        if age is None or (age > self.interval and (age > BUSY_HOLD * self.interval
                                                    or not self._busy())):
            self._start()
        if found is None:
            return None
        return found[1], found[2], time.monotonic() - found[0], found[3]

    def _busy(self) -> bool:
        """Whether the worker has events to load (its lag, from the event log)."""
        try:
            return self._log().lag(WORKER).events > 0
        except LineageError:
            return False

    def current(self) -> tuple[Health, list[Verdict], float, float]:
        """A measure no older than the interval: the cached one, else one made now."""
        found = self._latest
        if found is None or time.monotonic() - found[0] > self.interval:
            self._measure()
            found = self._latest
        assert found is not None
        return found[1], found[2], time.monotonic() - found[0], found[3]

    def _start(self) -> None:
        with self._lock:
            if self._measuring:
                return
            self._measuring = True
        threading.Thread(target=self._quietly(self._measure), name="lineage-health",
                         daemon=True).start()

    @staticmethod
    def _quietly(step: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                step()
            except LineageError as e:  # Neo4j away, a bad tiers file: the next scrape retries
                log.warning("lineage health not measured: %s", e)
        return run

    def _measure(self) -> None:
        try:
            with self._one:
                found = self._latest
                if found is not None and time.monotonic() - found[0] <= self.interval:
                    return  # made while this one waited its turn
                started = time.monotonic()
                health = measure(self._graph(), self.tiers(), ingest_figures(self._log()))
                verdicts = judge(self.slos(), health)
                self._latest = (time.monotonic(), health, verdicts, time.monotonic() - started)
        finally:
            with self._lock:
                self._measuring = False


def ingest_figures(log: EventLog) -> dict[str, Any]:
    """The ingest SLIs the event log knows: lag (events and seconds) and the dead-letter rate."""
    lag = log.lag(WORKER)
    dead, events = log.dead_letter_count(), log.last_seq()
    return {"lagEvents": lag.events, "lagSeconds": round(lag.oldest_seconds, 3), "deadLetters": dead,
            "events": events, "errorRate": Ratio(dead, events).json()}
