"""Every file of the Cypher library runs as-is with its own example parameters.

The example graphs (examples/events/shop.ndjson, examples/explicit_lineage.ndjson) are loaded
first, with one declared alias (``lineage alias``), so that every question and lookup is seen to
answer something with the parameters a Browser user would paste.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from graph.db import Graph
from graph.queries import library
from ingest.aliases import alias_event
from ingest.pipeline import Ingester, IngestReport
from ingest.read import RawItem, read_file

pytestmark = pytest.mark.integration

SHOP = Path(__file__).parents[2] / "examples" / "events" / "shop.ndjson"
# a hand-off between jobs and a field a job makes (OpenLineage's lineage facets)
EXPLICIT = Path(__file__).parents[2] / "examples" / "explicit_lineage.ndjson"
ANSWERS_SOMETHING = ("impact/", "lineage/", "lookup/")


@pytest.mark.parametrize("name", sorted(library()))
def test_query_runs_with_its_example_parameters(graph: Graph, name: str) -> None:
    Ingester(graph).ingest(read_file(SHOP), IngestReport())
    Ingester(graph).ingest(read_file(EXPLICIT), IngestReport())
    alias = alias_event("postgres://warehouse:5432", "raw.users", "s3://lake", "raw/users")
    Ingester(graph).ingest([RawItem("alias", obj=alias)], IngestReport())
    named = library()[name]
    with graph.driver.session() as session:
        # The examples are Cypher expressions (as after `:param` in Browser): evaluate them there.
        params = {key: session.run(f"RETURN {expr} AS v").single()["v"]  # type: ignore[index]
                  for key, expr in named.examples.items()}
        rows = []
        for statement in named.statements:
            rows = session.run(statement, params).data()
    if name.startswith(ANSWERS_SOMETHING):
        assert rows, f"{name} answered nothing for its own example on the example graph"
