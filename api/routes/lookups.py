"""Our lookups: datasets, one dataset, job or run as the graph holds them (impact.lookups)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from api.deps import READ, G, Limit, Name, Ns, Offset
from api.encode import lean, page, to_json
from api.errors import RESPONSES
from api.render.policy import at_risk
from api.routes.policies import configured_policies, watched_position
from api.schemas import answer
from api.schemas import answers as ours
from impact import lookups
from impact.policy.gate import gate

router = APIRouter(tags=["lookup"], dependencies=[READ], responses=RESPONSES)


@router.get("/api/v1/datasets", summary="Datasets with columns and owners, a page at a time",
            responses=answer(ours.LookupPage))
def datasets(graph: G, limit: Limit, namespace: str | None = None, offset: Offset = 0) -> Any:
    return page("datasets", lookups.datasets(graph, namespace, limit, offset), limit, offset)


@router.get("/api/v1/dataset",
            summary="One dataset: columns, owners, writers, readers, neighbours, last run",
            responses=answer(ours.LookupDataset))
def dataset(request: Request, graph: G, namespace: Ns, name: Name) -> Any:
    row = lean(lookups.dataset(graph, namespace, name))
    # what upstream (or in it) closes its gate: its "quality at risk" (impact.policy.gate)
    closed = gate(graph, namespace, name, configured_policies(request),
                  position=watched_position(request))
    return to_json({**row, "qualityAtRisk": at_risk(closed)})


@router.get("/api/v1/job", summary="One job: what it reads and writes, its parents and latest runs",
            responses=answer(ours.LookupJob))
def job(graph: G, namespace: Ns, name: Name, runs: Annotated[int, Query(ge=1, le=100)] = 10) -> Any:
    return to_json(lean(lookups.job(graph, namespace, name, runs)))


@router.get("/api/v1/runs/{run_id}",
            summary="One run with its facets, inputs, outputs, parent and children",
            responses=answer(ours.LookupRun))
def run(graph: G, run_id: str) -> Any:
    return to_json(lean(lookups.run(graph, run_id)))
