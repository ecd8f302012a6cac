"""Retention on a generated history of 400 days of daily runs, time moved by the events' own
times (docs/graph-model.md, "Retention"): after a run with the default windows (90 days
detailed, 365 summary) the graph is what the rules say, whatever the arrival order, and the
same when a day already summarised gets late events; the questions answer as before."""

from __future__ import annotations

import random
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graph.db import Graph
from graph.retention.run import plan, retain
from impact.blast_radius import dataset_blast_radius
from impact.root_cause import root_cause_dataset
from impact.upstream import column_upstream, dataset_upstream
from impact.where import where
from tests.conftest import wipe
from tests.helpers import canonical_dump, dataset, ingest_events, rows, run_event

pytestmark = pytest.mark.integration

DAY0 = datetime(2025, 1, 1, tzinfo=UTC)
DAYS = 400
NOW = DAY0 + timedelta(days=DAYS - 1, hours=2)  # the last run's end: the graph's time
DETAILED_SINCE = NOW - timedelta(days=90)
SUMMARY_SINCE = NOW - timedelta(days=365)


@dataclass(frozen=True)
class Run:
    job: str
    day: int
    state: str  # COMPLETE or FAIL
    inputs: tuple[str, ...]
    output: str
    lineage: dict[str, list[tuple[str, str, str, str]]]

    @property
    def run_id(self) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.job}/{self.day}"))

    @property
    def end(self) -> datetime:
        return DAY0 + timedelta(days=self.day, hours=2)

    def events(self) -> list[dict[str, Any]]:
        start = DAY0 + timedelta(days=self.day, hours=1)
        columns = sorted(self.lineage)
        inputs = [dataset(i, columns=["id", "email", "v"]) for i in self.inputs]
        return [
            run_event("START", self.run_id, self.job, time=_iso(start), inputs=inputs),
            run_event(self.state, self.run_id, self.job, time=_iso(self.end), inputs=inputs,
                      outputs=[dataset(self.output, columns=columns, lineage=self.lineage)])]


def history() -> list[Run]:
    """Five jobs: one that fails every tenth day, one that starts masking a column on day 200,
    one that stopped after a month, one whose input changed on day 21 (past the summary
    window) and one whose input changed on day 101 (inside it)."""
    runs = []
    for d in range(DAYS):
        runs.append(Run("daily", d, "FAIL" if d % 10 == 0 else "COMPLETE", ("src",), "mid",
                        {"id": [("src", "id", "DIRECT", "IDENTITY")],
                         "email": [("src", "email", "DIRECT", "IDENTITY")]}))
        email = ("mid", "email", "DIRECT", "IDENTITY" if d < 200 else "MASKED")
        runs.append(Run("mask", d, "COMPLETE", ("mid",), "out",
                        {"id": [("mid", "id", "DIRECT", "IDENTITY")], "email": [email]}))
        if d <= 30:
            runs.append(Run("stopped", d, "COMPLETE", ("old_src",), "old_out",
                            {"v": [("old_src", "v", "DIRECT", "IDENTITY")]}))
        z = "z1" if d <= 20 else "z2"
        runs.append(Run("switch", d, "COMPLETE", (z,), "zout",
                        {"v": [(z, "v", "DIRECT", "IDENTITY")]}))
        x = "x1" if d <= 100 else "x2"
        runs.append(Run("recent", d, "COMPLETE", (x,), "y",
                        {"v": [(x, "v", "DIRECT", "IDENTITY")]}))
    return runs


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _events(runs: list[Run], seed: int | None) -> list[dict[str, Any]]:
    found = [e for r in runs for e in r.events()]
    return found if seed is None else random.Random(seed).sample(found, len(found))


def _load(graph: Graph, events: list[dict[str, Any]]) -> None:
    report = ingest_events(graph, events, batch_size=400)
    assert not report.rejected


def _folded(run: Run, runs: list[Run]) -> bool:
    """The rule: past the detailed window, unless the job's latest run."""
    latest = max((r for r in runs if r.job == run.job), key=lambda r: r.day)
    return run.end < DETAILED_SINCE and run is not latest


