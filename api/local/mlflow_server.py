"""A local MLflow tracking server, started by the project where it needs one (the ML demo, the
tests), the way the local Neo4j is: MLflow from PyPI in its own environment under the state
directory (api/local/producers.py, ``tools/mlflow``), a SQLite store and its artifacts under
``<state>/mlflow``, on loopback only.

``lineage mlflow start`` / ``stop`` / ``status``; a team's own server is given by its URL instead
(``lineage mlflow sync --tracking-uri``, ``LINEAGE_MLFLOW_URI``) and nothing is started.
"""

from __future__ import annotations

import os
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from api.local.producers import tool_bin
from graph.errors import ConfigError
from graph.local_service import ServiceStatus, status_from_pid, stop_pid, tail
from graph.private import private_dir
from graph.settings import Settings

HOST = "127.0.0.1"


class MlflowServer:
    """The local tracking server under ``<state>/mlflow`` (a graph.local_service.LocalService):
    its store (mlflow.db), its artifacts and its log."""

    name = "mlflow"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.home = settings.state_dir / "mlflow"
        self.url = f"http://{HOST}:{settings.mlflow_port}"

    @property
    def pid_file(self) -> Path:
        return self.home / "server.pid"

    @property
    def log(self) -> Path:
        return self.home / "server.log"

    def status(self) -> ServiceStatus:
        return status_from_pid(self.name, self.pid_file, lambda: healthy(self.url), self.url,
                               self.log)

    def start(self, say: Callable[[str], None] = lambda line: None, timeout: float = 120.0) -> bool:
        """Start the server unless it runs (installing MLflow first on first use) and wait until
        it answers; False when it was running already."""
        if self.status().state == "running":
            return False
        bin_dir = tool_bin(self.settings, "mlflow", say)
        private_dir(self.home)
        (self.home / "artifacts").mkdir(exist_ok=True)
        # the server serves the artifacts itself (mlflow-artifacts:/), so a client needs only its URL
        args = [str(bin_dir / "mlflow"), "server", "--host", HOST,
                "--port", str(self.settings.mlflow_port),
                "--backend-store-uri", f"sqlite:///{self.home / 'mlflow.db'}",
                "--artifacts-destination", str(self.home / "artifacts"), "--workers", "1"]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "VIRTUAL_ENV"))}
        say(f"starting MLflow's tracking server on {self.url} (store {self.home / 'mlflow.db'})")
        with self.log.open("ab") as out:
            proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True, env=env,
                                    cwd=self.home)
        self.pid_file.write_text(str(proc.pid))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if healthy(self.url):
                return True
            if proc.poll() is not None:
                break
            time.sleep(0.3)
        self.stop()
        raise ConfigError(f"MLflow's tracking server did not start on {self.url}:\n"
                          f"{self.log_tail()}")

    def stop(self, timeout: float = 15.0) -> bool:
        """Stop the server and its worker processes; False when it was not running."""
        return stop_pid(self.pid_file, timeout, group=True)

    def log_tail(self, lines: int = 30) -> str:
        return tail([self.log], lines)


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def python(settings: Settings, say: Callable[[str], None] = lambda line: None) -> Path:
    """The Python of MLflow's environment (scikit-learn, pandas): what examples/ml_shop runs with."""
    return tool_bin(settings, "mlflow", say) / "python"
