"""Lineage health: how much of the estate lineage covers, how complete and how current it is, per
tier and namespace, with what to act on (docs/health.md defines each SLI).

``measure`` reads two queries (``cypher/health``) and the event log's figures; ``summarize`` is
the pure part: rows in, :class:`Health` out. Every ratio is good/valid (1.0 is perfect) with the
counts it comes from, and None when nothing is valid (no dataset in a tier has readers, say).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from graph.db import Graph
from impact.answers import native_time
from impact.health.freshness import TOLERANCE, assess
from impact.health.tiers import UNTIERED, Tiers

RUNS_READ = 10  # the latest runs of each job that cadence and durations are read from
UNKNOWN_DURATION = timedelta(hours=24)
"""A run of a job with no completed run to learn a duration from is unfinished after this long."""
OFFENDERS = 20  # the most of each kind of offender a report lists
FAILED_RUNS = 10  # the latest failed runs a report lists, with what they hold back

RATIOS = ("coverage", "completeness", "run_completeness", "freshness", "provenance")
"""The ratio SLIs, each good/valid: datasets with a known producer; datasets with the metadata
answers need; runs that ended (of those past their usual duration); jobs heard from within their
cadence; reads whose input has a known producer."""


@dataclass(frozen=True)
class Ratio:
    good: int
    valid: int

    @property
    def value(self) -> float | None:
        return self.good / self.valid if self.valid else None

    def json(self) -> dict[str, Any]:
        return {"value": self.value, "good": self.good, "valid": self.valid}


@dataclass
class Group:
    """The SLIs of one tier (``namespace`` None) or of one tier within one namespace."""

    tier: str
    namespace: str | None
    datasets: int = 0
    jobs: int = 0
    counts: dict[str, list[int]] = field(default_factory=lambda: {k: [0, 0] for k in RATIOS})
    parts: dict[str, list[int]] = field(default_factory=lambda: {
        k: [0, 0] for k in ("schema", "owner", "column_lineage")})
    silent_jobs: int = 0
    unfinished_runs: int = 0
    late_datasets: int = 0

    def count(self, sli: str, good: int, valid: int = 1) -> None:
        """Add ``valid`` cases to an SLI, ``good`` of them good."""
        self.counts[sli][0] += good
        self.counts[sli][1] += valid

    def ratio(self, sli: str) -> Ratio:
        return Ratio(*self.counts[sli])

    def json(self) -> dict[str, Any]:
        return {"tier": self.tier, "namespace": self.namespace, "datasets": self.datasets,
                "jobs": self.jobs, **{k: self.ratio(k).json() for k in RATIOS},
                "completenessParts": {k: Ratio(*v).json() for k, v in self.parts.items()},
                "silentJobs": self.silent_jobs, "unfinishedRuns": self.unfinished_runs,
                "lateDatasets": self.late_datasets}


@dataclass(frozen=True)
class JobHealth:
    """What health learned of one job."""

    job: str
    tier: str
    last_seen: datetime | None
    cadence: timedelta | None
    silent: bool
    due: datetime | None
    unfinished: tuple[dict[str, Any], ...]


@dataclass
class Health:
    checked_at: datetime
    tiers_source: str
    tiers: list[Group]
    namespaces: list[Group]
    ingest: dict[str, Any]
    offenders: dict[str, list[dict[str, Any]]]
    """The worst offenders of each kind (OFFENDERS at most, the most important tier first)."""
    offender_counts: dict[str, int]
    failed_runs: list[dict[str, Any]] = field(default_factory=list)

    def group(self, tier: str, namespace: str | None = None) -> Group | None:
        pool = self.tiers if namespace is None else self.namespaces
        return next((g for g in pool if g.tier == tier and g.namespace == namespace), None)

    def json(self) -> dict[str, Any]:
        return {"checkedAt": _iso(self.checked_at.replace(microsecond=0)),
                "tiersFrom": self.tiers_source, "tiers": [g.json() for g in self.tiers],
                "namespaces": [g.json() for g in self.namespaces], "ingest": self.ingest,
                "offenders": self.offenders, "offenderCounts": self.offender_counts,
                "failedRuns": self.failed_runs}


def measure(graph: Graph, tiers: Tiers, ingest: dict[str, Any] | None = None,
            now: datetime | None = None) -> Health:
    """Every SLI of the graph now; ``ingest``: the event log's figures
    (``api.services.health_cache.ingest_figures``)."""
    health = summarize(graph.read("health/datasets"), graph.read("health/jobs", runs=RUNS_READ),
                       tiers, ingest or {}, now or datetime.now(UTC))
    health.failed_runs = [{**r, "failedAt": _iso(native_time(r["failedAt"]))}
                          for r in graph.read("health/failed_runs", limit=FAILED_RUNS)]
    return health


def summarize(datasets: list[dict[str, Any]], jobs: list[dict[str, Any]], tiers: Tiers,
              ingest: dict[str, Any], now: datetime) -> Health:
    tier_of = {f"{d['namespace']}:{d['name']}": tiers.tier_of(d["namespace"], d["name"], d["tags"])
               for d in datasets}
    written = {f"{d['namespace']}:{d['name']}" for d in datasets if d["written"] or d["writers"]}
    order = tiers.order(tier_of.values())
    rank = {t: i for i, t in enumerate(order)}
    groups: dict[tuple[str, str | None], Group] = {}

    def hit(tier: str, namespace: str) -> list[Group]:
        return [groups.setdefault((tier, ns), Group(tier, ns)) for ns in (None, namespace)]

    offenders: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in datasets:
        key = f"{d['namespace']}:{d['name']}"
        tier = tier_of[key]
        complete = d["hasSchema"] and d["hasOwner"] and (d["hasColumnLineage"] or not d["derived"])
        last, cadence, due, late = assess(
            [datetime.fromtimestamp(t / 1000, UTC) for t in d["successes"] if t is not None], now)
        for g in hit(tier, d["namespace"]):
            g.datasets += 1
            g.late_datasets += int(late)
            g.count("coverage", int(d["written"]))
            g.count("completeness", int(complete))
            _part(g, "schema", d["hasSchema"])
            _part(g, "owner", d["hasOwner"])
            if d["derived"]:
                _part(g, "column_lineage", d["hasColumnLineage"])
            reads = len(d["readers"])  # each read of it: its origin known or not
            g.count("provenance", reads if key in written else 0, reads)
        ident = {"dataset": key, "tier": tier}
        if not d["written"]:
            offenders["withoutProducer"].append({**ident, "readers": len(d["readers"])})
        if not d["hasOwner"]:
            offenders["withoutOwner"].append(ident)
        if not d["hasSchema"]:
            offenders["withoutSchema"].append(ident)
        if late and cadence is not None:
            offenders["lateDatasets"].append({**ident, "lastSuccess": _iso(last),
                                              "cadenceSeconds": cadence.total_seconds(),
                                              "dueBy": _iso(due)})

    for j in jobs:
        found = _job(j, tier_of, rank, order, now)
        namespace = j["namespace"]
        for g in hit(found.tier, namespace):
            g.jobs += 1
            if found.cadence is not None:
                g.count("freshness", int(not found.silent))
            g.silent_jobs += int(found.silent)
            g.unfinished_runs += len(found.unfinished)
            ended = sum(1 for r in j["runs"] if r["ended"] is not None)
            g.count("run_completeness", ended, ended + len(found.unfinished))
        if found.silent:
            offenders["silentJobs"].append({
                "job": found.job, "tier": found.tier, "lastSeen": _iso(found.last_seen),
                "cadenceSeconds": found.cadence.total_seconds() if found.cadence else None,
                "dueBy": _iso(found.due), "outputs": sorted(j["outputs"])})
        for run in found.unfinished:
            offenders["unfinishedRuns"].append({"job": found.job, "tier": found.tier, **run})
        if j["outputs"] and j["reads"] and not j["emitsColumnLineage"]:  # a loader need not
            offenders["noColumnLineage"].append({"job": found.job, "tier": found.tier,
                                                 "outputs": len(j["outputs"])})
    readers_of = {f"{d['namespace']}:{d['name']}": d["readers"] for d in datasets}
    for s in offenders["silentJobs"]:  # readers of what a silent job should have written
        s["readersAffected"] = sorted({r for o in s["outputs"] for r in readers_of.get(o, [])})
    listed = {k: sorted(v, key=lambda o: (rank.get(o["tier"], len(order)),
                                          str(o.get("dataset") or o.get("job"))))[:OFFENDERS]
              for k, v in offenders.items()}
    by_tier = sorted((g for (t, ns), g in groups.items() if ns is None),
                     key=lambda g: rank.get(g.tier, len(order)))
    by_ns = sorted((g for (t, ns), g in groups.items() if ns is not None),
                   key=lambda g: (rank.get(g.tier, len(order)), g.namespace or ""))
    return Health(now, tiers.source, by_tier, by_ns, ingest, listed,
                  {k: len(v) for k, v in offenders.items()})


def _part(g: Group, part: str, good: bool) -> None:
    g.parts[part][0] += int(good)
    g.parts[part][1] += 1


def _job(j: dict[str, Any], tier_of: dict[str, str], rank: dict[str, int], order: list[str],
         now: datetime) -> JobHealth:
    """A job's tier (the most important of its outputs'), cadence, silence and unfinished runs."""
    tiers_out = [tier_of.get(o, UNTIERED) for o in j["outputs"]]
    tier = min(tiers_out, key=lambda t: rank.get(t, len(order)), default=UNTIERED)
    runs = [{**r, "started": _at(r["started"]), "ended": _at(r["ended"]),
             "completed": _at(r["completed"])} for r in j["runs"]]
    cadence = assess([r["started"] for r in runs if r["started"] is not None], now)[1]
    last = _at(j["lastSeen"])
    due = last + cadence * TOLERANCE if last is not None and cadence is not None else None
    silent = due is not None and now > due
    durations = [r["completed"] - r["started"] for r in runs
                 if r["completed"] is not None and r["started"] is not None]
    usual = (timedelta(seconds=statistics.median(d.total_seconds() for d in durations)) * TOLERANCE
             if durations else UNKNOWN_DURATION)
    unfinished = tuple(
        {"runId": r["runId"], "state": r["state"], "started": _iso(r["started"]),
         "overdueSince": _iso(r["started"] + usual)}
        for r in runs if r["ended"] is None and r["started"] is not None
        and now > r["started"] + usual)
    return JobHealth(f"{j['namespace']}:{j['name']}", tier, last, cadence, silent, due,
                     unfinished)


def _at(epoch_ms: int | None) -> datetime | None:
    """A time the health queries return as epoch milliseconds."""
    return None if epoch_ms is None else datetime.fromtimestamp(epoch_ms / 1000, UTC)


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.astimezone(UTC).isoformat().replace("+00:00", "Z")
