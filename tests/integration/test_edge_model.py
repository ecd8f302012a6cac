"""Issue 19's model test, for the edge rules built so far (explicit lineage facets, partial and
dataset-wide column lineage, inputs x outputs): random jobs, each loaded as START and COMPLETE
events of one or two runs in a random order and random batches; every dataset's blast radius and
upstream equal what a networkx model of the rules computes from the same jobs.

Not yet in the model: symlinks and retired lineage (issue 19, parts 3 and 5)."""

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
MODES = ("cartesian", "column", "explicit")


@st.composite
def _job(draw: Any) -> dict[str, Any]:
    """A job reading some datasets and writing later ones (so lineage has no cycle), with the
    lineage its events state: none (inputs x outputs), column lineage naming some inputs for
    some outputs (with dataset-wide fields), or a lineage facet stating some edges."""
    cut = draw(st.integers(1, DATASETS - 1))
    inputs = draw(st.lists(st.integers(0, cut - 1), min_size=1, max_size=3, unique=True))
    outputs = draw(st.lists(st.integers(cut, DATASETS - 1), min_size=1, max_size=2, unique=True))
    mode = draw(st.sampled_from(MODES))
    # per output: the inputs its column lineage (or lineage facet entry) names; None: no entry
    stated = {o: draw(st.one_of(st.none(), st.lists(st.sampled_from(inputs), max_size=2,
                                                      unique=True))) for o in outputs}
    wide = {o: draw(st.booleans()) for o in outputs}  # named as dataset-wide, not per field
    runs = draw(st.integers(1, 2))
    return {"inputs": inputs, "outputs": outputs, "mode": mode, "stated": stated, "wide": wide,
            "runs": runs}


def _ds(i: int, lineage: dict[str, Any] | None = None) -> dict[str, Any]:
    out = dataset(f"d{i}", columns=["k", "v"])
    if lineage is not None:
        out["facets"]["columnLineage"] = lineage
    return out


def _field(i: int, name: str) -> dict[str, Any]:
    return {"namespace": "ns", "name": f"d{i}", "field": name,
            "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}]}


def _events(n: int, job: dict[str, Any]) -> list[dict[str, Any]]:
    outputs, facets = [], {}
    if job["mode"] == "column":
        for o in job["outputs"]:
            named = job["stated"][o]
            if not named:  # no column lineage on this output
                outputs.append(_ds(o))
                continue
            lineage: dict[str, Any] = {"fields": {}}
            if job["wide"][o]:
                lineage["dataset"] = [_field(i, "k") for i in named]
            else:
                lineage["fields"] = {"v": {"inputFields": [_field(i, "v") for i in named]}}
            outputs.append(_ds(o, lineage))
    else:
        outputs = [_ds(o) for o in job["outputs"]]
    if job["mode"] == "explicit":
        entries = []
        for o in job["outputs"]:
            named = job["stated"][o]
            if named is None:
                continue  # a dangling output: produced by the job, no edge
            sources = [{"namespace": "ns", "name": f"d{i}", "type": "DATASET"} for i in named]
            entry: dict[str, Any] = {"namespace": "ns", "name": f"d{o}", "type": "DATASET"}
            if job["wide"][o]:
                entry["inputs"] = sources
            else:
                entry["fields"] = {"v": {"inputs": [s | {"field": "v"} for s in sources]}}
            entries.append(entry)
        facets = {"lineage": {"entries": entries}}
    inputs = [_ds(i) for i in job["inputs"]]
    events = []
    for r in range(job["runs"]):
        run = new_run_id()
        at = f"2024-06-0{r + 1}T00:{n:02d}"
        events.append(run_event("START", run, f"j{n}", time=f"{at}:00Z", inputs=inputs,
                                outputs=[_ds(o) for o in job["outputs"]]))
        events.append(run_event("COMPLETE", run, f"j{n}", time=f"{at}:30Z", inputs=inputs,
                                outputs=outputs, job_facets=facets))
    return events


def _model(jobs: list[dict[str, Any]]) -> nx.DiGraph:
    """The rules of docs/graph-model.md, computed from the jobs: an edge source -> derived."""
    flow = nx.DiGraph()
    flow.add_nodes_from(f"d{i}" for i in range(DATASETS))
    for job in jobs:
        stated = job["stated"]
        if job["mode"] == "explicit":  # only what the facet states
            pairs = {(i, o) for o in job["outputs"] for i in stated[o] or []}
        elif job["mode"] == "column":
            named_anywhere = {i for o in job["outputs"] for i in stated[o] or []}
            pairs = set()
            for o in job["outputs"]:
                if stated[o]:  # its column lineage, and inputs no column lineage names at all
                    pairs |= {(i, o) for i in stated[o]}
                    pairs |= {(i, o) for i in job["inputs"] if i not in named_anywhere}
                else:
                    pairs |= {(i, o) for i in job["inputs"]}
        else:
            pairs = {(i, o) for i in job["inputs"] for o in job["outputs"]}
        flow.add_edges_from((f"d{i}", f"d{o}") for i, o in pairs)
    return flow


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(jobs=st.lists(_job(), min_size=1, max_size=4), seed=st.integers(0, 10_000))
def test_blast_radius_and_upstream_follow_the_edge_rules(
        graph: Graph, jobs: list[dict[str, Any]], seed: int) -> None:
    events = [e for n, job in enumerate(jobs) for e in _events(n, job)]
    rng = random.Random(seed)
    rng.shuffle(events)
    wipe(graph)
    while events:
        size = rng.randint(1, len(events))
        batch, events = events[:size], events[size:]
        assert ingest_events(graph, batch).rejected == []
    model = _model(jobs)
    for i in range(DATASETS):
        name = f"d{i}"
        if not graph.read("impact/exists_dataset", namespace="ns", name=name)[0]["found"]:
            assert not model.in_degree(name) and not model.out_degree(name)
            continue
        down = {x.name for x in dataset_blast_radius(graph, "ns", name).impacted
                if x.kind == "dataset"}
        up = {x.name for x in dataset_upstream(graph, "ns", name).impacted}
        assert down == nx.descendants(model, name), f"blast radius of {name}"
        assert up == nx.ancestors(model, name), f"upstream of {name}"
