"""A local MLflow tracking server, started by the project where it needs one (the ML demo, the
tests), the way the local Neo4j is: MLflow from PyPI in its own environment under the state
directory (api/local/producers.py, ``tools/mlflow``), a SQLite store and its artifacts under
``<state>/mlflow``, on loopback only.

``lineage mlflow start`` / ``stop`` / ``status``; a team's own server is given by its URL instead
(``lineage mlflow sync --tracking-uri``, ``LINEAGE_MLFLOW_URI``) and nothing is started.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from api.local.producers import tool_bin
from graph.errors import ConfigError
from graph.private import private_dir
from graph.probes import process_alive
from graph.settings import Settings

HOST = "127.0.0.1"


@dataclass(frozen=True)
class MlflowServer:
    url: str
    pid: int | None
    running: bool
    home: Path  # the store (mlflow.db), the artifacts and the server's log

    @property
    def log(self) -> Path:
        return self.home / "server.log"


def _home(settings: Settings) -> Path:
    return settings.state_dir / "mlflow"


def status(settings: Settings) -> MlflowServer:
    home = _home(settings)
    pid_file = home / "server.pid"
    pid = int(pid_file.read_text()) if pid_file.is_file() else None
    return MlflowServer(f"http://{HOST}:{settings.mlflow_port}", pid,
                        pid is not None and process_alive(pid), home)


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def start(settings: Settings, say: Callable[[str], None] = lambda line: None,
          timeout: float = 120.0) -> MlflowServer:
    """Start the local tracking server unless it runs; install MLflow first on first use."""
    current = status(settings)
    if current.running and healthy(current.url):
        return current
    bin_dir = tool_bin(settings, "mlflow", say)
    home = current.home
    private_dir(home)
    (home / "artifacts").mkdir(exist_ok=True)
    # the server serves the artifacts itself (mlflow-artifacts:/), so a client needs only its URL
    args = [str(bin_dir / "mlflow"), "server", "--host", HOST, "--port", str(settings.mlflow_port),
            "--backend-store-uri", f"sqlite:///{home / 'mlflow.db'}",
            "--artifacts-destination", str(home / "artifacts"), "--workers", "1"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "VIRTUAL_ENV"))}
    say(f"starting MLflow's tracking server on {current.url} (store {home / 'mlflow.db'})")
    with current.log.open("ab") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env=env, cwd=home)
    (home / "server.pid").write_text(str(proc.pid))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if healthy(current.url):
            return status(settings)
        if proc.poll() is not None:
            break
        time.sleep(0.3)
    stop(settings)
    tail = current.log.read_text("utf-8", errors="replace")[-2000:]
    raise ConfigError(f"MLflow's tracking server did not start on {current.url}:\n{tail}")


def stop(settings: Settings, timeout: float = 15.0) -> bool:
    current = status(settings)
    pid_file = current.home / "server.pid"
    if not current.running or current.pid is None:
        pid_file.unlink(missing_ok=True)
        return False
    os.killpg(current.pid, signal.SIGTERM)  # the server and its worker processes
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process_alive(current.pid):
        time.sleep(0.1)
    if process_alive(current.pid):
        os.killpg(current.pid, signal.SIGKILL)
    pid_file.unlink(missing_ok=True)
    return True


def python(settings: Settings, say: Callable[[str], None] = lambda line: None) -> Path:
    """The Python of MLflow's environment (scikit-learn, pandas): what examples/ml_shop runs with."""
    return tool_bin(settings, "mlflow", say) / "python"
