"""How far the stored violations are current: the policy watch's mark.

After each check the watch (impact.policy.watch.Watching) marks the graph with the digest of the
rules it checks and the event log's position through which every batch it was offered has been
checked. A question that needs the rules' violations (a gate) may read the stored ones instead of
checking every rule when the mark is of the same rules and the worker has loaded nothing past it:
the store then holds what a check would find now (docs/policies.md, "Gates from the store").
"""

from __future__ import annotations

from datetime import datetime

from graph.db import Graph
from impact.policy.rules import Policies


def mark(graph: Graph, policies: Policies, through: int, at: datetime) -> None:
    """Every batch up to the log's seq ``through`` has been checked against ``policies``."""
    graph.write([("policies/save_watch_mark", {"digest": policies.digest, "through": through,
                                               "at": at.isoformat()})])


def current(graph: Graph, policies: Policies, position: int) -> bool:
    """Whether the stored violations are those of ``policies`` with everything up to the
    worker's ``position`` checked."""
    rows = graph.read("policies/watch_mark")
    return bool(rows) and rows[0]["digest"] == policies.digest and \
        rows[0]["through"] is not None and rows[0]["through"] >= position
