"""Applies the graph schema (constraints and indexes) from ``cypher/schema/``."""

from __future__ import annotations

from graph.db import Graph


def apply_schema(graph: Graph) -> list[str]:
    """Create every constraint and index that is missing; returns the constraint names present."""
    graph.run_statements("schema/constraints")
    return [row["name"] for row in graph.read("schema/show")]
