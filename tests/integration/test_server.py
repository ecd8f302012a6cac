"""The local Neo4j server that lineage-graph provisions: start, status, restart, crash, schema."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
import urllib.request

import pytest

from graph.db import Graph
from graph.local_server import LocalServer
from graph.probes import read_pid
from graph.schema import apply_schema
from tests.conftest import server_settings
from tests.helpers import ingest_events, new_run_id, rows, run_event

pytestmark = pytest.mark.integration


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    settings = server_settings()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "LINEAGE_"))}
    env.update(LINEAGE_STATE_DIR=str(settings.state_dir),
               LINEAGE_NEO4J_BOLT_PORT=str(settings.neo4j_bolt_port),
               LINEAGE_NEO4J_HTTP_PORT=str(settings.neo4j_http_port))
    return subprocess.run([sys.executable, "-m", "api.cli", *args], capture_output=True,
                          text=True, env=env, timeout=300, check=False)


def test_password_is_generated_and_private(local_server: LocalServer) -> None:
    mode = stat.S_IMODE(local_server.password_file.stat().st_mode)
    assert mode == 0o600
    assert len(local_server.password()) >= 16 and local_server.password() != "neo4j"


def test_status_json_reports_how_to_connect(local_server: LocalServer) -> None:
    done = _cli("neo4j", "status", "--format", "json")
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert status["state"] == "running"
    bolt, http = server_settings().neo4j_bolt_port, server_settings().neo4j_http_port
    assert status["bolt_uri"] == f"bolt://127.0.0.1:{bolt}"
    assert status["browser_url"] == (f"http://127.0.0.1:{http}/browser/?dbms=neo4j://neo4j@127.0.0.1:{bolt}"
                                     "&db=neo4j&preselectAuthMethod=NATIVE")
    assert status["password_file"].endswith("neo4j/password")


def test_password_prints_the_password_to_paste(local_server: LocalServer) -> None:
    done = _cli("neo4j", "password")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == local_server.password()


def test_second_start_is_a_no_op_that_says_so(local_server: LocalServer) -> None:
    done = _cli("neo4j", "start")
    assert done.returncode == 0, done.stderr
    assert "already running" in done.stdout


def test_browser_is_served(local_server: LocalServer) -> None:
    with urllib.request.urlopen(f"{local_server.http_url}/browser/", timeout=10) as resp:
        page = resp.read().decode("utf-8", errors="replace")
    assert resp.status == 200 and "<html" in page.lower()


def test_constraints_exist_and_applying_twice_is_idempotent(graph: Graph) -> None:
    names = apply_schema(graph)
    assert apply_schema(graph) == names
    assert {"dataset_key", "job_key", "run_key", "column_key"} <= set(names)


def test_duplicate_natural_key_is_refused_by_the_constraint(graph: Graph) -> None:
    from neo4j.exceptions import ConstraintError

    with graph.driver.session() as session:
        session.run("CREATE (:Dataset {namespace: 'n', name: 'd'})").consume()
        with pytest.raises(ConstraintError):
            session.run("CREATE (:Dataset {namespace: 'n', name: 'd'})").consume()


def test_restart_keeps_the_data(local_server: LocalServer, graph: Graph) -> None:
    run_id = new_run_id()
    ingest_events(graph, [run_event("COMPLETE", run_id)])
    assert local_server.stop() is True
    assert local_server.status().state == "stopped"
    started = local_server.start()
    assert started
    assert rows(graph, "MATCH (r:Run {runId: $id}) RETURN r.state AS s", id=run_id) == [
        {"s": "COMPLETE"}]
    # started at the configured priority (LINEAGE_NEO4J_NICE), every JVM thread
    if sys.platform == "linux":
        pid = read_pid(local_server.pid_file)
        assert pid is not None
        expected = max(local_server.settings.neo4j_nice, os.nice(0))
        assert expected > 0
        assert {_nice(pid, task) for task in os.listdir(f"/proc/{pid}/task")} == {expected}


def _nice(pid: int, task: str) -> int:
    """A thread's nice value, from /proc (the 19th field of stat, after the command's name)."""
    with open(f"/proc/{pid}/task/{task}/stat", encoding="ascii") as f:
        return int(f.read().rsplit(")", 1)[1].split()[16])


def test_a_crashed_server_is_detected_and_start_recovers(
        local_server: LocalServer, graph: Graph) -> None:
    pid = local_server.status().pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while local_server.status().state != "crashed" and time.monotonic() < deadline:
        time.sleep(0.2)
    assert local_server.status().state == "crashed"
    done = _cli("neo4j", "status")
    assert done.returncode == 1 and "crashed" in done.stdout
    started = local_server.start()
    assert started and local_server.status().state == "running"
    assert rows(graph, "RETURN 1 AS one") == [{"one": 1}]
