"""Prometheus text exposition for ``/metrics``: the API's own counters, plus the event log and the
worker (other processes): what the worker recorded in the SQLite log's database, or what the broker
says of a Kafka log's consumer group."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence

from api.request_stats import BUCKETS, RequestStats
from impact.health.measure import RATIOS, Group, Health
from impact.health.slo import Verdict
from ingest.log.kafka import KafkaLog, describe_group
from ingest.log.sqlite import EventLog, LogError
from ingest.worker import backlog


class Counters:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.accepted = 0
        self.rejected: Counter[str] = Counter()
        self.requests: Counter[int] = Counter()
        self.unread = 0

    def add(self, accepted: int = 0, rejected: dict[str, int] | None = None,
            status: int | None = None, unread: int = 0) -> None:
        with self._lock:
            self.accepted += accepted
            self.unread += unread
            self.rejected.update(rejected or {})
            if status is not None:
                self.requests[status] += 1


def _label_value(value: str) -> str:
    """A label value as the exposition format writes it: backslash, double quote and line feed
    escaped, so that no name from an event (a namespace, a tier) can end a label or a line and
    forge a series."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _line(name: str, value: float, labels: dict[str, str] | None = None) -> str:
    if labels:
        inner = ",".join(f'{k}="{_label_value(v)}"' for k, v in labels.items())
        return f"{name}{{{inner}}} {value:g}"
    return f"{name} {value:g}"


def render(counters: Counters, log: EventLog,
           violations: list[tuple[str, str, int]] | None = None,
           stats: RequestStats | None = None,
           health: tuple[Health, list[Verdict], float, float] | None = None) -> str:
    """The metrics; ``violations``: (rule, severity, open) of the policy rules the worker keeps
    checked (impact.policy.violations.open_counts), None when there are none to say; ``stats``: the
    API's latency and refusals; ``health``: the latest measure of lineage health with its SLO
    verdicts, its age and how long it took (api.services.health_cache), None before the first."""
    out: list[str] = []

    def metric(name: str, kind: str, help_: str,
               samples: Sequence[tuple[float, dict[str, str] | None]]) -> None:
        out.append(f"# HELP {name} {help_}")
        out.append(f"# TYPE {name} {kind}")
        out.extend(_line(name, v, lbl) for v, lbl in samples)

    with counters._lock:
        accepted, rejected, requests = counters.accepted, dict(counters.rejected), dict(counters.requests)
        unread = counters.unread
    metric("lineage_events_accepted_total", "counter", "Events accepted into the log by this API process.",
           [(accepted, None)])
    metric("lineage_events_rejected_total", "counter", "Events or bodies rejected, by reason.",
           [(v, {"reason": k}) for k, v in sorted(rejected.items())] or [(0, {"reason": "none"})])
    metric("lineage_facets_unread_total", "counter", "Facets of accepted events whose value is "
           "not an object: kept as sent, never read.", [(unread, None)])
    metric("lineage_ingest_requests_total", "counter", "POST /api/v1/lineage requests by status.",
           [(v, {"status": str(k)}) for k, v in sorted(requests.items())] or [(0, {"status": "201"})])
    if isinstance(log, KafkaLog):
        _kafka(metric, log)
    else:
        _sqlite(metric, log)
    if stats is not None:
        _requests(metric, out, stats)
    if health is not None:
        _health(metric, *health)
    if violations is not None:
        metric("lineage_policy_violations", "gauge",
               "Open violations of each policy rule that count (no waiver accepts them).",
               [(n, {"rule": rule, "severity": severity}) for rule, severity, n in violations])
    return "\n".join(out) + "\n"


Metric = Callable[[str, str, str, Sequence[tuple[float, dict[str, str] | None]]], None]


def _sqlite(metric: Metric, log: EventLog) -> None:
    """The SQLite log and the worker, as the worker recorded itself in the log's database."""
    metric("lineage_log_events", "gauge", "Events in the log (last sequence number).",
           [(log.last_seq(), None)])
    metric("lineage_log_bytes", "gauge", "Size of the log's files on disk.", [(log.size_bytes(), None)])
    lag_events, lag_s = backlog(log)
    metric("lineage_worker_lag_events", "gauge", "Events in the log not yet in Neo4j.",
           [(lag_events, None)])
    metric("lineage_worker_lag_seconds", "gauge", "Age of the oldest event not yet in Neo4j.",
           [(lag_s, None)])
    worker = log.stats()
    metric("lineage_worker_batches_total", "counter", "Micro-batches the worker committed.",
           [(worker.get("batches_total", 0), None)])
    metric("lineage_worker_events_total", "counter", "Events the worker consumed.",
           [(worker.get("events_total", 0), None)])
    metric("lineage_worker_batch_seconds_total", "counter", "Time spent loading batches.",
           [(worker.get("batch_seconds_total", 0), None)])
    metric("lineage_worker_last_batch_events", "gauge", "Size of the last batch.",
           [(worker.get("last_batch_events", 0), None)])
    metric("lineage_worker_last_batch_seconds", "gauge", "Duration of the last batch.",
           [(worker.get("last_batch_seconds", 0), None)])
    metric("lineage_dead_letters", "gauge", "Unresolved dead letters.", [(log.dead_letter_count(), None)])
    metric("lineage_policy_webhook_dropped_total", "counter",
           "Policy webhook documents dropped because too many were waiting to be sent.",
           [(worker.get("policy_webhook_dropped_total", 0), None)])


