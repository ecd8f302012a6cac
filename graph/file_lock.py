"""One process at a time: an exclusive lock on a file, for the steps that build something shared
in the state directory once (Neo4j's and Kafka's jars, the Spark listener, the producers'
environments). Two `lineage` commands, or two test workers, starting together must not both
assemble into the same directory: the second waits, then finds the work done."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def held(path: Path) -> Iterator[None]:
    """Hold the lock ``path`` (created if missing, beside what it guards) while the block runs;
    wait for it while another process holds it. Released when the block ends, or when the
    process dies."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
