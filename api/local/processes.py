"""``lineage up`` / ``down`` / ``status``: Neo4j, the API and the worker, each its own process.

The API and the worker run detached, with their output in ``<state>/logs/{api,worker}.log`` and
their pids in ``<state>/run/{api,worker}.pid``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from graph.private import PRIVATE_UMASK, private_dir, private_file
from graph.probes import process_alive
from graph.settings import Settings

SERVICES = ("api", "worker", "mlflow-sync")  # mlflow-sync only with LINEAGE_MLFLOW_URI


def record_up(settings: Settings) -> None:
    """Write down what ``lineage up`` started (the log, how many workers), so that ``status``
    and ``down`` describe and stop what runs, whatever the shell that asks them has set."""
    path = _up_file(settings)
    private_dir(path.parent)
    path.write_text(json.dumps({"log": settings.log, "workers": settings.workers,
                                "mlflowUri": settings.mlflow_uri}))
    private_file(path)


def as_started(settings: Settings) -> Settings:
    """``settings`` as the running services were started with them by ``lineage up`` (its log
    and workers), or as they are when nothing was started by it (or its record is unreadable)."""
    try:
        started = json.loads(_up_file(settings).read_text())
        return settings.model_copy(update={"log": str(started["log"]),
                                           "workers": int(started["workers"]),
                                           "mlflow_uri": started.get("mlflowUri")})
    except (OSError, ValueError, KeyError, TypeError):
        return settings


def forget_up(settings: Settings) -> None:
    _up_file(settings).unlink(missing_ok=True)


def _up_file(settings: Settings) -> Path:
    return settings.state_dir / "run" / "up.json"


def worker_names(settings: Settings) -> list[str]:
    """The worker processes ``lineage up`` runs: one on the SQLite log; ``LINEAGE_WORKERS`` of them
    in one consumer group on a Kafka log (worker, worker-2, ...)."""
    count = settings.workers if settings.log != "sqlite" else 1
    return ["worker"] + [f"worker-{i}" for i in range(2, count + 1)]


@dataclass(frozen=True)
class Proc:
    name: str
    pid: int | None
    running: bool
    log: Path


def _pid_file(settings: Settings, name: str) -> Path:
    return settings.state_dir / "run" / f"{name}.pid"


def _log_file(settings: Settings, name: str) -> Path:
    return settings.state_dir / "logs" / f"{name}.log"


def status(settings: Settings, name: str) -> Proc:
    pid_file = _pid_file(settings, name)
    pid = int(pid_file.read_text()) if pid_file.exists() else None
    return Proc(name, pid, pid is not None and process_alive(pid), _log_file(settings, name))


def start(settings: Settings, name: str) -> Proc:
    current = status(settings, name)
    if current.running:
        return current
    log = _log_file(settings, name)
    private_dir(log.parent)
    private_dir(_pid_file(settings, name).parent)
    command = (["worker"] if name.startswith("worker") else  # worker, worker-2 ... (Kafka)
               {"api": ["serve"],
                "mlflow-sync": ["mlflow", "sync", "--watch", str(settings.mlflow_interval)]}[name])
    args = [sys.executable, "-m", "api.cli", *command]
    _forget_dead_markers(settings)  # a new process given a crashed one's pid is not ready yet
    with private_file(log).open("ab") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env=os.environ.copy(), umask=PRIVATE_UMASK)
    _pid_file(settings, name).write_text(str(proc.pid))
    return Proc(name, proc.pid, True, log)


def stop(settings: Settings, name: str, timeout: float = 15.0) -> bool:
    current = status(settings, name)
    if not current.running or current.pid is None:
        _pid_file(settings, name).unlink(missing_ok=True)
        return False
    os.kill(current.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process_alive(current.pid):
        time.sleep(0.1)
    if process_alive(current.pid):
        os.kill(current.pid, signal.SIGKILL)
    _pid_file(settings, name).unlink(missing_ok=True)
    ready_marker(settings, current.pid).unlink(missing_ok=True)
    return True


def ready_marker(settings: Settings, pid: int) -> Path:
    """The file a worker process writes once it is ready to load (its writes planned): ``lineage
    up`` waits for it, so that the first batch sent after ``up`` loads at a later one's speed."""
    return settings.state_dir / "run" / f"ready-{pid}"


def _forget_dead_markers(settings: Settings) -> None:
    """Remove the ready markers of processes that ended without removing theirs (killed)."""
    for marker in (settings.state_dir / "run").glob("ready-*"):
        pid = marker.name.removeprefix("ready-")
        if not pid.isdigit() or not process_alive(int(pid)):
            marker.unlink(missing_ok=True)


def wait_ready(settings: Settings, proc: Proc, timeout: float = 120.0) -> bool:
    """Wait until the worker ``proc`` says it is ready (:func:`ready_marker`); False at
    ``timeout`` or when the process ends first."""
    if proc.pid is None:
        return False
    marker = ready_marker(settings, proc.pid)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if marker.exists():
            return True
        if not process_alive(proc.pid):
            return False
        time.sleep(0.2)
    return False


def wait_warmed(api_url: str, timeout: float = 300.0) -> bool:
    """Wait until the API at ``api_url`` says Neo4j is warmed (``/ready``: api.services.background); False
    at ``timeout``, or when the API does not say (it stopped answering, or refuses the probe)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{api_url}/ready", timeout=5) as response:
                body = response.read()
        except urllib.error.HTTPError as e:
            if e.code != 503:  # 503: not ready (Neo4j away), and its body still says
                return False
            body = e.read()
        except OSError:
            return False
        try:
            if json.loads(body).get("warmed", True):  # an API that does not say: nothing to wait for
                return True
        except (ValueError, AttributeError):
            return False
        time.sleep(0.3)
    return False


def wait_http(url: str, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return True
        except OSError:
            time.sleep(0.2)
    return False
