"""Issue 19's model test: random jobs whose runs add and drop inputs, with multi-output explicit
lineage facets, partial and dataset-wide column lineage or none (inputs x outputs), completed and
failed runs, and tables known under two names (symlinks), loaded in a random order and random
batches. For every name in the graph, blast radius and upstream (current lineage, and with
retired lineage) equal what a networkx model of the rules in docs/graph-model.md computes from the
same jobs."""

from __future__ import annotations

import random
from typing import Any

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graph.db import Graph
from impact.blast_radius import dataset_blast_radius
from impact.upstream import dataset_upstream
from tests.conftest import wipe
from tests.helpers import dataset, ingest_events, new_run_id, run_event

pytestmark = pytest.mark.integration

DATASETS = 7
HIVE = "hive"


@st.composite
def _job(draw: Any) -> dict[str, Any]:
    """A job reading some datasets and writing later ones (so lineage has no cycle), the lineage
    its events state (none: inputs x outputs; column lineage naming some inputs per output, per
    field or dataset-wide; or a lineage facet stating some edges), and one or two runs, each
    reading some of its inputs, completed or failed."""
    cut = draw(st.integers(1, DATASETS - 1))
    pool = draw(st.lists(st.integers(0, cut - 1), min_size=1, max_size=3, unique=True))
    outputs = draw(st.lists(st.integers(cut, DATASETS - 1), min_size=1, max_size=2, unique=True))
    runs = draw(st.lists(st.tuples(
        st.sampled_from(["COMPLETE", "COMPLETE", "FAIL"]),
        st.lists(st.sampled_from(pool), min_size=1, max_size=len(pool), unique=True)),
        min_size=1, max_size=2))
    return {
        "pool": pool, "outputs": outputs, "runs": runs,
        "mode": draw(st.sampled_from(["cartesian", "column", "explicit"])),
        # per output: the inputs its column lineage or lineage facet names (None: nothing)
        "stated": {o: draw(st.one_of(st.none(), st.lists(st.sampled_from(pool), max_size=2,
                                                            unique=True))) for o in outputs},
        "wide": {o: draw(st.booleans()) for o in outputs},
        # inputs read under the table's catalog name rather than its path
        "by_alias": {i: draw(st.booleans()) for i in pool},
    }


def _name(i: int, alias: bool) -> tuple[str, str]:
    return (HIVE, f"t{i}") if alias else ("ns", f"d{i}")


def _ds(i: int, alias: bool = False, aliased: frozenset[int] = frozenset(),
        lineage: dict[str, Any] | None = None) -> dict[str, Any]:
    ns, name = _name(i, alias)
    facets: dict[str, Any] = {}
    if not alias and i in aliased:  # the path names its catalog table
        facets["symlinks"] = {"identifiers": [{"namespace": HIVE, "name": f"t{i}",
                                               "type": "TABLE"}]}
    out = dataset(name, ns, columns=["k", "v"], **facets)
    if lineage is not None:
        out["facets"]["columnLineage"] = lineage
    return out


