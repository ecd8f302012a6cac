"""Search (Marquez's paths): datasets and jobs by a fragment of their name. Marquez's search
through OpenSearch (``/api/v2beta/search``) answers 503, as Marquez does without OpenSearch."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from api import errors
from api.deps import READ, G
from api.errors import RESPONSES
from api.paths import MarquezRoute
from api.schemas import answer
from api.schemas import marquez as mq
from impact.marquez import catalog as mc

router = APIRouter(route_class=MarquezRoute, tags=["search"], dependencies=[READ], responses=RESPONSES)


@router.get("/api/v1/search", summary="Datasets and jobs by a fragment of their name (Marquez)",
            responses=answer(mq.SearchResults))
def search(graph: G, q: Annotated[str, Query(min_length=1, pattern=r"\S")],
           filter_: Annotated[Literal["dataset", "DATASET", "job", "JOB"] | None,
                              Query(alias="filter")] = None,
           sort: Annotated[Literal["name", "NAME", "updated_at", "UPDATE_AT"],
                           Query()] = "name",
           limit: Annotated[int, Query(ge=1, le=1000)] = 10, namespace: str | None = None,
           before: date | None = None, after: date | None = None) -> Any:
    return mc.search(graph, q, filter_.upper() if filter_ else None, namespace, after, before,
                     sort.lower() == "name", limit)


@router.get("/api/v2beta/search/{kind}", status_code=503,
            summary="Marquez's OpenSearch search: 503, as Marquez answers without OpenSearch")
def search_beta(kind: Literal["datasets", "jobs"], q: Annotated[str, Query(min_length=1)]) -> Any:
    return errors.answer(503, "search through OpenSearch is not offered; use GET /api/v1/search, "
                              "as Marquez's web UI does when OpenSearch is off")
