"""What each route answers, declared: the OpenAPI document's answer schemas.

``marquez`` holds Marquez's nouns as its API answers them (namespace, dataset, job, run, lineage
graph, column lineage, source, tag, search, stats); ``answers`` ours (walk, root cause, reach,
freshness, check, provenance, policies, gate, health), most of them the answers' own dataclasses.
The routes declare them as the documentation of their 200 answers (``answer(Model)``): the
answer is still encoded once, as it is built (api.encode), not validated again on the way out.
``tests/integration/test_answer_schemas.py`` holds each answer to its schema, and
``docs/openapi.json`` is the document as it stands (``python -m api.schemas > docs/openapi.json``
writes it again after a deliberate change).
"""

from __future__ import annotations

from typing import Any


def answer(model: Any, status: int = 200) -> dict[int | str, dict[str, Any]]:
    """A route's ``responses=`` for a JSON answer of ``model``."""
    return {status: {"model": model, "description": "The answer"}}
