"""State files are private to the user who runs lineage-graph: directories 0700, files 0600.

The event log holds what producers sent, Neo4j's store and ``auth.ini`` the whole graph and the
password hash, the logs what the processes saw: none of it is for other local users. Processes we
start (Neo4j, the API, the worker) run with :data:`PRIVATE_UMASK`, so what they create is private too.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

PRIVATE_UMASK = 0o077


def private_dir(path: Path, tighten: bool = False) -> Path:
    """Create ``path`` 0700 if it is missing (its missing parents too); with ``tighten``, make an
    existing one 0700 as well (only for directories that are ours alone, like the state
    directory: never for a directory a user merely pointed a file into)."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.mkdir(mode=0o700, exist_ok=True)
        tighten = True  # mkdir's mode is filtered by the umask
    if tighten:
        with contextlib.suppress(PermissionError):
            os.chmod(path, 0o700)
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty if it does not exist, 0600 from its first moment; make it 0600.

    An existing file is never opened here: closing any descriptor of a file drops every POSIX
    lock this process holds on it, and SQLite's connections to the event log rely on theirs (with
    them gone, another process may checkpoint and delete the log's WAL under a live connection,
    which corrupts the log)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    os.chmod(path, 0o600)
    return path
