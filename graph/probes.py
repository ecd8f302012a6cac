"""Is it alive? A process by its pid, an HTTP endpoint, a Bolt server."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from pathlib import Path


def read_pid(path: Path) -> int | None:
    """The process id a pid file holds, if any."""
    try:
        return int(path.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def process_alive(pid: int) -> bool:
    """Whether a process runs (a zombie, exited but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie counts as dead: it has exited but was not reaped yet.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return True


def http_ok(url: str) -> bool:
    """Whether ``url`` answers 200 within 2 s."""
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:  # noqa: S310 (loopback only)
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def bolt_ok(uri: str, password: str, user: str = "neo4j") -> bool:
    """Whether a Bolt server accepts these credentials within 3 s."""
    from neo4j import GraphDatabase
    from neo4j.exceptions import Neo4jError, ServiceUnavailable

    try:
        with GraphDatabase.driver(uri, auth=(user, password), connection_timeout=3) as driver:
            driver.verify_connectivity()
        return True
    except (ServiceUnavailable, Neo4jError, OSError):
        return False
