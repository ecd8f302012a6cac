"""Downstream blast radius: what derives from a dataset or a column, and who reads it.

Each impacted node is reported once, at its shortest distance, with the path from the source
and the last step that brought it in (job, transformation, when last seen). Traversals are
directed (only DERIVED_FROM, walked towards derived nodes) and bounded by a clamped depth.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from graph.db import Graph
from graph.errors import NotFound
from impact.answers import (
    Impacted,
    Walk,
    approximate,
    clamp_depth,
    column_step,
    dataset_step,
    fold_aliases,
    merge_names,
    native_time,
    require_column,
    require_dataset,
    summarise,
)
from impact.flow import criticality, flow_graph
from impact.ml.models import trained_on_columns, trained_on_datasets


def dataset_blast_radius(graph: Graph, namespace: str, name: str, depth: int | None = None,
                         as_of: datetime | None = None, include_retired: bool = False
                         ) -> Walk:
    """Datasets derived from ``namespace:name`` and the jobs that read the source or them."""
    depth = clamp_depth(depth)
    rows = graph.read("impact/downstream_datasets", namespace=namespace, name=name, depth=depth,
                      asOf=as_of, includeRetired=include_retired)
    if not rows:  # an answer proves the dataset exists: a round trip fewer for most questions
        require_dataset(graph, namespace, name)
    flow = flow_graph({f"{r['namespace']}:{r['name']}": r["sources"] for r in rows})
    beyond = criticality(flow, flow.nodes)
    found = [dataset_step(r, beyond) for r in rows]
    alias = [r["basis"] == "alias" for r in rows]
    reached = [{"namespace": namespace, "name": name}] + [
        {"namespace": i.namespace, "name": i.name} for i in found if i.kind == "dataset"]
    distance = {f"{i.namespace}:{i.name}": i for i in found if i.kind == "dataset"}
    walked = {(i.namespace, i.name) for i in found if i.kind == "job"}
    jobs = [_reader(r, distance, f"{namespace}:{name}")
            for r in graph.read("impact/readers", datasets=reached,
                                includeRetired=include_retired)
            if (r["namespace"], r["name"]) not in walked]
    kept, aliases = fold_aliases(found, alias, f"{namespace}:{name}")
    kept, aliases = merge_names(kept, f"{namespace}:{name}", aliases, rows)
    impacted = tuple(kept + jobs)
    models = trained_on_datasets(graph, [(d["namespace"], d["name"]) for d in reached])
    return Walk(f"dataset {namespace}:{name}", depth, impacted, summarise(impacted),
                aliases=aliases, models=models, approximate=approximate(graph, as_of))


def job_blast_radius(graph: Graph, namespace: str, name: str, depth: int | None = None,
                     as_of: datetime | None = None, include_retired: bool = False) -> Walk:
    """What a job feeds: the datasets it writes (distance 1) and those its child jobs write (a DAG's
    tasks, an application's queries: distance 2, through the child), everything derived from
    them, and the jobs reading any of those."""
    row = graph.read("impact/job_outputs", namespace=namespace, name=name,
                     includeRetired=include_retired)[0]
    if not row["found"]:
        raise NotFound("job", f"{namespace}:{name}", name)
    depth = clamp_depth(depth)
    me = f"{namespace}:{name}"
    best: dict[tuple[str, str, str], Impacted] = {}

    def keep(i: Impacted) -> None:
        key = (i.kind, i.namespace, i.name)
        if key not in best or i.distance < best[key].distance:
            best[key] = i

    # a job of a hand-off (lineage facets) is a node of lineage: what it feeds directly
    for r in graph.read("impact/downstream_of_job", namespace=namespace, name=name, depth=depth,
                        asOf=as_of, includeRetired=include_retired):
        if r["basis"] != "alias":
            keep(dataset_step(r))
    for out in row["outputs"]:
        key = f"{out['namespace']}:{out['name']}"
        via = out["via"]
        start = (me, via) if via else (me,)
        if len(start) > depth:
            continue
        keep(Impacted("dataset", out["namespace"], out["name"], len(start), (*start, key),
                      via.split(":", 1)[-1] if via else name,
                      f"WRITES (an output of {'its child job ' + via if via else 'the job'})",
                      None))
        if depth > len(start):
            sub = dataset_blast_radius(graph, out["namespace"], out["name"], depth - len(start),
                                       as_of, include_retired)
            for i in sub.impacted:
                if not (i.kind == "job" and f"{i.namespace}:{i.name}" in (me, via)):
                    keep(replace(i, distance=i.distance + len(start), path=(*start, *i.path)))
    impacted = tuple(sorted(best.values(), key=lambda i: (i.kind != "dataset", i.distance, i.name)))
    models = trained_on_datasets(graph, [(i.namespace, i.name) for i in impacted
                                         if i.kind == "dataset"])
    return Walk(f"job {me}", depth, impacted, summarise(impacted), models=models,
                approximate=approximate(graph, as_of))


def column_blast_radius(graph: Graph, namespace: str, dataset: str, column: str,
                        depth: int | None = None, as_of: datetime | None = None,
                        include_retired: bool = False) -> Walk:
    """Columns derived from ``namespace:dataset.column``, at column-level precision."""
    depth = clamp_depth(depth)
    rows = graph.read("impact/downstream_columns", namespace=namespace, dataset=dataset,
                      column=column, depth=depth, asOf=as_of, includeRetired=include_retired)
    if not rows:
        require_column(graph, namespace, dataset, column)
    kept, aliases = fold_aliases([column_step(r) for r in rows], [r["alias"] for r in rows],
                                 f"{dataset}.{column}")
    kept, aliases = merge_names(kept, f"{namespace}:{dataset}.{column}", aliases, rows)
    impacted = tuple(kept)
    reached = [(namespace, dataset, column)] + [(r["namespace"], r["dataset"], r["column"])
                                                for r in sorted(rows, key=lambda r: r["distance"])]
    return Walk(f"column {namespace}:{dataset}.{column}", depth, impacted,
                summarise(impacted), aliases=aliases, models=trained_on_columns(graph, reached),
                approximate=approximate(graph, as_of))


def _reader(r: dict[str, Any], reached: dict[str, Impacted], source: str) -> Impacted:
    nearest = min((reached[d] for d in r["reads"] if d in reached),
                  key=lambda i: i.distance, default=None)
    via = nearest.path if nearest else (source,)
    distance = (nearest.distance if nearest else 0) + 1
    return Impacted("job", r["namespace"], r["name"], distance, (*via, r["name"]), r["name"],
                    f"READS {', '.join(r['reads'])}", native_time(r["lastSeen"]), tuple(r["owners"]))
