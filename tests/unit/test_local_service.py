"""Every local service has one shape (graph.local_service): a name, a status read from its pid
file, start and stop saying whether they did anything, and its log."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from api.local.mlflow_server import MlflowServer
from api.local.processes import Process
from graph.local_server import LocalServer
from graph.local_service import LocalService, stop_pid
from graph.settings import Settings
from ingest.log.kafka_broker import LocalBroker


def _services(settings: Settings) -> list[LocalService]:
    return [LocalServer(settings), LocalBroker(settings), MlflowServer(settings),
            Process(settings, "api"), Process(settings, "worker-2")]


def _gone_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


def test_each_service_is_stopped_then_crashed_by_its_pid_file(tmp_path: Path) -> None:
    settings = Settings(state_dir=tmp_path, neo4j_bolt_port=1, neo4j_http_port=2, kafka_port=3,
                        mlflow_port=4)
    for service in _services(settings):
        assert isinstance(service, LocalService)
        status = service.status()
        assert (status.name, status.state, status.pid, status.running) == (
            service.name, "stopped", None, False)
        assert service.stop() is False
        assert service.log_tail().startswith("(no log yet")
    gone = _gone_pid()
    for service in _services(settings):
        pid_file = service.pid_file
        pid_file.parent.mkdir(parents=True, exist_ok=True)
        pid_file.write_text(str(gone))
        status = service.status()
        assert (status.state, status.pid) == ("crashed", None), service.name
        assert str(gone) in status.detail
        assert service.stop() is False and not pid_file.exists()  # a stale pid file is cleared


@pytest.mark.parametrize("group", [False, True])
def test_stop_ends_a_process_and_its_pid_file(tmp_path: Path, group: bool) -> None:
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                               start_new_session=True)
    pid_file = tmp_path / "sleeper.pid"
    pid_file.write_text(str(sleeper.pid))
    assert stop_pid(pid_file, timeout=10, group=group) is True
    assert sleeper.wait(timeout=10) is not None and not pid_file.exists()
    assert stop_pid(pid_file) is False
