"""The provenance of a model version: everything its training data came from, for an audit.

For one version of a model (a dataset of type MODEL: docs/graph-model.md, "Models"): the run that
trained it (job, state, times, params and metrics), the inputs it read and the versions read, every
dataset upstream of them as the lineage stood when it was trained, each with its owners, tags (PII
among them), the latest write before the training (job, run, state, version), and for each of the
model's fields the columns it comes from with their transformations and masking. ``api.provenance``
writes it as text, Markdown (with a Mermaid drawing) or JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from graph.db import Graph
from graph.errors import LineageError, NotFound
from impact.answers import Impacted, native_time, short_name
from impact.upstream import column_upstream, dataset_upstream


class AmbiguousModel(LineageError):
    """A model name that several models carry (in different namespaces): name the namespace."""


@dataclass(frozen=True)
class Source:
    """A dataset the training data came from."""

    namespace: str
    name: str
    distance: int  # 1: read by the training run
    path: tuple[str, ...]  # the model first, this dataset last
    job: str | None  # the job of the last step (the training job for an input)
    how: str
    owners: tuple[str, ...]
    tags: tuple[str, ...]
    column_tags: tuple[str, ...]  # 'column=tag'
    version_read: str | None  # for an input: the version its training run read
    last_write: dict[str, Any] | None  # the latest write before the training: runId, job, state ...
    kind: str = "dataset"  # or "model": a model trained on another's output


@dataclass(frozen=True)
class FieldTrail:
    """Where one field of the model comes from, column by column."""

    field: str
    steps: tuple[Impacted, ...]  # upstream columns, nearest first (each with how it was made)
    tagged: tuple[str, ...]  # 'namespace:dataset.column=tag' of those columns


@dataclass(frozen=True)
class Provenance:
    namespace: str
    name: str
    version: str
    run: dict[str, Any]  # runId, job, state, start, trainedAt, params, metrics, mlflow
    model: dict[str, Any]  # MLflow's facts of the version when trained, and its registry entry now
    versions: tuple[dict[str, Any], ...]  # every version: version, runId, state, trainedAt
    sources: tuple[Source, ...]
    fields: tuple[FieldTrail, ...]
    edges: tuple[tuple[str, str, str | None], ...] = field(default=())  # (derived, source, job)

    @property
    def label(self) -> str:
        return f"{short_name(self.name)} v{self.version}"

    @property
    def key(self) -> str:
        return f"{self.namespace}:{self.name}"


def _json(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _facts(facet: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in facet.items() if not k.startswith("_")}


def find_version(graph: Graph, name: str, version: str | None = None,
                 namespace: str | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The version asked for (the newest when None) and every version of the model."""
    rows = graph.read("models/versions", name=name, namespace=namespace)
    if not rows:
        raise NotFound("model", f"{namespace + ':' if namespace else ''}{name}", name)
    models = sorted({(r["namespace"], r["name"]) for r in rows})
    if len(models) > 1:
        raise AmbiguousModel(f"several models are called {name}: "
                             + ", ".join(f"{ns}:{n}" for ns, n in models)
                             + "; name the namespace")
    if version is None:
        return rows[0], rows
    for r in rows:
        if str(r["version"]) == version:
            return r, rows
    known = ", ".join(str(r["version"]) for r in rows)
    raise NotFound("model version", f"{models[0][0]}:{models[0][1]} v{version} (versions: {known})",
                   version)