def _edge(graph: Graph, job: str, src: str, column: str,
          subtype: str = "IDENTITY") -> dict[str, Any] | None:
    found = rows(graph, """
        MATCH (:Column {namespace: 'ns', name: $column})-[e:DERIVED_FROM {jobName: $job}]->
              (:Column {namespace: 'ns', dataset: $src, name: $column})
        WHERE e.subtype = $subtype
        RETURN properties(e) AS e""", job=job, src=src, column=column, subtype=subtype)
    assert len(found) <= 1
    return found[0]["e"] if found else None


def _dump(graph: Graph) -> list[str]:
    """The graph as the questions read it, without the Retention node (when each run ran)."""
    return [line for line in canonical_dump(graph) if '["Retention"]' not in line]


def _questions(graph: Graph) -> dict[str, Any]:
    def names(walk: Any) -> list[str]:
        return sorted(f"{i.kind}:{i.name}" for i in walk.impacted)

    return {"blast src": names(dataset_blast_radius(graph, "ns", "src")),
            "blast mid": names(dataset_blast_radius(graph, "ns", "mid")),
            "upstream out": names(dataset_upstream(graph, "ns", "out")),
            "upstream zout": names(dataset_upstream(graph, "ns", "zout")),
            "upstream old_out": names(dataset_upstream(graph, "ns", "old_out")),
            "where email": sorted((r.dataset, r.column, r.label)
                                  for r in where(graph, "ns", "src", "email").reaches)}


def _then(graph: Graph, as_of: datetime) -> dict[str, Any]:
    """Answers as of a day in the summary window (day 150: the masking job still copied raw)."""
    return {"blast src": sorted(i.name for i in dataset_blast_radius(
                graph, "ns", "src", as_of=as_of).impacted),
            "where email": sorted((r.dataset, r.column, r.label) for r in where(
                graph, "ns", "src", "email", as_of=as_of).reaches)}


