"""A stack as `lineage up` runs it, for the benches that measure the product as a user runs it:
its own state directory and free ports, driven through the `lineage` command."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from graph.local_server import LocalServer
from graph.settings import Settings
from ingest.log.kafka_broker import LocalBroker


@contextlib.contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A directory of the bench's own for its stack (a Neo4j store, an event log: gigabytes after
    a long bench), removed when the bench ends well, kept when it fails (said where)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    except BaseException:
        print(f"the bench's state is kept in {path}", file=sys.stderr)
        raise
    shutil.rmtree(path, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


class Stack:
    """The services `lineage up` runs in one state directory, and their pids."""

    def __init__(self, state: Path, log: str, workers: int) -> None:
        self.settings = Settings(state_dir=state, neo4j_bolt_port=free_port(),
                                 neo4j_http_port=free_port(), api_port=free_port(),
                                 kafka_port=free_port(), kafka_controller_port=free_port(), log=log)
        s = self.settings
        self.env = os.environ | {
            "LINEAGE_STATE_DIR": str(state), "LINEAGE_NEO4J_BOLT_PORT": str(s.neo4j_bolt_port),
            "LINEAGE_NEO4J_HTTP_PORT": str(s.neo4j_http_port), "LINEAGE_API_PORT": str(s.api_port),
            "LINEAGE_KAFKA_PORT": str(s.kafka_port),
            "LINEAGE_KAFKA_CONTROLLER_PORT": str(s.kafka_controller_port),
            "LINEAGE_LOG": log, "LINEAGE_WORKERS": str(workers)}
        self.workers = ["worker"] + [f"worker-{i}" for i in range(2, workers + 1)] \
            if log != "sqlite" else ["worker"]
        self.url = f"http://127.0.0.1:{s.api_port}"

    def lineage(self, *args: str) -> None:
        subprocess.run([sys.executable, "-m", "api.cli", *args], env=self.env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, timeout=600)

    def pids(self) -> dict[str, int | None]:
        run = self.settings.state_dir / "run"
        found = {name: _pid(run / f"{name}.pid") for name in ("api", *self.workers)}
        found["neo4j"] = _pid(LocalServer(self.settings).pid_file)
        found["kafka"] = _pid(LocalBroker(self.settings).pid_file)
        return found
