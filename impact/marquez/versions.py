"""Marquez's dataset and job versions, derived from what the graph keeps (docs/marquez.md).

A dataset version is one write (a run that wrote the dataset), one declaration (a DatasetEvent
that named it: a legacy ``PUT`` without a run is one), or its first sighting when it was named
before either (a dataset only read); each has the columns the dataset was written with then. A
job version is one distinct pair of input and output sets among the job's runs, first seen with
its oldest run, its latest run the newest with that pair.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from graph.db import Graph
from graph.errors import NotFound
from impact.marquez import catalog as mc
from impact.marquez import models as mm

MAX_VERSIONS = 10_000  # writes (runs) read to answer one dataset's or job's versions


def _page(found: list[dict[str, Any]], limit: int, offset: int) -> dict[str, Any]:
    return {"totalCount": len(found), "versions": found[offset:offset + limit]}


def _pick(found: list[dict[str, Any]], version: str, kind: str, key: str) -> dict[str, Any]:
    for v in found:
        if v["version"] == version.lower():
            return v
    raise NotFound(f"{kind} version", f"{key}#{version}", version)


def dataset_versions(graph: Graph, namespace: str, name: str, limit: int,
                     offset: int) -> dict[str, Any]:
    return _page(_dataset_versions(graph, namespace, name), limit, offset)


def dataset_version(graph: Graph, namespace: str, name: str, version: str) -> dict[str, Any]:
    return _pick(_dataset_versions(graph, namespace, name), version, "dataset",
                 f"{namespace}:{name}")


def _dataset_versions(graph: Graph, namespace: str, name: str) -> list[dict[str, Any]]:
    rows = graph.read("marquez/dataset_versions", namespace=namespace, name=name,
                      max=MAX_VERSIONS)
    if not rows:
        raise NotFound("dataset", f"{namespace}:{name}", name)
    row = rows[0]
    p = row["props"]
    order = {n: i for i, n in enumerate(p.get("schemaColumns") or [])}
    columns = [{**c, "from": mm.native(c["from"]), "until": mm.native(c["until"])} for c in
               sorted(row["columns"], key=lambda c: (order.get(c["name"], len(order)), c["name"]))]
    made: list[tuple[datetime | None, str, dict[str, Any] | None, dict[str, Any]]] = [
        (mm.native(w["written"] or w["at"]), mm.dataset_version(namespace, name, w["runId"]), w, {})
        for w in row["writes"]]
    made += [(d.time, mm.declared_version(namespace, name, d.stamp), None, d.declared)
             for d in mm.declarations(p)]
    first = first_sighting(p, row["firstWritten"])
    if first is not None:
        made.append((first, mm.first_version(namespace, name), None, {}))
    made.sort(key=lambda m: (m[0] is not None, m[0] or mm.EPOCH, m[1]), reverse=True)
    # facets are kept per dataset, not per version: they are the newest version's
    return [_version({**p, **declared}, at, version, write, columns, newest=i == 0)
            for i, (at, version, write, declared) in enumerate(made)]


def first_sighting(props: dict[str, Any], first_written: Any) -> datetime | None:
    """When the dataset was first named, if that was before any run wrote it and before any
    declaration of it (a dataset only read, or read before it was written): a version then."""
    seen = mm.native(props.get("firstSeen"))
    if seen is None:
        return None
    earlier = [d.time for d in mm.declarations(props)] + [t for t in [mm.native(first_written)] if t]
    return seen if not earlier or seen < min(earlier) else None


def _version(p: dict[str, Any], at: datetime | None, version: str, write: dict[str, Any] | None,
             columns: list[dict[str, Any]], newest: bool) -> dict[str, Any]:
    """One version: a write (``write``: the run), a declaration or the first sighting (no run).
    ``p`` is the dataset's props, a declaration's own source, description and tags over them."""
    ns, name = p["namespace"], p["name"]
    fields = [{"name": c["name"], "type": c["type"], "tags": sorted(set(c["tags"])),
               "description": c["description"]} for c in columns
              if at is None or (c["from"] <= at and (c["until"] is None or c["until"] >= at))]
    created = None if write is None else mm.run({
        "props": write["props"], "job": write["job"], "inputs": write["inputs"],
        "outputs": write["outputs"]})
    return {
        "id": {"namespace": ns, "name": name, "version": version}, **mm.dataset_type(p),
        "name": name, "physicalName": name, "createdAt": mm.iso(at), "version": version,
        "namespace": ns, "sourceName": p.get("dataSourceName") or "default", "fields": fields,
        "tags": sorted(p.get("tags") or []), "lifecycleState": p.get("lifecycleState"),
        "description": p.get("description"), "currentSchemaVersion": None,
        "createdByRun": created, "facets": mm.facets(p) if newest else {},
    }


def job_versions(graph: Graph, namespace: str, name: str, limit: int,
                 offset: int) -> dict[str, Any]:
    return _page(_job_versions(graph, namespace, name), limit, offset)


def job_version(graph: Graph, namespace: str, name: str, version: str) -> dict[str, Any]:
    return _pick(_job_versions(graph, namespace, name), version, "job", f"{namespace}:{name}")


def _job_versions(graph: Graph, namespace: str, name: str) -> list[dict[str, Any]]:
    owner = mc.job(graph, namespace, name)  # 404 for an unknown job
    rows = graph.read("marquez/runs", namespace=namespace, name=name, runId=None, skip=0,
                      limit=MAX_VERSIONS)
    versions: dict[str, dict[str, Any]] = {}
    for row in rows:  # newest first
        r = mm.run(row, row.get("parent"))
        key = r["jobVersion"]["version"]
        seen = versions.get(key)
        if seen is None:
            versions[key] = seen = {
                "id": {"namespace": namespace, "name": name, "version": key}, "name": name,
                "version": key, "namespace": namespace, "location": owner["location"],
                "inputs": _ids(row["inputs"]), "outputs": _ids(row["outputs"]),
                "latestRun": r, "facets": owner["facets"], "createdAt": r["createdAt"]}
        seen["createdAt"] = r["createdAt"]  # the oldest run with this version comes last
    # a job no run has run yet (a JobEvent, a legacy PUT): the version its declaration names
    if not versions:
        key = mm.job_version(namespace, name, owner["inputs"], owner["outputs"])
        versions[key] = {
            "id": {"namespace": namespace, "name": name, "version": key}, "name": name,
            "version": key, "namespace": namespace, "location": owner["location"],
            "inputs": _ids(owner["inputs"]), "outputs": _ids(owner["outputs"]),
            "latestRun": None, "facets": owner["facets"], "createdAt": owner["createdAt"]}
    return list(versions.values())


def _ids(found: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [{"namespace": d["namespace"], "name": d["name"]} for d in found]
