"""A retention run: fold the runs past the detailed window into summary lineage, then remove
the lineage past the summary window that no run states any more, then what is left of it
(docs/graph-model.md, "Retention"). Each step is a small transaction (``CHUNK`` runs, edges or
nodes of a kind), so that ingest and questions go on meanwhile; the rules give the same graph
in any order, so a run stopped half-way is finished by the next."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from graph.db import Graph
from graph.errors import ConfigError

CHUNK = 500
"""Runs folded, or edges or nodes of a kind removed, per transaction."""
SCAN = 20_000
"""Runs a scan for foldable runs returns at most (folded in chunks, then scanned again)."""
PATIENCE = 10.0
"""Seconds a run waits for ingest to go quiet before its next transaction (``busy``): under a
load that never pauses it still takes a transaction every PATIENCE seconds."""
WAIT_STEP = 0.1
NODE_KINDS = ("columns", "datasets", "jobs", "violations", "tags")


@dataclass(frozen=True)
class Windows:
    """The graph's time (``now``: its latest event time) and where each window starts."""

    now: datetime
    detailed_since: datetime
    summary_since: datetime

    @classmethod
    def of(cls, now: datetime, detailed_days: float, summary_days: float) -> Windows:
        check_windows(detailed_days, summary_days)
        return cls(now, now - timedelta(days=detailed_days), now - timedelta(days=summary_days))


def check_windows(detailed_days: float, summary_days: float) -> None:
    """ConfigError unless the summary window is at least as long as the detailed one."""
    if summary_days < detailed_days:
        raise ConfigError(
            f"the summary window ({summary_days:g} days, LINEAGE_RETENTION_SUMMARY_DAYS) is "
            f"shorter than the detailed one ({detailed_days:g} days, "
            "LINEAGE_RETENTION_DETAILED_DAYS): it must be at least as long")


@dataclass
class Retained:
    """What a retention run did (or, planned, would do)."""

    windows: Windows | None  # None: the graph holds no job, so it has no time of its own
    folded: int = 0  # runs folded into summary lineage
    counted: int = 0  # edge counts the folded runs added to (an edge per run that stated it)
    edges: int = 0  # retired edges removed past the summary window
    nodes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(NODE_KINDS, 0))
    took: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        found = asdict(self)
        if self.windows is not None:
            found["windows"] = {k: v.isoformat() for k, v in asdict(self.windows).items()}
        return found


def windows(graph: Graph, detailed_days: float, summary_days: float) -> Windows | None:
    """The windows as of the graph's latest event time; None for a graph without jobs."""
    [row] = graph.read("retention/now")
    now = row["now"]
    return None if now is None else Windows.of(_native(now), detailed_days, summary_days)


def retain(graph: Graph, detailed_days: float, summary_days: float,
           say: Callable[[str], None] = lambda line: None, pace: float = 0.0,
           busy: Callable[[], bool] = lambda: False) -> Retained:
    """Fold and remove as the windows say, in small transactions. Beside ingest a run gives way:
    before each transaction it waits while ``busy()`` (the worker is writing a batch, or wrote
    one a moment ago), at most PATIENCE seconds, and after each it pauses ``pace`` times the
    transaction's length (so that under a load that never pauses it takes at most
    ``1 / (1 + pace)`` of Neo4j's time). The result is kept on the graph's Retention node for
    status and metrics."""
    started = time.monotonic()
    done = _retain(graph, windows(graph, detailed_days, summary_days), say, pace, busy)
    done.took = round(time.monotonic() - started, 3)
    if done.windows is not None:
        state = {"now": done.windows.now, "detailedSince": done.windows.detailed_since,
                 "summarySince": done.windows.summary_since, "ranAt": datetime.now().astimezone(),
                 "folded": done.folded, "removedEdges": done.edges,
                 "removedNodes": sum(done.nodes.values()), "took": done.took}
        graph.write([("retention/save_state", {"state": state})])
    return done


def plan(graph: Graph, detailed_days: float, summary_days: float) -> Retained:
    """What :func:`retain` would do now, done in one transaction that is rolled back."""
    started = time.monotonic()
    done = graph.trial(lambda g: _retain(g, windows(g, detailed_days, summary_days),
                                         lambda line: None))
    done.took = round(time.monotonic() - started, 3)
    return done


def _retain(graph: Graph, w: Windows | None, say: Callable[[str], None],
            pace: float = 0.0, busy: Callable[[], bool] = lambda: False) -> Retained:
    done = Retained(w)
    if w is None:
        return done

    def give_way() -> None:
        waited = 0.0
        while waited < PATIENCE and busy():
            time.sleep(WAIT_STEP)
            waited += WAIT_STEP

    def foldable() -> list[Any]:
        give_way()
        return graph.read("retention/foldable_runs", before=w.detailed_since, limit=SCAN)

    def write(query: str, params: dict[str, Any]) -> dict[str, Any]:
        give_way()
        started = time.monotonic()
        [(_, [row])] = graph.write([(query, params)])
        if pace:
            time.sleep(pace * (time.monotonic() - started))
        return dict(row)

    while runs := foldable():
        for part in _chunks([r["runId"] for r in runs]):
            row = write("retention/fold_runs", {"runs": part})
            done.folded += row["folded"]
            done.counted += row["edges"]
        say(f"folded {done.folded:,} runs into summary lineage")
    while True:
        row = write("retention/expire_edges", {"before": w.summary_since, "limit": CHUNK})
        done.edges += row["removed"]
        if row["removed"] < CHUNK:
            break
    while True:
        row = write("retention/expire_nodes", {"before": w.summary_since, "limit": CHUNK})
        for kind in NODE_KINDS:
            done.nodes[kind] += row[kind]
        if all(row[kind] < CHUNK for kind in NODE_KINDS):
            break
    say(f"removed {done.edges:,} edges and {sum(done.nodes.values()):,} nodes past the summary "
        "window")
    return done


def _chunks(ids: list[str]) -> list[list[str]]:
    return [ids[i:i + CHUNK] for i in range(0, len(ids), CHUNK)]


def _native(value: Any) -> Any:
    """A driver DateTime as Python's, in UTC as an offset: the driver gives it a zone named UTC
    (pytz), which Neo4j orders after an equal instant stored with offset Z, so that a time
    equal to a window's start would count as before it."""
    if hasattr(value, "to_native"):
        return value.to_native().astimezone(UTC)
    return value


def last_run(graph: Graph) -> dict[str, Any] | None:
    """What the last retention run did (the Retention node's properties), None before the first."""
    [row] = graph.read("retention/now")
    state: dict[str, Any] | None = row["state"]
    return None if state is None else {k: _native(v) for k, v in state.items()}


def store_bytes(neo4j_home: Path) -> int:
    """The local server's store and transaction logs on disk."""
    return sum(p.stat().st_size for p in (neo4j_home / "data").rglob("*") if p.is_file())
