"""A rerun plan: from a bad run (or a dataset's bad writes), every downstream run that read bad
data, the jobs to run again ordered so that each runs after everything it reads, grouped by the
run that started them (an Airflow DAG run, with the task ids to clear), and for each dataset that
holds bad data the last version a clean run wrote (docs/graph-model.md, "Repair").

The runs since bad data began are replayed in time order (impact.repair.replay): a run read bad
data when a version it read is a bad one, or when it read a dataset while that dataset was bad
(from a bad write, or a failed run of its producer, until a clean run of a producer completed a
write of it); what such a run writes is bad in turn.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

import networkx as nx

from graph.db import Graph
from graph.errors import NotFound
from impact.answers import clamp_depth, native_time
from impact.repair.replay import Access, Replayed, RunFacts, replay


@dataclass(frozen=True)
class Rerun:
    """A job to run again: where it comes in the order, what it must follow, and its runs that
    read bad data (each with the bad datasets it read)."""

    job: str
    step: int
    after: tuple[str, ...]
    runs: tuple[str, ...]  # its runs that read bad data (none when it waits)
    read: tuple[str, ...]  # the bad inputs they read (or the input it waits on)
    reason: str  # "read bad data", or "has not run since its input went bad"
    group: str | None  # the run that started its runs: "JOB run RUN_ID" (an Airflow DAG run)
    task: str | None  # what the group's orchestrator reruns (an Airflow task id)


@dataclass(frozen=True)
class Group:
    """The reruns started by one parent run (an Airflow DAG run, a Spark application, a dbt
    invocation), with what its orchestrator reruns."""

    job: str
    run_id: str
    integration: str | None
    tasks: tuple[str, ...]  # in the plan's order
    logical_date: datetime | None  # Airflow: the DAG run's logical date (its nominal start)
    command: str | None
    """The commands that rerun the tasks, a line each (Airflow: a ``tasks clear`` per task)."""
    failed: tuple[str, ...] = ()
    """Other tasks of the DAG run that failed: cleared with the tasks, since a task left failed
    keeps those after it in the DAG from running (Airflow: upstream_failed)."""


@dataclass(frozen=True)
class Rollback:
    """The version of a dataset holding bad data to go back to: the last one a clean run
    wrote before bad data reached it."""

    dataset: str
    bad_since: datetime | None
    version: str | None
    run_id: str | None
    time: datetime | None
    note: str


@dataclass(frozen=True)
class RerunPlan:
    source: str  # "run RUN_ID" or "dataset NS:NAME"
    since: datetime
    origin: tuple[str, ...]  # the runs where bad data began (the run and its child runs)
    origin_jobs: tuple[str, ...]  # their jobs: fix, then run again first
    reruns: tuple[Rerun, ...]
    groups: tuple[Group, ...]
    rollbacks: tuple[Rollback, ...]
    examined: int  # datasets downstream whose runs were replayed
    columns: tuple[str, ...] = ()  # the bad columns of the origin's outputs; () for every column
    unaffected: tuple[Rerun, ...] = ()  # read bad data, but only columns the bad ones do not feed

    @property
    def commands(self) -> tuple[str, ...]:
        return tuple(line for g in self.groups if g.command for line in g.command.splitlines())


def rerun_plan_run(graph: Graph, run_id: str, depth: int | None = None,
                   columns: tuple[str, ...] = ()) -> RerunPlan:
    """The plan for bad data that began with run ``run_id`` (and its child runs); with
    ``columns``, only those columns of what it wrote are bad."""
    rows = graph.read("repair/bad_run", runId=run_id)
    if not rows:
        raise NotFound("run", run_id)
    origin = [_facts(r) for r in rows[0]["runs"]]
    since = min((t for o in origin for t in (o.start, o.end) if t is not None), default=None)
    if since is None:
        raise NotFound("run", run_id)
    # a failed run that wrote nothing leaves its job's outputs stale: bad from its end too
    stale = {o.run_id: [Access(w["namespace"], w["name"], None) for w in r["writes"]]
             for o, r in zip(origin, rows[0]["runs"], strict=True)}
    return _plan(graph, f"run {origin[0].run_id}", since, origin, stale, depth, columns)


def rerun_plan_dataset(graph: Graph, namespace: str, name: str, since: datetime | None = None,
                       depth: int | None = None, columns: tuple[str, ...] = ()) -> RerunPlan:
    """The plan for bad data written to ``namespace:name`` since ``since`` (or by its latest
    write); with ``columns``, only those of its columns are bad."""
    [row] = graph.read("repair/bad_writes", namespace=namespace, name=name,
                       since=since.astimezone(UTC) if since else None)
    if not row["found"]:
        raise NotFound("dataset", f"{namespace}:{name}", name)
    origin = [_facts(w, writes=[{"namespace": namespace, "name": name,
                                 "version": w["version"]}]) for w in row["writes"]]
    start = since or min((o.end for o in origin if o.end is not None), default=None)
    if start is None:
        # it exists but nothing wrote it: say so, with no "did you mean" for its name
        raise NotFound("write of dataset", f"{namespace}:{name} to plan from (give the time it "
                                           "went bad: since)")
    # bad since a time with no write since: the data went bad in place (as of ``since``)
    stale = {} if origin else {"": [Access(namespace, name, None)]}
    if not origin:
        origin = [RunFacts("", None, None, start, start, (), ())]
    return _plan(graph, f"dataset {namespace}:{name}", start, origin, stale, depth, columns)


def _plan(graph: Graph, source: str, since: datetime, origin: list[RunFacts],
          stale: dict[str, list[Access]], depth: int | None,
          columns: tuple[str, ...] = ()) -> RerunPlan:
    # a stdlib UTC time: Neo4j orders a zone id "UTC" (the driver's) after the same instant
    # stored with offset Z, so an equal time would compare as later
    since = since.astimezone(UTC)
    starts = sorted({(a.namespace, a.name) for o in origin for a in o.writes}
                    | {(a.namespace, a.name) for accesses in stale.values() for a in accesses})
    rows = graph.read("repair/runs_downstream", depth=clamp_depth(depth), since=since,
                      starts=[{"namespace": ns, "name": name} for ns, name in starts]
                      ) if starts else []
    runs, before, current = _runs(rows, {f"{ns}:{name}" for ns, name in starts})
    origin = [replace(o, writes=tuple(current.of(a) for a in o.writes)) for o in origin]
    stale = {k: [current.of(a) for a in v] for k, v in stale.items()}
    done = replay(runs, origin, stale, current.outputs())
    origin_jobs = tuple(dict.fromkeys(o.job for o in origin if o.job))
    waiting = _waiting(done, runs, current, set(origin_jobs))
    order = _order(runs, done, waiting, current)
    asked = {*done.bad_reads, *(o.run_id for o in origin if o.run_id),
             *(w.last_run for w in waiting.values() if w.last_run)}
    parents = {r["runId"]: Lineage(r["jobName"], r["ancestors"])
               for r in graph.read("repair/ancestors", runs=sorted(asked))}
    apart = _unaffected(graph, order, done, runs, waiting, origin, stale, current, columns)
    kept = _Order(tuple(j for j in order.jobs if j not in apart),
                  {j: tuple(a for a in after if a not in apart) for j, after in order.after.items()})
    reruns = tuple(_rerun(job, i, kept, done, runs, waiting, parents)
                   for i, job in enumerate(kept.jobs, 1))
    left = tuple(_rerun(job, 0, kept, done, runs, waiting, parents, "not affected by the changed columns")
                 for job in order.jobs if job in apart)
    written_apart = {d for j in apart for d in current.writes.get(j, ())} - {
        d for j in kept.jobs for d in current.writes.get(j, ())}
    rollbacks = tuple(b for b in _rollbacks(done, runs, before) if b.dataset not in written_apart)
    return RerunPlan(source, since, tuple(o.run_id for o in origin if o.run_id), origin_jobs,
                     reruns, _groups(graph, reruns, origin, waiting, parents), rollbacks,
                     len(rows), columns, left)


def _unaffected(graph: Graph, order: _Order, done: Replayed, runs: dict[str, RunFacts],
                waiting: dict[str, Waiting], origin: list[RunFacts],
                stale: dict[str, list[Access]], current: Current,
                columns: tuple[str, ...]) -> set[str]:
    """With only ``columns`` of the origin's outputs bad: the jobs of the plan whose bad reads,
    by their column lineage, touch no column those feed (docs/graph-model.md, "Repair"). In the
    plan's order, so that what an affected job writes from a bad column is bad in turn; a job
    that reads a bad dataset with no column lineage (coarse) may copy any column: affected, and
    all it writes is bad."""
    if not columns or not order.jobs:
        return set()

    def key(namespace: str, name: str) -> str:
        return current.of(Access(namespace, name, None)).dataset

    bad = {(a.dataset, c) for o in origin for a in o.writes for c in columns}
    bad |= {(a.dataset, c) for accesses in stale.values() for a in accesses for c in columns}
    whole: set[str] = set()  # datasets any of whose columns may be bad
    facts = {r["job"]: r for r in graph.read("repair/job_columns", jobs=[
        {"namespace": j.split(":", 1)[0], "name": j.split(":", 1)[1]} for j in order.jobs])}
    apart: set[str] = set()
    for job in order.jobs:
        read = {a.dataset for r, accesses in done.bad_reads.items() if runs[r].job == job
                for a in accesses} or ({waiting[job].dataset} if job in waiting else set())
        f = facts.get(job)
        if f is None:  # nothing known of its lineage: it may copy anything
            whole |= {d for d in current.writes.get(job, ())}
            continue
        edges = [(key(e["inNamespace"], e["inDataset"]), e["inColumn"],
                  key(e["outNamespace"], e["outDataset"]), e["outColumn"]) for e in f["edges"]]
        coarse = {key(c["namespace"], c["name"]) for c in f["coarse"]}
        hit = [e for e in edges if (e[0], e[1]) in bad or e[0] in whole]
        # what it read that holds bad data still (not only what an unaffected job rewrote)
        really = {d for d in read if d in whole or any(b == d for b, _ in bad)}
        blind = (coarse & really) | (really - {e[0] for e in edges} - coarse)
        if blind:
            whole |= {key(o["namespace"], o["name"]) for o in f["outputs"]}
        elif not hit:
            apart.add(job)
            continue
        bad |= {(e[2], e[3]) for e in hit}
    return apart


@dataclass(frozen=True)
class Lineage:
    """A run's job's name and the runs that started it, nearest first (repair/ancestors)."""

    job_name: str | None
    ancestors: list[dict[str, Any]]

    def task(self) -> tuple[dict[str, Any], str] | None:
        """The run that started it (its outermost ancestor), and what that one's orchestrator
        reruns: the ancestor just below it, or the run's own job (an Airflow task of a DAG run:
        the task's job name after ``<dag>.``); None for a run nothing started."""
        if not self.ancestors:
            return None
        root = self.ancestors[-1]
        below = self.ancestors[-2]["jobName"] if len(self.ancestors) > 1 else self.job_name
        return root, (below or "").removeprefix(f"{root['jobName']}.")


