"""Services outlive the terminal that started them: `lineage up` run in a pseudo-terminal, which
is then closed (the kernel hangs up the session), leaves Neo4j, the API and the worker running."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.helpers import free_port

pytestmark = [pytest.mark.integration, pytest.mark.faults]


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return bool(r.status == 200)
    except OSError:
        return False


def test_closing_the_terminal_of_lineage_up_stops_nothing(tmp_path: Path) -> None:
    if os.environ.get("NEO4J_URI"):
        pytest.skip("starts a Neo4j of its own: needs the server lineage-graph provisions")
    bolt, http, api = free_port(), free_port(), free_port()
    env = {**os.environ, "LINEAGE_STATE_DIR": str(tmp_path / "state"),
           "LINEAGE_NEO4J_BOLT_PORT": str(bolt), "LINEAGE_NEO4J_HTTP_PORT": str(http),
           "LINEAGE_API_PORT": str(api), "LINEAGE_NEO4J_HEAP": "512m",
           "LINEAGE_NEO4J_PAGECACHE": "128m", "TERM": "dumb"}
    pid, terminal = pty.fork()  # the child leads a session whose terminal is the pty
    if pid == 0:
        os.execvpe(sys.executable, [sys.executable, "-m", "api.cli", "up"], env)
    said = b""
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            ready, _, _ = select.select([terminal], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(terminal, 65536)
                except OSError:  # the child exited: the terminal has no writer left
                    break
                if not chunk:
                    break
                said += chunk
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, said.decode(errors="replace")[-3000:]
        assert _answers(f"http://127.0.0.1:{http}") and _answers(f"http://127.0.0.1:{api}/health")
        # up returned once the worker had planned its writes (its first batch at full speed)
        run = tmp_path / "state" / "run"
        assert (run / f"ready-{int((run / 'worker.pid').read_text())}").exists()
        os.close(terminal)  # the terminal goes away: a hang-up for its session
        terminal = -1
        time.sleep(8)  # Neo4j shut down within seconds of the hang-up when it was in the session
        assert _answers(f"http://127.0.0.1:{http}"), "Neo4j stopped with the terminal"
        assert _answers(f"http://127.0.0.1:{api}/health"), "the API stopped with the terminal"
        shown = subprocess.run([sys.executable, "-m", "api.cli", "status"], env=env,
                               capture_output=True, text=True, timeout=60)
        assert shown.returncode == 0, shown.stdout + shown.stderr
    finally:
        if terminal >= 0:
            os.close(terminal)
        subprocess.run([sys.executable, "-m", "api.cli", "down"], env=env, capture_output=True,
                       timeout=120)
