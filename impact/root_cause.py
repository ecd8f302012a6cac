"""Root cause: this dataset (or run) is wrong; which upstream run, input or schema change did it?

Walks upstream through DERIVED_FROM from the broken datasets (a run's inputs, for a run) and
collects evidence at every dataset on the way, then ranks candidates:

1. failed or aborted runs: the latest run of a job that writes the dataset failed (with its error);
2. failed data-quality assertions on the dataset;
3. stale or missing inputs: no successful write at all, or none since the broken dataset's previous
   success, or late against its own cadence at the reference time;
4. schema changes: columns added or gone within ``recent`` before the reference time.

Nearer candidates rank higher within a kind. A candidate on a choke point (an upstream dataset
every path into the broken one passes through, found with networkx dominators) ranks higher still.
The reference time is ``as_of`` if given, else the time of the broken datasets' latest runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from graph.db import Graph
from graph.errors import NotFound
from impact.answers import approximate, clamp_depth, native_time, require_dataset
from impact.flow import choke_points, flow_graph
from impact.health.freshness import TOLERANCE, assess, run_states

WEIGHT = {"failed run": 100, "failed assertion": 80, "stale input": 60, "missing input": 60,
          "schema change": 40}
RECENT = timedelta(days=7)


@dataclass(frozen=True)
class Candidate:
    kind: str
    dataset: str
    distance: int
    path: tuple[str, ...]
    score: int
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)
    score_parts: tuple[tuple[str, int], ...] = ()
    """What the score is made of: (what, points), summing to ``score``."""

    def score_is(self) -> str:
        """The score explained: "100 failed run + 10 choke point - 2 hops away"."""
        if not self.score_parts:
            return str(self.score)
        first, *rest = self.score_parts
        return f"{first[1]} {first[0]}" + "".join(
            f" {'+' if points >= 0 else '-'} {abs(points)} {what}" for what, points in rest)


@dataclass(frozen=True)
class RootCause:
    target: str
    depth: int
    reference_time: datetime
    candidates: tuple[Candidate, ...]
    choke_points: tuple[str, ...]
    examined: int
    approximate: str | None = None
    """Why an answer as of a time before the detailed window of retention is approximate."""


def root_cause_dataset(graph: Graph, namespace: str, name: str, depth: int | None = None,
                       as_of: datetime | None = None, recent: timedelta = RECENT) -> RootCause:
    """Ranked candidates for why ``namespace:name`` is wrong."""
    require_dataset(graph, namespace, name)
    return _rank(graph, f"dataset {namespace}:{name}", [{"namespace": namespace, "name": name}],
                 clamp_depth(depth), as_of, recent, [])


def root_cause_run(graph: Graph, run_id: str, depth: int | None = None,
                   as_of: datetime | None = None, recent: timedelta = RECENT) -> RootCause:
    """Ranked candidates for why a run failed or produced bad data: the run itself, then its inputs."""
    rows = graph.read("lookup/run", runId=run_id)
    if not rows:
        raise NotFound("run", run_id)
    run = rows[0]
    props = run["props"]
    own: list[Candidate] = []
    if props.get("state") in ("FAIL", "ABORT"):
        own.append(Candidate("failed run", f"run {run_id}", 0, (f"run {run_id}",), WEIGHT["failed run"] + 20,
                             f"this run of {run['job']} ended {props['state']}: "
                             f"{props.get('errorMessage') or 'no error message'}",
                             {"job": run["job"], "runId": run_id, "state": props["state"],
                              "errorMessage": props.get("errorMessage")},
                             (("failed run", WEIGHT["failed run"]), ("the run asked about", 20))))
    # a parent run (a DAG run, a Spark application) is examined through its child runs: their
    # failures first (a DAG run fails because a task did: the task's failure is the cause, ranked
    # above the parent's own), then upstream of what any of them read
    for child in run.get("descendants") or []:
        if child["state"] in ("FAIL", "ABORT"):
            own.append(Candidate(
                "failed run", f"run {child['runId']}", 1, (f"run {run_id}", f"run {child['runId']}"),
                WEIGHT["failed run"] + 25,
                f"child run of {child['job']} ended {child['state']}: "
                f"{child.get('errorMessage') or 'no error message'}",
                {"job": child["job"], "runId": child["runId"], "state": child["state"],
                 "errorMessage": child.get("errorMessage")},
                (("failed run", WEIGHT["failed run"]),
                 ("a child run of the run asked about (its failure failed it)", 25))))
    inputs = list({(i["namespace"], i["name"]): {"namespace": i["namespace"], "name": i["name"]}
                   for i in [*run["inputs"], *(x for c in run.get("descendants") or []
                                               for x in c["inputs"])]}.values())
    when = as_of or native_time(props.get("stateTime"))
    return _rank(graph, f"run {run_id}", inputs, clamp_depth(depth), when, recent, own, offset=1)


def _rank(graph: Graph, target: str, starts: list[dict[str, str]], depth: int,
          as_of: datetime | None, recent: timedelta, found: list[Candidate],
          offset: int = 0) -> RootCause:
    # over the lineage current at the reference time (retired inputs are no cause)
    rows = graph.read("impact/root_cause", datasets=starts, depth=depth, asOf=as_of,
                      includeRetired=False) if starts else []
    start_keys = {f"{s['namespace']}:{s['name']}" for s in starts}
    start_rows = [r for r in rows if r["distance"] == 0]
    reference = as_of or max((t for r in start_rows for x in r["latestRuns"]
                              if (t := native_time(x["time"])) is not None),
                             default=datetime.now(UTC))
    flow = flow_graph({f"{r['namespace']}:{r['name']}": r["sources"] for r in rows})
    chokes = [c for s in start_keys for c in choke_points(flow, s)]
    for r in rows:
        found.extend(candidates(r, offset, reference, recent, set(chokes)))
    found.sort(key=lambda c: (-c.score, c.distance, c.dataset))
    return RootCause(target, depth, reference, tuple(found), tuple(dict.fromkeys(chokes)), len(rows),
                     approximate(graph, as_of))


def _staleness(successes: list[datetime], reads: list[datetime], cadence: timedelta | None
               ) -> tuple[str, dict[str, Any]] | None:
    """Why an input was stale when its consumer last read it successfully, or None.

    With a known cadence: its last success before that read is older than the cadence allows.
    Without one: it was not written between the consumer's last two successful reads (the
    consumer read the same data twice). Writes by the run that reads it, or just before it in
    the same application, are never stale: they precede the read by less than any cadence."""
    if not reads:
        return None
    read = reads[0]
    before = [t for t in successes if t <= read]
    if not before:
        return (f"was read at {read:%Y-%m-%d %H:%M} before any successful write",
                {"lastRead": read})
    written = max(before)
    if cadence is not None:
        if read - written > cadence * TOLERANCE:
            return (f"was last written {written:%Y-%m-%d %H:%M}, more than its cadence allows "
                    f"before its consumer read it at {read:%Y-%m-%d %H:%M}",
                    {"lastSuccess": written, "lastRead": read, "cadence": cadence})
        return None
    if len(reads) > 1 and written <= reads[1]:
        return (f"was not written between its consumer's last two successful reads "
                f"({reads[1]:%Y-%m-%d %H:%M} and {read:%Y-%m-%d %H:%M}); last written "
                f"{written:%Y-%m-%d %H:%M}", {"lastSuccess": written, "lastRead": read,
                                                 "previousRead": reads[1]})
    return None


def candidates(r: dict[str, Any], offset: int, reference: datetime,
               recent: timedelta, chokes: set[str]) -> list[Candidate]:
    """The candidates one row of ``impact/root_cause`` (a dataset upstream of the broken one)
    offers, each scored: its kind's weight, +10 on a choke point, minus its distance (at most 19).
    Pure: the row and the reference time decide."""
    key = f"{r['namespace']}:{r['name']}"
    distance = r["distance"] + offset
    bonus = 10 if key in chokes else 0
    path = tuple(r["path"])
    out: list[Candidate] = []

    def add(kind: str, summary: str, **evidence: Any) -> None:
        parts = [(kind, WEIGHT[kind])]
        if bonus:
            parts.append(("choke point (every upstream path passes it)", bonus))
        if distance:
            parts.append((f"hop{'s' if distance > 1 else ''} away", -min(distance, 19)))
        out.append(Candidate(kind, key, distance, path, sum(p for _, p in parts), summary,
                             {**evidence, "chokePoint": key in chokes}, tuple(parts)))

    runs = run_states(r["latestRuns"])
    failed = [x for x in runs if x.state in ("FAIL", "ABORT")]
    for x in failed:
        started = "".join(f"; {'started by' if i == 0 else 'in'} {p['job']} run {p['runId']}"
                          + (f" ({p['state']})" if p.get("state") else "")
                          for i, p in enumerate(x.parents))
        add("failed run", f"latest run of {x.job} writing {key} ended {x.state}: "
            f"{x.error_message or 'no error message'}{started}", job=x.job, runId=x.run_id,
            state=x.state, time=x.time, errorMessage=x.error_message, parents=list(x.parents))
    if r["failedAssertions"]:
        add("failed assertion", f"{key} failed data-quality assertions: "
            + ", ".join(r["failedAssertions"]), assertions=list(r["failedAssertions"]))
    successes = [t for t in map(native_time, r["successes"]) if t]
    last, cadence, due, late = assess(successes, reference)
    if r["producers"] and not failed and r["distance"] > 0:
        stale = _staleness(successes, sorted(filter(None, map(native_time, r.get("reads") or [])),
                                             reverse=True), cadence)
        if last is None:
            add("missing input", f"no successful run has written {key}", producers=r["producers"])
        elif stale is not None:
            add("stale input", f"{key} {stale[0]}", **stale[1])
        elif late:
            add("stale input", f"{key} is late: last success {last:%Y-%m-%d %H:%M}, due by "
                f"{due:%Y-%m-%d %H:%M}", lastSuccess=last, cadence=cadence, due=due)
    earliest = datetime.min.replace(tzinfo=UTC)  # a reference time in year 1 has no week before it
    window = reference - recent if reference - earliest > recent else earliest
    added = [a for a in r["added"] if (t := native_time(a["time"])) and window <= t <= reference]
    dropped = [d for d in r["dropped"] if (t := native_time(d["time"])) and window <= t <= reference]
    if added or dropped:
        parts = ([f"added {', '.join(a['column'] for a in added)}"] if added else []) + \
                ([f"dropped {', '.join(d['column'] for d in dropped)}"] if dropped else [])
        add("schema change", f"schema of {key} changed recently: {'; '.join(parts)}",
            added=[a["column"] for a in added], dropped=[d["column"] for d in dropped])
    return out