def provenance(graph: Graph, name: str, version: str | None = None, namespace: str | None = None,
               depth: int | None = None) -> Provenance:
    """The provenance of ``name`` (a model's name, or its last part: ``churn``) at ``version``."""
    row, rows = find_version(graph, name, version, namespace)
    trained_at = native_time(row["trainedAt"])
    facets = row["runFacets"] or {}
    run = {"runId": row["runId"], "job": row["job"], "state": row["state"],
           "start": native_time(row["startTime"]), "trainedAt": trained_at,
           "params": _json(facets.get("params")).get("params") or {},
           "metrics": _json(facets.get("metrics")).get("metrics") or {},
           "mlflow": _facts(_json(facets.get("run")))}
    read = {(i["namespace"], i["name"]): i.get("version") for i in row["inputs"]}
    # the lineage as it stood when the version was trained (first seen by then, not retired then)
    found: dict[str, Source] = {}
    edges: dict[tuple[str, str], str | None] = {}
    model_key = f"{row['namespace']}:{row['name']}"
    for (ns, ds), _ in sorted(read.items()):
        key = f"{ns}:{ds}"
        found[key] = Source(ns, ds, 1, (model_key, key), row["job"], "read by the training run",
                            (), (), (), read[(ns, ds)], None)
        edges[(model_key, key)] = row["job"]
        for i in dataset_upstream(graph, ns, ds, depth, trained_at).impacted:
            if i.kind != "dataset":
                continue
            ikey = f"{i.namespace}:{i.name}"
            path = (model_key, *i.path)
            if len(i.path) >= 2:
                edges[(i.path[-2], i.path[-1])] = i.job
            if ikey not in found or len(path) - 1 < found[ikey].distance:
                found[ikey] = Source(i.namespace, i.name, len(path) - 1, path, i.job, i.why,
                                     i.owners, (), (), None, None)
    details = {(r["namespace"], r["name"]): r for r in graph.read(
        "models/sources", datasets=[{"namespace": s.namespace, "name": s.name} for s in found.values()],
        asOf=row["startTime"] or row["trainedAt"])}
    sources = []
    for s in found.values():
        d = details.get((s.namespace, s.name)) or {}
        sources.append(Source(s.namespace, s.name, s.distance, s.path, s.job, s.how,
                              tuple(d.get("owners") or s.owners), tuple(d.get("tags") or ()),
                              tuple(d.get("columnTags") or ()), s.version_read, d.get("lastWrite"),
                              "model" if d.get("datasetType") == "MODEL" else "dataset"))
    sources.sort(key=lambda s: (s.distance, s.namespace, s.name))
    tags_of = {f"{s.namespace}:{s.name}.{t.split('=', 1)[0]}": t.split("=", 1)[1]
               for s in sources for t in s.column_tags if "=" in t}
    trails = []
    # the columns the version's run stated it was trained on, when it stated them: a field whose
    # nearest source is not among them is another version's, whatever the lineage then held
    stated = None if row["trainedOn"] is None else set(row["trainedOn"])
    for column in _model_fields(graph, row):
        steps = tuple(i for i in column_upstream(graph, row["namespace"], row["name"], column, depth,
                                                 trained_at).impacted if i.kind == "column")
        if steps and (stated is None or f"{steps[0].namespace}:{steps[0].name}" in stated):
            tagged = tuple(f"{i.namespace}:{i.name}={tags_of[f'{i.namespace}:{i.name}']}"
                           for i in steps if f"{i.namespace}:{i.name}" in tags_of)
            trails.append(FieldTrail(column, steps, tagged))
    versions = tuple({"version": str(r["version"]), "runId": r["runId"], "state": r["state"],
                      "trainedAt": native_time(r["trainedAt"])} for r in rows)
    # the model's output facet holds the facts of its latest write: they describe this version
    # only when they name it
    model = _facts(_json(row["model"]))
    if str(model.get("version", row["version"])) != str(row["version"]):
        model = {}
    if row["registry"]:  # the registry as last synced: the version's stage now, or gone from it
        listed = {str(v.get("version")): v for v in _json(row["registry"]).get("versions") or []}
        model["registry"] = listed.get(str(row["version"])) or "not in the registry (deleted)"
    return Provenance(row["namespace"], row["name"], str(row["version"]), run, model, versions,
                      tuple(sources), tuple(trails), tuple((a, b, j) for (a, b), j in edges.items()))


def _model_fields(graph: Graph, row: dict[str, Any]) -> list[str]:
    """The model's fields: those of its latest signature, then those of earlier versions' (their
    lineage as of the version's training tells which are the version's)."""
    found = graph.read("lookup/dataset", namespace=row["namespace"], name=row["name"])
    if not found:
        return []
    return [c["name"] for c in found[0]["columns"]] + [c["name"] for c in found[0]["dropped"]]

