"""Repair: the rerun plan after a bad run or a dataset's bad writes (impact.repair)."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends
from fastapi.responses import PlainTextResponse

from api.deps import READ, Depth, G, Name, Ns, time_query
from api.encode import to_json
from api.errors import RESPONSES
from api.render.repair import plan_markdown
from api.schemas import answer
from api.schemas import answers as ours
from impact.repair.plan import RerunPlan, rerun_plan_dataset, rerun_plan_run

router = APIRouter(tags=["questions"], dependencies=[READ], responses=RESPONSES)

PlanFormat = Literal["json", "markdown"]


Since = Annotated[datetime | None, Depends(time_query(
    "since", "ISO time: every write of the dataset since then is bad (default: its latest "
             "write)."))]


def _answer(plan: RerunPlan, format: PlanFormat) -> Any:
    if format == "markdown":
        return PlainTextResponse(plan_markdown(plan), media_type="text/markdown")
    return to_json({**dataclasses.asdict(plan), "commands": list(plan.commands)})


@router.get("/api/v1/rerun-plan/run/{run_id}",
            summary="What to rerun after a bad or failed run, in which order, and what to roll "
                    "back to",
            responses={200: {"model": ours.RerunPlanAnswer, "description": "The plan",
                             "content": {"text/markdown": {}}}})
def rerun_run(graph: G, run_id: str, depth: Depth = None, format: PlanFormat = "json") -> Any:
    return _answer(rerun_plan_run(graph, run_id, depth), format)


@router.get("/api/v1/rerun-plan/dataset",
            summary="What to rerun after bad writes of a dataset, in which order, and what to "
                    "roll back to",
            responses=answer(ours.RerunPlanAnswer))
def rerun_dataset(graph: G, namespace: Ns, name: Name,
                  since: Since,
                  depth: Depth = None, format: PlanFormat = "json") -> Any:
    return _answer(rerun_plan_dataset(graph, namespace, name, since, depth), format)
