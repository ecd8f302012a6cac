"""Upstream lineage: what a dataset or a column is derived from, nearest first."""

from __future__ import annotations

from datetime import datetime

from graph.db import Graph
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


def dataset_upstream(graph: Graph, namespace: str, name: str, depth: int | None = None,
                     as_of: datetime | None = None, include_retired: bool = False) -> Walk:
    """Datasets that ``namespace:name`` derives from, each at its shortest distance."""
    depth = clamp_depth(depth)
    rows = graph.read("impact/upstream_datasets", namespace=namespace, name=name, depth=depth,
                      asOf=as_of, includeRetired=include_retired)
    if not rows:  # an answer proves the dataset exists: a round trip fewer for most questions
        require_dataset(graph, namespace, name)
    kept, aliases = fold_aliases([dataset_step(r) for r in rows],
                                 [r["basis"] == "alias" for r in rows], f"{namespace}:{name}")
    kept, aliases = merge_names(kept, f"{namespace}:{name}", aliases, rows)
    found = tuple(kept)
    return Walk(f"dataset {namespace}:{name}", depth, found, summarise(found), "upstream",
                aliases, approximate=approximate(graph, as_of))


def column_upstream(graph: Graph, namespace: str, dataset: str, column: str,
                    depth: int | None = None, as_of: datetime | None = None,
                    include_retired: bool = False) -> Walk:
    """Columns whose data ``namespace:dataset.column`` comes from."""
    depth = clamp_depth(depth)
    # a job that makes the column with no tracked source (lineage facets) comes first
    made = tuple(
        Impacted("job", r["namespace"], r["name"], 1, (f"{dataset}.{column}", r["name"]),
                 r["job"], f"PRODUCED_BY {r['type']} {r['subtype']}"
                 + (", masked" if r["masking"] else "")
                 + (f": {r['description']}" if r["description"] else "")
                 + " (no tracked source)", native_time(r["lastSeen"]), tuple(r["owners"]))
        for r in graph.read("impact/produced_by", namespace=namespace, dataset=dataset,
                            column=column))
    rows = graph.read("impact/upstream_columns", namespace=namespace, dataset=dataset,
                      column=column, depth=depth, asOf=as_of, includeRetired=include_retired)
    if not rows and not made:  # an answer proves the column exists
        require_column(graph, namespace, dataset, column)
    kept, aliases = fold_aliases([column_step(r) for r in rows], [r["alias"] for r in rows],
                                 f"{dataset}.{column}")
    kept, aliases = merge_names(kept, f"{namespace}:{dataset}.{column}", aliases, rows)
    found = made + tuple(kept)
    return Walk(f"column {namespace}:{dataset}.{column}", depth, found, summarise(found),
                "upstream", aliases, approximate=approximate(graph, as_of))
