"""Downstream blast radius: what derives from a dataset or a column, and who reads it.

Each impacted node is reported once, at its shortest distance, with the path from the source
and the last step that brought it in (job, transformation, when last seen). Traversals are
directed (only DERIVED_FROM, walked towards derived nodes) and bounded by a clamped depth.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from graph.db import Graph
from graph.errors import NotFound
from impact.analysis import criticality, flow_graph

MAX_DEPTH = 50
DEFAULT_DEPTH = 20


@dataclass(frozen=True)
class Impacted:
    """One node the change reaches, and why."""

    kind: str  # dataset, column or job
    namespace: str
    name: str  # dataset name, "dataset.column" for a column, job name for a job
    distance: int
    path: tuple[str, ...]
    job: str | None
    why: str
    last_seen: datetime | None
    owners: tuple[str, ...] = ()
    beyond: int | None = None  # criticality: how many impacted datasets lie downstream of it


@dataclass(frozen=True)
class BlastRadius:
    """The answer: the source, every impacted node, and counts by kind, namespace and owner."""

    source: str
    depth: int
    impacted: tuple[Impacted, ...]
    summary: dict[str, dict[str, int]] = field(default_factory=dict)
    direction: str = "downstream"


def require_dataset(graph: Graph, namespace: str, name: str) -> None:
    """Raise NotFound unless the dataset is in the graph."""
    if not graph.read("impact/exists_dataset", namespace=namespace, name=name)[0]["found"]:
        raise NotFound("dataset", f"{namespace}:{name}")


def require_column(graph: Graph, namespace: str, dataset: str, column: str) -> None:
    """Raise NotFound unless the column is in the graph."""
    if not graph.read("impact/exists_column", namespace=namespace, dataset=dataset,
                      column=column)[0]["found"]:
        raise NotFound("column", f"{namespace}:{dataset}.{column}")


def clamp_depth(depth: int | None) -> int:
    """Depth within 1..MAX_DEPTH; None means the default."""
    return max(1, min(MAX_DEPTH, DEFAULT_DEPTH if depth is None else depth))


def dataset_blast_radius(graph: Graph, namespace: str, name: str, depth: int | None = None,
                         as_of: datetime | None = None) -> BlastRadius:
    """Datasets derived from ``namespace:name`` and the jobs that read the source or them."""
    require_dataset(graph, namespace, name)
    depth = clamp_depth(depth)
    rows = graph.read("impact/downstream_datasets", namespace=namespace, name=name, depth=depth,
                      asOf=as_of)
    flow = flow_graph({f"{r['namespace']}:{r['name']}": r["sources"] for r in rows})
    beyond = criticality(flow, flow.nodes)
    found = [_dataset(r, beyond) for r in rows]
    reached = [{"namespace": namespace, "name": name}] + [
        {"namespace": i.namespace, "name": i.name} for i in found]
    distance = {f"{i.namespace}:{i.name}": i for i in found}
    jobs = [_reader(r, distance, f"{namespace}:{name}")
            for r in graph.read("impact/readers", datasets=reached)]
    impacted = tuple(found + jobs)
    return BlastRadius(f"dataset {namespace}:{name}", depth, impacted, summarise(impacted))


def job_blast_radius(graph: Graph, namespace: str, name: str, depth: int | None = None,
                     as_of: datetime | None = None) -> BlastRadius:
    """What a job feeds: the datasets it writes (distance 1), everything derived from them, and the
    jobs reading any of those."""
    row = graph.read("impact/job_outputs", namespace=namespace, name=name)[0]
    if not row["found"]:
        raise NotFound("job", f"{namespace}:{name}")
    depth = clamp_depth(depth)
    me = f"{namespace}:{name}"
    best: dict[tuple[str, str, str], Impacted] = {}

    def keep(i: Impacted) -> None:
        key = (i.kind, i.namespace, i.name)
        if key not in best or i.distance < best[key].distance:
            best[key] = i

    for out in row["outputs"]:
        keep(Impacted("dataset", out["namespace"], out["name"], 1, (me, f"{out['namespace']}:{out['name']}"),
                      name, "WRITES (an output of the job)", None))
        if depth > 1:
            sub = dataset_blast_radius(graph, out["namespace"], out["name"], depth - 1, as_of)
            for i in sub.impacted:
                if not (i.kind == "job" and i.namespace == namespace and i.name == name):
                    keep(replace(i, distance=i.distance + 1, path=(me, *i.path)))
    impacted = tuple(sorted(best.values(), key=lambda i: (i.kind != "dataset", i.distance, i.name)))
    return BlastRadius(f"job {me}", depth, impacted, summarise(impacted))


def column_blast_radius(graph: Graph, namespace: str, dataset: str, column: str,
                        depth: int | None = None, as_of: datetime | None = None) -> BlastRadius:
    """Columns derived from ``namespace:dataset.column``, at column-level precision."""
    require_column(graph, namespace, dataset, column)
    depth = clamp_depth(depth)
    rows = graph.read("impact/downstream_columns", namespace=namespace, dataset=dataset,
                      column=column, depth=depth, asOf=as_of)
    impacted = tuple(_column(r) for r in rows)
    return BlastRadius(f"column {namespace}:{dataset}.{column}", depth, impacted,
                       summarise(impacted))


def summarise(impacted: tuple[Impacted, ...]) -> dict[str, dict[str, int]]:
    """Counts of impacted nodes by kind, by namespace and by owner."""
    owners = Counter(o for i in impacted for o in (i.owners or ("(no owner)",)))
    return {"kind": dict(Counter(i.kind for i in impacted)),
            "namespace": dict(Counter(i.namespace for i in impacted)),
            "owner": dict(owners)}


def _dataset(r: dict[str, Any], beyond: dict[str, int] | None = None) -> Impacted:
    how = "coarse: the job's inputs x outputs" if r["coarse"] else \
        "column lineage: " + ", ".join(r["subtypes"] or [])
    key = f"{r['namespace']}:{r['name']}"
    return Impacted("dataset", r["namespace"], r["name"], r["distance"], tuple(r["path"]),
                    r["job"], f"DERIVED_FROM via job {r['job']} ({how})",
                    _native(r["lastSeen"]), tuple(r["owners"]),
                    beyond.get(key) if beyond is not None else None)


def _column(r: dict[str, Any]) -> Impacted:
    masked = ", masked" if r["masking"] else ""
    return Impacted("column", r["namespace"], f"{r['dataset']}.{r['column']}", r["distance"],
                    tuple(r["path"]), r["job"],
                    f"DERIVED_FROM {r['type']} {r['subtype']}{masked} via job {r['job']}",
                    _native(r["lastSeen"]))


def _reader(r: dict[str, Any], reached: dict[str, Impacted], source: str) -> Impacted:
    nearest = min((reached[d] for d in r["reads"] if d in reached),
                  key=lambda i: i.distance, default=None)
    via = nearest.path if nearest else (source,)
    distance = (nearest.distance if nearest else 0) + 1
    return Impacted("job", r["namespace"], r["name"], distance, (*via, r["name"]), r["name"],
                    f"READS {', '.join(r['reads'])}", _native(r["lastSeen"]), tuple(r["owners"]))


def _native(value: Any) -> datetime | None:
    return value.to_native() if value is not None else None
