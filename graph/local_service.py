"""The one shape of every local service lineage-graph starts: Neo4j (graph.local_server), the Kafka
broker (ingest.log.kafka_broker), MLflow's tracking server (api.local.mlflow_server), and the API,
the workers and MLflow's sync (api.local.processes).

Each has a name, a status, ``start`` and ``stop`` (each True when it did something, False when the
service already was as asked) and the tail of its log. Each runs detached from the terminal that
started it (its own session), its pid in a file under the state directory; the status reads that
file: no file is *stopped*, a pid that is gone is *crashed*, a live pid that does not answer yet
is *starting*, one that answers is *running*.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from graph.probes import process_alive, read_pid

STATES = ("running", "starting", "stopped", "crashed")


@dataclass(frozen=True)
class ServiceStatus:
    """What ``lineage status`` says of one service."""

    name: str
    state: str
    """running, starting, stopped or crashed (and for a Neo4j the user points at: external or
    unreachable)."""
    pid: int | None
    """The live process, when there is one."""
    address: str
    """Where it answers (a URL or host:port)."""
    log: Path | None
    detail: str

    @property
    def running(self) -> bool:
        return self.state in ("running", "external")


@runtime_checkable
class LocalService(Protocol):
    """A service lineage-graph starts and stops on this machine."""

    name: str

    @property
    def pid_file(self) -> Path:
        """Where its process id is kept while it runs."""
        ...

    def status(self) -> ServiceStatus: ...

    def start(self, say: Callable[[str], None] = ...) -> bool:
        """Start it and wait until it answers; False when it was running already."""
        ...

    def stop(self) -> bool:
        """Stop it (cleanly first); False when it was not running."""
        ...

    def log_tail(self, lines: int = 30) -> str: ...


def status_from_pid(name: str, pid_file: Path, answering: Callable[[], bool], address: str,
                    log: Path | None) -> ServiceStatus:
    """The status of a service whose pid is in ``pid_file``: see the module's docstring."""
    pid = read_pid(pid_file)
    if pid is None:
        state, detail = "stopped", f"no {name} process"
    elif not process_alive(pid):
        state, detail = "crashed", f"pid {pid} in {pid_file} is gone; it did not stop cleanly"
    elif answering():
        state, detail = "running", f"answering on {address}"
    else:
        state, detail = "starting", f"pid {pid} alive but not answering yet"
    return ServiceStatus(name, state, pid if state in ("running", "starting") else None, address,
                         log, detail)


def stop_pid(pid_file: Path, timeout: float = 15.0, *, group: bool = False) -> bool:
    """SIGTERM to the process in ``pid_file`` (with ``group``, to its whole process group), SIGKILL
    if it is still there after ``timeout``; the pid file removed. False when nothing ran."""
    pid = read_pid(pid_file)
    if pid is None or not process_alive(pid):
        pid_file.unlink(missing_ok=True)
        return False
    kill: Callable[[int, int], None] = os.killpg if group else os.kill
    kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process_alive(pid):
        time.sleep(0.1)
    if process_alive(pid):
        kill(pid, signal.SIGKILL)
    pid_file.unlink(missing_ok=True)
    return True


def tail(paths: list[Path], lines: int = 30) -> str:
    """The last ``lines`` lines of each of ``paths`` that exists, or where no log is yet."""
    found: list[str] = []
    for path in paths:
        if path.is_file():
            found += path.read_text("utf-8", errors="replace").splitlines()[-lines:]
    return "\n".join(found) or f"(no log yet at {', '.join(str(p) for p in paths)})"
