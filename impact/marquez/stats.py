"""Marquez's run lineage (``/runlineage/upstream``) and stats (``/stats/*``) over our graph and log.

Stats count by event time (when the producer says it happened), where Marquez counts by the time
its own rows were created; on events sent as they happen the two agree.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from graph.db import Graph
from graph.errors import NotFound
from impact.marquez import models as mm


def run_upstream(graph: Graph, run_id: str, depth: int) -> dict[str, Any]:
    """The run, the runs that produced the versions it read, theirs, ... up to ``depth`` levels."""
    seen: dict[str, dict[str, Any]] = {}
    level, wanted = 0, [run_id.lower()]
    while wanted and level <= depth:
        rows = graph.read("marquez/run_inputs", runIds=wanted)
        if level == 0 and not rows:
            raise NotFound("run", run_id)
        wanted = []
        for r in rows:
            p = r["props"]
            seen.setdefault(p["runId"], _upstream_run(r))
            wanted += [i["producedBy"] for i in r["inputs"]
                       if i["producedBy"] and i["producedBy"] not in seen]
        level += 1
    return {"runs": list(seen.values())}


def _upstream_run(r: dict[str, Any]) -> dict[str, Any]:
    p, job = r["props"], r["job"]
    shaped = mm.run({"props": p, "job": job, "inputs": r["inputs"], "outputs": r["outputs"]})
    inputs = [{"namespace": i["namespace"], "name": i["name"],
               "version": mm.dataset_version(i["namespace"], i["name"], i["producedBy"])
               if i["producedBy"] else None, "producedByRunId": i["producedBy"]}
              for i in r["inputs"]]
    return {"job": {**job, "version": shaped["jobVersion"]["version"]},
            "run": {"id": p["runId"], "start": shaped["startedAt"], "end": shaped["endedAt"],
                    "status": shaped["state"]},
            "inputs": inputs}


def intervals(period: str, zone: str | None, now: datetime | None = None
              ) -> list[tuple[datetime, datetime]]:
    """Marquez's windows: the last 24 hours by the hour (DAY), or the last 7 days (WEEK) in
    ``zone``, the current one last."""
    now = now or datetime.now(UTC)
    if period == "DAY":
        top = now.replace(minute=0, second=0, microsecond=0)
        return [(top - timedelta(hours=h), top - timedelta(hours=h - 1)) for h in range(23, -1, -1)]
    local: tzinfo = ZoneInfo(zone or "UTC")
    today = now.astimezone(local).replace(hour=0, minute=0, second=0, microsecond=0)
    return [(today - timedelta(days=d), today - timedelta(days=d - 1)) for d in range(6, -1, -1)]


def event_stats(count: Callable[[float, float], dict[str, int]],
                windows: list[tuple[datetime, datetime]]) -> list[dict[str, Any]]:
    """Events by type (FAIL, START, COMPLETE, ABORT) in each window; ``count`` gives the number of
    events of each type between two unix times (the event log's ``types_between``)."""
    found = []
    for a, b in windows:
        n = count(a.timestamp(), b.timestamp())
        found.append({"startInterval": mm.iso(a), "endInterval": mm.iso(b),
                      **{k.lower(): n.get(k, 0) for k in ("FAIL", "START", "COMPLETE", "ABORT")}})
    return found


def cumulative(graph: Graph, kind: str, windows: list[tuple[datetime, datetime]]
               ) -> list[dict[str, Any]]:
    """How many datasets, jobs or sources had been seen by the end of each window."""
    firsts = sorted(r["first"] for r in graph.read("marquez/created", kind=kind)
                    if r["first"] is not None)
    return [{"startInterval": mm.iso(a), "endInterval": mm.iso(b),
             "count": bisect.bisect_left(firsts, b.timestamp() * 1000)} for a, b in windows]
