"""Gates a pipeline waits on: may a job consume this dataset now, and why not (impact.policy.gate).
The Airflow sensor of api.airflow.sensor asks this."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from api.deps import READ, Depth, G, Name, Ns
from api.errors import RESPONSES
from api.render.policy import gate_json
from api.routes.policies import configured_policies, watched_position
from api.schemas import answer
from api.schemas import answers as ours
from impact.policy.gate import gate

router = APIRouter(prefix="/api/v1/gate", tags=["policies"], responses=RESPONSES)


@router.get("", dependencies=[READ], summary="May a job consume this dataset now, and why not",
            responses=answer(ours.Gate))
def gate_answer(request: Request, graph: G, namespace: Ns, name: Name, depth: Depth = None) -> Any:
    """Closed by a failed upstream run with no success after it, a failed data-quality
    assertion, an error-severity quality rule out of bounds, a late input, or an error-severity
    policy violation touching the dataset; each cause with its path (docs/policies.md, "Gates")."""
    return gate_json(gate(graph, namespace, name, configured_policies(request), depth,
                          position=watched_position(request)))
