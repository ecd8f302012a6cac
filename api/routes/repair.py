"""Repair: what changed upstream since the last good run, and the rerun plan after a bad run or a
dataset's bad writes (impact.repair)."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import PlainTextResponse

from api.deps import READ, Depth, G, Name, Ns, time_query
from api.encode import to_json
from api.errors import RESPONSES, BadParam
from api.render.repair import changes_markdown, plan_markdown
from api.schemas import answer
from api.schemas import answers as ours
from impact.repair.changes import Changes, changes
from impact.repair.plan import RerunPlan, rerun_plan_dataset, rerun_plan_run
from ingest.times import parse_time

router = APIRouter(tags=["questions"], dependencies=[READ], responses=RESPONSES)

PlanFormat = Literal["json", "markdown"]


Since = Annotated[datetime | None, Depends(time_query(
    "since", "ISO time: every write of the dataset since then is bad (default: its latest "
             "write)."))]


async def _bad_columns(columns: str | None = Query(
        None, description="Only these columns (comma-separated) of what went bad are bad: jobs "
                          "that read none of what they feed, by column lineage, are listed apart "
                          "(unaffected)")) -> tuple[str, ...]:
    found = tuple(dict.fromkeys(c.strip() for c in (columns or "").split(",") if c.strip()))
    if columns is not None and not found:
        raise BadParam("columns", "name at least one column")
    return found


BadColumns = Annotated[tuple[str, ...], Depends(_bad_columns)]


def _answer(plan: RerunPlan, format: PlanFormat) -> Any:
    if format == "markdown":
        return PlainTextResponse(plan_markdown(plan), media_type="text/markdown")
    return to_json({**dataclasses.asdict(plan), "commands": list(plan.commands)})


@router.get("/api/v1/rerun-plan/run/{run_id}",
            summary="What to rerun after a bad or failed run, in which order, and what to roll "
                    "back to",
            responses={200: {"model": ours.RerunPlanAnswer, "description": "The plan",
                             "content": {"text/markdown": {}}}})
def rerun_run(graph: G, run_id: str, columns: BadColumns, depth: Depth = None,
              format: PlanFormat = "json") -> Any:
    return _answer(rerun_plan_run(graph, run_id, depth, columns), format)


@router.get("/api/v1/rerun-plan/dataset",
            summary="What to rerun after bad writes of a dataset, in which order, and what to "
                    "roll back to",
            responses=answer(ours.RerunPlanAnswer))
def rerun_dataset(graph: G, namespace: Ns, name: Name,
                  since: Since, columns: BadColumns,
                  depth: Depth = None, format: PlanFormat = "json") -> Any:
    return _answer(rerun_plan_dataset(graph, namespace, name, since, depth, columns), format)


async def _since(since: str | None = Query(
        None, description="A run id (compare with that run) or an ISO time (changes after it); "
                          "default: the subject's last completed run before its latest")
                 ) -> datetime | str | None:
    if since is None:
        return None
    try:
        return str(uuid.UUID(since))
    except ValueError:
        pass
    try:
        return parse_time(since)
    except ValueError as e:
        raise BadParam("since", f"neither a run id nor an ISO 8601 time: {e}") from e


ChangesSince = Annotated[datetime | str | None, Depends(_since)]
Until = Annotated[datetime | None, Depends(time_query("until", "ISO time: changes up to it "
                                                               "(default: now)."))]


def _changes(answer: Changes, format: PlanFormat) -> Any:
    if format == "markdown":
        return PlainTextResponse(changes_markdown(answer), media_type="text/markdown")
    return to_json(answer)


@router.get("/api/v1/changes/job",
            summary="What changed upstream of a job since its last good run, nearest first",
            responses={200: {"model": ours.Changes, "description": "The changes",
                             "content": {"text/markdown": {}}}})
def changes_job(graph: G, namespace: Ns, name: Name, since: ChangesSince, until: Until,
                depth: Depth = None, format: PlanFormat = "json") -> Any:
    return _changes(changes(graph, "job", namespace, name, since, until, depth), format)


@router.get("/api/v1/changes/dataset",
            summary="What changed upstream of a dataset since its writers' last good run, "
                    "nearest first",
            responses={200: {"model": ours.Changes, "description": "The changes",
                             "content": {"text/markdown": {}}}})
def changes_dataset(graph: G, namespace: Ns, name: Name, since: ChangesSince, until: Until,
                    depth: Depth = None, format: PlanFormat = "json") -> Any:
    return _changes(changes(graph, "dataset", namespace, name, since, until, depth), format)
