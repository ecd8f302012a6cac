"""The policy rules the worker keeps checked (``LINEAGE_POLICIES``, impact.policy.watch): the rules with
how many of their violations are open, and the violations themselves with when each was first
and last seen and when it cleared."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request

from api.deps import READ, G, Limit, Offset, app_context
from api.errors import RESPONSES
from api.schemas import answer
from api.schemas import answers as ours
from impact.policy import violations
from impact.policy.kept import LogState
from impact.policy.rules import Policies, PolicyError, read_policies
from ingest.log.protocol import WORKER

router = APIRouter(prefix="/api/v1/policies", tags=["policies"], responses=RESPONSES)


def _policies(request: Request) -> Policies:
    found = configured_policies(request)
    if found is None:
        raise HTTPException(404, "no policy file: the server runs without LINEAGE_POLICIES")
    return found


def configured_policies(request: Request) -> Policies | None:
    """The server's policy file (LINEAGE_POLICIES), None without one; 503 when it is unusable."""
    path = app_context(request).settings.policies
    if path is None:
        return None
    try:
        return read_policies(Path(path))
    except PolicyError as e:
        raise HTTPException(503, f"the policy file cannot be used: {e}") from e


def watched_position(request: Request) -> LogState | None:
    """The worker's position in a SQLite event log (a sole consumer's) and its last bulk load,
    for a gate to read the policy watch's store when the watch has checked through it
    (impact.policy.kept)."""
    found = app_context(request)
    return LogState.of(found.log(), WORKER) if found.settings.log == "sqlite" else None


@router.get("", dependencies=[READ], summary="The policy rules and their open violations",
            responses=answer(ours.Policies))
def rules(request: Request, graph: G) -> Any:
    policies = _policies(request)
    open_ = {(rule, severity): n for rule, severity, n in violations.open_counts(graph)}
    return {"policies": policies.path, "rules": [{
        "id": r.id, "kind": r.kind, "description": r.description, "severity": r.severity,
        "owners": list(r.owners), "line": r.line,
        "waivers": [{"covers": w.selector.describe(), "reason": w.reason,
                     "until": None if w.until is None else str(w.until)} for w in r.waivers],
        "openViolations": open_.get((r.id, r.severity), 0)} for r in policies.rules]}


@router.get("/violations", dependencies=[READ], summary="Violations of the policy rules",
            responses=answer(ours.Violations))
def violation_list(
        graph: G, limit: Limit, offset: Offset = 0,
        rule: Annotated[str | None, Query(description="A rule's id.")] = None,
        dataset: Annotated[str | None, Query(description=(
            "A dataset a violation's path starts or ends at: 'namespace:name', or its name."))]
        = None,
        severity: Annotated[Literal["error", "warning"] | None, Query()] = None,
        state: Annotated[Literal["open", "cleared", "all"], Query(description=(
            "open (default): seen at the last check; cleared: no longer seen; all."))] = "open",
) -> Any:
    total, found = violations.listing(graph, rule, dataset, severity, state, limit, offset)
    return {"totalCount": total, "violations": found}
