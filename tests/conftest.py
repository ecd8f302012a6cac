"""Shared fixtures. Integration tests run against a real Neo4j server:

* by default the server lineage-graph provisions itself, in a test state directory
  (``LINEAGE_TEST_STATE_DIR``, default ``<user cache>/lineage-graph-test``) on ports 17687/17474,
  started once per test session if it is not already running (and stopped again if we started it);
  the tests run in parallel (pytest-xdist, ``-n`` in pyproject.toml), and each worker after the
  first has a server of its own (``<state>-gwN``, ports 17687+10N/17474+10N) sharing the first's
  jars and the producers' environments;
* ``NEO4J_URI`` (+ ``NEO4J_USER``/``NEO4J_PASSWORD``) points at a server of your own instead:
  a scratch one, since every integration test wipes the database;
* ``LINEAGE_TEST_TESTCONTAINERS=1`` uses testcontainers' Neo4j image where a Docker engine runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import platformdirs
import pytest

from graph.db import Graph, connect
from graph.local_server import LocalServer
from graph.schema import apply_schema
from graph.settings import Settings, get_settings

# Java's first compiler tier only, for every JVM the tests start (their Neo4j servers, Spark,
# the Kafka broker): their lives are short, and the optimising tier's compiling cost a fifth of the
# suite's CPU (docs/benchmarks.md, "The test suite"). A JAVA_TOOL_OPTIONS of the shell is kept.
os.environ.setdefault("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1")

# what other projects wrote (OpenLineage's corpus and JSON Schemas, Marquez's API description):
# beside the clone as ../shared, or where LINEAGE_TEST_SHARED says; a user's clone has none, and
# only the tests over it skip (each saying how to run it)
SHARED = Path(os.environ.get("LINEAGE_TEST_SHARED", Path(__file__).parents[1].parent / "shared"))
CORPUS = Path(os.environ.get("LINEAGE_CORPUS", SHARED / "corpus"))


# what the tests themselves read; every other LINEAGE_* variable of the shell is hidden from them
TEST_VARIABLES = ("LINEAGE_TEST_", "LINEAGE_CORPUS", "LINEAGE_FAULT_", "LINEAGE_BENCH_STATE_DIR")


# The longest files, longest first (docs/benchmarks.md, "The test suite"): the workers take a file
# at a time in the order collected, and a long file taken last keeps one worker busy while the
# other has nothing left. A fault test (kills processes) and another kind alternate, so that two
# fault tests seldom run at once.
LONGEST_FIRST = (
    "tests/faults/test_crash_recovery.py", "tests/integration/test_stack.py",
    "tests/faults/test_kafka_faults.py", "tests/integration/ml/test_mlflow.py",
    "tests/faults/test_memory_limit.py", "tests/integration/log/test_kafka.py",
    "tests/faults/test_terminal_hangup.py", "tests/integration/test_dbt.py",
    "tests/integration/test_server.py",
    "tests/integration/test_openapi_fuzz.py", "tests/integration/policy/test_policy_watch.py",
    "tests/integration/test_durable_ingest.py", "tests/integration/test_browser.py",
    "tests/integration/test_cypher_library.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """How many workers `-n auto` starts: LINEAGE_TEST_WORKERS, else one per core up to 4 (each
    runs a Neo4j of about 1.3 GB); one process alone when the tests share one server they wipe
    (NEO4J_URI, testcontainers)."""
    if os.environ.get("NEO4J_URI") or os.environ.get("LINEAGE_TEST_TESTCONTAINERS") == "1":
        return 0
    given = os.environ.get("LINEAGE_TEST_WORKERS")
    return int(given) if given else max(1, min(4, os.cpu_count() or 1))


@pytest.fixture(autouse=True, scope="session")
def isolated_environment() -> Iterator[None]:
    """The tests see the settings' defaults, not the shell's LINEAGE_* variables (a developer's
    LINEAGE_NEO4J_URI or LINEAGE_API_TOKENS must not change what a test checks, nor what it
    touches); a test sets what it needs with monkeypatch."""
    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            if name.startswith("LINEAGE_") and not name.startswith(TEST_VARIABLES):
                patch.delenv(name)
        yield


@pytest.fixture(autouse=True)
def fresh_settings() -> Iterator[None]:
    """Settings read again in each test, after what it set."""
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


# what the workers' state directories share with the first's: built once, under a file lock
SHARED_STATE = ("tools", "spark", "kafka")


def _worker() -> int:
    """Which pytest-xdist worker this process is (gw0, gw1, ...; 0 without xdist)."""
    return int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)


def _base_state() -> Path:
    return Path(os.environ.get("LINEAGE_TEST_STATE_DIR") or platformdirs.user_cache_dir(
        "lineage-graph-test", appauthor=False))


def server_settings() -> Settings:
    """Settings of this worker's test server (never the user's own state directory)."""
    base = _base_state()
    n = _worker()
    state = base if n == 0 else base.with_name(f"{base.name}-gw{n}")
    if n:
        for name in SHARED_STATE:
            (base / name).mkdir(parents=True, exist_ok=True)
            link = state / name
            if not link.is_symlink():
                link.parent.mkdir(parents=True, exist_ok=True)
                link.symlink_to(base / name, target_is_directory=True)
    return Settings(state_dir=state, neo4j_bolt_port=17687 + 10 * n,
                    neo4j_http_port=17474 + 10 * n, neo4j_heap="768m", neo4j_pagecache="256m",
                    # every test wipes the graph and fills it again: with Neo4j's default (10 s)
                    # nearly every query was planned again on changed statistics, and planning
                    # was about half of the server's CPU (docs/benchmarks.md, "The test suite")
                    neo4j_replan_interval="1000h")


@pytest.fixture(scope="session")
def local_server() -> Iterator[LocalServer]:
    """The provisioned test server, started for this session if needed; a worker after the
    first runs the first's jars (assembled once, under a lock, by whichever worker comes first)."""
    settings = server_settings()
    if _worker():
        first = LocalServer(settings.model_copy(update={"state_dir": _base_state()}))
        first._assemble()
        lib = settings.neo4j_home / "lib"
        if not lib.exists():
            lib.parent.mkdir(parents=True, exist_ok=True)
            lib.symlink_to(first.home / "lib", target_is_directory=True)
    server = LocalServer(settings)
    started = server.start()
    yield server
    if started and not os.environ.get("LINEAGE_TEST_KEEP_SERVER"):
        server.stop()


@pytest.fixture(scope="session")
def session_graph(request: pytest.FixtureRequest) -> Iterator[Graph]:
    if os.environ.get("LINEAGE_TEST_TESTCONTAINERS") == "1":
        from testcontainers.neo4j import Neo4jContainer

        with Neo4jContainer("neo4j:5.26") as container:
            driver = container.get_driver()
            graph = Graph(driver)
            apply_schema(graph)
            yield graph
            return
    if os.environ.get("NEO4J_URI"):
        settings = Settings()
    else:
        request.getfixturevalue("local_server")
        settings = server_settings()
    graph = Graph(connect(settings))
    apply_schema(graph)
    yield graph
    graph.close()


@pytest.fixture
def graph(session_graph: Graph) -> Graph:
    """An empty lineage graph (schema applied) on the real server."""
    wipe(session_graph)
    return session_graph


def wipe(graph: Graph) -> None:
    with graph.driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"the shared OpenLineage corpus is not at {CORPUS} (set LINEAGE_CORPUS)")
    return CORPUS