def _field(ref: tuple[str, str], name: str) -> dict[str, Any]:
    return {"namespace": ref[0], "name": ref[1], "field": name,
            "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}]}


def _events(n: int, job: dict[str, Any], aliased: frozenset[int]) -> list[dict[str, Any]]:
    ref = {i: _name(i, job["by_alias"][i]) for i in job["pool"]}
    events = []
    for day, (state, read) in enumerate(job["runs"], 1):
        named = {o: None if job["stated"][o] is None else [i for i in job["stated"][o] if i in read]
                 for o in job["outputs"]}
        outputs, facets = [], {}
        for o in job["outputs"]:
            lineage = None
            these = named[o]
            if job["mode"] == "column" and these:
                sources = [_field(ref[i], "k" if job["wide"][o] else "v") for i in these]
                lineage = {"dataset": sources} if job["wide"][o] else {
                    "fields": {"v": {"inputFields": sources}}}
            outputs.append(_ds(o, aliased=aliased, lineage=lineage))
        if job["mode"] == "explicit":
            entries = []
            for o in job["outputs"]:
                stated = named[o]
                if stated is None:
                    continue  # a dangling output: produced by the job, no edge
                sources = [{"namespace": ref[i][0], "name": ref[i][1], "type": "DATASET"}
                           for i in stated]
                entry: dict[str, Any] = {"namespace": "ns", "name": f"d{o}", "type": "DATASET"}
                if job["wide"][o]:
                    entry["inputs"] = sources
                else:
                    entry["fields"] = {"v": {"inputs": [s | {"field": "v"} for s in sources]}}
                entries.append(entry)
            facets = {"lineage": {"entries": entries}}
        inputs = [_ds(i, job["by_alias"][i], aliased) for i in read]
        run, at = new_run_id(), f"2024-06-0{day}T00:{n:02d}"
        events.append(run_event("START", run, f"j{n}", time=f"{at}:00Z", inputs=inputs,
                                outputs=[_ds(o, aliased=aliased) for o in job["outputs"]]))
        events.append(run_event(state, run, f"j{n}", time=f"{at}:30Z", inputs=inputs,
                                outputs=outputs, job_facets=facets))
    return events


def _pairs(job: dict[str, Any], runs: list[tuple[str, list[int]]]) -> set[tuple[int, int]]:
    """The (input, output) edges the rules give a job, from the runs given."""
    read = {i for _, r in runs for i in r}
    named: dict[int, set[int]] = {o: set() for o in job["outputs"]}
    for _, r in runs:
        for o in job["outputs"]:
            named[o] |= {i for i in job["stated"][o] or [] if i in r}
    if job["mode"] == "explicit":  # only what the facets state
        return {(i, o) for o, found in named.items() for i in found}
    if job["mode"] == "column":
        anywhere = {i for found in named.values() for i in found}
        return {(i, o) for o in job["outputs"]
                for i in (named[o] | (read - anywhere) if named[o] else read)}
    return {(i, o) for i in read for o in job["outputs"]}


def _linked(jobs: list[dict[str, Any]], aliased: frozenset[int]) -> set[int]:
    """The tables whose catalog name is linked to their path: some event names the path (which
    carries the symlink)."""
    paths = {o for job in jobs for o in job["outputs"]}
    paths |= {i for job in jobs for _, read in job["runs"] for i in read if not job["by_alias"][i]}
    return set(aliased) & paths


def _model(jobs: list[dict[str, Any]], retired: bool, linked: set[int]) -> nx.DiGraph:
    """Tables as nodes (a path and its linked catalog name are one table), edges source ->
    derived: all the rules give, or (retired=False) those the job's latest completed run still
    states."""
    flow = nx.DiGraph()
    for job in jobs:
        pairs = _pairs(job, job["runs"])
        done = [run for run in job["runs"] if run[0] == "COMPLETE"]
        if done and not retired:
            latest = done[-1][1]
            pairs = {(i, o) for i, o in pairs if i in latest}
        flow.add_edges_from(
            (f"t{i}" if job["by_alias"][i] and i not in linked else f"d{i}", f"d{o}")
            for i, o in pairs)
    return flow


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(jobs=st.lists(_job(), min_size=1, max_size=4),
       aliased=st.frozensets(st.integers(0, DATASETS - 1)), seed=st.integers(0, 10_000))
def test_blast_radius_and_upstream_follow_the_edge_rules(
        graph: Graph, jobs: list[dict[str, Any]], aliased: frozenset[int], seed: int) -> None:
    events = [e for n, job in enumerate(jobs) for e in _events(n, job, aliased)]
    rng = random.Random(seed)
    rng.shuffle(events)
    wipe(graph)
    while events:
        size = rng.randint(1, len(events))
        batch, events = events[:size], events[size:]
        assert ingest_events(graph, batch).rejected == []
    linked = _linked(jobs, aliased)

    def table(ns: str, name: str) -> str:
        i = int(name[1:])
        return f"d{i}" if ns == "ns" or i in linked else f"t{i}"

    def names(answer: Any) -> set[str]:
        return {table(x.namespace, x.name) for x in answer.impacted if x.kind == "dataset"}

    for retired in (False, True):
        model = _model(jobs, retired, linked)
        for i in range(DATASETS):
            for ns, name in (_name(i, False), _name(i, True)):
                if not graph.read("impact/exists_dataset", namespace=ns, name=name)[0]["found"]:
                    continue
                node = table(ns, name)
                down = dataset_blast_radius(graph, ns, name, include_retired=retired)
                up = dataset_upstream(graph, ns, name, include_retired=retired)
                expect_down = nx.descendants(model, node) if node in model else set()
                expect_up = nx.ancestors(model, node) if node in model else set()
                assert names(down) == expect_down, f"blast radius of {ns}:{name}, {retired=}"
                assert names(up) == expect_up, f"upstream of {ns}:{name}, {retired=}"
