"""The runs since bad data began, replayed in time order, to find which of them read bad data
(docs/graph-model.md, "Repair"). Pure: the runs come in, what was bad comes out.

- A run's reads happen at its start, its writes at its end (a write before another run's read
  at the same time; a run that started and ended at once reads first, then writes: a producer
  that sends only a COMPLETE event).
- Bad data begins with the origin runs' writes (each written version is bad) and, for an origin
  run that failed or wrote nothing, with its job's outputs going stale: each such dataset is bad
  from the origin run's end.
- A run read bad data when a version it read is bad, or when it read a dataset while that was
  bad. What it writes is then bad too (its versions, and the dataset from its end); if it failed
  or wrote nothing, its job's outputs are stale, bad from its end, as an origin run's.
- A dataset stops being bad when a run that read no bad data completes a write of it (an
  earlier version read later, by version, stays bad).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class Access:
    """A run's read or write of a dataset, with the version if stated."""

    namespace: str
    name: str
    version: str | None

    @property
    def dataset(self) -> str:
        return f"{self.namespace}:{self.name}"


@dataclass(frozen=True)
class RunFacts:
    run_id: str
    job: str | None
    state: str | None
    start: datetime | None
    end: datetime | None
    reads: tuple[Access, ...]
    writes: tuple[Access, ...]


@dataclass
class Replayed:
    origin: set[str] = field(default_factory=set)
    bad_reads: dict[str, list[Access]] = field(default_factory=dict)
    """Each run that read bad data, with the bad reads."""
    bad_since: dict[str, datetime] = field(default_factory=dict)
    """Each dataset that held bad data, from when (its first bad write)."""


def replay(runs: dict[str, RunFacts], origin: list[RunFacts],
           stale: dict[str, list[Access]], outputs: dict[str, list[Access]]) -> Replayed:
    """Which of ``runs`` read bad data that began with ``origin`` (whose own writes are bad) and
    with the datasets ``stale`` names for an origin run (bad from that run's end); ``outputs``:
    each job's current outputs, stale after a run of it that read bad data and wrote none."""
    done = Replayed(origin={o.run_id for o in origin})
    bad_now: dict[str, datetime] = {}  # dataset -> since when it is bad, while it is
    bad_versions: dict[str, set[str]] = {}
    moments: list[tuple[datetime, int, str, RunFacts]] = []
    for o in origin:
        if o.end is not None:
            moments.append((o.end, 0, o.run_id, o))
    for run in runs.values():
        if run.run_id in done.origin:
            continue
        if run.start is not None and run.reads:
            moments.append((run.start, 1, run.run_id, run))
        if run.end is not None and (run.writes or run.job in outputs):
            instant = run.start is not None and run.start >= run.end
            moments.append((run.end, 2 if instant else 0, run.run_id, run))
    for when, kind, _, run in sorted(moments, key=lambda m: m[:3]):
        if kind == 1:
            bad = [a for a in run.reads if a.dataset in bad_now
                   or (a.version is not None and a.version in bad_versions.get(a.dataset, ()))]
            if bad:
                done.bad_reads[run.run_id] = bad
            continue
        tainted = run.run_id in done.origin or run.run_id in done.bad_reads
        if run.run_id in done.origin:
            writes = list(run.writes) + stale.get(run.run_id, [])
        elif tainted and (run.state != "COMPLETE" or not run.writes):
            writes = list(run.writes) + outputs.get(run.job or "", [])
        else:
            writes = list(run.writes)
        for a in writes:
            if tainted:
                bad_now.setdefault(a.dataset, when)
                done.bad_since.setdefault(a.dataset, when)
                if a.version is not None:
                    bad_versions.setdefault(a.dataset, set()).add(a.version)
            elif run.state == "COMPLETE":
                bad_now.pop(a.dataset, None)
    return done
