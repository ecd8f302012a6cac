"""Tags (Marquez's paths): list them, create or describe one. Tagging a dataset, a field or a
job is under that resource (api.routes.datasets, api.routes.jobs)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Request
from pydantic import BaseModel, Field

from api.deps import READ, WRITE, G, MLimit, MOffset, app_context
from api.errors import RESPONSES
from api.paths import MarquezRoute
from api.schemas import answer
from api.schemas import marquez as mq
from impact.marquez import catalog as mc
from ingest.secrets import scrub_text

router = APIRouter(prefix="/api/v1/tags", tags=["tags"], route_class=MarquezRoute,
                   responses=RESPONSES)


class TagMeta(BaseModel):
    description: str | None = Field(default=None, max_length=10_000)


@router.get("", dependencies=[READ], summary="Tags (Marquez)",
            responses=answer(mq.Tags))
def tags(request: Request, graph: G, limit: MLimit, offset: MOffset = 0) -> Any:
    return mc.tags(graph, limit, offset, app_context(request).settings.tag_definitions)


@router.put("/{tag}", dependencies=[WRITE], summary="Create or describe a tag (Marquez)",
            responses=answer(mq.Tag))
def put_tag(request: Request, graph: G, tag: str,
            meta: Annotated[TagMeta | None, Body()] = None) -> Any:
    description = meta.description if meta else None
    rows = app_context(request).command("put_tag", {"tag": tag, "description": description})
    # applied by the worker: the tag as the command stored it (its text scrubbed of secrets)
    return rows[0] if rows else {"name": scrub_text(tag), "description":
                                 None if description is None else scrub_text(description)}
