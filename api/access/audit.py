"""The audit log of reads (docs/access.md, "Audit"): one JSON object per line for every request that
reads lineage (who, what, when, the answer's status and size, what was redacted), in
``audit/reads.jsonl`` in the state directory (``LINEAGE_AUDIT_DIR``), rotated at ``MAX_BYTES`` with
``KEEP`` older files (``reads.jsonl.1`` the newest of them); and the counts per grant that
``/metrics`` serves.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graph.private import private_dir, private_file

MAX_BYTES = 16 * 1024 * 1024
KEEP = 5
OUTCOMES = ("served", "redacted", "refused")


@dataclass(frozen=True)
class Read:
    who: str  # the grant's name; "token" for a LINEAGE_API_TOKENS token, "loopback", "anonymous",
    # "proxy" for a proxy's user whose groups name no grant
    method: str
    path: str
    query: str
    status: int
    bytes: int
    redacted: dict[str, int]  # hidden nodes by kind, and "names" replaced in text
    millis: float
    user: str | None = None  # who a trusted proxy says the caller is (its grant is ``who``)

    @property
    def outcome(self) -> str:
        if self.status in (401, 403):
            return "refused"
        return "redacted" if any(self.redacted.values()) else "served"


class AuditLog:
    def __init__(self, directory: Path, max_bytes: int = MAX_BYTES, keep: int = KEEP) -> None:
        self.directory, self.max_bytes, self.keep = directory, max_bytes, keep
        self.path = directory / "reads.jsonl"
        self._lock = threading.Lock()
        self.counts: Counter[tuple[str, str]] = Counter()  # (who, outcome) -> reads

    def record(self, read: Read) -> None:
        line = json.dumps({
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + "Z", "who": read.who,
            "method": read.method, "path": read.path, "query": read.query, "status": read.status,
            "bytes": read.bytes, "outcome": read.outcome, "redacted": read.redacted,
            "ms": round(read.millis, 2), **({"user": read.user} if read.user else {})},
            ensure_ascii=False, sort_keys=True) + "\n"
        with self._lock:
            self.counts[(read.who, read.outcome)] += 1
            private_dir(self.directory)
            if self.path.exists() and self.path.stat().st_size + len(line) > self.max_bytes:
                self._rotate()
            with private_file(self.path).open("a", encoding="utf-8") as out:
                out.write(line)

    def _rotate(self) -> None:
        for i in range(self.keep - 1, 0, -1):
            older = self.directory / f"reads.jsonl.{i}"
            if older.exists():
                os.replace(older, self.directory / f"reads.jsonl.{i + 1}")
        os.replace(self.path, self.directory / "reads.jsonl.1")

    def snapshot(self) -> dict[tuple[str, str], int]:
        with self._lock:
            return dict(self.counts)


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The entries of one audit file (for tests and ``lineage``'s readers)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
