"""The questions: blast radius, upstream, root cause, GDPR reach, freshness, the pre-deploy check."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query
from fastapi.responses import PlainTextResponse

from api.deps import READ, AsOf, Depth, G, Name, Ns, Retired
from api.encode import to_json
from api.errors import RESPONSES, BadParam
from api.render.check import tag_reach_csv, where_csv
from api.schemas import answer
from api.schemas import answers as ours
from impact import blast_radius as br
from impact import root_cause, upstream
from impact import where as where_q
from impact.answers import clamp_depth
from impact.change import check as check_mod
from impact.change.read import CheckInputError, parse_change
from impact.health import freshness as fr
from impact.tag_reach import tag_reach

OptNs = Annotated[str | None, Query(min_length=1, description="Namespace, e.g. postgres://db:5432")]
OptName = Annotated[str | None, Query(min_length=1)]

router = APIRouter(tags=["questions"], dependencies=[READ], responses=RESPONSES)


@router.get("/api/v1/impact/dataset",
            summary="Blast radius of a dataset: derived datasets and the jobs reading them",
            responses=answer(ours.Walk))
def impact_dataset(graph: G, namespace: Ns, name: Name, as_of: AsOf, depth: Depth = None,
                   retired: Retired = False) -> Any:
    return to_json(br.dataset_blast_radius(graph, namespace, name, depth, as_of, retired))


@router.get("/api/v1/impact/job",
            summary="Blast radius of a job: its outputs, what derives from them, who reads them",
            responses=answer(ours.Walk))
def impact_job(graph: G, namespace: Ns, name: Name, as_of: AsOf, depth: Depth = None,
               retired: Retired = False) -> Any:
    return to_json(br.job_blast_radius(graph, namespace, name, depth, as_of, retired))


@router.get("/api/v1/impact/column", summary="Blast radius of a column, with each step's transformation",
            responses=answer(ours.Walk))
def impact_column(graph: G, namespace: Ns, dataset: Name, column: Name, as_of: AsOf,
                  depth: Depth = None, retired: Retired = False) -> Any:
    return to_json(br.column_blast_radius(graph, namespace, dataset, column, depth, as_of, retired))


@router.get("/api/v1/upstream/dataset", summary="Upstream lineage of a dataset",
            responses=answer(ours.Walk))
def upstream_dataset(graph: G, namespace: Ns, name: Name, as_of: AsOf, depth: Depth = None,
                     retired: Retired = False) -> Any:
    return to_json(upstream.dataset_upstream(graph, namespace, name, depth, as_of, retired))


@router.get("/api/v1/upstream/column", summary="Upstream lineage of a column",
            responses=answer(ours.Walk))
def upstream_column(graph: G, namespace: Ns, dataset: Name, column: Name, as_of: AsOf,
                    depth: Depth = None, retired: Retired = False) -> Any:
    return to_json(upstream.column_upstream(graph, namespace, dataset, column, depth, as_of,
                                            retired))


@router.get("/api/v1/root-cause/dataset", summary="Ranked root-cause candidates for a wrong dataset",
            responses=answer(ours.RootCause))
def root_cause_dataset(graph: G, namespace: Ns, name: Name, as_of: AsOf, depth: Depth = None) -> Any:
    return to_json(root_cause.root_cause_dataset(graph, namespace, name, depth, as_of))


@router.get("/api/v1/root-cause/run/{run_id}",
            summary="Ranked root-cause candidates for a failed or wrong run",
            responses=answer(ours.RootCause))
def root_cause_run(graph: G, run_id: str, as_of: AsOf, depth: Depth = None) -> Any:
    return to_json(root_cause.root_cause_run(graph, run_id, depth, as_of))


@router.get("/api/v1/where",
            summary="GDPR: every column a column's data reaches (or the data of every column "
                    "tagged TAG), raw / transformed / masked / aggregated / influence; JSON or CSV",
            responses={200: {"model": ours.WhereAnswer | ours.TagAnswer,
                             "description": "The answer", "content": {"text/csv": {}}}})
def where(graph: G, as_of: AsOf, namespace: OptNs = None, dataset: OptName = None,
          column: OptName = None, tag: Annotated[str | None, Query(
              min_length=1, max_length=256, description="Instead of one column: every column "
              "carrying this tag (e.g. PII), from producers' tags facets or the API")] = None,
          depth: Depth = None, format: Literal["json", "csv"] = "json",
          retired: Retired = False) -> Any:
    if tag is not None:
        if namespace or dataset or column:
            raise BadParam("tag", "give either tag or namespace, dataset and column, not both")
        found = tag_reach(graph, tag, depth, as_of, retired)
        if format == "csv":
            return PlainTextResponse(tag_reach_csv(found), media_type="text/csv")
        return to_json({**dataclasses.asdict(found), "summary": found.summary(),
                        "untaggedRaw": [dataclasses.asdict(c) for c in found.untagged_raw]})
    if not (namespace and dataset and column):
        raise BadParam("column", "give namespace, dataset and column (or tag)")
    report = where_q.where(graph, namespace, dataset, column, depth, as_of, retired)
    if format == "csv":
        return PlainTextResponse(where_csv(report), media_type="text/csv")
    return to_json({**dataclasses.asdict(report), "counts": report.counts()})


@router.get("/api/v1/freshness", summary="Last successful write of a dataset and whether it is late",
            responses=answer(ours.FreshnessAnswer))
def freshness(graph: G, namespace: Ns, name: Name, as_of: AsOf) -> Any:
    f = fr.freshness(graph, namespace, name, as_of)
    return to_json({**dataclasses.asdict(f), "verdict": f.verdict})


@router.post("/api/v1/impact/check",
             summary="Pre-deploy check of a proposed change: BREAKING / RISKY / SAFE per consumer",
            responses=answer(ours.CheckReport))
def impact_check(graph: G, body: Annotated[dict[str, Any], Body(
        description="A change document, as for `lineage check`: {changes: [...]}, an OpenLineage "
                    "event, {namespace, dataset, columns}, or {job, namespace, sql}")],
                 as_of: AsOf, depth: Depth = None,
                 stale_days: Annotated[int, Query(ge=0, le=36_500)] = 30,
                 exclude_stale: bool = False, retired: Retired = False) -> Any:
    try:
        changes = parse_change(body, graph)
        report = check_mod.check(graph, changes, depth=clamp_depth(depth), as_of=as_of,
                                 stale_days=stale_days, exclude_stale=exclude_stale,
                                 include_retired=retired)
    except CheckInputError as e:
        raise BadParam("body", str(e), where="body") from e
    return to_json(report)


@router.get("/api/v1/provenance/model",
            summary="Provenance of a model version: every source its training data came from",
            responses=answer(ours.Provenance))
def provenance_model(graph: G, name: Name,
                     version: Annotated[str | None, Query(min_length=1, description=(
                         "The version; the newest when left out"))] = None,
                     namespace: OptNs = None, depth: Depth = None,
                     format: Annotated[Literal["json", "markdown"], Query(
                         description="json, or markdown (for an audit file)")] = "json") -> Any:
    from api.render.provenance import provenance_markdown
    from impact.ml.provenance import AmbiguousModel, provenance

    try:
        answer = provenance(graph, name, version, namespace, depth)
    except AmbiguousModel as e:
        raise BadParam("namespace", str(e)) from e
    if format == "markdown":
        return PlainTextResponse(provenance_markdown(answer), media_type="text/markdown")
    return to_json(answer)
