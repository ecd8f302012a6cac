"""The OpenAPI document is the API's contract: every JSON answer has a schema, and the shapes of
the answers (field names and types, per route and status) match the stored docs/openapi.json. A
deliberate change writes it again: ``python -m api.schemas > docs/openapi.json``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from api.app import create_app
from graph.settings import Settings

STORED = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"
NOT_JSON = {("get", "/metrics"), ("get", "/status"), ("get", "/api/v2beta/search/{kind}")}


def _shape(schema: Any, doc: dict[str, Any], seen: frozenset[str] = frozenset()) -> Any:
    """A schema reduced to what a client relies on: object fields and their shapes, array items,
    alternatives, types (titles, descriptions and how the generator names things left out)."""
    if not isinstance(schema, dict):
        return None
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        if name in seen:
            return f"<{name}>"
        return _shape(doc["components"]["schemas"][name], doc, seen | {name})
    if "anyOf" in schema or "oneOf" in schema:
        return sorted(json.dumps(_shape(s, doc, seen), sort_keys=True)
                       for s in schema.get("anyOf") or schema["oneOf"])
    if "properties" in schema:
        return {k: _shape(v, doc, seen) for k, v in schema["properties"].items()} | {
            "*required": sorted(schema.get("required", []))}
    if schema.get("type") == "array":
        return ["array", _shape(schema.get("items"), doc, seen)]
    return schema.get("type", "any")


def _answers(doc: dict[str, Any]) -> dict[str, Any]:
    found = {}
    for path, operations in doc["paths"].items():
        for method, op in operations.items():
            for status, response in op["responses"].items():
                if status.startswith("2"):
                    schema = (response.get("content") or {}).get("application/json", {}).get("schema")
                    found[f"{method.upper()} {path} {status}"] = _shape(schema, doc)
    return found


def test_every_json_answer_declares_its_schema() -> None:
    doc = create_app(Settings()).openapi()
    missing = [f"{m.upper()} {p}" for p, ops in doc["paths"].items() for m, op in ops.items()
               if (m, p) not in NOT_JSON and not any(
                   set((r.get("content") or {}).get("application/json", {}).get("schema", {}))
                   - {"title"} for s, r in op["responses"].items() if s.startswith("2"))]
    assert not missing
    assert len(doc["paths"]) > 50


def test_the_answers_shapes_are_the_stored_documents() -> None:
    current = _answers(create_app(Settings()).openapi())
    stored = _answers(json.loads(STORED.read_text(encoding="utf-8")))
    changed = sorted(k for k in current.keys() | stored.keys() if current.get(k) != stored.get(k))
    assert not changed, ("answers changed shape; if deliberate: python -m api.schemas > "
                         f"docs/openapi.json: {changed}")
