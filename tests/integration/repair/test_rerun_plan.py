"""Rerun plans on generated pipelines with known answers (docs/graph-model.md, "Repair"):
layered jobs with fan-in, column lineage and versions on some datasets, each job's run an
Airflow task of a DAG run; two nights, the second with a bad (or failed) run placed at random.
The plan's jobs are exactly those downstream of it, in an order that respects every dependency,
grouped under the DAG run with the task ids to clear; the rollback targets are the first night's
versions; and the same plan whatever order the events arrive in."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import networkx as nx
import pytest

from graph.db import Graph
from graph.errors import NotFound
from impact.repair.plan import RerunPlan, rerun_plan_dataset, rerun_plan_run
from tests.conftest import wipe
from tests.helpers import dataset, ingest_events, run_event

pytestmark = pytest.mark.integration

DAG = "pipeline"
NIGHT0 = datetime(2026, 3, 1, 1, tzinfo=UTC)
AIRFLOW = {"jobType": {"processingType": "BATCH", "integration": "AIRFLOW", "jobType": "DAG"}}


@dataclass(frozen=True)
class Job:
    name: str
    layer: int
    inputs: tuple[str, ...]
    output: str
    versioned: bool  # its output's writes and reads state a version


def pipeline(rng: random.Random, layers: int = 4, width: int = 3) -> list[Job]:
    jobs: list[Job] = []
    for layer in range(layers):
        for i in range(width):
            name = f"j{layer}_{i}"
            if layer == 0:
                inputs: tuple[str, ...] = (f"src_{i}",)
            else:
                earlier = [j.output for j in jobs if j.layer < layer]
                inputs = tuple(sorted(rng.sample(earlier, rng.randint(1, min(3, len(earlier))))))
            jobs.append(Job(name, layer, inputs, f"d_{name}", rng.random() < 0.5))
    return jobs


def job_graph(jobs: list[Job]) -> nx.DiGraph[str]:
    writer = {j.output: j.name for j in jobs}
    g: nx.DiGraph[str] = nx.DiGraph()
    g.add_nodes_from(j.name for j in jobs)
    g.add_edges_from((writer[i], j.name) for j in jobs for i in j.inputs if i in writer)
    return g


def _id(*parts: object) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "/".join(map(str, parts))))


def night(jobs: list[Job], day: int, bad: str | None = None, fails: bool = False,
          skipped: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """Every job's run (but the ``skipped``), one after another in layer order, as Airflow tasks
    of one DAG run."""
    start = NIGHT0 + timedelta(days=day)
    dag_run = _id(DAG, day)
    versioned = {j.output for j in jobs if j.versioned}

    def ds(name: str) -> dict[str, Any]:
        found = dataset(name, columns=["id", "v"])
        if name in versioned:
            found["facets"]["version"] = {"datasetVersion": f"{name}@{day}"}
        return found

    events = [run_event("START", dag_run, DAG, time=_iso(start), job_facets=AIRFLOW)]
    for k, j in enumerate(sorted(jobs, key=lambda j: (j.layer, j.name))):
        if j.name in skipped:
            continue
        run_id = _id(j.name, day)
        begin, end = start + timedelta(minutes=2 * k + 1), start + timedelta(minutes=2 * k + 2)
        parent = {"parent": {"run": {"runId": dag_run}, "job": {"namespace": "ns", "name": DAG}}}
        inputs = [ds(i) if not i.startswith("src_") else dataset(i, columns=["id", "v"])
                  for i in j.inputs]
        lineage = {"id": [(j.inputs[0], "id", "DIRECT", "IDENTITY")],
                   "v": [(i, "v", "DIRECT", "TRANSFORMATION") for i in j.inputs]}
        output = ds(j.output) | {"facets": ds(j.output)["facets"] | dataset(
            j.output, lineage=lineage)["facets"]}
        failed = fails and j.name == bad
        events.append(run_event("START", run_id, f"{DAG}.{j.name}", time=_iso(begin),
                                inputs=inputs, run_facets=parent))
        events.append(run_event("FAIL" if failed else "COMPLETE", run_id, f"{DAG}.{j.name}",
                                time=_iso(end), inputs=inputs,
                                outputs=[] if failed else [output], run_facets=parent))
    done = start + timedelta(minutes=2 * len(jobs) + 1)
    events.append(run_event("FAIL" if fails else "COMPLETE", dag_run, DAG, time=_iso(done),
                            job_facets=AIRFLOW))
    return events


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _load(graph: Graph, events: list[dict[str, Any]], seed: int | None = None) -> None:
    if seed is not None:
        events = random.Random(seed).sample(events, len(events))
    assert not ingest_events(graph, events, batch_size=37).rejected


def _jobs(plan: RerunPlan) -> list[str]:
    return [r.job.removeprefix("ns:").removeprefix(f"{DAG}.") for r in plan.reruns]


def _check(plan: RerunPlan, jobs: list[Job], bad: str) -> None:
    g = job_graph(jobs)
    affected = nx.descendants(g, bad)
    assert set(_jobs(plan)) == affected  # recall and precision 100%
    step = {name: i for i, name in enumerate(_jobs(plan))}
    for a, b in g.edges:  # every dependency respected
        if a in step and b in step:
            assert step[a] < step[b], (a, b)
    assert plan.origin_jobs == (f"ns:{DAG}.{bad}",)
    # each job's runs that read bad data: its second night's run, and what it read that was bad
    bad_outputs = {f"d_{n}" for n in affected | {bad}}
    for r in plan.reruns:
        name = r.job.removeprefix(f"ns:{DAG}.")
        assert r.runs == (_id(name, 1),)
        assert {d.removeprefix("ns:") for d in r.read} == set(
            next(j for j in jobs if j.name == name).inputs) & bad_outputs
        assert r.group == f"ns:{DAG} run {_id(DAG, 1)}" and r.task == name
    # one group, the DAG run: the bad task first, then the plan's order, and the command
    [group] = plan.groups
    assert group.tasks == (bad, *_jobs(plan))
    when = (NIGHT0 + timedelta(days=1)).isoformat()
    assert plan.commands == tuple(  # a task a command: Airflow 3.3 reads the "regex" as a part
        f"airflow tasks clear '{DAG}' --task-regex '{t}' --start-date {when} --end-date {when} "
        "--yes" for t in (bad, *_jobs(plan), *group.failed))
    assert group.failed == ()  # the bad run did not fail (a failed one is checked below)
    # roll back each dataset holding bad data to the first night's write
    by_dataset = {r.dataset.removeprefix("ns:"): r for r in plan.rollbacks}
    assert set(by_dataset) == bad_outputs
    for name, target in by_dataset.items():
        job = name.removeprefix("d_")
        assert target.run_id == _id(job, 0)
        versioned = next(j for j in jobs if j.output == name).versioned
        assert target.version == (f"{name}@0" if versioned else None)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_bad_runs_plan_is_exactly_what_is_downstream_in_dependency_order(
        graph: Graph, seed: int) -> None:
    rng = random.Random(seed)
    jobs = pipeline(rng, layers=5, width=4)
    g = job_graph(jobs)
    bad = rng.choice(sorted(j.name for j in jobs if nx.descendants(g, j.name)))
    _load(graph, night(jobs, 0) + night(jobs, 1, bad))
    plan = rerun_plan_run(graph, _id(bad, 1))
    _check(plan, jobs, bad)
    # planned from the dataset it wrote (its latest write): the same reruns and rollbacks
    by_output = rerun_plan_dataset(graph, "ns", f"d_{bad}")
    assert by_output.reruns == plan.reruns and by_output.rollbacks == plan.rollbacks


def test_a_failed_runs_plan_reruns_what_read_its_stale_outputs(graph: Graph) -> None:
    rng = random.Random(7)
    jobs = pipeline(rng)
    bad = "j1_1"
    _load(graph, night(jobs, 0) + night(jobs, 1, bad, fails=True))
    plan = rerun_plan_run(graph, _id(bad, 1))
    _check(plan, jobs, bad)


def test_tasks_that_did_not_run_after_a_failed_one_are_planned_after_it(graph: Graph) -> None:
    """As Airflow does: the bad task fails and the tasks downstream of it do not run that night
    (upstream failed); they read no bad data but must run after the fix, in order, in the
    failing night's DAG run; the failed task's output goes back to the first night's version."""
    rng = random.Random(3)
    jobs = pipeline(rng, layers=5, width=4)
    g = job_graph(jobs)
    bad = "j1_1"
    downstream = frozenset(nx.descendants(g, bad))
    assert downstream
    _load(graph, night(jobs, 0) + night(jobs, 1, bad, fails=True, skipped=downstream))
    plan = rerun_plan_run(graph, _id(bad, 1))
    assert set(_jobs(plan)) == downstream
    assert all(r.runs == () and r.reason == "has not run since its input went bad"
               for r in plan.reruns)
    step = {name: i for i, name in enumerate(_jobs(plan))}
    assert all(step[a] < step[b] for a, b in g.edges if a in step and b in step)
    [group] = plan.groups
    assert group.run_id == _id(DAG, 1) and group.tasks == (bad, *_jobs(plan))
    [rollback] = plan.rollbacks
    assert rollback.dataset == f"ns:d_{bad}" and rollback.run_id == _id(bad, 0)


