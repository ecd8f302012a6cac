"""Marquez's read API over our graph: namespaces, sources, datasets and their versions, jobs,
their versions and runs, one run, tags and search (``impact.marquez.models`` builds the JSON).

Every function answers what Marquez answers for the same request, or raises NotFound (a 404 with
what was looked for) where Marquez answers 404.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from graph.db import Graph
from graph.errors import NotFound
from impact.marquez import models as mm

LATEST_RUNS = 10  # Marquez's job answer lists up to ten latest runs


def _page(graph: Graph, query: str, skip: int, limit: int, **params: Any
          ) -> tuple[list[dict[str, Any]], int]:
    """A page of a listing and how many the listing holds in all, whatever the page: each row
    carries the total; an empty page (past the end, or ``limit=0``) asks for the first row
    once, since Marquez's count does not depend on paging."""
    rows = graph.read(query, skip=skip, limit=limit, **params)
    if rows:
        return rows, int(rows[0]["total"])
    first = graph.read(query, skip=0, limit=1, **params) if skip or not limit else []
    return rows, int(first[0]["total"]) if first else 0


def namespaces(graph: Graph, limit: int, offset: int) -> dict[str, Any]:
    rows, total = _page(graph, "marquez/namespaces", offset, limit, name=None)
    return {"namespaces": [_namespace(r) for r in rows], "totalCount": total}


def namespace(graph: Graph, name: str) -> dict[str, Any]:
    rows = graph.read("marquez/namespaces", name=name, skip=0, limit=1)
    if not rows:
        raise NotFound("namespace", name)
    return _namespace(rows[0])


def _namespace(r: dict[str, Any]) -> dict[str, Any]:
    return {"name": r["name"], "createdAt": mm.iso(r["createdAt"]),
            "updatedAt": mm.iso(r["updatedAt"]), "ownerName": r["ownerName"],
            "description": r["description"], "isHidden": r["isHidden"]}


def datasets(graph: Graph, namespace_name: str, limit: int, offset: int) -> dict[str, Any]:
    _known_namespace(graph, namespace_name)
    rows, total = _page(graph, "marquez/datasets", offset, limit, namespace=namespace_name,
                        name=None, keys=None)
    return {"totalCount": total, "datasets": [mm.dataset(r) for r in rows]}


def dataset(graph: Graph, namespace_name: str, name: str) -> dict[str, Any]:
    rows = graph.read("marquez/datasets", namespace=namespace_name, name=name, keys=None, skip=0,
                      limit=1)
    if not rows:
        raise NotFound("dataset", f"{namespace_name}:{name}", name)
    return mm.dataset(rows[0])


def dataset_facet(graph: Graph, namespace_name: str, name: str, facet: str) -> Any:
    """One facet of a dataset as kept, a legacy write's too; None when it has none (or no such
    dataset)."""
    rows = graph.read("marquez/datasets", namespace=namespace_name, name=name, keys=None, skip=0,
                      limit=1)
    return mm.facets(rows[0]["props"], legacy=True).get(facet) if rows else None


def has_field(graph: Graph, namespace_name: str, dataset_name: str, field: str) -> bool:
    rows = graph.read("marquez/field_exists", namespace=namespace_name, dataset=dataset_name,
                      field=field)
    return bool(rows and rows[0]["found"])


def _known_namespace(graph: Graph, name: str) -> None:
    if not graph.read("marquez/namespaces", name=name, skip=0, limit=1):
        raise NotFound("namespace", name)


def jobs(graph: Graph, namespace_name: str | None, limit: int, offset: int,
         last_run_states: Sequence[str] | None = None) -> dict[str, Any]:
    # an unknown namespace has no jobs: 200 and an empty list, as Marquez's JobResource.list
    # (which, unlike the datasets' listing, does not look the namespace up)
    states = None
    if last_run_states:
        states = [s for m in last_run_states for s in mm.STATES_OF.get(m, [])]
    rows, total = _page(graph, "marquez/jobs", offset, limit, namespace=namespace_name, name=None,
                        keys=None, states=states, runs=LATEST_RUNS)
    return {"totalCount": total, "jobs": [job_json(r) for r in rows]}


def job(graph: Graph, namespace_name: str, name: str) -> dict[str, Any]:
    rows = graph.read("marquez/jobs", namespace=namespace_name, name=name, keys=None, states=None,
                      skip=0, limit=1, runs=LATEST_RUNS)
    if not rows:
        raise NotFound("job", f"{namespace_name}:{name}", name)
    return job_json(rows[0])


def pending_outputs(graph: Graph, namespace_name: str, name: str) -> list[dict[str, str]]:
    """The outputs a legacy ``PUT`` of the job without a run declared, which its runs name
    (ingest.marquez_events)."""
    rows = graph.read("marquez/jobs", namespace=namespace_name, name=name, keys=None, states=None,
                      skip=0, limit=1, runs=0)
    facet = mm.facets(rows[0]["props"], legacy=True).get(mm.JOB_FACET) if rows else None
    outputs = facet.get("outputs") if isinstance(facet, dict) else None
    return [{"namespace": d["namespace"], "name": d["name"]} for d in outputs or []
            if isinstance(d, dict) and isinstance(d.get("namespace"), str)
            and isinstance(d.get("name"), str)]


