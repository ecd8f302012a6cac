"""Prometheus text exposition for ``/metrics``: the API's own counters, plus what the event log and
the worker (another process) recorded in the log's database."""

from __future__ import annotations

import threading
import time
from collections import Counter

from ingest.log import EventLog
from ingest.worker import CONSUMER


class Counters:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.accepted = 0
        self.rejected: Counter[str] = Counter()
        self.requests: Counter[int] = Counter()

    def add(self, accepted: int = 0, rejected: dict[str, int] | None = None,
            status: int | None = None) -> None:
        with self._lock:
            self.accepted += accepted
            self.rejected.update(rejected or {})
            if status is not None:
                self.requests[status] += 1


def _line(name: str, value: float, labels: dict[str, str] | None = None) -> str:
    if labels:
        inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
        return f"{name}{{{inner}}} {value:g}"
    return f"{name} {value:g}"


def render(counters: Counters, log: EventLog,
           violations: list[tuple[str, str, int]] | None = None) -> str:
    """The metrics; ``violations``: (rule, severity, open) of the policy rules the worker keeps
    checked (impact.violations.open_counts), None when there are none to say."""
    out: list[str] = []

    def metric(name: str, kind: str, help_: str, samples: list[tuple[float, dict[str, str] | None]]) -> None:
        out.append(f"# HELP {name} {help_}")
        out.append(f"# TYPE {name} {kind}")
        out.extend(_line(name, v, lbl) for v, lbl in samples)

    with counters._lock:
        accepted, rejected, requests = counters.accepted, dict(counters.rejected), dict(counters.requests)
    metric("lineage_events_accepted_total", "counter", "Events accepted into the log by this API process.",
           [(accepted, None)])
    metric("lineage_events_rejected_total", "counter", "Events or bodies rejected, by reason.",
           [(v, {"reason": k}) for k, v in sorted(rejected.items())] or [(0, {"reason": "none"})])
    metric("lineage_ingest_requests_total", "counter", "POST /api/v1/lineage requests by status.",
           [(v, {"status": str(k)}) for k, v in sorted(requests.items())] or [(0, {"status": "201"})])
    last = log.last_seq()
    position = log.position(CONSUMER)
    metric("lineage_log_events", "gauge", "Events in the log (last sequence number).", [(last, None)])
    metric("lineage_log_bytes", "gauge", "Size of the log's files on disk.", [(log.size_bytes(), None)])
    lag_s = 0.0
    if last > position:
        received = log.received_at(position + 1)
        lag_s = max(0.0, time.time() - received) if received else 0.0
    metric("lineage_worker_lag_events", "gauge", "Events in the log not yet in Neo4j.",
           [(last - position, None)])
    metric("lineage_worker_lag_seconds", "gauge", "Age of the oldest event not yet in Neo4j.",
           [(lag_s, None)])
    stats = log.stats()
    metric("lineage_worker_batches_total", "counter", "Micro-batches the worker committed.",
           [(stats.get("batches_total", 0), None)])
    metric("lineage_worker_events_total", "counter", "Events the worker consumed.",
           [(stats.get("events_total", 0), None)])
    metric("lineage_worker_batch_seconds_total", "counter", "Time spent loading batches.",
           [(stats.get("batch_seconds_total", 0), None)])
    metric("lineage_worker_last_batch_events", "gauge", "Size of the last batch.",
           [(stats.get("last_batch_events", 0), None)])
    metric("lineage_worker_last_batch_seconds", "gauge", "Duration of the last batch.",
           [(stats.get("last_batch_seconds", 0), None)])
    metric("lineage_dead_letters", "gauge", "Unresolved dead letters.", [(log.dead_letter_count(), None)])
    if violations is not None:
        metric("lineage_policy_violations", "gauge",
               "Open violations of each policy rule that count (no waiver accepts them).",
               [(n, {"rule": rule, "severity": severity}) for rule, severity, n in violations])
    return "\n".join(out) + "\n"