def test_retention_folds_old_runs_removes_old_lineage_and_keeps_current(graph: Graph) -> None:
    runs = history()
    _load(graph, _events(runs, seed=None))
    asked = _questions(graph)
    day150 = DAY0 + timedelta(days=150, hours=12)
    asked_then = _then(graph, day150)
    assert ("out", "email", "raw") in asked_then["where email"]
    assert dataset_blast_radius(graph, "ns", "src", as_of=day150).approximate is None
    planned = plan(graph, 90, 365)
    assert rows(graph, "MATCH (r:Run) RETURN count(r) AS n")[0]["n"] == len(runs)  # rolled back

    done = retain(graph, 90, 365)
    folded = [r for r in runs if _folded(r, runs)]
    assert done.windows is not None and done.windows.now == NOW
    assert done.folded == planned.folded == len(folded)
    assert (done.edges, done.nodes) == (planned.edges, planned.nodes)

    # the runs left: the detailed window's, and each job's latest however old
    left = {r["id"] for r in rows(graph, "MATCH (r:Run) RETURN r.runId AS id")}
    assert left == {r.run_id for r in runs if not _folded(r, runs)}
    assert sum(1 for r in runs if r.job == "stopped" and not _folded(r, runs)) == 1

    # each job counts its folded runs by state, and keeps its last success and failure
    [daily] = rows(graph, "MATCH (j:Job {name: 'daily'}) RETURN properties(j) AS j")
    old_daily = [r for r in folded if r.job == "daily"]
    assert daily["j"]["summary.COMPLETE"] == sum(r.state == "COMPLETE" for r in old_daily)
    assert daily["j"]["summary.FAIL"] == sum(r.state == "FAIL" for r in old_daily)
    last_ok = max((r for r in old_daily if r.state == "COMPLETE"), key=lambda r: r.day)
    last_bad = max((r for r in old_daily if r.state == "FAIL"), key=lambda r: r.day)
    assert daily["j"]["summary.lastSuccessRunId"] == last_ok.run_id
    assert daily["j"]["summary.lastFailureRunId"] == last_bad.run_id
    assert daily["j"]["summary.since"].to_native() == old_daily[0].end

    # an edge counts the folded runs that stated it, failed ones too, and keeps the latest
    copy = _edge(graph, "daily", "src", "email")
    assert copy is not None and copy["summary.runs"] == len(old_daily)
    assert copy["summary.lastRunId"] == old_daily[-1].run_id
    assert copy["summary.lastCompleteRunId"] == last_ok.run_id

    # retired on day 200, last stated on day 199 (folded): kept in the summary window, marked
    raw = _edge(graph, "mask", "mid", "email")
    masked_from = next(r for r in runs if r.job == "mask" and r.day == 200)
    last_raw = next(r for r in runs if r.job == "mask" and r.day == 199)
    assert raw is not None and raw["retired"] and raw["subtype"] == "IDENTITY"
    assert raw["retiredAt"].to_native() == masked_from.end
    assert raw["lastRunId"] == last_raw.run_id
    assert raw["summary.runs"] == 200

    # lineage no run has stated since before the summary window is removed, and what is left
    # of it: the input the job switched away from on day 21, and its columns
    assert _edge(graph, "switch", "z1", "v") is None
    assert not rows(graph, "MATCH (d:Dataset {name: 'z1'}) RETURN d")
    assert not rows(graph, "MATCH (c:Column {dataset: 'z1'}) RETURN c")
    assert _edge(graph, "recent", "x1", "v") is not None  # day 100: inside the summary window
    # current lineage is never removed, however old (the job that stopped after a month)
    assert _edge(graph, "stopped", "old_src", "v") is not None
    assert done.edges >= 3 and done.nodes["datasets"] == 1

    # the questions answer as before: they read current lineage, which nothing folded
    assert _questions(graph) == asked
    # and mark a step over summary lineage: the job that stopped after a month, its last run kept
    [step] = dataset_upstream(graph, "ns", "old_out").impacted
    last_folded = next(r for r in runs if r.job == "stopped" and r.day == 29)
    assert step.why.endswith(f"[summary: last seen 2025-01-31, 30 runs folded; last run "
                             f"{last_folded.run_id} (COMPLETE)]")
    [recent] = dataset_upstream(graph, "ns", "y").impacted
    assert "summary" not in recent.why  # its lineage is stated every day
    # the same mark on column walks and on the steps of where a column's data goes
    [column] = column_upstream(graph, "ns", "old_out", "v").impacted
    assert column.why.endswith(f"[summary: last seen 2025-01-31, 30 runs folded; last run "
                               f"{last_folded.run_id} (COMPLETE)]")
    [reach] = where(graph, "ns", "old_src", "v").reaches
    assert reach.steps[0].basis.endswith("30 runs folded; last run "
                                         f"{last_folded.run_id} (COMPLETE)]")

    # as of a day past the detailed window: the same edges as before, said to be approximate
    assert _then(graph, day150) == asked_then
    approximate = dataset_blast_radius(graph, "ns", "src", as_of=day150).approximate
    assert approximate is not None and approximate.startswith(
        f"approximate: 2025-05-31 12:00 is before the detailed window (since "
        f"{DETAILED_SINCE:%Y-%m-%d %H:%M})")
    assert where(graph, "ns", "src", "email", as_of=day150).approximate == approximate
    assert column_upstream(graph, "ns", "out", "email", as_of=day150).approximate == approximate
    assert root_cause_dataset(graph, "ns", "out", as_of=day150).approximate == approximate
    # inside the window, and now, exact
    assert dataset_blast_radius(graph, "ns", "src", as_of=DETAILED_SINCE).approximate is None
    assert dataset_blast_radius(graph, "ns", "src").approximate is None

    # a second run right after has nothing left to do
    again = retain(graph, 90, 365)
    assert (again.folded, again.edges, sum(again.nodes.values())) == (0, 0, 0)


def test_retention_gives_one_graph_in_any_arrival_order_and_with_late_days(graph: Graph) -> None:
    runs = history()
    dumps = []
    for seed in (None, 1):
        wipe(graph)
        _load(graph, _events(runs, seed))
        retain(graph, 90, 365)
        dumps.append(_dump(graph))
    assert dumps[0] == dumps[1]

    # days 150 and 151 arrive late, after the first retention run already summarised the days
    # around them: a second run gives the graph of one run over everything
    late = [r for r in runs if r.day in (150, 151)]
    wipe(graph)
    _load(graph, _events([r for r in runs if r not in late], seed=2))
    retain(graph, 90, 365)
    _load(graph, _events(late, seed=3))
    retain(graph, 90, 365)
    assert _dump(graph) == dumps[0]