def _kafka(metric: Metric, log: KafkaLog) -> None:
    """The Kafka log: the topic and the workers' consumer group, as the broker says them (each
    worker's batch timings stay in its own process and its log lines)."""
    try:
        group = describe_group(log.address)
    except LogError:  # the broker away: say so rather than fail the scrape
        metric("lineage_kafka_up", "gauge", "1 when the broker answered this scrape.", [(0, None)])
        return
    metric("lineage_kafka_up", "gauge", "1 when the broker answered this scrape.", [(1, None)])
    metric("lineage_log_events", "gauge", "Events produced to the topic (its partitions' ends).",
           [(sum(p.end for p in group.partitions), None)])
    metric("lineage_worker_lag_events", "gauge", "Events in the log not yet in Neo4j.",
           [(group.lag, None)])
    metric("lineage_worker_lag_seconds", "gauge", "Age of the oldest event not yet in Neo4j.",
           [(group.oldest_wait(time.time()), None)])
    metric("lineage_worker_events_total", "counter",
           "Events the workers' consumer group committed (loaded into Neo4j).",
           [(group.committed, None)])
    metric("lineage_kafka_partition_lag_events", "gauge",
           "Events of each partition not yet in Neo4j, with the worker holding the partition.",
           [(p.lag, {"partition": str(p.partition), "worker": p.worker}) for p in group.partitions])
    metric("lineage_kafka_group_members", "gauge", "Workers in the consumer group now.",
           [(len([w for w in group.held() if w]), None)])
    metric("lineage_dead_letters", "gauge", "Messages kept in the dead-letter topic.",
           [(group.dead_letters, None)])


def _requests(metric: Metric, out: list[str], requests: RequestStats) -> None:
    latency, denied = requests.snapshot()
    metric("lineage_http_denied_total", "counter",
           "Requests refused: 401 (no or unknown token) and 403 (a token without the scope).",
           [(denied.get(code, 0), {"status": str(code)}) for code in (401, 403)])
    name = "lineage_http_request_duration_seconds"
    out.append(f"# HELP {name} Time to answer, per route (the question asked) and method.")
    out.append(f"# TYPE {name} histogram")
    for (method, route), h in sorted(latency.items()):
        labels = {"method": method, "route": route}
        running = 0
        for bound, n in zip([*BUCKETS, float("inf")], h.counts, strict=True):
            running += n
            le = "+Inf" if bound == float("inf") else f"{bound:g}"
            out.append(_line(f"{name}_bucket", running, {**labels, "le": le}))
        out.append(_line(f"{name}_sum", h.total, labels))
        out.append(_line(f"{name}_count", running, labels))


def _health(metric: Metric, health: Health, verdicts: list[Verdict], age: float,
            took: float) -> None:
    """Lineage health (docs/health.md): each SLI per tier, and per tier and namespace."""
    for scope, groups in (("tier", health.tiers), ("namespace", health.namespaces)):
        samples = [(value, {"sli": sli, **_labels(g)}) for g in groups for sli in RATIOS
                   if (value := g.ratio(sli).value) is not None]
        metric(f"lineage_{scope}_sli_ratio", "gauge",
               f"Lineage health per {scope}: the good share of each SLI (docs/health.md).",
               samples)
        metric(f"lineage_{scope}_datasets", "gauge", f"Datasets per {scope}.",
               [(g.datasets, _labels(g)) for g in groups])
        metric(f"lineage_{scope}_silent_jobs", "gauge",
               f"Jobs past 1.5 times their cadence with no event, per {scope}.",
               [(g.silent_jobs, _labels(g)) for g in groups])
        metric(f"lineage_{scope}_unfinished_runs", "gauge",
               f"Runs past their job's usual duration with no end, per {scope}.",
               [(g.unfinished_runs, _labels(g)) for g in groups])
    objectives = [(v.slo.objective, {"sli": v.slo.sli, "tier": v.slo.tier or ""})
                  for v in verdicts if v.slo.objective is not None]
    metric("lineage_slo_objective_ratio", "gauge",
           "The objective of each ratio SLO of the SLO file (docs/health.md, \"SLOs\").",
           [(o, lbl) for o, lbl in objectives])
    metric("lineage_slo_met", "gauge", "1 when the SLO is met now, 0 when violated (no series "
           "while it has no data: lineage_slo_no_data).",
           [(int(v.met), {"sli": v.slo.sli, "tier": v.slo.tier or ""}) for v in verdicts
            if not v.no_data])
    metric("lineage_slo_no_data", "gauge", "1 when the SLO has nothing to measure now.",
           [(int(v.no_data), {"sli": v.slo.sli, "tier": v.slo.tier or ""}) for v in verdicts])
    metric("lineage_health_age_seconds", "gauge", "Age of the latest measure of lineage health.",
           [(round(age, 3), None)])
    metric("lineage_health_measure_seconds", "gauge", "Time the latest measure took.",
           [(round(took, 3), None)])


def _labels(g: Group) -> dict[str, str]:
    return {"tier": g.tier} if g.namespace is None else {"tier": g.tier, "namespace": g.namespace}
