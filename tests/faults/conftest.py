"""What the fault tests share: this test process's Neo4j, which a fault test kills or stops, and
the environment of the `lineage` processes a fault test starts on it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.db import Graph
from graph.local_server import LocalServer


def services_env(server: LocalServer, log_file: Path, api_port: int) -> dict[str, str]:
    """The environment of `lineage serve` and `lineage worker` processes on this test process's
    own Neo4j (tests/conftest.py), an event log of the test's own and the API on ``api_port``."""
    settings = server.settings
    return os.environ | {"LINEAGE_STATE_DIR": str(settings.state_dir),
                         "LINEAGE_NEO4J_BOLT_PORT": str(settings.neo4j_bolt_port),
                         "LINEAGE_NEO4J_HTTP_PORT": str(settings.neo4j_http_port),
                         "LINEAGE_LOG_FILE": str(log_file), "LINEAGE_API_PORT": str(api_port),
                         "LINEAGE_WORKER_POLL": "0.05"}


@pytest.fixture
def server(local_server: LocalServer, session_graph: Graph) -> Iterator[LocalServer]:
    """This test process's Neo4j (tests/conftest.py), which a fault test kills or stops: running
    again after the test, whatever it did."""
    if os.environ.get("NEO4J_URI"):
        pytest.skip("kills Neo4j: needs the server lineage-graph provisions")
    yield local_server
    local_server.start()