@dataclass(frozen=True)
class Current:
    """The current lineage of the datasets examined: who reads and who writes each."""

    readers: dict[str, list[dict[str, Any]]]  # dataset -> [{job, lastRunId, lastStart}]
    writes: dict[str, set[str]]  # job -> the datasets it writes
    name: dict[str, tuple[str, str]]  # each name of a table -> its first name

    def outputs(self) -> dict[str, list[Access]]:
        """Each job's current outputs."""
        shown = {f"{ns}:{name}": (ns, name) for ns, name in self.name.values()}
        return {job: [Access(*shown[d], None) for d in sorted(ds)]
                for job, ds in self.writes.items()}

    def of(self, access: Access) -> Access:
        """An access under its table's first name."""
        ns, name = self.name.get(access.dataset, (access.namespace, access.name))
        return Access(ns, name, access.version)


@dataclass(frozen=True)
class Waiting:
    """A job downstream of bad data that has not run since: it must run after the repair."""

    dataset: str  # the input that went bad, or that a job before it in the plan rewrites
    last_run: str | None


def _waiting(done: Replayed, runs: dict[str, RunFacts], current: Current,
             origin_jobs: set[str]) -> dict[str, Waiting]:
    """The jobs that read, in current lineage, a dataset holding bad data (or one a job of the
    plan will write again) and have not run since it went bad (a DAG run's tasks after a failed
    one: Airflow did not run them)."""
    planned = {runs[r].job for r in done.bad_reads}
    found: dict[str, Waiting] = {}
    queue = sorted(done.bad_since.items())
    while queue:
        dataset, since = queue.pop(0)
        for reader in current.readers.get(dataset, []):
            job = reader["job"]
            if job in origin_jobs or job in planned or job in found:
                continue
            last = native_time(reader["lastStart"])
            if last is not None and last >= since:
                continue  # it ran since: the replay judged that run
            found[job] = Waiting(dataset, reader["lastRunId"])
            queue += [(d, since) for d in sorted(current.writes.get(job, ()))]
    return found


