"""Every file of the Cypher library runs as-is with its own example parameters.

The example graphs (examples/events/shop.ndjson, examples/explicit_lineage.ndjson) are loaded
first, with one declared alias (``lineage alias``), so that every question and lookup is seen to
answer something with the parameters a Browser user would paste. They are loaded again only after
a file that changed the graph (a write, a soft delete): the reads share one load.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.db import Graph
from graph.queries import library
from ingest.aliases import alias_event
from ingest.pipeline import Ingester, IngestReport
from ingest.read import RawItem, read_file
from tests.conftest import wipe

pytestmark = pytest.mark.integration

SHOP = Path(__file__).parents[2] / "examples" / "events" / "shop.ndjson"
# a hand-off between jobs and a field a job makes (OpenLineage's lineage facets)
EXPLICIT = Path(__file__).parents[2] / "examples" / "explicit_lineage.ndjson"
ANSWERS_SOMETHING = ("impact/", "lineage/", "lookup/")


class ExampleGraph:
    """The example graphs on the test server, loaded again only when a test may have changed
    them (it wrote, or it failed before saying)."""

    def __init__(self, graph: Graph) -> None:
        self.graph, self.changed = graph, True  # the previous file's graph is not ours

    def ready(self) -> Graph:
        if self.changed:
            wipe(self.graph)
            Ingester(self.graph).ingest(read_file(SHOP), IngestReport())
            Ingester(self.graph).ingest(read_file(EXPLICIT), IngestReport())
            alias = alias_event("postgres://warehouse:5432", "raw.users", "s3://lake", "raw/users")
            Ingester(self.graph).ingest([RawItem("alias", obj=alias)], IngestReport())
            self.changed = False
        return self.graph


@pytest.fixture(scope="module")
def example(session_graph: Graph) -> Iterator[ExampleGraph]:
    yield ExampleGraph(session_graph)


@pytest.mark.parametrize("name", sorted(library()))
def test_query_runs_with_its_example_parameters(example: ExampleGraph, name: str) -> None:
    graph = example.ready()
    named = library()[name]
    example.changed = True  # until its statements are seen to have changed nothing
    with graph.driver.session() as session:
        # The examples are Cypher expressions (as after `:param` in Browser): evaluate them there.
        params = {key: session.run(f"RETURN {expr} AS v").single()["v"]  # type: ignore[index]
                  for key, expr in named.examples.items()}
        rows = []
        wrote = False
        for statement in named.statements:
            result = session.run(statement, params)
            rows = result.data()
            counters = result.consume().counters
            wrote = wrote or counters.contains_updates or counters.contains_system_updates
    example.changed = wrote
    if name.startswith(ANSWERS_SOMETHING):
        assert rows, f"{name} answered nothing for its own example on the example graph"