def test_the_plan_is_the_same_whatever_order_the_events_arrive_in(graph: Graph) -> None:
    rng = random.Random(11)
    jobs = pipeline(rng)
    bad = "j0_2"
    events = night(jobs, 0) + night(jobs, 1, bad)
    plans = []
    for seed in (None, 5, 6):
        wipe(graph)
        _load(graph, events, seed)
        plans.append(rerun_plan_run(graph, _id(bad, 1)))
    assert plans[1] == plans[0] and plans[2] == plans[0]
    _check(plans[0], jobs, bad)


def test_a_clean_rerun_ends_the_bad_data(graph: Graph) -> None:
    """After the bad night, the bad job runs again clean on the third night, and so does
    everything after it: the third night's runs read good data and are not in the plan."""
    rng = random.Random(4)
    jobs = pipeline(rng)
    bad = "j1_0"
    _load(graph, night(jobs, 0) + night(jobs, 1, bad) + night(jobs, 2))
    _check(rerun_plan_run(graph, _id(bad, 1)), jobs, bad)


def test_an_unknown_run_or_dataset_is_not_found(graph: Graph) -> None:
    with pytest.raises(NotFound, match="no run"):
        rerun_plan_run(graph, str(uuid.uuid4()))
    with pytest.raises(NotFound, match="no dataset ns:nowhere"):
        rerun_plan_dataset(graph, "ns", "nowhere")
    # a source nothing writes: there is no write to start from unless a time is given
    jobs = pipeline(random.Random(1))
    _load(graph, night(jobs, 0))
    with pytest.raises(NotFound, match="no write of dataset ns:src_0 to plan from"):
        rerun_plan_dataset(graph, "ns", "src_0")
    since = rerun_plan_dataset(graph, "ns", "src_0", since=NIGHT0)
    reading = {"j0_0"} | nx.descendants(job_graph(jobs), "j0_0")  # j0_0 reads src_0
    assert {r.job for r in since.reruns} == {f"ns:{DAG}.{n}" for n in reading}