@dataclass(frozen=True)
class _Order:
    jobs: tuple[str, ...]
    after: dict[str, tuple[str, ...]]


def _order(runs: dict[str, RunFacts], done: Replayed, waiting: dict[str, Waiting],
           current: Current) -> _Order:
    """The jobs of the plan (those whose runs read bad data, those waiting), each after every job
    of the plan that writes what it reads (over the lineage the runs state and current lineage;
    jobs that feed each other in a cycle come together, by name); ties by name."""
    jobs = {j for r in done.bad_reads if (j := runs[r].job)} | set(waiting)
    writers: dict[str, set[str]] = {}
    readers: dict[str, set[str]] = {}
    for run in runs.values():
        if run.job is None or run.job not in jobs:
            continue
        for a in run.writes:
            writers.setdefault(a.dataset, set()).add(run.job)
        for a in run.reads:
            readers.setdefault(a.dataset, set()).add(run.job)
    for job, outputs in current.writes.items():
        for d in outputs:
            if job in jobs:
                writers.setdefault(d, set()).add(job)
    for d, found in current.readers.items():
        readers.setdefault(d, set()).update(r["job"] for r in found if r["job"] in jobs)
    g: nx.DiGraph[str] = nx.DiGraph()
    g.add_nodes_from(jobs)
    g.add_edges_from((a, b) for d, ws in writers.items() for a in ws
                     for b in readers.get(d, ()) if a != b)
    condensed = nx.condensation(g)
    members = {n: sorted(condensed.nodes[n]["members"]) for n in condensed.nodes}
    ordered = [job for n in nx.lexicographical_topological_sort(condensed, key=lambda n: members[n][0])
               for job in members[n]]
    return _Order(tuple(ordered), {j: tuple(sorted(g.predecessors(j))) for j in ordered})


