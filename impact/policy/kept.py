"""How far the stored violations are current: the policy watch's mark.

After each check the watch (impact.policy.watch.Watching) marks the graph with the digest of the
rules it checks and the event log's position through which every batch it was offered has been
checked, with the last bulk load the log recorded when the watch began (events loaded beside the
log, which the watch never sees). A question that needs the rules' violations (a gate) may read
the stored ones instead of checking every rule when the mark is of the same rules, the worker has
loaded nothing past it and no bulk load came since: the store then holds what a check would find
now (docs/policies.md, "Gates from the store").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from graph.db import Graph
from impact.policy.rules import Policies


class _Log(Protocol):
    def position(self, consumer: str) -> int: ...
    def bulk_loads(self) -> Sequence[Any]: ...


@dataclass(frozen=True)
class LogState:
    """Where the worker is in the event log, and the id of the last bulk load the log recorded
    (0: none)."""

    position: int
    bulk: int = 0

    @classmethod
    def of(cls, events: _Log, consumer: str) -> LogState:
        loads = events.bulk_loads()
        return cls(events.position(consumer), loads[-1].id if loads else 0)


def mark(graph: Graph, policies: Policies, through: LogState, at: datetime) -> None:
    """Every batch up to the log's seq ``through.position`` has been checked against
    ``policies``, and no bulk load came after ``through.bulk``."""
    graph.write([("policies/save_watch_mark", {
        "digest": policies.digest, "through": through.position, "bulk": through.bulk,
        "at": at.isoformat()})])


def current(graph: Graph, policies: Policies, now: LogState) -> bool:
    """Whether the stored violations are those of ``policies`` with everything the worker has
    loaded (``now``) checked, and no bulk load since the watch began."""
    rows = graph.read("policies/watch_mark")
    if not rows or rows[0]["digest"] != policies.digest or rows[0]["through"] is None:
        return False
    return bool(rows[0]["through"] >= now.position and rows[0]["bulk"] == now.bulk)
