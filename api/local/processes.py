"""The processes ``lineage up`` runs beside Neo4j: the API, the workers and MLflow's sync, each
a :class:`Process` (graph.local_service's shape), and what ``up`` waits for before it says the
stack is ready (the API's warm-up, each worker's ready marker).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from graph.local_service import ServiceStatus, status_from_pid, stop_pid, tail
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


class Process:
    """One of the processes ``lineage up`` runs (``api``, ``worker``, ``worker-2`` ...,
    ``mlflow-sync``): a graph.local_service.LocalService, its pid in ``<state>/run/NAME.pid``, its
    output in ``<state>/logs/NAME.log``. It is running while its process lives (each says more
    on its own: the API's /health, the worker's ready marker)."""

    def __init__(self, settings: Settings, name: str) -> None:
        self.settings, self.name = settings, name
        self.pid_file = settings.state_dir / "run" / f"{name}.pid"
        self.log = settings.state_dir / "logs" / f"{name}.log"

    def status(self) -> ServiceStatus:
        if self.name == "api":
            return status_from_pid(self.name, self.pid_file, lambda: True,
                                   f"http://{self.settings.api_host}:{self.settings.api_port}",
                                   self.log)
        found = status_from_pid(self.name, self.pid_file, lambda: True, "", self.log)
        return replace(found, detail=f"running, its output in {self.log}") if found.running \
            else found

    def start(self, say: Callable[[str], None] = lambda line: None) -> bool:
        """Start it detached (its own session: it outlives the terminal); False when it runs."""
        if self.status().running:
            return False
        private_dir(self.log.parent)
        private_dir(self.pid_file.parent)
        command = (["worker"] if self.name.startswith("worker") else  # worker, worker-2 ... (Kafka)
                   {"api": ["serve"],
                    "mlflow-sync": ["mlflow", "sync", "--watch",
                                    str(self.settings.mlflow_interval)]}[self.name])
        _forget_dead_markers(self.settings)  # a new process given a crashed one's pid is not ready
        say(f"starting {self.name}")
        with private_file(self.log).open("ab") as out:
            proc = subprocess.Popen([sys.executable, "-m", "api.cli", *command], stdout=out,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, env=os.environ.copy(),
                                    umask=PRIVATE_UMASK)
        self.pid_file.write_text(str(proc.pid))
        return True

    def stop(self, timeout: float = 15.0) -> bool:
        pid = self.status().pid
        if not stop_pid(self.pid_file, timeout):
            return False
        if pid is not None:
            ready_marker(self.settings, pid).unlink(missing_ok=True)
        return True

    def log_tail(self, lines: int = 30) -> str:
        return tail([self.log], lines)


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


def wait_ready(settings: Settings, worker: ServiceStatus, timeout: float = 120.0) -> bool:
    """Wait until the ``worker`` process says it is ready (:func:`ready_marker`); False at
    ``timeout`` or when the process ends first."""
    if worker.pid is None:
        return False
    marker = ready_marker(settings, worker.pid)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if marker.exists():
            return True
        if not process_alive(worker.pid):
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