def _rerun(job: str, step: int, order: _Order, done: Replayed, runs: dict[str, RunFacts],
           waiting: dict[str, Waiting], parents: dict[str, Lineage],
           reason: str | None = None) -> Rerun:
    mine = sorted((r for r in done.bad_reads if runs[r].job == job),
                  key=lambda r: (runs[r].start is None, runs[r].start or datetime.min, r))
    read = tuple(dict.fromkeys(a.dataset for r in mine for a in done.bad_reads[r]))
    last = mine[-1] if mine else waiting[job].last_run
    started = parents[last].task() if last in parents else None
    return Rerun(job, step, order.after.get(job, ()), tuple(mine), read or (waiting[job].dataset,),
                 reason or ("read bad data" if mine else "has not run since its input went bad"),
                 f"{started[0]['job']} run {started[0]['runId']}" if started else None,
                 started[1] if started else None)


def _groups(graph: Graph, reruns: tuple[Rerun, ...], origin: list[RunFacts],
            waiting: dict[str, Waiting], parents: dict[str, Lineage]) -> tuple[Group, ...]:
    """One group a parent run, in the order its first task comes: the origin's task first (it
    runs again first, once fixed), then the reruns' in the plan's order. A job waiting since an
    earlier run of the same DAG joins the group of that DAG's run in the plan. An Airflow
    group's command clears the DAG run's other failed tasks too (``Group.failed``)."""
    found: dict[str, tuple[dict[str, Any], list[str]]] = {}
    by_job: dict[str, str] = {}  # a parent job -> its run the plan groups under
    lasts = [*(o.run_id for o in origin),
             *(r.runs[-1] if r.runs else waiting[r.job].last_run or "" for r in reruns)]
    for last in lasts:
        begun = parents[last].task() if last in parents else None
        if begun is None or not begun[1]:
            continue
        root, task = begun
        key = by_job.setdefault(root["job"], root["runId"])
        found.setdefault(key, (root, []))[1].append(task)
    ran: dict[str, list[tuple[str, str | None]]] = {}  # a parent run -> its tasks' runs
    for row in graph.read("repair/dag_run_tasks", parents=sorted(found)) if found else []:
        ran.setdefault(row["parentRunId"], []).append((row["jobName"] or "", row["state"]))
    groups = []
    for key, (root, found_tasks) in found.items():
        tasks = tuple(dict.fromkeys(found_tasks))
        when = native_time(root.get("nominalStart")) or native_time(root.get("start"))
        airflow = (root.get("integration") or "").upper() == "AIRFLOW"
        dag = root.get("jobName") or ""
        siblings = {name.removeprefix(f"{dag}.") for name, _ in ran.get(key, [])}
        stuck = tuple(dict.fromkeys(
            t for name, state in ran.get(key, []) if state in ("FAIL", "ABORT")
            and (t := name.removeprefix(f"{dag}.")) and t not in tasks)) if airflow else ()
        command = "\n".join(_clear(dag, t, when, siblings | set(tasks))
                            for t in (*tasks, *stuck)) if airflow and dag else None
        groups.append(Group(root["job"], root["runId"], root.get("integration"), tasks, when,
                            command, stuck))
    return tuple(groups)


