"""Fixtures of the integration tests that drive the CLI in process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graph.db import Graph
from graph.settings import get_settings
from tests.helpers import point_cli_at_test_server


@pytest.fixture
def log_path(graph: Graph, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The CLI on the test server (its graph emptied), with an event log and an archive of the
    test's own (``events.db`` and ``archive/`` beside the returned log path)."""
    point_cli_at_test_server(monkeypatch)
    path = tmp_path / "events.db"
    monkeypatch.setenv("LINEAGE_LOG_FILE", str(path))
    monkeypatch.setenv("LINEAGE_ARCHIVE", str(tmp_path / "archive"))
    get_settings.cache_clear()
    yield path
    get_settings.cache_clear()
