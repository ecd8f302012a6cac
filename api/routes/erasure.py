"""Erasure: where one person's data lives and how each place is cleaned (impact.erasure)."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel, ConfigDict, Field

from api.deps import READ, WRITE, Depth, G, app_context
from api.encode import to_json
from api.errors import RESPONSES
from api.render.erasure import plan_csv, plan_markdown, status_markdown
from api.schemas import answers as ours
from api.services.erasure import open_request, subject_hash
from impact.erasure.evidence import erasure_status
from impact.erasure.plan import ErasurePlan, Key, erasure_plan

router = APIRouter(tags=["questions"], responses=RESPONSES)


class KeyColumn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    namespace: str = Field(min_length=1, examples=["postgres://warehouse:5432"])
    dataset: str = Field(min_length=1, examples=["raw.users"])
    column: str = Field(min_length=1, examples=["id"])


class ErasureAsk(BaseModel):
    """The subject's key columns (one per key table), and how to find the personal columns of
    those tables: a tag (PII by default; null for none) and column names."""

    model_config = ConfigDict(extra="forbid")
    keys: list[KeyColumn] = Field(min_length=1, max_length=100)
    piiTag: str | None = "PII"
    personal: list[str] = Field(default_factory=list, max_length=1000)


class ErasurePlanAnswer(BaseModel):
    """Every place the data reaches, in order, with how it is cleaned."""

    keys: list[str]
    personal: list[str]
    places: list[dict[str, Any]]
    influenced: list[str]
    models: list[dict[str, Any]]
    depth: int
    counts: dict[str, int]


@router.post("/api/v1/erasure/plan", dependencies=[READ],
             summary="An erasure plan: every place a person's data reaches, found by their key, "
                     "and how each is cleaned",
             responses={200: {"model": ErasurePlanAnswer, "description": "The plan",
                              "content": {"text/markdown": {}, "text/csv": {}}}})
def plan(graph: G, ask: ErasureAsk, depth: Depth = None,
         format: Literal["json", "markdown", "csv"] = "json") -> Any:
    found: ErasurePlan = erasure_plan(
        graph, [Key(k.namespace, k.dataset, k.column) for k in ask.keys], ask.piiTag,
        tuple(ask.personal), depth)
    if format == "markdown":
        return PlainTextResponse(plan_markdown(found), media_type="text/markdown")
    if format == "csv":
        return PlainTextResponse(plan_csv(found), media_type="text/csv")
    return to_json({**dataclasses.asdict(found), "counts": found.counts()})


class ErasureOpen(ErasureAsk):
    """A request: the plan's question, the subject's reference (kept only as a salted hash) and
    the days until it is overdue."""

    subjectRef: str = Field(min_length=1, max_length=1000)
    deadlineDays: float | None = Field(default=None, gt=0, le=3650)


class ErasureOpened(BaseModel):
    """The request recorded: how many places and models its plan holds."""

    created: bool
    places: int
    models: int
    counts: dict[str, int]


class SubjectRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    subjectRef: str = Field(min_length=1, max_length=1000)


@router.post("/api/v1/erasure/requests", dependencies=[WRITE], status_code=201,
             summary="Open an erasure request: its plan recorded in the event log under a "
                     "salted hash of the subject's reference",
             responses={201: {"model": ErasureOpened, "description": "Recorded"},
                        200: {"model": ErasureOpened,
                              "description": "A request with that reference was open already: "
                                             "kept as it was recorded"}})
def open_erasure(request: Request, graph: G, ask: ErasureOpen, depth: Depth = None) -> Any:
    context = app_context(request)
    found = erasure_plan(graph, [Key(k.namespace, k.dataset, k.column) for k in ask.keys],
                         ask.piiTag, tuple(ask.personal), depth)
    opened = open_request(graph, context.log(), context.settings, found, ask.subjectRef,
                          ask.deadlineDays)
    answer = to_json({"created": opened.created, "places": len(found.places),
                      "models": len(found.models), "counts": found.counts()})
    answer.status_code = 201 if opened.created else 200  # 200: open already, kept as it was
    return answer


@router.post("/api/v1/erasure/status", dependencies=[READ],
             summary="The evidence of an erasure request, place by place: done, pending, overdue",
             responses={200: {"model": ours.ErasureStatusAnswer, "description": "The evidence",
                              "content": {"text/markdown": {}}}})
def erasure_evidence(request: Request, graph: G, ask: SubjectRef,
                     format: Literal["json", "markdown"] = "json") -> Any:
    status = erasure_status(graph, subject_hash(app_context(request).settings, ask.subjectRef))
    if format == "markdown":
        return PlainTextResponse(status_markdown(status), media_type="text/markdown")
    return to_json({**dataclasses.asdict(status), "state": status.state})