def test_a_run_gives_way_while_the_worker_writes(graph: Graph,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Beside ingest a run waits while ``busy()`` before each of its transactions (the scan
    for runs to fold included), and under a load that never pauses it still goes on, one
    transaction per PATIENCE seconds: the graph ends as a run alone leaves it."""
    import graph.retention.run as run

    runs = [r for r in history() if r.day < 120]
    _load(graph, _events(runs, seed=None))
    expected = plan(graph, 30, 60)
    assert expected.folded > 0

    asked: list[float] = []
    quiet_at = 0.6

    def busy() -> bool:
        asked.append(time.monotonic())
        return asked[-1] - asked[0] < quiet_at

    started = time.monotonic()
    done = retain(graph, 30, 60, busy=busy)
    assert time.monotonic() - started >= quiet_at  # nothing went before the worker was quiet
    assert (done.folded, done.edges, done.nodes) == (expected.folded, expected.edges,
                                                     expected.nodes)
    # asked before the scan, each fold, each removal of edges and of nodes, and the next scan
    assert len([t for t in asked if t - asked[0] >= quiet_at]) >= 5

    monkeypatch.setattr(run, "PATIENCE", 0.3)
    wipe(graph)
    _load(graph, _events(runs, seed=None))
    started = time.monotonic()
    done = retain(graph, 30, 60, busy=lambda: True)  # a load that never pauses
    assert done.folded == expected.folded
    assert time.monotonic() - started >= 5 * 0.3


def test_retention_keeps_the_stating_run_and_folds_childless_stub_parents(graph: Graph) -> None:
    """Two jobs of 200 days: a task whose runs name a DAG run as parent (the DAG sent events of
    its own for its first 20 days only: its later runs are stubs), and a job that completed with column lineage until day 50 and
    has failed without outputs since. Kept however old: the DAG's day 19 (its latest run that
    sent events, though stubs came after it), the failing job's day 50 (the latest completed run
    that stated lineage for its output); folded: each stub parent once its child
    is folded; left: the runs of the detailed window and their parents."""
    days, detailed = 200, 90
    now = DAY0 + timedelta(days=days - 1, hours=2)
    since = now - timedelta(days=detailed)

    def rid(name: str, day: int) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{name}/{day}"))

    events = []
    for d in range(days):
        start, end = DAY0 + timedelta(days=d, hours=1), DAY0 + timedelta(days=d, hours=2)
        parent = {"parent": {"run": {"runId": rid("dag", d)},
                             "job": {"namespace": "ns", "name": "dag"}}}
        events += [run_event(kind, rid("task", d), "task", time=_iso(t), run_facets=parent,
                             inputs=[dataset("a")], outputs=[dataset("b")])
                   for kind, t in (("START", start), ("COMPLETE", end))]
        if d < 20:
            events += [run_event(kind, rid("dag", d), "dag", time=_iso(t))
                       for kind, t in (("START", start), ("COMPLETE", end))]
        stated = d <= 50
        outputs = [dataset("flaky_out", columns=["v"],
                           lineage={"v": [("b", "v", "DIRECT", "IDENTITY")]})] if stated else []
        events += [run_event("START", rid("flaky", d), "flaky", time=_iso(start),
                             inputs=[dataset("b")]),
                   run_event("COMPLETE" if stated else "FAIL", rid("flaky", d), "flaky",
                             time=_iso(end), inputs=[dataset("b")], outputs=outputs)]
    _load(graph, _events([], None) + random.Random(4).sample(events, len(events)))

    retain(graph, detailed, 365)

    inside = [d for d in range(days) if DAY0 + timedelta(days=d, hours=2) >= since]
    expected = ({rid("task", d) for d in inside} | {rid("dag", d) for d in inside}
                | {rid("flaky", d) for d in inside} | {rid("flaky", 50), rid("dag", 19)})
    left = {r["id"] for r in rows(graph, "MATCH (r:Run) RETURN r.runId AS id")}
    assert left == expected
    summary = rows(graph, "MATCH (j:Job {name: 'flaky'}) RETURN j.`summary.COMPLETE` AS ok, "
                          "j.`summary.FAIL` AS failed")
    assert summary == [{"ok": 50, "failed": days - len(inside) - 51}]
