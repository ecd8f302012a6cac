"""Prometheus text exposition for ``/metrics``: the API's own counters, plus the event log and the
worker (other processes): the backlog the log says, what the worker recorded where the log keeps
its figures (SQLite), the partitions as the broker says them (Kafka)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence

from api.request_stats import BUCKETS, RequestStats
from api.services.retention import Figures
from impact.health.measure import RATIOS, Group, Health
from impact.health.slo import Verdict
from ingest.log.kafka import PartitionState
from ingest.log.protocol import WORKER, EventLog, History, WorkerFigures


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
           health: tuple[Health, list[Verdict], float, float] | None = None,
           retention: Figures | None = None,
           erasures: dict[str, int] | None = None,
           reads: dict[tuple[str, str], int] | None = None) -> str:
    """The metrics; ``violations``: (rule, severity, open) of the policy rules the worker keeps
    checked (impact.policy.violations.open_counts), None when there are none to say; ``stats``: the
    API's latency and refusals; ``health``: the latest measure of lineage health with its SLO
    verdicts, its age and how long it took (api.services.health_cache), None before the first;
    ``retention``: the store's, the archive's and the last retention run's figures;
    ``erasures``: how many erasure requests are open, overdue and done; ``reads``: the reads of
    lineage by who asked and their outcome (api.access.audit)."""
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
    _event_log(metric, log)
    if stats is not None:
        _requests(metric, out, stats)
    if health is not None:
        _health(metric, *health)
    if retention is not None:
        _retention(metric, retention)
    if erasures is not None:
        metric("lineage_erasure_requests", "gauge", "Erasure requests by state: open, overdue "
               "(a place still pending past the deadline), done.",
               [(n, {"state": k}) for k, n in sorted(erasures.items())])
    if reads:
        metric("lineage_access_reads_total", "counter", "Reads of lineage by grant (a grant of the "
               "access file; token: one of LINEAGE_API_TOKENS; loopback, anonymous, unknown-token) "
               "and outcome: served whole, redacted (something hidden from the grant), refused "
               "(401 or 403).",
               [(n, {"grant": who, "outcome": outcome}) for (who, outcome), n in sorted(reads.items())])
    if violations is not None:
        metric("lineage_policy_violations", "gauge",
               "Open violations of each policy rule that count (no waiver accepts them).",
               [(n, {"rule": rule, "severity": severity}) for rule, severity, n in violations])
    return "\n".join(out) + "\n"


Metric = Callable[[str, str, str, Sequence[tuple[float, dict[str, str] | None]]], None]


def _event_log(metric: Metric, log: EventLog) -> None:
    """The event log and the worker's backlog on it; what the worker recorded, where the log keeps
    its figures (SQLite); each partition and who holds it, on a partitioned log (Kafka)."""
    lag = log.lag(WORKER)
    if lag.partitions is not None:
        metric("lineage_kafka_up", "gauge", "1 when the broker answered this scrape.",
               [(int(lag.known), None)])
    if not lag.known:
        return  # the log could not say (a broker away): no figure rather than a false 0
    metric("lineage_log_events", "gauge",
           "Events in the log (its last sequence number; on Kafka, the partitions' ends).",
           [(lag.last if lag.last is not None else log.last_seq(), None)])
    if isinstance(log, History):
        metric("lineage_log_bytes", "gauge", "Size of the log's files on disk.",
               [(log.size_bytes(), None)])
    metric("lineage_worker_lag_events", "gauge", "Events in the log not yet in Neo4j.",
           [(lag.events, None)])
    metric("lineage_worker_lag_seconds", "gauge", "Age of the oldest event not yet in Neo4j.",
           [(lag.oldest_seconds, None)])
    if isinstance(log, WorkerFigures):
        _worker(metric, log.stats())
    if lag.partitions is not None:
        _partitions(metric, lag.partitions)
    metric("lineage_dead_letters", "gauge", "Dead letters not resolved (on Kafka, the source "
           "messages the dead-letter topic keeps, each once).", [(log.dead_letter_count(), None)])


def _retention(metric: Metric, found: Figures) -> None:
    """The graph's size on disk, the log's archive and the last retention run."""
    if found.store_bytes is not None:
        metric("lineage_store_bytes", "gauge", "The local Neo4j's store and transaction logs on "
               "disk.", [(found.store_bytes, None)])
    metric("lineage_archive_entries", "gauge", "Event log entries retention moved to the "
           "archive (older than the detailed window).", [(found.archive_entries, None)])
    metric("lineage_archive_bytes", "gauge", "Size of the archive's Parquet files.",
           [(found.archive_bytes, None)])
    last = found.last
    if last is None or last.get("ranAt") is None:
        return
    metric("lineage_retention_last_run_timestamp_seconds", "gauge", "When the last retention "
           "run ended (unix time).", [(last["ranAt"].timestamp(), None)])
    metric("lineage_retention_detailed_since_timestamp_seconds", "gauge", "The oldest detailed "
           "lineage: the detailed window's start at the last run (the graph's own time).",
           [(last["detailedSince"].timestamp(), None)])
    metric("lineage_retention_summary_since_timestamp_seconds", "gauge", "The oldest summary "
           "lineage: the summary window's start at the last run.",
           [(last["summarySince"].timestamp(), None)])
    metric("lineage_retention_last_run_folded_runs", "gauge", "Runs the last retention run folded "
           "into summary lineage.", [(last.get("folded", 0), None)])
    metric("lineage_retention_last_run_removed", "gauge", "What the last retention run removed "
           "past the summary window.", [(last.get("removedEdges", 0), {"what": "edges"}),
                                        (last.get("removedNodes", 0), {"what": "nodes"})])
    metric("lineage_retention_last_run_seconds", "gauge", "How long the last retention run took.",
           [(last.get("took", 0.0), None)])


def _worker(metric: Metric, worker: dict[str, float]) -> None:
    """What the worker recorded in the log's database (another process)."""
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
    metric("lineage_policy_webhook_dropped_total", "counter",
           "Policy webhook documents dropped because too many were waiting to be sent.",
           [(worker.get("policy_webhook_dropped_total", 0), None)])


def _partitions(metric: Metric, partitions: tuple[PartitionState, ...]) -> None:
    """The workers' consumer group on a partitioned log, as the broker says it (each worker's
    batch timings stay in its own process and its log lines)."""
    metric("lineage_worker_events_total", "counter",
           "Events the workers' consumer group committed (loaded into Neo4j).",
           [(sum(p.committed for p in partitions), None)])
    metric("lineage_kafka_partition_lag_events", "gauge",
           "Events of each partition not yet in Neo4j, with the worker holding the partition.",
           [(p.lag, {"partition": str(p.partition), "worker": p.worker}) for p in partitions])
    metric("lineage_kafka_group_members", "gauge", "Workers in the consumer group now.",
           [(len({p.worker for p in partitions if p.worker}), None)])


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
