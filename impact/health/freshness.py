"""Freshness: when a dataset was last written by a successful run, and whether it is late.

Only completed runs that wrote the dataset count. Writes less than a minute apart are one
occasion (the queries of one application, a retry), and the usual cadence is the median interval
between the recent occasions. It takes MIN_OCCASIONS of them (three intervals) to have a cadence at
all: with fewer, one irregular interval (a rerun, a skipped day, a backfill) would be the cadence.
Below that the answer is "cadence unknown (N runs)", never LATE. A dataset is late when more than
1.5 cadences have passed since its last success.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from graph.db import Graph
from graph.errors import NotFound
from impact.answers import native_time

TOLERANCE = 1.5
MIN_OCCASIONS = 4
BURST = timedelta(minutes=1)


@dataclass(frozen=True)
class RunState:
    job: str
    run_id: str | None
    state: str | None
    time: datetime | None
    error_message: str | None = None
    parents: tuple[dict[str, Any], ...] = ()  # the runs that started it, nearest first


@dataclass(frozen=True)
class Freshness:
    dataset: str
    checked_at: datetime
    last_success: datetime | None
    cadence: timedelta | None
    due: datetime | None
    late: bool
    successes: int
    latest_runs: tuple[RunState, ...]

    @property
    def verdict(self) -> str:
        if self.last_success is None:
            return "never written by a successful run"
        if self.cadence is None:
            runs = "1 run" if self.successes == 1 else f"{self.successes} runs"
            return (f"last success {self.last_success:%Y-%m-%d %H:%M}; cadence unknown ({runs}; "
                    f"it takes {MIN_OCCASIONS} writes at least a minute apart)")
        state = "LATE" if self.late else "on time"
        return (f"{state}: last success {self.last_success:%Y-%m-%d %H:%M}, usual cadence "
                f"{human(self.cadence)}, due by {self.due:%Y-%m-%d %H:%M}")


def assess(successes: list[datetime], now: datetime) -> tuple[
        datetime | None, timedelta | None, datetime | None, bool]:
    """(last success, cadence, due, late) from success times in any order."""
    times = sorted(successes, reverse=True)
    if not times:
        return None, None, None, False
    occasions = [times[0]]
    for t in times[1:]:
        if occasions[-1] - t >= BURST:
            occasions.append(t)
        else:
            occasions[-1] = t  # the same occasion: it began earlier
    if len(occasions) < MIN_OCCASIONS:
        return times[0], None, None, False
    gaps = [a - b for a, b in zip(occasions, occasions[1:], strict=False)]
    cadence = timedelta(seconds=statistics.median(g.total_seconds() for g in gaps))
    try:
        due = times[0] + cadence * TOLERANCE
    except OverflowError:  # due after the year 9999: not late
        due = datetime.max.replace(tzinfo=UTC)
    return times[0], cadence, due, now > due


def freshness(graph: Graph, namespace: str, name: str, as_of: datetime | None = None,
              now: datetime | None = None) -> Freshness:
    """Freshness of ``namespace:name`` at ``as_of`` (or now)."""
    rows = graph.read("impact/freshness", namespace=namespace, name=name, asOf=as_of)
    if not rows:
        raise NotFound("dataset", f"{namespace}:{name}", name)
    r = rows[0]
    checked = as_of or now or datetime.now(UTC)
    times = [t for t in (native_time(x) for x in r["successes"]) if t is not None]
    last, cadence, due, late = assess(times, checked)
    return Freshness(f"{namespace}:{name}", checked, last, cadence, due, late, len(times),
                     tuple(run_states(r["latestRuns"])))


def run_states(rows: list[dict[str, Any]]) -> list[RunState]:
    return [RunState(x["job"], x["runId"], x["state"], native_time(x["time"]), x.get("errorMessage"),
                     tuple(x.get("parents") or ()))
            for x in rows]


def human(d: timedelta) -> str:
    """A cadence for people: hours, or days from two days on."""
    hours = d.total_seconds() / 3600
    return f"{hours / 24:.1f} days" if hours >= 48 else f"{hours:.1f} h"
