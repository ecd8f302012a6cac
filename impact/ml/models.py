"""Models in the answers: which model versions the data of a dataset or a column trained.

A model is a dataset whose ``datasetType`` facet says MODEL; each write of it is a version (the
write's version facet, else its run). A version was trained on what its run read, and at column
level on the input columns its column lineage names (``trainedOn`` on the write:
docs/graph-model.md, "Models"). A version is immutable: it stays trained on its inputs whatever its
job reads today, so retired lineage does not hide it.

The questions add these versions to their answers, apart from tables: the blast radius ("models:
churn v3, churn v4"), GDPR reach (and in what form each version saw the data), the check.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from graph.db import Graph
from impact.answers import ModelVersion, native_time


def _version(r: dict[str, Any], via: str, basis: str) -> ModelVersion:
    return ModelVersion(r["namespace"], r["name"], str(r["version"]), r["runId"], r["job"],
                        r["state"], native_time(r["trainedAt"]), via, basis)


def trained_on_datasets(graph: Graph, datasets: Iterable[tuple[str, str]]) -> tuple[ModelVersion, ...]:
    """The model versions whose training read any of ``datasets`` (nearest first: the order
    given), each once."""
    keys = [f"{ns}:{name}" for ns, name in dict.fromkeys(datasets)]
    if not keys:
        return ()
    order = {k: i for i, k in enumerate(keys)}
    found: dict[tuple[str, str, str], ModelVersion] = {}
    rows = graph.read("models/trained_on", datasets=keys)
    for r in sorted(rows, key=lambda r: order[f"{r['sourceNamespace']}:{r['sourceName']}"]):
        key = (r["namespace"], r["name"], str(r["version"]))
        if key not in found:
            found[key] = _version(r, f"{r['sourceNamespace']}:{r['sourceName']}", "dataset")
    return _ordered(found.values())


def trained_on_columns(graph: Graph, columns: Sequence[tuple[str, str, str]]
                       ) -> tuple[ModelVersion, ...]:
    """The model versions trained on any of ``columns`` (namespace, dataset, column; nearest
    first): those whose column lineage names one (``basis`` columns), and those that read a
    column's dataset without stating their column lineage (``basis`` dataset: maybe)."""
    wanted = {f"{ns}:{ds}.{col}": i for i, (ns, ds, col) in enumerate(columns)}
    datasets = [f"{ns}:{ds}" for ns, ds, _ in columns]
    if not datasets:
        return ()
    found: dict[tuple[str, str, str], tuple[int, ModelVersion]] = {}
    for r in graph.read("models/trained_on", datasets=list(dict.fromkeys(datasets))):
        key = (r["namespace"], r["name"], str(r["version"]))
        if r["trainedOn"] is None:
            rank = min(i for i, d in enumerate(datasets)
                       if d == f"{r['sourceNamespace']}:{r['sourceName']}") + len(wanted)
            hit = _version(r, f"{r['sourceNamespace']}:{r['sourceName']}", "dataset")
        else:
            named = [c for c in r["trainedOn"] if c in wanted]
            if not named:
                continue
            via = min(named, key=wanted.__getitem__)
            rank, hit = wanted[via], _version(r, via, "columns")
        if key not in found or rank < found[key][0]:
            found[key] = (rank, hit)
    return _ordered(v for _, v in found.values())


def with_forms(versions: Iterable[ModelVersion], forms: dict[str, str]) -> tuple[ModelVersion, ...]:
    """Each version with the form of the data it saw: the label (``forms``, by column key) of the
    column it was trained on; ``unknown`` when its training columns are not stated."""
    return tuple(replace(v, saw=forms.get(v.via, "unknown") if v.basis == "columns" else "unknown")
                 for v in versions)


def _ordered(versions: Iterable[ModelVersion]) -> tuple[ModelVersion, ...]:
    return tuple(sorted(versions, key=lambda v: (
        v.namespace, v.name, v.trained_at.timestamp() if v.trained_at else 0.0, v.version)))


def summary(versions: Sequence[ModelVersion]) -> str:
    """``churn v3, churn v4`` (with the form each saw, when known: ``churn v3 (raw)``)."""
    return ", ".join(v.label + (f" ({v.saw})" if v.saw else "") for v in versions)