def _clear(dag: str, task: str, when: datetime | None, known: set[str]) -> str:
    """Airflow's command that clears ``task`` of the DAG run at ``when``: one task a command,
    named as it is (Airflow 3.3.2 reads ``--task-regex`` as a part of a task id, Airflow 2 as
    a regular expression searched in it: an anchored or grouped pattern finds nothing in 3.3.2,
    the task id alone finds the task in both); a comment says which other tasks of the DAG run
    the name also finds, if any."""
    dates = f" --start-date {when.isoformat()} --end-date {when.isoformat()}" if when else ""
    also = sorted(t for t in known if t != task and task in t)
    # Airflow's ids hold no control character: one that does (a hostile event) is written
    # escaped, so that each command stays one line
    return (f"airflow tasks clear {_quote(_shown(dag))} --task-regex {_quote(_shown(task))}"
            f"{dates} --yes" + (f"  # also clears {', '.join(_shown(t) for t in also)}" if also else ""))


def _shown(name: str) -> str:
    """A name from an event, as a shell comment may hold it: a line break would end the comment
    and start a command, so whatever is not printable is written as an escape."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in name)


def _rollbacks(done: Replayed, runs: dict[str, RunFacts],
               before: dict[str, dict[str, Any]]) -> tuple[Rollback, ...]:
    found = []
    for dataset, bad_since in sorted(done.bad_since.items()):
        end: datetime | None
        clean = [(run.end, run.run_id, a.version) for run in runs.values()
                 if run.run_id not in done.bad_reads and run.run_id not in done.origin
                 and run.state == "COMPLETE" and run.end is not None and run.end < bad_since
                 for a in run.writes if a.dataset == dataset]
        if clean:
            end, run_id, version = max(clean, key=lambda c: (c[0], c[1]))
        elif (b := before.get(dataset)) is not None:
            end, run_id, version = native_time(b["end"]), b["runId"], b["version"]
        else:
            found.append(Rollback(dataset, bad_since, None, None, None,
                                  "no good version in the detailed window"))
            continue
        found.append(Rollback(dataset, bad_since, version, run_id, end,
                              f"inspect it with --as-of {end:%Y-%m-%dT%H:%M:%SZ}" if end else ""))
    return tuple(found)


def _runs(rows: list[dict[str, Any]], starts: set[str]
          ) -> tuple[dict[str, RunFacts], dict[str, dict[str, Any]], Current]:
    """Every run the rows name, with its reads and writes of the datasets examined; each
    dataset's last clean write before the plan's start; and their current lineage. A table's
    names (symlinks, aliases) are one dataset, named by the name bad data began in, else the
    first of them (``Current.name``)."""
    name = _names(rows, starts)
    reads: dict[str, list[Access]] = {}
    writes: dict[str, list[Access]] = {}
    facts: dict[str, dict[str, Any]] = {}
    before: dict[str, dict[str, Any]] = {}
    current = Current({}, {}, name)
    for row in rows:
        ns, key = name.get(f"{row['namespace']}:{row['name']}", (row["namespace"], row["name"]))
        dataset = f"{ns}:{key}"
        if row["before"] is not None and (dataset not in before or _time(
                row["before"]["end"]) > _time(before[dataset]["end"])):
            before[dataset] = row["before"]
        current.readers.setdefault(dataset, []).extend(row["readers"])
        for job in row["writers"]:
            current.writes.setdefault(job, set()).add(dataset)
        for r in row["reads"]:
            facts.setdefault(r["runId"], r)
            reads.setdefault(r["runId"], []).append(Access(ns, key, r["version"]))
        for w in row["writes"]:
            facts.setdefault(w["runId"], w)
            writes.setdefault(w["runId"], []).append(Access(ns, key, w["version"]))
    runs = {rid: RunFacts(rid, f["job"], f["state"], native_time(f["start"]), native_time(f["end"]),
                          tuple(dict.fromkeys(reads.get(rid, ()))),
                          tuple(dict.fromkeys(writes.get(rid, ()))))
            for rid, f in facts.items()}
    return runs, before, current


def _time(value: Any) -> datetime:
    return native_time(value) or datetime.min.replace(tzinfo=UTC)


def _names(rows: list[dict[str, Any]], starts: set[str]) -> dict[str, tuple[str, str]]:
    """Each name of a table the rows hold -> the name it is shown by (namespace, name): the one
    of ``starts`` (where bad data began), else the first. The walk follows alias edges both
    ways, so every name of a table reached is a row."""
    keys = {f"{r['namespace']}:{r['name']}": (r["namespace"], r["name"]) for r in rows}
    found: dict[str, tuple[bool, tuple[str, str]]] = {}
    for row in rows:
        group = [k for k in {f"{row['namespace']}:{row['name']}", *row["otherNames"]} if k in keys]
        first = min((k not in starts, keys[k]) for k in group)
        for k in group:
            found[k] = min(found.get(k, first), first)
    return {k: shown for k, (_, shown) in found.items()}


def _facts(r: dict[str, Any], writes: list[dict[str, Any]] | None = None) -> RunFacts:
    return RunFacts(r["runId"], r["job"], r["state"], native_time(r["start"]),
                    native_time(r["end"]), (),
                    tuple(Access(w["namespace"], w["name"], w["version"])
                          for w in (writes or r.get("wrote") or [])))


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