def job_json(row: dict[str, Any]) -> dict[str, Any]:
    """Marquez's Job from a row of ``marquez/jobs``."""
    p = row["props"]
    ns, name = p["namespace"], p["name"]
    ident = {"namespace": ns, "name": name}
    runs = [mm.run({**r, "job": ident}) for r in row["runs"]]
    parent = row.get("parent")
    found = mm.facets(p)
    if p.get("description") is not None:
        found.setdefault("documentation", mm.facet("DocumentationJobFacet",
                                                   description=p["description"]))
    if p.get("sql"):
        found.setdefault("sql", mm.facet("SQLJobFacet", query=p["sql"]))
    # a legacy PUT's location is the job's too, though Marquez serves no facet of it
    location = (mm.facets(p, legacy=True).get("sourceCodeLocation") or {}).get("url")
    return {
        "id": ident, "type": "STREAM" if p.get("processingType") == "STREAMING" else "BATCH",
        "name": name, "simpleName": _simple(name, parent), "parentJobName":
            parent["name"] if parent else None, "parentJobUuid": None,
        "createdAt": mm.iso(p.get("firstSeen")), "updatedAt": mm.iso(p.get("lastSeen")),
        "namespace": ns, "inputs": row["inputs"], "outputs": row["outputs"],
        "location": location, "description": p.get("description"),
        "latestRun": runs[0] if runs else None, "latestRuns": runs, "facets": found,
        "currentVersion": runs[0]["jobVersion"]["version"] if runs else
            mm.job_version(ns, name, row["inputs"], row["outputs"]),
        "labels": [], "tags": mm.all_tags(p, row),
    }


def _simple(name: str, parent: dict[str, Any] | None) -> str:
    # Marquez names a child job PARENT.CHILD; its simple name is the part after the parent's
    if parent and name.startswith(parent["name"] + "."):
        return name[len(parent["name"]) + 1:]
    return name


def job_runs(graph: Graph, namespace_name: str, name: str, limit: int,
             offset: int) -> dict[str, Any]:
    job(graph, namespace_name, name)  # 404 for an unknown job
    rows, total = _page(graph, "marquez/runs", offset, limit, namespace=namespace_name, name=name,
                        runId=None)
    return {"totalCount": total, "runs": [mm.run(r, r.get("parent")) for r in rows]}


def run(graph: Graph, run_id: str) -> dict[str, Any]:
    rows = graph.read("marquez/runs", namespace=None, name=None, runId=run_id, skip=0, limit=1)
    if not rows:
        raise NotFound("run", run_id)
    return mm.run(rows[0], rows[0].get("parent"))


def run_facets(graph: Graph, run_id: str, kind: str) -> dict[str, Any]:
    """``GET /jobs/runs/{id}/facets?type=run|job``: the run's facets, or its job's."""
    found = run(graph, run_id)
    if kind == "run":
        return {"runId": found["id"], "facets": found["facets"]}
    ident = found["jobVersion"]
    owner = job(graph, ident["namespace"], ident["name"])
    return {"runId": found["id"], "facets": owner["facets"]}


def _source(r: dict[str, Any]) -> dict[str, Any]:
    url = r["connectionUrl"] or ""
    kind = r["type"] or (url.split(":", 1)[0].upper() if ":" in url
                         else "POSTGRESQL")  # Marquez's default type
    return {"type": kind, "name": r["name"], "createdAt": mm.iso(r["createdAt"]),
            "updatedAt": mm.iso(r["updatedAt"]), "connectionUrl": url,
            "description": r["description"]}


def sources(graph: Graph, limit: int, offset: int) -> dict[str, Any]:
    rows = graph.read("marquez/sources", name=None, skip=offset, limit=limit)
    return {"sources": [_source(r) for r in rows]}


def source(graph: Graph, name: str) -> dict[str, Any]:
    rows = graph.read("marquez/sources", name=name, skip=0, limit=1)
    if not rows:
        raise NotFound("source", name)
    return _source(rows[0])


def tags(graph: Graph, limit: int, offset: int,
         configured: dict[str, str | None] | None = None) -> dict[str, Any]:
    """Every tag; ``configured``: the tags the settings declare (name: description)."""
    return {"tags": graph.read("marquez/tags", skip=offset, limit=limit, configured=[
        {"name": n, "description": d} for n, d in (configured or {}).items()])}


def search(graph: Graph, q: str, kind: str | None, namespace: str | None, after: date | None,
           before: date | None, by_name: bool, limit: int) -> dict[str, Any]:
    """Datasets and jobs whose name holds ``q`` (``kind`` DATASET or JOB, or both)."""
    rows = graph.read("marquez/search", q=q, kind=kind, namespace=namespace, after=after,
                      before=before, byName=by_name, limit=limit)
    results = [{**{k: r[k] for k in ("type", "name", "namespace", "nodeId")},
                "updatedAt": mm.iso(r["updatedAt"])} for r in rows]
    return {"totalCount": rows[0]["total"] if rows else 0, "results": results}


def node_data(graph: Graph, datasets: list[dict[str, str]], jobs: list[dict[str, str]]
              ) -> dict[str, dict[str, Any]]:
    """The ``data`` of lineage nodes as Marquez's ``DatasetData`` and ``JobData`` declare it
    (``marquez.service.models``), keyed ``dataset:NS:NAME`` and ``job:NS:NAME``; soft-deleted
    nodes are left out, as Marquez leaves them out of lineage."""
    found: dict[str, dict[str, Any]] = {}
    if datasets:
        for r in graph.read("marquez/datasets", namespace=None, name=None, keys=datasets, skip=0,
                            limit=len(datasets)):
            d = mm.dataset(r)
            found[f"dataset:{d['namespace']}:{d['name']}"] = {k: d[k] for k in mm.DATASET_DATA}
    if jobs:
        for r in graph.read("marquez/jobs", namespace=None, name=None, keys=jobs, states=None,
                            skip=0, limit=len(jobs), runs=1):
            j = job_json(r)
            latest = j["latestRun"]
            found[f"job:{j['namespace']}:{j['name']}"] = {
                **{k: j[k] for k in mm.JOB_DATA},
                "currentRunUuid": latest["id"] if latest else None}
    return found

