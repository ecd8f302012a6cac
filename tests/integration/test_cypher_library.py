"""Every file of the Cypher library runs as-is with its own example parameters."""

from __future__ import annotations

import pytest

from graph.db import Graph
from graph.queries import library

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("name", sorted(library()))
def test_query_runs_with_its_example_parameters(graph: Graph, name: str) -> None:
    named = library()[name]
    with graph.driver.session() as session:
        # The examples are Cypher expressions (as after `:param` in Browser): evaluate them there.
        params = {key: session.run(f"RETURN {expr} AS v").single()["v"]  # type: ignore[index]
                  for key, expr in named.examples.items()}
        for statement in named.statements:
            session.run(statement, params).consume()
