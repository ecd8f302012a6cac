"""`lineage worker` lowers its own CPU priority (LINEAGE_WORKER_NICE), so that the API, which
acknowledges producers, comes first when the cores are short."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# the worker command, stopped where it opens the event log: prints its niceness then
PROBE = """
import os, ingest.log.sqlite
from api.cli import serve
def opened(settings):
    print(os.nice(0))
    raise SystemExit(0)
ingest.log.sqlite.open_event_log = opened
serve.worker_cmd(once=True)
"""


def _niceness_of_worker(**env: str) -> int:
    clean = {k: v for k, v in os.environ.items() if k != "LINEAGE_WORKER_NICE"}
    done = subprocess.run([sys.executable, "-c", PROBE], env=clean | env, capture_output=True,
                          text=True, timeout=60, check=True)
    return int(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not hasattr(os, "nice"), reason="Unix priorities")
def test_the_worker_runs_below_the_api_unless_told_otherwise() -> None:
    ours = os.nice(0)
    assert _niceness_of_worker() == min(19, ours + 10)
    assert _niceness_of_worker(LINEAGE_WORKER_NICE="3") == min(19, ours + 3)
    assert _niceness_of_worker(LINEAGE_WORKER_NICE="0") == ours
